"""What the class report needs, kept beside the grades CSV as grading goes.

``grades-basics.csv`` gets ``grades-basics.verdicts.jsonl``: a header (the assignment, its
questions and points, the class's language, when grading began), one line per student as
their result arrives (each question's verdict: passed, tier, diagnosis, the message the
student reads, their variant in a class release; or why the submission was not graded),
a line of each submission's time and late penalty once the gradebook holds them (and the
folders collecting refused), and an end line (how long grading took). ``gather-course
report`` reads it and never runs a submission again. It is the instructor's file: it holds what each student's feedback holds,
and sits beside the CSV, in the instructor's folder.
"""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path
from typing import Any, TextIO

from ._private import private_file
from ._submission import graded_cells

SUFFIX = ".verdicts.jsonl"


def log_path(csv_path: Path) -> Path:
    """``grades-basics.csv`` -> ``grades-basics.verdicts.jsonl`` beside it."""
    return csv_path.with_name(csv_path.stem + SUFFIX)


def questions_of(released: dict[str, Any]) -> list[dict[str, Any]]:
    """Each graded test cell of the released notebooks: grade id, question, points, and
    whether each student gets their own variant of it."""
    found = []
    for nb in released.values():
        for gid, qid, points in graded_cells(nb):
            name, _sep, variant = qid.partition(":")
            found.append({"gid": gid, "qid": name, "points": points, "own": variant == "@student"})
    return found


class VerdictLog:
    """The file, written line by line (each line flushed: a run cut short keeps what it had)."""

    def __init__(self, csv_path: Path, assignment: str, released: dict[str, Any], lang: str):
        self.path = log_path(csv_path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.questions = questions_of(released)
        self._started = time.monotonic()
        self._file: TextIO = open(self.path, "w", encoding="utf-8", opener=private_file)
        self._write(
            {
                "assignment": assignment,
                "lang": lang,
                "started": datetime.datetime.now().isoformat(timespec="seconds"),
                "questions": self.questions,
            }
        )

    def _write(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._file.flush()

    def add(self, result: dict[str, Any], variants: dict[str, str] | None) -> None:
        """One student's result (``judge_student``'s plain data) and their own variants."""
        verdicts = {}
        for q in self.questions:
            found = result["verdicts"].get(q["gid"])
            if found is not None:
                verdicts[q["gid"]] = {
                    "passed": bool(found.get("passed")),
                    "tier": found.get("tier", ""),
                    "diagnosis": found.get("diagnosis"),
                    "message": found.get("message", ""),
                    "variant": (variants or {}).get(q["qid"], "public") if q["own"] else "public",
                }
        self._write(
            {"student": result["student"], "problem": result["problem"], "verdicts": verdicts}
        )

    def submissions(self, outcomes: list[Any], refused: list[Any]) -> None:
        """Each student's submission time (as grading took it, :mod:`._receipts`), late
        penalty and how late; and the folders collecting refused (:class:`.Receipt`)."""
        times = {}
        for o in outcomes:
            t = o.time
            times[o.student] = {
                "score": o.score,
                "late_penalty": o.late_penalty,
                "seconds_late": o.seconds_late,
                **(t.plain() if t else {"time": "", "source": "", "claim": ""}),
            }
        refusals = [
            {"student": r.student, "owner": r.owner, "folder": r.folder, "reason": r.reason}
            for r in refused
        ]
        self._write({"submissions": times, "refused": refusals})

    def end(self) -> None:
        self._write({"end": True, "seconds": round(time.monotonic() - self._started, 1)})
        self._file.close()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


def read_log(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], float | None]:
    """(header, one entry per student, seconds grading took or None if it never ended)."""
    header: dict[str, Any] = {}
    students: dict[str, dict[str, Any]] = {}
    submitted: dict[str, Any] = {}
    seconds = None
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:  # a line cut short when the run stopped
            continue
        if "questions" in entry:
            header = entry
        elif "student" in entry:
            students[entry["student"]] = entry
        elif "submissions" in entry:
            submitted = entry
        elif entry.get("end"):
            seconds = float(entry["seconds"])
    if submitted:  # each student's submission time and late penalty; the refused folders
        for name, found in submitted["submissions"].items():
            if name in students:
                students[name]["submission"] = found
        header = {**header, "refused": submitted.get("refused", [])}
    return header, list(students.values()), seconds
