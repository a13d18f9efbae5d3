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

RESULT_CAP = 64 * 2**20  # bytes of results a job may send back: 4x the largest right
# answer on a timing input (16 MiB); a forged result of 240 MB cost the referee 1.2 GiB
TOO_LARGE = "result too large"  # the job's status when its results passed RESULT_CAP
HOLD = 4  # timing inputs a worker keeps: as many as an assignment has timed questions


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
