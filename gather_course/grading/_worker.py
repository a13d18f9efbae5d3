"""The sandboxed side of grading: a supervisor, a pristine template, and a fresh process per job.

Run as ``python -I .../gather_course/grading/_worker.py`` by :mod:`gather_course.grading._sandbox`, inside
bubblewrap when it is there. The referee never imports this module's process side. Three
kinds of process, so that the one that runs a student's code holds nothing but that code and
its inputs:

- the **supervisor** (this script's process) talks to the referee. It receives every job,
  so no learner code ever runs in it or in anything forked from it after its first job; it
  cannot be read by its children (not dumpable).
- the **template** is forked from the supervisor before any job exists. It imports torch
  and the public helpers once, then only ever receives a pair of file descriptors (a fresh
  channel for the next job) and forks. No job's data, result or exit status ever reaches
  it, so every fork of it is as pristine as the first.
- the **job process** is a grandchild of the template (the child in between exits at once,
  so the job process is handed to the supervisor, a subreaper, which waits for it and reads
  its CPU time from the kernel). Only now does it read its job from its own channel:
  the learner's cells and the inputs the referee made. For a timing job it runs the cells,
  stops itself (the supervisor reads its CPU time), and only then receives the timing
  input, drawn from a secret seed: code at the top of a cell cannot prepare for it.

Expected outputs, reference answers and other submissions never enter a job process: the
referee compares outputs itself. ``gather_course`` in a job process is the public helpers
only (:mod:`gather_course._answer_api`); in the sandbox the rest of the package is not even
in the file system.
"""

from __future__ import annotations

import builtins
import ctypes
import fcntl
import io
import json
import linecache
import math
import os
import resource
import select
import shutil
import signal
import socket
import struct
import sys
import tempfile
import time
import traceback
import types
from typing import Any

_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 4, 36
_RESULT_CAP = 256 * 2**20  # bytes of results a job may send back
_BEAT = b"."
_HELLO_LIMIT = 30.0  # seconds for a fresh job process to announce itself
_MOUNTS: frozenset[str] = frozenset()  # read-only binds under the sandbox's /tmp
_BASE_RSS = 0  # the supervisor's and the template's own resident memory
_TEMPLATE = 0  # the template's pid (the supervisor's child that is not a job)


# -- framing (the same in _sandbox): 4-byte header length, JSON header, 8-byte payload length,
#    payload bytes ------------------------------------------------------------------------------


