"""Class variants from knobs: each question's ways to change its answer and keep its lesson.

A question's :class:`Family` names its knobs (the layout of an input's axes, which end to
keep, how an index counts, ...) and a ``build`` that turns one choice per knob into a
:class:`Variant`: how the public case's inputs become the variant's, how they go back for
the public loop spec, how the spec's answer becomes the variant's, and the task text made
from a template and slots. Every combination is a variant; the first choice of every knob
is the public question. The bank holds no vectorized answer to any variant: the referee
judges against the loop spec, and solutions/variant_solutions.py shows each can be solved.

>>> fam = Family({"layout": Knob(("BLV", "BVL")), "keepdim": Knob(("no", "yes"))}, build=None)
>>> fam.count, fam.name({"layout": "BVL", "keepdim": "no"})
(4, 'layout=BVL')
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from .._errors import GatherCourseError
from .._i18n import _
from .._text import sentences
from ._cases import noncontig

Inputs = dict[str, Any]


@dataclass(frozen=True)
class Variant:
    """One variant of a question, made by its family's ``build`` from the knobs' choices.

    ``inputs`` turns a public case's inputs into this variant's (keys: ``args``),
    ``to_public`` turns them back for the public loop spec, ``from_public`` turns the spec's
    answer into this variant's. The task shown is ``template`` (a bank text, translated)
    formatted with ``slots`` (code: never translated) and ``words`` (bank texts, translated),
    then the ``notes`` (bank texts, formatted the same way).
    """

    args: tuple[str, ...]
    inputs: Callable[[Inputs], Inputs]
    to_public: Callable[[Inputs], Inputs]
    from_public: Callable[[Any], Any]
    template: str
    slots: dict[str, str] = field(default_factory=dict)
    words: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    title: str = ""  # its own title, if the public one no longer fits
    spec: Callable[..., Any] | None = None  # a loop spec in the public layout, if not public's
    dtypes: dict[str, tuple[torch.dtype, ...]] | None = None  # the outputs', if not public's

    def text(self, tr: Callable[[str], str] = _) -> str:
        """The task in the language of ``tr`` (a catalog's gettext; ``_`` by default)."""
        return self.with_notes(tr(self.template).format(**self.values(tr)), tr)

    def values(self, tr: Callable[[str], str] = _) -> dict[str, str]:
        """What the variant's texts are formatted with: the slots, and the words in ``tr``'s
        language."""
        return {**self.slots, **{k: tr(w).format(**self.slots) for k, w in self.words.items()}}

    def with_notes(self, text: str, tr: Callable[[str], str] = _) -> str:
        """``text``, then the variant's notes in ``tr``'s language."""
        values = self.values(tr)
        return sentences([text, *(tr(note).format(**values) for note in self.notes)])


class Knob(tuple):
    """One knob of a question: its choices, the public one first (a tuple of them), and what
    each other choice asks of the answer (``steps``: choice, or ``"*"`` for every other one,
    to a bank text; the variant's third hint, formatted with its slots, ``{choice}``,
    ``{public}`` and ``{expr}``).

    >>> k = Knob(("rows", "columns"), {"columns": "runs down each column"})
    >>> k.public, k.step("columns"), k.step("rows")
    ('rows', 'runs down each column', None)
    """

    steps: dict[str, str]

    def __new__(cls, choices: tuple[str, ...], steps: dict[str, str] | None = None) -> Knob:
        knob = super().__new__(cls, choices)
        knob.steps = dict(steps or {})
        return knob

    @property
    def public(self) -> str:
        return self[0]

    def step(self, choice: str) -> str | None:
        """The bank text of what ``choice`` asks of the answer (None: no text for it)."""
        if choice == self.public:
            return None
        return self.steps.get(choice) or self.steps.get("*")


@dataclass(frozen=True)
class Family:
    """A question's knobs (``{knob: Knob((public choice, other choices...), steps)}``) and
    ``build``."""

    knobs: dict[str, Knob]
    build: Callable[[dict[str, str]], Variant] | None
    few: str = ""  # why the knobs make fewer than eight variants, when they do

    @property
    def count(self) -> int:
        """How many distinct variants the knobs make, the public one included."""
        n = 1
        for choices in self.knobs.values():
            n *= len(choices)
        return n

    @property
    def public(self) -> dict[str, str]:
        return {knob: choices[0] for knob, choices in self.knobs.items()}

    def every(self) -> list[dict[str, str]]:
        """Every combination of choices, the public one first."""
        return [dict(zip(self.knobs, combo)) for combo in itertools.product(*self.knobs.values())]

    def name(self, params: dict[str, str]) -> str:
        """The variant's name: its choices that are not the public ones (``public`` if none)."""
        changed = [f"{k}={v}" for k, v in params.items() if v != self.knobs[k][0]]
        return ",".join(changed) or "public"

    def parse(self, qid: str, name: str) -> dict[str, str]:
        """The choices a variant name stands for; a clear error for any other name."""
        params = self.public
        if name == "public":
            return params
        for part in name.split(","):
            knob, _sep, value = part.partition("=")
            if knob not in self.knobs or value not in self.knobs[knob]:
                raise GatherCourseError(
                    _(
                        "{qid} has no variant {name}. Its variants are 'public' or knob=choice "
                        "pairs joined by commas, from: {knobs}."
                    ).format(qid=qid, name=repr(name), knobs=self.describe())
                )
            params[knob] = value
        return params

    def describe(self) -> str:
        return "; ".join(f"{k} = {' | '.join(v)}" for k, v in self.knobs.items())

    def draw(self, key: str) -> dict[str, str]:
        """The choices drawn from ``key`` (a class seed, with a student id): never the public
        question's, when the knobs make others.

        Each knob takes the choice with the highest score ``sha256(key|knob|choice)``
        (rendezvous hashing), so a draw does not depend on the choices' order, and a choice
        added to a knob takes a student's draw only where it scores highest: about 1 in
        n + 1 of them, the rest keep theirs. Where every knob drew its public choice, the
        knob whose best other choice scores highest takes that choice.
        """
        if self.count == 1:
            return self.public
        ranked = {
            knob: sorted(choices, key=lambda c, k=knob: _score(key, k, c), reverse=True)
            for knob, choices in self.knobs.items()
        }
        params = {knob: order[0] for knob, order in ranked.items()}
        if params == self.public:
            knob = max(
                (k for k, order in ranked.items() if len(order) > 1),
                key=lambda k: _score(key, k, ranked[k][1]),
            )
            params[knob] = ranked[knob][1]
        return params

    def draw_modulo(self, key: str) -> dict[str, str]:
        """The draw of class releases made before stored variants (their notebooks carry the
        key only, and draw again when they run): one of the other combinations, ``sha256(key)``
        modulo their number. Adding a choice re-deals most students: kept for those
        notebooks alone."""
        others = self.every()[1:]
        if not others:
            return self.public
        digest = hashlib.sha256(key.encode()).digest()
        return others[int.from_bytes(digest[:8], "big") % len(others)]


def _score(key: str, knob: str, choice: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{key}|{knob}|{choice}".encode()).digest()[:8], "big")


# -- the transforms the families share --------------------------------------------------------
def like(source: torch.Tensor, made: torch.Tensor) -> torch.Tensor:
    """``made``, contiguous, or non-contiguous again when ``source`` was (the strided cases)."""
    made = made.contiguous()
    return made if source.is_contiguous() else noncontig(made)


def inverse(order: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``order``: ``t.permute(order).permute(inverse(order))``."""
    return tuple(sorted(range(len(order)), key=order.__getitem__))


def permuted(inp: Inputs, name: str, order: tuple[int, ...]) -> Inputs:
    """``inp`` with ``inp[name]`` permuted to ``order`` (laid out again, strides kept apart)."""
    return {**inp, name: like(inp[name], inp[name].permute(order))}


def unpermuted(inp: Inputs, name: str, order: tuple[int, ...]) -> Inputs:
    return {**inp, name: inp[name].permute(inverse(order))}


def shape(dims: tuple[str, ...], order: tuple[int, ...]) -> str:
    """``[B, V, L]``: the dims' names in ``order``."""
    return "[" + ", ".join(dims[i] for i in order) + "]"


def renamed(inp: Inputs, old: str, new: str) -> Inputs:
    return {(new if k == old else k): v for k, v in inp.items()}


# How an index counts, as the variant's inputs hold it: (to the variant, back to public).
COUNTING: dict[str, tuple[Callable[[Any, int], Any], Callable[[Any, int], Any]]] = {
    "zero": (lambda i, n: i, lambda i, n: i),
    "one": (lambda i, n: i + 1, lambda i, n: i - 1),
    "end": (lambda i, n: n - 1 - i, lambda i, n: n - 1 - i),
    "end1": (lambda i, n: n - i, lambda i, n: n - i),
}
# Not negative positions (-1 the last): take_along_dim reads them as Python does, so one
# answer would pass both that variant and the one counting from 0.
# The element an index entry ``{i}`` stands for, in an axis of size ``{n}``.
COUNTING_EXPR = {"zero": "{i}", "one": "{i} - 1", "end": "{n} - 1 - {i}", "end1": "{n} - {i}"}
COUNTING_NOTE = {
    "zero": None,
    "one": "`{idx}` counts from 1: 1 is the first.",
    "end": "`{idx}` counts from the end: 0 is the last.",
    "end1": "`{idx}` counts from the end, starting at 1: 1 is the last.",
}


def counted(choice: str, i: str, n: str) -> str:
    """The formula's index expression: ``counted("one", "cols[r, k]", "C")`` is
    ``cols[r, k] - 1``."""
    return COUNTING_EXPR[choice].format(i=i, n=n)


def counting_notes(choice: str) -> tuple[str, ...]:
    note = COUNTING_NOTE[choice]
    return (note,) if note else ()
