"""One case judged: a learner's outcome (value or error) against the question's loop spec.

The first failure of a case is raised as a :class:`~.verdicts.Failure`, tier by tier: an
error, changed inputs, then the type, shape, dtype, device and values of each output. The
words are :mod:`.verdicts`'; this module only compares. The in-notebook check and the
grader both reach it through :mod:`.steps`; only the grader never runs the learner's
function in its own process.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from .._text import fmt_value, type_name
from .._tier import Tier
from . import verdicts as v
from ._cases import Case
from ._declared import Declared
from ._misconceptions import LIKELY, from_error, named, variant_fix
from ._outcome import Opaque, Outcome, clone
from ._result import FailureKind
from ._tracing import shape_tip, traced

_LIMIT = re.compile(r"[0-9]{1,5}(\.[0-9]{1,3})?")  # the worker's call limit, as it sends it


def _to(value: Any, device: torch.device) -> Any:
    return value.to(device) if isinstance(value, torch.Tensor) else value


def raise_for_error(case: Case, outcome: Outcome, q: Declared | None = None) -> None:
    """The verdict on a call that raised (not attempted, stopped, or an error; ``q``: the
    question, to name the mistake a refused gather shows)."""
    error = outcome.error
    if error is None:
        return
    if error.get("not_implemented"):
        raise v.not_attempted()
    if error.get("stopped"):  # stopped by the grading worker at its limit (its own alarm)
        limit = error["message"]
        raise v.stopped(case, limit if _LIMIT.fullmatch(limit) else None)
    failure = v.raised(case, error)
    if q is not None:
        _name_refused(q, error.get("gather") or [], failure)
    raise failure


def _name_refused(q: Declared, gather: list[str], failure: v.Failure) -> None:
    """The mistake a refused gather shows, and its fix made for the variant where
    diagnose's generic one could mislead."""
    _likely(failure, from_error(q, gather))
    fix = variant_fix(q, gather)
    if fix:
        failure.details = [(k, fix if k == "fix" else value) for k, value in failure.details]


def expected_of(q: Declared, case: Case) -> Any:
    """The loop spec's output on ``case``, on the case's device: computed once per case and
    question (the grader keeps a run's plans, so every student's answer meets the same one).

    >>> from gather_course.questions import exercise
    >>> q = exercise("basics.pick_per_row")
    >>> case = q.build(torch.Generator().manual_seed(0), q.sizes[0])
    >>> expected_of(q, case) is expected_of(q, case)
    True
    """
    key = (q.qid, q.variant_name)
    if key not in case.memo:
        cpu_inputs = {k: _to(clone(x), torch.device("cpu")) for k, x in case.inputs.items()}
        expected = q.spec(*cpu_inputs.values())
        case.memo[key] = (
            tuple(_to(e, case.device) for e in expected)
            if isinstance(expected, tuple)
            else _to(expected, case.device)
        )
    return case.memo[key]


def judge_case(q: Declared, case: Case, outcome: Outcome) -> None:
    """Raise the first failure of one case's outcome: error, changed inputs, type, shape..."""
    expected = expected_of(q, case)
    raise_for_error(case, outcome, q)
    if outcome.after is not None:
        _check_inputs_unchanged(case, dict(zip(case.inputs, outcome.after)))
    names = q.outputs
    if len(names) == 1:
        expected, got_items = (expected,), (outcome.value,)
    else:
        got = outcome.value
        if not isinstance(got, (tuple, list)) or len(got) != len(names):
            raise v.not_a_tuple(case, names, got)
        got_items = tuple(got)
    for which, (name, exp, out) in enumerate(zip(names, expected, got_items)):
        _check_type(case, name, out)
        try:
            _check_tensor(q, case, name, exp, out)
            _check_values(q, case, which, name, exp, out)
        except v.Failure as failure:
            if failure.tier in (Tier.WRONG_SHAPE, Tier.WRONG_DTYPE, Tier.WRONG_VALUES):
                _name_mistake(q, case, which, out, exp, failure)
            raise


def _name_mistake(
    q: Declared, case: Case, which: int, out: torch.Tensor, exp: torch.Tensor, f: v.Failure
) -> None:
    """The known mistake the wrong output matches, if one does: the failure's diagnosis, and
    a detail of its feedback (only on a failing case: it runs the loop spec again)."""
    _likely(f, named(q, case, which, out, exp))


def _likely(failure: v.Failure, found: FailureKind | None) -> None:
    """The named mistake ``found`` (if any) as ``failure``'s diagnosis, and a detail of its
    feedback: the same words in the report's grouping and under the verdict."""
    if found is not None:
        failure.kind = found
        failure.details.append((LIKELY, found.text()))


def _check_type(case: Case, name: str, out: Any) -> None:
    if isinstance(out, Opaque):
        if out.subclass:
            raise v.subclass(case, name, out.text, named=False)
        raise v.not_a_tensor(case, name, out.text)
    if not isinstance(out, torch.Tensor):
        raise v.not_a_tensor(case, name, type_name(out), none=out is None)
    if type(out) is not torch.Tensor:  # a subclass could override == and fake the values
        raise v.subclass(case, name, type(out).__name__)


def _check_tensor(q: Declared, case: Case, name: str, exp: torch.Tensor, out: torch.Tensor) -> None:
    if out.shape != exp.shape:
        raise v.wrong_shape(
            case, name, list(exp.shape), list(out.shape), shape_tip(exp.shape, out.shape)
        )
    allowed = q.dtypes.get(name, (exp.dtype,))
    if out.dtype not in allowed:
        raise v.wrong_dtype(case, name, allowed, out.dtype)
    if out.device != exp.device:
        raise v.wrong_device(case, name, exp.device, out.device)


def _check_values(
    q: Declared, case: Case, which: int, name: str, exp: torch.Tensor, out: torch.Tensor
) -> None:
    if q.verify is not None:
        problem = q.verify(case.inputs, out)
        if problem:
            raise v.wrong_by_rule(case, problem)
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
    came_from, kind = traced(case, name, e, o, bad)
    first = [
        (v.FIRST_WRONG, f"{name}[{', '.join(map(str, pos))}]"),
        ("expected", fmt_value(e[pos])),
        ("got", fmt_value(o[pos])),
        *([("formula", q.formula(case.inputs, which, pos))] if q.formula else []),
        *came_from,
    ]
    count = int((~good).sum())
    raise v.wrong_values(case, name, count, good.numel(), first, (name, e, o), kind)


def _check_inputs_unchanged(case: Case, after: dict[str, Any]) -> None:
    for name, value in case.inputs.items():
        now = after.get(name)
        if isinstance(value, torch.Tensor) and not (
            type(now) is torch.Tensor
            and now.shape == value.shape
            and now.dtype == value.dtype
            and torch.equal(value.cpu(), now.cpu())
        ):
            raise v.mutated(case, name)
