"""Answers right for a classmate's variant and wrong for their own: the mark of a copy.

In a class where each student has their own variant (``release --roster``), an answer that
fails its author's variant is judged again, on the visible cases, against each other variant
given in the class. One that passes there was most likely written for that variant: the
report names it and the classmates who have it, unless the two variants differ by one named
misconception only (an honest off-by-one is right for the variant counting from 1): those
are set aside, and counted. The referee runs the answers, in its
sandboxed workers, as grading does; nothing here changes a score.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..grading import OWN, Plan, Referee, graded_cells, read_submission
from ..questions import exercise, variant_mistakes


@dataclass
class Crossed:
    """``student``'s answer to ``question`` fails their ``own`` variant and passes ``other``,
    the variant of ``holders``; ``mistakes``: the named mistakes that turn an answer to
    ``own`` into one to ``other`` (one per knob they differ in)."""

    question: str
    student: str
    own: str
    other: str
    holders: list[str]
    mistakes: tuple[str, ...] = ()

    @property
    def honest(self) -> bool:
        """Whether one common mistake explains it: the two variants differ by one named
        misconception (counting from 0 or 1, rows or columns...), so an honest answer with
        that mistake is right for the classmate's variant too. Not a lead."""
        return len(self.mistakes) <= 1


def mistakes_between(qid: str, own: str, other: str) -> tuple[str, ...]:
    """The named mistakes between two variants of ``qid`` (how strong a crossed lead is:
    one is an honest slip, more is a lead).

    >>> mistakes_between("basics.pick_per_row", "counting=one", "public")
    ('off by one',)
    >>> len(mistakes_between("basics.pick_per_row", "axis=columns,counting=one", "public"))
    2
    """
    family = exercise(qid).family
    if family is None:
        return ()
    return tuple(variant_mistakes(family, family.parse(qid, own), family.parse(qid, other)))


def leads(found: list[Crossed]) -> tuple[list[Crossed], list[Crossed]]:
    """(the leads, the ones set aside as one honest mistake away)."""
    return [c for c in found if not c.honest], [c for c in found if c.honest]


def crossed(
    referee: Referee,
    root: Path,
    assignment: str,
    released: dict[str, Any],
    table: dict[str, dict[str, str]],
) -> list[Crossed]:
    """Every answer of ``assignment`` that fails its author's variant (``table``: student ->
    {qid: variant}, from class.json) and passes a classmate's."""
    import nbformat

    found = []
    for folder in sorted((root / "submitted").glob(f"*/{assignment}")):
        student = folder.parent.name
        mine = table.get(student)
        if mine is None:
            continue
        for name, reference in released.items():
            try:
                nb = nbformat.read(folder / name, as_version=4)
            except Exception:  # noqa: BLE001 - unreadable notebooks have no answers to judge
                continue
            submission = read_submission(nb, reference)
            for _gid, key, _points in graded_cells(reference):
                qid, _sep, variant = key.partition(":")
                if variant != OWN:
                    continue
                if referee.judge(submission, Plan.make(f"{qid}:{mine[qid]}", None)).passed:
                    continue
                found += cross_for(
                    qid,
                    student,
                    table,
                    lambda v, s=submission, q=qid: (
                        referee.judge(s, Plan.make(f"{q}:{v}", None)).passed
                    ),
                )
    return found


def cross_for(
    qid: str, student: str, table: dict[str, dict[str, str]], passes: Callable[[str], bool]
) -> list[Crossed]:
    """The classmate's variant of ``qid`` that ``student``'s answer passes (``passes``: its
    verdict on a variant), when one does: a list of one, or empty."""
    own = table[student][qid]
    others: dict[str, list[str]] = {}
    for who, theirs in sorted(table.items()):
        if theirs[qid] != own:
            others.setdefault(theirs[qid], []).append(who)
    for other, holders in others.items():
        if passes(other):
            return [Crossed(qid, student, own, other, holders, mistakes_between(qid, own, other))]
    return []
