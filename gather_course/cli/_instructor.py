"""The instructor's and maintainer's commands: ``release``, ``tasks``, ``grade``,
``similar``, ``twins``, ``execute`` and ``bench``. They speak English (docs/instructor-guide.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import _


def add_commands(sub: Any) -> None:
    """The instructor's and maintainer's subcommands, on ``gather-course``'s parser."""
    _add_twins(sub)
    _add_release(sub)
    _add_tasks(sub)
    _add_grade(sub)
    _add_certificates(sub)
    _add_report(sub)
    _add_similar(sub)
    _add_execute(sub)
    _add_bench(sub)


def _add_twins(sub: Any) -> None:
    """``gather-course twins``."""
    p = sub.add_parser(
        "twins",
        help=_("rebuild the Chinese notebooks from their English twins, list cells to translate"),
    )
    p.add_argument("--course", default=".", help="the course root (default: .)")
    p.add_argument(
        "--accept",
        action="store_true",
        help="record every cell's current English as translated (after translating)",
    )
    p.set_defaults(func=_twins)


def _add_release(sub: Any) -> None:
    """``gather-course release``."""
    p = sub.add_parser("release", help=_("regenerate exercises/ from solutions/ with nbgrader"))
    p.add_argument("--course", default=".", help="the course root (default: .)")
    p.add_argument("--out", help="write the student notebooks here instead of exercises/")
    p.add_argument(
        "--class-seed",
        type=int,
        help="a class's own release: each student's own variant of each question, drawn from "
        "this secret seed and their id (with --to)",
    )
    p.add_argument(
        "--roster",
        help="nbgrader's student CSV (a column id) of the class (default: the students of "
        "the class's gradebook)",
    )
    p.add_argument("--to", help="the folder of the class's nbgrader course (with --class-seed)")
    p.set_defaults(func=_release)


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


def _add_execute(sub: Any) -> None:
    """``gather-course execute``."""
    p = sub.add_parser(
        "execute", help=_("re-run lecture and solution notebooks on CPU, store outputs")
    )
    p.add_argument("paths", nargs="+", help="notebooks, e.g. notebooks/*.ipynb")
    p.set_defaults(func=_execute)


def _add_bench(sub: Any) -> None:
    """``gather-course bench``."""
    p = sub.add_parser(
        "bench",
        help=_(
            "time gather, a loop, indexing, take_along_dim, take, index_select and a one-hot "
            "matmul (Markdown tables)"
        ),
    )
    p.add_argument("--device", help="cpu or cuda (default: the CPU, and CUDA when present)")
    p.add_argument(
        "--sizes",
        type=_arg("parse_sizes"),
        help="comma-separated: small, medium, large, xlarge or RxCxK "
        "(default: small,medium,large; xlarge too on CUDA)",
    )
    p.add_argument(
        "--patterns",
        type=_arg("parse_patterns"),
        default="per-row,shared",
        help="per-row, shared or both",
    )
    p.add_argument(
        "--repeats",
        type=_arg("parse_repeats"),
        default=15,
        help="timed blocks per way (default 15)",
    )
    p.set_defaults(func=_bench)


def _twins(args: argparse.Namespace) -> int:
    from ..course._course import course_root
    from ..course._twins import EDITION, SOURCES, sync

    root = course_root(args.course)
    todo = sync(root, accept=args.accept)
    if args.accept:
        print(f"recorded the English of every cell as translated in {EDITION}/{SOURCES}")
        return 0
    for cell in todo:
        print(f"to translate: {cell}")
    print(
        f"{len(todo)} cells to translate or check in {EDITION}/; then run "
        "`gather-course twins --accept`."
        if todo
        else f"every notebook of {EDITION}/ is up to date with its English twin."
    )
    return 1 if todo else 0


def _release(args: argparse.Namespace) -> int:
    from ..course._course import course_root, release

    root = course_root(args.course)
    if args.class_seed is not None or args.to or args.roster:
        from ..grading._classes import release_class
        from ..grading._roster import read_roster

        if args.class_seed is None or not args.to or args.out:
            raise GatherCourseError(
                "a class release takes --class-seed SEED and --to DIR together (and no --out)."
            )
        roster = read_roster(Path(args.roster)) if args.roster else None
        if Path(args.to).is_dir() and (Path(args.to) / "class.json").is_file():
            _say_closed(Path(args.to).resolve())  # (a new one is made closed)
        info = release_class(root, args.class_seed, Path(args.to), roster)
        kinds = {
            assignment: len({json.dumps(v, sort_keys=True) for v in table.values()})
            for assignment, table in info["variants"].items()
        }
        print(f"roster: {len(info['roster'])} students, from {info['roster_from']}")
        for assignment, n in kinds.items():
            print(f"{assignment}: {len(info['roster'])} students, {n} different sets of variants")
        print(
            f"wrote the class course to {Path(args.to).resolve()}; every student's variants "
            f"are in {Path(args.to).resolve() / 'class.json'} (yours: never hand it out). "
            f"Grade it with `gather-course grade ASSIGNMENT --course {args.to}`."
        )
        return 0
    for path in release(root, Path(args.out) if args.out else None):
        print(f"wrote {path}")
    return 0


