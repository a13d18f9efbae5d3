"""Course tooling: the course folder, releases, a learner's working copy, the twin
editions and notebook execution. It runs no learner code to judge it (that is
:mod:`gather_course.grading`'s work) and the learner's toolkit never imports it.
"""

from __future__ import annotations

from .._front_door import front_door

# The front door: what other rooms may use, and the module of this room that holds it.
# Other rooms import these names from here (``from ..course import ...``), never a module
# of this room (tests/test_architecture.py); each module loads when one of its names does.
_EXPORTS = {
    "alembic_on_path": "_course",
    "assignments": "_course",
    "csv_target": "_course",
    "course_root": "_course",
    "known_assignment": "_course",
    "nbgrader_api": "_course",
    "nbgrader_errors": "_course",
    "notebook_file": "_course",
    "RELEASE": "_course",
    "release": "_course",
    "submissions": "_course",
    "SOURCE": "_course",
    "execute_notebook": "_execute",
    "EDITION": "_twins",
    "SOURCES": "_twins",
    "sync_twins": "_twins",
    "last_update": "_upgrade",
    "Copied": "_upgrade",
    "copy_edition": "_workcopy",
    "DEFAULT_DIR": "_workcopy",
    "exercise_notebooks": "_workcopy",
    "lab_command": "_workcopy",
    "learners_copy": "_workcopy",
    "make_working_copy": "_workcopy",
    "MARKER": "_workcopy",
    "progress_folder": "_workcopy",
    "released_exercises": "_workcopy",
    "remember": "_workcopy",
    "running_as_root": "_workcopy",
    "working_copy_language": "_workcopy",
}
__all__ = sorted(_EXPORTS)
__getattr__ = front_door(__name__, _EXPORTS)
