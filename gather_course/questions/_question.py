"""A question of the bank: its task, battery, hints and solution."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch

from .._errors import GatherCourseError
from .._i18n import N_, _
from .._text import sentences, type_name
from ._check import run_check
from ._declared import Declared
from ._knobs import Family
from ._result import CLASS_ENV, CheckResult, class_without_help
from ._variant_hints import variant_hints


class Markdown(str):
    """Text that Jupyter renders as Markdown (hints, solutions, tasks)."""

    def _repr_markdown_(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Question(Declared):
    """A self-checking exercise: ``check(fn)``, ``hint(n)``, ``solution()``, ``practice()``,
    and its class variants (``variant(name)``). What it is made of, and the texts made from
    that, are :class:`Declared`'s. Declare one with :func:`question`, which also registers
    it.
    """

    def variant(self, name: str) -> Question:
        """This question as the class variant ``name`` (``"public"``: itself).

        >>> exercise("basics.pick_per_row").variant("axis=columns").signature
        'pick_per_row(x, rows)'
        """
        if name == self.variant_name:
            return self
        if self.family is None:
            raise GatherCourseError(
                _("{qid} has no variant {name}; it has: {known}.").format(
                    qid=self.qid,
                    name=repr(name),
                    known=_("public only: {why}").format(why=_(self.no_variant_why)),
                )
            )
        params = self.family.parse(self.qid, name)
        name = self.family.name(params)
        if name == self.variant_name:
            return self
        v = self.family.build(params)
        public = self

        def make(gen: torch.Generator, **sizes: Any) -> dict[str, Any]:
            return v.inputs(public.make(gen, **sizes))

        loop = v.spec or public.spec

        def spec(*values: Any) -> Any:
            return v.from_public(loop(*v.to_public(dict(zip(v.args, values))).values()))

        return replace(
            self,
            args=v.args,
            title=v.title or self.title,
            task=v.text(lambda text: text),
            spec=spec,
            make=make,
            formula=None,
            hints=variant_hints(self.qid, self.family, params, v, lambda text: text),
            solution_code="",
            verify=None,
            dtypes=self.dtypes if v.dtypes is None else {**self.dtypes, **v.dtypes},
            variant_name=name,
            shown=v,
            public_spec=self.public_spec or self.spec,
        )

    def pick_variant(self, class_seed: int | str, student: str = "", modulo: bool = False) -> str:
        """The variant drawn for ``class_seed`` (and ``student``): never the public one, if
        the question has others. ``modulo``: the draw of class notebooks made before the
        release stored each student's variants (:meth:`Family.draw_modulo`)."""
        if self.family is None:
            return "public"
        key = f"{class_seed}:{student}:{self.qid}" if student else f"{class_seed}:{self.qid}"
        draw = self.family.draw_modulo if modulo else self.family.draw
        return self.family.name(draw(key))

    def check(self, fn: Callable[..., Any], *, seed: int = 0, large: bool = False) -> CheckResult:
        """Run ``fn`` on a seeded battery and return specific, tiered feedback."""
        return run_check(self, fn, seed, large)

    def practice(self, variant: str | None = None, seed: int | None = None) -> Any:
        """A fresh variant of this question to practise on, one you have not seen: its task,
        ``check(fn)``, ``hint(n)`` and, once tried, ``solution()`` (``seed``: the same draw
        each time; ``variant``: that one).

        >>> exercise("basics.pick_per_row").practice(seed=1).variant != "public"
        True
        """
        return _PRACTICE[0](self, variant, seed)

    def _refuse_in_class(self, what: str) -> None:
        if class_without_help():
            raise GatherCourseError(
                (
                    _(
                        "Hints of graded questions are turned off in this class ({env} is set "
                        "by your instructor's JupyterHub): the exercise is graded, so it must "
                        "be your own work. The lectures' examples and check() still help."
                    )
                    if what == "hints"
                    else _(
                        "Solutions of graded questions are turned off in this class ({env} is "
                        "set by your instructor's JupyterHub): the exercise is graded, so it "
                        "must be your own work. The lectures' examples and check() still help."
                    )
                ).format(env=CLASS_ENV)
            )

    def _refuse_for_variant(self) -> None:
        if self.variant_name != "public":
            raise GatherCourseError(
                _(
                    "{qid} ({name}) is a class variant: the course holds a solution for the "
                    "public question only. Your answer is checked against the loop spec of "
                    "your variant; its hints (`.hint()`) help when you are stuck."
                ).format(qid=self.qid, name=self.variant_name)
            )

    def hint(self, n: int = 1) -> Markdown:
        """Hint number ``n`` (1 = gentle nudge, last = almost the answer)."""
        self._refuse_in_class("hints")
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= len(self.hints):
            raise GatherCourseError(
                _("{qid} has hints 1 to {n}; got {got}.").format(
                    qid=self.qid, n=len(self.hints), got=type_name(n)
                )
            )
        head = _("**Hint {n}/{total}**").format(n=n, total=len(self.hints))
        if self.variant_name == "public":
            text = _(self.hints[n - 1])
        else:  # made from the variant's knobs, in the learner's language (_variant_hints)
            text = variant_hints(self.qid, self.family, self.params, self.shown, _)[n - 1]
        return Markdown(_(_HEADED).format(head=head, qid=self.qid, text=text))

    def solution(self) -> Markdown:
        """A reference solution, as text (never run in your namespace)."""
        self._refuse_in_class("solutions")
        self._refuse_for_variant()
        head = _(_HEADED).format(head=_("**Solution**"), qid=self.qid, text="").rstrip()
        return Markdown(f"{head}\n\n```python\n{self.solution_code.strip()}\n```")

    def _repr_markdown_(self) -> str:
        constraints = (
            _("**Constraints:** {constraints}").format(constraints=self.constraints) + "\n\n"
            if self.constraints
            else ""
        )
        constraints += _(IMPORTS_CONSTRAINT) + "\n\n"
        write = _("Write `{signature}`: {task}").format(
            signature=self.signature, task=self.task_text()
        )
        check = (
            _(
                "Check it with `exercise({qid}).check({name})`; "
                "`.hint()` and `.solution()` help when stuck."
            )
            if self.variant_name == "public"
            else _(
                "This is your own variant ({variant}): the test cell below checks it. Hints "
                "and solutions are off in this class."
            )
            if class_without_help()
            else _(
                "This is your own variant ({variant}): the test cell below checks it. "
                "`.hint()` gives hints made for it; there is no solution to show."
            )
        )
        head = _("**{title}** (`{qid}`)").format(title=_(self.title), qid=self.qid)
        return f"{head}\n\n{write}\n\n{constraints}" + check.format(
            qid=repr(self.qid), name=self.name, variant=self.variant_name
        )

    def __repr__(self) -> str:
        return f"<exercise {self.qid}: {self.signature}>"


