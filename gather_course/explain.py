"""The derivation of one output element of a gather, with its numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ._errors import GatherCourseError
from ._gather_call import effective_ndim, ensure_valid, source_position
from ._i18n import _
from ._text import fmt_pos, fmt_value, type_name

__all__ = ["Explanation", "explain"]


@dataclass(frozen=True)
class Explanation:
    """``text`` reads like ``out[1][0] = input[1][index[1][0]] = input[1][1] = 50``."""

    text: str
    value: Any

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        return f"`{self.text}`"


def _position(position: Any, index: torch.Tensor) -> tuple[int, ...]:
    pos = (position,) if isinstance(position, int) and not isinstance(position, bool) else position
    if not isinstance(pos, Sequence) or not all(
        isinstance(p, int) and not isinstance(p, bool) for p in pos
    ):
        raise GatherCourseError(
            _(
                "position must be an int or a tuple of ints (one per dim of index), got {got}."
            ).format(got=type_name(position))
        )
    shape = tuple(index.shape)
    if len(pos) != len(shape) or not all(-s <= p < s for p, s in zip(pos, shape)):
        raise GatherCourseError(
            _(
                "position {pos} is not a position of the output: the output has index's "
                "shape {shape}, so give {n} coordinate(s), each within that size."
            ).format(pos=tuple(pos), shape=list(shape), n=len(shape))
        )
    return tuple(p % s for p, s in zip(pos, shape))


def explain(
    input: torch.Tensor, dim: int, index: torch.Tensor, position: int | Sequence[int]
) -> Explanation:
    """Derive ``out[position]`` of ``torch.gather(input, dim, index)`` step by step.

    >>> x = torch.tensor([[10, 20, 30], [40, 50, 60]])
    >>> explain(x, 1, torch.tensor([[0, 2], [1, 0]]), (1, 0))
    out[1][0] = input[1][index[1][0]] = input[1][1] = 50
    """
    ensure_valid(input, dim, index, _("cannot explain a call torch.gather rejects"))
    pos = _position(position, index)
    d = int(dim) % effective_ndim(input)
    numeric = source_position(pos, d, index)
    symbolic: list[Any] = list(numeric)
    symbolic[d] = f"index{fmt_pos(pos)}"
    source = input.reshape(1) if input.dim() == 0 else input
    value = source[numeric]
    text = (
        f"out{fmt_pos(pos)} = input{fmt_pos(symbolic)} = input{fmt_pos(numeric)} "
        f"= {fmt_value(value)}"
    )
    return Explanation(text, value.item())
