"""Answers that hold on any device, proven on a machine without one.

On CUDA, a tensor made without ``device=`` lands on the CPU, and mixing it with the inputs
fails (the first GPU run, ../shared/gpu-run/unit.log: nine of the suite's own right answers).
CI has no GPU, so this module plays the second device: every tensor a torch factory makes
without ``device=`` is *unplaced* (it would be on the CPU beside CUDA inputs), and so is
whatever is computed from unplaced tensors alone. Using an unplaced tensor together with
one that comes from the inputs fails, as on CUDA, except where CUDA allows it: as an index
of ``x[...]`` (advanced indexing takes CPU indices) and as a 0-d operand. Returning an
unplaced tensor fails too: on CUDA it would be on the wrong device.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from gather_course import exercise, exercise_ids
from tests.answers import RIGHT
from tests.helpers import solution_fn

FACTORIES = {
    torch.arange, torch.tensor, torch.as_tensor, torch.zeros, torch.ones, torch.empty,
    torch.full, torch.eye, torch.linspace, torch.rand, torch.randn, torch.randint,
    torch.randperm,
}  # fmt: skip


class Unplaced(Exception):
    """A tensor made without device= met the inputs: this fails on CUDA."""


class SecondDevice(TorchFunctionMode):
    """Marks tensors made without ``device=`` and refuses to mix them with the inputs'."""

    def __init__(self) -> None:
        super().__init__()
        self.unplaced: dict[int, torch.Tensor] = {}  # held, so that an id is not reused

    def _is(self, t: Any) -> bool:
        return isinstance(t, torch.Tensor) and t.dim() > 0 and id(t) in self.unplaced

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in FACTORIES:
            if kwargs.get("device") is None:
                self._mark(out)
            return out
        if func is torch.Tensor.__getitem__:  # CPU indices are fine on CUDA
            held = [args[0]]
        elif func is torch.Tensor.__setitem__:  # a copy across devices is fine too: the
            return out  # tensor written into is judged where it is used or returned
        elif func is torch.Tensor.to and (
            "device" in kwargs
            or any(isinstance(a, (torch.device, str, torch.Tensor)) for a in args[1:])
        ):
            self.unplaced.pop(id(out), None)  # placed (.to returns the same tensor on the CPU)
            return out
        else:
            held = [*args, *kwargs.values()]
        tensors = [t for t in tree_flatten(held)[0] if isinstance(t, torch.Tensor) and t.dim()]
        marked = [self._is(t) for t in tensors]
        if any(marked) and not all(marked):
            raise Unplaced(f"{getattr(func, '__name__', func)} mixes a tensor made without "
                           "device= with the inputs' tensors")  # fmt: skip
        if tensors and all(marked):
            self._mark(out)
        return out

    def _mark(self, out: Any) -> None:
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.unplaced[id(t)] = t


def run_on_second_device(fn, inputs: dict) -> Any:
    """``fn`` on a case's inputs; raises Unplaced where it would fail on CUDA."""
    with SecondDevice() as mode:
        out = fn(*inputs.values())
        if any(
            isinstance(t, torch.Tensor) and id(t) in mode.unplaced for t in tree_flatten(out)[0]
        ):
            raise Unplaced("it returns a tensor made without device=")
    return out


def _cases(qid: str):
    q = exercise(qid)
    gen = torch.Generator().manual_seed(3)
    return [q.build(gen, sizes) for sizes in q.sizes]


ANSWERS = [(q, f) for q, fs in RIGHT.items() for f in fs]
ANSWERS += [(q, solution_fn(exercise(q))) for q in exercise_ids()]


@pytest.mark.parametrize("qid, fn", ANSWERS, ids=lambda v: getattr(v, "__name__", v))
def test_right_answers_hold_on_a_second_device(qid, fn):
    for case in _cases(qid):
        run_on_second_device(fn, {k: v.clone() if isinstance(v, torch.Tensor) else v
                                  for k, v in case.inputs.items()})  # fmt: skip


# What the first GPU run failed on, and what CUDA allows: the simulation must tell them apart.
def _arange_plus(x):
    return x + torch.arange(x.size(-1))


def _index_with_arange(x):
    return x[torch.arange(x.size(0))[:, None], torch.zeros_like(x, dtype=torch.long)]


def _scatter_cpu_src(x):
    ranks = torch.arange(x.size(1)).expand(x.size(0), -1)
    return torch.empty_like(x).scatter_(1, x.argsort(1), ranks)


def _returns_unplaced(x):
    out = torch.zeros(x.shape, dtype=x.dtype)
    out[:] = x  # a copy across devices works; the answer is then on the wrong device
    return out


def _moved(x):
    return x + torch.arange(x.size(-1)).to(x.device) * 0


def _placed(x):
    ranks = torch.arange(x.size(1), device=x.device).expand(x.size(0), -1)
    return torch.empty_like(x).scatter_(1, x.argsort(1), ranks) + torch.tensor(1)


@pytest.mark.parametrize("fn", [_arange_plus, _scatter_cpu_src, _returns_unplaced])
def test_the_simulation_refuses_what_fails_on_cuda(fn):
    with pytest.raises(Unplaced):
        run_on_second_device(fn, {"x": torch.arange(12).reshape(3, 4)})


@pytest.mark.parametrize("fn", [_index_with_arange, _placed, _moved])
def test_the_simulation_allows_what_cuda_allows(fn):
    run_on_second_device(fn, {"x": torch.arange(12).reshape(3, 4)})
