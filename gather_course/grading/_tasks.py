"""What a student of a class release was given: ``gather-course tasks STUDENT``.

For one student of a class release (its ``class.json``, see :mod:`._classes`), each
question of each assignment (or of one): the variant the release stored for them, its title
and task as their notebook shows them (in the class's language), its signature, and the
inputs of its first visible case. It reads the stored variants and draws nothing again; it
writes nothing. The words around the tasks are the instructor's: English.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .._errors import GatherCourseError
from .._i18n import catalog, notebook_language
from ..course import RELEASE, SOURCE
from ._classes import CLASS_FILE, bank_note, stored_question


@dataclass(frozen=True)
class Task:
    """One question as one student of a class was given it."""

    assignment: str
    qid: str
    variant: str  # the stored variant's name: "public", or "knob=choice,knob=choice"
    title: str  # in the class's language, as the task
    task: str
    signature: str
    case: str  # the first visible case's label
    inputs: tuple[tuple[str, str], ...]  # (argument, "float32 [3, 5]" or "int 1")


def read_class(folder: Path) -> dict[str, Any]:
    """What ``folder``'s class.json holds, or a clear error where it is no class release."""
    path = Path(folder) / CLASS_FILE
    if not path.is_file():
        raise GatherCourseError(
            f"not a class release: expected {path}, made by `gather-course release "
            "--class-seed SEED --roster students.csv --to DIR` (pass that DIR as --course)."
        )
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise GatherCourseError(f"cannot read {path}: {exc}.") from None
    if not isinstance(info, dict) or not isinstance(info.get("variants"), dict):
        raise GatherCourseError(
            f"{path} stores no variants: expected the class.json of a class release "
            "(`gather-course release --class-seed ...`); release the class again."
        )
    return info


def _on_roster(info: dict[str, Any], student: str, path: Path) -> None:
    """Stop with one line where ``student`` is not on the class's roster, naming close ids."""
    roster = [str(s) for s in info.get("roster") or []]
    if student in roster:
        return
    lowered = {s.lower(): s for s in roster}
    close = [lowered[s] for s in difflib.get_close_matches(student.lower(), list(lowered), 3)]
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else "."
    raise GatherCourseError(
        f"{student!r} is not on the class's roster ({len(roster)} students, in {path}){hint}"
    )


def _chosen(info: dict[str, Any], assignment: str | None) -> list[str]:
    """The assignments asked for: all the class's, or ``assignment`` if the class has it."""
    names = list(info["variants"])
    if assignment is not None and assignment not in names:
        raise GatherCourseError(
            f"unknown assignment {assignment!r}; this class has: {', '.join(names)}."
        )
    return names if assignment is None else [assignment]


def class_language(folder: Path, assignment: str) -> str:
    """The language of ``assignment``'s notebooks in the class release at ``folder``
    (``zh`` or ``en``): its student notebook's, else its source's; English without either."""
    for top in (RELEASE, SOURCE):
        for path in sorted((Path(folder) / top / assignment).glob("*.ipynb")):
            lang = notebook_language(path)
            if lang:
                return lang
    return "en"


def _shown(value: Any) -> str:
    """An input as the listing gives it: a tensor's dtype and shape, else its type and value."""
    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).removeprefix('torch.')} {list(value.shape)}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _task(
    assignment: str, qid: str, name: str, lang: str, info: dict[str, Any], student: str
) -> Task:
    """``qid`` as ``student``'s stored variant ``name``: its task in ``lang``, its first case."""
    q = stored_question(qid, name, student, info)
    tr = catalog(lang).gettext
    case = q.build(torch.Generator().manual_seed(0), q.sizes[0])  # the referee's first case
    return Task(
        assignment=assignment,
        qid=qid,
        variant=name,  # as class.json stores it
        title=tr(q.title),
        task=q.task_text(tr),
        signature=q.signature,
        case=case.label,
        inputs=tuple((arg, _shown(value)) for arg, value in case.inputs.items()),
    )


def student_tasks(folder: Path, student: str, assignment: str | None = None) -> list[Task]:
    """Each question ``student`` of the class release at ``folder`` was given, as
    ``class.json`` stored it: every assignment's, or ``assignment``'s only."""
    return _tasks_of(read_class(folder), folder, student, assignment)


def _tasks_of(
    info: dict[str, Any], folder: Path, student: str, assignment: str | None
) -> list[Task]:
    """:func:`student_tasks`, from the class.json ``info`` already read."""
    _on_roster(info, student, Path(folder) / CLASS_FILE)
    tasks = []
    for name in _chosen(info, assignment):
        stored = info["variants"][name].get(student)
        if not isinstance(stored, dict):
            raise GatherCourseError(
                f"{Path(folder) / CLASS_FILE} stores no variants of {name} for {student}, "
                "who is on its roster: release the class again to store them."
            )
        lang = class_language(folder, name)
        tasks += [_task(name, qid, variant, lang, info, student) for qid, variant in stored.items()]
    return tasks


def tasks_report(folder: Path, student: str, assignment: str | None = None) -> str:
    """The listing ``gather-course tasks`` prints: ``student``'s questions, assignment by
    assignment, each with its stored variant, task, signature and first case's inputs."""
    info = read_class(folder)
    tasks = _tasks_of(info, folder, student, assignment)
    lines = [f"Tasks of {student} in the class release {Path(folder).resolve()}:"]
    note = bank_note(info)
    if note:
        lines.append(note)
    for name in dict.fromkeys(t.assignment for t in tasks):
        lang = class_language(folder, name)
        lines += ["", f"{name} ({'Chinese' if lang == 'zh' else 'English'} edition)"]
        for t in (t for t in tasks if t.assignment == name):
            own = "no variants: every student's" if t.variant == "public" else "drawn for them"
            inputs = ", ".join(f"{arg}: {shown}" for arg, shown in t.inputs)
            lines += [
                f"  {t.qid}: variant {t.variant} ({own})",
                f"    title: {t.title}",
                f"    def {t.signature}",
                "    task: " + t.task.replace("\n", "\n          "),
                f"    first case ({t.case}): {inputs}",
            ]
    return "\n".join(lines)
