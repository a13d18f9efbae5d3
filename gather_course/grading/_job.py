"""The job process: the only process that runs a student's code, and what it holds.

Forked from the worker's template (:mod:`._worker`) as the supervisor's child. Only after
the fork does it read its job from its own channel: the learner's cells and the inputs the
referee made. It runs the cells, stops itself for a timing job (the supervisor reads its CPU
clock) and only then receives the timing input, calls the learner's function, and writes its
results as plain data (tensors, short sequences, numbers; anything else described). Expected
outputs, reference answers and other jobs are never here.
"""

from __future__ import annotations

import builtins
import io
import linecache
import math
import os
import platform
import resource
import signal
import socket
import time
import traceback
from typing import Any

from gather_course.grading._frames import RESULT_CAP, read_frame, write_frame

_BEAT = b"."


def _limit(kind: int, value: int) -> None:
    soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value if kind != resource.RLIMIT_CPU else value + 1))


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _enter_job(channel: int, beat_w: int, supervisor: int) -> tuple[dict, bytes]:
    """Become the supervisor's child with nothing open but the job's channel and heartbeat,
    announce ourselves, read the job (only now: after the fork) and take its limits."""
    while os.getppid() != supervisor:  # (forked twice: until the child in between has exited)
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
    header, payload = read_frame(channel)
    os.chdir(header["jobdir"])
    os.environ["TMPDIR"] = header["jobdir"]
    os.environ["GATHER_COURSE_LANG"] = header.get("lang", "en")  # diagnoses in the class's
    _limit(resource.RLIMIT_AS, _vm_bytes() + int(header["memory"]))
    _limit(resource.RLIMIT_CPU, int(header["job_limit"]) + 1)
    _limit(resource.RLIMIT_FSIZE, RESULT_CAP + 2**20)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_MSGQUEUE, 0)  # no POSIX queue to outlive the job
    if os.getuid() != 0:  # root ignores RLIMIT_NPROC
        _limit(resource.RLIMIT_NPROC, 256)
    # memory in no process's RSS, outside the job's budget (red team, 2026-11-27: 1.6 GiB
    # held in memfds never mapped): the descriptors that could hold it are few (socket
    # buffers), and memory files, System V segments and queues cannot be made at all
    _limit(resource.RLIMIT_NOFILE, _DESCRIPTORS)
    _refuse(_HIDDEN_MEMORY.get(platform.machine(), ()))
    return header, payload


_DESCRIPTORS = 256  # a job's open files: torch and the cells need a few dozen
# system calls that make memory no process maps (memfd_create, memfd_secret, and System V's
# shmget and msgget: a message queue holds 16 KiB, and a namespace 32,000 of them), by the
# machine's numbering; where it is not known here, none is refused
_HIDDEN_MEMORY = {"x86_64": (319, 447, 29, 68), "aarch64": (279, 447, 194, 186)}
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def _refuse(calls: tuple[int, ...]) -> None:
    """Make ``calls`` fail with EPERM in this process and every thread and child it starts
    (a seccomp filter, which no later code can lift). On another machine, nothing."""
    if not calls:
        return
    import ctypes

    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    n = len(calls)
    program = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 0, n + 2, _AUDIT_ARCH[platform.machine()]),  # another ABI: allowed as it is
        (ld, 0, 0, 0),  # seccomp_data.nr
        (jge, n + 1, 0, 0x40000000),  # x86_64's x32 numbering: refused altogether
        *[(jeq, n - i, 0, nr) for i, nr in enumerate(calls)],
        (ret, 0, 0, allow),
        (ret, 0, 0, deny),
    ]

    class Filter(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_ushort),
            ("jt", ctypes.c_ubyte),
            ("jf", ctypes.c_ubyte),
            ("k", ctypes.c_uint32),
        ]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(program))(*[Filter(*op) for op in program])
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: required for a filter
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    prog = Program(len(program), filters)
    if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, MODE_FILTER
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


