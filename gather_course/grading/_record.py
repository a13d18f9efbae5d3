"""The class's verdicts written into nbgrader's gradebook, through nbgrader's own autograde.

nbgrader's ``autograde`` runs for each student with the referee's verdicts in place of
running the notebook (:class:`.nbgrader_plugins.RefereeVerdicts`): the gradebook, the
``autograded/`` notebooks, formgrader, export and feedback are nbgrader's as usual.

What is left out is only what nbgrader repeats. Stock, it opens the gradebook about nine
times per student (each step of its set-up and each of four preprocessors makes its own
connection and checks every table), and checks the cell metadata a second time after
preprocessors that change none: 0.11 s of CPU per student, more than the rest of grading
in the instructor's process (docs/benchmarks.md, issue 40). Here every student is written
through one connection (:func:`.nbgrader_plugins.one_gradebook`), and the metadata is
checked once, when the submission is sanitised. ``tests/test_record.py`` compares what
is written with stock ``nbgrader autograde``'s, row by row and notebook by notebook, and
guards the nbgrader steps mirrored here against a change of nbgrader.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..course._course import nbgrader_api, nbgrader_errors


def _verdict_table(
    students: list[str], results: dict[str, dict[str, Any]], problems: dict[str, str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """{student: {grade_id: {passed, message}}} as RefereeVerdicts reads it (a submission
    that was not graded: ``__all__``, failed with the reason, for every test cell)."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for student in students:
        extra = "".join(f"\nNote: {n}" for n in results[student]["notes"])
        if student in problems:
            message = f"NOT GRADED: {problems[student]}"
            table[student] = {"__all__": {"passed": False, "message": message}}
        else:
            table[student] = {
                gid: {"passed": bool(v["passed"]), "message": str(v["message"]) + extra}
                for gid, v in results[student]["verdicts"].items()
            }
    return table


