"""Grading a whole class: the referee decides, nbgrader records; past broken submissions."""

from __future__ import annotations

import contextlib
import csv
import datetime
import json
import os
import queue
import secrets
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .._errors import GatherCourseError
from ..course._course import (
    PROTECTED,
    RELEASE,
    SOURCE,
    known_assignment,
    nbgrader_api,
    nbgrader_errors,
)
from ..questions._result import CheckResult
from ._referee import CALL_LIMIT, NotGraded, Plan, Referee
from ._sandbox import SANDBOX, Worker, isolation
from ._submission import graded_cells, read_submission
from .nbgrader_plugins import RefereeVerdicts

LOG = "grading-log.jsonl"  # the instructor's log, in the course root


@dataclass
class Outcome:
    """One student's grading: the scores, or why the submission could not be graded."""

    student: str
    graded: bool
    score: float = 0.0
    max_score: float = 0.0
    questions: dict[str, float] = field(default_factory=dict)
    problem: str = ""
    notes: list[str] = field(default_factory=list)


def submissions(root: Path, assignment: str) -> list[str]:
    """Students with a submission of ``assignment`` in ``submitted/<student>/<assignment>/``."""
    base = root / "submitted"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / assignment).is_dir())


@contextlib.contextmanager
def _gradebook(root: Path) -> Iterator[Any]:
    """The course's nbgrader gradebook, where its config puts it (``CourseDirectory.db_url``;
    by default ``gradebook.db`` in the root), opened by nbgrader's own API."""
    with nbgrader_api(root) as api, api.gradebook as gb:
        yield gb


def _gradebook_knows(root: Path, assignment: str) -> bool:
    """Whether the gradebook has the assignment's notebooks (without creating a database)."""
    from nbgrader.api import MissingEntry

    with nbgrader_api(root) as api:
        url = api.coursedir.db_url
        if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
            return False
        with api.gradebook as gb:
            try:
                return bool(gb.find_assignment(assignment).notebooks)
            except MissingEntry:
                return False


@contextlib.contextmanager
def _generated(api: Any, assignment: str) -> Iterator[Path]:
    """nbgrader's generate_assignment into a temporary folder: the gradebook learns the
    assignment's test cells, and ``exercises/`` is not touched."""
    with tempfile.TemporaryDirectory(prefix="gather-course-grade-") as tmp:
        release_dir = api.coursedir.release_directory
        api.coursedir.release_directory = tmp
        try:
            done = api.generate_assignment(assignment, force=True, create=True)
        finally:
            api.coursedir.release_directory = release_dir
        if not done["success"]:
            raise GatherCourseError(
                f"nbgrader could not read the assignment {assignment!r} "
                f"from {SOURCE}/: {nbgrader_errors(done)}"
            )
        yield Path(tmp, assignment)


def _register(api: Any, root: Path, assignment: str) -> None:
    """Put the assignment's test cells in the gradebook without touching exercises/."""
    if not _gradebook_knows(root, assignment):
        with _generated(api, assignment):
            pass


def _submitted(gb: Any, assignment: str, students: list[str]) -> Iterator[tuple[str, Any]]:
    """(student, gradebook submission) for each student the gradebook has one for."""
    from nbgrader.api import MissingEntry

    for student in students:
        try:
            yield student, gb.find_submission(assignment, student)
        except MissingEntry:
            continue


def _scores(root: Path, assignment: str, students: list[str]) -> dict[str, Outcome]:
    found = {}
    with _gradebook(root) as gb:
        for student, sub in _submitted(gb, assignment, students):
            questions = {g.name: float(g.score) for nb in sub.notebooks for g in nb.grades}
            found[student] = Outcome(
                student, True, float(sub.score), float(sub.max_score), questions
            )
    return found


def _progress(out: TextIO, done: int, total: int, label: str) -> None:
    width = 24
    filled = width * done // total
    bar = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label}"
    if out.isatty():
        out.write("\r" + bar.ljust(72) + ("\n" if done == total else ""))
    else:
        out.write(bar + "\n")
    out.flush()


def _release_notebooks(root: Path, api: Any, assignment: str) -> dict[str, Any]:
    """The student notebooks of ``assignment`` as released: what submissions are compared with."""
    import nbformat

    folder = root / RELEASE / assignment
    if any(folder.glob("*.ipynb")):
        return {p.name: nbformat.read(p, 4) for p in sorted(folder.glob("*.ipynb"))}
    with _generated(api, assignment) as made:
        return {p.name: nbformat.read(p, 4) for p in sorted(made.glob("*.ipynb"))}


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


