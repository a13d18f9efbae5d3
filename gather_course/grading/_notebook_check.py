"""A learner's check of one notebook, judged the way grading judges it.

``gather-course check`` and ``progress`` call :func:`check_notebook`: the notebook's answer
cells run in a sandboxed worker (never in this process) and the verdicts are the ones
grading gives on the visible cases, so what ``check`` says is what grading gives.

A test cell the learner edited or deleted changes no verdict: neither ``check`` nor grading
runs test cells (the referee judges each question itself, from the course's own test, as
released). Both say so in the same words (:mod:`._test_notes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import N_, _
from .._tier import Tier
from ..course import notebook_file, released_exercises
from ..questions import setup_call
from ._classjob import own_variant
from ._referee import Plan, Referee
from ._sandbox import Worker
from ._submission import OWN, graded_cells, is_grade, is_locked, read_submission
from ._submission import checksum as cell_checksum
from ._test_notes import (
    deleted_test_note,
    edited_locked_note,
    edited_test_note,
    not_restored_note,
)


@dataclass
class QuestionReport:
    """One graded test cell of a checked notebook."""

    grade_id: str
    points: float
    score: float
    message: str
    status: str = ""  # passed, not attempted, failing; edited or deleted (not judged)

    @property
    def passed(self) -> bool:
        return self.score == self.points


def _damaged_cell(nb: Any) -> int:
    """The number (from 1) of the first cell whose nbgrader metadata nbgrader cannot read:
    not a mapping, a grade id that is no text, a grade cell without a number of points
    (red team, 2026-11-27: check ended in a traceback where grading said NOT GRADED); 0."""
    for n, cell in enumerate(nb.cells, start=1):
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta is None or meta == {}:
            continue
        if not isinstance(meta, dict) or not isinstance(meta.get("grade_id", ""), str):
            return n
        if meta.get("grade"):
            try:
                float(meta["points"])
            except (KeyError, TypeError, ValueError):
                return n
    return 0


def _is_ours(nb: Any) -> bool:
    return isinstance(nb.metadata.get("gather_course"), dict) and any(is_grade(c) for c in nb.cells)


def _own_variants(nb: Any) -> dict[str, str]:
    """A class release's: {qid: this student's variant}, from the class its setup cell opens
    and the student's id, as the notebook's own cells find them; {} for other notebooks."""
    qids = [q.partition(":")[0] for _g, q, _p in graded_cells(nb) if q.endswith(f":{OWN}")]
    if not qids:
        return {}
    mine = next(
        (m for c in nb.cells if c.cell_type == "code" and (m := setup_call(c.source))), None
    )
    if mine is None:
        raise GatherCourseError(
            _(
                "This notebook's test cells check each student's own variant, but its setup "
                "cell no longer opens the class (my_class). Take a fresh copy of the notebook."
            )
        )
    problem = mine.problem()
    if problem:
        raise GatherCourseError(problem)
    return {qid: mine.exercise(qid).variant_name for qid in qids}


def _read_ours(path: str | Path) -> Any:
    """The notebook at ``path``, if it is one of the course's exercise notebooks."""
    import nbformat

    path = notebook_file(path)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets the same clear error
        raise GatherCourseError(
            _("{path} is not a readable notebook: {error}").format(path=path, error=exc)
        ) from None
    damaged = _damaged_cell(nb)
    if damaged:
        raise GatherCourseError(
            _(
                "{path}: the course's marks on cell {n} (its nbgrader metadata) are "
                "damaged, and grading would not grade the notebook. Copy your answers into a "
                "fresh copy of the notebook."
            ).format(path=path, n=damaged)
        )
    if not _is_ours(nb):
        raise GatherCourseError(
            _(
                "{path} is not one of the course's exercise notebooks (no gather_course "
                "metadata or graded test cells). Check a notebook from exercises/<assignment>/."
            ).format(path=path)
        )
    return nb


def _edited_cells(nb: Any) -> set[str]:
    """The grade ids of the locked cells whose checksum no longer matches (edited)."""
    return {
        c.metadata["nbgrader"]["grade_id"]
        for c in nb.cells
        if is_locked(c)
        and "checksum" in c.metadata["nbgrader"]
        and cell_checksum(c) != c.metadata["nbgrader"]["checksum"]
    }


