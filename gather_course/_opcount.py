"""Counting the aten operations a function runs (a signal for grading constraints, never the
only one).

Kept apart from the question bank: the sandboxed grading worker imports it, and the sandbox
holds no question, solution or variant.
"""

from __future__ import annotations

import collections

from torch.utils._python_dispatch import TorchDispatchMode


class OpCounter(TorchDispatchMode):
    """Counts the aten operations dispatched while active (in-place ``_`` folded in)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: collections.Counter[str] = collections.Counter()

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps a mode's __torch_dispatch__ in torch._dynamo.disable by default, which
        # imports dynamo (and sympy): about 1 s on the first check of a kernel. The counter is
        # never compiled (the constraints forbid torch.compile and jit), so the wrapper is not
        # needed.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[func.overloadpacket.__name__.rstrip("_")] += 1
        return func(*args, **(kwargs or {}))
