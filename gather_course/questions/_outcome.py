"""One call of a learner's function, as data: what it returned, or the error it raised.

The in-notebook check makes an :class:`Outcome` here, by calling the function in the
learner's own process (:func:`call`); grading's worker makes the same data in its sandbox
(:mod:`gather_course.grading._jobdata` reads it back). Either way
:func:`._judge.judge_case` judges it.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .._tier import untouched_template
from ..diagnose import gather_failure
from ._cases import Case

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Outcome:
    """One call of a learner's function, as data: what it returned or the error it raised."""

    value: Any = None
    error: dict[str, Any] | None = None  # type, message, line, code, not_implemented, gather
    after: tuple[Any, ...] | None = None  # the inputs after the call
    ops: dict[str, int] | None = None


@dataclass(frozen=True)
class Opaque:
    """A returned value the grading worker could not send back as data (only its type)."""

    text: str
    subclass: bool = False


def clone(value: Any) -> Any:
    """A copy of a tensor with the same strides (a non-contiguous input stays non-contiguous)."""
    if not isinstance(value, torch.Tensor):
        return value
    if 0 in value.stride():  # an expanded view: a plain copy will do
        return value.detach().clone()
    copy = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device=value.device)
    return copy.copy_(value.detach())


def _learner_line(exc: BaseException) -> tuple[int, str]:
    """The innermost line of the learner's own code in the traceback: (number, text), or
    (0, "") when there is none."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(_PACKAGE_DIR) and "/torch/" not in f.filename
    ]
    if not frames:
        return 0, ""
    return frames[-1].lineno or 0, (frames[-1].line or "").strip()


def _describe(fn: Callable, exc: BaseException) -> dict[str, Any]:
    text = str(exc).strip().splitlines()
    line, code = _learner_line(exc)
    return {
        "type": type(exc).__name__,
        "message": text[0] if text else "",
        "line": line,
        "code": code,
        "not_implemented": untouched_template(fn, exc),
    }


def call(fn: Callable, case: Case) -> Outcome:
    """``fn`` called on the case's inputs, here: its value, or its error as data (and which
    rule of gather broke, when one did)."""
    try:
        return Outcome(value=fn(*case.inputs.values()))
    except Exception as exc:  # noqa: BLE001 - any error in learner code is feedback
        error = _describe(fn, exc)
        if not error["not_implemented"]:  # which rule of gather broke, if one did
            error["gather"] = gather_failure(fn, [clone(v) for v in case.inputs.values()])
        return Outcome(error=error)
