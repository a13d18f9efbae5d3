"""The sandboxed side of grading: a zygote that imports torch once, then forks a child per job.

Run as ``python -m gather_course._worker`` by :mod:`gather_course._sandbox`, inside bubblewrap
when it is there. The referee never imports this module. The zygote itself never runs
learner code: each job runs in a fresh child that

1. loads its inputs (``torch.load(..., weights_only=True)``) or builds the timing input from
   the question's own ``make``, *before* any learner code runs;
2. runs the notebook's cells in a fresh namespace, then calls the learner's function;
3. writes what came back, as plain data, to a file the zygote hands to the referee unread.

The zygote measures the child with ``wait4`` (CPU time counted by the kernel, including every
process the child started: the zygote is their subreaper), kills whatever the child left
running, and wipes the job's folder before the next job.
"""

from __future__ import annotations

import builtins
import ctypes
import io
import json
import linecache
import os
import resource
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
from typing import Any

_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 4, 36
_RESULT_CAP = 256 * 2**20  # bytes of results a job may send back
_BEAT = b"."
_MOUNTS: frozenset[str] = frozenset()  # read-only binds under the sandbox's /tmp
_BASE_RSS = 0  # the zygote's own resident memory (children share it)


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


# -- the zygote --------------------------------------------------------------------------------


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the limits and timeouts still hold
        pass


def _my_children() -> list[int]:
    me, found = os.getpid(), []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me:
                found.append(int(name))
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
            cpu += usage.ru_utime + usage.ru_stime
        if not children:
            return cpu, True
        if time.monotonic() > deadline:
            return cpu, False
        time.sleep(0.002)


_MAX_PROCESSES = 64


def _over_budget(memory: int) -> str:
    """In the sandbox every process but init and us is the job's: too many of them, or too
    much memory in all (RLIMIT_AS holds per process only), ends the job."""
    me, pids = os.getpid(), []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (1, me):
            pids.append(name)
    if len(pids) > _MAX_PROCESSES:
        return "too many processes"
    rss = 0
    for name in pids:
        try:
            with open(f"/proc/{name}/statm") as f:
                rss += int(f.read().split()[1]) * resource.getpagesize()
        except (OSError, IndexError, ValueError):
            continue
    return "too much memory" if rss > memory + _BASE_RSS else ""


