"""Autograding a whole class with nbgrader, one submission at a time, past broken ones."""

from __future__ import annotations

import csv
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ._course import PROTECTED, SOURCE, known_assignment, nbgrader_api, nbgrader_errors
from ._errors import GatherCourseError


@dataclass
class Outcome:
    """One student's grading: the scores, or why the submission could not be graded."""

    student: str
    graded: bool
    score: float = 0.0
    max_score: float = 0.0
    questions: dict[str, float] = field(default_factory=dict)
    problem: str = ""


def submissions(root: Path, assignment: str) -> list[str]:
    """Students with a submission of ``assignment`` in ``submitted/<student>/<assignment>/``."""
    base = root / "submitted"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / assignment).is_dir())


def _gradebook(root: Path) -> Any:
    """The course's nbgrader gradebook (``gradebook.db`` in the root)."""
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{root / 'gradebook.db'}")


def _gradebook_knows(root: Path, assignment: str) -> bool:
    from nbgrader.api import MissingEntry

    if not (root / "gradebook.db").is_file():
        return False
    with _gradebook(root) as gb:
        try:
            return bool(gb.find_assignment(assignment).notebooks)
        except MissingEntry:
            return False


def _register(api: Any, root: Path, assignment: str) -> None:
    """Put the assignment's test cells in the gradebook without touching exercises/."""
    if _gradebook_knows(root, assignment):
        return
    with tempfile.TemporaryDirectory(prefix="gather-course-grade-") as tmp:
        release_dir = api.coursedir.release_directory
        api.coursedir.release_directory = tmp
        try:
            done = api.generate_assignment(assignment, force=True, create=True)
        finally:
            api.coursedir.release_directory = release_dir
    if not done["success"]:
        raise GatherCourseError(f"nbgrader could not read the assignment {assignment!r} "
                                f"from {SOURCE}/: {nbgrader_errors(done)}")


def _scores(root: Path, assignment: str, students: list[str]) -> dict[str, Outcome]:
    from nbgrader.api import MissingEntry

    found = {}
    with _gradebook(root) as gb:
        for student in students:
            try:
                sub = gb.find_submission(assignment, student)
            except MissingEntry:
                continue
            questions = {g.name: float(g.score) for nb in sub.notebooks for g in nb.grades}
            found[student] = Outcome(student, True, float(sub.score), float(sub.max_score),
                                     questions)
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


def grade_class(root: Path, assignment: str, csv_path: Path, timeout: int | None = None,
                progress: TextIO = sys.stderr) -> list[Outcome]:
    """Autograde every submission of ``assignment``, write ``csv_path``, return the outcomes.

    A submission nbgrader cannot grade (a kernel that never answers, a corrupt file) is
    reported with nbgrader's reason and scored 0; the others are graded as usual.
    """
    known_assignment(root, assignment)
    csv_path = csv_path.resolve()
    for folder in PROTECTED:
        if (root / folder).resolve() in csv_path.parents:
            raise GatherCourseError(f"the CSV must not be written into {folder}/; "
                                    f"got {csv_path}.")
    students = submissions(root, assignment)
    if not students:
        raise GatherCourseError(f"no submissions of {assignment!r}: expected folders "
                                f"submitted/<student>/{assignment}/ (nbgrader collect puts "
                                "them there).")
    overrides = {"Execute.timeout": timeout} if timeout else {}
    problems: dict[str, str] = {}
    with nbgrader_api(root, **overrides) as api:
        _register(api, root, assignment)
        for n, student in enumerate(students):
            _progress(progress, n, len(students), student)
            done = api.autograde(assignment, student, force=True, create=True)
            if not done["success"]:
                problems[student] = nbgrader_errors(done)
    _progress(progress, len(students), len(students), "done")
    graded = _scores(root, assignment, students)
    outcomes = []
    for student in students:
        outcome = graded.get(student, Outcome(student, False))
        if student in problems:     # whatever the gradebook holds for it is not this run's
            outcome = Outcome(student, False, 0.0, outcome.max_score, {}, problems[student])
        outcomes.append(outcome)
    _write_csv(csv_path, outcomes)
    return outcomes


def _write_csv(path: Path, outcomes: list[Outcome]) -> None:
    questions = sorted({q for o in outcomes for q in o.questions})
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "score", "max_score", "status", *questions, "problem"])
        for o in outcomes:
            w.writerow([o.student, f"{o.score:g}", f"{o.max_score:g}",
                        "graded" if o.graded else "NOT GRADED",
                        *(f"{o.questions[q]:g}" if q in o.questions else "" for q in questions),
                        o.problem])
