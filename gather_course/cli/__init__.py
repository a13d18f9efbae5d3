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


def _without_the_slow_iri_checker() -> None:
    """Leave out jsonschema's optional "iri" format checker in this command's process.

    nbformat imports jsonschema, which imports ``rfc3987_syntax`` when it is installed (the
    Jupyter stack installs it): that compiles about 35 Earley parsers at import, 1.2 s of CPU
    in every command that reads a notebook, for a format no notebook schema uses (upstream:
    python-jsonschema/jsonschema#1428; ``rfc3987-syntax2`` loads lazily). Without it,
    jsonschema simply does not check that format. Nothing is changed where it is imported.
    """
    if "rfc3987_syntax" not in sys.modules and "jsonschema" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # import -> ImportError


def main(argv: list[str] | None = None) -> int:
    _without_the_slow_iri_checker()
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
