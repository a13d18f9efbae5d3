"""Running a learner's function against a question's battery, in the learner's process.

``exercise(qid).check(fn)`` comes here. It gathers the evidence (seeded cases, the default
device's too; the ops the function runs; how their number grows with the input) by calling
the function here, and :func:`.steps.judge` decides in the order every verdict follows.
Grading judges with the same steps without running anything in its own process
(:mod:`gather_course.grading._referee`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from .._answer_api import BANK_NAMES, PUBLIC_MODULES
from .._errors import GatherCourseError
from .._i18n import _
from .._opcount import OpCounter
from .._text import sentences, type_name
from ..device import default_device
from ._cases import Case
from ._declared import Declared
from ._evidence import Constraints, Evidence, Growth, Seen, Summary
from ._judge import raise_for_error
from ._outcome import call, clone
from ._result import CheckResult
from .steps import judge
from .verdicts import shapes

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


def _count_ops(fn: Callable, case: Case) -> dict[str, int]:
    with OpCounter() as counter:
        outcome = call(fn, case)
    raise_for_error(case, outcome)
    return dict(counter.ops)


class _InProcess(Evidence):
    """The evidence of a check: the learner's function called here, case by case (on the
    CPU, then on the default device too when it is another)."""

    def __init__(self, q: Declared, fn: Callable, gen: torch.Generator, cases: list[Case]):
        self.q, self.fn, self.gen, self.cases = q, fn, gen, cases
        self.device = default_device()

    def reached(self) -> tuple[str, str] | None:
        reached = _course_internal(self.fn)
        return (reached, _("in your function's code")) if reached else None

    def seen(self) -> Iterator[Seen]:
        other = self.device.type if self.device.type != "cpu" else ""
        for case in self.cases:
            inputs = {k: clone(x) for k, x in case.inputs.items()}
            outcome = call(self.fn, Case(case.label, inputs))
            outcome.after = tuple(inputs.values())
            on_cpu = case.device.type == "cpu"
            yield Seen(case, outcome, checked_on=other if on_cpu else "")

    def constraints(self) -> Constraints:
        ran = _count_ops(self.fn, self.cases[0])
        used = [op for op in self.q.forbid if ran.get(op)]
        missing = [op for op in self.q.require if not ran.get(op)]
        return Constraints(
            forbidden_ran=used[0] if used else "", never_ran=missing[0] if missing else ""
        )

    def growth(self) -> Growth:
        small, big = (self.q.build(self.gen, sizes) for sizes in self.q.scaling)
        n_small = sum(_count_ops(self.fn, small).values())
        n_big = sum(_count_ops(self.fn, big).values())
        return Growth(shapes(small), n_small, shapes(big), n_big)

    def summary(self) -> Summary:
        devices = ", ".join(sorted({str(c.device) for c in self.cases}))
        return Summary(len(self.cases), [c.label for c in self.cases], devices)


def run_check(q: Declared, fn: Any, seed: int, large: bool) -> CheckResult:
    if not callable(fn):
        hint = (
            _(
                "It looks like you passed the result of calling your function; pass the "
                "function itself, without parentheses."
            )
            if isinstance(fn, (torch.Tensor, tuple))
            else ""
        )
        expects = _(
            "check() expects your function, e.g. exercise({qid}).check({name}); got {got}."
        ).format(qid=repr(q.qid), name=q.name, got=type_name(fn))
        raise GatherCourseError(sentences([expects, hint] if hint else [expects]))
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise GatherCourseError(_("seed must be an int, got {got}.").format(got=type_name(seed)))
    gen = torch.Generator().manual_seed(seed)
    cases = [q.build(gen, sizes) for sizes in (q.large_sizes if large else q.sizes)]
    device = default_device()
    if device.type != "cpu":
        cases += [case.on(device) for case in cases[-3:]]
    return judge(q, _InProcess(q, fn, gen, cases))
