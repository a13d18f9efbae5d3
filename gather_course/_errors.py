"""The package's one exception class."""

from __future__ import annotations

__all__ = ["GatherCourseError"]


class GatherCourseError(ValueError):
    """Raised for bad input to any ``gather_course`` function.

    The message always says what was expected and what was given.
    It subclasses ``ValueError`` so ``except ValueError`` also catches it.
    """

    def _render_traceback_(self) -> list[str]:
        """In Jupyter, the message alone: the course's own frames would only hide it."""
        return [f"\x1b[1;31mGatherCourseError\x1b[0m: {self}"]
