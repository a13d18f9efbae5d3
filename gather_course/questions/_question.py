"""A question of the bank: its task, battery, hints and solution."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .._errors import GatherCourseError
from .._text import type_name
from ._cases import Case
from ._check import CheckResult, run_check


class Markdown(str):
    """Text that Jupyter renders as Markdown (hints, solutions, tasks)."""

    def _repr_markdown_(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Question:
    """A self-checking exercise: ``check(fn)``, ``hint(n)``, ``solution()``.

    ``spec`` is the loop-based reference the learner's function is compared with;
    ``make(gen, **sizes)`` builds one test case's inputs from a seeded generator.
    """

    qid: str
    name: str
    args: tuple[str, ...]
    title: str
    task: str
    spec: Callable[..., Any]
    make: Callable[..., dict[str, Any]]
    sizes: tuple[dict[str, Any], ...]
    large_sizes: tuple[dict[str, Any], ...]
    scaling: tuple[dict[str, Any], dict[str, Any]]
    formula: Callable[[dict[str, Any], int, tuple[int, ...]], str]
    hints: tuple[str, ...]
    solution_code: str
    outputs: tuple[str, ...] = ("out",)
    dtypes: dict[str, tuple[torch.dtype, ...]] = field(default_factory=dict)
    vectorized: bool = True
    forbidden: tuple[str, ...] = ()
    forbidden_text: str = ""
    required: tuple[str, ...] = ()
    required_text: str = ""
    verify: Callable[[dict[str, Any], torch.Tensor], Any] | None = None
    timing: dict[str, Any] | None = None    # a large input: grading measures CPU time on it
    rtol: float = 1e-5
    atol: float = 1e-6

    @property
    def rules(self) -> str:
        """What the answer must not do (checked by ``check`` and by grading), or ''."""
        parts = []
        if self.vectorized:
            parts.append("no Python loop over the elements: use whole-tensor operations "
                         "(grading measures how the work grows with the input size)")
        if self.forbidden:
            parts.append(f"don't use {self.forbidden_text}")
        if self.required:
            parts.append(f"use {self.required_text}")
        if self.forbidden or self.required:
            parts.append("call torch's functions by their names: no `getattr` or `eval`, "
                         "no torch internals (`torch.ops`, `torch._C`), no numpy, threads "
                         "or processes")
        return "; ".join(parts) + "." if parts else ""

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(self.args)})"

    def build(self, gen: torch.Generator, sizes: dict[str, Any]) -> Case:
        sizes = dict(sizes)
        label = sizes.pop("label", "random shapes")
        return Case(label, self.make(gen, **sizes))

    def check(self, fn: Callable[..., Any], *, seed: int = 0, large: bool = False) -> CheckResult:
        """Run ``fn`` on a seeded battery and return specific, tiered feedback."""
        return run_check(self, fn, seed, large)

    def hint(self, n: int = 1) -> Markdown:
        """Hint number ``n`` (1 = gentle nudge, last = almost the answer)."""
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= len(self.hints):
            raise GatherCourseError(
                f"{self.qid} has hints 1 to {len(self.hints)}; got {type_name(n)}.")
        return Markdown(f"**Hint {n}/{len(self.hints)}** (`{self.qid}`): {self.hints[n - 1]}")

    def solution(self) -> Markdown:
        """A reference solution, as text (never run in your namespace)."""
        return Markdown(f"**Solution** (`{self.qid}`):\n\n```python\n{self.solution_code.strip()}\n```")

    def _repr_markdown_(self) -> str:
        rules = f"**Rules:** {self.rules}\n\n" if self.rules else ""
        return (f"**{self.title}** (`{self.qid}`)\n\nWrite `{self.signature}`: {self.task}\n\n"
                f"{rules}Check it with `exercise({self.qid!r}).check({self.name})`; "
                f"`.hint()` and `.solution()` help when stuck.")

    def __repr__(self) -> str:
        return f"<exercise {self.qid}: {self.signature}>"


_REGISTRY: dict[str, Question] = {}


def register(q: Question) -> Question:
    if q.qid in _REGISTRY:
        raise RuntimeError(f"duplicate question id {q.qid}")
    _REGISTRY[q.qid] = q
    return q


def exercise(qid: str) -> Question:
    """The question with this id, e.g. ``exercise("basics.pick_per_row")``.

    >>> exercise("basics.pick_per_row").signature
    'pick_per_row(x, cols)'
    """
    if not isinstance(qid, str):
        raise GatherCourseError(f"exercise() takes a question id such as "
                                f"'basics.pick_per_row', got {type_name(qid)}.")
    try:
        return _REGISTRY[qid]
    except KeyError:
        close = difflib.get_close_matches(qid, _REGISTRY, n=1)
        tip = f" Did you mean {close[0]!r}?" if close else ""
        raise GatherCourseError(f"no question {qid!r}.{tip} Known ids: "
                                f"{', '.join(sorted(_REGISTRY))}.") from None


def exercise_ids() -> list[str]:
    """All question ids, in course order."""
    return list(_REGISTRY)
