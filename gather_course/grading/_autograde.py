"""nbgrader's autograde, for a student the bulk writer (:mod:`._bulk`) does not take: one
already in the gradebook (graded again), a notebook missing or refused. nbgrader 0.9's own
steps, on the recorder's open connection: :func:`init_assignment_once` mirrors
``Autograde.init_assignment`` step by step, with the submission's time grading trusts
(the exchange's receipt, never ``timestamp.txt``). ``pyproject.toml`` pins nbgrader to the
range whose internals this mirrors; ``tests/test_record.py`` compares what it writes with
stock ``nbgrader autograde``'s.

>>> utc(None) is None
True
"""

from __future__ import annotations

import datetime
import os
import shutil
from typing import Any

from ._receipts import SubmissionTime


def flag_for_manual_grading(gb: Any, assignment: str, student: str) -> None:
    from nbgrader.api import MissingEntry

    try:
        sub = gb.find_submission(assignment, student)
    except MissingEntry:
        return
    for nb in sub.notebooks:
        for grade in nb.grades:
            grade.needs_manual_grade = True
    gb.db.commit()


def autograde_class() -> type:
    """nbgrader's ``Autograde`` whose set-up uses the open connection (made when nbgrader
    is imported: this module is imported before, while the workers warm up)."""
    from nbgrader.converters import Autograde

    class AutogradeOnce(Autograde):
        submission_time: SubmissionTime | None = None  # set per student by the Recorder

        def init_assignment(self, assignment_id: str, student_id: str) -> None:
            init_assignment_once(self, assignment_id, student_id)

    return AutogradeOnce


def init_assignment_once(app: Any, assignment_id: str, student_id: str) -> None:
    """nbgrader 0.9's ``Autograde.init_assignment``, step by step, on the open connection:
    the submission's own files copied, the student and the submission (with its time) in the
    gradebook, the source's other files copied over, unknown notebooks skipped and missing
    ones scored 0. The time is the one grading trusts (``app.submission_time``: when the
    exchange received the work, :mod:`._receipts`), never ``timestamp.txt`` where a receipt
    is: nbgrader's late penalty is computed from it."""
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
        assignment = gb.find_assignment(assignment_id)
    except MissingEntry:
        raise NbGraderException(f"No assignment with ID '{assignment_id}' exists") from None
    timestamp = utc(app.submission_time)
    if timestamp is not None:
        gb.update_or_create_submission(assignment_id, student_id, timestamp=timestamp)
    else:
        gb.update_or_create_submission(assignment_id, student_id)
    copy_source_files(app, assignment_id, student_id)
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
    submitted = app.coursedir.format_path(
        app.coursedir.submitted_directory, student_id, assignment_id
    )
    for notebook in assignment.notebooks:
        if not os.path.exists(os.path.join(submitted, f"{notebook.name}.ipynb")):
            app.log.warning("No submitted file: %s", notebook.name)
            found = gb.find_submission_notebook(notebook.name, assignment_id, student_id)
            for grade in found.grades:
                grade.auto_score, grade.needs_manual_grade = 0, False
            gb.db.commit()


def utc(when: SubmissionTime | None) -> datetime.datetime | None:
    """A submission's time as nbgrader keeps it: in UTC, without a zone."""
    if when is None or when.time is None:
        return None
    return when.time.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def copy_source_files(app: Any, assignment_id: str, student_id: str) -> None:
    """The source folder's other files over the submission's (but those the config keeps)."""
    from nbgrader import utils

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
