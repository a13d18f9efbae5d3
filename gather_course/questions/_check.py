"""Running a learner's function against a question's battery, with tiered feedback.

The tiers, in the order a check looks for them, are :class:`Tier`'s members; the first
failure wins.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from .._answer_api import BANK_NAMES, OUTSIDE, PUBLIC_MODULES
from .._errors import GatherCourseError
from .._i18n import N_, _
from .._opcount import _OpCounter
from .._text import fmt_shape, fmt_value, type_name, wrap
from .._tier import Tier
from ..device import default_device
from ..diagnose import _gather_failure
from ._cases import Case

if TYPE_CHECKING:
    from ._question import Question


# The labels of a result's details, kept in English in the result and shown translated.
_LABELS = (
    N_("case"),
    N_("inputs"),
    N_("where"),
    N_("error"),
    N_("your call"),
    N_("broken rule"),
    N_("fix"),
    N_("first wrong element"),
    N_("expected"),
    N_("got"),
    N_("formula"),
    N_("traced"),
    N_("small input"),
    N_("larger input"),
    N_("shift"),
)

OPS_GROW = N_(  # translated where it is raised: _(OPS_GROW)
    "Your values are right, but the number of tensor operations grows with the input "
    "size, which means a Python loop over elements. Replace the loop by whole-tensor "
    "operations (gather, indexing)."
)

NEVER_RAN = N_(  # the required op never ran: _(NEVER_RAN).format(rule=..., op=...)
    "Your values are right, but this question asks you to use {rule}: your function never "
    "ran `{op}`."
)

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class CheckResult:
    """What ``Question.check`` found. ``passed`` is the verdict; ``bool(result)`` too.

    Renders itself as Markdown in Jupyter; ``str(result)`` is the plain-text version.
    """

    qid: str
    passed: bool
    tier: Tier
    headline: str
    details: list[tuple[str, str]] = field(default_factory=list)
    advice: str = ""
    _pair: tuple[str, Any, Any] | None = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.passed

    @property
    def message(self) -> str:
        return str(self)

    @property
    def _verdict(self) -> str:
        return (
            _("Correct")
            if self.passed
            else _("Not attempted yet")
            if self.tier == Tier.NOT_ATTEMPTED
            else _("Incorrect")
        )

    def __str__(self) -> str:
        mark = "✅" if self.passed else "❌"
        lines = [f"{mark} {self._verdict} ({self.qid}): {self.headline}"]
        lines += [f"  {_(k)}: {_detail(k, v)}" for k, v in self.details]
        if self.advice:  # wrapped: a terminal or nbgrader's Validate dialog does not wrap it
            lines += wrap(self.advice, 92, indent="  ")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        icon = "✅" if self.passed else "❌"
        lines = [f"{icon} **{self._verdict}** (`{self.qid}`): {self.headline}"]
        if self.details:
            lines.append("")
            lines += [f"- **{_(k)}:** {_md_value(_detail(k, v))}" for k, v in self.details]
        if self.advice:
            lines += ["", f"*{self.advice}*"]
        return "\n".join(lines)

    def draw(self, ax: Any = None) -> Any:
        """Draw the expected values next to yours for the failing case (small cases only).

        Returns the matplotlib Figure; wrong cells are marked. ``ax``: two Axes to draw on.
        """
        from .._draw_result import _draw_expected_vs_got

        if self._pair is None:
            raise GatherCourseError(
                _("nothing to draw: draw() shows wrong values, and this result is a pass.")
                if self.passed
                else _(
                    "nothing to draw: draw() shows wrong values, and this result is about "
                    "something else ({tier})."
                ).format(tier=_(self.tier.value))
            )
        name, expected, got = self._pair
        return _draw_expected_vs_got(name, expected, got, ax=ax)

    def assert_passed(self) -> CheckResult:
        """Raise ``AssertionError`` with the full feedback unless the check passed.

        Returns the result itself, so a test cell ending with it shows the verdict. In
        Jupyter the failure shows the verdict alone, without the course's frames.
        """
        if not self.passed:
            raise _CheckFailed(self)
        return self


class _CheckFailed(AssertionError):
    """A failed check: an ``AssertionError`` (nbgrader and pytest see a failure) that IPython
    shows as the verdict alone, not as a traceback through the course's code."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__("\n" + str(result))
        self.result = result

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom tracebacks
        first, *rest = str(self.result).splitlines()
        return [f"\x1b[1;31m{first}\x1b[0m", *rest]


def _detail(key: str, value: str) -> str:
    """A detail's value as shown: a case's label is the bank's text, so it is translated."""
    return _(value) if key in ("case", "values") else value


def _md_value(v: str) -> str:
    code = "\n" not in v and len(v) < 120 and ("[" in v or "=" in v)
    return f"`{v}`" if code and not v.rstrip().endswith((".", "?")) else v


