"""A notebook as the grader reads it, never runs it: the cells to run and the graded tests.

The learner's answer cells and the course's own locked code cells, in order; IPython magics
and shell escapes are refused with a note; test cells are never run (the referee does their
work), nor is the "practise more" section at a notebook's end (cells marked
``"gather_course": {"practice": qid}``: ungraded practice, see :func:`practice_cell`).
:func:`graded_cells` lists the test cells and the question each checks.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from .._i18n import _


class NotGraded(Exception):
    """The submission cannot be graded (corrupt, a notebook missing, its worker killed twice)."""


@dataclass
class Submission:
    """What the referee runs of a notebook: code cells in order, and what it refused."""

    cells: list[str]
    notes: list[str] = field(default_factory=list)
    course: frozenset[int] = frozenset()  # which of ``cells`` are the course's own (locked)


PRACTICE = "practice"  # a cell's metadata["gather_course"][PRACTICE]: the question practised
_DEF = re.compile(r"^def\s+(\w+)\s*\(", re.MULTILINE)


def practice_cell(cell: Any) -> str | None:
    """The question a cell of the "practise more" section practises, or None for any other
    cell. Grading never runs these cells (they draw fresh variants, not graded ones); a cell
    nbgrader knows (a grade id) is never one, whatever its metadata says, so that a mark added
    to an answer or the setup reads the same in ``check`` as in grading."""
    mark = cell.get("metadata", {}).get("gather_course", {})
    qid = mark.get(PRACTICE) if isinstance(mark, dict) else None
    return qid if isinstance(qid, str) else None


def _is_ipython_syntax(source: str) -> str:
    """The first line that only IPython understands (a magic, a shell escape, ``x?``), or ''."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        compile(source, "<cell>", "exec")
        return ""  # plain Python, whatever IPython would do
    except (SyntaxError, ValueError):
        pass
    plain = source if source.endswith("\n") else source + "\n"
    try:
        transformed = TransformerManager().transform_cell(plain)
    except Exception:  # noqa: BLE001 - whatever IPython cannot read is not ours to run
        return source.splitlines()[0] if source.strip() else ""
    if transformed == plain:
        return ""
    for line in source.splitlines():
        if TransformerManager().transform_cell(line + "\n") != line + "\n":
            return line.strip()
    return source.strip().splitlines()[0]


def read_submission(nb: Any, reference: Any) -> Submission:
    """The cells to run: ``nb``'s answer and added cells, and ``reference``'s locked code cells.

    ``reference`` is the course's student notebook (for grading) or ``nb`` itself (for a
    learner's own check). Test cells are never run: the referee does their work.
    """
    ref = {
        c.metadata["nbgrader"]["grade_id"]: c
        for c in reference.cells
        if c.metadata.get("nbgrader", {}).get("grade_id")
    }
    run: list[str] = []
    ours: list[bool] = []  # per cell of ``run``: the course's own code, as released
    notes: list[str] = []
    seen: set[str] = set()
    graded = {name for c in ref.values() if is_solution(c) for name in _DEF.findall(c.source)}
    for n, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        source = cell.source
        if not gid and practice_cell(cell):  # (a cell of nbgrader's is never practice)
            notes += _practice_defines(n, source, graded)
            continue
        if gid in ref:
            seen.add(gid)
            if is_grade(ref[gid]) and not is_solution(ref[gid]):
                continue  # a test cell: the referee's job
            if is_locked(ref[gid]):
                source = ref[gid].source  # the course's own code, as released
        magic = _is_ipython_syntax(source)
        if magic:
            notes.append(
                _(
                    "Code cell {n} was not run: the grader runs plain Python, and `{code}` is "
                    "IPython syntax (a magic or a shell command). Remove it from your answer "
                    "cells."
                ).format(n=n, code=magic[:60])
            )
            continue
        run.append(source)
        ours.append(gid in ref and is_locked(ref[gid]))
    missing = [
        c.source
        for gid, c in ref.items()
        if gid not in seen and c.cell_type == "code" and is_locked(c) and not is_grade(c)
    ]
    course = set(range(len(missing))) | {len(missing) + n for n, own in enumerate(ours) if own}
    return Submission(missing + run, notes, frozenset(course))


def _practice_defines(n: int, source: str, graded: set[str]) -> list[str]:
    """A note for a practice cell that defines a graded answer's name: it is not graded."""
    names = [name for name in _DEF.findall(source) if name in graded]
    if not names:
        return []
    return [
        _(
            "Code cell {n} is in the practice section, which is not graded: its `{name}` "
            "counts for practice only. Your graded answer goes in the answer cell under its "
            "question."
        ).format(n=n, name=names[0])
    ]


# exercise("qid") or exercise("qid", "variant"): a variant is "public" or knob=choice pairs;
# mine.exercise("qid") in a class release: each student's own variant (_classroom)
_EXERCISE = re.compile(r"""(\bmine\.)?exercise\(["']([\w.]+)["'](?:\s*,\s*["']([\w=,]+)["'])?\)""")
OWN = "@student"  # graded_cells' variant for "each student's own"


# nbgrader's own rules for its cell metadata (nbgrader.utils: is_grade, is_solution,
# is_locked, compute_checksum), here so that judging never imports nbgrader (0.6 s of CPU
# before the first submission); tests/test_edited_test_cells.py compares them with nbgrader's
# on every cell of the course's notebooks.


def is_grade(cell: Any) -> bool:
    """A grade cell (nbgrader's ``is_grade``)."""
    return bool(cell.metadata.get("nbgrader", {}).get("grade", False))


def is_solution(cell: Any) -> bool:
    """A solution cell (nbgrader's ``is_solution``)."""
    return bool(cell.metadata.get("nbgrader", {}).get("solution", False))


def is_locked(cell: Any) -> bool:
    """A cell whose source nbgrader overwrites (nbgrader's ``is_locked``)."""
    if "nbgrader" not in cell.metadata or is_solution(cell):
        return False
    return is_grade(cell) or bool(cell.metadata["nbgrader"].get("locked", False))


def checksum(cell: Any) -> str:
    """nbgrader's ``compute_checksum`` of a cell of its (a grade_id in its metadata)."""
    meta = cell.metadata["nbgrader"]
    parts = [cell.source, cell.cell_type, str(is_grade(cell)), str(is_solution(cell))]
    parts += [str(is_locked(cell)), meta["grade_id"]]
    if is_grade(cell):
        parts.append(str(float(meta["points"])))
    digest = hashlib.md5()  # (nbgrader's checksum: no secret)
    for part in parts:
        digest.update(part.encode("utf-8"))
    return digest.hexdigest()


def graded_cells(nb: Any) -> list[tuple[str, str, float]]:
    """(test cell's grade_id, question id, points) of a course notebook, in order.

    The question id carries the class variant a test cell names, as ``qid:variant``, and
    ``qid:@student`` for a class release's ``mine.exercise(qid)``: each student's own.
    """
    found = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if is_grade(cell) and not is_solution(cell) and cell.cell_type == "code":
            match = _EXERCISE.search(cell.source)
            if match:
                variant = OWN if match.group(1) else match.group(3)
                qid = match.group(2) + (f":{variant}" if variant else "")
                found.append((meta["grade_id"], qid, float(meta.get("points", 0))))
    return found
