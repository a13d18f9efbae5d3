"""The package's one exception class."""

from __future__ import annotations

__all__ = ["GatherCourseError"]


class GatherCourseError(ValueError):
    """Raised for bad input to any ``gather_course`` function.

    The message always says what was expected and what was given.
    It subclasses ``ValueError`` so ``except ValueError`` also catches it.
    """
