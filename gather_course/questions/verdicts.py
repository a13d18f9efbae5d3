"""Every verdict a check or a grade can give, and its words: the one place to change them.

A verdict is a :class:`Failure` (a tier, a headline and details), made here by a small pure
function from plain data: shapes, names, counts, seconds. Nothing here runs an answer or
reads a job's reply. The in-notebook check (:mod:`._check`) and grading's referee
(:mod:`gather_course.grading._referee`) gather the evidence; :mod:`.steps` asks it, step by
step, in one order, and calls these functions: so what ``check`` says is what grading gives.
Change a wording here (then the catalog: ``pybabel extract`` and ``update``, docs/translating.md).

Details are ``(label, value)`` pairs: labels stay English in the result and are shown
translated (``_result._LABELS``); values are worded here, in the learner's language.
"Where wrong values came from" (a shift, the traced input elements) is :mod:`._tracing`'s.

Long on purpose: one idea, the catalogue of every verdict's words, one small function each;
a wording is changed in this one file (issue 51's first walk), so it is not split by step.

>>> f = operations_grow("x: [2, 3]", 4, "x: [8, 3]", 16)
>>> f.tier.value, f.details[1]
('not vectorized', ('larger input', 'x: [8, 3]: 16 operations'))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .._answer_api import OUTSIDE
from .._i18n import N_, _, listed
from .._text import fmt_shape, sentences, type_name
from .._tier import Tier
from ._cases import Case
from ._declared import Declared
from ._evidence import Measurement, Stop, Timed
from ._result import CheckResult, FailureKind, class_without_help

__all__ = [
    "Failure",
    "all_pass",
    "operations_grow",
    "reaches_into_course",
    "shapes",
    "too_slow",
    "unfinished",
]

Details = list[tuple[str, str]]


class Failure(Exception):
    """A verdict against an answer: its tier, headline and details (and, for wrong values,
    the expected and given tensors that ``CheckResult.draw`` shows)."""

    def __init__(
        self,
        tier: Tier,
        headline: str,
        details: Details | None = None,
        pair: tuple[str, torch.Tensor, torch.Tensor] | None = None,
        kind: FailureKind | None = None,
    ):
        super().__init__(headline)
        self.tier, self.headline, self.details = tier, headline, details or []
        self.pair = pair  # (name, expected, got) of wrong values, for draw()
        self.kind = kind  # what went wrong, short, for the class report's counts

    def result(self, q: Declared) -> CheckResult:
        """The failed CheckResult, with the advice every check and grade gives."""
        advice = (
            []
            if self.tier == Tier.NOT_ATTEMPTED or class_without_help()  # no hint to offer
            else [_("Stuck? `{call}.hint()` gives a hint.").format(call=q.call)]
        )
        if self.pair is not None:
            advice.append(
                _("`.check({name}).draw()` draws the expected values next to yours.").format(
                    name=q.name
                )
            )
        practise = q.family is not None or not class_without_help()  # (else: the graded one)
        if (
            self.tier != Tier.NOT_ATTEMPTED
            and q.variant_name == "public"
            and not q.own
            and practise
        ):
            advice.append(  # issue 49: a fresh variant to practise on, for a public question
                _("`{call}.practice()` draws a fresh variant to practise on.").format(call=q.call)
            )
        return CheckResult(
            q.qid,
            False,
            self.tier,
            self.headline,
            self.details,
            tuple(advice),
            _pair=self.pair,
            diagnosis=self.kind,
        )


def shapes(case: Case) -> str:
    """A case's inputs as the details show them: ``x: [2, 3], dim: 1``."""
    return ", ".join(
        f"{k}: {fmt_shape(v) if isinstance(v, torch.Tensor) else repr(v)}"
        for k, v in case.inputs.items()
    )


def _base(case: Case) -> Details:
    return [("case", case.label), ("inputs", shapes(case))]


def all_pass(qid: str, n: int, labels: Sequence[str], devices: str, hidden: int = 0) -> CheckResult:
    """Every case right and every constraint kept; ``hidden``: how many of the ``n`` cases
    were grading's hidden ones (their labels are not listed)."""
    shown = listed(_(label) for label in dict.fromkeys(labels))
    headline = (
        _("All {n} test cases pass ({labels}; and {hidden} hidden cases; on cpu).")
        if hidden
        else _("All {n} test cases pass ({labels}; on {devices}).")
    ).format(n=n, labels=shown, hidden=hidden, devices=devices)
    return CheckResult(qid, True, Tier.PASSED, headline)