def referee_student(
    referee: Referee, folder: Path, released: dict[str, Any], secret: int | None
) -> tuple[dict[str, CheckResult], list[str]]:
    """Every question of one student's submission, judged by ``referee``.

    Raises :class:`NotGraded` with the reason when the submission cannot be graded.
    """
    import nbformat

    verdicts: dict[str, CheckResult] = {}
    notes: list[str] = []
    for name, reference in released.items():
        path = folder / name
        if not path.is_file():
            raise NotGraded(f"{name} is missing from the submission.")
        try:
            nb = nbformat.read(path, as_version=4)
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


def csv_target(root: Path, csv_path: Path) -> Path:
    """``csv_path``, resolved, unless it lies in a folder our commands never write into."""
    csv_path = csv_path.resolve()
    for folder in PROTECTED:
        if (root / folder).resolve() in csv_path.parents:
            raise GatherCourseError(f"the CSV must not be written into {folder}/; got {csv_path}.")
    return csv_path


def _log(root: Path, entry: dict[str, Any]) -> None:
    """The instructor's log: one JSON line per grading run (the secret seed is kept here only)."""
    with open(root / LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


@contextlib.contextmanager
def referee_pool(
    jobs: int | None = None, timeout: float | None = None, require_sandbox: bool = False
) -> Iterator[list[Referee]]:
    """``jobs`` referees, each with a warm worker (started now)."""
    level = isolation()
    if require_sandbox and level.level != SANDBOX:
        raise GatherCourseError(f"--require-sandbox: no sandbox here ({level.detail}).")
    referees = [
        Referee(Worker, call_limit=timeout or CALL_LIMIT)
        for _ in range(max(1, jobs or os.cpu_count() or 1))
    ]
    for referee in referees:  # the workers import torch while nbgrader sets up
        referee.worker  # noqa: B018 - starts it now
    try:
        yield referees
    finally:
        for referee in referees:
            referee.close()


def grade_class(
    root: Path,
    assignment: str,
    csv_path: Path,
    timeout: float | None = None,
    progress: TextIO = sys.stderr,
    jobs: int | None = None,
    require_sandbox: bool = False,
    pool: list[Referee] | None = None,
) -> list[Outcome]:
    """Grade every submission of ``assignment`` with the referee, write ``csv_path``.

    Scores are decided by the referee, outside the students' code; nbgrader records them
    (gradebook, ``autograded/``, feedback). A submission that cannot be graded is reported
    with the reason and scored 0; every other student is still graded. ``pool`` (from
    :func:`referee_pool`) lets several assignments share warm workers.
    """
    known_assignment(root, assignment)
    csv_path = csv_target(root, csv_path)
    students = submissions(root, assignment)
    if not students:
        raise GatherCourseError(
            f"no submissions of {assignment!r}: expected folders "
            f"submitted/<student>/{assignment}/ (nbgrader collect puts "
            "them there)."
        )
    if pool is None:
        with referee_pool(
            min(jobs or os.cpu_count() or 1, len(students)), timeout, require_sandbox
        ) as own:
            return grade_class(root, assignment, csv_path, progress=progress, pool=own)
    secret = secrets.randbits(63)
    _log(
        root,
        {
            "time": datetime.datetime.now().isoformat(timespec="seconds"),
            "assignment": assignment,
            "secret_seed": secret,
            "isolation": str(isolation()),
            "jobs": len(pool),
            "students": len(students),
        },
    )
    with nbgrader_api(root) as api:
        _register(api, root, assignment)
        released = _release_notebooks(root, api, assignment)
    verdicts, problems, notes = _referee_class(
        root, assignment, students, released, secret, pool, progress
    )
    _record(root, assignment, students, verdicts, problems, notes)
    graded = _scores(root, assignment, students)
    outcomes = []
    for student in students:
        outcome = graded.get(student, Outcome(student, False))
        if student in problems:  # whatever the gradebook holds for it is not a grade
            outcome = Outcome(student, False, 0.0, outcome.max_score, {}, problems[student])
        outcome.notes = notes.get(student, [])
        outcomes.append(outcome)
    _write_csv(csv_path, outcomes)
    return outcomes


def _baselines(referee: Referee, released: dict[str, Any], secret: int) -> None:
    """Time the course's solutions before any submission runs: no student's job can touch
    the measurement every verdict is compared with."""
    for nb in released.values():
        for _gid, qid, _points in graded_cells(nb):
            plan = Plan.make(qid, secret)
            if plan.question.vectorized and plan.question.timing:
                try:
                    referee.baseline(plan.question, plan.timing_seed)
                except NotGraded as exc:
                    raise GatherCourseError(f"grading cannot start: {exc}") from None


def _referee_class(
    root: Path,
    assignment: str,
    students: list[str],
    released: dict[str, Any],
    secret: int,
    pool: list[Referee],
    progress: TextIO,
):
    referees: queue.Queue[Referee] = queue.Queue()
    for referee in pool:
        referees.put(referee)
    verdicts: dict[str, dict[str, CheckResult]] = {}
    problems: dict[str, str] = {}
    notes: dict[str, list[str]] = {}

    def one(student: str) -> None:
        referee = referees.get()
        try:
            verdicts[student], notes[student] = referee_student(
                referee, root / "submitted" / student / assignment, released, secret
            )
        except NotGraded as exc:
            problems[student] = str(exc)
        except Exception as exc:  # noqa: BLE001 - one submission never stops the class
            problems[student] = (
                f"grading this submission failed ({type(exc).__name__}: "
                f"{str(exc)[:200]}); grade it by hand"
            )
        finally:
            referees.put(referee)

    _baselines(pool[0], released, secret)
    _progress(progress, 0, len(students), "starting")
    with ThreadPoolExecutor(max_workers=len(pool)) as threads:
        futures = {threads.submit(one, s): s for s in students}
        for n, future in enumerate(as_completed(futures), start=1):
            future.result()
            _progress(progress, n, len(students), futures[future])
    return verdicts, problems, notes


def _record(
    root: Path,
    assignment: str,
    students: list[str],
    verdicts: dict[str, dict[str, CheckResult]],
    problems: dict[str, str],
    notes: dict[str, list[str]],
) -> None:
    """Write the verdicts into nbgrader's gradebook through its own autograde (no execution)."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        IgnorePattern,
        LimitOutput,
        SaveAutoGrades,
    )

    table: dict[str, dict[str, dict[str, Any]]] = {}
    for student in students:
        extra = "".join(f"\nNote: {n}" for n in notes.get(student, []))
        if student in problems:
            message = f"NOT GRADED: {problems[student]}"
            table[student] = {"__all__": {"passed": False, "message": message}}
        else:
            table[student] = {
                gid: {"passed": r.passed, "message": str(r) + extra}
                for gid, r in verdicts.get(student, {}).items()
            }
    with tempfile.TemporaryDirectory(prefix="gather-course-verdicts-") as tmp:
        path = Path(tmp) / "verdicts.json"
        path.write_text(json.dumps(table), encoding="utf-8")
        overrides = {
            "Autograde.autograde_preprocessors": [
                RefereeVerdicts,
                IgnorePattern,
                ClearMetadataPreprocessor,
                LimitOutput,
                SaveAutoGrades,
                AssignLatePenalties,
                CheckCellMetadata,
            ],
            "RefereeVerdicts.verdicts_file": str(path),
        }
        with nbgrader_api(root, **overrides) as api:
            for student in students:
                done = api.autograde(assignment, student, force=True, create=True)
                if not done["success"] and student not in problems:
                    problems[student] = nbgrader_errors(done)
    if problems:
        _flag_for_manual_grading(root, assignment, [s for s in problems if s in students])


def _flag_for_manual_grading(root: Path, assignment: str, students: list[str]) -> None:
    with _gradebook(root) as gb:
        for _student, sub in _submitted(gb, assignment, students):
            for nb in sub.notebooks:
                for grade in nb.grades:
                    grade.needs_manual_grade = True
            gb.db.commit()


def _write_csv(path: Path, outcomes: list[Outcome]) -> None:
    questions = sorted({q for o in outcomes for q in o.questions})
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "score", "max_score", "status", *questions, "problem"])
        for o in outcomes:
            w.writerow(
                [
                    o.student,
                    f"{o.score:g}",
                    f"{o.max_score:g}",
                    "graded" if o.graded else "NOT GRADED",
                    *(f"{o.questions[q]:g}" if q in o.questions else "" for q in questions),
                    o.problem,
                ]
            )