def _as_released(nb: Any, edited: set[str]) -> tuple[Any, set[str]]:
    """``nb`` with its ``edited`` locked code cells back as released, as grading runs them
    (red team, 2026-11-27: a helper added to the locked setup cell passed ``check`` and
    failed grading), and the ids of those it could not restore. A cell's released code is
    the one in the course's own notebooks whose checksum the learner's cell still keeps."""
    import copy

    wanted = {
        c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["checksum"]
        for c in nb.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade_id") in edited
    }
    if not wanted:
        return nb, set()
    found = _released_sources(wanted)
    reference = copy.deepcopy(nb)
    for cell in reference.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in found:
            cell.source = found[gid]
    return reference, set(wanted) - set(found)


def _released_sources(wanted: dict[str, str]) -> dict[str, str]:
    """The released source of each grade id in ``wanted``, found by its checksum."""
    import nbformat

    found: dict[str, str] = {}
    for path in released_exercises():
        for cell in nbformat.read(path, as_version=4).cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in wanted and gid not in found and cell_checksum(cell) == wanted[gid]:
                found[gid] = cell.source
    return found


def check_notebook(
    path: str | Path, timeout: float = 10.0, referee: Any = None
) -> tuple[list[QuestionReport], list[str]]:
    """Judge a learner's notebook with the referee, without the hidden cases.

    Returns a report per graded test cell, and notes: on test cells edited or deleted (their
    question is judged all the same), and on cells grading would not run.

    The same path as grading: the notebook's answer cells run in a sandboxed worker, never in
    this process, and the verdicts are the ones grading gives on the visible cases. Output to
    stderr and warnings do not matter. The file is only read. Pass a ``Referee`` to share
    its worker between notebooks (the caller closes it).
    """
    nb = _read_ours(path)
    edited = _edited_cells(nb)
    # the course's own code cells (setup), edited; a test cell stays one by its marks, even
    # edited until it names no question (told by _unjudged)
    locked = sorted(
        {
            c.metadata["nbgrader"]["grade_id"]
            for c in nb.cells
            if c.cell_type == "code"
            and not is_grade(c)
            and c.metadata.get("nbgrader", {}).get("grade_id") in edited
        }
    )
    reference, kept = _as_released(nb, set(locked))
    submission = read_submission(nb, reference)
    notes = [edited_test_note(gid) for gid, _q, _p in graded_cells(nb) if gid in edited]
    notes += [edited_locked_note(gid) for gid in locked]
    notes += [not_restored_note(gid) for gid in sorted(kept)]
    variants = _own_variants(nb)
    own = referee is None
    referee = Referee(Worker, call_limit=timeout) if own else referee
    reports = []
    try:
        for gid, qid, points in graded_cells(nb):
            plan = Plan.make(own_variant(qid, variants), None, own=qid.endswith(f":{OWN}"))
            result = referee.judge(submission, plan)  # an edited test cell: the same
            message = "" if result.passed else str(result)
            status = (
                N_("passed")
                if result.passed
                else N_("not attempted")
                if result.tier == Tier.NOT_ATTEMPTED
                else N_("failing")
            )
            reports.append(QuestionReport(gid, points, 0.0 if message else points, message, status))
    finally:
        if own:
            referee.close()
    for report, note in _unjudged(nb, {r.grade_id for r in reports}, edited):
        reports.append(report)
        notes.append(note)
    return reports, notes + submission.notes


def _unjudged(nb: Any, judged: set[str], edited: set[str]) -> list[tuple[QuestionReport, str]]:
    """A report and a note for each test cell of the notebook's metadata that ``check`` could
    not judge: deleted, or edited until it names no question (which one it checked went
    with the cell's text). Grading judges them all the same, from the released cells."""
    found = []
    for gid, points in nb.metadata["gather_course"].get("tests", {}).items():
        if gid in judged:
            continue
        message = _(
            "Not judged: check needs the test cell as released to know its question (grading "
            "does not). To see its verdict here, copy the cell back from a fresh exercise "
            "notebook."
        )
        gone = gid not in edited  # (an edited cell is still there)
        status = N_("deleted") if gone else N_("edited")
        note = deleted_test_note(gid) if gone else edited_test_note(gid)
        found.append((QuestionReport(gid, float(points), 0.0, message, status), note))
    return found
