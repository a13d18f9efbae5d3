"""A question as declared: its loop spec, its inputs and sizes, its constraints, its variant,
and the texts made from them (the signature, how a notebook calls it, the constraints line).

The check (``_check.py``), the verdicts (``verdicts.py``, ``steps.py``, ``_judge.py``) and the
named mistakes (``_misconceptions.py``) read a question through this class, so they sit
below :mod:`._question`, which adds what a learner does with it.

>>> Declared.__dataclass_fields__["variant_name"].default
'public'
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from .._i18n import N_, _
from ._cases import Case
from ._knobs import Family, Variant


@dataclass(frozen=True)
class Declared:
    """A question as declared: what the check and grading judge an answer against.

    ``spec`` is the loop-based reference the learner's function is compared with; the
    learner's function takes the spec's arguments (``args``) and has the qid's last part as
    its name. ``make(gen, **sizes)`` builds one test case's inputs from a seeded generator:
    a dict keyed by those arguments. ``forbid`` and ``require`` map a torch op (as the op
    counter sees it) to how the constraint names it for the learner. A :class:`Question` adds
    what a learner does with it (check, hints, solution, practice).
    """

    qid: str
    title: str
    # the task's text; a question with knobs gets it from their template (add_variants)
    task: str = field(default="", kw_only=True)
    spec: Callable[..., Any]
    make: Callable[..., dict[str, Any]]
    sizes: tuple[dict[str, Any], ...]
    large_sizes: tuple[dict[str, Any], ...]
    scaling: tuple[dict[str, Any], dict[str, Any]]
    hints: tuple[str, ...]
    solution_code: str
    formula: Callable[[dict[str, Any], int, tuple[int, ...]], str] | None = None
    outputs: tuple[str, ...] = ("out",)
    dtypes: dict[str, tuple[torch.dtype, ...]] = field(default_factory=dict)
    vectorized: bool = True
    forbid: dict[str, str] = field(default_factory=dict)
    require: dict[str, str] = field(default_factory=dict)
    verify: Callable[[dict[str, Any], torch.Tensor], Any] | None = None
    timing: dict[str, Any] | None = None  # a large input: grading measures CPU time on it
    # the vectorized limit on it, as a multiple of the solution's CPU time: between the slowest
    # honest answer and the fastest loop, as benchmarks/bench_timing.py measures them
    timing_factor: float = 10.0
    rtol: float = 1e-5
    atol: float = 1e-6
    args: tuple[str, ...] = ()  # default: the spec's parameters
    family: Family | None = None  # the knobs of its class variants
    no_variant_why: str = ""  # why a question has no class variant
    variant_name: str = "public"
    shown: Variant | None = None  # the task's template and slots (a question with knobs)
    own: bool = False  # a class release's own variant: its notebook names it mine.exercise(qid)
    public_spec: Callable[..., Any] | None = None  # a variant's public loop spec (misconceptions)

    def __post_init__(self) -> None:
        if not self.args:
            object.__setattr__(self, "args", tuple(inspect.signature(self.spec).parameters))
        sizes = dict(self.sizes[0])
        sizes.pop("label", None)
        made = tuple(self.make(torch.Generator().manual_seed(0), **sizes))
        if made != self.args:
            raise TypeError(
                f"{self.qid}: make() returns the inputs {made}, but the "
                f"learner's function takes {self.args}"
            )

    @property
    def name(self) -> str:
        """The learner's function name: the qid's last part (``pick_per_row``)."""
        return self.qid.rsplit(".", 1)[-1]

    @property
    def forbidden_text(self) -> str:
        return _either(self.forbid)

    @property
    def required_text(self) -> str:
        return _either(self.require)

    @property
    def params(self) -> dict[str, str]:
        """This variant's choice for each knob (``{}`` for a question without knobs)."""
        return self.family.parse(self.qid, self.variant_name) if self.family else {}

    @property
    def call(self) -> str:
        """How a notebook names this question: ``exercise('basics.pick_per_row')``; a class's
        own variant ``mine.exercise(...)``; another variant with its name."""
        if self.own:
            return f"mine.exercise({self.qid!r})"
        if self.variant_name == "public":
            return f"exercise({self.qid!r})"
        return f"exercise({self.qid!r}, {self.variant_name!r})"

    def task_text(self, tr: Callable[[str], str] = _) -> str:
        """The task in the language of ``tr`` (``_``: the learner's)."""
        return self.shown.text(tr) if self.shown is not None else tr(self.task)

    @property
    def constraints(self) -> str:
        """What the answer must not do (checked by ``check`` and by grading), or ''."""
        parts = []
        if self.vectorized:
            parts.append(
                _(
                    "no Python loop over the elements: use whole-tensor operations "
                    "(grading measures how the work grows with the input size)"
                )
            )
        if self.forbid:
            parts.append(_("don't use {ops}").format(ops=self.forbidden_text))
        if self.require:
            parts.append(_("use {ops}").format(ops=self.required_text))
        if self.forbid or self.require:
            parts.append(
                _(
                    "call torch's functions by their names: no `getattr` or `eval`, "
                    "no torch internals (`torch.ops`, `torch._C`), no numpy, threads "
                    "or processes"
                )
            )
        return _("; ").join(parts) + _(".") if parts else ""

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(self.args)})"

    def build(self, gen: torch.Generator, sizes: dict[str, Any]) -> Case:
        sizes = dict(sizes)
        label = sizes.pop("label", N_("random shapes"))
        return Case(label, self.make(gen, **sizes))


def _either(texts: dict[str, str]) -> str:
    """The constraint's wording: the distinct texts of ``{op: text}``, joined with "or"."""
    return _(" or ").join(dict.fromkeys(_(text) for text in texts.values()))
