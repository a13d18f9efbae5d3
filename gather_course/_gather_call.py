"""What a ``torch.gather(input, dim, index)`` call must satisfy, checked one by one.

(Its rules: the shape rule, index dtype and range, matching dims. Not to be confused with a
question's *constraints*, what an answer must or must not use, which the check and grading
enforce.)
Used by :func:`gather_reference` (to refuse what torch refuses), :func:`diagnose`
(to explain it) and :func:`explain`. The installed torch is the judge: which index
dtypes it accepts is asked of torch itself, once.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import Any

import torch

from ._errors import GatherCourseError
from ._i18n import _
from ._text import fmt_pos, type_name

_INTEGER_DTYPES = (
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.uint16,
    torch.uint32,
    torch.uint64,
)


@dataclass(frozen=True)
class Problem:
    """One broken rule: which rule, what is wrong (with numbers), and a concrete fix."""

    rule: str
    message: str
    fix: str


@functools.cache
def source_position(pos: tuple[int, ...], dim: int, index: torch.Tensor) -> tuple[int, ...]:
    """Where gather reads ``out[pos]``: ``pos`` with coordinate ``dim`` replaced by ``index[pos]``.

    ``dim`` must be non-negative; a 0-d index acts like shape ``[1]``.

    >>> source_position((1, 2), 1, torch.tensor([[0, 0, 3], [1, 4, 0]]))
    (1, 0)
    """
    src = list(pos) if index.dim() else [0]
    src[dim] = int(index[pos])  # the only coordinate that changes
    return tuple(src)


def accepted_index_dtypes() -> tuple[torch.dtype, ...]:
    """The index dtypes the installed torch accepts (torch 2.13: int32 and int64)."""
    ok = []
    for dt in _INTEGER_DTYPES:
        try:
            torch.gather(torch.zeros(2), 0, torch.zeros(1, dtype=dt))
        except (RuntimeError, TypeError):
            continue
        ok.append(dt)
    return tuple(ok)


def _dtype_name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


def as_dim(dim: Any) -> int | None:
    """``dim`` as an int the way torch reads it (ints, 0-d int tensors; not bool)."""
    if isinstance(dim, bool):
        return None
    try:
        return operator.index(dim)
    except TypeError:
        return None


def effective_ndim(t: torch.Tensor) -> int:
    """torch.gather treats a 0-d tensor like a 1-element 1-D tensor."""
    return max(t.dim(), 1)


def _size(t: torch.Tensor, d: int) -> int:
    return t.size(d) if t.dim() else 1


def check_call(input: Any, dim: Any, index: Any) -> tuple[list[Problem], list[str]]:
    """All broken rules of the call (empty when torch.gather accepts it), and notes."""
    problems = _type_problems(input, dim, index)
    if problems:
        return problems, []
    d, nd = as_dim(dim), effective_ndim(input)
    if not -nd <= d < nd:
        return [_dim_problem(input, d, nd)], []
    d %= nd
    if index.numel() == 0:
        note = _(
            "index is empty (shape {shape}), so gather returns an empty "
            "tensor of that shape and torch checks nothing else."
        ).format(shape=list(index.shape))
        return [], [note]
    notes: list[str] = []
    problems += _dtype_problems(index)
    if effective_ndim(index) != nd:
        problems.append(_ndim_problem(input, d, index))
    else:
        problems += _size_problems(input, d, index, notes)
    if index.dtype in _INTEGER_DTYPES:
        problems.extend(_range_problems(input, d, index))
    if index.device != input.device:
        problems.append(
            Problem(
                "device",
                _("input is on {a} but index is on {b}.").format(a=input.device, b=index.device),
                _("move the index: index = index.to(input.device)."),
            )
        )
    return problems, notes


def _type_problems(input: Any, dim: Any, index: Any) -> list[Problem]:
    """Rule 0: tensors for input and index, an int for dim."""
    problems = []
    if not isinstance(input, torch.Tensor):
        problems.append(
            Problem(
                "type",
                _("input must be a torch.Tensor, got {got}.").format(got=type_name(input)),
                _("make it a tensor first, e.g. torch.tensor(values)."),
            )
        )
    if not isinstance(index, torch.Tensor):
        problems.append(
            Problem(
                "type",
                _("index must be a torch.Tensor, got {got}.").format(got=type_name(index)),
                _("make it a tensor first, e.g. torch.tensor(positions) (integers give int64)."),
            )
        )
    if as_dim(dim) is None:
        problems.append(
            Problem(
                "type",
                _("dim must be an int, got {got}.").format(got=type_name(dim)),
                _("pass the dimension number, e.g. dim=1 or dim=-1."),
            )
        )
    return problems


def _dim_problem(input: torch.Tensor, d: int, nd: int) -> Problem:
    fix = (
        _("dimensions are counted from 0, so the last one is dim={last} (or dim=-1).")
        if d == nd
        else _("use a dim in [{lo}, {hi}].")
    ).format(last=nd - 1, lo=-nd, hi=nd - 1)
    return Problem(
        "dim",
        _("dim={d} is out of range: input has {n} dims, so dim must be in [{lo}, {hi}].").format(
            d=d, n=input.dim(), lo=-nd, hi=nd - 1
        ),
        fix,
    )


def _dtype_problems(index: torch.Tensor) -> list[Problem]:
    accepted = accepted_index_dtypes()
    if index.dtype in accepted:
        return []
    names = _(" or ").join(_dtype_name(t) for t in accepted)
    if index.dtype == torch.bool:
        fix = _(
            "a boolean mask is not a list of positions: use mask.nonzero() to get "
            "positions, or input[mask] to select with the mask directly."
        )
    elif index.dtype.is_floating_point:
        fix = _("convert with index.long() (check first that the values are whole numbers).")
    else:
        fix = _("convert with index.long().")
    return [
        Problem(
            "dtype",
            _("index has dtype {got}, but gather needs an integer index of dtype {names}.").format(
                got=_dtype_name(index.dtype), names=names
            ),
            fix,
        )
    ]


def _size_problems(
    input: torch.Tensor, d: int, index: torch.Tensor, notes: list[str]
) -> list[Problem]:
    """Rule 3: in every dim but ``d``, index at most as large as input (smaller: a note)."""
    nd, problems = effective_ndim(input), []
    for i in range(nd):
        if i == d:
            continue
        small, big = _size(index, i), _size(input, i)
        if small > big:
            problems.append(
                Problem(
                    "size",
                    _(
                        "index.size({i}) is {small} but input.size({i}) is {big}: in every "
                        "dim except dim={d}, index may be at most as large as input "
                        "(smaller is fine)."
                    ).format(i=i, small=small, big=big, d=d),
                    _size_fix(input, d, index, i),
                )
            )
    for i in range(nd):
        if i != d and _size(index, i) < _size(input, i):
            small, big = _size(index, i), _size(input, i)
            notes.append(
                _(
                    "index is smaller than input in dim {i} ({small} < {big}): gather reads "
                    "only positions 0..{last} of input there. That is allowed, and a common "
                    "silent bug when index was meant to line up with input."
                ).format(i=i, small=small, big=big, last=small - 1)
            )
    return problems


def ensure_valid(input: Any, dim: Any, index: Any, what: str) -> None:
    """Raise GatherCourseError (``what``, then each broken rule and its fix) unless torch accepts the call."""
    problems, _notes = check_call(input, dim, index)
    if problems:
        lines = "\n".join(
            _("- {message} Fix: {fix}").format(message=p.message, fix=p.fix) for p in problems
        )
        raise GatherCourseError(f"{what}:\n{lines}") from None


def _ndim_problem(input: torch.Tensor, d: int, index: torch.Tensor) -> Problem:
    msg = _("index has {a} dims but input has {b}: gather needs the same number of dims.").format(
        a=index.dim(), b=input.dim()
    )
    if index.dim() < input.dim():
        missing = range(index.dim(), input.dim())
        sizes = [1 if i == d else input.size(i) for i in missing]
        code = "index" + ".unsqueeze(-1)" * len(sizes)
        if any(s != 1 for s in sizes):
            code += ".expand(" + ", ".join(["-1"] * index.dim() + [str(s) for s in sizes]) + ")"
        what = (
            _("one value per position; .squeeze(-1) the result afterwards")
            if all(s == 1 for s in sizes)
            else _("whole slices along the added dims")
        )
        fix = (
            _("add one with {code} ({what}).")
            if len(sizes) == 1
            else _("add {n} with {code} ({what}).")
        ).format(n=len(sizes), code=code, what=what)
    else:
        fix = _(
            "remove the extra dims (index.squeeze(-1) if the last size is 1), or check "
            "that you are gathering from the tensor you meant."
        )
    return Problem("ndim", msg, fix)


def _size_fix(input: torch.Tensor, d: int, index: torch.Tensor, i: int) -> str:
    nd = effective_ndim(input)
    for other in range(nd):
        if other == d:
            continue
        if all(_size(index, j) <= _size(input, j) for j in range(nd) if j != other):
            return _(
                "if you meant to gather along dim {other}, use dim={other}; otherwise "
                "shrink index to at most {n} in dim {i}, e.g. index.narrow({i}, 0, {n})."
            ).format(other=other, n=_size(input, i), i=i)
    return _(
        "shrink index to at most {n} in dim {i}, e.g. index.narrow({i}, 0, {n}), or check "
        "which tensor you are indexing."
    ).format(n=_size(input, i), i=i)


def _range_problems(input: torch.Tensor, d: int, index: torch.Tensor) -> list[Problem]:
    n = _size(input, d)
    values = index.detach().to("cpu", torch.int64)
    bad = (values < 0) | (values >= n)
    count = int(bad.sum())
    if count == 0:
        return []
    first = tuple(int(p) for p in bad.nonzero()[0]) if values.dim() else ()
    v = int(values[first])
    where = f"index{fmt_pos(first)} = {v}"
    msg = (
        _(
            "{where} is out of range: input.size({d}) is {n}, so index values must be in "
            "[0, {last}] ({count} of {total} values are out of range)."
        )
        if n
        else _("{where}, but input.size({d}) is 0: there is nothing to gather there.")
    ).format(where=where, d=d, n=n, last=n - 1, count=count, total=values.numel())
    if v < 0:
        fix = _(
            "gather does not count from the end like Python lists: use index % "
            "{n} if -1 means 'last', or, for padding labels such as -100, replace them "
            "(index.clamp(min=0)) and ignore those outputs afterwards."
        ).format(n=n)
    else:
        top = int(values.max())
        fits = [j for j in range(effective_ndim(input)) if j != d and top < _size(input, j)]
        if fits:
            j, nd = fits[-1], effective_ndim(input)
            fix = _(
                "the values go up to {top}, which would fit dim {j} (size {size}): did you "
                "mean dim={j} (or dim={neg})?"
            ).format(top=top, j=j, size=_size(input, j), neg=j - nd)
        elif int(values.min()) >= 1 and top == n:
            fix = _("the values look 1-based: positions start at 0, so subtract 1.")
        else:
            fix = _("keep every value below {n}, e.g. check how the index was computed.").format(
                n=n
            )
    return [Problem("range", msg, fix)]
