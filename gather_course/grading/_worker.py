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
- the **job process** is forked from the template as the supervisor's child (``clone``'s
  ``CLONE_PARENT``; where that cannot be done, as a grandchild whose parent exits at once,
  so that it is handed to the supervisor, a subreaper): the supervisor waits for it and
  reads its CPU time from the kernel. Only now does it read its job from its own channel:
  the learner's cells and the inputs the referee made. For a timing job it runs the cells,
  stops itself (the supervisor reads its CPU time), and only then receives the timing
  input, drawn from a secret seed: code at the top of a cell cannot prepare for it.

Expected outputs, reference answers and other submissions never enter a job process: the
referee compares outputs itself. ``gather_course`` in a job process is the public helpers
only (:mod:`gather_course._answer_api`); in the sandbox the rest of the package is not even
in the file system.

Long on purpose (about 450 lines): one idea, the process tree that keeps every job pristine,
and its fork protocol (who holds which descriptor, who forks whom, who waits), which has to
be read whole to be audited; the job's own code is :mod:`._job`, the framing :mod:`._frames`,
the processes' CPU and memory :mod:`._procs`.
"""

from __future__ import annotations

import fcntl
import io
import os
import select
import signal
import socket
import sys
import tempfile
import time
import types
from typing import Any

_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 4, 36
_HELLO_LIMIT = 30.0  # seconds for a fresh job process to announce itself
_MOUNTS: frozenset[str] = frozenset()  # read-only binds under the sandbox's /tmp
_STATE: tuple | None = None  # the template's and our limits, priorities, CPUs, keys at the start


def _bare_packages() -> None:
    """Run as a script (in the sandbox): ``gather_course`` and ``gather_course.grading`` as
    bare packages over their folders, so that the worker's own modules import while the
    package's ``__init__`` (which imports the question bank) never runs here."""
    import importlib.machinery

    grading = os.path.dirname(os.path.abspath(__file__))
    for name, folder in (
        ("gather_course", os.path.dirname(grading)),
        ("gather_course.grading", grading),
    ):
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__spec__.submodule_search_locations = [folder]
        module.__path__ = [folder]
        module.__package__ = name
        sys.modules[name] = module


if __name__ == "__main__":
    _bare_packages()

# Absolute, so that they import the same way as a script and as a module of the package.
from gather_course.grading import _job, _procs  # noqa: E402
from gather_course.grading._frames import (  # noqa: E402
    HOLD,
    RESULT_CAP,
    Ended,
    JobStatus,
    ended,
    read_frame,
    write_frame,
)
from gather_course.grading._procs import (  # noqa: E402
    _cpu_of,
    _job_cpu,
    _kill_all_but,
    _last_pid,
    _over_budget,
    _prctl,
    _shared_state,
    _stat,
    _sweep,
    _template_alive,
)
from gather_course.grading._wipe import _ipc_left, _job_folder, _mounts_under, _wipe  # noqa: E402

# -- the supervisor --------------------------------------------------------------------------


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
    while len(_HELD) >= HOLD:
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


def _grader(problem: str) -> dict:
    """The reply of a job the grader itself could not run (not the submission's fault)."""
    return {"status": Ended(JobStatus.GRADER, problem).encode()}


def _how_it_ended(code: int) -> Ended:
    """A job's wait status, as a status."""
    if os.WIFSIGNALED(code):
        sig = os.WTERMSIG(code)
        known = {signal.SIGXCPU: JobStatus.TIMEOUT, signal.SIGKILL: JobStatus.KILLED}
        return Ended(known[sig]) if sig in known else Ended(JobStatus.SIGNAL, str(sig))
    if os.WEXITSTATUS(code) != 0:
        return Ended(JobStatus.EXIT, str(os.WEXITSTATUS(code)))
    return Ended(JobStatus.OK)


def _start_job(control: socket.socket) -> tuple[socket.socket, int, int] | str:
    """A fresh job process from the template: (its channel, the read end of its heartbeat,
    its pid), or what went wrong (the grader's problem)."""
    mine, theirs = socket.socketpair()
    beat_r, beat_w = os.pipe()
    try:
        socket.send_fds(control, [b"J"], [theirs.fileno(), beat_w])
    except OSError:
        theirs.close()
        os.close(beat_w)
        os.close(beat_r)
        mine.close()
        return "the template is gone"
    theirs.close()
    os.close(beat_w)
    pid = _hello(mine.fileno())
    if not pid:
        os.close(beat_r)
        mine.close()
        _sweep(time.monotonic() + 5)
        return "no job process started"
    return mine, beat_r, pid


class _Watched:
    """What the supervisor saw of one job process until it ended."""

    status: JobStatus | None = None  # set when the supervisor ended it, or new tasks began
    at_stop: float | None = None  # its CPU seconds at the stop after the cells (timing jobs)
    usage: Any = None
    code = 0


