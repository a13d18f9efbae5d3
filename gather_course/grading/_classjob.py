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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._i18n import edition, speaking
from .._tier import Tier
from ..questions import CheckResult, exercise
from ._failures import GraderBroken
from ._frames import HOLD
from ._jobdata import _timing_bytes
from ._referee import Plan, Referee
from ._submission import (
    OWN,
    NotGraded,
    Submission,
    graded_cells,
    is_locked,
    read_submission,
)
from ._submission import checksum as cell_checksum


@dataclass(frozen=True)
class StudentJob:
    """A student's submission as it travels: the text of each released notebook's name in
    their folder (None where the file is missing)."""

    student: str
    files: dict[str, str | None]
    # a class release's: {qid: this student's variant}; None when they are not on its roster
    variants: dict[str, str] | None = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """What the submission holds (and the variants it is judged on), hashed: a rerun
        skips only students whose files are those already judged."""
        data = json.dumps([self.files, self.variants], sort_keys=True).encode()
        return hashlib.sha256(data).hexdigest()


def student_job(
    folder: Path, student: str, names: Iterable[str], variants: dict[str, str] | None = None
) -> StudentJob:
    """The files ``names`` of ``folder``, read as text (bytes that are not UTF-8 become a
    notebook nbformat cannot read, which is reported as such)."""
    files: dict[str, str | None] = {}
    for name in names:
        path = folder / name
        files[name] = (
            path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else None
        )
    return StudentJob(student, files, {} if variants is None else variants)


def _check_tests(nb: Any, released: Any) -> list[str]:
    """The student's notes on the test cells they deleted or edited: graded all the same.

    Grading never runs a submission's test cells: the referee judges each question from the
    released notebook's (:func:`graded_cells` of ``released``), and nbgrader's autograde puts
    the released cell back (``OverwriteCells``, and ``add_missing_cells`` in the course's
    nbgrader_config.py for a deleted one) before the verdict goes into it. The notes are the
    words ``gather-course check`` says (:mod:`._test_notes`), in the student's language.
    """
    from ._test_notes import deleted_test_note, edited_locked_note, edited_test_note

    mine = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    notes = []
    tests = {gid for gid, _qid, _points in graded_cells(released)}
    for original in released.cells:
        gid = original.metadata.get("nbgrader", {}).get("grade_id")
        if gid not in tests and not (original.cell_type == "code" and is_locked(original)):
            continue  # an answer cell, or markdown
        if gid not in mine:
            if gid in tests:
                notes.append(deleted_test_note(gid))
            continue
        checksum = original.metadata["nbgrader"].get("checksum")
        if checksum and cell_checksum(mine[gid]) != checksum:
            notes.append(edited_test_note(gid) if gid in tests else edited_locked_note(gid))
    return notes


def own_variant(qid: str, variants: dict[str, str] | None) -> str:
    """``qid`` as :func:`graded_cells` gives it, with ``@student`` made this student's variant
    (``variants``, from the class's roster); NotGraded for a student not on the roster."""
    name, _sep, variant = qid.partition(":")
    if variant != OWN:
        return qid
    if variants is None or name not in variants:
        raise NotGraded(
            "this student is not on the class roster (class.json), so they have no variants; "
            "add them to the roster and release again, or grade by hand"
        )
    return f"{name}:{variants[name]}"


def referee_files(
    referee: Referee,
    files: dict[str, str | None],
    released: dict[str, Any],
    secret: int | None,
    variants: dict[str, str] | None = None,
) -> tuple[dict[str, CheckResult], list[str]]:
    """Every question of one submission (its notebooks' text), judged by ``referee``; each
    student's own variant where the release gives one (``variants``: {qid: variant}).

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
        submission = read_submission(nb, reference)
        notes += _check_tests(nb, reference) + submission.notes  # graded all the same
        for gid, qid, _points in graded_cells(reference):
            plan = Plan.make(own_variant(qid, variants), secret, own=qid.endswith(f":{OWN}"))
            verdicts[gid] = referee.judge(submission, plan)
    return verdicts, notes


def judge_student(
    referee: Referee, job: StudentJob, released: dict[str, Any], secret: int
) -> dict[str, Any]:
    """One student's result as plain data: ``{"student", "digest", "verdicts": {grade_id:
    {"passed", "message", "tier", "diagnosis"}}, "notes", "problem"}``; ``problem`` says why
    it was not graded (``diagnosis``: ``[template, args]``, what went wrong, for the class
    report)."""
    result: dict[str, Any] = {
        "student": job.student,
        "digest": job.digest,
        "verdicts": {},
        "notes": [],
        "problem": "",
    }
    # the feedback speaks the course's edition (a Chinese course's students read Chinese)
    lang = edition(next(iter(released.values()))) if released else "en"
    try:
        with speaking(lang):
            verdicts, notes = referee_files(referee, job.files, released, secret, job.variants)
            result["verdicts"] = {
                gid: {
                    "passed": bool(r.passed),
                    "message": str(r),
                    "tier": r.tier.value,
                    "diagnosis": r.diagnosis.plain() if r.diagnosis else None,
                }
                for gid, r in verdicts.items()
            }
            result["notes"] = [str(n) for n in notes]
    except NotGraded as exc:
        result["problem"] = str(exc)
    except GraderBroken:
        raise  # the grader's own failure: it stops the run, and blames no one
    except Exception as exc:  # noqa: BLE001 - one submission never stops the class
        result["problem"] = (
            f"grading this submission failed ({type(exc).__name__}: "
            f"{str(exc)[:200]}); grade it by hand"
        )
    return result


def self_test(referee: Referee, released: dict[str, Any], secret: int | None = None) -> None:
    """Grade the course's own solution of the first question once, before any submission:
    a grader that cannot pass it raises :class:`GraderBroken`, naming what it saw, and
    grades no one. With the run's ``secret`` it meets the students' cases (their expected
    outputs are made once). Its CPU time is not judged here: :func:`baselines` times the
    solution next, and a verdict of timing alone would not be held against the grader (a
    busy machine, not a broken one); here it would be one more job before the first
    submission."""
    for nb in released.values():
        for _gid, qid, _points in graded_cells(nb):
            q = exercise(qid.partition(":")[0])
            mine = Submission([_IMPORTS, q.solution_code])
            plan = Plan.make(q.qid, secret)
            untimed = replace(plan, question=replace(plan.question, timing=None))
            verdict = referee.judge(mine, untimed)
            if not verdict.passed and verdict.tier != Tier.NOT_VECTORIZED:
                first = str(verdict).splitlines()[0]
                raise GraderBroken(
                    f"the grader fails the course's own solution of {q.qid} ({first}): it "
                    "would blame every student for its own failure; no one is graded"
                )
            return


_IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"


def baselines(referee: Referee, released: dict[str, Any], secret: int) -> None:
    """Check the grader on the course's own solution (:func:`self_test`), then time the
    solutions before any submission runs on this referee's machine: no student's job can
    touch the measurement every verdict is compared with."""
    timed = []
    for nb in released.values():
        for _gid, qid, _points in graded_cells(nb):
            plan = Plan.make(qid.replace(f":{OWN}", ""), secret)  # the public baseline
            if plan.question.vectorized and plan.question.timing:
                timed.append(plan)
    for plan in timed[:HOLD]:  # made while the first worker still warms up, not after it
        _timing_bytes(plan.question, plan.timing_seed)
    self_test(referee, released, secret)
    for plan in timed:
        referee.baseline(plan.question, plan.timing_seed)