def _read_exact(fd: int, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def read_frame(fd: int) -> tuple[dict, bytes]:
    (hlen,) = struct.unpack(">I", _read_exact(fd, 4))
    header = json.loads(_read_exact(fd, hlen))
    (plen,) = struct.unpack(">Q", _read_exact(fd, 8))
    return header, _read_exact(fd, plen)


def write_frame(fd: int, header: dict, payload: bytes = b"") -> None:
    head = json.dumps(header).encode()
    data = struct.pack(">I", len(head)) + head + struct.pack(">Q", len(payload)) + payload
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# -- the supervisor --------------------------------------------------------------------------


_LIBC: list[Any] = []  # the C library, opened once (the supervisor polls with it)


def _libc() -> Any:
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def _prctl(option: int, value: int) -> None:
    try:
        _libc().prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the limits and timeouts still hold
        pass


def _stat(pid: int) -> list[bytes]:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


def _my_children() -> list[int]:
    """The supervisor's children but the template: what jobs left behind, and the job."""
    me, found = os.getpid(), []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != _TEMPLATE:
            try:
                if int(_stat(int(name))[1]) == me:
                    found.append(int(name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _sweep(deadline: float) -> tuple[float, bool]:
    """Kill and reap every process left behind (orphans come to us: we are their subreaper).

    Returns their CPU seconds and whether everything was gone before ``deadline``.
    """
    cpu = 0.0
    while True:
        children = _my_children()
        for pid in children:
            for kill in (
                lambda p: os.killpg(p, signal.SIGKILL),
                lambda p: os.kill(p, signal.SIGKILL),
            ):
                try:
                    kill(pid)
                except OSError:
                    pass
        while True:
            try:
                pid, _, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == _TEMPLATE:  # (the template ended: the job killed it; see main)
                continue
            cpu += usage.ru_utime + usage.ru_stime
        if not children:
            return cpu, True
        if time.monotonic() > deadline:
            return cpu, False
        time.sleep(0.002)


_MAX_PROCESSES = 64


def _job_pids(keep: frozenset[int] = frozenset()) -> list[int]:
    """In the sandbox, every process but init, the supervisor, the template (and ``keep``):
    the job's, and whatever it started."""
    ours = {1, os.getpid(), _TEMPLATE} | keep
    return [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) not in ours]


def _over_budget(memory: int) -> str:
    """In the sandbox every process but init, the supervisor and the template is the job's:
    too many of them, or too much memory in all (RLIMIT_AS holds per process only), ends it."""
    pids = _job_pids()
    if len(pids) > _MAX_PROCESSES:
        return "too many processes"
    rss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as f:
                rss += int(f.read().split()[1]) * resource.getpagesize()
        except (OSError, IndexError, ValueError):
            continue
    return "too much memory" if rss > memory + _BASE_RSS else ""


def _cpu_of(pid: int) -> float:
    """CPU seconds of a process (all its threads, and the children it waited for) so far:
    its own to the nanosecond (its CPU clock, the clock ``wait4`` reports from), what it
    waited for in clock ticks."""
    ticks = [int(v) for v in _stat(pid)[11:15]]
    tick = os.sysconf("SC_CLK_TCK")
    clock = ctypes.c_int()
    try:
        if _libc().clock_getcpuclockid(pid, ctypes.byref(clock)) == 0:
            return time.clock_gettime(clock.value) + (ticks[2] + ticks[3]) / tick
    except (OSError, AttributeError):  # not Linux, or it ended: clock ticks for all of it
        pass
    return sum(ticks) / tick


def _job_cpu(pid: int, sandboxed: bool) -> float:
    """CPU seconds of the job so far: in the sandbox, of every process but ours (the job
    process, what it waited for, and what it left running); elsewhere, of the job process."""
    if not sandboxed:
        return _cpu_of(pid)
    total = 0.0
    for job_pid in _job_pids():
        try:
            total += _cpu_of(job_pid)
        except (OSError, IndexError, ValueError):
            continue
    return total


def _template_alive() -> bool:
    """The template is there and running (a job may have killed or stopped it)."""
    try:
        if os.waitpid(_TEMPLATE, os.WNOHANG) != (0, 0):
            return False
        return _stat(_TEMPLATE)[0] not in (b"T", b"t", b"Z")
    except (ChildProcessError, OSError, IndexError):
        return False


def _hello(fd: int) -> int:
    """The pid a fresh job process announces, once it is the supervisor's child (0: none)."""
    ready, _, _ = select.select([fd], [], [], _HELLO_LIMIT)
    if not ready:
        return 0
    try:
        header, _payload = read_frame(fd)
        pid = int(header["pid"])
        return pid if int(_stat(pid)[1]) == os.getpid() else 0
    except (EOFError, OSError, KeyError, TypeError, ValueError):
        return 0


_HELD: dict[str, tuple[dict, int]] = {}  # the last timing inputs, by the referee's key
_HOLD = 4  # as many as an assignment has timed questions (the referee counts the same)


def _timing_input(meta: dict, data: bytes) -> tuple[dict, int] | None:
    """The timing input's bytes in a memory file of their own (written by the supervisor,
    so the job is not charged for copying them), and what they hold. A grading run sends
    each input once: later jobs name it by its key. None: a key we do not hold."""
    key = str(meta.get("key", ""))
    if meta.get("held"):
        return _HELD.get(key)
    memfd = os.memfd_create("timing-input", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view = memoryview(data)
    while view:
        view = view[os.write(memfd, view) :]
    seals = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
    fcntl.fcntl(memfd, fcntl.F_ADD_SEALS, seals)  # no job can change it for the next one
    while len(_HELD) >= _HOLD:
        os.close(_HELD.pop(next(iter(_HELD)))[1])
    _HELD[key] = (meta, memfd)
    return meta, memfd


def _send_later(channel: socket.socket, later: tuple[dict, int]) -> None:
    """After the stop: the memory file's descriptor, then what it holds (a few hundred bytes:
    the socket takes them at once; no thread, which would count as a new task)."""
    meta, memfd = later
    try:
        socket.send_fds(channel, [b"T"], [memfd])
        write_frame(channel.fileno(), meta)
    except OSError:  # it ended first
        pass


def _last_pid() -> int:
    """The last pid handed out in this pid namespace (threads take them too), or -1."""
    try:
        with open("/proc/sys/kernel/ns_last_pid") as f:
            return int(f.read())
    except (OSError, ValueError):
        return -1


def _kill_all_but(keep: set[int]) -> None:
    """In the sandbox: end every process of the job but ``keep`` (and init, us, the template)."""
    for pid in _job_pids(frozenset(keep)):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    while True:  # reap those that were handed to us
        try:
            pid, _, _ = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0 or pid == _TEMPLATE:
            return


def _run_job(
    header: dict,
    payload: bytes,
    later: tuple[dict, int] | None,
    control: socket.socket,
    base: str,
) -> tuple[dict, bytes]:
    sandboxed = os.environ.get("GATHER_COURSE_SANDBOXED") == "1"
    try:
        jobdir = _job_folder(base, sandboxed)
    except OSError as exc:
        return {"status": f"grader: no job folder ({exc.strerror})", "clean": False}, b""
    mine, theirs = socket.socketpair()
    beat_r, beat_w = os.pipe()
    try:
        socket.send_fds(control, [b"J"], [theirs.fileno(), beat_w])
    except OSError:
        theirs.close()
        os.close(beat_w)
        os.close(beat_r)
        mine.close()
        return {"status": "grader: the template is gone"}, b""
    theirs.close()
    os.close(beat_w)
    started = time.monotonic()
    pid = _hello(mine.fileno())
    if not pid:
        os.close(beat_r)
        mine.close()
        _sweep(time.monotonic() + 5)
        return {"status": "grader: no job process started"}, b""
    job = {k: header[k] for k in ("cells", "function", "call_limit", "memory", "job_limit")}
    job["jobdir"], job["timing"] = jobdir, later is not None
    try:
        write_frame(mine.fileno(), job, payload)
    except OSError:
        pass  # it ended already: its status says how
    job_limit, call_limit = float(header["job_limit"]), float(header["call_limit"])
    cpu_cap = float(header.get("cpu_cap") or 0)
    last_beat, status, usage, code, at_stop = started, "", None, None, None
    last_pid = -1
    while usage is None:
        ready, _, _ = select.select([beat_r], [], [], 0.02)
        if ready and os.read(beat_r, 4096):
            last_beat = time.monotonic()
        done, wstatus, ru = os.wait4(pid, os.WNOHANG | os.WUNTRACED)
        if done and os.WIFSTOPPED(wstatus):  # it stops itself once, after the cells
            if at_stop is None and later is not None:
                if sandboxed:  # what the cells left running ends here: the calls run alone
                    _kill_all_but({pid})
                    last_pid = _last_pid()
                at_stop = _cpu_of(pid)
                _send_later(mine, later)
            os.kill(pid, signal.SIGCONT)
            continue
        if done:
            usage, code = ru, wstatus
            break
        now = time.monotonic()
        over = _over_budget(int(header["memory"])) if sandboxed else ""
        if at_stop is not None and cpu_cap and _job_cpu(pid, sandboxed) - at_stop > cpu_cap:
            over = "cpu_limit"  # the timing verdict is known: no need to wait
        if over or now - started > job_limit or now - last_beat > call_limit:
            status = over or "timeout"
            os.kill(pid, signal.SIGKILL)
            _, code, usage = os.wait4(pid, 0)
    os.close(beat_r)
    mine.close()
    if last_pid >= 0 and _last_pid() != last_pid and not status:
        status = "new tasks"  # a thread or process began after the stop: uncountable CPU
    cpu = usage.ru_utime + usage.ru_stime
    left_cpu, clean = _sweep(time.monotonic() + 5)
    calls_cpu = None if at_stop is None else cpu + left_cpu - at_stop
    if not status:
        if os.WIFSIGNALED(code):
            sig = os.WTERMSIG(code)
            status = {signal.SIGXCPU: "timeout", signal.SIGKILL: "killed"}.get(sig, f"signal {sig}")
        elif os.WEXITSTATUS(code) != 0:
            status = f"exit {os.WEXITSTATUS(code)}"
        else:
            status = "ok"
    result = b""
    path = os.path.join(jobdir, "result.pt")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            result = f.read(_RESULT_CAP + 1)
    except OSError:
        pass
    if len(result) > _RESULT_CAP:
        status, result = "result too large", b""
    clean = _wipe(base, sandboxed, _MOUNTS) and clean and not (sandboxed and _ipc_left())
    reply = {"status": status, "calls_cpu": calls_cpu, "clean": clean}
    if not _template_alive():
        reply["template_gone"] = True  # this job ended it: the worker must start afresh
    return reply, result


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


def main() -> None:
    """The supervisor: fork the template before any job exists, then serve the referee."""
    global _MOUNTS, _BASE_RSS, _TEMPLATE
    # The pipe to the referee moves off fds 0/1, so that nothing printed can reach it.
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.environ["GATHER_COURSE_DEVICE"] = "cpu"
    _answer_time_package()
    import torch  # the template inherits it warm; the supervisor never runs tensors

    control, template_end = socket.socketpair()
    ready_r, ready_w = os.pipe()
    _TEMPLATE = os.fork()
    if _TEMPLATE == 0:  # the template: never returns
        code = 70
        try:
            for fd in (rfd, wfd, ready_r):
                os.close(fd)
            control.close()
            _template(template_end, ready_w)
            code = 0
        finally:
            os._exit(code)
    template_end.close()
    os.close(ready_w)
    _prctl(_PR_SET_DUMPABLE, 0)  # the jobs cannot ptrace the supervisor or read its memory
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # job processes and their leftovers become ours
    started = os.read(ready_r, 1) == b"R"
    os.close(ready_r)
    if not started:
        write_frame(wfd, {"ready": False, "why": "the template did not start"})
        return
    _MOUNTS = _mounts_under(tempfile.gettempdir())
    _BASE_RSS = 0
    for pid in (os.getpid(), _TEMPLATE):
        with open(f"/proc/{pid}/statm") as f:
            _BASE_RSS += int(f.read().split()[1]) * resource.getpagesize()
    base = tempfile.mkdtemp(prefix="jobs-")
    write_frame(wfd, {"ready": True, "pid": os.getpid(), "torch": torch.__version__})
    while True:
        try:
            header, payload = read_frame(rfd)
            later = _timing_input(*read_frame(rfd)) if header.get("later") else None
        except EOFError:
            return
        if header.get("later") and later is None:
            reply, result = {"status": "grader: a timing input it does not hold"}, b""
        else:
            reply, result = _run_job(header, payload, later, control, base)
        write_frame(wfd, reply, result)
        del header, payload, later, result  # (the jobs cannot read us; still, keep nothing)
        if (
            "template_gone" in reply
            or reply["status"].startswith("grader")
            or not reply.get("clean", True)
        ):
            return  # a job left something we could not undo: the referee starts a fresh worker


def _answer_time_package() -> None:
    """``gather_course`` as answers see it: the public helpers, nothing of the course.

    The package's ``__init__`` (which imports the question bank) never runs here: the
    package is a bare module over this folder, filled by :mod:`gather_course._answer_api`.
    """
    import importlib.machinery

    folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # over grading/
    package = types.ModuleType("gather_course")
    package.__spec__ = importlib.machinery.ModuleSpec("gather_course", None, is_package=True)
    package.__spec__.submodule_search_locations = [folder]
    package.__path__ = [folder]
    package.__package__ = "gather_course"
    sys.modules["gather_course"] = package
    from gather_course import _answer_api

    _answer_api.install()


# -- the template ------------------------------------------------------------------------------


def _template(control: socket.socket, ready_w: int) -> None:
    """Warm up once, then fork a job process for every pair of descriptors received.

    It receives nothing else: no job, no result, no exit status of a job (the child in
    between is ours and exits at once), so every job process starts from the same state.
    """
    import torch

    torch.set_num_threads(1)
    from gather_course._opcount import _OpCounter
    from gather_course.diagnose import _gather_failure  # noqa: F401 - warm: errors use it

    global _FROMBUFFER
    _FROMBUFFER = torch.frombuffer
    with _OpCounter():  # torch's one-time set-up, paid here
        torch.zeros(1) + 1
    warm = torch.ones(2, 3, requires_grad=True)  # autograd's one-time set-up (about 0.3 s)
    torch.log_softmax(warm, -1).gather(1, torch.zeros(2, 1, dtype=torch.long)).sum().backward()
    del warm
    _prctl(_PR_SET_DUMPABLE, 0)
    supervisor = os.getppid()
    os.write(ready_w, b"R")
    os.close(ready_w)
    while True:
        try:
            _msg, fds, _flags, _addr = socket.recv_fds(control, 1, 2)
        except OSError:
            return
        if len(fds) != 2:
            return  # the supervisor is gone
        between = os.fork()
        if between == 0:
            if os.fork() == 0:  # the job process: never returns
                code = 70
                try:
                    control.close()
                    _job_process(fds[0], fds[1], supervisor)
                    code = 0
                finally:
                    os._exit(code)
            os._exit(0)  # hands the job process to the supervisor
        for fd in fds:
            os.close(fd)
        os.waitpid(between, 0)


# -- the job process ---------------------------------------------------------------------------


def _limit(kind: int, value: int) -> None:
    soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value if kind != resource.RLIMIT_CPU else value + 1))


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _job_process(channel: int, beat_w: int, supervisor: int) -> None:
    import torch

    while os.getppid() != supervisor:  # until the child in between has exited
        time.sleep(0.0005)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    low, high = sorted((channel, beat_w))
    os.closerange(3, low)
    os.closerange(low + 1, high)
    os.closerange(high + 1, 4096)
    write_frame(channel, {"pid": os.getpid()})
    header, payload = read_frame(channel)  # the job, only now: after the fork
    jobdir = header["jobdir"]
    os.chdir(jobdir)
    os.environ["TMPDIR"] = jobdir
    _limit(resource.RLIMIT_AS, _vm_bytes() + int(header["memory"]))
    _limit(resource.RLIMIT_CPU, int(header["job_limit"]) + 1)
    _limit(resource.RLIMIT_FSIZE, _RESULT_CAP + 2**20)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_MSGQUEUE, 0)  # no POSIX queue to outlive the job
    if os.getuid() != 0:  # root ignores RLIMIT_NPROC
        _limit(resource.RLIMIT_NPROC, 256)
    calls = torch.load(io.BytesIO(payload), weights_only=True) if payload else []
    del payload
    timing = bool(header.get("timing"))

    def beat() -> None:
        try:
            os.write(beat_w, _BEAT)
        except OSError:
            pass

    from gather_course._opcount import _OpCounter

    # ours, taken before any learner code can replace them
    stop, getpid, save, opener = os.kill, os.getpid, torch.save, builtins.open
    read, counter_type, receive = read_frame, _OpCounter, _receive_timing_input
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    limit = float(header["call_limit"]) * 0.9  # ours first; the supervisor's is the backstop

    def too_long(signum: int, frame: Any) -> None:
        raise TookTooLong(f"it ran longer than {header['call_limit']:g} s and was stopped")

    signal.signal(signal.SIGALRM, too_long)
    cells = []
    beat()
    for n, source in enumerate(header["cells"]):
        name = f"<cell {n + 1}>"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        try:
            signal.setitimer(signal.ITIMER_REAL, limit)
            exec(compile(source, name, "exec"), namespace)  # noqa: S102 - running the learner's cells, in the sandbox, is this worker's job
            cells.append(None)
        except BaseException as exc:  # noqa: BLE001 - a cell's error is reported, not fatal
            cells.append(_describe(exc))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        beat()
    fn = namespace.get(header["function"]) if header.get("function") else None
    if timing:  # the supervisor reads our CPU time, then sends the timing input
        stop(getpid(), signal.SIGSTOP)
        beat()
        inputs, repeat = receive(channel, read)
        calls = [{"inputs": inputs}] * repeat
    results = []
    for n, call in enumerate(calls):
        beat()
        signal.setitimer(signal.ITIMER_REAL, 0 if timing else limit)
        try:
            results.append(_call(fn, call, counter_type, keep=not timing or n == len(calls) - 1))
        except TookTooLong as exc:  # raised between our own lines: still this call's
            results.append({"raised": _describe(exc)})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        beat()
        if (results[-1].get("raised") or {}).get("type") == "TookTooLong":
            break  # the verdict is known: the rest would only wait
    with opener(os.path.join(jobdir, "result.pt"), "wb") as f:
        save({"cells": cells, "results": results}, f)


