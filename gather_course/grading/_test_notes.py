"""The notes on a test cell the learner edited or deleted (graded all the same), and on a
locked cell of the course's they edited (run as released).

Neither grading nor ``gather-course check`` runs a notebook's test cells: the referee judges
each question itself, from the course's own test as released. Grading's feedback
(:func:`._classjob._check_tests`) and ``check``'s notes (:mod:`._notebook_check`) say so in
these same words, in the learner's language.

>>> edited_test_note("test_pick_per_row").startswith("The test cell test_pick_per_row was edited")
True
"""

from __future__ import annotations

from .._i18n import _


def edited_test_note(cell: str) -> str:
    """The note for the test cell ``cell`` (its grade id), edited by the learner."""
    return _(
        "The test cell {cell} was edited: grading uses the course's own test, as released, "
        "whatever the cell holds."
    ).format(cell=cell)


def deleted_test_note(cell: str) -> str:
    """The note for the test cell ``cell`` (its grade id), deleted by the learner."""
    return _(
        "The test cell {cell} was deleted: grading uses the course's own test, as released, "
        "and grades its question all the same."
    ).format(cell=cell)


def edited_locked_note(cell: str) -> str:
    """The note for the locked code cell ``cell`` (its grade id, not a test), edited by the
    learner: grading runs the course's own code in its place, and so does ``check``."""
    return _(
        "The locked cell {cell} was edited: grading runs the course's own code in its place, "
        "as released, whatever the cell holds."
    ).format(cell=cell)


def not_restored_note(cell: str) -> str:
    """``check``'s note where it could not find the locked cell ``cell`` as released."""
    return _(
        "check could not find the locked cell {cell} as released, and ran it as edited: "
        "grading may say otherwise. Restore the cell (copy it from a fresh copy of the "
        "notebook) to see what grading will say."
    ).format(cell=cell)
