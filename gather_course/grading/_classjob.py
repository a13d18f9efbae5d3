"""One student's submission judged: the unit of class grading, plain data in and out.

The same code runs wherever a referee is: in the instructor's process (the embedded pool)
or on a Dask worker (:mod:`._dask`). It takes the student's notebooks as text and the
released notebooks, and gives back the verdicts as plain data (passed and message per test
cell, notes, or why the submission cannot be graded). Only the instructor's process writes
the gradebook (:mod:`._grade`).

>>> job = StudentJob("ada", {"basics.ipynb": None})
>>> job.student, job.digest == StudentJob("ada", {"basics.ipynb": None}).digest
('ada', True)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..questions._result import CheckResult
from ._referee import Plan, Referee
from ._submission import NotGraded, graded_cells, read_submission


@dataclass(frozen=True)
class StudentJob:
    """A student's submission as it travels: the text of each released notebook's name in
    their folder (None where the file is missing)."""

    student: str
    files: dict[str, str | None]

    @property
    def digest(self) -> str:
        """What the submission holds, hashed: a rerun skips only students whose files are
        those already judged."""
        data = json.dumps(self.files, sort_keys=True).encode()
        return hashlib.sha256(data).hexdigest()


def student_job(folder: Path, student: str, names: Iterable[str]) -> StudentJob:
    """The files ``names`` of ``folder``, read as text (bytes that are not UTF-8 become a
    notebook nbformat cannot read, which is reported as such)."""
    files: dict[str, str | None] = {}
    for name in names:
        path = folder / name
        files[name] = (
            path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else None
        )
    return StudentJob(student, files)


def _check_tests(nb: Any, released: Any) -> str:
    """Why a submitted notebook cannot be graded (a test cell deleted or edited), or ''."""
    from nbgrader.utils import compute_checksum

    mine = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    for gid, _qid, _points in graded_cells(released):
        if gid not in mine:
            return f"the test cell {gid} was deleted."
        original = next(
            c for c in released.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid
        )
        checksum = original.metadata["nbgrader"].get("checksum")
        if checksum and compute_checksum(mine[gid]) != checksum:
            return f"the test cell {gid} was edited."
    return ""


def referee_files(
    referee: Referee, files: dict[str, str | None], released: dict[str, Any], secret: int | None
) -> tuple[dict[str, CheckResult], list[str]]:
    """Every question of one submission (its notebooks' text), judged by ``referee``.

    Raises :class:`NotGraded` with the reason when the submission cannot be graded.
    """
    import nbformat

    verdicts: dict[str, CheckResult] = {}
    notes: list[str] = []
    for name, reference in released.items():
        text = files.get(name)
        if text is None:
            raise NotGraded(f"{name} is missing from the submission.")
        try:
            nb = nbformat.reads(text, as_version=4)
        except Exception as exc:  # noqa: BLE001 - a file that is not a notebook
            raise NotGraded(f"{name} is not a readable notebook ({type(exc).__name__}).") from None
        problem = _check_tests(nb, reference)
        if problem:
            raise NotGraded(f"{name}: {problem} Grading needs the course's test cells as released.")
        submission = read_submission(nb, reference)
        notes += submission.notes
        for gid, qid, _points in graded_cells(reference):
            verdicts[gid] = referee.judge(submission, Plan.make(qid, secret))
    return verdicts, notes


def referee_student(
    referee: Referee, folder: Path, released: dict[str, Any], secret: int | None
) -> tuple[dict[str, CheckResult], list[str]]:
    """:func:`referee_files` on the notebooks in ``folder``."""
    job = student_job(folder, folder.parent.name, released)
    return referee_files(referee, job.files, released, secret)


def judge_student(
    referee: Referee, job: StudentJob, released: dict[str, Any], secret: int
) -> dict[str, Any]:
    """One student's result as plain data: ``{"student", "digest", "verdicts": {grade_id:
    {"passed", "message"}}, "notes", "problem"}``; ``problem`` says why it was not graded."""
    result: dict[str, Any] = {
        "student": job.student,
        "digest": job.digest,
        "verdicts": {},
        "notes": [],
        "problem": "",
    }
    try:
        verdicts, notes = referee_files(referee, job.files, released, secret)
    except NotGraded as exc:
        result["problem"] = str(exc)
    except Exception as exc:  # noqa: BLE001 - one submission never stops the class
        result["problem"] = (
            f"grading this submission failed ({type(exc).__name__}: "
            f"{str(exc)[:200]}); grade it by hand"
        )
    else:
        result["verdicts"] = {
            gid: {"passed": bool(r.passed), "message": str(r)} for gid, r in verdicts.items()
        }
        result["notes"] = [str(n) for n in notes]
    return result


def baselines(referee: Referee, released: dict[str, Any], secret: int) -> None:
    """Time the course's solutions before any submission runs on this referee's machine:
    no student's job can touch the measurement every verdict is compared with."""
    for nb in released.values():
        for _gid, qid, _points in graded_cells(nb):
            plan = Plan.make(qid, secret)
            if plan.question.vectorized and plan.question.timing:
                referee.baseline(plan.question, plan.timing_seed)
