"""What a working copy was given, and a corrected course brought into it safely.

The marker (``.gather-course.json``) records the sha256 of each file ``start`` copied. A later
``start`` compares: a lecture the learner has not changed is updated in place; one they
changed, and every exercise, keeps the learner's bytes, with the course's new version beside
it (``basics.new.ipynb``). Files are written atomically (a temporary file, then a rename) and
never over a file that appeared meanwhile; a marker that cannot be read is set aside, never
deleted. :func:`last_update` reads what the last start brought, for ``progress``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._learner_files import MARKER, set_aside, temp_beside, write_atomic

LAST = "last_update"  # the marker's record of the last start that brought course changes


@dataclass
class Copied:
    """What ``make_working_copy`` did: the files it added, the ones it left as they were, and
    what it brought over from a course that changed since the learner's copy was made.

    ``updated``: lectures the learner had not changed, now the course's new version.
    ``beside``: (a lecture the learner changed, the course's new version written beside it).
    ``exercises``: (an exercise, the course's new version beside it); exercises are never
    overwritten. ``unrecorded``: some of those files had no record of what was copied (a
    working copy made before records were kept), so they were taken as changed by the
    learner. ``set_aside``: where a marker that could not be read was moved to.
    """

    folder: Path
    added: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    updated: list[Path] = field(default_factory=list)
    beside: list[tuple[Path, Path]] = field(default_factory=list)
    exercises: list[tuple[Path, Path]] = field(default_factory=list)
    unrecorded: bool = False
    set_aside: Path | None = None


def sync_file(
    folder: Path, course: Path, rel: Path, entry: dict[str, Any], copied: Copied
) -> dict[str, Any]:
    """Bring the course's ``rel`` into the working copy without touching the learner's work,
    noting in ``copied`` what was done; the marker's new entry for it (``sha256``: what the
    learner was given, None where unknown; ``offered``: the course version put beside it)."""
    target = folder / rel
    new = (course / rel).read_bytes()
    new_hash = _sha256(new)
    if not target.exists():  # new in the course, or deleted by the learner: the course's
        target.parent.mkdir(parents=True, exist_ok=True)
        if _write_new(target, new):
            copied.added.append(rel)
            return {"sha256": new_hash}
    if not target.is_file():  # a folder of that name, or it appeared meanwhile: leave it
        copied.kept.append(rel)
        return entry
    mine = _sha256(target.read_bytes())
    given = entry.get("sha256") if isinstance(entry.get("sha256"), str) else None
    if mine == new_hash:  # the same as the course's (perhaps the learner took the new one)
        copied.kept.append(rel)
        return {"sha256": new_hash}
    if new_hash in (given, entry.get("offered")):  # no change in the course since
        copied.kept.append(rel)
        return entry
    lecture = rel.parts[0] == "notebooks"
    if lecture and mine == given:  # not changed by the learner: the new version in place
        write_atomic(target, new)
        copied.updated.append(rel)
        return {"sha256": new_hash}
    beside = _write_beside(target, new, entry.get("offered"))
    copied.kept.append(rel)
    (copied.beside if lecture else copied.exercises).append((rel, beside.relative_to(folder)))
    copied.unrecorded = copied.unrecorded or given is None
    return {"sha256": given, "offered": new_hash}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def beside_name(target: Path, n: int = 1) -> Path:
    """Where the course's new version of ``target`` goes beside the learner's:
    ``basics.new.ipynb``, else ``basics.new-2.ipynb`` and on.

    >>> beside_name(Path("exercises/basics/basics.ipynb"), 2).name
    'basics.new-2.ipynb'
    """
    return target.with_name(f"{target.stem}.new{'' if n == 1 else f'-{n}'}{target.suffix}")


BESIDE = re.compile(r".+\.new(-\d+)?\.ipynb")  # the names beside_name gives


def _write_beside(target: Path, data: bytes, offered: Any) -> Path:
    """Put ``data`` beside ``target`` and say where: in the first of its beside names that is
    free, already holds it, or holds the version offered before (``offered``, its sha256)
    unchanged; a file the learner wrote there is never touched."""
    n = 1
    while True:
        path = beside_name(target, n)
        if path.is_file():
            there = _sha256(path.read_bytes())
            if there == _sha256(data):
                return path
            if there == offered:  # the earlier offer, untouched: the newer one instead
                write_atomic(path, data)
                return path
        elif not path.exists() and _write_new(path, data):
            return path
        n += 1


def _write_new(path: Path, data: bytes) -> bool:
    """Write ``path`` whole, only where no file is there: False (nothing written) where one
    is, even one that appeared meanwhile."""
    part = temp_beside(path, data)
    try:
        try:
            os.link(part, path)  # fails where path exists: never over a file
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links
            if path.exists():
                return False
            os.replace(part, path)
        return True
    finally:
        part.unlink(missing_ok=True)


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


def read_marker(marker: Path) -> tuple[dict[str, Any], Path | None]:
    """The marker's record ({} where there is none), and where a marker that could not be
    read was set aside (renamed ``.gather-course.json.corrupt``; never deleted)."""
    if not marker.is_file():
        return {}, None
    try:
        record = json.loads(marker.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        record = None
    if isinstance(record, dict):
        return record, None
    return {}, set_aside(marker)


@dataclass
class LastUpdate:
    """What the last start that brought course changes did: its date, the lectures updated,
    and the new versions put beside the learner's files that are still there."""

    date: str
    updated: list[Path]
    beside: list[tuple[Path, Path]]
    exercises: list[tuple[Path, Path]]


def last_update(folder: Path) -> LastUpdate | None:
    """What the last ``start`` that brought course changes did to the working copy at
    ``folder``, from its marker; None where there was none (or nothing is left to say)."""
    record = _read_marker_quietly(folder / MARKER).get(LAST)
    if not isinstance(record, dict):
        return None

    def pairs(key: str) -> list[tuple[Path, Path]]:
        found = record.get(key)
        return [
            (Path(p[0]), Path(p[1]))
            for p in (found if isinstance(found, list) else [])
            if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
        ]

    updated = record.get("updated")
    update = LastUpdate(
        date=str(record.get("date", "")),
        updated=[Path(p) for p in (updated if isinstance(updated, list) else [])],
        beside=[(a, b) for a, b in pairs("beside") if (folder / b).is_file()],
        exercises=[(a, b) for a, b in pairs("exercises") if (folder / b).is_file()],
    )
    return update if update.updated or update.beside or update.exercises else None


def _read_marker_quietly(marker: Path) -> dict[str, Any]:
    """The marker's record, {} where it is missing or cannot be read (left where it is)."""
    try:
        record = json.loads(marker.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return {}
    return record if isinstance(record, dict) else {}
