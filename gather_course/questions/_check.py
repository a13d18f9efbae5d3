"""Running a learner's function against a question's battery, in the learner's process.

``exercise(qid).check(fn)`` comes here: seeded cases (the default device too), each judged
by :func:`._judge.judge_case`; then the question's constraints (ops it must or must not run), and
whether the number of tensor operations grows with the input (a Python loop). The tiers,
in the order a check looks for them, are :class:`Tier`'s members; the first failure wins.
Grading judges the same way without running anything here (:mod:`gather_course.grading`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from .._answer_api import BANK_NAMES, OUTSIDE, PUBLIC_MODULES
from .._errors import GatherCourseError
from .._i18n import N_, _, listed
from .._opcount import _OpCounter
from .._text import type_name
from .._tier import Tier
from ..device import default_device
from ._cases import Case
from ._judge import _call, _clone, _outcome, _shapes, judge_case
from ._result import NEVER_RAN, CheckResult, _Failure, operations_grow

if TYPE_CHECKING:
    from ._question import Question


# the public modules, the package, and where the public GatherCourseError and Tier live
_PUBLIC_MODULES = {f"gather_course.{m}" for m in (*PUBLIC_MODULES, "_errors", "_tier")}
_PUBLIC_MODULES.add("gather_course")


def _course_internal(fn: Callable) -> str:
    """The first name through which ``fn`` (or a helper of the learner's it calls) reaches
    the course itself, the question bank or a private module, or ''. Grading refuses such
    answers (the sandbox holds the public helpers only); the check says so first too."""
    import types

    scope = getattr(fn, "__globals__", {})
    todo, seen = [getattr(fn, "__code__", None)], set()
    while todo:
        code = todo.pop()
        if not isinstance(code, types.CodeType) or id(code) in seen:
            continue
        seen.add(id(code))
        for name in code.co_names:
            obj = scope.get(name)
            module = obj.__name__ if isinstance(obj, types.ModuleType) else ""
            home = getattr(obj, "__module__", "") if not module else ""
            if module == "gather_course":
                private = [n for n in code.co_names if n.startswith("_") or n in _BANK_NAMES]
                if private:
                    return f"gather_course.{private[0]}"
            elif module.startswith("gather_course.") and module not in _PUBLIC_MODULES:
                return module
            elif (  # a function, class or object of the course's (a Question too)
                isinstance(home, str)
                and home.startswith("gather_course.")
                and home not in _PUBLIC_MODULES
            ):
                return name
            elif isinstance(obj, types.FunctionType) and obj.__globals__ is scope:
                todo.append(obj.__code__)  # a helper the learner wrote
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return ""


_BANK_NAMES = {"questions", "CheckResult", *BANK_NAMES}


def _check_course_internals(fn: Callable) -> None:
    reached = _course_internal(fn)
    if reached:
        raise _Failure(
            Tier.CONSTRAINTS,
            _("Your answer reaches into the course itself: {what} ({where}); {constraint}").format(
                what=f"`{reached}`",
                where=_("in your function's code"),
                constraint=_(OUTSIDE).format(what=f"`{reached}`"),
            ),
        )


def _check_constraints(q: Question, fn: Callable, case: Case) -> None:
    if not (q.forbid or q.require):
        return
    with _OpCounter() as counter:
        _call(fn, case)
    used = [op for op in q.forbid if counter.ops.get(op)]
    if used:
        raise _Failure(
            Tier.CONSTRAINTS,
            _(
                "Your values are right, but this question asks you not to use "
                "{ops}: your function ran `{op}`."
            ).format(ops=q.forbidden_text, op=used[0]),
        )
    missing = [op for op in q.require if not counter.ops.get(op)]
    if missing:
        raise _Failure(
            Tier.CONSTRAINTS,
            _(NEVER_RAN).format(ops=q.required_text, op=missing[0]),
        )


def _count_ops(fn: Callable, case: Case) -> int:
    with _OpCounter() as counter:
        _call(fn, case)
    return sum(counter.ops.values())


def _check_vectorized(q: Question, fn: Callable, gen: torch.Generator) -> None:
    if not q.vectorized:
        return
    small, big = (q.build(gen, sizes) for sizes in q.scaling)
    n_small, n_big = _count_ops(fn, small), _count_ops(fn, big)
    if n_big > n_small:
        raise operations_grow(_shapes(small), n_small, _shapes(big), n_big)


# Said where a case on the CPU fails on a machine with a GPU: an answer that works only
# there (.cuda(), device="cuda" written in) fails grading, which runs on the CPU.
ON_THE_CPU = N_(
    "runs your function on the CPU, so check tries every case there first, then on {device}."
)


def _about_devices(failure: _Failure) -> bool:
    """Whether a failure is about where tensors are (a wrong device, CUDA named in an error):
    only then is the note on grading's CPU worth a line; otherwise check and grade say the
    same words."""
    text = failure.headline.lower()
    return failure.tier == Tier.WRONG_DEVICE or "cuda" in text or "device" in text


def run_check(q: Question, fn: Any, seed: int, large: bool) -> CheckResult:
    if not callable(fn):
        hint = (
            " "
            + _(
                "It looks like you passed the result of calling your function; pass the "
                "function itself, without parentheses."
            )
            if isinstance(fn, (torch.Tensor, tuple))
            else ""
        )
        raise GatherCourseError(
            _(
                "check() expects your function, e.g. exercise({qid}).check({name}); got {got}."
            ).format(qid=repr(q.qid), name=q.name, got=type_name(fn))
            + hint
        )
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise GatherCourseError(_("seed must be an int, got {got}.").format(got=type_name(seed)))
    gen = torch.Generator().manual_seed(seed)
    cases = [q.build(gen, sizes) for sizes in (q.large_sizes if large else q.sizes)]
    device = default_device()
    if device.type != "cpu":
        cases += [case.on(device) for case in cases[-3:]]
    try:
        _check_course_internals(fn)  # first, as the referee does
        for case in cases:
            inputs = {k: _clone(v) for k, v in case.inputs.items()}
            outcome = _outcome(fn, Case(case.label, inputs))
            outcome.after = tuple(inputs.values())
            try:
                judge_case(q, case, outcome)
            except _Failure as failure:
                if device.type != "cpu" and case.device.type == "cpu" and _about_devices(failure):
                    failure.details.append(("grading", _(ON_THE_CPU).format(device=device.type)))
                raise
        _check_constraints(q, fn, cases[0])
        _check_vectorized(q, fn, gen)
    except _Failure as failure:
        return failure.result(q)
    devices = sorted({str(c.device) for c in cases})
    labels = list(dict.fromkeys(c.label for c in cases))
    return CheckResult(
        q.qid,
        True,
        Tier.PASSED,
        _("All {n} test cases pass ({labels}; on {devices}).").format(
            n=len(cases), labels=listed(_(label) for label in labels), devices=", ".join(devices)
        ),
    )
