"""A class's own release: each student's own variant of each question.

``gather-course release --class-seed SEED --roster ROSTER --to DIR`` writes a ready nbgrader
course into DIR: ``solutions/`` (the instructor's sources), ``exercises/`` (the student
notebooks: one file for the whole class), ``nbgrader_config.py`` and ``class.json`` (the
seed, the roster and every student's variants: the instructor's, never released). The
public ``solutions/`` and ``exercises/`` are not touched.

A student notebook's setup cell holds ``mine = my_class(KEY, roster=TAGS)`` (made from the
seed and the roster, holding neither; see :mod:`..questions._classroom`). Each question's
task is shown by a cell ``mine.exercise(qid)``, and its test cell checks
``mine.exercise(qid)``: the student's own variant, from their id. The referee draws the
same variant from the seed and the folder ``submitted/<student>/``.

The package holds no answer to a class variant. A course checkout does, beside the
instructor's sources, in ``solutions/variant_solutions.py`` (:data:`SOLVER`): when the course
has it, the sources' answer cells hold the
answers of a preview student (the roster's first id) and are run as that student; without
it they hold a stub, and the sources are not run.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import N_, catalog, edition
from ..course import RELEASE, SOURCE, assignments, release
from ..questions import Question, class_key, exercise, installed_bank, roster_tag, variant_for
from ._private import close_course, groupshared, private_file
from ._roster import gradebook_roster
from ._submission import OWN, graded_cells, practice_cell

CLASS_FILE = "class.json"
CLASS_HEADER = "class_header.ipynb"  # beside the course's header, which it replaces in a class
# The variant answers, beside the instructor's sources: in a course checkout (and copied into
# each class release, whose class.json names it relative to itself), never in the package.
SOLVER = Path(SOURCE) / "variant_solutions.py"

Solver = Callable[[str, dict[str, str]], str]


def load_solver(path: Path) -> Solver | None:
    """``solution_code(qid, params)`` of a course checkout's variant answers (the file
    :data:`SOLVER`), or None where there is no such file."""
    import importlib.util

    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_gather_course_variant_solutions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.solution_code


def _answer_code(q: Question, solver: Solver | None) -> str:
    if q.variant_name == "public":
        return q.solution_code
    if solver is not None:
        return solver(q.qid, q.params)
    return f"def {q.signature}:\n    raise NotImplementedError()  # no answer in the package\n"


def _answer_cell(code: str, name: str) -> str:
    """The answer cell for ``code``: its imports, then ``def`` and the marked body."""
    lines = code.strip("\n").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {name}("))
    prelude = "\n".join(lines[:start]).strip()
    body = "\n".join(["    ### BEGIN SOLUTION", *lines[start + 1 :], "    ### END SOLUTION"])
    return (prelude + "\n\n" if prelude else "") + lines[start] + "\n" + body


def _answer_cell_for(q: Question, public: Question, solver: Solver | None) -> str:
    """The answer cell: the public signature (one released file for every student), and in
    the solution region the preview student's answer, its arguments named as its task does."""
    code = _answer_cell(_answer_code(q, solver), q.name)
    lines = code.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"def {q.name}("))
    lines[at] = f"def {public.signature}:"
    renames = [
        f"    {mine} = {theirs}  # the task names it {mine}"
        for theirs, mine in zip(public.args, q.args)
        if mine != theirs
    ]
    return "\n".join([*lines[: at + 2], *renames, *lines[at + 2 :]])


_OWN_TASK = N_(
    "Write `{name}`: your own variant of this question, drawn from your student id. Run the "
    "cell below to see your task. The answer cell names the arguments as the public "
    "question does; what counts is their order."
)
_OFF = N_(
    "The test cell below checks your function. Whether hints and solutions are on is your "
    "instructor's choice: in a graded class they are usually off."
)


def _task_cell(source: str, public: Question, tr: Callable[[str], str], own: bool) -> str:
    """The public task cell with no hint line; for a question with variants (``own``), the
    task itself is left to the cell below it."""
    kept = []
    for part in source.split("\n\n"):
        if ".hint(" in part:
            continue
        if own and public.task_text(tr) in part:
            part = tr(_OWN_TASK).format(name=public.name)
        kept.append(part)
    return "\n\n".join([*kept, tr(_OFF)])


