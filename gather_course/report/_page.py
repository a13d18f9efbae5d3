"""The class report as files beside the grades CSV: one self-contained HTML page (its
pictures inline: it opens from a file, with no server), and the same numbers as CSV and JSON.

Long on purpose (about 420 lines): one idea, the page's sections in reading order, each a
short function over :class:`._numbers.ClassNumbers`; a new section is a function here and its
numbers in :mod:`._numbers`.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import html
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from .._i18n import N_, _
from .._tier import Tier
from ..grading import duration, private_file
from . import _figures
from ._numbers import (
    ALPHA,
    FAR_BELOW,
    MIN_OTHERS,
    MIN_VARIANT,
    ClassNumbers,
    QuestionRow,
    VariantRow,
)
from ._stats import median

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC",sans-serif;
max-width:60rem;margin:1.5rem auto;padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1.05rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem;display:block;overflow-x:auto}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
img{max-width:100%;height:auto}.flag{color:#b00;font-weight:600;white-space:nowrap}.note{color:#555;font-size:.9rem}
pre{white-space:pre-wrap;font-size:.8rem;background:#f8f8f8;padding:.5rem;margin:.25rem 0}
.cmd{white-space:nowrap}.warn{color:#a15c00;font-weight:600}p.warn{font-weight:normal;color:#222;border-left:3px solid #e6a23c;padding-left:.5rem}
@media (max-width:40rem){
table,tbody,tr,td{display:block}table{border:0;font-size:.95rem}
tr:first-child{display:none}
tr{border:1px solid #ddd;border-radius:4px;margin:.4rem 0;padding:.3rem .5rem}
td{border:0;padding:.05rem 0;overflow-wrap:anywhere}td.n{text-align:left;white-space:normal}
td[data-label]::before{content:attr(data-label) ": ";color:#666}
html[lang=zh-CN] td[data-label]::before{content:attr(data-label) "\\FF1A"}
}
"""
_T = {  # every sentence of the page, as bank texts
    "title": N_("Class report: {assignment}"),
    "made": N_(
        "{graded} of {students} submissions graded; grading began {started} and took {seconds}."
    ),
    "unfinished": N_("the run did not finish"),
    "scores": N_("Scores"),
    "score_line": N_("Median score {median} of {max}; mean {mean}."),
    "questions": N_("Questions"),
    "question": N_("question"),
    "tried": N_("tried"),
    "passed": N_("passed"),
    "median": N_("median points"),
    "facility": N_("facility"),
    "discrimination": N_("discrimination"),
    "stats_note": N_(
        "Facility: the share of graded students who passed (Moodle's facility index, for "
        "questions scored all or nothing). Discrimination: the correlation between passing "
        "the question and the score on the other questions (the corrected item-total "
        "correlation, Moodle's discrimination index): near 1 it separates stronger from "
        "weaker students, near 0 or below it does not; n/a where everyone passed or failed it "
        "or there is no other question."
    ),
    "wrong": N_("What went wrong, by question"),
    "tier": N_("verdict"),
    "what": N_("what went wrong"),
    "students": N_("students"),
    "example": N_("one student's feedback"),
    "none_failed": N_("Every graded student passed."),
    "variants": N_("Variants: is each as hard as its siblings?"),
    "variant": N_("variant"),
    "rate": N_("pass rate"),
    "p": N_("p (Holm)"),
    "flagged": N_("passed less often than its siblings"),
    "too_few": N_("too few to judge"),
    "variants_note": N_(
        "Each variant against the rest of its question's students: Fisher's exact test, "
        "one-sided (passed less often), with Holm's correction over the question's "
        "variants; flagged where the adjusted p-value is under {alpha}. A variant with fewer "
        "than {min_variant} students, or fewer than {min_others} others, is too few to judge."
    ),
    "no_flag": N_(
        "No variant is passed significantly less often than its siblings, which does not "
        "make them fair: in a class this size the test sees only large gaps (the last "
        "column), and a small variant may not be flaggable at all."
    ),
    "siblings": N_("its siblings' pass rate"),
    "difference": N_("difference (points)"),
    "can_flag": N_("smallest gap it can flag"),
    "none": N_("none"),
    "far": N_("far below its siblings"),
    "far_line": N_(
        "{variant}: {passed} of {students} passed, its siblings {others}: far below them, "
        "yet not flagged."
    ),
    "why_never": N_(
        "{students} students: at best p = {best} here (had every one of them failed), never "
        "under {alpha}: the test cannot flag this variant, so judge it by its task and hints."
    ),
    "why_not_yet": N_("p = {p} here; it would be flagged with {most} or fewer passes."),
    "why_few": N_("Too few students to test: judge it by its task and hints."),
    "copies": N_(
        "If the students of {variant} handed in alike answers, or answers written for a "
        "classmate's variant, the copy report names them:"
    ),
    "variants_can": N_(
        "Difference: its pass rate minus its siblings', in percentage points. Smallest gap it "
        "can flag: the difference at which this variant would be flagged, everyone else's "
        "results unchanged (searched count by count; none: not even if all its students "
        "failed). A variant {far} points or more below its siblings is shown, flagged or not."
    ),
    "two_questions": N_(
        "With two questions, each one's discrimination is the correlation between the two: "
        "the same number for both."
    ),
    "not_graded": N_("Not graded"),
    "student": N_("student"),
    "why": N_("why"),
    "all_graded": N_("Every submission was graded."),
    "hist_alt": N_("A histogram of the graded students' total scores."),
    "bars_alt": N_("For each question, a bar of its graded students split by the verdict's tier."),
    "na": N_("n/a"),
    "times": N_("Submission times and late penalties"),
    "times_note": N_(
        "Each submission's time is when the exchange received it (the file system's change "
        "time, which no student can set), not the time the student's side wrote "
        "(timestamp.txt and the folder's name): where the two disagree by more than a minute "
        "the row says so. The late penalty is nbgrader's (LateSubmissionPlugin), from that "
        "time and the assignment's due date; the scores above are before it, the table's "
        "after it."
    ),
    "submitted": N_("submitted"),
    "late": N_("late by"),
    "penalty": N_("late penalty"),
    "after_penalty": N_("score after the penalty"),
    "note": N_("note"),
    "times_ok": N_("Every submission was on time, and its time was received by the exchange."),
    "refused": N_("Refused at collection"),
    "refused_note": N_(
        "Collecting never took these folders as the student's they name: each student's own "
        "submission, if any, was graded. Their files are set aside in the course folder's "
        "refused/."
    ),
    "changes": N_("Changes since the earlier grading"),
    "changes_note": N_(
        "This assignment was graded again. The earlier run's grades and verdicts are kept in "
        "the course folder's .grading/history/{assignment}/{since}/; each row is a question "
        "(or a whole submission: total) whose points changed, with the verdict before and "
        "after."
    ),
    "before": N_("before"),
    "after": N_("after"),
    "was": N_("was"),
    "now": N_("now"),
    "claimed": N_("claims to be"),
    "written_by": N_("written by"),
}