# -- one case: its error, its inputs after the call, then each output --------------------------


def not_attempted() -> Failure:
    return Failure(
        Tier.NOT_ATTEMPTED,
        _(
            "Your function still raises NotImplementedError: "
            "replace the `raise NotImplementedError()` line with your code."
        ),
        kind=FailureKind(N_("not attempted")),
    )


def stopped(case: Case, limit: str | None) -> Failure:
    """Grading's worker stopped one call at its limit (``limit``: seconds, if known)."""
    why = (
        _("it ran longer than {limit} s and was stopped").format(limit=limit)
        if limit
        else _("it ran too long and was stopped")
    )
    return Failure(
        Tier.EXCEPTION,
        _("Your function did not finish: {why} (an endless loop?).").format(why=why),
        _base(case),
        kind=FailureKind(N_("did not finish: stopped at the call limit")),
    )


def where(line: int, code: str) -> str:
    """Where an error happened, in the learner's language: ``line 3: x.gather(...)``."""
    if not line:
        return ""
    return _("line {n}: {code}").format(n=line, code=code) if code else _("line {n}").format(n=line)


def raised(case: Case, error: dict[str, Any]) -> Failure:
    """The function raised: ``error`` has its type, message, line and code, and ``gather``,
    diagnose's (call, broken rule, fix) when the error came from a gather call."""
    details = _base(case)
    at = where(error.get("line", 0), error.get("code", ""))
    if at:
        details.append(("where", at))
    gather = error.get("gather") or []
    if len(gather) >= 3:  # diagnose's verdict on the gather torch refused
        details += [("your call", gather[0]), ("broken rule", gather[1]), ("fix", gather[2])]
    message = error["message"].rstrip()
    message += "" if message.endswith((".", "!", "?", ")")) or not message else "."
    return Failure(
        Tier.EXCEPTION,
        (
            _("Your function raised {error}: {message}")
            if message
            else _("Your function raised {error}.")
        ).format(error=error["type"], message=message),
        details,
        kind=_raised_kind(error),
    )


# What grading's job found instead of a call's result: shown as the error's message.
NO_RESULT = N_("no result came back")
NOT_DEFINED = N_("the function is not defined (was its cell deleted or renamed?)")
NOT_A_FUNCTION = N_("it is not a function but {what}")


_RULES = ("type", "dim", "ndim", "size", "range", "dtype", "device")


def _raised_kind(error: dict[str, Any]) -> FailureKind:
    gather = error.get("gather") or []
    if len(gather) >= 4 and gather[3] in _RULES:  # diagnose's rule: dim, size, range...
        rule = gather[3]
        return FailureKind(N_("gather breaks its {rule} rule"), {"rule": rule})
    return FailureKind(N_("raised {error}"), {"error": str(error.get("type", ""))[:80]})


def mutated(case: Case, name: str) -> Failure:
    return Failure(
        Tier.MUTATED,
        _(
            "Your function changed its input `{name}` in place. "
            "Work on new tensors (e.g. use scatter instead of scatter_, or "
            "clone first): the caller's data must stay as it was."
        ).format(name=name),
        _base(case),
        kind=FailureKind(N_("changed its input in place")),
    )


def not_a_tuple(case: Case, names: Sequence[str], got: Any) -> Failure:
    return Failure(
        Tier.WRONG_TYPE,
        _("Expected a tuple of {n} tensors ({names}), got {got}.").format(
            n=len(names), names=", ".join(names), got=type_name(got)
        ),
        _base(case),
        kind=FailureKind(N_("not a tuple of the outputs")),
    )


def not_a_tensor(case: Case, name: str, got: str, *, none: bool = False) -> Failure:
    """``got``: what came back instead, as words (``None``, ``list``...)."""
    tip = _("Did you forget `return`?") if none else ""
    return Failure(
        Tier.WRONG_TYPE,
        sentences(
            [
                _("Expected `{name}` to be a torch.Tensor, got {got}.").format(name=name, got=got),
                *([tip] if tip else []),
            ]
        ),
        _base(case),
        kind=FailureKind(N_("returned None (no return?)") if none else N_("not a tensor")),
    )


