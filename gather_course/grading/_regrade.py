"""Grading again: the earlier run's grades kept, and what changed for each student.

A class graded again (after an upgrade, a corrected check, late submissions) must not lose
what the earlier run gave. Before a run writes ``grades-<a>.csv`` and its verdict log, the
earlier ones are copied to ``.grading/history/<a>/<when>/`` (``when``: the time the earlier
run began). Once the new grades are written, :func:`changes` compares the two runs, student
by student and question by question: the points before and after, and the verdict each
time (passed, or the tier that failed, or why the submission was not graded). They go to
``grades-<a>.changes.csv`` beside the grades, and :func:`summary` words them for the
instructor's terminal. ``gather-course report`` shows the same changes.

>>> Change("ada", "basics_pick", 0.0, 2.0, "wrong values", "passed").line()
'ada, basics_pick: 0 -> 2 points (was wrong values, now passed)'
"""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from ._journal import FOLDER
from ._private import private_file
from ._verdict_log import log_path, read_log

CHANGES_SUFFIX = ".changes.csv"
_SHOWN = 10  # changes worded in the terminal; the rest are in the file


@dataclass(frozen=True)
class Change:
    """One question of one student that the new run judged otherwise (``question``: the
    test cell's grade id, or ``total`` for a submission graded in one run and not the
    other). Points are None where the run gave none (not graded)."""

    student: str
    question: str
    before: float | None
    after: float | None
    was: str
    now: str

    def line(self) -> str:
        def shown(points: float | None) -> str:
            return "not graded" if points is None else f"{points:g}"

        points = f"{shown(self.before)} -> {shown(self.after)}"
        return f"{self.student}, {self.question}: {points} points (was {self.was}, now {self.now})"


def changes_path(csv_path: Path) -> Path:
    """``grades-basics.csv`` -> ``grades-basics.changes.csv`` beside it."""
    return csv_path.with_name(csv_path.stem + CHANGES_SUFFIX)


def keep_earlier(root: Path, assignment: str, csv_path: Path) -> Path | None:
    """Copy the earlier run's grades and verdict log into the course's history, before a new
    run writes over them; the folder they are in, or None where there was no earlier run."""
    earlier_log = log_path(csv_path)
    if not csv_path.is_file():
        return None
    when = str(_started(earlier_log) or "earlier").replace(":", "-")
    folder = root / FOLDER / "history" / assignment / when
    n = 2
    while folder.exists():  # two runs begun in one second: neither is lost
        folder = folder.with_name(f"{when}-{n}")
        n += 1
    folder.mkdir(parents=True)
    for kept in (csv_path, earlier_log, changes_path(csv_path)):
        if kept.is_file():
            shutil.copy2(kept, folder / kept.name)
    return folder


def _started(log: Path) -> str:
    """When the run that wrote the verdict log ``log`` began: its first line's (the header;
    the rest, one line a student, is not read); '' where there is none."""
    try:
        with open(log, encoding="utf-8") as f:
            header = json.loads(f.readline())
    except (OSError, ValueError):
        return ""
    return str(header.get("started", "")) if isinstance(header, dict) else ""


def _points(path: Path) -> dict[str, dict[str, float | None]]:
    """Per student of a grades CSV: each question's points, and ``total`` (None: not graded).
    The questions are the columns between ``status`` and the submission times."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        rows = [dict(zip(header, row)) for row in reader]
    if "status" not in header or "student" not in header:
        return {}  # not a grades CSV this course wrote: nothing to compare with
    ends = [header.index(c) for c in ("late_penalty", "problem") if c in header]
    questions = header[header.index("status") + 1 : min(ends, default=len(header))]
    found: dict[str, dict[str, float | None]] = {}
    for row in rows:
        graded = row.get("status") == "graded"
        points: dict[str, float | None] = {"total": float(row["score"]) if graded else None}
        for name in questions:
            if graded and row.get(name):
                points[name] = float(row[name])
        found[row["student"]] = points
    return found


def _verdicts(log: Path) -> dict[str, dict[str, str]]:
    """Per student of a verdict log: each question's verdict in a few words, and ``total``:
    graded, or why not."""
    if not log.is_file():
        return {}
    _header, students, _seconds = read_log(log)
    found = {}
    for entry in students:
        words = {
            gid: "passed" if v.get("passed") else (v.get("tier") or "failed")
            for gid, v in entry.get("verdicts", {}).items()
        }
        words["total"] = f"not graded: {entry['problem']}" if entry.get("problem") else "graded"
        found[entry["student"]] = words
    return found


def changes(earlier: Path, csv_path: Path) -> list[Change]:
    """What the run that wrote ``csv_path`` judged otherwise than the run kept in
    ``earlier`` (:func:`keep_earlier`'s folder), student by student."""
    before, after = _points(earlier / csv_path.name), _points(csv_path)
    said_before = _verdicts(earlier / log_path(csv_path).name)
    said_after = _verdicts(log_path(csv_path))
    found = []
    for student in sorted(set(before) | set(after)):
        old, new = before.get(student, {}), after.get(student, {})
        for question in sorted(set(old) | set(new), key=lambda q: (q != "total", q)):
            if old.get(question) == new.get(question):
                continue
            was = said_before.get(student, {}).get(question, "not there")
            now = said_after.get(student, {}).get(question, "not there")
            found.append(Change(student, question, old.get(question), new.get(question), was, now))
    return found


def write_changes(csv_path: Path, found: list[Change], earlier: Path) -> Path:
    """The changes as a CSV beside the grades (the report reads it)."""
    path = changes_path(csv_path)
    with open(path, "w", newline="", encoding="utf-8", opener=private_file) as f:
        w = csv.writer(f)
        w.writerow(["student", "question", "before", "after", "was", "now", "earlier_run"])
        for c in found:
            cells = ["" if p is None else f"{p:g}" for p in (c.before, c.after)]
            w.writerow([c.student, c.question, *cells, c.was, c.now, earlier.name])
    return path


def read_changes(csv_path: Path) -> tuple[list[Change], str]:
    """The changes of the last run graded again (and when the run it compared with began),
    or ``([], "")`` where it was the first."""
    path = changes_path(csv_path)
    if not path.is_file():
        return [], ""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    found = [
        Change(
            r["student"],
            r["question"],
            float(r["before"]) if r["before"] else None,
            float(r["after"]) if r["after"] else None,
            r["was"],
            r["now"],
        )
        for r in rows
    ]
    return found, rows[0]["earlier_run"] if rows else ""


def summary(found: list[Change], earlier: Path, path: Path) -> list[str]:
    """The changes, for the instructor's terminal: a count, the first few, where the rest
    and the earlier grades are."""
    students = len({c.student for c in found})
    if not found:
        return [f"Graded again: no student's points changed (the earlier grades: {earlier})."]
    lines = [
        f"Graded again: {len(found)} changes for {students} students since the run kept in "
        f"{earlier} (all in {path}):"
    ]
    lines += [f"  {c.line()}" for c in found[:_SHOWN]]
    if len(found) > _SHOWN:
        lines.append(f"  ... and {len(found) - _SHOWN} more in {path.name}")
    return lines


def compared(earlier: Path, csv_path: Path) -> list[str]:
    """After a run graded again: its changes since the run kept in ``earlier``, written
    beside the grades, and worded for the terminal (:func:`summary`)."""
    found = changes(earlier, csv_path)
    return summary(found, earlier, write_changes(csv_path, found, earlier))