_FROMBUFFER = None  # torch.frombuffer, taken by the template before any learner code


def _receive_timing_input(channel: int, read: Any) -> tuple[list, int]:
    """The timing input: a memory file mapped read-only, its tensors viewed in place."""
    import mmap

    import torch

    sock = socket.socket(fileno=os.dup(channel))
    _msg, fds, _flags, _addr = socket.recv_fds(sock, 1, 1)
    sock.detach()
    meta = read(channel)[0]
    size = int(meta["size"])
    # read-only and populated in one call (page by page, faults cost more than the answer):
    # an answer that writes into its inputs ends its own job
    flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)
    memory = mmap.mmap(fds[0], size, flags=flags, prot=mmap.PROT_READ) if size else bytearray()
    os.close(fds[0])
    inputs: list[Any] = []
    for item in meta["inputs"]:
        if "dtype" not in item:
            inputs.append(item["value"])
            continue
        dtype = getattr(torch, item["dtype"])
        count = math.prod(item["shape"])
        flat = (
            _FROMBUFFER(memory, dtype=dtype, count=count, offset=item["offset"])
            if count
            else torch.empty(0, dtype=dtype)
        )
        inputs.append(flat.view(item["shape"]))
    return inputs, int(meta["repeat"])


class TookTooLong(BaseException):
    """A cell or a call ran past the time limit (a BaseException: ``except Exception`` in
    learner code does not swallow it)."""