def subclass(case: Case, name: str, got: str, *, named: bool = True) -> Failure:
    """A tensor subclass (which could override ``==`` and fake its values)."""
    text = (
        _(
            "Expected `{name}` to be a plain torch.Tensor, got the subclass {got}. "
            "Return an ordinary tensor."
        )
        if named
        else _(
            "Expected `{name}` to be a plain torch.Tensor, got {got}. Return an ordinary tensor."
        )
    )
    return Failure(
        Tier.WRONG_TYPE,
        text.format(name=name, got=got),
        _base(case),
        kind=FailureKind(N_("a tensor subclass")),
    )


def wrong_shape(case: Case, name: str, want: list[int], got: list[int], tip: str) -> Failure:
    return Failure(
        Tier.WRONG_SHAPE,
        sentences(
            [
                _("Expected `{name}` of shape {want}, got {got}.").format(
                    name=name, want=want, got=got
                ),
                *filter(None, [tip]),
            ]
        ),
        _base(case),
        kind=FailureKind(
            N_("shape {got} where {want} is expected"), {"got": str(got), "want": str(want)}
        ),
    )


def wrong_dtype(case: Case, name: str, allowed: Sequence[torch.dtype], got: torch.dtype) -> Failure:
    want = _(" or ").join(str(d).replace("torch.", "") for d in allowed)
    return Failure(
        Tier.WRONG_DTYPE,
        _("Expected `{name}` of dtype {want}, got {got}.").format(
            name=name, want=want, got=str(got).replace("torch.", "")
        ),
        _base(case),
        kind=FailureKind(N_("dtype {got}"), {"got": str(got).replace("torch.", "")}),
    )


def wrong_device(case: Case, name: str, want: torch.device, got: torch.device) -> Failure:
    return Failure(
        Tier.WRONG_DEVICE,
        _(
            "Expected `{name}` on {want} like the inputs, got {got}. "
            "Create new tensors with device=... of an input."
        ).format(name=name, want=want, got=got),
        _base(case),
        kind=FailureKind(N_("on the wrong device")),
    )


def wrong_by_rule(case: Case, problem: tuple[str, Details]) -> Failure:
    """The question's own verifier (several answers are right) found a problem."""
    return Failure(
        Tier.WRONG_VALUES,
        problem[0],
        _base(case) + problem[1],
        kind=FailureKind(N_("wrong values")),
    )


def wrong_values(
    case: Case,
    name: str,
    count: int,
    total: int,
    first: Details,
    pair: tuple[str, torch.Tensor, torch.Tensor],
    kind: FailureKind | None = None,
) -> Failure:
    """``count`` of ``total`` values wrong; ``first``: the first wrong element's details;
    ``kind``: where they came from, when that is known (a shift along a dim)."""
    return Failure(
        Tier.WRONG_VALUES,
        _("{count} of the {total} values of `{name}` are wrong.").format(
            count=count, total=total, name=name
        ),
        _base(case) + first,
        pair=pair,
        kind=kind or FailureKind(N_("wrong values")),
    )


FIRST_WRONG = N_("first wrong element")
_HIDDEN_SHOWN = ("case", "inputs", FIRST_WRONG, "error", "where", "likely mistake")
_HIDDEN_NOTE = (
    N_("values"),
    N_("not shown for hidden cases: make your function right for any input of these shapes"),
)


def hidden(failure: Failure) -> Failure:
    """A failure on one of grading's hidden cases: its shapes and where, not its values."""
    failure.details = [(k, v) for k, v in failure.details if k in _HIDDEN_SHOWN] + [_HIDDEN_NOTE]
    failure.pair = None
    return failure


# Said where a case on the CPU fails on a machine with a GPU: an answer that works only
# there (.cuda(), device="cuda" written in) fails grading, which runs on the CPU.
_ON_THE_CPU = N_(
    "runs your function on the CPU, so check tries every case there first, then on {device}."
)