def _variant_cell(nbformat: Any, task: Any, public: Question) -> Any:
    """The locked code cell under a task cell that shows the student's own task."""
    cell = nbformat.v4.new_code_cell(f'mine.exercise("{public.qid}")')
    cell.id = f"variant-{public.name}"  # the same on every release (a random one by default)
    cell.metadata["nbgrader"] = {
        **task.metadata["nbgrader"],
        "grade_id": f"variant_{public.name}",
        "grade": False,
        "solution": False,
        "locked": True,
    }
    return cell


_SETUP = """

from gather_course import my_class

mine = my_class(  # your own variant of each question
    "{key}",
    variants={{{names}
    }},
    roster="{roster}",
)"""


def _setup_lines(key: str, drawn: dict[str, dict[str, str]]) -> str:
    """The class's line in the setup cell: each question's variant names (the release's),
    and per roster tag the position of the student's own in each list."""
    qids = sorted({qid for own in drawn.values() for qid in own})
    names = {qid: sorted({own[qid] for own in drawn.values()}) for qid in qids}
    roster = sorted(
        roster_tag(key, student) + ":" + ".".join(str(names[q].index(own[q])) for q in qids)
        for student, own in drawn.items()
    )
    listed = "".join(f'\n        "{qid}": "{" ".join(names[qid])}",' for qid in qids)
    return _SETUP.format(key=key, names=listed, roster=" ".join(roster))


def _class_notebook(
    nb: Any, key: str, drawn: dict[str, dict[str, str]], preview: str, solver: Solver | None
) -> Any:
    """The notebook as the class's: the setup cell opens the class (``drawn``: each
    student's own variants, ``{student: {qid: variant}}``), each task is shown by a cell of
    its own, each test checks the student's own variant."""
    import nbformat

    tr = catalog(edition(nb)).gettext
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    own_qids = {qid for _gid, qid, _p in graded_cells(nb) if exercise(qid).family is not None}
    mine = {s: {q: v for q, v in own.items() if q in own_qids} for s, own in drawn.items()}
    cells["setup"].source += _setup_lines(key, mine)
    for gid, qid, _points in graded_cells(nb):
        public = exercise(qid)
        q = exercise(qid, drawn[preview][qid])
        own = qid in own_qids  # a question without variants stays the public one
        test = cells[gid]
        if own:
            test.source = test.source.replace(f'exercise("{qid}")', f'mine.exercise("{qid}")')
        answer = cells.get(public.name)
        if answer is not None:
            answer.source = _answer_cell_for(q, public, solver)
        task = cells.get(f"task_{public.name}")
        if task is not None:
            task.source = _task_cell(task.source, public, tr, own)
            if own:
                nb.cells.insert(nb.cells.index(task) + 1, _variant_cell(nbformat, task, public))
    nb.metadata.setdefault("gather_course", {})["class_release"] = True
    nb.cells = _without_practice(nb.cells)
    for cell in nb.cells:  # executed afresh by the release
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def _without_practice(cells: list[Any]) -> list[Any]:
    """The cells without the self-paced edition's "practise more" section (its heading and
    its practice cells, at the end): a class's notebook shows no solution, and its students
    practise with ``exercise(qid).practice()`` or ``gather-course practice``, which never
    draw their graded variant."""
    first = next((i for i, c in enumerate(cells) if practice_cell(c)), None)
    if first is None:
        return cells
    heading = cells[first - 1]
    if heading.cell_type == "markdown" and "nbgrader" not in heading.metadata:
        first -= 1
    return cells[:first] + [c for c in cells[first:] if not practice_cell(c) and c is not heading]


