"""A class's commands: ``tasks``, ``grade``, ``certificates``, ``report`` and ``similar``
(the copy report). They speak English (docs/instructor-guide.md); the class's students read
their feedback in the class's language.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import _


def add_commands(sub: Any) -> None:
    """A class's subcommands, on ``gather-course``'s parser."""
    _add_tasks(sub)
    _add_grade(sub)
    _add_certificates(sub)
    _add_report(sub)
    _add_similar(sub)


def _add_tasks(sub: Any) -> None:
    """``gather-course tasks``."""
    p = sub.add_parser(
        "tasks", help=_("show a student's own tasks in a class release, as their notebook does")
    )
    p.add_argument("student", help="the student's id, as on the class's roster")
    p.add_argument("assignment", nargs="?", help="e.g. basics (default: every assignment)")
    p.add_argument("--course", default=".", help="the class's folder, with class.json (default: .)")
    p.set_defaults(func=_tasks)


def _add_grade(sub: Any) -> None:
    """``gather-course grade``."""
    p = sub.add_parser("grade", help=_("grade every submission of one or more assignments"))
    p.add_argument("assignment", nargs="+", help="e.g. basics (several share the workers)")
    p.add_argument("--course", default=".", help="the course root (default: .)")
    p.add_argument("--csv", help="where to write the scores (default: grades-ASSIGNMENT.csv)")
    p.add_argument(
        "--timeout",
        type=float,
        help="seconds per call of a learner's function, and per cell (default 10)",
    )
    p.add_argument(
        "--jobs", type=int, help="submissions graded at once (default: the number of cores)"
    )
    p.add_argument(
        "--require-sandbox",
        action="store_true",
        help="refuse to grade without bubblewrap's sandbox",
    )
    p.add_argument(
        "--scheduler",
        help="grade on a Dask cluster: local:N starts N local worker processes (TLS, on the "
        "loopback), or the address of a running scheduler: tls://HOST:PORT with "
        "--certificates (PORT: 8786 when left out); default: this machine's pool",
    )
    p.add_argument(
        "--certificates",
        metavar="DIR",
        help="the class's certificates for a tls:// scheduler (the folder `gather-course "
        "certificates` made; default: c.GatherCourse.certificates in nbgrader_config.py)",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="write the class report beside the CSV once graded (as gather-course report)",
    )
    p.add_argument(
        "--insecure",
        action="store_true",
        help="allow a tcp:// scheduler on another host (no TLS: anyone who reaches it can "
        "run code on the graders); only on a network no student can reach",
    )
    p.set_defaults(func=_grade)


def _add_certificates(sub: Any) -> None:
    """``gather-course certificates``."""
    p = sub.add_parser(
        "certificates",
        help=_(
            "make a grading cluster's TLS certificates (a CA, the scheduler's, the "
            "workers' and the instructor's) in a new folder"
        ),
    )
    p.add_argument("folder", help="a new (or empty) folder, kept where no student can read")
    p.add_argument(
        "--days", type=int, default=400, help="how long they are valid (default 400 days)"
    )
    p.set_defaults(func=_certificates)


def _add_report(sub: Any) -> None:
    """``gather-course report``."""
    p = sub.add_parser(
        "report",
        help=_(
            "the class report of a graded assignment: where the class is stuck, item "
            "statistics, each variant's fairness (HTML, CSV and JSON beside the grades CSV)"
        ),
    )
    p.add_argument("assignment", help="e.g. basics")
    p.add_argument("--course", default=".", help="the course root (default: .)")
    p.add_argument("--csv", help="the grades CSV of the run (default: grades-ASSIGNMENT.csv)")
    p.set_defaults(func=_report_command)


def _add_similar(sub: Any) -> None:
    """``gather-course similar``."""
    p = sub.add_parser(
        "similar",
        help=_(
            "copy report: answers alike once names and layout are set aside, or equal to a "
            "published solution"
        ),
    )
    p.add_argument("assignment", help="e.g. basics")
    p.add_argument("--course", default=".", help="the course root (default: .)")
    p.set_defaults(func=_similar)


def _tasks(args: argparse.Namespace) -> int:
    from ..grading import tasks_report

    print(tasks_report(Path(args.course), args.student, args.assignment))
    return 0


def _grade(args: argparse.Namespace) -> int:
    # torch, the question bank and nbgrader are imported once the pool is open: the
    # embedded pool's workers warm up meanwhile (nothing is written before a refusal)
    from ..course import course_root, csv_target, known_assignment, submissions
    from ..grading import open_pool

    root = course_root(args.course)
    for assignment in args.assignment:  # every argument checked before grading
        known_assignment(root, assignment)
    if args.csv and len(args.assignment) > 1:
        raise GatherCourseError(
            "--csv takes one assignment; leave it out to write grades-ASSIGNMENT.csv for each."
        )
    targets = {
        a: csv_target(root, Path(args.csv) if args.csv else root / f"grades-{a}.csv")
        for a in args.assignment
    }
    classes = {a: submissions(root, a) for a in args.assignment}
    for assignment, students in classes.items():
        if not students:
            raise GatherCourseError(
                f"no submissions of {assignment!r}: expected folders "
                f"submitted/<student>/{assignment}/ (nbgrader collect "
                "puts them there)."
            )
    jobs = min(args.jobs or os.cpu_count() or 1, max(map(len, classes.values())))
    certificates = None
    if args.scheduler:  # (the setting is read only for a cluster: reading it imports nbgrader)
        certificates = args.certificates or _setting(root, "certificates")
    if args.scheduler and not args.scheduler.startswith("local:"):
        from ..grading import check_scheduler_address

        check_scheduler_address(
            args.scheduler, certificates=bool(certificates), insecure=args.insecure
        )
    pool = open_pool(
        args.scheduler, jobs, args.timeout, args.require_sandbox, certificates, args.insecure
    )
    try:
        from ..grading import grade_class

        say_closed(root)  # (once grading can begin: nothing is changed before a refusal)
        print(pool.describe(), flush=True)
        for assignment in args.assignment:
            outcomes = grade_class(root, assignment, targets[assignment], pool=pool)
            _report(root, assignment, outcomes, targets[assignment])
            if args.report:
                _print_report(targets[assignment])
    finally:
        pool.close()
    return 0


def _setting(root: Path, name: str) -> str | None:
    """``c.GatherCourse.<name>`` in the course's nbgrader_config.py (a path there is relative
    to the course root), or None."""
    from traitlets.config.loader import PyFileConfigLoader

    if not (root / "nbgrader_config.py").is_file():
        return None
    config = PyFileConfigLoader("nbgrader_config.py", str(root)).load_config()
    value = config.GatherCourse.get(name) if "GatherCourse" in config else None
    return str(root / Path(value).expanduser()) if value else None


def _report_command(args: argparse.Namespace) -> int:
    from ..course import course_root, csv_target, known_assignment

    root = course_root(args.course)
    known_assignment(root, args.assignment)
    target = csv_target(
        root, Path(args.csv) if args.csv else root / f"grades-{args.assignment}.csv"
    )
    say_closed(root)
    _print_report(target)
    return 0


def say_closed(folder: Path) -> None:
    """Close a class's folder to other users, and say so where it was open."""
    from ..grading import close_course

    line = close_course(folder)
    if line:
        print(f"gather-course: {line}", file=sys.stderr, flush=True)


