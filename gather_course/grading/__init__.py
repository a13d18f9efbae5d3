"""Grading: everything that runs or judges a learner's code. The grader's trusted base.

Student code runs only in :mod:`._worker`'s job processes (in bubblewrap's sandbox where
it is there), started and fed by :mod:`._sandbox`. Everything else here runs in the
instructor's process and never runs student code: :mod:`._referee` judges one submission
from plain data, :mod:`._scan` reads its source, :mod:`._grade` grades a class into
nbgrader's gradebook, :mod:`._classes` releases each student's own variants, and
:mod:`.nbgrader_plugins` hooks into nbgrader. The copy report is not here: it is
:mod:`gather_course.copies`. docs/architecture.md draws the border.
"""
