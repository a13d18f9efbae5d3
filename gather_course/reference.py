"""The formula of ``torch.gather`` as plain loops: the course's teaching text and test oracle."""

from __future__ import annotations

import itertools

import torch

from ._gather_call import effective_ndim, ensure_valid, source_position
from ._i18n import _

__all__ = ["gather_reference"]


def gather_reference(input: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """``torch.gather`` written as the documented formula, one element at a time.

    ``out[i][j][k] = input[i][index[i][j][k]][k]`` for ``dim == 1``: walk over every
    position of ``index``, copy that position, replace its ``dim`` coordinate by the
    index value, and read ``input`` there. The output has ``index``'s shape and
    ``input``'s dtype and device. A call that ``torch.gather`` rejects raises
    :class:`GatherCourseError` naming the broken rule.

    >>> x = torch.tensor([[10, 20, 30], [40, 50, 60]])
    >>> gather_reference(x, 1, torch.tensor([[0, 2], [1, 0]]))
    tensor([[10, 30],
            [50, 40]])
    """
    ensure_valid(input, dim, index, _("torch.gather would reject this call"))
    d = int(dim) % effective_ndim(input)
    source = input.reshape(1) if input.dim() == 0 else input
    out = torch.empty(index.shape, dtype=input.dtype, device=input.device)
    for pos in itertools.product(*(range(s) for s in index.shape)):
        out[pos] = source[source_position(pos, d, index)]  # index[pos] replaces pos[d]
    return out
