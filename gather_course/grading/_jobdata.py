"""A job's data, both ways: the inputs the referee sends and the results it gets back.

Inputs go as ``torch.save`` payloads (the timing input as raw bytes the worker maps in
place). Results come back as plain data, loaded with ``weights_only=True`` and turned into
:class:`~gather_course.questions._judge.Outcome` objects, bounded: a learner's exception
message is cut to :data:`MESSAGE_CHARS`, and anything that is not a dense CPU tensor,
number or short sequence of them is described (:class:`Opaque`), never used.
"""

from __future__ import annotations

import io
import threading
from typing import TYPE_CHECKING, Any

import torch

from .._i18n import _
from ..questions._judge import Opaque, Outcome
from ._frames import HOLD

if TYPE_CHECKING:
    from ..questions._question import Question

TIMING_REPEAT = 2  # calls per timing run


def _payload(calls: list[dict]) -> bytes:
    buf = io.BytesIO()
    torch.save(calls, buf)
    return buf.getvalue()


_TIMING_BYTES: dict[tuple, tuple[dict, bytes]] = {}
_TIMING_LOCK = threading.Lock()


def _timing_bytes(q: Question, seed: int) -> tuple[dict, bytes]:
    """The timing input drawn from ``seed``, as :func:`_raw_inputs` sends it. A grading run
    gives every student the same one (and the solution's baseline): it is made once, and
    as many are kept as a worker's supervisor holds (``_frames.HOLD``)."""
    key = (q.qid, q.variant_name, seed, repr(q.timing))
    with _TIMING_LOCK:
        if key not in _TIMING_BYTES:
            case = q.build(torch.Generator().manual_seed(seed), q.timing or {})
            while len(_TIMING_BYTES) >= HOLD:
                del _TIMING_BYTES[next(iter(_TIMING_BYTES))]
            meta, data = _raw_inputs(list(case.inputs.values()), TIMING_REPEAT)
            _TIMING_BYTES[key] = ({**meta, "key": repr(key)}, data)
        return _TIMING_BYTES[key]


def _raw_inputs(values: list[Any], repeat: int) -> tuple[dict, bytes]:
    """The timing input as raw bytes and what they hold (dtype, shape, offset; numbers as
    they are): the worker maps them in place, so the job is charged nothing for a copy."""
    items: list[dict] = []
    chunks: list[bytes] = []
    offset = 0
    for value in values:
        if not isinstance(value, torch.Tensor):
            items.append({"value": value})
            continue
        flat = value.detach().cpu().contiguous().reshape(-1)
        data = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
        items.append(
            {
                "dtype": str(flat.dtype).removeprefix("torch."),
                "shape": list(value.shape),
                "offset": offset,
            }
        )
        pad = -len(data) % 64  # each tensor starts aligned
        chunks += [data, b"\0" * pad]
        offset += len(data) + pad
    return {"inputs": items, "repeat": repeat, "size": offset}, b"".join(chunks)


def _load(data: bytes) -> dict:
    if not data:
        return {}
    try:
        loaded = torch.load(io.BytesIO(data), weights_only=True)
    except Exception:  # noqa: BLE001 - whatever the worker sent that is not plain data
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _value(plain: Any, depth: int = 0) -> Any:
    """A returned value as the worker sent it, turned back into tensors, tuples and Opaques.

    Only what the referee can compare safely comes back as itself: dense CPU tensors, short
    tuples and lists of them, numbers. Anything else (a sparse or quantized tensor, deep
    nesting) is described, never used.
    """
    if isinstance(plain, dict):
        items = plain.get("sequence")
        if isinstance(items, list) and depth < 3 and len(items) <= 16:
            values = [_value(v, depth + 1) for v in items]
            return tuple(values) if plain.get("kind") == "tuple" else values
        return Opaque(
            str(plain.get("opaque", _("an unknown object")))[:80], bool(plain.get("subclass"))
        )
    if type(plain) is torch.Tensor:
        if (
            plain.layout != torch.strided
            or plain.is_quantized
            or plain.is_nested
            or plain.device.type != "cpu"
        ):
            return Opaque(f"a {plain.layout} tensor".replace("torch.", ""), False)
        return plain
    if plain is None or type(plain) in (bool, int, float):
        return plain
    return Opaque(type(plain).__name__)


MESSAGE_CHARS = 240  # of a learner's exception message shown in feedback


def _cut(text: str, n: int) -> str:
    """``text`` on one line, at most ``n`` characters (an exception is feedback, not a channel)."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _learner_error(e: dict) -> dict:
    """An error the worker described, bounded: type, message, line and its code, not
    implemented."""
    line = e.get("line")
    return {
        "type": str(e.get("type", "Error"))[:80],
        "message": _cut(str(e.get("message", "")), MESSAGE_CHARS),
        "line": line if type(line) is int and 0 < line < 10**6 else 0,
        "code": _cut(str(e.get("code", "")), MESSAGE_CHARS),
        "not_implemented": bool(e.get("not_implemented")),
    }


def _outcome(raw: Any, cell_error: dict | None = None) -> Outcome:
    if not isinstance(raw, dict):
        return Outcome(
            error={
                "type": "GradingError",
                "message": _("no result came back"),
                "not_implemented": False,
            }
        )
    if raw.get("missing"):
        if cell_error:  # the cell that should have defined it stopped early: say why
            return Outcome(error=_learner_error(cell_error))
        return Outcome(
            error={
                "type": "NameError",
                "message": _("the function is not defined (was its cell deleted or renamed?)"),
                "not_implemented": False,
            }
        )
    if "not_callable" in raw:
        return Outcome(
            error={
                "type": "TypeError",
                "message": _("it is not a function but {what}").format(what=raw["not_callable"]),
                "not_implemented": False,
            }
        )
    if "raised" in raw and isinstance(raw["raised"], dict):
        e = raw["raised"]
        gather = e.get("gather")
        return Outcome(
            error={
                **_learner_error(e),
                "gather": [str(x)[:400] for x in gather[:3]] if isinstance(gather, list) else [],
            }
        )
    after = raw.get("after")
    ops = raw.get("ops") if isinstance(raw.get("ops"), dict) else {}
    return Outcome(
        value=_value(raw.get("value")),
        after=tuple(_value(v) for v in after) if isinstance(after, list) else None,
        ops={str(k): int(v) for k, v in ops.items() if isinstance(v, int)},
    )