def _preprocessors(verdicts_file: Path) -> dict[str, Any]:
    """nbgrader's two autograde passes with the verdicts in place of ``Execute``, each
    gradebook step on the open connection, the metadata checked once."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        ClearOutput,
        DeduplicateIds,
        IgnorePattern,
        LimitOutput,
    )

    from . import nbgrader_plugins as p

    return {
        "Autograde.sanitize_preprocessors": [
            ClearOutput,
            DeduplicateIds,
            p.OverwriteKernelspecOnce,
            p.OverwriteCellsOnce,
            p.CheckCellMetadataOnce,
        ],
        "Autograde.autograde_preprocessors": [
            p.RefereeVerdicts,
            IgnorePattern,
            ClearMetadataPreprocessor,
            LimitOutput,
            p.SaveAutoGradesOnce,
            p.AssignLatePenaltiesOnce,
        ],
        "RefereeVerdicts.verdicts_file": str(verdicts_file),
    }


def record(
    root: Path,
    assignment: str,
    students: list[str],
    results: dict[str, dict[str, Any]],
    problems: dict[str, str],
) -> None:
    """Write the verdicts into the gradebook and ``autograded/`` (nbgrader's autograde, no
    execution). A student nbgrader cannot record gets a problem in ``problems``; every
    student with a problem is flagged for manual grading."""
    from nbgrader.utils import capture_log, temp_attrs

    from .nbgrader_plugins import one_gradebook

    with tempfile.TemporaryDirectory(prefix="gather-course-verdicts-") as tmp:
        path = Path(tmp) / "verdicts.json"
        path.write_text(json.dumps(_verdict_table(students, results, problems)), "utf-8")
        with (
            nbgrader_api(root, **_preprocessors(path)) as api,
            one_gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb,
        ):
            autograde = _autograde_class()
            for student in students:
                with temp_attrs(api.coursedir, assignment_id=assignment, student_id=student):
                    app = autograde(coursedir=api.coursedir, parent=api)
                    app.force, app.create_student = True, True
                    done = capture_log(app)
                gb.db.remove()  # this student's rows leave the session (it stays open)
                if not done["success"] and student not in problems:
                    problems[student] = nbgrader_errors(done)
            for student in [s for s in problems if s in students]:
                _flag_for_manual_grading(gb, assignment, student)


def _flag_for_manual_grading(gb: Any, assignment: str, student: str) -> None:
    from nbgrader.api import MissingEntry

    try:
        sub = gb.find_submission(assignment, student)
    except MissingEntry:
        return
    for nb in sub.notebooks:
        for grade in nb.grades:
            grade.needs_manual_grade = True
    gb.db.commit()


def _autograde_class() -> type:
    """nbgrader's ``Autograde`` whose set-up uses the open connection (made when nbgrader
    is imported: this module is imported before, while the workers warm up)."""
    from nbgrader.converters import Autograde

    class AutogradeOnce(Autograde):
        def init_assignment(self, assignment_id: str, student_id: str) -> None:
            _init_assignment(self, assignment_id, student_id)

    return AutogradeOnce


def _init_assignment(app: Any, assignment_id: str, student_id: str) -> None:
    """nbgrader 0.9's ``Autograde.init_assignment``, step by step, on the open connection:
    the submission's own files copied, the student and the submission (with its timestamp)
    in the gradebook, the source's other files copied over, unknown notebooks skipped and
    missing ones scored 0."""
    from nbgrader import utils
    from nbgrader.api import MissingEntry
    from nbgrader.converters import Autograde
    from nbgrader.converters.base import NbGraderException

    from .nbgrader_plugins import open_gradebook

    gb = open_gradebook(app.coursedir.db_url)
    super(Autograde, app).init_assignment(assignment_id, student_id)
    if app.create_student:
        gb.update_or_create_student(student_id)
    else:
        try:
            gb.find_student(student_id)
        except MissingEntry:
            raise NbGraderException(f"No student with ID '{student_id}' exists") from None
    try:
        gb.find_assignment(assignment_id)
    except MissingEntry:
        raise NbGraderException(f"No assignment with ID '{assignment_id}' exists") from None
    timestamp = app.coursedir.get_existing_timestamp(app._format_source(assignment_id, student_id))
    if timestamp:
        gb.update_or_create_submission(assignment_id, student_id, timestamp=timestamp)
    else:
        gb.update_or_create_submission(assignment_id, student_id)
    _copy_source_files(app, assignment_id, student_id, utils)
    notebooks = []
    for notebook in app.notebooks:
        try:
            gb.find_notebook(os.path.splitext(os.path.basename(notebook))[0], assignment_id)
        except MissingEntry:
            app.log.warning("Skipping unknown notebook: %s", notebook)
            continue
        notebooks.append(notebook)
    app.notebooks = notebooks
    if not notebooks:
        raise NbGraderException(
            "No notebooks found, did you forget to run 'nbgrader generate_assignment'?"
        )
    for notebook in gb.find_assignment(assignment_id).notebooks:
        submitted = app.coursedir.format_path(
            app.coursedir.submitted_directory, student_id, assignment_id
        )
        if not os.path.exists(os.path.join(submitted, f"{notebook.name}.ipynb")):
            app.log.warning("No submitted file: %s", notebook.name)
            found = gb.find_submission_notebook(notebook.name, assignment_id, student_id)
            for grade in found.grades:
                grade.auto_score, grade.needs_manual_grade = 0, False
            gb.db.commit()


def _copy_source_files(app: Any, assignment_id: str, student_id: str, utils: Any) -> None:
    """The source folder's other files over the submission's (but those the config keeps)."""
    dest_path = app._format_dest(assignment_id, student_id)
    source_path = app.coursedir.format_path(app.coursedir.source_directory, ".", assignment_id)
    found = set(utils.find_all_files(source_path, app.coursedir.ignore + ["*.ipynb"]))
    kept = {os.path.join(source_path, x) for x in app.exclude_overwriting.get(assignment_id, [])}
    for filename in found - kept:
        dest = os.path.join(dest_path, os.path.relpath(filename, source_path))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if os.path.exists(dest):
            os.remove(dest)
        shutil.copy(filename, dest)
