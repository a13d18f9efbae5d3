"""The copy report: submissions whose answers are the same code once names, comments and
layout are set aside, partial copies (:mod:`._fingerprints`), answers that match a published
solution (the public one, or the published answer of any class variant), answers right for a
classmate's variant and wrong for their own (:mod:`._crossed`), and answers that reach for
the course itself (its question bank, solutions or grader). It changes no score.

Each answer is reduced to its function's syntax tree with the learner's own names (arguments,
local variables, helpers) replaced by ``v0, v1, ...`` in order of appearance, docstrings
dropped; names from outside (``torch``, ``F``), attributes and constants are kept.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..grading import CLASS_FILE, Solver, course_internals, graded_cells, load_solver, reachable
from ..questions import exercise
from ._crossed import Crossed, crossed, leads
from ._fingerprints import Match, partial_copies

_KEEP = set(dir(builtins))


@dataclass
class SimilarReport:
    """Groups of students with the same answer, per question; partial copies; matches of
    published solutions (student, which); answers that reach into the course (student, what
    they reach for); answers right for a classmate's variant."""

    groups: dict[str, list[list[str]]] = field(default_factory=dict)
    partial: list[Match] = field(default_factory=list)
    published: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    internals: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    crossed: list[Crossed] = field(default_factory=list)
    set_aside: list[Crossed] = field(default_factory=list)  # crossed, one honest mistake away
    notes: list[str] = field(default_factory=list)  # what the report could not look at


class _Rename(ast.NodeTransformer):
    def __init__(self, outside: set[str]) -> None:
        self.names: dict[str, str] = {}
        self.outside = outside

    def _new(self, name: str) -> str:
        if name in self.outside or name in _KEEP:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg, node.annotation = self._new(node.arg), None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._new(node.name)
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
        node.returns = None
        self.generic_visit(node)
        return node


def normalise(source: str, function: str) -> str | None:
    """The shape of ``function``'s code in ``source`` (None: not there, or not attempted)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    if not defs:
        return None
    fn = defs[-1]
    if any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.dump(n) for n in fn.body):
        return None  # the untouched stub
    imported = {
        (a.asname or a.name).split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    fn = _Rename(imported | {"torch", "F", "itertools", "math"}).visit(fn)
    fn.name = function
    return ast.dump(fn, annotate_fields=False, include_attributes=False)


def _answers(nb: Any) -> dict[str, str]:
    """{question id (with its variant): the source of the learner's answer cell}."""
    sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
    found = {}
    for gid, qid, _points in graded_cells(nb):
        answer = sources.get(gid.removeprefix("test_"))
        if answer is not None:
            found[qid] = answer
    return found


def _published(qid: str, solver: Solver | None) -> dict[str, str]:
    """{which: code} of the published answers to ``qid``: the public solution, and with the
    course checkout's solver, every class variant's."""
    public = exercise(qid)
    found = {"public": public.solution_code}
    if solver is not None and public.family is not None:
        for params in public.family.every()[1:]:
            found[f"variant {public.family.name(params)}"] = solver(qid, params)
    return found


def similar(
    root: Path, assignment: str, released: dict[str, Any], referee: Any = None
) -> SimilarReport:
    """Compare every submission of ``assignment`` with the others and the published answers.

    With a ``referee`` and a class release whose students have their own variants, answers
    that fail their own variant are judged against their classmates' too.
    """
    import json

    import nbformat

    info_path = root / CLASS_FILE
    info = json.loads(info_path.read_text(encoding="utf-8")) if info_path.is_file() else {}
    report = SimilarReport()
    solver = load_solver(root / info["solver"]) if info.get("solver") else None
    if info.get("solver") and solver is None:
        report.notes.append(
            f"the class's variant answers ({info['solver']}) are not in {root}: answers are "
            "not compared with the published variant answers; copy them back to compare"
        )
    shapes: dict[str, dict[str, list[str]]] = {}
    sources: dict[str, dict[str, str]] = {}
    for folder in sorted((root / "submitted").glob(f"*/{assignment}")):
        student = folder.parent.name
        for name in released:
            try:
                nb = nbformat.read(folder / name, as_version=4)
            except Exception:  # noqa: BLE001 - unreadable notebooks have no answers to compare
                continue
            for key, source in _answers(nb).items():
                qid, _, _variant = key.partition(":")
                reached = course_internals(reachable([source], exercise(qid).name))
                if reached:
                    report.internals.setdefault(key, []).append((student, reached[0].name))
                shape = normalise(source, exercise(qid).name)
                if shape:
                    shapes.setdefault(key, {}).setdefault(shape, []).append(student)
                    sources.setdefault(key, {})[student] = source
    stubs = {k: v for nb in released.values() for k, v in _answers(nb).items()}
    for key, by_shape in shapes.items():
        qid, _, variant = key.partition(":")
        published = _published(qid, solver)
        solutions = {
            normalise(code, exercise(qid).name): which for which, code in published.items()
        }
        same = set()
        for shape, students in by_shape.items():
            if len(students) > 1:
                report.groups.setdefault(key, []).append(sorted(students))
                same |= {frozenset((a, b)) for a in students for b in students if a != b}
            if shape in solutions:
                report.published.setdefault(key, []).extend(
                    (s, solutions[shape]) for s in sorted(students)
                )
        boilerplate = [stubs.get(key, ""), exercise(qid).solution_code]
        report.partial += [
            m
            for m in partial_copies(key, sources.get(key, {}), boilerplate)
            if frozenset(m.students) not in same
        ]
    table = info.get("variants", {}).get(assignment)
    if referee is not None and table:
        report.crossed, report.set_aside = leads(
            crossed(referee, root, assignment, released, table)
        )
    return report