def _tasks(args: argparse.Namespace) -> int:
    from ..grading._tasks import tasks_report

    print(tasks_report(Path(args.course), args.student, args.assignment))
    return 0


def _grade(args: argparse.Namespace) -> int:
    # torch, the question bank and nbgrader are imported once the pool is open: the
    # embedded pool's workers warm up meanwhile (nothing is written before a refusal)
    from ..course._course import course_root, known_assignment, submissions
    from ..grading._pools import open_pool

    root = course_root(args.course)
    for assignment in args.assignment:  # every argument checked before grading
        known_assignment(root, assignment)
    if args.csv and len(args.assignment) > 1:
        raise GatherCourseError(
            "--csv takes one assignment; leave it out to write grades-ASSIGNMENT.csv for each."
        )
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
        from ..grading._scheduler_address import check

        check(args.scheduler, certificates=bool(certificates), insecure=args.insecure)
    pool = open_pool(
        args.scheduler, jobs, args.timeout, args.require_sandbox, certificates, args.insecure
    )
    try:
        from ..grading._grade import csv_target, grade_class

        targets = {
            a: csv_target(root, Path(args.csv) if args.csv else root / f"grades-{a}.csv")
            for a in args.assignment
        }
        _say_closed(root)  # (once grading can begin: nothing is changed before a refusal)
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
    from ..course._course import course_root, known_assignment
    from ..grading._grade import csv_target

    root = course_root(args.course)
    known_assignment(root, args.assignment)
    target = csv_target(
        root, Path(args.csv) if args.csv else root / f"grades-{args.assignment}.csv"
    )
    _say_closed(root)
    _print_report(target)
    return 0


def _say_closed(folder: Path) -> None:
    """Close a class's folder to other users, and say so where it was open."""
    from ..grading._private import close_course

    line = close_course(folder)
    if line:
        print(f"gather-course: {line}", file=sys.stderr, flush=True)


def _print_report(csv_path: Path) -> None:
    from ..report import write_report

    written = write_report(csv_path)
    print(f"class report: {written[0]} (and {written[1].name}, {written[2].name})")


def _certificates(args: argparse.Namespace) -> int:
    from ..grading._tls import make_certificates

    written = make_certificates(Path(args.folder), args.days)
    print(f"wrote {len(written)} files in {args.folder}:")
    for path in written:
        print(f"  {path.name}")
    print((Path(args.folder) / "README.txt").read_text(), end="")
    return 0


def _similar(args: argparse.Namespace) -> int:
    import importlib.util

    if importlib.util.find_spec("copydetect") is None:  # an extra: learners do not need it
        raise GatherCourseError(
            "the copy report needs copydetect (its winnowing finds partial copies), which is "
            "not installed here: pip install 'gather-course[copies]'."
        )
    from ..copies._similar import similar
    from ..course._course import course_root, known_assignment, nbgrader_api
    from ..grading._grade import release_notebooks
    from ..grading._referee import Referee
    from ..grading._sandbox import Worker

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
    from ..grading._inbound import shown
    from ..grading._receipts import (
        SubmissionTime,
        TimeSource,
        duration,
        read,
        refused,
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
    for r in refused(read(root, assignment)):
        print(
            f"Refused at collection: {shown(r.folder)} ({r.reason}); never graded as "
            f"{shown(r.student)}'s. "
            + (f"Its files are in {shown(r.set_aside)}." if r.set_aside else "")
        )


def _execute(args: argparse.Namespace) -> int:
    from ..course._course import notebook_file
    from ..course._execute import execute_notebook

    paths = [notebook_file(name) for name in args.paths]  # all checked before any runs
    for path in paths:
        print(f"executing {path}", file=sys.stderr)
        execute_notebook(path)
    return 0


def _bench(args: argparse.Namespace) -> int:
    import datetime

    import torch

    from ..benchmark import run_suite
    from ..device import parse_device

    devices = (
        [args.device] if args.device else ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    )
    for device in devices:  # every argument checked before any timing
        parse_device(device, "--device", "Leave --device out to time the CPU only.")
    print(f"gather-course bench, {datetime.date.today().isoformat()}\n")
    for device in devices:
        default = ["small", "medium", "large"] + (["xlarge"] if device.startswith("cuda") else [])
        report = run_suite(
            args.sizes or default, device, patterns=args.patterns, repeats=args.repeats
        )
        print(f"## {device}\n\n{report.to_markdown()}\n", flush=True)
    return 0


def _arg(parser: str) -> Callable[[str], Any]:
    """An argparse ``type=`` that parses with ``gather_course.benchmark.<parser>`` (imported
    only when the option is used: it imports torch) and keeps the library's message."""

    def convert(text: str) -> Any:
        from .. import benchmark

        try:
            return getattr(benchmark, parser)(text)
        except GatherCourseError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parser.removeprefix("parse_")  # argparse names the type in errors
    return convert
