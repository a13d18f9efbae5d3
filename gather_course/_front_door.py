"""A room's front door: the names its ``__init__`` lets other rooms use, loaded on first use.

A room (``grading``, ``course``, ``copies``) lists each name other rooms may import and the
module of the room that holds it; ``from ..grading import reachable`` then imports
``grading._scan`` when that name is asked for, not before, so a command pays only for the
modules it uses (the grader never loads the copy report's, the learner's ``check`` never
loads Dask's). Inside a room, modules import each other directly.

>>> door = front_door("gather_course.course", {"course_root": "_course"})
>>> door("course_root").__module__
'gather_course.course._course'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def front_door(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``exports`` maps each name to its module there."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(
                f"module {package!r} has no attribute {name!r} (its front door: "
                f"{', '.join(sorted(exports))})"
            )
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