def _t(key: str, **values: object) -> str:
    return html.escape(_(_T[key]).format(**values))


def _num(x: float | None, digits: int = 2) -> str:
    return _t("na") if x is None else f"{x:.{digits}f}"


def _img(data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode()
    return f'<img src="data:image/png;base64,{encoded}" alt="{alt}" width="{_figures.SHOWN}">'


class _Number(str):
    """A table cell's HTML that is a number (set right, and after its label on a phone)."""


def _table(heads: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table of the page: ``heads`` (keys of its texts; '' for a column without one) and
    rows of cells (each cell's HTML; a number's as :class:`_Number`). Each cell carries its
    column's heading (``data-label``): on a phone the rows stack, each number after its
    label, and the header row is hidden."""
    labels = [_t(h) if h else "" for h in heads]
    out = ["<table><tr>" + "".join(f"<th>{label}</th>" for label in labels) + "</tr>"]
    for row in rows:
        cells = "".join(
            "<td"
            + (f' data-label="{label}"' if label else "")
            + (' class="n"' if isinstance(cell, _Number) else "")
            + f">{cell}</td>"
            for label, cell in zip(labels, row, strict=True)
        )
        out.append(f"<tr>{cells}</tr>")
    return "".join(out) + "</table>"


def _question_table(numbers: ClassNumbers) -> list[str]:
    head = ["question", "tried", "passed", "median", "facility", "discrimination"]
    rows = [
        [
            f"<code>{html.escape(q.qid)}</code> ({q.points:g})",
            _Number(f"{q.attempted}/{q.graded}"),
            _Number(f"{q.passed}/{q.graded}"),
            _Number(_num(q.median_points, 1)),
            _Number(_num(q.facility)),
            _Number(_num(q.discrimination)),
        ]
        for q in numbers.questions
    ]
    two = f" {_t('two_questions')}" if len(numbers.questions) == 2 else ""
    return [_table(head, rows), f'<p class="note">{_t("stats_note")}{two}</p>']


def _diagnoses(q: QuestionRow) -> list[str]:
    out = [f"<h3><code>{html.escape(q.qid)}</code></h3>"]
    if not q.diagnoses:
        return [*out, f"<p>{_t('none_failed')}</p>"]
    rows = [
        [
            html.escape(_(tier)),
            html.escape(what),
            _Number(n),
            f"<details><summary>…</summary><pre>{html.escape(example)}</pre></details>",
        ]
        for tier, what, n, example in q.diagnoses
    ]
    return [*out, _table(("tier", "what", "students", "example"), rows)]


def _points(x: float) -> str:
    return f"{100 * x:+.0f}".replace("-", "\u2212")


def _variant_row(v: VariantRow) -> list[str]:
    verdict = (
        f'<span class="flag">{_t("flagged")}</span>'
        if v.flagged
        else f'<span class="warn">{_t("far")}</span>'
        if v.far_below
        else _t("too_few")
        if v.p_value is None
        else ""
    )
    gap = v.smallest_gap
    numbers = [
        f"{v.passed}/{v.students}",
        f"{v.rate:.0%}",
        f"{v.others_rate:.0%}",
        _points(v.difference),
        _num(v.p_value, 3),
        _t("na") if v.p_value is None else _t("none") if gap is None else _points(gap),
    ]
    return [f"<code>{html.escape(v.name)}</code>", *map(_Number, numbers), verdict]


def _variant_lines(v: VariantRow, assignment: str) -> list[str]:
    """What the table cannot say: why a variant far below its siblings is not flagged, and
    where its answers may be matched (the copy report, which this page never runs)."""
    out = []
    if v.far_below and not v.flagged:
        line = _t(
            "far_line", variant=v.name, passed=v.passed, students=v.students,
            others=f"{v.others_rate:.0%}",
        )  # fmt: skip
        why = (
            _t("why_few")
            if v.p_value is None
            else _t("why_never", students=v.students, best=_num(v.best_p, 3), alpha=ALPHA)
            if not v.flag_below
            else _t("why_not_yet", p=_num(v.p_value, 3), most=v.flag_below - 1)
        )
        out.append(f'<p class="warn">{line} {why}</p>')
    if (v.flagged or v.far_below) and v.wrong:
        command = f"gather-course similar {assignment}"
        out.append(
            f'<p class="note">{_t("copies", variant=v.name)} <code class="cmd">{html.escape(command)}</code></p>'
        )
    return out


def _variants(numbers: ClassNumbers) -> list[str]:
    varied = [q for q in numbers.questions if q.variants]
    if not varied:
        return []
    out = [f"<h2>{_t('variants')}</h2>"]
    out.append(f"<p>{_t('no_flag')}</p>" if not numbers.flagged else "")
    head = ("variant", "passed", "rate", "siblings", "difference", "p", "can_flag", "")
    for q in varied:
        out.append(f"<h3><code>{html.escape(q.qid)}</code></h3>")
        out.append(_table(head, [_variant_row(v) for v in q.variants]))
        out.extend(line for v in q.variants for line in _variant_lines(v, numbers.assignment))
    note = _t("variants_note", alpha=ALPHA, min_variant=MIN_VARIANT, min_others=MIN_OTHERS)
    can = _t("variants_can", far=f"{100 * FAR_BELOW:.0f}")
    return [*out, f'<p class="note">{note} {can}</p>']


def _times(numbers: ClassNumbers) -> list[str]:
    out = [f"<h2>{_t('times')}</h2>"]
    if numbers.times:
        head = ("student", "submitted", "late", "penalty", "after_penalty", "note")
        rows = [
            [
                html.escape(row.student),
                html.escape(row.submitted),
                _Number(html.escape(duration(row.seconds_late, _) if row.seconds_late else "")),
                _Number(f"{row.late_penalty:g}"),
                _Number(_num(row.score, 1)),
                html.escape(row.note),
            ]
            for row in numbers.times
        ]
        out.append(_table(head, rows))
    else:
        out.append(f"<p>{_t('times_ok')}</p>")
    out.append(f'<p class="note">{_t("times_note")}</p>')
    if numbers.refused:
        out.append(f"<h3>{_t('refused')}</h3>")
        rows = [
            [html.escape(r[k]) for k in ("student", "owner", "reason")] for r in numbers.refused
        ]
        out.append(_table(("claimed", "written_by", "why"), rows))
        out.append(f'<p class="note">{_t("refused_note")}</p>')
    return out


def _changes(numbers: ClassNumbers) -> list[str]:
    """Graded again: what changed per student and question (nothing where graded once)."""
    if not numbers.changes:
        return []
    out = [f"<h2>{_t('changes')}</h2>"]
    head = ("student", "question", "before", "after", "was", "now")
    rows = [
        [
            html.escape(c["student"]),
            f"<code>{html.escape(c['question'])}</code>",
            _Number(_num(c["before"], 1)),
            _Number(_num(c["after"], 1)),
            html.escape(_(c["was"])),
            html.escape(_(c["now"])),
        ]
        for c in numbers.changes
    ]
    note = _t("changes_note", assignment=numbers.assignment, since=numbers.changes_since)
    return [*out, _table(head, rows), f'<p class="note">{note}</p>']


def page(numbers: ClassNumbers) -> str:
    """The report as one HTML page, in the current language."""
    graded = len(numbers.scores)
    took = f"{numbers.seconds:g} s" if numbers.seconds is not None else _(_T["unfinished"])
    made = _t(
        "made", graded=graded, students=numbers.students, started=numbers.started, seconds=took
    )
    mean = sum(numbers.scores) / graded if graded else None
    parts = [
        f'<!DOCTYPE html><html lang="{"zh-CN" if numbers.lang == "zh" else "en"}"><head>'
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_t('title', assignment=numbers.assignment)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_t('title', assignment=numbers.assignment)}</h1><p>{made}</p>",
        f"<h2>{_t('scores')}</h2>",
        _img(_figures.png(_figures.score_histogram(numbers)), _t("hist_alt")),
        f"<p>{_t('score_line', median=_num(median(numbers.scores), 1), max=f'{numbers.max_score:g}', mean=_num(mean, 1))}</p>",
        f"<h2>{_t('questions')}</h2>",
        *_question_table(numbers),
        _img(_figures.png(_figures.tier_bars(numbers)), _t("bars_alt")),
        f"<h2>{_t('wrong')}</h2>",
        *[line for q in numbers.questions for line in _diagnoses(q)],
        *_variants(numbers),
        *_times(numbers),
        *_changes(numbers),
        f"<h2>{_t('not_graded')}</h2>",
    ]
    if numbers.not_graded:
        rows = [[html.escape(s), html.escape(why)] for s, why in numbers.not_graded]
        parts.append(_table(("student", "why"), rows))
    else:
        parts.append(f"<p>{_t('all_graded')}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_files(numbers: ClassNumbers, grades: Path) -> list[Path]:
    """``grades-basics-report.html``, ``.csv`` (a row per question, and per variant) and
    ``.json``, beside the grades CSV ``grades`` (never over it)."""
    html_path, csv_path, json_path = (
        grades.with_name(f"{grades.stem}-report{suffix}") for suffix in (".html", ".csv", ".json")
    )
    with open(html_path, "w", encoding="utf-8", opener=private_file) as f:
        f.write(page(numbers))
    tiers = [t.value for t in Tier]
    with open(csv_path, "w", newline="", encoding="utf-8", opener=private_file) as f:
        w = csv.writer(f)
        w.writerow(
            ["question", "variant", "points", "graded", "tried", "passed", "median_points",
             "facility", "discrimination", "p_holm", "flagged", *tiers]
        )  # fmt: skip
        for q in numbers.questions:
            w.writerow(
                [q.qid, "", q.points, q.graded, q.attempted, q.passed, q.median_points,
                 q.facility, q.discrimination, "", "", *(q.tiers.get(t, 0) for t in tiers)]
            )  # fmt: skip
            for v in q.variants:
                w.writerow(
                    [q.qid, v.name, q.points, v.students, "", v.passed, "", v.rate, "",
                     v.p_value, v.flagged, *([""] * len(tiers))]
                )  # fmt: skip
    with open(json_path, "w", encoding="utf-8", opener=private_file) as f:
        f.write(json.dumps(dataclasses.asdict(numbers), ensure_ascii=False, indent=1) + "\n")
    return [html_path, csv_path, json_path]
