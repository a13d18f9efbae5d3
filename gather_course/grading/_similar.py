"""The copy report: submissions whose answers are the same code once names, comments and
layout are set aside, answers that match a published solution, and answers that reach for
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

from ..questions import exercise
from . import _scan
from ._submission import graded_cells

_KEEP = set(dir(builtins))


@dataclass
class SimilarReport:
    """Groups of students with the same answer, per question; matches of published solutions;
    answers that reach into the course (student, what they reach for)."""

    groups: dict[str, list[list[str]]] = field(default_factory=dict)
    published: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    internals: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


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


def similar(root: Path, assignment: str, released: dict[str, Any]) -> SimilarReport:
    """Compare every submission of ``assignment`` with the others and the published solutions."""
    import nbformat

    report = SimilarReport()
    shapes: dict[str, dict[str, list[str]]] = {}
    for folder in sorted((root / "submitted").glob(f"*/{assignment}")):
        student = folder.parent.name
        for name in released:
            try:
                nb = nbformat.read(folder / name, as_version=4)
            except Exception:  # noqa: BLE001 - unreadable notebooks have no answers to compare
                continue
            for key, source in _answers(nb).items():
                qid, _, _variant = key.partition(":")
                reached = _scan.course_internals(_scan.reachable([source], exercise(qid).name))
                if reached:
                    report.internals.setdefault(key, []).append((student, reached[0].name))
                shape = normalise(source, exercise(qid).name)
                if shape:
                    shapes.setdefault(key, {}).setdefault(shape, []).append(student)
    for key, by_shape in shapes.items():
        qid, _, variant = key.partition(":")
        public = exercise(qid)
        published = {"public": public.solution_code}  # the bank holds no variant's answer
        solutions = {normalise(code, public.name): name for name, code in published.items()}
        for shape, students in by_shape.items():
            if len(students) > 1:
                report.groups.setdefault(key, []).append(sorted(students))
            if shape in solutions:
                report.published.setdefault(key, []).extend(
                    (s, solutions[shape]) for s in sorted(students)
                )
    return report