def _watch(
    pid: int,
    header: dict,
    later: tuple[dict, int] | None,
    mine: socket.socket,
    beat_r: int,
    sandboxed: bool,
) -> _Watched:
    """Wait for the job to end, within its limits: the job's and the call's (by its
    heartbeat), its memory, and a timing job's CPU cap; send the timing input at its stop."""
    seen = _Watched()
    started = last_beat = time.monotonic()
    job_limit, call_limit = float(header["job_limit"]), float(header["call_limit"])
    cpu_cap = float(header.get("cpu_cap") or 0)
    last_pid = -1
    while seen.usage is None:
        ready, _, _ = select.select([beat_r], [], [], 0.02)
        if ready and os.read(beat_r, 4096):
            last_beat = time.monotonic()
        done, wstatus, ru = os.wait4(pid, os.WNOHANG | os.WUNTRACED)
        if done and os.WIFSTOPPED(wstatus):  # it stops itself once, after the cells
            if seen.at_stop is None and later is not None:
                if sandboxed:  # what the cells left running ends here: the calls run alone
                    _kill_all_but({pid})
                    last_pid = _last_pid()
                seen.at_stop = _cpu_of(pid)
                _send_later(mine, later)
            os.kill(pid, signal.SIGCONT)
            continue
        if done:
            seen.usage, seen.code = ru, wstatus
            break
        now = time.monotonic()
        over = _over_budget(int(header["memory"])) if sandboxed else None
        if (
            seen.at_stop is not None
            and cpu_cap
            and _job_cpu(pid, sandboxed) - seen.at_stop > cpu_cap
        ):
            over = JobStatus.CPU_LIMIT  # the timing verdict is known: no need to wait
        if over or now - started > job_limit or now - last_beat > call_limit:
            seen.status = over or JobStatus.TIMEOUT
            os.kill(pid, signal.SIGKILL)
            _, seen.code, seen.usage = os.wait4(pid, 0)
    if last_pid >= 0 and _last_pid() != last_pid and not seen.status:
        seen.status = JobStatus.NEW_TASKS  # a thread or process began after the stop
    return seen


