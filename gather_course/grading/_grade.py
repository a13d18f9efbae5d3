"""Grading a whole class: the referee decides, nbgrader records; past broken submissions."""

from __future__ import annotations

import collections
import csv
import datetime
import glob
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .._errors import GatherCourseError
from .._i18n import edition
from ..course import (
    RELEASE,
    csv_target,
    known_assignment,
    nbgrader_api,
    submissions,
)
from ..questions import is_misconception
from ._classes import own_variants
from ._classjob import student_job
from ._gradebook import generated, gradebook_lock
from ._journal import Journal
from ._pools import open_pool
from ._private import close_course, private_file
from ._receipts import (
    SubmissionTime,
    TimeSource,
    read_receipts,
    refused_receipts,
    submission_times,
    time_note,
)
from ._record import Recorder
from ._regrade import compared, keep_earlier
from ._verdict_log import VerdictLog

LOG = "grading-log.jsonl"  # the instructor's log, in the course root


@dataclass
class StudentGrade:
    """One student's grading: the scores, or why the submission could not be graded.
    ``score`` is after nbgrader's late penalty (``late_penalty`` points taken); ``time`` is
    the submission's time as grading took it (:mod:`._receipts`)."""

    student: str
    graded: bool
    score: float = 0.0
    max_score: float = 0.0
    questions: dict[str, float] = field(default_factory=dict)
    problem: str = ""
    notes: list[str] = field(default_factory=list)
    late_penalty: float = 0.0
    seconds_late: float = 0.0
    time: SubmissionTime | None = None
    due: datetime.datetime | None = None  # the assignment's due date for this student
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # per question, plain


def _released(root: Path, assignment: str) -> dict[str, Any]:
    """:func:`release_notebooks`, nbgrader asked (under the gradebook lock) only where
    ``exercises/`` does not hold them."""
    if any((root / RELEASE / assignment).glob("*.ipynb")):
        return release_notebooks(root, None, assignment)
    with gradebook_lock(root), nbgrader_api(root) as api:
        return release_notebooks(root, api, assignment)


def release_notebooks(root: Path, api: Any, assignment: str) -> dict[str, Any]:
    """The student notebooks of ``assignment`` as released: what submissions are compared with."""
    import nbformat

    folder = root / RELEASE / assignment
    if any(folder.glob("*.ipynb")):
        return {p.name: nbformat.read(p, 4) for p in sorted(folder.glob("*.ipynb"))}
    with generated(api, assignment) as made:
        return {p.name: nbformat.read(p, 4) for p in sorted(made.glob("*.ipynb"))}