def graded_on_the_cpu(failure: Failure, device: str) -> Failure:
    """A check on ``device`` failed a CPU case: when the failure is about where tensors are
    (a wrong device, CUDA or a device named in the error), say that grading runs on the CPU;
    otherwise check and grade keep the same words."""
    text = failure.headline.lower()
    if failure.tier == Tier.WRONG_DEVICE or "cuda" in text or "device" in text:
        failure.details.append(("grading", _(_ON_THE_CPU).format(device=device)))
    return failure


# -- the whole answer: the course, the job, the constraints, growth and time -------------------


def reaches_into_course(name: str, where: str) -> Failure:
    """The answer names the course itself (the bank, a private module) at ``where``."""
    what = f"`{name}`"
    return Failure(
        Tier.CONSTRAINTS,
        _("Your answer reaches into the course itself: {what} ({where}); {constraint}").format(
            what=what, where=where, constraint=_(OUTSIDE).format(what=what)
        ),
        kind=FailureKind(N_("reaches into the course")),
    )


_STOP_KINDS = {
    Stop.TIMEOUT: N_("did not finish: stopped at the call limit"),
    Stop.TOO_LARGE: N_("did not finish: returned far too much"),
    Stop.KILLED: N_("did not finish: its process was killed"),
    Stop.ENDED: N_("did not finish: its process ended"),
}


def unfinished(case: Case, stop: Stop, status: str, limit: float, cap_mb: int) -> Failure:
    """The job ended on ``case``; ``status``: how the worker saw it end (shown as is)."""
    if stop is Stop.TIMEOUT:
        why = _("it ran longer than {limit} s (an endless loop?) and was stopped").format(
            limit=f"{limit:g}"
        )
    elif stop is Stop.TOO_LARGE:
        why = _(
            "what it returned came to more than {cap} MB (a far larger tensor than the answer?)"
        ).format(cap=cap_mb)
    elif stop is Stop.KILLED:
        why = _(
            "the process running it was killed (too much memory, or the code ended "
            "its own process: {status})"
        ).format(status=status)
    else:
        why = _("the process running it ended early ({status})").format(status=status)
    return Failure(
        Tier.EXCEPTION,
        _("Your function did not finish: {why}.").format(why=why),
        _base(case),
        kind=FailureKind(_STOP_KINDS[stop]),
    )


def forbidden_ran(forbidden: str, op: str) -> Failure:
    """The check's op counter saw a forbidden op run (``forbidden``: the question's words)."""
    return Failure(
        Tier.CONSTRAINTS,
        _(
            "Your values are right, but this question asks you not to use "
            "{ops}: your function ran `{op}`."
        ).format(ops=forbidden, op=op),
        kind=FailureKind(N_("uses a forbidden op ({op})"), {"op": op}),
    )


def forbidden_in_code(forbidden: str, name: str, where: str) -> Failure:
    """Grading found a forbidden op named in the code the function reaches (or running)."""
    what = _("{name} ({where})").format(name=f"`{name}`", where=where) if where else f"`{name}`"
    return Failure(
        Tier.CONSTRAINTS,
        _(
            "Your values are right, but this question asks you not to use {ops}: "
            "your code uses {what}."
        ).format(ops=forbidden, what=what),
        kind=FailureKind(N_("uses a forbidden op ({op})"), {"op": name}),
    )


def hidden_call(constraint: str, name: str, where: str) -> Failure:
    """The code hides what it calls (a computed name, torch internals, threads...), so a
    constraint on the ops it uses cannot be checked on it."""
    return Failure(
        Tier.CONSTRAINTS,
        _(
            "Your values are right, but this question's constraint ({constraint}) "
            "is checked on the code your function can reach (what it calls, and "
            "every top-level statement of the notebook), which must call torch's "
            "functions by their names: your code uses `{name}` ({where}). Leave out "
            "computed names, torch internals, other libraries, threads and processes."
        ).format(constraint=constraint, name=name, where=where),
        kind=FailureKind(N_("hides what it calls ({name})"), {"name": name}),
    )


def constraint_words(q: Declared) -> str:
    """A question's op constraint, short: ``no gather`` or ``use scatter_add``."""
    if q.forbid:
        return _("no {ops}").format(ops=q.forbidden_text)
    return _("use {ops}").format(ops=q.required_text)


