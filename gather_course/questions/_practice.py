"""Practice until it sticks: a fresh variant of a question, drawn on demand.

``exercise(qid).practice()`` draws a variant of ``qid`` the learner has not seen yet, from
fresh randomness (not a class key), with fresh inputs: its task, the same tiered check, its
hints, and once tried, a solution to compare. A question without variants gives fresh
inputs. In a class, practice never draws the student's graded variant, and solutions stay
off. Every practice check goes into the learner's record (:mod:`._mastery`).

>>> p = practice(exercise("basics.pick_per_row"), seed=1)
>>> p.variant != "public"
True
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import N_, _
from .._learner_files import enclosing_working_copy
from .._text import sentences
from ._classroom import OPENED
from ._mastery import mastery, note_check, read_record
from ._question import _HEADED, Markdown, Question, exercise, provides_practice
from ._result import CLASS_ENV, CheckResult, class_without_help
from ._variant_hints import variant_hints

# A stored run's draws (``gather-course execute``, nbval): the same variant and inputs each time,
# so a notebook's "practise more" cells store and compare the same output. Learners never set it.
PRACTICE_SEED_ENV = "GATHER_COURSE_PRACTICE_SEED"
_SEEN: dict[str, set[str]] = {}  # per question, the variants drawn in this session
_SAID: set[str] = set()  # the notes said once a session
_SESSION_ONLY = N_(
    "You are not in a working copy (`gather-course start` makes one), so your practice "
    "record is kept for this session only."
)


def graded_variants(qid: str) -> set[str] | None:
    """The variants of ``qid`` this student is graded on, as the class notebooks opened in
    this process say; None where a class is on (``GATHER_COURSE_CLASS``) but none says."""
    graded = set()
    for mine in OPENED:
        if not mine.problem():
            try:
                graded.add(mine.exercise(qid).variant_name)
            except GatherCourseError:  # a variant this version lacks: it is not drawn
                continue
    if not graded and class_without_help():
        return None
    return graded


def candidates(q: Question) -> list[str]:
    """The variants practice may draw for ``q``: every one but the public one and the
    student's graded ones. A question without variants gives its public one, with fresh
    inputs, in a class too: its graded check has the same task (and hidden cases)."""
    if q.family is None:
        return ["public"]
    names = [q.family.name(p) for p in q.family.every()[1:]]
    graded = graded_variants(q.qid)
    if graded is None:
        raise GatherCourseError(
            _(
                "Practice in a class ({env} is set) never draws your graded variant, so it "
                "needs your class notebook's setup cell (`mine = my_class(...)`) run first: "
                "practise in that notebook."
            ).format(env=CLASS_ENV)
        )
    left = [n for n in names if n not in graded]
    if not left:
        raise GatherCourseError(
            _(
                "{qid} has no variant to practise on but the one you are graded on: in a "
                "class, practice never draws that one."
            ).format(qid=q.qid)
        )
    return left


def practice(
    q: Question, variant: str | None = None, seed: int | None = None, folder: Path | None = None
) -> Practice:
    """A practice variant of ``q``: ``variant`` if named, else one not seen yet, drawn from
    fresh randomness (``seed``: the same draw each time, as a stored notebook needs).

    >>> practice(exercise("basics.gather_loop"), seed=0).variant
    'public'
    """
    public = exercise(q.qid)
    names = candidates(public)
    seed = seed if seed is not None else _stored_run_seed()
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    notes = []
    if variant is not None:
        name = public.variant(variant).variant_name
        if name not in names:
            raise GatherCourseError(
                _("{qid}: practice draws one of {known}; got {got}.").format(
                    qid=q.qid, known=", ".join(names), got=repr(variant)
                )
            )
    else:
        seen = _seen(q.qid, folder if folder is not None else enclosing_working_copy(), notes)
        seen = seen if seed is None else set()
        left = [n for n in names if n not in seen] if public.family else names
        if not left:
            notes.append(
                _(
                    "You have seen all {n} practice variants of {qid}: starting over, with "
                    "new inputs."
                ).format(n=len(names), qid=q.qid)
            )
            seen.clear()
            left = names
        name = rng.choice(left)
        seen.add(name)
    return Practice(public.variant(name), rng.randrange(1, 2**31), tuple(notes), folder)


def _stored_run_seed() -> int | None:
    """The seed a stored run fixes (``GATHER_COURSE_PRACTICE_SEED``), or None: fresh draws."""
    text = os.environ.get(PRACTICE_SEED_ENV, "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise GatherCourseError(
            _("{env} must be a whole number (a stored run's practice seed); got {got}.").format(
                env=PRACTICE_SEED_ENV, got=repr(text)
            )
        ) from None


def _seen(qid: str, folder: Path | None, notes: list[str]) -> set[str]:
    """The variants of ``qid`` seen: tried before (the record), or drawn this session."""
    if qid not in _SEEN:
        questions, said = read_record(folder)
        notes.extend([said] if said else [])
        _SEEN[qid] = set(mastery(questions, qid).variants)
    return _SEEN[qid]


class Practice:
    """One practice variant: show it (its task), ``check(fn)``, ``hint(n)``, and once
    tried, ``solution()``."""

    def __init__(
        self, q: Question, seed: int, notes: tuple[str, ...] = (), folder: Path | None = None
    ) -> None:
        self.question, self.seed, self.notes = q, seed, notes
        self.folder = folder if folder is not None else enclosing_working_copy()
        self.hinted = self.tried = False

    @property
    def variant(self) -> str:
        return self.question.variant_name

    def check(self, fn: Callable[..., Any]) -> CheckResult:
        """Check ``fn`` on this variant's fresh inputs, as ``exercise(qid).check`` does; the
        check goes into your practice record."""
        result = self.question.check(fn, seed=self.seed)
        if result.tier.name == "NOT_ATTEMPTED":
            return result
        self.tried = True
        said = note_check(self.folder, self.question.qid, self.variant, result.passed, self.hinted)
        # the advice's hint is this practice's own (a hint used here counts against mastery)
        advice = [
            a.replace(f"{self.question.call}.hint()", "`.hint()`")
            for a in result.advice_sentences
            if ".practice()" not in a  # (this is practice)
        ]
        notes = [said] if said else []
        if self.folder is None and _SESSION_ONLY not in _SAID:
            _SAID.add(_SESSION_ONLY)
            notes.append(_(_SESSION_ONLY))
        if not result.passed and not class_without_help():
            notes.append(_("`.solution()` now shows a solution to compare."))
        return replace(result, advice_sentences=tuple(advice + notes))

    def hint(self, n: int = 1) -> Markdown:
        """Hint ``n`` of this variant (1: a nudge, last: its idea); a hint used means the
        variant's pass does not count toward mastery."""
        q = self.question
        if q.family is None or self.variant == "public":
            hints = tuple(_(h) for h in q.hints)
        else:
            hints = variant_hints(q.qid, q.family, q.params, q.shown, _)
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= len(hints):
            raise GatherCourseError(
                _("{qid} has hints 1 to {n}; got {got}.").format(
                    qid=q.qid, n=len(hints), got=repr(n)
                )
            )
        self.hinted = True
        return Markdown(
            _("**Practice hint {n}/{total}** (`{qid}`, {variant}): {text}").format(
                n=n, total=len(hints), qid=q.qid, variant=self.variant, text=hints[n - 1]
            )
        )

    def solution(self) -> Markdown:
        """Once you have tried: the course's solution to compare (for a variant, the public
        question's solution and what the variant changes in it)."""
        return Markdown(_practice_solution(self))

    def _repr_markdown_(self) -> str:
        q = self.question
        head = _("**Practice: {title}** (`{qid}`, variant `{variant}`)").format(
            title=_(q.title), qid=q.qid, variant=self.variant
        )
        write = _("Write `{signature}`: {task}").format(signature=q.signature, task=q.task_text())
        rules = _("**Constraints:** {constraints}").format(constraints=q.constraints)
        how = _(
            "Write it under a name of its own, say `my_{signature}`, so that a graded "
            "`{name}` stays as it is, and check it with `.check(my_{name})` on this practice. "
            "`.hint()` helps when stuck, and once you have tried, `.solution()` shows one to "
            "compare."
        ).format(signature=q.signature, name=q.name)
        again = (
            _("Drawing again (`exercise({qid}).practice()`) gives another variant.")
            if q.family is not None
            else _(
                "Drawing again (`exercise({qid}).practice()`) gives new inputs: this question "
                "has no variants."
            )
        ).format(qid=repr(q.qid))
        shown = [*self.notes, head, write, rules if q.constraints else "", sentences([how, again])]
        return "\n\n".join(part for part in shown if part)

    def __repr__(self) -> str:
        return f"<practice {self.question.qid} ({self.variant}): {self.question.signature}>"


def _practice_solution(p: Practice) -> str:
    q = p.question
    if class_without_help():
        raise GatherCourseError(
            _(
                "Solutions are off in this class ({env} is set by your instructor's "
                "JupyterHub), for practice too: the lectures' examples, `.hint()` and "
                "`.check()` help."
            ).format(env=CLASS_ENV)
        )
    if not p.tried:
        raise GatherCourseError(
            _(
                "Try it first: `.check(your_function)` on this practice, then `.solution()` "
                "shows one to compare."
            )
        )
    public = exercise(q.qid)
    code = f"```python\n{public.solution_code.strip()}\n```"
    head = _(_HEADED).format(head=_("**Solution**"), qid=q.qid, text="").rstrip()
    if p.variant == "public":
        return f"{head}\n\n{code}"
    steps = variant_hints(q.qid, q.family, q.params, q.shown, _)
    return "\n\n".join(
        [
            head,
            _(
                "The course holds a vectorized solution of the public question only (no "
                "variant's answer ships with it). Here it is; your variant changes it as "
                "the hints say."
            ),
            code,
            steps[0],
            steps[-1],
        ]
    )


provides_practice(practice)  # Question.practice() calls it (the bank imports this module)