def _log(root: Path, entry: dict[str, Any]) -> None:
    """The instructor's log: one JSON line per grading run (the secret seed is kept here only)."""
    with open(root / LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def grade_class(
    root: Path,
    assignment: str,
    csv_path: Path,
    timeout: float | None = None,
    progress: TextIO | None = None,
    jobs: int | None = None,
    require_sandbox: bool = False,
    pool: Any = None,
    scheduler: str | None = None,
) -> list[StudentGrade]:
    """Grade every submission of ``assignment`` with the referee, write ``csv_path``.

    Scores are decided by the referee, outside the students' code; nbgrader records them
    (gradebook, ``autograded/``, feedback), from this process only. A submission that
    cannot be graded is reported with the reason and scored 0; every other student is
    still graded. ``pool`` (from :func:`._pools.open_pool`: the embedded pool, or a Dask
    cluster with ``scheduler``) lets several assignments share warm workers. Each result
    is kept in the journal as it arrives: a run cut short is taken up by the next one.
    """
    known_assignment(root, assignment)
    progress = progress or sys.stderr  # (the stderr of the moment: a caller may redirect it)
    csv_path = csv_target(root, csv_path)
    students = submissions(root, assignment)
    if not students:
        raise GatherCourseError(
            f"no submissions of {assignment!r}: expected folders "
            f"submitted/<student>/{assignment}/ (nbgrader collect puts "
            "them there)."
        )
    if pool is None:
        own = open_pool(
            scheduler, min(jobs or os.cpu_count() or 1, len(students)), timeout, require_sandbox
        )
        try:
            return grade_class(root, assignment, csv_path, progress=progress, pool=own)
        finally:
            own.close()
    closed = close_course(root)  # (the command has said so where it closed it first)
    journal = Journal(root, assignment)
    receipts = read_receipts(root, assignment)
    times = submission_times(root, assignment, students, receipts)
    refusals = refused_receipts(receipts)
    _log(
        root,
        {
            "time": datetime.datetime.now().isoformat(timespec="seconds"),
            "assignment": assignment,
            "secret_seed": journal.secret,
            "resumed": journal.resumed,
            "pool": pool.describe(),
            "jobs": len(pool),
            "students": len(students),
            **_times_entry(times, refusals),
            **({"closed_to_others": closed} if closed else {}),
        },
    )
    judged, patterns = _judgeable(students)
    released = _released(root, assignment)
    earlier = keep_earlier(root, assignment, csv_path)  # graded before: its grades are kept
    log = VerdictLog(csv_path, assignment, released, edition(next(iter(released.values()))))
    recorder = _LateRecorder(root, assignment, times)  # written while the judging goes on
    try:
        results = _judge_all(
            root, assignment, judged, released, pool, journal, progress, log, recorder.add
        )
        problems = {s: r["problem"] for s, r in results.items() if r["problem"]}
        graded, unrecorded = recorder.finish(judged)
        problems.update({**unrecorded, **patterns})
        journal.end()
        outcomes = [_outcome(s, graded, problems, results, times) for s in students]
        log.submissions(outcomes, refusals)
        log.end()
    finally:
        recorder.close()
        log.close()
    _write_csv(csv_path, outcomes)
    if earlier is not None:
        progress.write("".join(line + "\n" for line in compared(earlier, csv_path)))
    return outcomes


class _LateRecorder:
    """The recorder (:class:`._record.Recorder`), started by the first verdict: its thread's
    set-up (nbgrader imported, the gradebook checked, the assignment registered: about 1 s
    of this process, under its one interpreter lock) comes while the class is judged, not
    before the first submission is."""

    def __init__(self, root: Path, assignment: str, times: dict[str, SubmissionTime]) -> None:
        self._args = (root, assignment, times)
        self._recorder: Recorder | None = None

    def _started(self) -> Recorder:
        if self._recorder is None:
            self._recorder = Recorder(*self._args)
        return self._recorder

    def add(self, result: dict[str, Any]) -> None:
        self._started().add(result)

    def finish(self, students: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
        return self._started().finish(students)

    def close(self) -> None:
        if self._recorder is not None:
            self._recorder.close()


def _times_entry(times: dict[str, SubmissionTime], refusals: list[Any]) -> dict[str, Any]:
    """What the instructor's log keeps of the submissions' times: the students whose time is
    only their claim, the claims earlier than received (with their note), the folders
    collecting refused."""
    return {
        "times_claimed_only": sorted(s for s, t in times.items() if t.source is TimeSource.CLAIMED),
        "claims_earlier_than_received": {
            s: time_note(t) for s, t in times.items() if t.claim_early_by is not None
        },
        "refused_at_collection": [r.folder for r in refusals],
    }


# nbgrader finds a student's folder with glob (submitted/<student>/<assignment>): a name with
# *, ? or [ matched classmates' folders, whose grades its autograde then overwrote with 0
# (red team, 2026-11-27). Such a folder is never judged nor recorded.
_PATTERN = (
    "its folder's name holds *, ? or [, which nbgrader reads as a pattern that matches other "
    "students' folders; rename the folder to the student's id and grade again"
)


def _judgeable(students: list[str]) -> tuple[list[str], dict[str, str]]:
    """The students to judge, and the folders never judged nor handed to nbgrader."""
    patterns = {s: _PATTERN for s in students if glob.has_magic(s)}
    return [s for s in students if s not in patterns], patterns


def _outcome(
    student: str,
    graded: dict[str, Any],
    problems: dict[str, str],
    results: dict[str, dict[str, Any]],
    times: dict[str, SubmissionTime],
) -> StudentGrade:
    """One student's outcome: the gradebook's scores, or why they are not a grade."""
    found = graded.get(student)
    if student in problems or found is None:  # whatever the gradebook holds is not a grade
        outcome = StudentGrade(
            student,
            False,
            max_score=found.max_score if found else 0.0,
            problem=problems.get(student, ""),
        )
    else:
        outcome = StudentGrade(
            student,
            True,
            found.score,
            found.max_score,
            found.questions,
            late_penalty=found.late_penalty,
            seconds_late=found.seconds_late,
            due=found.due,
        )
    judged = results.get(student, {})  # (none for a folder never judged: see _PATTERN)
    outcome.notes = list(judged.get("notes") or [])
    outcome.verdicts = dict(judged.get("verdicts") or {})
    outcome.time = times.get(student)
    return outcome


def _judge_all(
    root: Path,
    assignment: str,
    students: list[str],
    released: dict[str, Any],
    pool: Any,
    journal: Journal,
    progress: TextIO,
    log: VerdictLog,
    recorded: Callable[[dict[str, Any]], None],
) -> dict[str, dict[str, Any]]:
    """Every student's verdicts: kept in the journal from a run cut short, or judged by the
    pool now (each kept in the journal and the verdict log, and ``recorded``, as it
    arrives)."""
    results: dict[str, dict[str, Any]] = {}
    todo = []
    own, note = own_variants(root, assignment, released)
    if note:
        progress.write(note + "\n")
    for student in students:
        folder = root / "submitted" / student / assignment
        job = student_job(folder, student, released, own(student))
        kept = journal.done(student, job.digest)
        if kept is None:
            todo.append(job)
        else:
            results[student] = kept
            log.add(kept, job.variants)
            recorded(kept)
    variants = {job.student: job.variants for job in todo}
    bar = _bar(progress, assignment, len(students), len(results))
    try:
        for result in pool.run(todo, released, journal.secret) if todo else ():
            journal.add(result)
            log.add(result, variants.get(result["student"]))
            recorded(result)
            results[result["student"]] = result
            bar.set_postfix_str(result["student"], refresh=False)
            bar.update(1)
    finally:
        bar.close()
    return results


def _bar(out: TextIO, assignment: str, total: int, done: int) -> Any:
    """The class's progress on a terminal: done / total, the rate and the time left."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=done,
        desc=assignment,
        unit="submission",
        file=out,
        mininterval=0.5,
        dynamic_ncols=True,
        disable=None if out.isatty() else False,
    )


# The grades CSV's columns after the questions': the late penalty (score is after it, as in
# nbgrader's export), how late, the time grading used and where it came from, the student's
# claim, and a note where the two disagree or no receipt was found.
_TIME_COLUMNS = [
    "late_penalty",
    "seconds_late",
    "submitted_at",
    "time_source",
    "claimed_at",
    "time_note",
]


def _time_cells(o: StudentGrade) -> list[str]:
    t = o.time
    claimed = t.claimed if t else None
    if claimed is not None:
        claim = claimed.isoformat(timespec="seconds")
    else:  # what a student wrote is never a cell as written (a spreadsheet's formula)
        claim = f"not a time: {t.claim!a}" if t and t.claim else ""
    return [
        f"{o.late_penalty:g}",
        f"{o.seconds_late:g}",
        t.time.isoformat(timespec="seconds") if t and t.time else "",
        t.source.value if t else "",
        claim,
        time_note(t) if t else "",
    ]


def _write_csv(path: Path, outcomes: list[StudentGrade]) -> None:
    """The grades: each question's points, then the times, the problem, and each question's
    tier and misconception (the named mistake its answer matches, or '')."""
    questions = sorted({q for o in outcomes for q in o.questions})
    why = [f"{q}:{c}" for q in questions for c in ("tier", "misconception")]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8", opener=private_file) as f:
        w = csv.writer(f)
        w.writerow(
            ["student", "score", "max_score", "status", *questions, *_TIME_COLUMNS, "problem", *why]
        )
        for o in outcomes:
            w.writerow(
                [
                    o.student,
                    f"{o.score:g}",
                    f"{o.max_score:g}",
                    "graded" if o.graded else "NOT GRADED",
                    *(f"{o.questions[q]:g}" if q in o.questions else "" for q in questions),
                    *_time_cells(o),
                    o.problem,
                    *(cell for q in questions for cell in _why_cells(o.verdicts.get(q))),
                ]
            )


def _why_cells(verdict: dict[str, Any] | None) -> tuple[str, str]:
    """A question's tier and misconception as the CSV holds them (in English)."""
    if not verdict:
        return "", ""
    found = verdict.get("diagnosis")
    mistake = ""
    if isinstance(found, list) and len(found) == 2 and is_misconception(str(found[0])):
        args = {str(k): str(v) for k, v in dict(found[1]).items()}
        mistake = str(found[0]).format_map(collections.defaultdict(str, args))
    return str(verdict.get("tier") or ""), mistake