def never_ran(required: str, op: str) -> Failure:
    return Failure(
        Tier.CONSTRAINTS,
        _(
            "Your values are right, but this question asks you to use {ops}: your function "
            "never ran `{op}`."
        ).format(ops=required, op=op),
        kind=FailureKind(N_("never runs the required op ({op})"), {"op": op}),
    )


def operations_grow(small: str, n_small: int, big: str, n_big: int) -> Failure:
    """More tensor operations on a larger input: a Python loop. The two inputs' shapes and
    counts."""
    return Failure(
        Tier.NOT_VECTORIZED,
        _(
            "Your values are right, but the number of tensor operations grows with the input "
            "size, which means a Python loop over elements. Replace the loop by whole-tensor "
            "operations (gather, indexing)."
        ),
        [
            ("small input", _("{shapes}: {n} operations").format(shapes=small, n=n_small)),
            ("larger input", _("{shapes}: {n} operations").format(shapes=big, n=n_big)),
        ],
        kind=FailureKind(N_("not vectorized: a Python loop (operations grow)")),
    )


def sizes_text(sizes: dict[str, Any]) -> str:
    """The large input's sizes: ``B=64, L=2048``."""
    return ", ".join(f"{k}={v}" for k, v in sizes.items() if k != "label")


_LARGE = N_("large input")


def started_tasks(sizes: str) -> Failure:
    return Failure(
        Tier.NOT_VECTORIZED,
        _(
            "Your values are right, but on a large input your function started a "
            "thread or a process. Its CPU time is measured for whole-tensor code in "
            "one thread; write it that way."
        ),
        [(_LARGE, sizes)],
        kind=FailureKind(N_("not vectorized: started a thread or process")),
    )


def stopped_on_large(sizes: str, limit: float) -> Failure:
    return Failure(
        Tier.EXCEPTION,
        _(
            "Your function did not finish on a large input ({size}): it ran longer "
            "than {limit} s and was stopped."
        ).format(size=sizes, limit=f"{limit:g}"),
        kind=FailureKind(N_("did not finish on the large input")),
    )


def failed_on_large(sizes: str) -> Failure:
    return Failure(
        Tier.EXCEPTION,
        _(
            "Your function did not finish on a large input ({size}): it raised an "
            "error or ended its process."
        ).format(size=sizes),
        kind=FailureKind(N_("did not finish on the large input")),
    )


def too_slow(sizes: str, got: Measurement, solution: float, factor: float, calls: int) -> Failure:
    """Past ``factor`` times the course solution's ``solution`` CPU seconds, on ``calls``
    calls of the large input."""
    shown = (
        _("more than {limit} s").format(limit=f"{factor * solution:.2f}")
        if got.how is Timed.OVER_CAP
        else f"{got.cpu:.2f} s"
    )
    return Failure(
        Tier.NOT_VECTORIZED,
        _(
            "Your values are right, but on a large input your "
            "function takes far more CPU time than whole-tensor code, the way a "
            "Python loop over elements does (also over lists or numpy arrays). "
            "Replace the loop by whole-tensor operations (gather, indexing)."
        ),
        [
            (
                _LARGE,
                _("{size}: {time} of CPU for {n} calls").format(size=sizes, time=shown, n=calls),
            ),
            (N_("the course's solution"), f"{solution:.3f} s"),
            (N_("the limit"), f"{factor:.3g} × {solution:.3f} s"),
        ],
        kind=FailureKind(N_("not vectorized: too slow on the large input")),
    )


def raised_on_large(sizes: str, error: str, message: str) -> Failure:
    return Failure(
        Tier.EXCEPTION,
        _("Your function raised an error on a large input ({size}): {error}: {message}").format(
            size=sizes, error=error, message=message
        ),
        kind=FailureKind(N_("raised {error} on the large input"), {"error": error}),
    )


def wrong_on_large(sizes: str) -> Failure:
    return Failure(
        Tier.WRONG_VALUES,
        _(
            "Your function gives wrong values on a large input ({size}), although the "
            "small cases pass."
        ).format(size=sizes),
        kind=FailureKind(N_("wrong values on the large input")),
    )