def _read_result(jobdir: str) -> bytes:
    """The job's result file, never followed through a link, at most one byte past the cap."""
    try:
        fd = os.open(os.path.join(jobdir, "result.pt"), os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            return f.read(RESULT_CAP + 1)
    except OSError:
        return b""


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
        return _grader(f"no job folder ({exc.strerror})") | {"clean": False}, b""
    started = _start_job(control)
    if isinstance(started, str):
        return _grader(started), b""
    mine, beat_r, pid = started
    job = {k: header[k] for k in ("cells", "function", "call_limit", "memory", "job_limit")}
    job["lang"] = "zh" if header.get("lang") == "zh" else "en"
    job["jobdir"], job["timing"] = jobdir, later is not None
    try:
        write_frame(mine.fileno(), job, payload)
    except OSError:
        pass  # it ended already: its status says how
    seen = _watch(pid, header, later, mine, beat_r, sandboxed)
    os.close(beat_r)
    mine.close()
    cpu = seen.usage.ru_utime + seen.usage.ru_stime
    left_cpu, clean = _sweep(time.monotonic() + 5)
    calls_cpu = None if seen.at_stop is None else cpu + left_cpu - seen.at_stop
    end = Ended(seen.status) if seen.status else _how_it_ended(seen.code)
    result = _read_result(jobdir)
    if len(result) > RESULT_CAP:
        end, result = Ended(JobStatus.TOO_LARGE), b""
    clean = _wipe(base, sandboxed, _MOUNTS) and clean and not (sandboxed and _ipc_left())
    clean = clean and _shared_state() == _STATE  # a change a later job meets: a fresh worker
    reply = {"status": end.encode(), "calls_cpu": calls_cpu, "clean": clean}
    if not _template_alive():
        reply["template_gone"] = True  # this job ended it: the worker must start afresh
    return reply, result


def main() -> None:
    """The supervisor: fork the template before any job exists, then serve the referee."""
    global _MOUNTS, _STATE
    # The pipe to the referee moves off fds 0/1, so that nothing printed can reach it.
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.environ["GATHER_COURSE_DEVICE"] = "cpu"
    _answer_time_package()
    import torch  # the template inherits it warm; the supervisor never runs tensors

    os.dup2(null, 2)  # started: nothing more for the referee's stderr pipe (read only on failure)
    control, template_end = socket.socketpair()
    ready_r, ready_w = os.pipe()
    template = os.fork()
    if template == 0:  # the template: never returns
        code = 70
        try:
            for fd in (rfd, wfd, ready_r):
                os.close(fd)
            control.close()
            _template(template_end, ready_w)
            code = 0
        except BaseException as exc:  # noqa: BLE001 - why it could not warm up: it says so
            import traceback

            at = traceback.extract_tb(exc.__traceback__)[-1]
            said = f"{type(exc).__name__}: {exc} at {at.filename}:{at.lineno}"
            os.write(ready_w, said[-400:].encode(errors="replace"))
        finally:
            os._exit(code)
    template_end.close()
    os.close(ready_w)
    # In the sandbox we are pid 1: a signal from a job that we do not handle is dropped.
    # Python handles SIGINT (KeyboardInterrupt): a job's os.kill(1, SIGINT) ended us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _prctl(_PR_SET_DUMPABLE, 0)  # the jobs cannot ptrace the supervisor or read its memory
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # job processes and their leftovers become ours
    said = os.read(ready_r, 400)
    os.close(ready_r)
    if said != b"R":
        cause = f" ({said.decode(errors='replace')})" if said else ""
        write_frame(wfd, {"ready": False, "why": f"the template did not start{cause}"})
        return
    _MOUNTS = _mounts_under(tempfile.gettempdir())
    _STATE = _shared_state()
    _procs.adopt_template(template)
    base = tempfile.mkdtemp(prefix="jobs-")
    write_frame(wfd, {"ready": True, "pid": os.getpid(), "torch": torch.__version__})
    while True:
        try:
            header, payload = read_frame(rfd)
            later = _timing_input(*read_frame(rfd)) if header.get("later") else None
        except EOFError:
            return
        if header.get("later") and later is None:
            reply, result = _grader("a timing input it does not hold"), b""
        else:
            reply, result = _run_job(header, payload, later, control, base)
        write_frame(wfd, reply, result)
        del header, payload, later, result  # (the jobs cannot read us; still, keep nothing)
        if (
            "template_gone" in reply
            or ended(reply).status is JobStatus.GRADER
            or not reply.get("clean", True)
        ):
            return  # a job left something we could not undo: the referee starts a fresh worker


def _answer_time_package() -> None:
    """``gather_course`` as answers see it: the public helpers, nothing of the course.

    The package's ``__init__`` (which imports the question bank) never runs here: the
    package is the bare module :func:`_bare_packages` made, filled by
    :mod:`gather_course._answer_api`. The worker's own modules leave ``sys.modules``, so an
    answer that imports them gets the same refusal as for the rest of the course.
    """
    from gather_course._answer_api import install

    for name in [n for n in sys.modules if n.startswith("gather_course.grading")]:
        del sys.modules[name]
    install()


# -- the template ------------------------------------------------------------------------------


def _template(control: socket.socket, ready_w: int) -> None:
    """Warm up once, then fork a job process for every pair of descriptors received.

    It receives nothing else: no job, no result, no exit status of a job (the child in
    between is ours and exits at once), so every job process starts from the same state.
    """
    import torch

    torch.set_num_threads(1)
    from gather_course._i18n import catalog
    from gather_course._opcount import OpCounter
    from gather_course.diagnose import gather_failure  # noqa: F401 - warm: errors use it

    catalog("zh")  # read once here: a job that words a diagnosis in Chinese reads nothing

    _job.keep_frombuffer()
    with OpCounter():  # torch's one-time set-up, paid here
        torch.zeros(1) + 1
    warm = torch.ones(2, 3, requires_grad=True)  # autograd's one-time set-up (about 0.3 s)
    torch.log_softmax(warm, -1).gather(1, torch.zeros(2, 1, dtype=torch.long)).sum().backward()
    del warm
    # What torch does on a first call, paid here once instead of in every job process:
    # unravel_index imports sympy (0.3 s of CPU), and the first torch.load and torch.save
    # set themselves up (3 ms of a job's 10; benchmarks/bench_profile.py measures jobs)
    torch.unravel_index(torch.tensor([3]), (2, 3))
    kinds = [torch.zeros(2, 3), torch.zeros(2, dtype=torch.long), torch.zeros(1, dtype=torch.bool)]
    saved = io.BytesIO()
    torch.save([{"inputs": [*kinds, 1, 1.5, True, None, (1, 2)], "after": True}], saved)
    torch.load(io.BytesIO(saved.getvalue()), weights_only=True)
    del kinds, saved
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
        _fork_job(control, fds, supervisor)
        for fd in fds:
            os.close(fd)


def _fork_job(control: socket.socket, fds: list[int], supervisor: int) -> None:
    """A job process, the supervisor's child: forked as our sibling at once (one fork:
    ``_procs.fork_beside``), else through a child in between that exits at once (the
    supervisor, their subreaper, adopts it). Either way no job's exit status reaches us."""
    pid = _procs.fork_beside()
    if pid is None:
        between = os.fork()
        if between:
            os.waitpid(between, 0)
            return
        pid = os.fork()
        if pid:
            os._exit(0)  # hands the job process to the supervisor
    if pid == 0:  # the job process: never returns
        code = 70
        try:
            control.close()
            _job._job_process(fds[0], fds[1], supervisor)
            code = 0
        finally:
            os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
