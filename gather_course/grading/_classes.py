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
from ..course._course import RELEASE, SOURCE, alembic_on_path, assignments, release
from ..questions import exercise
from ..questions._classroom import class_key, roster_tag
from ..questions._question import Question
from ._private import close_course, groupshared, private_file
from ._submission import OWN, graded_cells

CLASS_FILE = "class.json"
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

mine = my_class("{key}", roster="{tags}")  # your own variant of each question"""


def _class_notebook(nb: Any, key: str, tags: list[str], preview: str, solver: Solver | None):
    """The notebook as the class's: the setup cell opens the class, each task is shown by
    a cell of its own, each test checks the student's own variant. Returns the notebook
    and the preview student's variants."""
    import nbformat

    tr = catalog(edition(nb)).gettext
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    cells["setup"].source += _SETUP.format(key=key, tags=" ".join(sorted(tags)))
    shown: dict[str, str] = {}
    for gid, qid, _points in graded_cells(nb):
        public = exercise(qid)
        q = exercise(qid, public.pick_variant(key, preview))
        shown[qid] = q.variant_name
        own = public.family is not None  # a question without variants stays the public one
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
    for cell in nb.cells:  # executed afresh by the release
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb, shown


def read_roster(path: Path) -> list[str]:
    """The student ids of nbgrader's student CSV (a column ``id``, as ``nbgrader db student
    import`` reads it), in file order, each once."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise GatherCourseError(f"cannot read the roster {path}: {exc.strerror}.") from None
    if not rows or "id" not in rows[0]:
        raise GatherCourseError(
            f"the roster {path} has no column 'id': expected nbgrader's student CSV "
            "(id,first_name,last_name,email), got columns "
            f"{', '.join(rows[0]) if rows else 'none (the file is empty)'}."
        )
    ids = list(dict.fromkeys(row["id"].strip() for row in rows if (row["id"] or "").strip()))
    if not ids:
        raise GatherCourseError(f"the roster {path} lists no student id.")
    return ids


def gradebook_roster(target: Path, course: Path) -> list[str]:
    """The students of the gradebook of the class folder ``target``, sorted (``[]`` if it
    has none, or no gradebook yet: none is made). Its ``nbgrader_config.py`` says where the
    gradebook is, else the course's (``db_url``; by default ``target/gradebook.db``, where
    ``nbgrader db student import`` run in ``target`` puts it)."""
    from nbgrader.api import Gradebook
    from traitlets.config.loader import PyFileConfigLoader

    folder = target if (target / "nbgrader_config.py").is_file() else course
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    url = cfg.CourseDirectory.get("db_url") or f"sqlite:///{target / 'gradebook.db'}"
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///") :]).is_file():
        return []
    with alembic_on_path(), Gradebook(url) as gb:
        return sorted(s.id for s in gb.students)


def own_variants(root: Path, released: dict[str, Any]) -> Callable[[str], dict[str, str] | None]:
    """``student -> {qid: their variant}`` for the questions of ``released`` that are each
    student's own, from ``root``'s class.json (None for a student not on its roster)."""
    path = root / CLASS_FILE
    info = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    key, roster = info.get("key"), set(info.get("roster", []))
    qids = [
        qid.partition(":")[0]
        for nb in released.values()
        for _gid, qid, _points in graded_cells(nb)
        if qid.endswith(f":{OWN}")
    ]

    def variants(student: str) -> dict[str, str] | None:
        if not qids:
            return {}
        if not key or student not in roster:
            return None
        return {qid: exercise(qid).pick_variant(key, student) for qid in qids}

    return variants


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

    from ..course._execute import execute_notebook

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
    tags = [roster_tag(key, student) for student in roster]
    _closed_folder(root, target)
    shutil.rmtree(target / SOURCE, ignore_errors=True)
    (target / SOURCE).mkdir()
    shutil.copy2(root / "nbgrader_config.py", target / "nbgrader_config.py")
    for extra in (root / SOURCE).glob("*.ipynb"):  # the header nbgrader adds
        shutil.copy2(extra, target / SOURCE / extra.name)
    variants: dict[str, dict[str, dict[str, str]]] = {}
    written = []
    solver = load_solver(root / SOLVER)
    if solver is not None:  # the class keeps its answers, wherever its folder moves
        shutil.copy2(root / SOLVER, target / SOLVER)
    for name in assignments(root):
        (target / SOURCE / name).mkdir()
        for path in sorted((root / SOURCE / name).glob("*.ipynb")):
            nb, _preview = _class_notebook(nbformat.read(path, 4), key, tags, preview, solver)
            out = target / SOURCE / name / path.name
            nbformat.write(nb, out)
            written.append(out)
            variants[name] = {
                student: {
                    qid.partition(":")[0]: exercise(qid.partition(":")[0]).pick_variant(
                        key, student
                    )
                    for _gid, qid, _points in graded_cells(nb)
                }
                for student in roster
            }
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
        "variants": variants,
    }
    with open(target / CLASS_FILE, "w", encoding="utf-8", opener=private_file) as f:
        f.write(json.dumps(info, indent=1) + "\n")
    return info