def own_variants(
    root: Path, assignment: str, released: dict[str, Any]
) -> tuple[Callable[[str], dict[str, str] | None], str]:
    """``student -> {qid: their variant}`` for the questions of ``released`` that are each
    student's own: the variants ``root``'s class.json stored at release (None for a student
    not on its roster), and a note ('' if none) when the installed question bank differs
    from the one the class was released with. A stored variant the installed bank cannot
    make stops grading with a clear error naming it: no student is judged on another."""
    path = root / CLASS_FILE
    info = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    key, roster = info.get("key"), set(info.get("roster", []))
    stored = info.get("variants", {}).get(assignment, {})
    qids = [
        qid.partition(":")[0]
        for nb in released.values()
        for _gid, qid, _points in graded_cells(nb)
        if qid.endswith(f":{OWN}")
    ]
    pairs = {(qid, own.get(qid)): student for student, own in stored.items() for qid in qids}
    for (qid, name), student in sorted(pairs.items(), key=str):
        stored_question(qid, name, student, info)

    def variants(student: str) -> dict[str, str] | None:
        if not qids:
            return {}
        if not key or student not in roster:
            return None
        if student in stored:
            return {qid: stored[student][qid] for qid in qids}
        # a class.json without this assignment's variants: drawn as such releases drew them
        return {qid: exercise(qid).pick_variant(key, student, modulo=True) for qid in qids}

    return variants, bank_note(info) if qids else ""


def stored_question(qid: str, name: str | None, student: str, info: dict[str, Any]) -> Question:
    """``student``'s stored variant ``name`` of ``qid`` (class.json ``info``), as the installed
    bank makes it; a clear error where it cannot (``grade`` and ``tasks`` stop on it)."""
    try:
        if name is None:
            raise GatherCourseError(f"class.json stores no variant of {qid} for {student}")
        return exercise(qid, name)
    except GatherCourseError as exc:
        released = (info.get("bank") or {}).get("version", "an earlier version")
        raise GatherCourseError(
            f"{CLASS_FILE} gives {student} the variant {name!r} of {qid}, which the installed "
            f"question bank (gather-course {installed_bank()['version']}) cannot make ({exc}). Grade "
            f"with the course the class was released with (gather-course {released}); no "
            "student was graded."
        ) from None


def bank_note(info: dict[str, Any]) -> str:
    """One line when the installed question bank is not the one the class was released
    with ('' when it is, or when the release did not record it)."""
    then, now = info.get("bank"), installed_bank()
    if not then or then == now:
        return ""
    return (
        f"note: this class was released with the question bank of gather-course "
        f"{then.get('version')} (knobs {then.get('knobs')}); the installed one is "
        f"{now['version']} (knobs {now['knobs']}). Every student is graded on the variant "
        f"{CLASS_FILE} stored for them at release."
    )


# What a folder may hold before its first class release: a gradebook with the students
# (``nbgrader db student import`` makes it), nbgrader's log, the course's own settings.
PREPARED = ("gradebook.db", ".nbgrader.log", "nbgrader_config.py")


def _check_target(root: Path, target: Path) -> None:
    """Refuse a folder that is neither new, empty, prepared (:data:`PREPARED`) nor a class
    release: the release would overwrite or mix with what it holds."""
    if not target.exists() or (target / CLASS_FILE).is_file():
        return
    others = sorted(p.name for p in target.iterdir() if p.name not in PREPARED)
    if others:
        raise GatherCourseError(
            f"{target} is not empty and holds no class release ({CLASS_FILE}): expected a "
            f"new or empty folder, or one holding only {', '.join(PREPARED)}; found "
            f"{', '.join(others[:5])}{' ...' if len(others) > 5 else ''}. Choose another folder."
        )
    mine, course = target / "nbgrader_config.py", root / "nbgrader_config.py"
    if mine.is_file() and mine.read_bytes() != course.read_bytes():
        raise GatherCourseError(
            f"{mine} differs from the course's {course}, which the class release writes "
            "there: move it away, or put its settings in the course's first."
        )


def _default_roster(root: Path, target: Path) -> tuple[list[str], str]:
    """The students when no roster is given, and where they come from: the gradebook's,
    else (a release made again) the roster of the class release already in ``target``."""
    found = gradebook_roster(target, root) if target.is_dir() else []
    if found:
        return found, "the gradebook"
    earlier = target / CLASS_FILE
    if earlier.is_file():
        roster = json.loads(earlier.read_text(encoding="utf-8")).get("roster") or []
        if roster:
            return list(roster), f"the earlier release ({CLASS_FILE})"
    raise GatherCourseError(
        "a class release needs its students: expected --roster with nbgrader's student CSV "
        f"(a column id), or students in the gradebook of {target}; found no students there "
        f"(and no earlier release). Import them first: `cd {target} && nbgrader db student "
        "import students.csv`, or give --roster students.csv."
    )


