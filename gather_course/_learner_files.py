"""The learner's own files, handled one way by course tooling and the question bank alike.

A working copy is the folder whose top holds :data:`MARKER` (``gather-course start`` writes
it; :func:`enclosing_working_copy` finds it from any folder inside). Its files are written
whole or not at all (:func:`write_atomic`: a temporary file beside, then a rename), and a
record that cannot be read is set aside, never deleted (:func:`set_aside`).

>>> set_aside.__name__, MARKER
('set_aside', '.gather-course.json')
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

MARKER = ".gather-course.json"  # in the working copy's top folder


def enclosing_working_copy(start: str | Path = ".") -> Path | None:
    """The working copy that holds ``start`` (it or a folder above it has the marker), or None.

    >>> enclosing_working_copy("~/gather-course-work/exercises/basics")  # doctest: +SKIP
    PosixPath('/home/me/gather-course-work')
    """
    here = Path(os.path.expanduser(str(start))).resolve()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_file():
            return folder
    return None


def temp_beside(path: Path, data: bytes) -> Path:
    """``data`` in a new hidden file in ``path``'s folder (for a rename onto ``path``)."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a temporary file in its folder, then renamed."""
    part = temp_beside(path, data)
    try:
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def set_aside(path: Path) -> Path:
    """Rename a file that cannot be read to ``NAME.corrupt`` (``.corrupt-2``, ... where that
    is taken), never over another, never deleting it; where it went."""
    n, aside = 1, path.with_name(path.name + ".corrupt")
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.corrupt-{n}")
    os.rename(path, aside)
    return aside
