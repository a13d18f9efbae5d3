"""A job's data, both ways: the inputs the referee sends and the results it gets back.

Inputs go as ``torch.save`` payloads (the timing input as raw bytes the worker maps in
place). Results come back as plain data, loaded with ``weights_only=True`` and turned into
:class:`~gather_course.questions._outcome.Outcome` objects, bounded: a learner's exception
message is cut to :data:`MESSAGE_CHARS`, and anything that is not a dense CPU tensor,
number or short sequence of them is described (:class:`Opaque`), never used.
"""

from __future__ import annotations

import io
import threading
from typing import TYPE_CHECKING, Any

import torch

from .._i18n import _
from ..questions import Opaque, Outcome, verdicts
from ._frames import HOLD

if TYPE_CHECKING:
    from ..questions import Question

# Calls per timing run, each on an input of its own (drawn from call_seed(seed, n)): on the
# same input twice, a loop remembered its first answer and paid for one call only (red team,
# 2026-11-25). The second call runs warm, as an answer in a model would.
TIMING_REPEAT = 2


def call_seed(seed: int, n: int) -> int:
    """The seed of timed call ``n``'s input, in a timing run drawn from ``seed``."""
    return seed if n == 0 else (seed * 1_000_003 + n) % 2**63


def _payload(calls: list[dict]) -> bytes:
    buf = io.BytesIO()
    torch.save(calls, buf)
    return buf.getvalue()


_TIMING_BYTES: dict[tuple, tuple[dict, bytes]] = {}
_TIMING_LOCK = threading.Lock()


def _timing_bytes(q: Question, seed: int) -> tuple[dict, bytes]:
    """The timing inputs drawn from ``seed`` (one per timed call), as :func:`_raw_inputs`
    sends them. A grading run gives every student the same ones (and the solution's
    baseline): they are made once, and as many are kept as a worker's supervisor holds
    (``_frames.HOLD``)."""
    key = (q.qid, q.variant_name, seed, repr(q.timing))
    with _TIMING_LOCK:
        if key not in _TIMING_BYTES:
            calls = [
                list(
                    q.build(
                        torch.Generator().manual_seed(call_seed(seed, n)), q.timing or {}
                    ).inputs.values()
                )
                for n in range(TIMING_REPEAT)
            ]
            while len(_TIMING_BYTES) >= HOLD:
                del _TIMING_BYTES[next(iter(_TIMING_BYTES))]
            meta, data = _raw_inputs(calls)
            _TIMING_BYTES[key] = ({**meta, "key": repr(key)}, data)
        return _TIMING_BYTES[key]


def _raw_inputs(calls: list[list[Any]]) -> tuple[dict, bytes]:
    """The timed calls' inputs as raw bytes and what they hold (per call, per argument:
    dtype, shape, offset; numbers as they are): the worker maps them in place, so the job
    is charged nothing for a copy."""
    chunks: list[bytes] = []
    offset = 0
    described = []
    for values in calls:
        items: list[dict] = []
        described.append(items)
        for value in values:
            offset = _add_raw(value, items, chunks, offset)
    return {"calls": described, "size": offset}, b"".join(chunks)


def _add_raw(value: Any, items: list[dict], chunks: list[bytes], offset: int) -> int:
    """Describe ``value`` in ``items`` (its bytes into ``chunks`` at ``offset``): the offset
    after it."""
    if not isinstance(value, torch.Tensor):
        items.append({"value": value})
        return offset
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
    return offset + len(data) + pad


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
    text = " ".join(text[: 4 * n].split())  # (cut first: a job may send a 240 MB string)
    return text if len(text) <= n else text[: n - 1] + "…"


def _text(value: Any, n: int, default: str = "") -> str:
    """A string the job sent, on one line and at most ``n`` characters; anything that is not
    a string (a nested list has no ``str`` that is safe to take) is ``default``."""
    return _cut(value, n) if type(value) is str else default


def _learner_error(e: dict) -> dict:
    """An error the worker described, bounded: type, message, line and its code, not
    implemented."""
    line = e.get("line")
    return {
        "type": _text(e.get("type"), 80, "Error"),
        "message": _text(e.get("message"), MESSAGE_CHARS),
        "line": line if type(line) is int and 0 < line < 10**6 else 0,
        "code": _text(e.get("code"), MESSAGE_CHARS),
        "not_implemented": e.get("not_implemented") is True,
        "stopped": e.get("stopped") is True,  # the job's own alarm (TookTooLong), not a name
    }


def _outcome(raw: Any, cell_error: dict | None = None) -> Outcome:
    if not isinstance(raw, dict):
        return Outcome(
            error={
                "type": "GradingError",
                "message": _(verdicts.NO_RESULT),
                "not_implemented": False,
            }
        )
    if raw.get("missing"):
        if cell_error:  # the cell that should have defined it stopped early: say why
            return Outcome(error=_learner_error(cell_error))
        return Outcome(
            error={
                "type": "NameError",
                "message": _(verdicts.NOT_DEFINED),
                "not_implemented": False,
            }
        )
    if "not_callable" in raw:
        return Outcome(
            error={
                "type": "TypeError",
                "message": _(verdicts.NOT_A_FUNCTION).format(
                    what=_text(raw["not_callable"], 80, "something else")
                ),
                "not_implemented": False,
            }
        )
    if "raised" in raw and isinstance(raw["raised"], dict):
        e = raw["raised"]
        gather = e.get("gather")
        return Outcome(
            error={
                **_learner_error(e),
                "gather": [_text(x, 400) for x in gather[:5]] if type(gather) is list else [],
            }
        )
    after = raw.get("after")
    ops = raw.get("ops") if isinstance(raw.get("ops"), dict) else {}
    return Outcome(
        value=_value(raw.get("value")),
        after=tuple(_value(v) for v in after) if isinstance(after, list) else None,
        ops={k: int(v) for k, v in ops.items() if type(k) is str and type(v) is int},
    )