def _closed_folder(root: Path, target: Path) -> None:
    """``target``, made (or kept) its instructor's alone: it will hold the class's key and
    answers (the course's staff share it under nbgrader's ``groupshared``)."""
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.mkdir(mode=0o770 if groupshared(root) else 0o700)
    close_course(target)


def release_class(
    root: Path,
    seed: int,
    target: Path,
    roster: list[str] | None = None,
    execute: bool = True,
) -> dict[str, Any]:
    """Write the class release of ``root``'s course for ``seed`` and ``roster`` into ``target``.

    ``roster`` lists the student ids (default: the students of ``target``'s gradebook, else
    the roster of the class release already there). ``target`` must be missing, empty,
    prepared (only a gradebook and settings: :data:`PREPARED`) or an earlier class release
    (its ``submitted/``, gradebook and grades are kept; its sources and student notebooks
    are regenerated).
    Returns what ``class.json`` holds.
    """
    import nbformat

    from ..course import execute_notebook

    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise GatherCourseError(f"--class-seed must be a whole number >= 0, got {seed!r}.")
    target = Path(target).resolve()
    if target == root.resolve() or (
        root.resolve() in target.parents
        and target.relative_to(root.resolve()).parts[0] in (SOURCE, RELEASE)
    ):
        raise GatherCourseError(f"the class release must go to its own folder, not {target}.")
    _check_target(root, target)
    if roster is None:
        roster, source = _default_roster(root, target)
    else:
        source = "--roster"
    key, preview = class_key(seed), roster[0]
    _closed_folder(root, target)
    shutil.rmtree(target / SOURCE, ignore_errors=True)
    (target / SOURCE).mkdir()
    shutil.copy2(root / "nbgrader_config.py", target / "nbgrader_config.py")
    for extra in (root / SOURCE).glob("*.ipynb"):  # the header nbgrader adds
        if extra.name != CLASS_HEADER:
            shutil.copy2(extra, target / SOURCE / extra.name)
    if (root / SOURCE / CLASS_HEADER).is_file():  # the class's: own variants, hints by `mine`
        shutil.copy2(root / SOURCE / CLASS_HEADER, target / SOURCE / "header.ipynb")
    variants: dict[str, dict[str, dict[str, str]]] = {}
    written = []
    solver = load_solver(root / SOLVER)
    if solver is not None:  # the class keeps its answers, wherever its folder moves
        shutil.copy2(root / SOLVER, target / SOLVER)
    for name in assignments(root):
        (target / SOURCE / name).mkdir()
        for path in sorted((root / SOURCE / name).glob("*.ipynb")):
            nb = nbformat.read(path, 4)
            variants[name] = {  # drawn once, here: grading and the notebook read these
                student: {qid: variant_for(key, student, qid) for _g, qid, _p in graded_cells(nb)}
                for student in roster
            }
            nb = _class_notebook(nb, key, variants[name], preview, solver)
            out = target / SOURCE / name / path.name
            nbformat.write(nb, out)
            written.append(out)
    if execute and solver is not None:
        for path in written:  # as the preview student: their answers are in the sources
            execute_notebook(path, env={"GATHER_COURSE_STUDENT": preview, "JUPYTERHUB_USER": ""})
    release(target)
    info = {
        "class_seed": seed,
        "key": key,
        "roster": roster,
        "roster_from": source,
        "preview": preview,
        "solver": SOLVER.as_posix() if solver else None,  # the copy report's, from the class folder
        "bank": installed_bank(),  # what the variants' names meant when they were drawn
        "variants": variants,
    }
    with open(target / CLASS_FILE, "w", encoding="utf-8", opener=private_file) as f:
        f.write(json.dumps(info, indent=1) + "\n")
    return info
