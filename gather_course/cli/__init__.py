"""The gather-course command line: study the course, check a notebook, release, grade a class.

``gather-course --help`` shows :data:`_DESCRIPTION`, in the learner's language (the working
copy's: :func:`main`), as are argparse's own headings; the learner's commands (``start``,
``check``, ``progress``) speak it too. The instructor's commands speak English.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys

from .._errors import GatherCourseError
from .._i18n import N_, _, choosing
from . import _instructor, _learner

__all__ = ["main"]  # the front door: the console script's entry point

_DESCRIPTION = N_(
    """The gather-course command line: study the course, check a notebook, release, grade a class.

For learners:
  gather-course start [DIR]              copy the lectures and exercises into DIR (default
                                         ~/gather-course-work) and open it in JupyterLab
  gather-course check NOTEBOOK.ipynb     report each question of a notebook; exit 1 if any fails
  gather-course progress [DIR]           which questions of which assignment pass
  gather-course practice [QUESTION]      a fresh variant of a question to practise on
                                         (default: the one you are weakest on)

For instructors and maintainers:
  gather-course release                  regenerate exercises/ from solutions/ (nbgrader)
  gather-course release --class-seed S --to DIR   a class's course, with its question variants
  gather-course grade ASSIGNMENT         grade submitted/*/ASSIGNMENT in a sandbox, write a CSV of scores
  gather-course report ASSIGNMENT        the class report: where the class is stuck (HTML)
  gather-course similar ASSIGNMENT       copy report: alike answers, published solutions
  gather-course execute NOTEBOOK...      re-run lecture/solution notebooks on CPU, store outputs
  gather-course twins [--accept]         keep zh/ (the Chinese edition) in step with the English
  gather-course bench                    time gather against six other ways (CPU, and CUDA if any)"""
)


class _Formatter(argparse.HelpFormatter):
    """argparse's help, with its usage line's prefix in the learner's language, and a
    heading in Chinese ending in a full-width colon (argparse writes ``:``)."""

    def format_help(self) -> str:
        return re.sub(r"(?m)^(\S.*[\u3000-\u9fff]):$", "\\1：", super().format_help())

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)


class _RawFormatter(_Formatter, argparse.RawDescriptionHelpFormatter):
    """The same, with the description laid out as written."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, speaking the learner's language where it speaks: the headings of
    its help, its ``-h``, the first words of an error (what argparse says of the arguments
    themselves stays its own)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        kwargs["add_help"] = False
        super().__init__(*args, **kwargs)
        self._positionals.title = _("positional arguments")
        self._optionals.title = _("options")
        self.add_argument(
            "-h",
            "--help",
            action="help",
            default=argparse.SUPPRESS,
            help=_("show this help and exit"),
        )

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(2, _("{prog}: error: {message}").format(prog=self.prog, message=message) + "\n")


def _learners_language() -> str | None:
    """The language of the working copy the learner stands in, else of the one ``start``
    last opened; None where there is none."""
    from ..course import learners_copy, working_copy_language

    copy = learners_copy()
    return working_copy_language(copy) if copy is not None else None


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
    """Parse ``argv`` and run the command. The help, the errors of the arguments and the
    learner's commands speak the learner's language (:func:`_learners_language` first)."""
    _without_the_slow_iri_checker()
    lang = _learners_language()
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    with choosing(lang):
        parser = _Parser(
            prog="gather-course", description=_(_DESCRIPTION), formatter_class=_RawFormatter
        )
        sub = parser.add_subparsers(dest="command", required=True)
        _learner.add_commands(sub)
        _instructor.add_commands(sub)
        args = parser.parse_args(argv[:cut])
        args.lab_args = argv[cut + 1 :]
        if args.lab_args and args.command != "start":
            parser.error(
                _("only `start` takes options after --, got {args}").format(
                    args=" ".join(args.lab_args)
                )
            )
    learner = args.command in _learner.COMMANDS  # the instructor's speak English
    try:
        with choosing(lang) if learner else contextlib.nullcontext():
            return args.func(args)
    except GatherCourseError as exc:
        print(f"gather-course: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
