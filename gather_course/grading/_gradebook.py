"""nbgrader's gradebook, as grading uses it: where it is, one writer at a time, the assignment
registered, the scores read back, nbgrader's warnings kept off the terminal.

Only the instructor's process touches it (:mod:`._record` writes the verdicts).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from ..course import SOURCE, nbgrader_api, nbgrader_errors
from ._journal import FOLDER

WARNINGS_LOG = "nbgrader-warnings.log"  # nbgrader's own warnings, kept off the terminal


def check_database(root: Path) -> None:
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
def gradebook_lock(root: Path) -> Iterator[None]:
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
def gradebook(root: Path) -> Iterator[Any]:
    """The course's nbgrader gradebook, where its config puts it (``CourseDirectory.db_url``;
    by default ``gradebook.db`` in the root), opened by nbgrader's own API."""
    with nbgrader_api(root) as api, api.gradebook as gb:
        yield gb


def gradebook_knows(root: Path, assignment: str) -> bool:
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
def generated(api: Any, assignment: str) -> Iterator[Path]:
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


def register(api: Any, root: Path, assignment: str) -> None:
    """Put the assignment's test cells in the gradebook without touching exercises/."""
    if not gradebook_knows(root, assignment):
        _new_database(api.coursedir.db_url)
        with generated(api, assignment):
            pass


def _new_database(db_url: str) -> None:
    """Make a new SQLite gradebook as nbgrader's first ``Gradebook`` does (its tables, and
    the migrations' head in ``alembic_version``), reading the head here: nbgrader runs
    ``alembic heads`` in a new Python process for it (about 1 s of CPU on a fresh course).
    A database that exists, or on a server, is left to nbgrader."""
    import os

    if not db_url.startswith("sqlite:///") or Path(db_url.removeprefix("sqlite:///")).exists():
        return
    import nbgrader
    from alembic.script import ScriptDirectory
    from nbgrader.api import Base
    from sqlalchemy import create_engine, text

    head = ScriptDirectory(os.path.join(os.path.dirname(nbgrader.__file__), "alembic"))
    engine = create_engine(db_url, future=True)
    try:
        Base.metadata.create_all(bind=engine)
        with engine.begin() as db:
            db.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL);"))
            db.execute(
                text("INSERT INTO alembic_version (version_num) VALUES (:v)"),
                {"v": head.get_current_head()},
            )
    finally:
        engine.dispose()


@dataclasses.dataclass(frozen=True)
class Scores:
    """One student's submission as the gradebook holds it: the points before nbgrader's
    late penalty, the penalty, and how late (by the time grading trusts)."""

    raw: float
    max_score: float
    questions: dict[str, float]
    late_penalty: float = 0.0
    seconds_late: float = 0.0
    due: datetime.datetime | None = None  # the due date (with the student's extension), UTC

    @property
    def score(self) -> float:
        """The score after the late penalty (nbgrader's export: score minus penalty)."""
        return max(0.0, self.raw - self.late_penalty)


def scores(gb: Any, assignment: str, students: list[str]) -> dict[str, Scores]:
    """Each student's :class:`Scores`, for each student the gradebook has a submission of
    ``assignment`` for: nbgrader's own scores (its SQL), read a few hundred students a
    query."""
    found: dict[str, Scores] = {}
    for start in range(0, len(students), _CHUNK):
        found.update(_scores(gb, assignment, students[start : start + _CHUNK]))
    return {s: found[s] for s in students if s in found}


_CHUNK = 500  # students a query


def _scores(gb: Any, assignment: str, students: list[str]) -> dict[str, Scores]:
    from nbgrader.api import Assignment, BaseCell, Grade, SubmittedAssignment, SubmittedNotebook

    sub = SubmittedAssignment
    chosen = (Assignment.name == assignment, sub.student_id.in_(students))
    questions: dict[str, dict[str, float]] = {s: {} for s in students}
    for student, name, score in (
        gb.db.query(sub.student_id, BaseCell.name, Grade.score)
        .join(Assignment, Assignment.id == sub.assignment_id)
        .join(SubmittedNotebook, SubmittedNotebook.assignment_id == sub.id)
        .join(Grade, Grade.notebook_id == SubmittedNotebook.id)
        .join(BaseCell, BaseCell.id == Grade.cell_id)
        .filter(*chosen)
    ):
        questions[student][name] = float(score)
    found = {}
    for student, raw, most, penalty, timestamp, extension, due in (
        gb.db.query(
            sub.student_id,
            sub.score,
            sub.max_score,
            sub.late_submission_penalty,
            sub.timestamp,
            sub.extension,
            Assignment.duedate,
        )
        .join(Assignment, Assignment.id == sub.assignment_id)
        .filter(*chosen)
    ):
        if due is not None and extension is not None:  # nbgrader's SubmittedAssignment.duedate
            due = due + extension
        late = 0 if timestamp is None or due is None else max(0, (timestamp - due).total_seconds())
        found[student] = Scores(
            float(raw),
            float(most),
            questions[student],
            float(penalty or 0.0),
            float(late or 0.0),
            due.replace(tzinfo=datetime.timezone.utc) if due else None,
        )
    return found


@contextlib.contextmanager
def warnings_to_log(root: Path, assignment: str) -> Iterator[None]:
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
