"""Grading a whole class: the referee decides, nbgrader records; past broken submissions."""

from __future__ import annotations

import contextlib
import csv
import datetime
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .._errors import GatherCourseError
from .._i18n import edition
from ..course._course import (
    PROTECTED,
    RELEASE,
    SOURCE,
    known_assignment,
    nbgrader_api,
    nbgrader_errors,
)
from ._classes import own_variants
from ._classjob import student_job
from ._journal import FOLDER, Journal
from ._pools import open_pool
from ._record import record
from ._verdict_log import VerdictLog

LOG = "grading-log.jsonl"  # the instructor's log, in the course root
WARNINGS_LOG = "nbgrader-warnings.log"  # nbgrader's own warnings, kept off the terminal


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


def _check_database(root: Path) -> None:
    """A gradebook on a database server needs a course id: nbgrader files every assignment
    under its course, and creates no course row for an empty id (SQLite lets that pass,
    PostgreSQL refuses the assignment)."""
    with nbgrader_api(root) as api:
        url, course = str(api.coursedir.db_url), api.coursedir.course_id
    if not url.startswith("sqlite") and not course:
        server = url.split(":", 1)[0].split("+", 1)[0]
        raise GatherCourseError(
            f"the gradebook is on a database server ({server}), and nbgrader files every "
            "assignment under a course: set c.CourseDirectory.course_id = '...' in "
            "nbgrader_config.py (the same id as on JupyterHub's exchange)."
        )


@contextlib.contextmanager
def _gradebook_lock(root: Path) -> Iterator[None]:
    """One grading run at a time writes the gradebook (two runs at once, say two
    assignments, would both add the course and the same students: nbgrader does not guard
    that). Judging runs outside it."""
    import fcntl

    folder = root / FOLDER
    folder.mkdir(exist_ok=True)
    with open(folder / "gradebook.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


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


def release_notebooks(root: Path, api: Any, assignment: str) -> dict[str, Any]:
    """The student notebooks of ``assignment`` as released: what submissions are compared with."""
    import nbformat

    folder = root / RELEASE / assignment
    if any(folder.glob("*.ipynb")):
        return {p.name: nbformat.read(p, 4) for p in sorted(folder.glob("*.ipynb"))}
    with _generated(api, assignment) as made:
        return {p.name: nbformat.read(p, 4) for p in sorted(made.glob("*.ipynb"))}


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


def grade_class(
    root: Path,
    assignment: str,
    csv_path: Path,
    timeout: float | None = None,
    progress: TextIO = sys.stderr,
    jobs: int | None = None,
    require_sandbox: bool = False,
    pool: Any = None,
    scheduler: str | None = None,
) -> list[Outcome]:
    """Grade every submission of ``assignment`` with the referee, write ``csv_path``.

    Scores are decided by the referee, outside the students' code; nbgrader records them
    (gradebook, ``autograded/``, feedback), from this process only. A submission that
    cannot be graded is reported with the reason and scored 0; every other student is
    still graded. ``pool`` (from :func:`._pools.open_pool`: the embedded pool, or a Dask
    cluster with ``scheduler``) lets several assignments share warm workers. Each result
    is kept in the journal as it arrives: a run cut short is taken up by the next one.
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
        own = open_pool(
            scheduler, min(jobs or os.cpu_count() or 1, len(students)), timeout, require_sandbox
        )
        try:
            return grade_class(root, assignment, csv_path, progress=progress, pool=own)
        finally:
            own.close()
    _check_database(root)
    journal = Journal(root, assignment)
    _log(
        root,
        {
            "time": datetime.datetime.now().isoformat(timespec="seconds"),
            "assignment": assignment,
            "secret_seed": journal.secret,
            "resumed": journal.resumed,
            "pool": pool.describe(),
            "jobs": len(pool),
            "students": len(students),
        },
    )
    with _gradebook_lock(root), nbgrader_api(root) as api:
        _register(api, root, assignment)
        released = release_notebooks(root, api, assignment)
    log = VerdictLog(csv_path, assignment, released, edition(next(iter(released.values()))))
    try:
        results = _judge_all(root, assignment, students, released, pool, journal, progress, log)
        problems = {s: r["problem"] for s, r in results.items() if r["problem"]}
        with _gradebook_lock(root), _warnings_to_log(root, assignment):
            record(root, assignment, students, results, problems)
            journal.end()
            graded = _scores(root, assignment, students)
        log.end()
    finally:
        log.close()
    outcomes = []
    for student in students:
        outcome = graded.get(student, Outcome(student, False))
        if student in problems:  # whatever the gradebook holds for it is not a grade
            outcome = Outcome(student, False, 0.0, outcome.max_score, {}, problems[student])
        outcome.notes = list(results[student]["notes"])
        outcomes.append(outcome)
    _write_csv(csv_path, outcomes)
    return outcomes


def _judge_all(
    root: Path,
    assignment: str,
    students: list[str],
    released: dict[str, Any],
    pool: Any,
    journal: Journal,
    progress: TextIO,
    log: VerdictLog,
) -> dict[str, dict[str, Any]]:
    """Every student's verdicts: kept in the journal from a run cut short, or judged by the
    pool now (each kept in the journal and the verdict log as it arrives)."""
    results: dict[str, dict[str, Any]] = {}
    todo = []
    own = own_variants(root, released)
    for student in students:
        folder = root / "submitted" / student / assignment
        job = student_job(folder, student, released, own(student))
        kept = journal.done(student, job.digest)
        if kept is None:
            todo.append(job)
        else:
            results[student] = kept
            log.add(kept, job.variants)
    variants = {job.student: job.variants for job in todo}
    bar = _bar(progress, assignment, len(students), len(results))
    try:
        for result in pool.run(todo, released, journal.secret) if todo else ():
            journal.add(result)
            log.add(result, variants.get(result["student"]))
            results[result["student"]] = result
            bar.set_postfix_str(result["student"], refresh=False)
            bar.update(1)
    finally:
        bar.close()
    return results


def _bar(out: TextIO, assignment: str, total: int, done: int) -> Any:
    """The class's progress on a terminal: done / total, the rate and the time left."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=done,
        desc=assignment,
        unit="submission",
        file=out,
        mininterval=0.5,
        dynamic_ncols=True,
        disable=None if out.isatty() else False,
    )


@contextlib.contextmanager
def _warnings_to_log(root: Path, assignment: str) -> Iterator[None]:
    """nbgrader's own warnings (SQLAlchemy's SAWarning as it writes the gradebook) go to
    :data:`WARNINGS_LOG` in the course root, not to the terminal: they are nbgrader's, not
    the class's."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    if caught:
        seen = sorted({f"{w.category.__name__}: {str(w.message)[:300]}" for w in caught})
        when = datetime.datetime.now().isoformat(timespec="seconds")
        with open(root / WARNINGS_LOG, "a", encoding="utf-8") as f:
            f.writelines(f"{when} {assignment}: {line}\n" for line in seen)


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
