"""The learner's commands: ``start`` (a working copy in JupyterLab), ``check`` (one
notebook, judged as grading judges it) and ``progress`` (every exercise of a working copy).
Everything they print is in the learner's language.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import GatherCourseError
from .._i18n import _

if TYPE_CHECKING:
    from ..course import Copied


def add_commands(sub: Any) -> None:
    """The learner's subcommands, on ``gather-course``'s parser."""
    timeout_help = _("seconds per call of your function, and per cell (default 10)")
    p = sub.add_parser(
        "check", help=_("run a copy of an exercise notebook and report each question")
    )
    p.add_argument("notebook", help=_("e.g. exercises/basics/basics.ipynb"))
    p.add_argument("--timeout", type=float, default=10, help=timeout_help)
    p.set_defaults(func=_check)
    p = sub.add_parser(
        "start",
        help=_(
            "copy the lectures and exercises into a folder of your own and open it in JupyterLab"
        ),
    )
    p.add_argument(
        "dir",
        nargs="?",
        help=_("your working copy (default ~/gather-course-work); files already there are kept"),
    )
    p.add_argument(
        "--no-lab",
        action="store_true",
        help=_(
            "only make the copy (after --, options for jupyter lab: "
            "start DIR -- --no-browser --port 8890)"
        ),
    )
    p.add_argument(
        "--lang",
        choices=("en", "zh"),
        help=_(
            "the edition to copy: en or zh (default: the edition of the working copy "
            "already there, else GATHER_COURSE_LANG, else en)"
        ),
    )
    p.set_defaults(func=_start)
    p = sub.add_parser("progress", help=_("which questions of your working copy pass"))
    p.add_argument(
        "dir",
        nargs="?",
        help=_(
            "your working copy (default: the one you are in, else the one you last started, "
            "else ~/gather-course-work)"
        ),
    )
    p.add_argument("--timeout", type=float, default=10, help=timeout_help)
    p.set_defaults(func=_progress)
    p = sub.add_parser("practice", help=_("a fresh variant of a question to practise on"))
    p.add_argument(
        "question",
        nargs="?",
        help=_("e.g. basics.pick_per_row (default: the one your practice record is weakest on)"),
    )
    p.set_defaults(func=_practice)


# the learner's: they speak the learner's language
COMMANDS = ("check", "start", "progress", "practice")


def _practice(args: argparse.Namespace) -> int:
    from .._i18n import choosing
    from ..course import learners_copy, working_copy_language
    from ..questions import exercise, read_record, weakest

    folder = learners_copy()
    with choosing(working_copy_language(folder) if folder else None):
        questions, said = read_record(folder)
        if said:
            print(said)
        qid = args.question or weakest(questions)
        p = exercise(qid).practice()
        q = p.question
        for note in p.notes:
            print(note)
        print(_("Practice {qid}, variant {variant}").format(qid=q.qid, variant=p.variant) + "\n")
        print(_("Write `{signature}`: {task}").format(signature=q.signature, task=q.task_text()))
        if q.constraints:
            rules = _("**Constraints:** {constraints}").format(constraints=q.constraints)
            print("\n" + rules.replace("**", ""))  # (a terminal shows no Markdown)
        print(
            "\n"
            + _("Check it in a notebook or in Python (it goes into your practice record):")
            + "\n    import gather_course"
            + f"\n    p = gather_course.exercise({q.qid!r}).practice({p.variant!r})"
            + f"\n    def my_{q.signature}:"
            + "\n        ...  "
            + _("# your answer, under a name of its own")
            + f"\n    p.check(my_{q.name})"
            + "\n"
            + _("then `p.hint()` when stuck, and `p.solution()` once you have tried.")
        )
    return 0


def _check(args: argparse.Namespace) -> int:
    import contextlib

    from .._i18n import choosing, notebook_language

    lang = notebook_language(args.notebook)  # (none: the learner's, for "not found")
    with choosing(lang) if lang else contextlib.nullcontext():
        return _check_report(args)


def _check_report(args: argparse.Namespace) -> int:
    from .._text import pad
    from ..grading import check_notebook

    reports, notes = check_notebook(args.notebook, timeout=args.timeout)
    for r in reports:
        mark = _("passed") if r.passed else _("FAILED")
        points = _("{score}/{points} points").format(score=f"{r.score:g}", points=f"{r.points:g}")
        print(f"{pad(mark, 6)}  {r.grade_id.removeprefix('test_'):24} {points}")
        if r.message:
            print("\n".join("        " + line for line in r.message.strip().splitlines()))
    score, total = sum(r.score for r in reports), sum(r.points for r in reports)
    failed = sum(not r.passed for r in reports)
    for note in notes:
        print(_("note    {note}").format(note=note))
    print(
        "\n"
        + _("{score}/{total} points; ").format(score=f"{score:g}", total=f"{total:g}")
        + (
            _("{failed} of {n} questions fail.").format(failed=failed, n=len(reports))
            if failed
            else _("every question passes.")
        )
    )
    return 1 if failed else 0


def _start(args: argparse.Namespace) -> int:
    from .._i18n import choosing
    from ..course import copy_edition

    # start --lang zh answers in Chinese; start alone, in the language of the copy it reopens
    # (a new one: GATHER_COURSE_LANG, else the locale)
    with choosing(args.lang or copy_edition(args.dir)):
        return _start_in_language(args)


def _start_in_language(args: argparse.Namespace) -> int:
    from ..course import (
        DEFAULT_DIR,
        MARKER,
        lab_command,
        make_working_copy,
        remember,
        running_as_root,
        working_copy_language,
    )

    copied = make_working_copy(args.dir, lang=args.lang)
    where = copied.folder
    remember(where)  # `progress` run from any other folder shows this one
    if copied.set_aside is not None:
        print(
            _(
                "Could not read {marker}, this working copy's record of what it was given: "
                "kept it as {aside} and started a new record."
            ).format(marker=MARKER, aside=copied.set_aside.name)
        )
    if copied.added:
        print(_("Copied {n} notebooks into {where}.").format(n=len(copied.added), where=where))
    if copied.kept:
        print(
            _(
                "Kept {n} notebooks already there as they are (your work is never overwritten)."
            ).format(n=len(copied.kept))
        )
    _say_course_changes(copied)
    if args.no_lab:
        shown = f"{args.dir or DEFAULT_DIR}" + (f" --lang {args.lang}" if args.lang else "")
        print(_("Open it with: gather-course start {where}").format(where=shown))
        return 0
    command, env = lab_command(where, args.lab_args, lang=working_copy_language(where))
    if running_as_root():
        print(_("Running as root (as in a container): JupyterLab starts with --allow-root."))
    print(_("Opening JupyterLab in {where} (stop it with Ctrl+C).").format(where=where), flush=True)
    try:
        os.chdir(where)  # JupyterLab's terminal opens in the working copy, as its files do
        os.execve(command[0], command, env)
    except OSError as exc:
        raise GatherCourseError(
            _("could not start JupyterLab with {python} ({error}).").format(
                python=command[0], error=exc
            )
        ) from None
    return 0


def _say_course_changes(copied: Copied) -> None:
    """What ``start`` brought over from a course that changed since the working copy was
    made, one line each."""
    from .._i18n import listed

    if copied.unrecorded:
        print(
            _(
                "This working copy was made before gather-course recorded what it copied, so "
                "it cannot tell which files you changed: where a notebook is not the course's, "
                "yours is kept and the course's version is put beside it."
            )
        )
    if copied.updated:
        print(
            _(
                "Updated the lectures you had not changed to the course's new version: {files}."
            ).format(n=len(copied.updated), files=listed(p.name for p in copied.updated))
        )
    for mine, new in copied.beside:
        print(
            _("Kept your {file} as it is; the course's new version is beside it: {new}.").format(
                file=mine.as_posix(), new=new.name
            )
        )
    for mine, new in copied.exercises:
        print(
            _(
                "The course's exercise {name} is not the one in your {file}, which is kept as "
                "it is: the course's version is beside it, {new}. To take it, copy your answers "
                "into it, then delete yours and rename it {original}."
            ).format(name=mine.parent.name, file=mine.as_posix(), new=new.name, original=mine.name)
        )


def _practised(practised: dict[str, Any], grade_id: str) -> str:
    """The practice of the question a test cell checks, in a few words ('' if none is)."""
    from ..questions import exercise, exercise_ids, mastery, mastery_summary

    name = grade_id.removeprefix("test_")
    qid = next((q for q in exercise_ids() if exercise(q).name == name), None)
    return mastery_summary(mastery(practised, qid)) if qid else ""


def _practise_next(practised: dict[str, Any]) -> str:
    """What to practise next, as a command."""
    from ..questions import weakest

    return _("Practise next: gather-course practice {qid}").format(qid=weakest(practised))


def _say_last_update(folder: Path) -> None:
    """One line: what the last ``start`` that brought course changes did, if anything."""
    from ..course import last_update

    update = last_update(folder)
    if update is None:
        return
    items = [_("lectures updated: {n}").format(n=len(update.updated))] if update.updated else []
    items += [
        _("new version of {file}: {new}").format(file=mine.name, new=new.name)
        for mine, new in update.beside + update.exercises
    ]
    print(
        _("Course updates at your start on {date}: {items}.").format(
            date=update.date, items=_("; ").join(items)
        )
    )


def _progress(args: argparse.Namespace) -> int:
    from .._i18n import choosing
    from ..course import exercise_notebooks, progress_folder, working_copy_language

    # no folder given: the one the learner stands in, else the last started, else the default
    folder, notes = progress_folder(args.dir)
    for note in notes:
        print(note)
    notebooks = exercise_notebooks(folder)
    if not notebooks:
        raise GatherCourseError(
            _(
                "no exercise notebooks in {where}; `gather-course start {folder}` copies them back."
            ).format(where=folder / "exercises", folder=folder)
        )
    with choosing(working_copy_language(folder)):  # a working copy holds one edition
        _say_last_update(folder)
        return _progress_report(args, folder, notebooks)


def _progress_report(args: argparse.Namespace, folder: Path, notebooks: list[Path]) -> int:
    from .._text import pad, sentences
    from ..grading import Referee, Worker, check_notebook
    from ..questions import read_record

    marks = {"passed": "✓", "not attempted": "·"}
    done = total = 0
    print(
        _(
            "Progress in {folder} (the visible test cases, as `gather-course check` runs them)"
        ).format(folder=folder)
        + "\n"
    )
    practised, said = read_record(folder)  # the practice record of the working copy
    if said:
        print(said)
    referee = Referee(Worker, call_limit=args.timeout)
    try:
        for path in notebooks:
            reports, _notes = check_notebook(path, timeout=args.timeout, referee=referee)
            passed = sum(r.passed for r in reports)
            done, total = done + passed, total + len(reports)
            count = _("{passed} of {n} questions pass").format(passed=passed, n=len(reports))
            print(f"{path.parent.name:8} {pad(count, 24)} {path.relative_to(folder)}")
            for r in reports:
                print(
                    f"  {marks.get(r.status, '✗')} {r.grade_id.removeprefix('test_'):24} "
                    f"{_(r.status)}{_('; ')}{_practised(practised, r.grade_id)}"
                )
    finally:
        referee.close()
    print("\n" + _practise_next(practised))
    last = (
        _("Well done!")
        if done == total
        else _("Run `gather-course check NOTEBOOK` for what is wrong in one notebook.")
    )
    print(
        "\n"
        + sentences([_("{done} of {total} questions pass.").format(done=done, total=total), last])
    )
    return 0
