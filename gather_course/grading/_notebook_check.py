"""A learner's check of one notebook, judged the way grading judges it.

``gather-course check`` and ``progress`` call :func:`check_notebook`: the notebook's answer
cells run in a sandboxed worker (never in this process) and the verdicts are the ones
grading gives on the visible cases, so what ``check`` says is what grading gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import N_, _
from .._tier import Tier
from ..course._course import notebook_file
from ..questions._classroom import MyClass
from ._classjob import own_variant
from ._referee import Plan, Referee
from ._sandbox import Worker
from ._submission import OWN, graded_cells, read_submission


@dataclass
class QuestionReport:
    """One graded test cell of a checked notebook."""

    grade_id: str
    points: float
    score: float
    message: str
    status: str = ""  # passed, not attempted, failing, edited or deleted

    @property
    def passed(self) -> bool:
        return self.score == self.points


def _is_ours(nb: Any) -> bool:
    from nbgrader.utils import is_grade

    return isinstance(nb.metadata.get("gather_course"), dict) and any(is_grade(c) for c in nb.cells)


_MY_CLASS = re.compile(r"""my_class\(["']([0-9a-f]+)["'],\s*roster=["']([0-9a-f ]*)["']\)""")


def _own_variants(nb: Any) -> dict[str, str]:
    """A class release's: {qid: this student's variant}, from the key in its setup cell and
    the student's id, as the notebook's own cells find them; {} for other notebooks."""
    qids = [q.partition(":")[0] for _g, q, _p in graded_cells(nb) if q.endswith(f":{OWN}")]
    if not qids:
        return {}
    found = next((m for c in nb.cells if (m := _MY_CLASS.search(c.source))), None)
    if found is None:
        raise GatherCourseError(
            _(
                "This notebook's test cells check each student's own variant, but its setup "
                "cell no longer opens the class (my_class). Take a fresh copy of the notebook."
            )
        )
    mine = MyClass(found.group(1), found.group(2))
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
    if not _is_ours(nb):
        raise GatherCourseError(
            _(
                "{path} is not one of the course's exercise notebooks (no gather_course "
                "metadata or graded test cells). Check a notebook from exercises/<assignment>/."
            ).format(path=path)
        )
    return nb


def _edited_tests(nb: Any) -> set[str]:
    """The grade ids of the locked cells whose checksum no longer matches (edited)."""
    from nbgrader.utils import compute_checksum, is_locked

    return {
        c.metadata["nbgrader"]["grade_id"]
        for c in nb.cells
        if is_locked(c)
        and "checksum" in c.metadata["nbgrader"]
        and compute_checksum(c) != c.metadata["nbgrader"]["checksum"]
    }


def check_notebook(
    path: str | Path, timeout: float = 10.0, referee: Any = None
) -> tuple[list[QuestionReport], list[str]]:
    """Judge a learner's notebook with the referee, without the hidden cases.

    Returns a report per graded test cell, and notes on cells grading would not run.

    The same path as grading: the notebook's answer cells run in a sandboxed worker, never in
    this process, and the verdicts are the ones grading gives on the visible cases. Output to
    stderr and warnings do not matter. The file is only read. Pass a ``Referee`` to share
    its worker between notebooks (the caller closes it).
    """
    nb = _read_ours(path)
    changed = _edited_tests(nb)
    submission = read_submission(nb, nb)
    variants = _own_variants(nb)
    own = referee is None
    referee = Referee(Worker, call_limit=timeout) if own else referee
    reports = []
    try:
        for gid, qid, points in graded_cells(nb):
            result = referee.judge(submission, Plan.make(own_variant(qid, variants), None))
            message = "" if result.passed else str(result)
            status = (
                N_("passed")
                if result.passed
                else N_("not attempted")
                if result.tier == Tier.NOT_ATTEMPTED
                else N_("failing")
            )
            if gid in changed:
                status, message = (
                    N_("edited"),
                    _(
                        "This test cell was edited. Grading refuses a notebook whose test "
                        "cells were changed; undo your change to the cell."
                    ),
                )
            reports.append(QuestionReport(gid, points, 0.0 if message else points, message, status))
    finally:
        if own:
            referee.close()
    present = {r.grade_id for r in reports}
    for gid, points in nb.metadata["gather_course"].get("tests", {}).items():
        if gid not in present:
            reports.append(
                QuestionReport(
                    gid,
                    float(points),
                    0.0,
                    _(
                        "This test cell was deleted. Grading refuses a notebook without its "
                        "test cells; restore it (copy it from a fresh exercise notebook)."
                    ),
                    N_("deleted"),
                )
            )
    return reports, submission.notes
