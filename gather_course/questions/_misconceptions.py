"""Which known mistake a wrong answer's output matches: the misconception, named once.

On a failing case only, the referee side computes the outputs a typical mistake would give
from the question's own loop spec with changed inputs (an index one off, either way), or
from another variant's spec on the same inputs (the other axis, counting from the other end,
another layout, the public question's answer), or from the expected output itself (a loop
that filled only its first part, a gather whose index was not expanded), and compares them
with the learner's. Nothing here runs an answer. The feedback's "likely mistake" detail and
the class report's "what went wrong" use the same names (:data:`NAMES`); an output that
matches none is "other" and keeps its rule.

>>> from gather_course import exercise
>>> q = exercise("basics.pick_per_row")
>>> case = q.build(torch.Generator().manual_seed(0), q.sizes[0])
>>> x, cols = case.inputs.values()
>>> rows = torch.arange(len(x))[:, None]
>>> named(q, case, 0, x[rows, cols - 1], q.spec(x, cols)).template  # a - 1 too many
'off by one'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import torch

from .._i18n import N_, _
from ._cases import Case
from ._declared import Declared
from ._knobs import COUNTING_NOTE, Family, Variant
from ._outcome import clone
from ._result import FailureKind

OFF_BY_ONE = N_("off by one")
WRONG_END = N_("counts from the wrong end")
OTHER_AXIS = N_("gathers along the wrong dim (the other axis or layout)")
LOG_OR_PROB = N_("probabilities and log-probabilities mixed up")
SIZE_ONE_DIM = N_("a size-1 dim kept or dropped by mistake")
PUBLIC_ANSWER = N_("the public question's answer")
OTHER_VARIANT = N_("the answer for {variant}")
NOT_EXPANDED = N_("index not expanded (forgotten expand)")
NOT_UNSQUEEZED = N_("index not unsqueezed (forgotten unsqueeze)")
NEGATIVE = N_("negative positions or padding labels in the index")
PARTIAL = N_("a loop's partial result (stopped early)")
NAMES = (
    OFF_BY_ONE,
    WRONG_END,
    OTHER_AXIS,
    LOG_OR_PROB,
    SIZE_ONE_DIM,
    PUBLIC_ANSWER,
    OTHER_VARIANT,
    NOT_EXPANDED,
    NOT_UNSQUEEZED,
    NEGATIVE,
    PARTIAL,
)
LIKELY = N_("likely mistake")  # the detail's label

# A refused gather's fix, made from the variant where diagnose's could mislead: its "index %
# n" or "subtract 1" is right for one way of counting and wrong for another, its "did you
# mean dim=j" for one layout (tests/test_misconceptions.py applies every fix shown).
_COUNTING_FIX = N_(
    "gather takes positions from 0 to {last} along dim {d}. {note} Turn each entry of "
    "`{idx}` into that position before gathering (off by one, or counted from the other end?)."
)
_ZERO_NOTE = N_("`{idx}` counts from 0: 0 is the first.")
_LAYOUT_FIX = N_(
    "find the dim of the input, in your variant's layout, that the entries of the index "
    "count along: that is the dim to gather along."
)

_KNOB_NAMES = {"axis": OTHER_AXIS, "layout": OTHER_AXIS, "what": LOG_OR_PROB}
_KNOB_NAMES["keepdim"] = SIZE_ONE_DIM
_OFF_BY_ONE_PAIRS = ({"zero", "one"}, {"end", "end1"})
_BUILT: dict[tuple[str, str], Variant] = {}


def knob_mistake(knob: str, mine: str, theirs: str) -> str:
    """The name of the mistake that gives the answer of ``knob=theirs`` instead of ``mine``."""
    if knob == "counting":
        return OFF_BY_ONE if {mine, theirs} in _OFF_BY_ONE_PAIRS else WRONG_END
    return _KNOB_NAMES.get(knob, OTHER_VARIANT)


def variant_mistakes(family: Family, mine: dict[str, str], theirs: dict[str, str]) -> list[str]:
    """The named mistakes that turn the answer of variant ``mine`` into ``theirs``'s: one per
    knob they differ in (the copy report's measure of how far apart two variants are)."""
    return [knob_mistake(k, mine[k], theirs[k]) for k in family.knobs if mine[k] != theirs[k]]


def is_misconception(template: str) -> bool:
    """Whether a diagnosis's template is one of the named misconceptions."""
    return template in NAMES


def named(
    q: Declared, case: Case, which: int, got: torch.Tensor, expected: torch.Tensor
) -> FailureKind | None:
    """The first known mistake whose output on ``case`` equals ``got`` (output ``which``;
    ``expected``: the right one). Each mistake's output is kept in the case's memo, so a
    class graded on the same cases computes it once."""
    got, expected = got.detach().cpu(), expected.detach().cpu()
    for strict in (True, False):  # first with the same dtype, then cast
        for diagnosis, key, make in _candidates(q, case):
            memo = (q.qid, f"{q.variant_name} -> {key}")
            if memo not in case.memo:
                inputs = {k: _cpu(x) for k, x in case.inputs.items()}
                case.memo[memo] = _run(make, inputs)
            wrong = _pick(case.memo[memo], which)
            if _same(q, wrong, got, strict) and not _same(q, wrong, expected, strict):
                return diagnosis
    if _same(q, _first_slices(expected), got):
        return FailureKind(NOT_EXPANDED)
    return FailureKind(PARTIAL) if _partial(q, expected, got) else None


def from_error(q: Declared, gather: list[str]) -> FailureKind | None:
    """The known mistake a gather that torch refused shows: ``gather`` is diagnose's
    ``[call, message, fix, rule, numbers]`` (:func:`gather_course.diagnose.gather_failure`),
    plain data from the job, read as hostile."""
    if len(gather) < 5 or not _NUMBERS.fullmatch(gather[4]):
        return None
    rule, (index_dims, low, high, d, *shape) = gather[3], map(int, gather[4].split())
    dims = q.family is not None and bool({"axis", "layout"} & set(q.family.knobs))
    if rule == "ndim" and index_dims < len(shape):
        return FailureKind(NOT_UNSQUEEZED)
    if rule in ("dim", "size") and dims:
        return FailureKind(OTHER_AXIS)
    if rule != "range" or not 0 <= d < len(shape):
        return None
    size = shape[d]
    if high == size and low >= 1:
        return FailureKind(OFF_BY_ONE)  # counted from 1
    if high >= size and any(high < n for j, n in enumerate(shape) if j != d):
        return FailureKind(OTHER_AXIS)
    if high == size or (low == -1 and high < size - 1):
        return FailureKind(OFF_BY_ONE)
    return FailureKind(NEGATIVE) if low < 0 else None


def variant_fix(q: Declared, gather: list[str]) -> str | None:
    """The fix to show for a gather torch refused, made from ``q``'s variant where
    diagnose's generic one depends on how the index counts or how the input is laid out
    (None: diagnose's fix holds). ``gather``: as :func:`from_error` reads it."""
    if q.family is None or q.shown is None or len(gather) < 5:
        return None
    if not _NUMBERS.fullmatch(gather[4]):
        return None
    rule, (_dims, low, high, d, *shape) = gather[3], map(int, gather[4].split())
    size = shape[d] if 0 <= d < len(shape) else 0
    knobs, values = q.family.knobs, q.shown.values()
    counted = high == size or -size <= low < 0  # one past the end, or Python's negatives
    other_dim = high >= size and any(high < n for j, n in enumerate(shape) if j != d)
    if "layout" in knobs and (rule in ("dim", "size") or (rule == "range" and other_dim)):
        text = _(_LAYOUT_FIX)  # "dim=j" would leave the rest of the layout as it was
        return text[:1].upper() + text[1:]
    if "counting" in knobs and rule == "range" and counted and "idx" in values:
        note = COUNTING_NOTE[q.params["counting"]] or _ZERO_NOTE
        text = _(_COUNTING_FIX).format(
            last=size - 1, d=d, note=_(note).format(**values), idx=values["idx"]
        )
        return text[:1].upper() + text[1:]
    return None


_NUMBERS = re.compile(r"-?[0-9]{1,12}( -?[0-9]{1,12}){4,12}")


def _partial(q: Declared, expected: torch.Tensor, got: torch.Tensor) -> bool:
    """Right in its first rows (dim 0), and one value (what the output was filled with) in
    every row after: a loop that returned or stopped early."""
    if expected.dim() < 1 or got.shape != expected.shape or expected.shape[0] < 2:
        return False
    right = [_same(q, got[i], expected[i]) for i in range(expected.shape[0])]
    k = right.index(False) if False in right else len(right)
    rest = got[k:]
    return 0 < k < len(right) and not any(right[k:]) and bool((rest == rest.flatten()[0]).all())


def _candidates(q: Declared, case: Case) -> Iterator[tuple[FailureKind, str, Callable[..., Any]]]:
    """(the mistake, a key for the case's memo, what computes its output) for each one."""
    for at, (name, x) in enumerate(case.inputs.items()):  # an index one off, either way
        if isinstance(x, torch.Tensor) and x.dim() and not _float_or_bool(x):
            for s in (1, -1):
                yield FailureKind(OFF_BY_ONE), f"{name}{s:+d}", _shifted(q.spec, at, s)
    yield from _siblings(q)


def _siblings(q: Declared) -> Iterator[tuple[FailureKind, str, Callable[..., Any]]]:
    """Every other variant's spec, named by how its choices differ from ``q``'s."""
    public = q.public_spec or (q.spec if q.variant_name == "public" else None)
    if q.family is None or public is None:
        return
    mine = q.params
    for params in sorted(q.family.every(), key=lambda p: len(variant_mistakes(q.family, mine, p))):
        changed = variant_mistakes(q.family, mine, params)
        if not changed:
            continue
        name = q.family.name(params)
        if len(changed) == 1:
            knob = next(k for k in mine if mine[k] != params[k])
            args = {"variant": f"{knob}={params[knob]}"} if changed[0] == OTHER_VARIANT else {}
            found = FailureKind(changed[0], args)
        elif params == q.family.public:
            found = FailureKind(PUBLIC_ANSWER)
        else:
            found = FailureKind(OTHER_VARIANT, {"variant": name})
        yield found, name, _variant_spec(q.qid, q.family, params, public)


def _variant_spec(
    qid: str, family: Family, params: dict[str, str], public: Callable[..., Any]
) -> Callable[..., Any]:
    key = (qid, family.name(params))
    if key not in _BUILT:
        _BUILT[key] = family.build(params)
    v = _BUILT[key]
    loop = v.spec or public

    def spec(*values: Any) -> Any:
        return v.from_public(loop(*v.to_public(dict(zip(v.args, values))).values()))

    return spec


def _shifted(spec: Callable[..., Any], at: int, s: int) -> Callable[..., Any]:
    def shifted(*values: Any) -> Any:
        values = list(values)
        values[at] = values[at] + s
        return spec(*values)

    return shifted


def _first_slices(expected: torch.Tensor) -> torch.Tensor | None:
    """What a gather with a size-1 index dim gives: the first slice along the last dim."""
    if expected.dim() < 2 or expected.shape[-1] < 2:
        return None
    return expected.narrow(-1, 0, 1)


def _run(fn: Callable[..., Any], inputs: dict[str, Any]) -> Any:
    try:
        return fn(*(clone(x) for x in inputs.values()))
    except Exception:  # noqa: BLE001 - a mistake that cannot run on these inputs is no match
        return None


def _cpu(x: Any) -> Any:
    return x.cpu() if isinstance(x, torch.Tensor) else x


def _pick(value: Any, which: int) -> Any:
    return value[which] if isinstance(value, (tuple, list)) and len(value) > which else value


def _float_or_bool(x: torch.Tensor) -> bool:
    return x.is_floating_point() or x.is_complex() or x.dtype == torch.bool


def _same(q: Declared, a: Any, b: torch.Tensor, strict: bool = False) -> bool:
    """Whether ``a`` (a mistake's output) equals ``b``; ``strict``: in the same dtype."""
    if not isinstance(a, torch.Tensor) or a.shape != b.shape or (strict and a.dtype != b.dtype):
        return False
    a, b = a.detach().cpu(), b.to(a.dtype) if b.dtype != a.dtype else b
    if a.is_floating_point() or a.is_complex():
        return bool(torch.isclose(b, a, rtol=q.rtol, atol=q.atol, equal_nan=True).all())
    return bool((a == b).all())