def _describe(exc: BaseException) -> dict:
    lines = str(exc).strip().splitlines()
    where = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith("<cell"):
            where = f"line {frame.lineno}: {(frame.line or '').strip()}"
            break
    return {
        "type": type(exc).__name__,
        "message": lines[0][:1000] if lines else "",
        "where": where,
        "not_implemented": isinstance(exc, NotImplementedError),
    }


def _call(fn: Any, call: dict, counter_type: type, keep: bool = True) -> dict:
    """One call of the learner's function, as plain data: what came back, or the error."""
    if fn is None:
        return {"missing": True}
    if not callable(fn):
        return {"not_callable": _type_name(fn)}
    inputs = call["inputs"]  # each call's own tensors, strides as the referee made them
    counter = counter_type()
    try:
        if call.get("count_ops"):
            with counter:
                value = fn(*inputs)
        else:
            value = fn(*inputs)
    except BaseException as exc:  # noqa: BLE001 - any error in learner code is feedback
        raised = _describe(exc)
        if isinstance(exc, Exception) and not isinstance(exc, NotImplementedError):
            from gather_course.diagnose import _gather_failure  # (imported by the template)

            raised["gather"] = _gather_failure(fn, inputs)  # which gather rule, if any
        return {"raised": raised}
    try:
        plain = _plain(value) if keep else None
    except Exception:  # noqa: BLE001 - a value that cannot even be described
        plain = {"opaque": "an object that could not be read", "subclass": False}
    out: dict[str, Any] = {"value": plain, "ops": dict(counter.ops)}
    if call.get("after"):
        out["after"] = [_plain(v) for v in inputs]
    return out


def _type_name(obj: Any) -> str:
    try:
        text = repr(obj)
    except Exception:  # noqa: BLE001 - a value whose repr fails is still named
        text = "?"
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{type(obj).__name__} {text}"


def _plain(value: Any, depth: int = 0) -> Any:
    """Tensors, tuples, lists and numbers as they are; anything else as a description."""
    import torch

    if type(value) is torch.Tensor:
        return value.detach().to("cpu", copy=True).contiguous()
    if isinstance(value, torch.Tensor):
        return {"opaque": f"the subclass {type(value).__name__}", "subclass": True}
    if isinstance(value, (tuple, list)) and depth < 2 and len(value) <= 16:
        items = [_plain(v, depth + 1) for v in value]
        return {"sequence": items, "kind": "tuple" if isinstance(value, tuple) else "list"}
    if value is None or type(value) in (bool, int, float):
        return value
    return {"opaque": _type_name(value), "subclass": False}


if __name__ == "__main__":
    sys.exit(main())
