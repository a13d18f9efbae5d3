"""Seeded random inputs for the test batteries (always drawn on CPU)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass(frozen=True)
class Case:
    """One test input: a label for the feedback and the arguments, in signature order."""

    label: str
    inputs: dict[str, Any]
    # the loop spec's outputs on these inputs, per question (see _judge.expected_of)
    memo: dict[tuple[str, str], Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def device(self) -> torch.device:
        return next(
            (v.device for v in self.inputs.values() if isinstance(v, torch.Tensor)),
            torch.device("cpu"),
        )

    def on(self, device: torch.device) -> Case:
        moved = {
            k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in self.inputs.items()
        }
        return Case(f"{self.label}, on {device.type}", moved)


def randn(gen: torch.Generator, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=dtype)


def randint(
    gen: torch.Generator, high: int, *shape: int, dtype: torch.dtype = torch.int64
) -> torch.Tensor:
    return torch.randint(0, high, shape, generator=gen, dtype=dtype)


def row_perms(gen: torch.Generator, rows: int, n: int) -> torch.Tensor:
    """``[rows, n]``: each row a random permutation of ``0..n-1``."""
    return torch.argsort(torch.rand(rows, n, generator=gen), dim=1)


def distinct(gen: torch.Generator, *shape: int) -> torch.Tensor:
    """Integer tensor of the given shape whose values are all different."""
    n = 1
    for s in shape:
        n *= s
    return torch.randperm(3 * n + 1, generator=gen)[:n].reshape(shape)


def noncontig(t: torch.Tensor) -> torch.Tensor:
    """The same values, laid out with a stride of 2 in the last dim (not contiguous)."""
    if t.dim() == 0:
        return t
    wide = t.new_zeros(*t.shape[:-1], 2 * t.shape[-1])
    wide[..., ::2] = t
    return wide[..., ::2]


def at(name: str, pos: tuple[int, ...] | list[int]) -> str:
    """``at("x", (1, 3))`` -> ``x[1, 3]``."""
    return f"{name}[{', '.join(str(p) for p in pos)}]"


def gather_inputs(
    gen: torch.Generator,
    shape: tuple[int, ...],
    dim: int,
    index_shape: tuple[int, ...],
    index_dtype: torch.dtype = torch.int64,
    integer_input: bool = False,
    strided: bool = False,
) -> dict[str, Any]:
    """``input``, ``dim`` and a valid ``index`` for ``torch.gather(input, dim, index)``."""
    input = randint(gen, 100, *shape) if integer_input else randn(gen, *shape)
    index = randint(gen, shape[dim], *index_shape, dtype=index_dtype)
    return {"input": noncontig(input) if strided else input, "dim": dim, "index": index}