def _job_process(channel: int, beat_w: int, supervisor: int) -> None:
    import torch

    header, payload = _enter_job(channel, beat_w, supervisor)
    jobdir = header["jobdir"]
    calls = torch.load(io.BytesIO(payload), weights_only=True) if payload else []
    del payload
    timing = bool(header.get("timing"))

    def beat() -> None:
        try:
            os.write(beat_w, _BEAT)
        except OSError:
            pass

    from gather_course._opcount import OpCounter

    # ours, taken before any learner code can replace them
    stop, getpid, save, opener = os.kill, os.getpid, torch.save, builtins.open
    read, counter_type, receive = read_frame, OpCounter, _receive_timing_input
    threads, warm = torch.get_num_threads, torch.ones
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    limit = float(header["call_limit"]) * 0.9  # ours first; the supervisor's is the backstop

    def too_long(signum: int, frame: Any) -> None:
        raise TookTooLong(f"{header['call_limit']:g}")  # the limit: the referee words it

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
        _start_torch_threads(threads, warm)
        stop(getpid(), signal.SIGSTOP)
        beat()
        calls = [{"inputs": inputs} for inputs in receive(channel, read)]
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
        if (results[-1].get("raised") or {}).get("stopped"):
            break  # the verdict is known: the rest would only wait
    with opener(os.path.join(jobdir, "result.pt"), "wb") as f:
        save({"cells": cells, "results": results}, f)


def _start_torch_threads(threads: Any, warm: Any) -> None:
    """Where the cells asked torch for more than one thread (``torch.set_num_threads(4)``),
    start its pool now, before the stop: torch starts it at its first parallel op, and in a
    timed call the supervisor would count those threads as the answer's new tasks ("started
    a thread or a process"), though the answer itself starts none. Their CPU time is still
    the answer's: the supervisor reads every thread's. ``threads`` and ``warm`` are torch's
    own, taken before any cell ran."""
    try:
        if threads() > 1:
            warm(1 << 18).sum()  # above torch's grain: the op runs on the pool
    except Exception:  # noqa: BLE001 - a pool that cannot start is the timed call's to meet
        pass


_FROMBUFFER = None  # torch.frombuffer, taken by the template before any learner code


def keep_frombuffer() -> None:
    """Called by the template, before any learner code exists: keep torch's own
    ``frombuffer``, so that a job reads its inputs with it even if the cells replace it."""
    global _FROMBUFFER
    import torch

    _FROMBUFFER = torch.frombuffer


def _receive_timing_input(channel: int, read: Any) -> list[list]:
    """The timed calls' inputs: a memory file mapped read-only, its tensors viewed in place."""
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
    calls: list[list[Any]] = []
    for items in meta["calls"]:
        inputs: list[Any] = []
        for item in items:
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
        calls.append(inputs)
    return calls


class TookTooLong(BaseException):
    """A cell or a call ran past the time limit (a BaseException: ``except Exception`` in
    learner code does not swallow it)."""


def _describe(exc: BaseException, fn: Any = None) -> dict:
    """An error as plain data; ``fn``: the learner's function that raised it (None: a cell)."""
    from gather_course._tier import untouched_template  # (imported by the template)

    lines = str(exc).strip().splitlines()
    line, code = 0, ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith("<cell"):
            line, code = frame.lineno or 0, (frame.line or "").strip()
            break
    return {
        "type": type(exc).__name__,
        "message": lines[0][:1000] if lines else "",
        "line": line,
        "code": code,
        # our own alarm, by identity: a learner's exception class of the same name is theirs
        "stopped": type(exc) is TookTooLong,
        "not_implemented": (
            untouched_template(fn, exc)
            if fn is not None
            else type(exc) is NotImplementedError and not lines  # a cell's own bare raise
        ),
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
        raised = _describe(exc, fn)
        if isinstance(exc, Exception) and not raised["not_implemented"]:
            from gather_course.diagnose import gather_failure  # (imported by the template)

            raised["gather"] = gather_failure(fn, inputs)  # which gather rule, if any
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
