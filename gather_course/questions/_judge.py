"""One case judged: a learner's outcome (value or error) against the question's loop spec.

The first failure of a case is raised as :class:`~._result._Failure`, tier by tier: an
error, changed inputs, then the type, shape, dtype, device and values of each output. The
in-notebook check (:mod:`._check`) and the grader (:mod:`gather_course.grading._referee`)
both judge with :func:`judge_case`; only the grader never runs the learner's function here.
"""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from .._i18n import N_, _
from .._text import fmt_shape, fmt_value, sentences, type_name
from .._tier import Tier, _untouched_template
from ..diagnose import _gather_failure
from ._cases import Case
from ._result import _Failure
from ._tracing import _shape_tip, _traced

if TYPE_CHECKING:
    from ._question import Question

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _clone(value: Any) -> Any:
    """A copy of a tensor with the same strides (a non-contiguous input stays non-contiguous)."""
    if not isinstance(value, torch.Tensor):
        return value
    if 0 in value.stride():  # an expanded view: a plain copy will do
        return value.detach().clone()
    copy = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device=value.device)
    return copy.copy_(value.detach())


def _to(value: Any, device: torch.device) -> Any:
    return value.to(device) if isinstance(value, torch.Tensor) else value


def _shapes(case: Case) -> str:
    return ", ".join(
        f"{k}: {fmt_shape(v) if isinstance(v, torch.Tensor) else repr(v)}"
        for k, v in case.inputs.items()
    )


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


def _where(line: int, code: str) -> str:
    """Where an error happened, in the learner's language: ``line 3: x.gather(...)``."""
    if not line:
        return ""
    return _("line {n}: {code}").format(n=line, code=code) if code else _("line {n}").format(n=line)


@dataclass
class Outcome:
    """One call of a learner's function, as data: what it returned or the error it raised.

    Made in-process by :func:`_outcome` (self-study checks) or by the grading worker
    (``gather-course check`` and ``grade``), and judged the same way by :func:`judge_case`.
    """

    value: Any = None
    error: dict[str, Any] | None = None  # type, message, where, not_implemented
    after: tuple[Any, ...] | None = None  # the inputs after the call
    ops: dict[str, int] | None = None


@dataclass(frozen=True)
class Opaque:
    """A returned value the grading worker could not send back as data (only its type)."""

    text: str
    subclass: bool = False


def _describe(fn: Callable, exc: BaseException) -> dict[str, Any]:
    text = str(exc).strip().splitlines()
    line, code = _learner_line(exc)
    return {
        "type": type(exc).__name__,
        "message": text[0] if text else "",
        "line": line,
        "code": code,
        "not_implemented": _untouched_template(fn, exc),
    }


def _outcome(fn: Callable, case: Case) -> Outcome:
    try:
        return Outcome(value=fn(*case.inputs.values()))
    except Exception as exc:  # noqa: BLE001 - any error in learner code is feedback
        error = _describe(fn, exc)
        if not error["not_implemented"]:  # which rule of gather broke, if one did
            error["gather"] = _gather_failure(fn, [_clone(v) for v in case.inputs.values()])
        return Outcome(error=error)


def _raise_for_error(case: Case, outcome: Outcome) -> None:
    error = outcome.error
    if error is None:
        return
    if error.get("not_implemented"):
        raise _Failure(
            Tier.NOT_ATTEMPTED,
            _(
                "Your function still raises NotImplementedError: "
                "replace the `raise NotImplementedError()` line with your code."
            ),
        )
    if error.get("type") == "TookTooLong":  # stopped by the grading worker at its limit
        limit = error["message"]
        why = (
            _("it ran longer than {limit} s and was stopped").format(limit=limit)
            if re.fullmatch(r"[0-9]{1,5}(\.[0-9]{1,3})?", limit)  # the worker's, as it sends it
            else _("it ran too long and was stopped")
        )
        raise _Failure(
            Tier.EXCEPTION,
            _("Your function did not finish: {why} (an endless loop?).").format(why=why),
            [("case", case.label), ("inputs", _shapes(case))],
        )
    details = [("case", case.label), ("inputs", _shapes(case))]
    where = _where(error.get("line", 0), error.get("code", ""))
    if where:
        details.append(("where", where))
    gather = error.get("gather") or []
    if len(gather) == 3:  # diagnose's verdict on the gather torch refused
        details += [("your call", gather[0]), ("broken rule", gather[1]), ("fix", gather[2])]
    message = error["message"].rstrip()
    message += "" if message.endswith((".", "!", "?", ")")) or not message else "."
    raise _Failure(
        Tier.EXCEPTION,
        (
            _("Your function raised {error}: {message}")
            if message
            else _("Your function raised {error}.")
        ).format(error=error["type"], message=message),
        details,
    )


def _call(fn: Callable, case: Case) -> Any:
    outcome = _outcome(fn, case)
    _raise_for_error(case, outcome)
    return outcome.value


def judge_case(q: Question, case: Case, outcome: Outcome) -> None:
    """Raise the first failure of one case's outcome: error, changed inputs, type, shape..."""
    cpu_inputs = {k: _to(_clone(v), torch.device("cpu")) for k, v in case.inputs.items()}
    expected = q.spec(*cpu_inputs.values())
    expected = (
        tuple(_to(e, case.device) for e in expected)
        if isinstance(expected, tuple)
        else _to(expected, case.device)
    )
    _raise_for_error(case, outcome)
    if outcome.after is not None:
        _check_inputs_unchanged(case, dict(zip(case.inputs, outcome.after)))
    _compare(q, case, expected, outcome.value)