class _Failure(Exception):
    def __init__(
        self,
        tier: str,
        headline: str,
        details: list[tuple[str, str]] | None = None,
        pair: tuple[str, torch.Tensor, torch.Tensor] | None = None,
    ):
        super().__init__(headline)
        self.tier, self.headline, self.details = tier, headline, details or []
        self.pair = pair  # (name, expected, got) of wrong values, for draw()

    def result(self, q: Question) -> CheckResult:
        """The failed CheckResult, with the advice every check and grade gives."""
        advice = (
            ""
            if self.tier == Tier.NOT_ATTEMPTED
            else _("Stuck? exercise({qid!r}).hint() gives a hint.").format(qid=q.qid)
        )
        if self.pair is not None:
            advice += " " + _(
                "`.check({name}).draw()` draws the expected values next to yours."
            ).format(name=q.name)
        return CheckResult(
            q.qid, False, self.tier, self.headline, self.details, advice, _pair=self.pair
        )


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


def _learner_line(exc: BaseException) -> str:
    """The innermost line of the learner's own code in the traceback, if any."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(_PACKAGE_DIR) and "/torch/" not in f.filename
    ]
    if not frames:
        return ""
    f = frames[-1]
    return f"line {f.lineno}: {f.line}" if f.line else f"line {f.lineno}"


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


def _describe(exc: BaseException) -> dict[str, Any]:
    text = str(exc).strip().splitlines()
    return {
        "type": type(exc).__name__,
        "message": text[0] if text else "",
        "where": _learner_line(exc),
        "not_implemented": isinstance(exc, NotImplementedError),
    }


def _outcome(fn: Callable, case: Case) -> Outcome:
    try:
        return Outcome(value=fn(*case.inputs.values()))
    except Exception as exc:  # noqa: BLE001 - any error in learner code is feedback
        error = _describe(exc)
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
    if error.get("type") == "TookTooLong":  # stopped by the grading worker
        raise _Failure(
            Tier.EXCEPTION,
            _("Your function did not finish: {why} (an endless loop?).").format(
                why=error["message"]
            ),
            [("case", case.label), ("inputs", _shapes(case))],
        )
    details = [("case", case.label), ("inputs", _shapes(case))]
    if error.get("where"):
        details.append(("where", error["where"]))
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
        tip = " " + _("Did you forget `return`?") if out is None else ""
        raise _Failure(
            Tier.WRONG_TYPE,
            _("Expected `{name}` to be a torch.Tensor, got {got}.").format(
                name=name, got=type_name(out)
            )
            + tip,
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
            _("Expected `{name}` of shape {want}, got {got}.").format(
                name=name, want=list(exp.shape), got=list(out.shape)
            )
            + _shape_tip(exp.shape, out.shape),
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


# The two shift messages, by (more than one place, forward); the numbers go in with .format.
_SHIFTED = {
    (False, True): N_(
        "Your `{name}` is the expected result shifted by {n} along dim {d}: each value sits "
        "{n} place before where it belongs. An off-by-one in the index?"
    ),
    (True, True): N_(
        "Your `{name}` is the expected result shifted by {n} along dim {d}: each value sits "
        "{n} places before where it belongs. An off-by-one in the index?"
    ),
    (False, False): N_(
        "Your `{name}` is the expected result shifted by {n} along dim {d}: each value sits "
        "{n} place after where it belongs. An off-by-one in the index?"
    ),
    (True, False): N_(
        "Your `{name}` is the expected result shifted by {n} along dim {d}: each value sits "
        "{n} places after where it belongs. An off-by-one in the index?"
    ),
}
_FROM = {
    (False, True): N_(
        "Every wrong value comes from {n} place further along dim {d} of `{name}` than it "
        "should: an off-by-one in the index?"
    ),
    (True, True): N_(
        "Every wrong value comes from {n} places further along dim {d} of `{name}` than it "
        "should: an off-by-one in the index?"
    ),
    (False, False): N_(
        "Every wrong value comes from {n} place earlier along dim {d} of `{name}` than it "
        "should: an off-by-one in the index?"
    ),
    (True, False): N_(
        "Every wrong value comes from {n} places earlier along dim {d} of `{name}` than it "
        "should: an off-by-one in the index?"
    ),
}


def _traced(
    case: Case, name: str, e: torch.Tensor, o: torch.Tensor, bad: torch.Tensor
) -> list[tuple[str, str]]:
    """Where the wrong values came from: a shift of the whole output, or the input elements
    that the first wrong value and its expected value were copied from."""
    shift = _output_shift(e, o)
    if shift:
        d, s = shift
        return [
            (
                "shift",
                _(_SHIFTED[abs(s) > 1, s > 0]).format(name=name, n=abs(s), d=d),
            )
        ]
    sources = {
        k: v.detach().cpu()
        for k, v in case.inputs.items()
        if isinstance(v, torch.Tensor) and v.dim() and v.dtype != torch.bool
    }
    pos = tuple(int(p) for p in bad[0])
    got, want = _source(sources, o[pos]), _source(sources, e[pos])
    if not (got and want):
        return []
    where = f"{name}[{', '.join(map(str, pos))}]"
    out = [
        (
            "traced",
            _("Your {where} equals {got}; expected {want}.").format(
                where=where, got=_at(*got), want=_at(*want)
            ),
        )
    ]
    moves = set()
    for p in bad[:200]:
        p = tuple(int(i) for i in p)
        g, w = _source(sources, o[p]), _source(sources, e[p])
        if not (g and w and g[0] == w[0]):
            return out
        diff = [(d, a - b) for d, (a, b) in enumerate(zip(g[1], w[1])) if a != b]
        moves.add(tuple(diff))
    if len(moves) == 1:
        (move,) = moves
        if len(move) == 1:
            d, s = move[0]
            out.append(
                (
                    "shift",
                    _(_FROM[abs(s) > 1, s > 0]).format(n=abs(s), d=d, name=got[0]),
                )
            )
    return out


def _source(sources: dict[str, torch.Tensor], value: torch.Tensor) -> tuple[str, tuple] | None:
    """The one input element equal to ``value``, if exactly one is (values are copied)."""
    found = None
    for k, v in sources.items():
        if v.dtype != value.dtype:
            continue
        hits = (v == value).nonzero()
        if len(hits) > 1 or (len(hits) == 1 and found):
            return None
        if len(hits) == 1:
            found = (k, tuple(int(i) for i in hits[0]))
    return found


def _at(name: str, pos: tuple) -> str:
    return f"{name}[{', '.join(map(str, pos))}]"


def _output_shift(e: torch.Tensor, o: torch.Tensor) -> tuple[int, int] | None:
    """(dim, s) when ``o[..., i] == e[..., i + s]`` wherever both exist, for a small s."""
    for d in range(e.dim()):
        n = e.shape[d]
        for s in (1, -1, 2, -2):
            if n - abs(s) < 2:
                continue
            a, b = (
                (o.narrow(d, 0, n - s), e.narrow(d, s, n - s))
                if s > 0
                else (o.narrow(d, -s, n + s), e.narrow(d, 0, n + s))
            )
            if (
                a.numel()
                and bool((a == b).all())
                and not bool((a == e.narrow(d, 0 if s > 0 else -s, n - abs(s))).all())
            ):
                return d, s
    return None


def _shape_tip(want: torch.Size, got: torch.Size) -> str:
    if tuple(got) == tuple(want) + (1,):
        return " " + _("It has an extra trailing dim of size 1: a missing .squeeze(-1)?")
    if tuple(got[:-1]) == tuple(want) or (len(got) == len(want) + 1 and 1 in got):
        return " " + _("It has an extra dim of size 1: squeeze it away.")
    if len(got) == len(want) and sorted(got) == sorted(want):
        return " " + _("Same sizes in another order: check which dim you gathered along.")
    return ""


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


# the public modules, the package, and where the public GatherCourseError and Tier live
_PUBLIC_MODULES = {f"gather_course.{m}" for m in (*PUBLIC_MODULES, "_errors", "_tier")}
_PUBLIC_MODULES.add("gather_course")


def _course_internal(fn: Callable) -> str:
    """The first name through which ``fn`` (or a helper of the learner's it calls) reaches
    the course itself, the question bank or a private module, or ''. Grading refuses such
    answers (the sandbox holds the public helpers only); the check says so first too."""
    import types

    from ._question import Question

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
            elif isinstance(obj, Question) or (
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
            Tier.RULES,
            _("Your answer reaches into the course itself: {what} ({where}); {rule}").format(
                what=f"`{reached}`",
                where=_("in your function's code"),
                rule=_(OUTSIDE).format(what=f"`{reached}`"),
            ),
        )


def _check_rules(q: Question, fn: Callable, case: Case) -> None:
    if not (q.forbid or q.require):
        return
    with _OpCounter() as counter:
        _call(fn, case)
    used = [op for op in q.forbid if counter.ops.get(op)]
    if used:
        raise _Failure(
            Tier.RULES,
            _(
                "Your values are right, but this question asks you not to use "
                "{rule}: your function ran `{op}`."
            ).format(rule=q.forbidden_text, op=used[0]),
        )
    missing = [op for op in q.require if not counter.ops.get(op)]
    if missing:
        raise _Failure(
            Tier.RULES,
            _(NEVER_RAN).format(rule=q.required_text, op=missing[0]),
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
        raise _Failure(
            Tier.NOT_VECTORIZED,
            _(OPS_GROW),
            [
                (
                    "small input",
                    _("{shapes}: {n} operations").format(shapes=_shapes(small), n=n_small),
                ),
                (
                    "larger input",
                    _("{shapes}: {n} operations").format(shapes=_shapes(big), n=n_big),
                ),
            ],
        )


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
            judge_case(q, case, outcome)
        _check_rules(q, fn, cases[0])
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
            n=len(cases), labels=", ".join(_(label) for label in labels), devices=", ".join(devices)
        ),
    )
