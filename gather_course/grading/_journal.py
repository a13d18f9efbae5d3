"""A grading run's journal: every result as it arrives, so that a run cut short loses nothing.

One JSON line per event in ``.grading/<assignment>.jsonl`` under the course root: the run's
start (with its secret seed), each student's plain result, and the end, once the gradebook
holds them all. A run that never ended is taken up by the next one for the same
assignment: the same secret, and every student whose submission has not changed since
(the same digest) is not judged again. The instructor's process alone writes it.
"""

from __future__ import annotations

import datetime
import json
import os
import secrets
from pathlib import Path
from typing import Any

FOLDER = ".grading"


class Journal:
    """The journal of one assignment's grading run, new or taken up."""

    def __init__(self, root: Path, assignment: str) -> None:
        self.path = root / FOLDER / f"{assignment}.jsonl"
        self.secret, self.results, self.resumed = self._unfinished()
        if self.secret is None:
            self.secret = secrets.randbits(63)
            self._write(
                {
                    "start": datetime.datetime.now().isoformat(timespec="seconds"),
                    "secret_seed": self.secret,
                }
            )

    def _unfinished(self) -> tuple[int | None, dict[str, dict[str, Any]], bool]:
        """The last run's secret and results when it never ended; else nothing."""
        if not self.path.is_file():
            return None, {}, False
        secret: int | None = None
        results: dict[str, dict[str, Any]] = {}
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:  # a line cut short when the run stopped
                continue
            if "start" in entry:
                secret, results = int(entry["secret_seed"]), {}
            elif "end" in entry:
                secret, results = None, {}
            elif "result" in entry and secret is not None:
                results[entry["result"]["student"]] = entry["result"]
        return secret, results, secret is not None

    def done(self, student: str, digest: str) -> dict[str, Any] | None:
        """The result already judged for ``student``'s unchanged submission, if any."""
        found = self.results.get(student)
        return found if found is not None and found.get("digest") == digest else None

    def add(self, result: dict[str, Any]) -> None:
        self.results[result["student"]] = result
        self._write({"result": result})

    def end(self) -> None:
        """The gradebook holds this run's verdicts: the next run starts afresh."""
        self._write({"end": datetime.datetime.now().isoformat(timespec="seconds")})

    def _write(self, entry: dict[str, Any]) -> None:
        self.path.parent.mkdir(exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())