def _print_report(csv_path: Path) -> None:
    from ..report import write_report

    written = write_report(csv_path)
    print(f"class report: {written[0]} (and {written[1].name}, {written[2].name})")


def _certificates(args: argparse.Namespace) -> int:
    from ..grading import make_certificates

    written = make_certificates(Path(args.folder), args.days)
    print(f"wrote {len(written)} files in {args.folder}:")
    for path in written:
        print(f"  {path.name}")
    print((Path(args.folder) / "README.txt").read_text(), end="")
    return 0


def _similar(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("copydetect") is None:  # an extra: learners do not need it
        raise GatherCourseError(
            "the copy report needs copydetect (its winnowing finds partial copies), which is "
            "not installed here: pip install 'gather-course[copies]'."
        )
    from ..copies import similar
    from ..course import course_root, known_assignment, nbgrader_api
    from ..grading import Referee, Worker, release_notebooks

    root = course_root(args.course)
    known_assignment(root, args.assignment)
    with nbgrader_api(root) as api:
        released = release_notebooks(root, api, args.assignment)
    referee = Referee(Worker)  # runs answers against classmates' variants, sandboxed
    try:
        report = similar(root, args.assignment, released, referee)
    finally:
        referee.close()
    print(f"Copy report for {args.assignment} (it changes no score; look before you act):")
    for note in report.notes:
        print(f"  note: {note}")
    for key, groups in sorted(report.groups.items()):
        for students in groups:
            print(
                f"  {key}: {', '.join(students)} wrote the same code (names, comments and "
                "layout set aside)"
            )
    for m in report.partial:
        a, b = m.students
        print(f"  {m.question}: {a} and {b} share {m.share:.0%} of their code; shared lines:")
        width = max(len(left) for left, _right in m.lines)
        for left, right in m.lines:
            print(f"      {left:{width}} | {right}")
    for key, matches in sorted(report.published.items()):
        for student, which in matches:
            print(f"  {key}: {student}'s answer is the published {which} answer")
    for c in report.crossed:
        print(
            f"  {c.question}: {c.student}'s answer fails their own variant ({c.own}) and is "
            f"right for {c.other}, the variant of {', '.join(c.holders)} (the variants "
            f"differ by {len(c.mistakes)} common mistakes: {'; '.join(c.mistakes)})"
        )
    if report.set_aside:
        print(
            f"  set aside {len(report.set_aside)} answers right for a classmate's variant: "
            "the two variants differ by one common mistake only, which an honest answer "
            "makes ("
            + "; ".join(
                f"{c.student}, {c.question}: {', '.join(c.mistakes)}" for c in report.set_aside
            )
            + ")"
        )
    for key, reached in sorted(report.internals.items()):
        for student, name in reached:
            print(
                f"  {key}: {student}'s answer reaches into the course ({name}); grading "
                "refuses it, but ask where it came from"
            )
    if not (
        report.groups or report.partial or report.published or report.internals or report.crossed
    ):
        print("  nothing alike.")
    return 0


def _report(root: Path, assignment: str, outcomes: list, csv_path: Path) -> None:
    from ..grading import (
        SubmissionTime,
        TimeSource,
        duration,
        read_receipts,
        refused_receipts,
        shown_name,
        time_note,
    )

    for o in outcomes:
        if o.graded and o.late_penalty:
            print(
                f"{o.student:20} {o.score:g}/{o.max_score:g} ({o.score + o.late_penalty:g} "
                f"before a late penalty of {o.late_penalty:g}: {duration(o.seconds_late)} late)"
            )
        elif o.graded:
            late = f" ({duration(o.seconds_late)} late, no penalty)" if o.seconds_late else ""
            print(f"{o.student:20} {o.score:g}/{o.max_score:g}{late}")
        else:
            print(f"{o.student:20} NOT GRADED: {o.problem}")
        note = time_note(o.time) if o.time and o.time.source is TimeSource.RECEIVED else ""
        for line in [*o.notes, *([note] if note else [])]:
            print(f"{'':20} note: {line}")
    bad = [o.student for o in outcomes if not o.graded]
    print(
        f"\n{assignment}: {len(outcomes) - len(bad)} of {len(outcomes)} submissions graded; "
        f"scores in {csv_path}."
    )
    if bad:
        print(
            f"Could not grade: {', '.join(bad)}. Open their notebooks (submitted/<student>/"
            f"{assignment}/) and grade them by hand; see docs/instructor-guide.md."
        )
    unproven = [  # (without a due date, a submission's time decides nothing)
        o.student
        for o in outcomes
        if o.due is not None and o.time and o.time.source is TimeSource.CLAIMED
    ]
    if unproven:
        why = time_note(SubmissionTime(None, TimeSource.CLAIMED))
        shown = ", ".join(unproven[:10]) + (" ..." if len(unproven) > 10 else "")
        print(f"Times not proven for {len(unproven)} ({shown}): {why}.")
    for r in refused_receipts(read_receipts(root, assignment)):
        print(
            f"Refused at collection: {shown_name(r.folder)} ({r.reason}); never graded as "
            f"{shown_name(r.student)}'s. "
            + (f"Its files are in {shown_name(r.set_aside)}." if r.set_aside else "")
        )
