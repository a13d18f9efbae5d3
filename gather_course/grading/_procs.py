"""The sandbox's processes as the supervisor sees them: who is the job's, their CPU and memory.

In the sandbox's pid namespace every process but the supervisor (pid 1) and the template is
the job's (the job process and whatever it started). The supervisor counts their CPU time
from the kernel's clocks, their memory, and kills and reaps what a job left behind (it is
their subreaper). The supervisor names its template once, with :func:`adopt_template`.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import signal
import time
from typing import Any

from gather_course.grading._frames import JobStatus

TEMPLATE = 0  # the template's pid (the supervisor's child that is not a job)
BASE_RSS = 0  # the supervisor's and the template's own resident memory


def adopt_template(pid: int) -> None:
    """The supervisor's template is ``pid``: never a job's process; its memory and the
    supervisor's own are not charged to a job."""
    global TEMPLATE, BASE_RSS
    TEMPLATE = pid
    BASE_RSS = 0
    for each in (os.getpid(), pid):
        with open(f"/proc/{each}/statm") as f:
            BASE_RSS += int(f.read().split()[1]) * resource.getpagesize()


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


# clone(2)'s system call number on this machine (None: not one we know), and its flag that
# makes the new process a child of the caller's parent
_CLONE = {"x86_64": 56, "aarch64": 220}.get(platform.machine())
_CLONE_PARENT = 0x00008000


def fork_beside() -> int | None:
    """``os.fork()``, but the new process is a child of our parent (``clone`` with
    ``CLONE_PARENT``): 0 in it, its pid here. Python is told as ``os.fork`` tells it
    (``PyOS_BeforeFork`` and ``PyOS_AfterFork_*``: its locks, its ``register_at_fork``
    hooks). None where it is not done: a machine whose ``clone`` we do not know, or more
    than one thread here (a bare ``clone`` skips the C library's fork handlers, which
    only threads need), or a ``clone`` the kernel refused; the caller then forks twice.
    """
    if _CLONE is None or len(os.listdir("/proc/self/task")) != 1:
        return None
    api = ctypes.pythonapi
    clone = ctypes.PyDLL(None).syscall  # the GIL held throughout, as os.fork holds it
    clone.restype = ctypes.c_long
    flags = ctypes.c_ulong(_CLONE_PARENT | signal.SIGCHLD)
    api.PyOS_BeforeFork()
    pid = clone(ctypes.c_long(_CLONE), flags, *(ctypes.c_long(0) for _ in range(4)))
    if pid == 0:
        api.PyOS_AfterFork_Child()
        return 0
    api.PyOS_AfterFork_Parent()
    return pid if pid > 0 else None


def _stat(pid: int) -> list[bytes]:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


def _my_children() -> list[int]:
    """The supervisor's children but the template: what jobs left behind, and the job."""
    me, found = os.getpid(), []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != TEMPLATE:
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
            if pid == TEMPLATE:  # (the template ended: the job killed it; see main)
                continue
            cpu += usage.ru_utime + usage.ru_stime
        if not children:
            return cpu, True
        if time.monotonic() > deadline:
            return cpu, False
        time.sleep(0.002)


_MAX_PROCESSES = 64


def _job_pids(keep: frozenset[int] = frozenset()) -> list[int]:
    """In the sandbox, every process but the supervisor (its pid 1), the template (and
    ``keep``): the job's, and whatever it started."""
    ours = {1, os.getpid(), TEMPLATE} | keep
    return [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) not in ours]


def _over_budget(memory: int) -> JobStatus | None:
    """In the sandbox every process but the supervisor and the template is the job's:
    too many of them, or too much memory in all (RLIMIT_AS holds per process only), ends it."""
    pids = _job_pids()
    if len(pids) > _MAX_PROCESSES:
        return JobStatus.TOO_MANY_PROCESSES
    rss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as f:
                rss += int(f.read().split()[1]) * resource.getpagesize()
        except (OSError, IndexError, ValueError):
            continue
    return JobStatus.TOO_MUCH_MEMORY if rss > memory + BASE_RSS else None


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
        if os.waitpid(TEMPLATE, os.WNOHANG) != (0, 0):
            return False
        return _stat(TEMPLATE)[0] not in (b"T", b"t", b"Z")
    except (ChildProcessError, OSError, IndexError):
        return False


# the keyctl system call's number on this machine (None: not one we know)
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(platform.machine())


def _keys() -> bytes:
    """The key ids in the session, user, user-session and persistent keyrings (those a job
    shares with the template and every later job of this worker: the persistent one, one a
    user namespace, is the sandbox's); empty where keyctl is unknown."""
    if _KEYCTL is None:
        return b""
    found = b""
    # KEYCTL_GET_PERSISTENT (22): this user's persistent keyring, linked into our own process
    # keyring (which no job inherits); -1 where the kernel has none
    persistent = _libc().syscall(_KEYCTL, 22, -1, -2)
    # KEY_SPEC_SESSION_KEYRING, _USER_KEYRING, _USER_SESSION_KEYRING, and the persistent one
    for ring in (-3, -4, -5, *([persistent] if persistent > 0 else [])):
        buf = ctypes.create_string_buffer(4096)
        n = _libc().syscall(_KEYCTL, 11, ring, buf, 4096)  # KEYCTL_READ: the ring's key ids
        found += buf.raw[: max(0, min(n, 4096))] + b"|"
    return found


_LIMITS = sorted({getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_")})


def _shared_state() -> tuple | None:
    """What a job can change that every later job of this worker meets: as the same user it
    may lower or raise the resource limits (``prlimit``), the priority, the I/O priority, the
    CPUs and the scheduler of the template (whose children the jobs are) and of the
    supervisor (red team, 2026-11-27: the supervisor's limits carried 500 bits from a job's
    first timing run to its retry), and add keys to the keyrings they share. None if it
    cannot be read."""
    try:
        return (*(_process_state(pid) for pid in (TEMPLATE, os.getpid())), _keys())
    except OSError:
        return None


def _process_state(pid: int) -> tuple:
    return (
        tuple(resource.prlimit(pid, r) for r in _LIMITS),
        os.getpriority(os.PRIO_PROCESS, pid),
        _ioprio(pid),
        frozenset(os.sched_getaffinity(pid)),
        os.sched_getscheduler(pid),
        os.sched_getparam(pid).sched_priority,
    )


# the ioprio_get system call's number on this machine (None: not one we know)
_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}.get(platform.machine())


def _ioprio(pid: int) -> int:
    """The I/O scheduling class and priority of ``pid`` (IOPRIO_WHO_PROCESS), or -1."""
    if _IOPRIO_GET is None:
        return -1
    return int(_libc().syscall(_IOPRIO_GET, 1, pid))


def _last_pid() -> int:
    """The last pid handed out in this pid namespace (threads take them too), or -1."""
    try:
        with open("/proc/sys/kernel/ns_last_pid") as f:
            return int(f.read())
    except (OSError, ValueError):
        return -1


def _kill_all_but(keep: set[int]) -> None:
    """In the sandbox: end every process of the job but ``keep`` (and us, the template)."""
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
        if pid == 0 or pid == TEMPLATE:
            return
