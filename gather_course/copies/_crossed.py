"""Answers right for a classmate's variant and wrong for their own: the mark of a copy.

In a class where each student has their own variant (``release --roster``), an answer that
fails its author's variant is judged again, on the visible cases, against each other variant
given in the class. One that passes there was most likely written for that variant: the
report names it and the classmates who have it. The referee runs the answers, in its
sandboxed workers, as grading does; nothing here changes a score.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..grading._referee import Plan, Referee
from ..grading._submission import OWN, graded_cells, read_submission


@dataclass
class Crossed:
    """``student``'s answer to ``question`` fails their ``own`` variant and passes ``other``,
    the variant of ``holders``."""

    question: str
    student: str
    own: str
    other: str
    holders: list[str]


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
                others: dict[str, list[str]] = {}
                for who, theirs in sorted(table.items()):
                    if theirs[qid] != mine[qid]:
                        others.setdefault(theirs[qid], []).append(who)
                for other, holders in others.items():
                    if referee.judge(submission, Plan.make(f"{qid}:{other}", None)).passed:
                        found.append(Crossed(qid, student, mine[qid], other, holders))
                        break
    return found
