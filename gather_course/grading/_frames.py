"""What crosses between the referee's side and the worker's processes: framed messages.

A frame is a 4-byte header length, a JSON header, an 8-byte payload length and the payload
bytes. The referee's side (:mod:`._sandbox`) and the worker's three kinds of process
(:mod:`._worker`, :mod:`._job`) speak it over pipes and socket pairs.

>>> r, w = os.pipe(); write_frame(w, {"ready": True}, b"x"); read_frame(r)
({'ready': True}, b'x')
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from enum import Enum

RESULT_CAP = 64 * 2**20  # bytes of results a job may send back: 4x the largest right
# answer on a timing input (16 MiB); a forged result of 240 MB cost the referee 1.2 GiB
HOLD = 4  # timing inputs a worker keeps: as many as an assignment has timed questions


class JobStatus(str, Enum):
    """How a job ended, as the supervisor saw it."""

    OK = "ok"
    TIMEOUT = "timeout"  # past the call or job limit (wall clock), or SIGXCPU
    CPU_LIMIT = "cpu_limit"  # a timing job past its CPU cap: its verdict is known
    NEW_TASKS = "new tasks"  # a thread or process began after the stop: uncountable CPU
    TOO_MUCH_MEMORY = "too much memory"
    TOO_MANY_PROCESSES = "too many processes"
    KILLED = "killed"  # SIGKILL from elsewhere (the kernel's OOM killer, the code itself)
    SIGNAL = "signal"  # another signal (its number in the detail)
    EXIT = "exit"  # a non-zero exit status (in the detail)
    TOO_LARGE = "result too large"  # its results passed RESULT_CAP
    GRADER = "grader"  # the grader's own problem, not the submission's (what, in the detail)


@dataclass(frozen=True)
class Ended:
    """A job's end as it crosses the pipe: ``reply["status"]`` is :meth:`encode`'s text
    (``"ok"``, ``"signal 11"``, ``"grader: the template is gone"``), read back by
    :func:`ended` on the referee's side. The only place either is written.

    >>> ended({"status": Ended(JobStatus.SIGNAL, "11").encode()})
    Ended(status=<JobStatus.SIGNAL: 'signal'>, detail='11')
    """

    status: JobStatus
    detail: str = ""

    def encode(self) -> str:
        if self.status is JobStatus.GRADER:
            return f"grader: {self.detail}"
        return f"{self.status.value} {self.detail}" if self.detail else self.status.value

    def __str__(self) -> str:
        return self.encode()


def ended(reply: dict) -> Ended:
    """How the job of ``reply`` ended (an unknown status is the grader's problem)."""
    text = str(reply.get("status", ""))
    if text.startswith("grader"):
        return Ended(JobStatus.GRADER, text.partition(": ")[2])
    for status in JobStatus:
        if text == status.value:
            return Ended(status)
        if status in (JobStatus.SIGNAL, JobStatus.EXIT) and text.startswith(status.value + " "):
            return Ended(status, text.split(" ", 1)[1])
    return Ended(JobStatus.GRADER, f"an unknown job status {text[:40]!r}")


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
    for data in (struct.pack(">I", len(head)) + head + struct.pack(">Q", len(payload)), payload):
        view = memoryview(data)  # the payload is written as it is, never copied
        while view:
            view = view[os.write(fd, view) :]
