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

from .._i18n import N_, _
from .._tier import Tier
from ..questions import FailureKind, is_misconception
from . import _stats

MIN_VARIANT = 5  # students a variant needs before its pass rate is judged
MIN_OTHERS = 10  # and the rest of its question
ALPHA = 0.05  # Holm-adjusted one-sided Fisher p-value under which a variant is flagged
FAR_BELOW = 0.5  # a pass rate this far under its siblings' is shown, flagged or not
MIN_FAR = 3  # ... where the variant has this many students
TOP = 5  # diagnoses listed per question


@dataclass
class VariantRow:
    name: str
    students: int
    passed: int
    p_value: float | None = None  # Holm-adjusted; None: too few to judge
    flagged: bool = False
    others: int = 0  # the question's other students (its siblings')
    others_passed: int = 0
    wrong: int = 0  # its students who handed in an answer that failed
    best_p: float | None = None  # the adjusted p-value had every one of them failed
    flag_below: int = 0  # flagged with fewer passes than this (0: no count can be)
    far_below: bool = False  # its pass rate FAR_BELOW or more under its siblings'

    @property
    def rate(self) -> float:
        return self.passed / self.students if self.students else 0.0

    @property
    def others_rate(self) -> float:
        return self.others_passed / self.others if self.others else 0.0

    @property
    def difference(self) -> float:
        """The effect size: its pass rate minus its siblings' (negative: harder)."""
        return self.rate - self.others_rate

    @property
    def smallest_gap(self) -> float | None:
        """The smallest difference the test can flag here (None: it can flag none)."""
        if not self.flag_below:
            return None
        return (self.flag_below - 1) / self.students - self.others_rate


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


OTHER = N_("other: {what}")  # a failure that matches no named misconception
NOTHING_MORE = "\u2014"  # a failure whose rule says no more than its tier: a dash


def _diagnosis(verdict: dict[str, Any]) -> tuple[str, bool]:
    """What went wrong, in the report's language, and whether it is a named misconception
    (:mod:`gather_course.questions._misconceptions`); any other is "other", with its rule,
    less the tier that the report's own column names ("not vectorized: a Python loop" under
    the tier "not vectorized" reads "other: a Python loop"; "wrong values" under "wrong
    values", a dash)."""
    found = verdict.get("diagnosis")
    if isinstance(found, list) and len(found) == 2 and isinstance(found[0], str):
        text = FailureKind(found[0], {str(k): str(v) for k, v in dict(found[1]).items()}).text()
        if is_misconception(found[0]):
            return text, True
        tier = _(str(verdict.get("tier") or "?"))
        if text == tier:
            return NOTHING_MORE, False
        for colon in (": ", "："):
            if text.startswith(tier + colon):
                text = text[len(tier + colon) :]
        return _(OTHER).format(what=text), False
    return _(OTHER).format(what="?"), False


def _grouped(verdicts: list[tuple[str, dict]]) -> list[tuple[str, str, int, str]]:
    """The failures grouped by misconception (whatever their tier) or, for the others, by
    tier and diagnosis: (tier, what, students, an example message), the most frequent first."""
    failures: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], tuple[str, str]] = {}
    for _s, v in verdicts:
        if v["passed"]:
            continue
        text, named = _diagnosis(v)
        tier = v.get("tier") or "?"
        key = ("" if named else tier, text)
        failures[key] += 1
        example.setdefault(key, (tier, v.get("message", "")))
    return [(example[k][0], k[1], n, example[k][1]) for k, n in failures.most_common(TOP)]


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
    from ..grading import SubmissionTime, time_note, utc_text

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
    q.diagnoses = _grouped(verdicts)
    q.variants = _variants(verdicts)


def _variants(verdicts: list[tuple[str, dict]]) -> list[VariantRow]:
    """Each variant's pass rate beside its siblings'; Fisher's exact test (one-sided: passed
    less) of each variant against the rest of its question, Holm-adjusted over the variants
    judged, and what the test could flag (:func:`._stats.first_unflagged`)."""
    rows: dict[str, VariantRow] = {}
    for _s, v in verdicts:
        row = rows.setdefault(
            v.get("variant", "public"), VariantRow(v.get("variant", "public"), 0, 0)
        )
        row.students += 1
        row.passed += bool(v["passed"])
        row.wrong += not v["passed"] and v.get("tier") != Tier.NOT_ATTEMPTED.value
    if len(rows) < 2:
        return []
    total, passed = sum(r.students for r in rows.values()), sum(r.passed for r in rows.values())
    for r in rows.values():
        r.others, r.others_passed = total - r.students, passed - r.passed
        r.far_below = r.students >= MIN_FAR and r.difference <= -FAR_BELOW
    judged = [r for r in rows.values() if r.students >= MIN_VARIANT and r.others >= MIN_OTHERS]
    groups = [(r.passed, r.students) for r in judged]
    untested = (passed - sum(p for p, _n in groups), total - sum(n for _p, n in groups))
    for i, (r, p) in enumerate(zip(judged, _stats.against_rest(groups, untested))):
        r.p_value, r.flagged = p, p < ALPHA
        none_passed = [*groups[:i], (0, r.students), *groups[i + 1 :]]
        r.best_p = _stats.against_rest(none_passed, untested)[i]
        r.flag_below = _stats.first_unflagged(groups, i, ALPHA, untested)
    return sorted(rows.values(), key=lambda r: r.name)