def _cpu_of(pid: int) -> float:
    """CPU seconds of a process (all its threads, and the children it waited for) so far."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _run_job(header: dict, payload: bytes, pipes: tuple[int, int], base: str) -> tuple[dict, bytes]:
    jobdir = tempfile.mkdtemp(dir=base)
    beat_r, beat_w = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 70
        try:
            os.close(beat_r)
            _child(header, payload, jobdir, beat_w, pipes)
            code = 0
        finally:
            os._exit(code)
    os.close(beat_w)
    job_limit, call_limit = float(header["job_limit"]), float(header["call_limit"])
    sandboxed = os.environ.get("GATHER_COURSE_SANDBOXED") == "1"
    last_beat, status, usage, code, at_stop = started, "", None, None, None
    while usage is None:
        ready, _, _ = select.select([beat_r], [], [], 0.02)
        if ready and os.read(beat_r, 4096):
            last_beat = time.monotonic()
        done, wstatus, ru = os.wait4(pid, os.WNOHANG | os.WUNTRACED)
        if done and os.WIFSTOPPED(wstatus):  # the child stops itself before its calls
            if at_stop is None:
                at_stop = _cpu_of(pid)
            os.kill(pid, signal.SIGCONT)
            continue
        if done:
            usage, code = ru, wstatus
            break
        now = time.monotonic()
        over = _over_budget(int(header["memory"])) if sandboxed else ""
        if over or now - started > job_limit or now - last_beat > call_limit:
            status = over or "timeout"
            os.kill(pid, signal.SIGKILL)
            _, code, usage = os.wait4(pid, 0)
    os.close(beat_r)
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
    _wipe(base, sandboxed, _MOUNTS)
    return {"status": status, "calls_cpu": calls_cpu, "clean": clean}, result


def _wipe(base: str, sandboxed: bool, mounts: frozenset[str] = frozenset()) -> None:
    """Remove everything a job wrote where it could write, so the next job finds nothing.

    In the sandbox that is its own /tmp and /dev/shm (all but the read-only ``mounts`` made
    there, and the folders that lead to them); without one, only the jobs' folder.
    """
    leading = {os.path.dirname(m) for m in mounts}
    while any(os.path.dirname(p) not in leading and p not in ("/", "") for p in leading):
        leading |= {os.path.dirname(p) for p in leading}
    todo = [os.path.dirname(base), "/dev/shm"] if sandboxed else [base]
    while todo:
        folder = todo.pop()
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path == base or path in mounts:
                continue
            if path in leading:
                todo.append(path)
            elif os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass
    if sandboxed:
        _wipe(base, False)


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
    # The pipe to the referee moves off fds 0/1, so that nothing printed can reach it.
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.environ["GATHER_COURSE_DEVICE"] = "cpu"
    import torch

    torch.set_num_threads(1)
    import gather_course.questions  # noqa: F401 - warm: the notebooks import it
    from gather_course.questions._check import _OpCounter

    with _OpCounter():  # torch's one-time set-up, paid here
        torch.zeros(1) + 1
    _prctl(_PR_SET_DUMPABLE, 0)  # children cannot ptrace us or read our memory
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # whatever a child leaves behind becomes ours to kill
    global _MOUNTS, _BASE_RSS
    _MOUNTS = _mounts_under(tempfile.gettempdir())
    with open("/proc/self/statm") as f:
        _BASE_RSS = int(f.read().split()[1]) * resource.getpagesize()
    base = tempfile.mkdtemp(prefix="jobs-")
    write_frame(wfd, {"ready": True, "pid": os.getpid(), "torch": torch.__version__})
    while True:
        try:
            header, payload = read_frame(rfd)
        except EOFError:
            return
        reply, result = _run_job(header, payload, (rfd, wfd), base)
        write_frame(wfd, reply, result)


# -- the child ---------------------------------------------------------------------------------


def _limit(kind: int, value: int) -> None:
    soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value if kind != resource.RLIMIT_CPU else value + 1))


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _child(header: dict, payload: bytes, jobdir: str, beat_w: int, pipes: tuple[int, int]) -> None:
    import torch

    os.setsid()
    for fd in pipes:
        os.close(fd)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, beat_w)
    os.closerange(beat_w + 1, 4096)
    os.chdir(jobdir)
    os.environ["TMPDIR"] = jobdir
    _limit(resource.RLIMIT_AS, _vm_bytes() + int(header["memory"]))
    _limit(resource.RLIMIT_CPU, int(header["job_limit"]) + 1)
    _limit(resource.RLIMIT_FSIZE, _RESULT_CAP + 2**20)
    _limit(resource.RLIMIT_CORE, 0)
    if os.getuid() != 0:  # root ignores RLIMIT_NPROC
        _limit(resource.RLIMIT_NPROC, 256)

    calls = torch.load(io.BytesIO(payload), weights_only=True) if payload else []
    timing = header.get("timing")
    if timing:  # built before learner code runs
        from gather_course.questions import exercise

        gen = torch.Generator().manual_seed(int(timing["seed"]))
        case = exercise(header["qid"], timing.get("variant", "public")).build(gen, timing["sizes"])
        calls = [{"inputs": list(case.inputs.values())}] * int(timing["repeat"])

    def beat() -> None:
        try:
            os.write(beat_w, _BEAT)
        except OSError:
            pass

    from gather_course.questions._check import _OpCounter

    # ours, taken before any learner code can replace them
    stop, getpid, save, opener = os.kill, os.getpid, torch.save, builtins.open
    counter_type = _OpCounter
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    limit = float(header["call_limit"]) * 0.9  # ours first; the zygote's is the backstop

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
    if timing:
        stop(getpid(), signal.SIGSTOP)  # the zygote reads our CPU time here
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
        "message": lines[0] if lines else "",
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
            from gather_course.diagnose import _gather_failure  # (imported by the zygote)

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