def _compare(q: Question, case: Case, expected: Any, got: Any) -> None:
    names = q.outputs
    if len(names) == 1:
        expected, got_items = (expected,), (got,)
    else:
        if not isinstance(got, (tuple, list)) or len(got) != len(names):
            raise _Failure(
                Tier.WRONG_TYPE,
                _("Expected a tuple of {n} tensors ({names}), got {got}.").format(
                    n=len(names), names=", ".join(names), got=type_name(got)
                ),
                [("case", case.label), ("inputs", _shapes(case))],
            )
        got_items = tuple(got)
    for which, (name, exp, out) in enumerate(zip(names, expected, got_items)):
        _compare_one(q, case, which, name, exp, out)


def _compare_one(
    q: Question, case: Case, which: int, name: str, exp: torch.Tensor, out: Any
) -> None:
    base = [("case", case.label), ("inputs", _shapes(case))]
    if isinstance(out, Opaque):
        if out.subclass:
            raise _Failure(
                Tier.WRONG_TYPE,
                _(
                    "Expected `{name}` to be a plain torch.Tensor, got {got}. "
                    "Return an ordinary tensor."
                ).format(name=name, got=out.text),
                base,
            )
        raise _Failure(
            Tier.WRONG_TYPE,
            _("Expected `{name}` to be a torch.Tensor, got {got}.").format(name=name, got=out.text),
            base,
        )
    if not isinstance(out, torch.Tensor):
        tip = _("Did you forget `return`?") if out is None else ""
        raise _Failure(
            Tier.WRONG_TYPE,
            sentences(
                [
                    _("Expected `{name}` to be a torch.Tensor, got {got}.").format(
                        name=name, got=type_name(out)
                    ),
                    *([tip] if tip else []),
                ]
            ),
            base,
        )
    if type(out) is not torch.Tensor:  # a subclass could override == and fake the values
        raise _Failure(
            Tier.WRONG_TYPE,
            _(
                "Expected `{name}` to be a plain torch.Tensor, got the subclass {got}. "
                "Return an ordinary tensor."
            ).format(name=name, got=type(out).__name__),
            base,
        )
    if out.shape != exp.shape:
        raise _Failure(
            Tier.WRONG_SHAPE,
            sentences(
                [
                    _("Expected `{name}` of shape {want}, got {got}.").format(
                        name=name, want=list(exp.shape), got=list(out.shape)
                    ),
                    *filter(None, [_shape_tip(exp.shape, out.shape)]),
                ]
            ),
            base,
        )
    allowed = q.dtypes.get(name, (exp.dtype,))
    if out.dtype not in allowed:
        want = _(" or ").join(str(d).replace("torch.", "") for d in allowed)
        raise _Failure(
            Tier.WRONG_DTYPE,
            _("Expected `{name}` of dtype {want}, got {got}.").format(
                name=name, want=want, got=str(out.dtype).replace("torch.", "")
            ),
            base,
        )
    if out.device != exp.device:
        raise _Failure(
            Tier.WRONG_DEVICE,
            _(
                "Expected `{name}` on {want} like the inputs, got {got}. "
                "Create new tensors with device=... of an input."
            ).format(name=name, want=exp.device, got=out.device),
            base,
        )
    if q.verify is not None:
        problem = q.verify(case.inputs, out)
        if problem:
            raise _Failure(Tier.WRONG_VALUES, problem[0], base + problem[1])
        return
    e, o = exp.detach().cpu(), out.detach().cpu().to(exp.dtype)  # dtype already accepted
    if e.is_floating_point() or e.is_complex():
        good = torch.isclose(o, e, rtol=q.rtol, atol=q.atol, equal_nan=True)
    else:
        good = o == e
    if bool(good.all()):
        return
    bad = (~good).nonzero()
    pos = tuple(int(p) for p in bad[0]) if bad.numel() else ()
    count, total = int((~good).sum()), good.numel()
    details = (
        base
        + [
            (N_("first wrong element"), f"{name}[{', '.join(map(str, pos))}]"),
            ("expected", fmt_value(e[pos])),
            ("got", fmt_value(o[pos])),
        ]
        + ([("formula", q.formula(case.inputs, which, pos))] if q.formula else [])
    )
    details += _traced(case, name, e, o, bad)
    raise _Failure(
        Tier.WRONG_VALUES,
        _("{count} of the {total} values of `{name}` are wrong.").format(
            count=count, total=total, name=name
        ),
        details,
        pair=(name, e, o),
    )


def _check_inputs_unchanged(case: Case, after: dict[str, Any]) -> None:
    for name, value in case.inputs.items():
        now = after.get(name)
        if isinstance(value, torch.Tensor) and not (
            type(now) is torch.Tensor
            and now.shape == value.shape
            and now.dtype == value.dtype
            and torch.equal(value.cpu(), now.cpu())
        ):
            raise _Failure(
                Tier.MUTATED,
                _(
                    "Your function changed its input `{name}` in place. "
                    "Work on new tensors (e.g. use scatter instead of scatter_, or "
                    "clone first): the caller's data must stay as it was."
                ).format(name=name),
                [("case", case.label), ("inputs", _shapes(case))],
            )
