"""Where wrong values came from: a shifted output, or the input elements they were copied
from. Feedback's "traced" and "shift" details, and the tips on a wrong shape.

>>> import torch
>>> _output_shift(torch.tensor([1, 2, 3, 4]), torch.tensor([2, 3, 4, 9]))
(0, 1)
"""

from __future__ import annotations

import torch

from .._i18n import N_, _
from ._cases import Case
from ._result import FailureKind

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


# The class report's short words for the same findings.
_SHIFT_KIND = N_("output shifted by {n} along dim {d} (off by one?)")
_FROM_KIND = N_("values read {n} off along dim {d} of {name} (off by one?)")
_ELSEWHERE = N_("values read from other elements")


def traced(
    case: Case, name: str, e: torch.Tensor, o: torch.Tensor, bad: torch.Tensor
) -> tuple[list[tuple[str, str]], FailureKind | None]:
    """Where the wrong values came from: a shift of the whole output, or the input elements
    that the first wrong value and its expected value were copied from; and that, short,
    for the class report (None: not known)."""
    shift = _output_shift(e, o)
    if shift:
        d, s = shift
        text = _(_SHIFTED[abs(s) > 1, s > 0]).format(name=name, n=abs(s), d=d)
        return [("shift", text)], FailureKind(_SHIFT_KIND, {"n": str(s), "d": str(d)})
    sources = {
        k: v.detach().cpu()
        for k, v in case.inputs.items()
        if isinstance(v, torch.Tensor) and v.dim() and v.dtype != torch.bool
    }
    pos = tuple(int(p) for p in bad[0])
    got, want = _source(sources, o[pos]), _source(sources, e[pos])
    if not (got and want):
        return [], None
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
            return out, FailureKind(_ELSEWHERE)
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
            return out, FailureKind(_FROM_KIND, {"n": str(s), "d": str(d), "name": got[0]})
    return out, FailureKind(_ELSEWHERE)


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


def shape_tip(want: torch.Size, got: torch.Size) -> str:
    """A sentence on what a wrong shape suggests, or '' (joined with ``_text.sentences``)."""
    if tuple(got) == tuple(want) + (1,):
        return _("It has an extra trailing dim of size 1: a missing .squeeze(-1)?")
    if tuple(got[:-1]) == tuple(want) or (len(got) == len(want) + 1 and 1 in got):
        return _("It has an extra dim of size 1: squeeze it away.")
    if len(got) == len(want) and sorted(got) == sorted(want):
        return _("Same sizes in another order: check which dim you gathered along.")
    return ""
