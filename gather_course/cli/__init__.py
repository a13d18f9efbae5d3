"""The gather-course command line: study the course, check a notebook, release, grade a class.

For learners:
  gather-course start [DIR]              copy the lectures and exercises into DIR (default
                                         ~/gather-course-work) and open it in JupyterLab
  gather-course check NOTEBOOK.ipynb     report each question of a notebook; exit 1 if any fails
  gather-course progress [DIR]           which questions of which assignment pass

For instructors and maintainers:
  gather-course release                  regenerate exercises/ from solutions/ (nbgrader)
  gather-course release --class-seed S --to DIR   a class's course, with its question variants
  gather-course grade ASSIGNMENT         grade submitted/*/ASSIGNMENT in a sandbox, write a CSV of scores
  gather-course similar ASSIGNMENT       copy report: alike answers, published solutions
  gather-course execute NOTEBOOK...      re-run lecture/solution notebooks on CPU, store outputs
  gather-course twins [--accept]         keep zh/ (the Chinese edition) in step with the English
  gather-course bench                    time gather against six other ways (CPU, and CUDA if any)
"""

from __future__ import annotations

import argparse
import sys

from .._errors import GatherCourseError
from . import _instructor, _learner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gather-course",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _learner.add_commands(sub)
    _instructor.add_commands(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.lab_args = argv[cut + 1 :]
    if args.lab_args and args.command != "start":
        parser.error(f"only `start` takes options after --, got {' '.join(args.lab_args)}")
    try:
        return args.func(args)
    except GatherCourseError as exc:
        print(f"gather-course: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
