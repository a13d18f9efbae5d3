"""A class's roster: nbgrader's student CSV read as bad input is named, row by row, and the
students of a class folder's gradebook.

>>> _id_problem("ada_37q"), bool(_id_problem("bob smith"))
('', True)
"""

from __future__ import annotations

import re
from pathlib import Path

from .._errors import GatherCourseError
from ..course import alembic_on_path


def read_roster(path: Path) -> list[str]:
    """The student ids of nbgrader's student CSV (a column ``id``, as ``nbgrader db student
    import`` reads it), in file order. A blank row, a blank id, an id given twice or one
    nbgrader cannot use as a folder and file name stops with one line naming the row."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise GatherCourseError(f"cannot read the roster {path}: {why}.") from None
    header = next(csv.reader(lines[:1]), [])
    if "id" not in header:
        raise GatherCourseError(
            f"the roster {path} has no column 'id': expected nbgrader's student CSV "
            "(id,first_name,last_name,email), got columns "
            f"{', '.join(header) if header else 'none (the file is empty)'}."
        )
    at = header.index("id")
    seen: dict[str, int] = {}
    for row, values in enumerate(csv.reader(lines[1:]), start=2):
        problem = _roster_row_problem(values, at, seen)
        if problem:
            raise GatherCourseError(f"the roster {path}, row {row}: {problem}")
        seen[values[at]] = row
    if not seen:
        raise GatherCourseError(f"the roster {path} lists no student id.")
    return list(seen)


# An id becomes a folder (submitted/<id>/) and part of the exchange's file names
# (<id>+<assignment>+<time>): letters, digits and . _ @ -, not starting with . or -.
_ID = re.compile(r"[A-Za-z0-9_@][A-Za-z0-9._@-]{0,127}")


def _id_problem(student: str) -> str:
    if not student.strip():
        return "the id is blank: every row needs the student's id."
    if not _ID.fullmatch(student):
        return (
            f"the id {student!r} cannot name a student: nbgrader makes it a folder and part "
            "of submission file names (id+assignment+time). Use letters, digits and . _ @ - "
            "(not . or - first), without spaces, at most 128 characters."
        )
    return ""


def _roster_row_problem(values: list[str], at: int, seen: dict[str, int]) -> str:
    """What is wrong with a roster row (``values``; the id at ``at``), or ''."""
    if not any(v.strip() for v in values):
        return "the row is blank: remove it (each row is one student)."
    student = values[at] if at < len(values) else ""
    problem = _id_problem(student)
    if problem:
        return problem
    if student in seen:
        return (
            f"the id {student!r} is given again (first on row {seen[student]}): each student "
            "once, one id per student."
        )
    return ""


def gradebook_roster(target: Path, course: Path) -> list[str]:
    """The students of the gradebook of the class folder ``target``, sorted (``[]`` if it
    has none, or no gradebook yet: none is made). Its ``nbgrader_config.py`` says where the
    gradebook is, else the course's (``db_url``; by default ``target/gradebook.db``, where
    ``nbgrader db student import`` run in ``target`` puts it)."""
    from nbgrader.api import Gradebook
    from traitlets.config.loader import PyFileConfigLoader

    folder = target if (target / "nbgrader_config.py").is_file() else course
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    url = cfg.CourseDirectory.get("db_url") or f"sqlite:///{target / 'gradebook.db'}"
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///") :]).is_file():
        return []
    with alembic_on_path(), Gradebook(url) as gb:
        return sorted(s.id for s in gb.students)
