"""A learner's practice record: per question, the variants tried and passed, and when.

It lives in the learner's working copy, one small file beside the working copy's marker
(:data:`RECORD`), never in the course's folders and never holding an answer's code. Outside
a working copy (Colab, a checkout of the course) it is kept in memory for the session.
Deleting the file loses only the record; a file that cannot be read is set aside
(``.gather-course-practice.json.corrupt``) and a new record started.

>>> Mastery({"axis=columns": {"tries": 2, "passes": 1, "clean": 1}}).passed_clean
1
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._i18n import _
from .._learner_files import set_aside, write_atomic
from ._question import exercise_ids

RECORD = ".gather-course-practice.json"
MASTERED_AFTER = 2  # different variants passed without a hint (a question without: passes)
_SESSION: dict[str, Any] = {}  # the record outside a working copy: this process only


@dataclass
class Mastery:
    """One question's practice: ``{variant: {"tries", "passes", "clean", "last"}}``."""

    variants: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def tries(self) -> int:
        return sum(_count(v, "tries") for v in self.variants.values())

    @property
    def fails(self) -> int:
        return self.tries - sum(_count(v, "passes") for v in self.variants.values())

    @property
    def passed(self) -> int:
        """How many different variants passed (a question without variants: passes)."""
        return self._distinct("passes")

    @property
    def passed_clean(self) -> int:
        """How many different variants passed without a hint."""
        return self._distinct("clean")

    def _distinct(self, key: str) -> int:
        if set(self.variants) == {"public"}:  # fresh inputs only: each pass counts
            return _count(self.variants["public"], key)
        return sum(_count(v, key) > 0 for v in self.variants.values())

    @property
    def mastered(self) -> bool:
        return self.passed_clean >= MASTERED_AFTER

    @property
    def last(self) -> str:
        return max((str(v.get("last", "")) for v in self.variants.values()), default="")


def _count(entry: dict[str, Any], key: str) -> int:
    value = entry.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_record(folder: Path | None) -> tuple[dict[str, Any], str]:
    """The record of the working copy at ``folder`` (None: this session's), and a line
    saying where a file that could not be read was set aside ('' when none was)."""
    if folder is None:
        return _SESSION.setdefault("questions", {}), ""
    path = folder / RECORD
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, ""
    except (ValueError, OSError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("questions"), dict):
        return data["questions"], ""
    aside = set_aside(path)
    return {}, _(
        "Could not read {file}, your practice record: kept it as {aside} and started a new one."
    ).format(file=path, aside=aside.name)


def mastery(questions: dict[str, Any], qid: str) -> Mastery:
    """``qid``'s practice in a record read by :func:`read_record`."""
    found = questions.get(qid)
    variants = found.get("variants") if isinstance(found, dict) else None
    if not isinstance(variants, dict):
        return Mastery()
    return Mastery({k: v for k, v in variants.items() if isinstance(v, dict)})


def note_check(folder: Path | None, qid: str, variant: str, passed: bool, hinted: bool) -> str:
    """Record one practice check; a line to tell the learner where the record could not be
    read or written ('' when all went well)."""
    questions, said = read_record(folder)
    entry = questions.setdefault(qid, {}).setdefault("variants", {}).setdefault(variant, {})
    entry["tries"] = _count(entry, "tries") + 1
    entry["passes"] = _count(entry, "passes") + passed
    entry["clean"] = _count(entry, "clean") + (passed and not hinted)
    entry["last"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if folder is None:
        return said
    text = json.dumps({"version": 1, "questions": questions}, indent=1, sort_keys=True) + "\n"
    try:
        write_atomic(folder / RECORD, text.encode("utf-8"))  # whole or not at all
    except OSError as exc:
        return _("Could not write your practice record {file} ({error}).").format(
            file=folder / RECORD, error=exc.strerror or exc
        )
    return said


def weakest(questions: dict[str, Any]) -> str:
    """The question to practise next: not mastered, the fewest variants passed without a
    hint, tried and failed first, in course order.

    >>> weakest({})
    'basics.pick_per_row'
    """
    ids = exercise_ids()

    def need(i: int) -> tuple[int, int, int, int]:
        m = mastery(questions, ids[i])
        return (m.mastered, m.passed_clean, -m.fails, i)

    return ids[min(range(len(ids)), key=need)]


def mastery_summary(m: Mastery) -> str:
    """One question's practice in a few words, for ``gather-course progress``.

    >>> mastery_summary(Mastery())
    'practice: not yet'
    """
    if not m.tries:
        return _("practice: not yet")
    if m.mastered:
        return _("practice: mastered ({n} variants passed without a hint)").format(n=m.passed_clean)
    return _(
        "practice: {clean} of {need} variants passed without a hint ({tries} checks, last {last})"
    ).format(clean=m.passed_clean, need=MASTERED_AFTER, tries=m.tries, last=m.last[:10])
