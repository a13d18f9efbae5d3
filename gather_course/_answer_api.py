"""What ``gather_course`` is while an answer is graded: the public helpers, none of the course.

The grading worker (:mod:`gather_course.grading._worker`) makes ``import gather_course`` give this
module's :data:`NAMES` instead of the package: the loop reference, ``diagnose``,
``explain`` and ``default_device`` work, while the question bank, its solutions and class
variants, the drawings and the grading code are not there. In bubblewrap's sandbox their
files are not even in the file system (:data:`MODULES` is all of the package it holds);
:class:`Refuse` gives the same verdict where no sandbox runs.

>>> "gather_reference" in OUTSIDE
True
"""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any

from ._errors import GatherCourseError
from ._i18n import N_, _

# The package's modules an answer's process holds: the public helpers and what they import
# (the sandbox holds these files and the worker's, grading._sandbox.WORKER; it runs as a script).
MODULES = (
    "_answer_api",
    "_errors",
    "_gather_call",
    "_i18n",
    "_opcount",
    "_text",
    "_tier",
    "device",
    "diagnose",
    "explain",
    "reference",
)
# What an answer may take from gather_course (the referee's scan and check() read these too).
PUBLIC = ("GatherCourseError", "Tier", "default_device", "diagnose", "explain", "gather_reference")
PUBLIC_MODULES = ("reference", "diagnose", "explain", "device")
BANK_NAMES = ("exercise", "exercise_ids", "my_class")  # fine in a course cell, never in an answer
OUTSIDE = N_(
    "answers may use torch, Python's standard library and gather_course's public helpers "
    "(gather_reference, diagnose, explain, default_device) only: {what} is not there when "
    "answers are graded."
)


class CourseInternalError(GatherCourseError, ImportError):
    """An answer reached for the course itself (the question bank, a solution, the grader)."""


def _refusal(what: str) -> CourseInternalError:
    return CourseInternalError(_(OUTSIDE).format(what=what))


def _unavailable(name: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise _refusal(f"gather_course.{name}")

    refused.__name__ = refused.__qualname__ = name
    return refused


class _Refused:
    """What a course name that answers may not use gives while an answer is graded: the
    course's own cells (a class's ``mine = my_class(...)``) run without error, and any use
    of it is refused with :data:`OUTSIDE`."""

    def __init__(self, what: str) -> None:
        self._what = what

    def __getattr__(self, name: str) -> Any:
        raise _refusal(f"{self._what}.{name}")


def _inert(name: str) -> Any:
    def inert(*args: Any, **kwargs: Any) -> _Refused:
        return _Refused(f"gather_course.{name}(...)")

    inert.__name__ = inert.__qualname__ = name
    return inert


def names() -> dict[str, Any]:
    """``gather_course``'s public names as an answer sees them while it is graded."""
    from ._tier import Tier
    from .device import default_device
    from .diagnose import diagnose
    from .explain import explain
    from .reference import gather_reference

    found: dict[str, Any] = {
        "GatherCourseError": GatherCourseError,
        "default_device": default_device,
        "diagnose": diagnose,
        "explain": explain,
        "gather_reference": gather_reference,
        "Tier": Tier,
    }
    for name in ("CheckResult", "draw_gather", "draw_gather_grad", "exercise"):
        found[name] = _unavailable(name)
    found["exercise_ids"] = _unavailable("exercise_ids")
    found["my_class"] = _inert("my_class")  # a class release's set-up cell calls it
    return found


class Refuse(importlib.abc.MetaPathFinder):
    """Refuses ``gather_course``'s modules outside :data:`MODULES` with :data:`OUTSIDE`."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        top, _sep, rest = fullname.partition(".")
        if top == "gather_course" and rest and rest.split(".")[0] not in MODULES:
            raise _refusal(fullname)
        return None


def install() -> None:
    """Fill the bare ``gather_course`` the worker made with the answer-time names, and refuse
    the rest of the package. Called before any learner code exists in the process."""
    package = sys.modules["gather_course"]
    found = names()
    package.__dict__.update(found)
    package.__all__ = sorted(found)
    sys.meta_path.insert(0, Refuse())
