"""Grading: everything that runs or judges a learner's code. The grader's trusted base.

Student code runs only in :mod:`._worker`'s job processes (in bubblewrap's sandbox where
it is there), started and fed by :mod:`._sandbox`. Everything else here runs in the
instructor's process and never runs student code: :mod:`._referee` judges one submission
from plain data, :mod:`._scan` reads its source, :mod:`._grade` grades a class into
nbgrader's gradebook, :mod:`._classes` releases each student's own variants, and
:mod:`.nbgrader_plugins` hooks into nbgrader. The copy report is not here: it is
:mod:`gather_course.copies`. docs/architecture.md draws the border.
"""

from __future__ import annotations

from .._front_door import front_door

# The front door: what other rooms may use, and the module of this room that holds it.
# Other rooms import these names from here (``from ..grading import ...``), never a module
# of this room (tests/test_architecture.py); each module loads when one of its names does.
_EXPORTS = {
    "CLASS_FILE": "_classes",
    "load_solver": "_classes",
    "release_class": "_classes",
    "Solver": "_classes",
    "grade_class": "_grade",
    "release_notebooks": "_grade",
    "shown_name": "_inbound",
    "check_notebook": "_notebook_check",
    "open_pool": "_pools",
    "close_course": "_private",
    "private_file": "_private",
    "duration": "_receipts",
    "read_receipts": "_receipts",
    "refused_receipts": "_receipts",
    "SubmissionTime": "_receipts",
    "time_note": "_receipts",
    "TimeSource": "_receipts",
    "utc_text": "_receipts",
    "Plan": "_referee",
    "Referee": "_referee",
    "read_changes": "_regrade",
    "read_roster": "_roster",
    "Worker": "_sandbox",
    "course_internals": "_scan",
    "reachable": "_scan",
    "check_scheduler_address": "_scheduler_address",
    "graded_cells": "_submission",
    "OWN": "_submission",
    "read_submission": "_submission",
    "tasks_report": "_tasks",
    "make_certificates": "_tls",
    "log_path": "_verdict_log",
    "read_log": "_verdict_log",
}
__all__ = sorted(_EXPORTS)
__getattr__ = front_door(__name__, _EXPORTS)
