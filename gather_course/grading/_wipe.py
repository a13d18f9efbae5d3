"""Between two jobs: the job's folder, and everything a job wrote, removed.

The supervisor (:mod:`._worker`) wipes after every job whatever the job could write (in the
sandbox its /tmp and /dev/shm, but the read-only binds there), whatever modes the job left;
when something stays, or System V IPC objects outlive the job, the worker ends and the
referee starts a fresh one.
"""

from __future__ import annotations

import os
import shutil
import tempfile


def _remove(path: str, depth: int = 0) -> None:
    """Remove a file or a folder, whatever modes a job left on it (it runs as our user)."""

    def again(_func, target, _exc) -> None:  # unreadable or unwritable: make it ours, retry
        for folder in (os.path.dirname(target), target):
            try:
                if not os.path.islink(folder):
                    os.chmod(folder, 0o700)
            except OSError:
                pass
        if depth < 64 and os.path.isdir(target) and not os.path.islink(target):
            _remove(target, depth + 1)
        else:
            try:
                os.unlink(target)
            except OSError:
                pass

    if os.path.isdir(path) and not os.path.islink(path):
        try:
            os.chmod(path, 0o700)
        except OSError:
            pass
        shutil.rmtree(path, onerror=again)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass


def _wipe(base: str, sandboxed: bool, mounts: frozenset[str] = frozenset()) -> bool:
    """Remove everything a job wrote where it could write, so the next job finds nothing;
    False if something is left (the referee then starts a fresh worker).

    In the sandbox that is its own /tmp and /dev/shm (all but the read-only ``mounts`` made
    there, and the folders that lead to them); without one, only the jobs' folder.
    """
    leading = {os.path.dirname(m) for m in mounts}
    while any(os.path.dirname(p) not in leading and p not in ("/", "") for p in leading):
        leading |= {os.path.dirname(p) for p in leading}
    roots = [os.path.dirname(base), "/dev/shm"] if sandboxed else [base]
    if sandboxed:
        for root in roots:  # a job may have taken away our rights on them
            try:
                os.chmod(root, 0o1777)
            except OSError:
                pass
    todo, left = list(roots), False
    while todo:
        folder = todo.pop()
        try:
            names = os.listdir(folder)
        except OSError:
            left = True
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path == base or path in mounts:
                continue
            if path in leading:
                todo.append(path)
                continue
            _remove(path)
            left = left or os.path.lexists(path)
    if sandboxed:
        return _wipe(base, False) and not left
    return not left and os.path.isdir(base) and not os.listdir(base)


def _job_folder(base: str, sandboxed: bool) -> str:
    """A fresh folder for the next job, in ``base``, which is ours again whatever a job did."""
    if sandboxed and (os.path.islink(base) or not os.path.isdir(base)):
        _remove(base)
        os.mkdir(base, 0o700)
    os.chmod(base, 0o700)
    return tempfile.mkdtemp(dir=base)


def _ipc_left() -> bool:
    """Whether a job left System V shared memory, queues or semaphores: they would outlive
    it in the sandbox's IPC namespace, so the worker must start afresh."""
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                if len(f.read().splitlines()) > 1:
                    return True
        except OSError:
            continue
    return False


def _mounts_under(folder: str) -> frozenset[str]:
    """Mount points below ``folder`` (the sandbox's read-only binds under /tmp)."""
    found = set()
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                point = line.split()[4]
                if point.startswith(folder.rstrip("/") + "/"):
                    found.add(point)
    except OSError:
        pass
    return frozenset(found)
