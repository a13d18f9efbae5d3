"""The numbers of a class report, from the verdict log grading kept (nothing is run again).

For each question: how many graded students tried it, passed it, their median points, the
tiers of the verdicts (passed, or why not), the most frequent diagnoses with one example
each, the facility and the discrimination (:mod:`._stats`); in a class release, each
variant's pass rate and whether it is passed significantly less often than the rest of
its question. And the students not graded, with the reasons.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .._i18n import _
from .._tier import Tier
from ..questions._result import Diagnosis
from . import _stats

MIN_VARIANT = 5  # students a variant needs before its pass rate is judged
MIN_OTHERS = 10  # and the rest of its question
ALPHA = 0.05  # Holm-adjusted one-sided Fisher p-value under which a variant is flagged
TOP = 5  # diagnoses listed per question


@dataclass
class VariantRow:
    name: str
    students: int
    passed: int
    p_value: float | None = None  # Holm-adjusted; None: too few to judge
    flagged: bool = False

    @property
    def rate(self) -> float:
        return self.passed / self.students if self.students else 0.0


@dataclass
class QuestionRow:
    gid: str
    qid: str
    points: float
    graded: int = 0
    attempted: int = 0
    passed: int = 0
    median_points: float | None = None
    facility: float | None = None
    discrimination: float | None = None
    tiers: dict[str, int] = field(default_factory=dict)  # tier value -> students
    diagnoses: list[tuple[str, str, int, str]] = field(default_factory=list)
    # (tier, what went wrong, students, an example message)
    variants: list[VariantRow] = field(default_factory=list)


@dataclass
class TimeRow:
    """A submission whose time the instructor should see: late, or its claim disagrees
    with the exchange's receipt, or there is no receipt (the note says which)."""

    student: str
    submitted: str  # the time grading used, in UTC ('' where there is none)
    seconds_late: float
    late_penalty: float
    score: float | None  # after the penalty (None: not graded)
    note: str  # in the report's language


@dataclass
class ClassNumbers:
    assignment: str
    lang: str
    started: str
    seconds: float | None
    students: int
    scores: list[float]  # each graded student's total
    max_score: float
    not_graded: list[tuple[str, str]]  # (student, why)
    questions: list[QuestionRow]
    times: list[TimeRow] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)  # collecting's refusals
    # graded again: what changed since the run kept in .grading/history/<a>/<changes_since>
    changes: list[dict[str, Any]] = field(default_factory=list)
    changes_since: str = ""

    @property
    def flagged(self) -> list[tuple[str, VariantRow]]:
        return [(q.gid, v) for q in self.questions for v in q.variants if v.flagged]


def _diagnosis(verdict: dict[str, Any]) -> str:
    found = verdict.get("diagnosis")
    if isinstance(found, list) and len(found) == 2 and isinstance(found[0], str):
        return Diagnosis(found[0], {str(k): str(v) for k, v in dict(found[1]).items()}).text()
    return ""


def class_numbers(
    header: dict[str, Any], entries: list[dict[str, Any]], seconds: float | None
) -> ClassNumbers:
    """The report's numbers: ``read_log``'s header and entries (in the report's language)."""
    questions = [QuestionRow(q["gid"], q["qid"], float(q["points"])) for q in header["questions"]]
    graded = [e for e in entries if not e.get("problem")]
    not_graded = sorted((e["student"], e["problem"]) for e in entries if e.get("problem"))
    totals = {
        e["student"]: sum(q.points for q in questions if e["verdicts"].get(q.gid, {}).get("passed"))
        for e in graded
    }
    for q in questions:
        _question(q, graded, totals, len(questions) > 1)
    return ClassNumbers(
        assignment=header.get("assignment", ""),
        lang=header.get("lang", "en"),
        started=str(header.get("started", "")).replace("T", " ")[:16],
        seconds=seconds,
        students=len(entries),
        scores=sorted(totals.values()),
        max_score=sum(q.points for q in questions),
        not_graded=not_graded,
        questions=questions,
        times=_times(entries),
        refused=list(header.get("refused", [])),
    )


def _times(entries: list[dict[str, Any]]) -> list[TimeRow]:
    """The submissions that were late, or whose time the instructor should check."""
    from ..grading._receipts import SubmissionTime, time_note, utc_text

    rows = []
    for e in sorted(entries, key=lambda e: e["student"]):
        found = e.get("submission")
        if not found:
            continue
        t = SubmissionTime.from_plain(found)
        note = time_note(t, _)
        late, penalty = float(found.get("seconds_late", 0)), float(found.get("late_penalty", 0))
        if note or late or penalty:
            rows.append(
                TimeRow(
                    e["student"],
                    utc_text(t.time) if t.time else "",
                    late,
                    penalty,
                    None if e.get("problem") else float(found.get("score", 0)),
                    note,
                )
            )
    return rows


def _question(q: QuestionRow, graded: list[dict], totals: dict[str, float], others: bool) -> None:
    verdicts = [(e["student"], e["verdicts"].get(q.gid)) for e in graded]
    verdicts = [(s, v) for s, v in verdicts if v is not None]
    q.graded = len(verdicts)
    q.passed = sum(1 for _s, v in verdicts if v["passed"])
    q.attempted = sum(1 for _s, v in verdicts if v.get("tier") != Tier.NOT_ATTEMPTED.value)
    q.tiers = dict(Counter(v.get("tier") or "?" for _s, v in verdicts))
    q.facility = _stats.facility(q.passed, q.graded)
    earned = [q.points if v["passed"] else 0.0 for _s, v in verdicts]
    q.median_points = _stats.median(earned)
    if others:
        rest = [totals[s] - e for (s, _v), e in zip(verdicts, earned)]
        q.discrimination = _stats.discrimination(earned, rest)
    failures: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    for _s, v in verdicts:
        if v["passed"]:
            continue
        key = (v.get("tier") or "?", _diagnosis(v))
        failures[key] += 1
        example.setdefault(key, v.get("message", ""))
    q.diagnoses = [(t, d, n, example[(t, d)]) for (t, d), n in failures.most_common(TOP)]
    q.variants = _variants(verdicts)


def _variants(verdicts: list[tuple[str, dict]]) -> list[VariantRow]:
    """Each variant's pass rate; Fisher's exact test (one-sided: passed less) of each
    variant against the rest of its question, Holm-adjusted over the variants judged."""
    rows: dict[str, VariantRow] = {}
    for _s, v in verdicts:
        row = rows.setdefault(
            v.get("variant", "public"), VariantRow(v.get("variant", "public"), 0, 0)
        )
        row.students += 1
        row.passed += bool(v["passed"])
    if len(rows) < 2:
        return []
    total, passed = sum(r.students for r in rows.values()), sum(r.passed for r in rows.values())
    judged = [
        r for r in rows.values() if r.students >= MIN_VARIANT and total - r.students >= MIN_OTHERS
    ]
    raw = [
        _stats.fisher_less(r.passed, r.students, passed - r.passed, total - r.students)
        for r in judged
    ]
    for r, p in zip(judged, _stats.holm(raw)):
        r.p_value, r.flagged = p, p < ALPHA
    return sorted(rows.values(), key=lambda r: r.name)