# What every answer may import (the grading sandbox holds nothing else of the course); every
# task cell states it, under the question's constraints.
IMPORTS_CONSTRAINT = N_(
    "**Imports:** your answer may use torch, Python's standard library and gather_course's "
    "public helpers (`gather_reference`, `diagnose`, `explain`, `default_device`); the "
    "question bank and its solutions are not there when answers are graded."
)
# A hint or a solution under its heading (Chinese punctuation: （）：).
_HEADED = N_("{head} (`{qid}`): {text}")
_REGISTRY: dict[str, Question] = {}
# How Question.practice() draws: _practice.practice, given by provides_practice() when the bank
# is imported (that module imports this one, so this one names it only here).
_PRACTICE: list[Callable[..., Any]] = []


def provides_practice(draw: Callable[..., Any]) -> None:
    """Register ``draw(question, variant, seed)`` as what :meth:`Question.practice` calls
    (the bank's own registration, as questions register themselves)."""
    _PRACTICE[:] = [draw]


def register(q: Question) -> Question:
    """Add ``q`` to the bank (course order is registration order)."""
    if q.qid in _REGISTRY:
        raise RuntimeError(f"duplicate question id {q.qid}")
    _REGISTRY[q.qid] = q
    return q


def add_variants(qid: str, family: Family | None, why: str = "") -> Question:
    """Give the registered question ``qid`` its class variants (``family``), or say ``why``
    it has none. Its task becomes the family's template with the public choices."""
    q = _REGISTRY[qid]
    if family is None:
        q = replace(q, no_variant_why=why)
    else:
        shown = family.build(family.public)
        q = replace(q, family=family, shown=shown, task=shown.text(lambda t: t))
    _REGISTRY[qid] = q
    return q


def question(qid: str, **declaration: Any) -> Question:
    """Declare and register a question: ``question("topk.select_patches", title=..., ...)``.

    The keywords are :class:`Question`'s fields; the name and the arguments come from the
    qid and the spec.
    """
    return register(Question(qid, **declaration))


def exercise(qid: str, variant: str = "public") -> Question:
    """The question with this id, e.g. ``exercise("basics.pick_per_row")``.

    ``variant`` names a class variant (a class release's notebooks say which).

    >>> exercise("basics.pick_per_row").signature
    'pick_per_row(x, cols)'
    """
    if not isinstance(qid, str):
        raise GatherCourseError(
            _("exercise() takes a question id such as 'basics.pick_per_row', got {got}.").format(
                got=type_name(qid)
            )
        )
    if qid not in _REGISTRY:
        close = difflib.get_close_matches(qid, _REGISTRY, n=1)
        tip = [_("Did you mean {qid}?").format(qid=repr(close[0]))] if close else []
        raise GatherCourseError(
            sentences(
                [
                    _("no question {qid}.").format(qid=repr(qid)),
                    *tip,
                    _("Known ids: {ids}.").format(ids=", ".join(sorted(_REGISTRY))),
                ]
            )
        )
    return _REGISTRY[qid].variant(variant)


def exercise_ids() -> list[str]:
    """All question ids, in course order."""
    return list(_REGISTRY)
