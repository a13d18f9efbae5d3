"""A course folder that holds a class is its instructor's alone.

A class release's folder holds the class's key (``class.json``: every variant is drawn from
it) and its answers (``solutions/``); every course folder that grades a class holds the
students' submissions, the gradebook, the grades, the verdicts and the reports. On a shared
machine (a JupyterHub where every student is a Unix user) a folder that other users can
enter gives all of it away. ``release`` (of a class), ``grade`` and ``report`` close the
folder to other users (and to its group, unless nbgrader's ``CourseDirectory.groupshared``
says the course's staff share it), and say so in one line: they repair rather than refuse,
since the folder is the instructor's own and every moment it stays open is a leak (the
commands print the line; grading keeps it in its log too). Files they write beside a CSV
outside the folder are made readable by their owner only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .._errors import GatherCourseError


def groupshared(root: Path) -> bool:
    """nbgrader's ``CourseDirectory.groupshared`` in the course's ``nbgrader_config.py``.

    The file is run (it imports nbgrader: about 0.6 s, before grading can start) only where
    it could set it: where it names the setting or loads another file. Anywhere else the
    answer is False: the folder is closed to its group too, the safe side.
    """
    from traitlets.config.loader import PyFileConfigLoader

    path = root / "nbgrader_config.py"
    if not path.is_file():
        return False
    text = path.read_text(encoding="utf-8", errors="replace")
    if "groupshared" not in text and "load_subconfig" not in text:
        return False
    config = PyFileConfigLoader("nbgrader_config.py", str(root)).load_config()
    return bool(config.CourseDirectory.get("groupshared", False))


def close_course(root: Path) -> str:
    """Close ``root`` to other users (and to its group unless shared); the line that says
    so, or '' where it was closed already. Refuses (one line) where the folder is not ours
    to close."""
    mode = stat.S_IMODE(root.stat().st_mode)
    drop = stat.S_IRWXO | (0 if groupshared(root) else stat.S_IRWXG)
    if not mode & drop:
        return ""
    what = (
        "the class's key (class.json) and answers, and its submissions and grades"
        if (root / "class.json").is_file()
        else "the class's submissions, gradebook and grades"
    )
    try:
        os.chmod(root, mode & ~drop)
    except PermissionError:
        raise GatherCourseError(
            f"{root} can be entered by other users (mode {mode:o}), and it holds {what}; it "
            f"is not yours to close: its owner runs `chmod go-rwx {root}`."
        ) from None
    return (
        f"closed {root} to other users (it was mode {mode:o}, now {mode & ~drop:o}): it "
        f"holds {what}."
    )


def private_file(path: str, flags: int) -> int:
    """An ``open(..., opener=private_file)``: a new file is readable by its owner only."""
    return os.open(path, flags, 0o600)
