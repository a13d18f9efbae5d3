"""A class's own release: each question as the variant its class seed picks.

``gather-course release --class-seed SEED --to DIR`` writes a ready nbgrader course into DIR:
``solutions/`` (the instructor's sources), ``exercises/`` (the student notebooks),
``nbgrader_config.py`` and ``class.json`` (the seed and the variants; the instructor's, not
the students'). The public ``solutions/`` and ``exercises/`` are not touched. The test
cells name the variant, so ``check`` and the referee use it.

The package holds no answer to a class variant. A course checkout does, in
``tests/variant_solutions.py``: when the course has it, the sources' answer cells hold those
answers and are run; without it they hold a stub, and the sources are not run.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import N_, _catalog
from ..course._course import RELEASE, SOURCE, assignments, release
from ..questions import exercise
from ..questions._question import Question
from ._submission import graded_cells

CLASS_FILE = "class.json"
SOLVER = Path("tests") / "variant_solutions.py"  # in a course checkout, never in the package

Solver = Callable[[str, dict[str, str]], str]


def _solver(root: Path) -> Solver | None:
    """``solution_code(qid, params)`` of the course checkout's variant answers, if it has them."""
    import importlib.util

    path = root / SOLVER
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


def _task_cell(source: str, public: Question, q: Question, tr: Callable[[str], str]) -> str:
    """The public task cell with the variant's signature, task, rules and no hint line.

    ``tr`` translates a bank text into the notebook's language (the identity in English).
    """
    text = source.replace(tr(public.title), tr(q.title)).replace(public.signature, q.signature)
    text = text.replace(public.task_text(tr), q.task_text(tr))
    kept = [part for part in text.split("\n\n") if ".hint(" not in part]
    off = N_(
        "Hints and solutions are off for graded questions in this class: the test cell "
        "below checks your function."
    )
    return "\n\n".join([*kept, tr(off)])


def _class_notebook(nb: Any, seed: int, solver: Solver | None) -> tuple[Any, dict[str, str]]:
    lang = nb.metadata.get("gather_course", {}).get("lang", "en")
    tr = _catalog(lang).gettext
    chosen: dict[str, str] = {}
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    for gid, qid, _points in graded_cells(nb):
        public = exercise(qid)
        name = public.pick_variant(seed)
        chosen[qid] = name
        q = exercise(qid, name)
        cells[gid].source = cells[gid].source.replace(
            f'exercise("{qid}")',
            f'exercise("{qid}", "{name}")' if name != "public" else f'exercise("{qid}")',
        )
        answer = cells.get(public.name)
        if answer is not None:
            answer.source = _answer_cell(_answer_code(q, solver), q.name)
        task = cells.get(f"task_{public.name}")
        if task is not None:
            task.source = _task_cell(task.source, public, q, tr)
        intro = cells.get("intro")
        if intro is not None:
            intro.source = intro.source.replace(
                f"`{public.signature}` | {tr(public.title)} |", f"`{q.signature}` | {tr(q.title)} |"
            )
    nb.metadata.setdefault("gather_course", {})["variants"] = chosen
    for cell in nb.cells:  # executed afresh by the release
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb, chosen


def release_class(root: Path, seed: int, target: Path, execute: bool = True) -> dict[str, Any]:
    """Write the class release of ``root``'s course for ``seed`` into ``target``.

    ``target`` must be empty, missing, or an earlier class release (its ``submitted/``,
    gradebook and grades are kept; its sources and student notebooks are regenerated).
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
    if target.exists() and any(target.iterdir()) and not (target / CLASS_FILE).is_file():
        raise GatherCourseError(
            f"{target} is not empty and holds no class release "
            f"({CLASS_FILE}); choose an empty or new folder."
        )
    target.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(target / SOURCE, ignore_errors=True)
    (target / SOURCE).mkdir()
    shutil.copy2(root / "nbgrader_config.py", target / "nbgrader_config.py")
    for extra in (root / SOURCE).glob("*.ipynb"):  # the header nbgrader adds
        shutil.copy2(extra, target / SOURCE / extra.name)
    variants: dict[str, dict[str, str]] = {}
    written = []
    solver = _solver(root)
    for name in assignments(root):
        (target / SOURCE / name).mkdir()
        for path in sorted((root / SOURCE / name).glob("*.ipynb")):
            nb, variants[name] = _class_notebook(nbformat.read(path, 4), seed, solver)
            out = target / SOURCE / name / path.name
            nbformat.write(nb, out)
            written.append(out)
    if execute and solver is not None:
        for path in written:
            execute_notebook(path)
    release(target)
    info = {"class_seed": seed, "variants": variants}
    (target / CLASS_FILE).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info
