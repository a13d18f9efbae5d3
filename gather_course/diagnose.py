"""Plain-language diagnosis of a ``torch.gather`` call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ._gather_call import Problem, check_call
from ._i18n import N_, _
from ._text import fmt_shape

__all__ = ["Diagnosis", "diagnose"]


@dataclass(frozen=True)
class Diagnosis:
    """The verdict on one call: ``ok`` iff ``torch.gather`` accepts it.

    ``problems`` lists each broken rule with a concrete fix; ``notes`` points out
    legal but surprising things (an index smaller than input, an empty index).
    """

    call: str
    problems: tuple[Problem, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        if self.ok:
            lines = [_("{call}: valid, torch.gather accepts this call.").format(call=self.call)]
        else:
            n = len(self.problems)
            head = _("{call}: 1 broken rule.") if n == 1 else _("{call}: {n} broken rules.")
            lines = [head.format(call=self.call, n=n)]
            for p in self.problems:
                lines += [
                    f"- [{rule_label(p.rule)}] {p.message}",
                    _("  fix: {fix}").format(fix=p.fix),
                ]
        lines += [_("- note: {note}").format(note=note) for note in self.notes]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        if self.ok:
            lines = [
                "✅ " + _("`{call}` is **valid**: torch.gather accepts it.").format(call=self.call)
            ]
        else:
            n = len(self.problems)
            head = (
                _("`{call}` breaks **1 rule**:") if n == 1 else _("`{call}` breaks **{n} rules**:")
            )
            lines = ["❌ " + head.format(call=self.call, n=n), ""]
            lines += [
                _("- **{rule}**: {message}<br>*Fix:* {fix}").format(
                    rule=rule_label(p.rule), message=p.message, fix=p.fix
                )
                for p in self.problems
            ]
        if self.notes:
            lines += [""] + [_("- *Note:* {note}").format(note=note) for note in self.notes]
        return "\n".join(lines)


# The rules as lecture 01 (section 7) numbers them, each with its name; arguments that are
# not tensors (``type``) break no numbered rule.
_RULES = {
    "dim": (1, N_("dim in range")),
    "ndim": (2, N_("as many dims as input")),
    "size": (3, N_("sizes within input's")),
    "dtype": (4, N_("an integer dtype")),
    "range": (5, N_("values in range")),
    "device": (6, N_("the same device")),
    "type": (None, N_("tensors and an integer dim")),
}


def rule_label(rule: str) -> str:
    """A rule as lecture 01 numbers it: ``range`` -> ``rule 5, values in range``."""
    number, name = _RULES.get(rule, (None, rule))
    if number is None:
        return _(name)
    return _("rule {n}, {name}").format(n=number, name=_(name))


def diagnose(input: Any, dim: Any, index: Any) -> Diagnosis:
    """Check every rule of ``torch.gather(input, dim, index)`` and say what breaks and how to fix it.

    Rules: dim in range; same number of dims; ``index.size(d) <= input.size(d)`` for
    ``d != dim``; integer index dtype; every value in ``[0, input.size(dim))``; same device.

    >>> import torch
    >>> diagnose(torch.zeros(3, 4, 5), 1, torch.zeros(3, 4, dtype=torch.long)).ok
    False
    """
    problems, notes = check_call(input, dim, index)
    call = f"torch.gather(input {fmt_shape(input)}, dim={dim!r}, index {fmt_shape(index)})"
    return Diagnosis(call, tuple(problems), tuple(notes))


def gather_failure(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[str]:
    """Why a learner's function failed inside a gather: run it again, watching its gathers.

    Returns ``[call, message, fix, rule, numbers]`` for the first gather call torch refused
    (``rule``: which one, ``"dim"``, ``"ndim"``, ``"size"``, ``"range"``, ``"dtype"``...;
    ``numbers``: the index's dims and range, the dim, the input's shape), or
    ``[]`` when no gather failed (the error came from elsewhere). Used by the checks after
    ``fn(*inputs)`` raised; the inputs must be copies the caller can spare.
    """
    witness = _GatherWitness()
    try:
        with witness:
            fn(*inputs)
    except Exception:  # noqa: BLE001 - the error is the one already reported
        pass
    if witness.failed is None:
        return []
    input, dim, index = witness.failed
    found = diagnose(input, dim, index)
    if found.ok:
        return []
    problem = found.problems[0]
    fix = problem.fix[:1].upper() + problem.fix[1:]
    return [found.call, problem.message, fix, problem.rule, _numbers(input, dim, index)]


def _numbers(input: Any, dim: Any, index: Any) -> str:
    """The refused call as numbers, for the referee to name the mistake: ``"index.dim()
    index.min() index.max() dim input.shape..."`` ('' where they cannot be read)."""
    if not (isinstance(input, torch.Tensor) and isinstance(index, torch.Tensor)):
        return ""
    try:
        d = dim % max(input.dim(), 1) if isinstance(dim, int) else -1
        values = index.detach().cpu().long() if index.numel() else torch.zeros(1).long()
        low, high = int(values.min()), int(values.max())
    except (RuntimeError, TypeError):  # complex values
        return ""
    return " ".join(map(str, (index.dim(), low, high, d, *input.shape)))


class _GatherWitness(TorchDispatchMode):
    """Remembers the arguments of the first ``aten.gather`` call that raised."""

    def __init__(self) -> None:
        super().__init__()
        self.failed: tuple[Any, Any, Any] | None = None

    @classmethod
    def _should_skip_dynamo(cls) -> bool:  # no dynamo import (about 1 s); never compiled
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        try:
            return func(*args, **(kwargs or {}))
        except Exception:
            if self.failed is None and func.overloadpacket.__name__ == "gather":
                input, dim, index = (list(args) + [None] * 3)[:3]
                self.failed = (input, dim, (kwargs or {}).get("index", index))
            raise
