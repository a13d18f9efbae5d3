"""The notes on a test cell the learner edited or deleted: graded all the same.

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
