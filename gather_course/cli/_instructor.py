"""The course's commands, for instructors and maintainers: ``twins``, ``release`` (the course,
or a class's), ``execute`` and ``bench``, and the parser of every instructor's command (a
class's own, ``grade`` and the rest, are :mod:`._class`'s). They speak English
(docs/instructor-guide.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import _
from . import _class


def add_commands(sub: Any) -> None:
    """The instructor's and maintainer's subcommands, on ``gather-course``'s parser."""
    _add_twins(sub)
    _add_release(sub)
    _class.add_commands(sub)
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
    from ..course import EDITION, SOURCES, course_root, sync_twins

    root = course_root(args.course)
    todo = sync_twins(root, accept=args.accept)
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
    from ..course import course_root, release

    root = course_root(args.course)
    if args.class_seed is not None or args.to or args.roster:
        from ..grading import read_roster, release_class

        if args.class_seed is None or not args.to or args.out:
            raise GatherCourseError(
                "a class release takes --class-seed SEED and --to DIR together (and no --out)."
            )
        roster = read_roster(Path(args.roster)) if args.roster else None
        if Path(args.to).is_dir() and (Path(args.to) / "class.json").is_file():
            _class.say_closed(Path(args.to).resolve())  # (a new one is made closed)
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


def _execute(args: argparse.Namespace) -> int:
    from ..course import execute_notebook, notebook_file

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
