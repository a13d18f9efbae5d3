"""A static scan of a learner's source, made by the referee (no learner code runs here).

Rules such as "don't use gather" are checked on the code the learner's function can reach:
its own definition, the top-level definitions it names (transitively), and every top-level
statement that is not a plain definition (it may patch something). Code that reaches
functions by computed names (``getattr``, ``eval``, ``torch.ops``, private attributes...)
cannot be checked this way, so a question with such a rule refuses it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# Ways around a name-based rule: computed access, torch's internals, other array libraries,
# other threads and processes.
_DYNAMIC_CALLS = {"getattr", "setattr", "delattr", "eval", "exec", "compile", "__import__",
                  "globals", "locals", "vars", "breakpoint"}
_ESCAPE_MODULES = {"importlib", "ctypes", "numpy", "threading", "multiprocessing",
                   "concurrent", "subprocess", "os", "sys", "builtins", "inspect", "gc",
                   "pickle", "marshal", "types", "signal", "jax", "tensorflow", "cupy"}
_ESCAPE_ATTRS = {"ops", "library"}            # torch.ops.aten.gather, torch.library


@dataclass(frozen=True)
class Finding:
    """One name in the scanned code: what it is and where (``cell 2, line 3``)."""

    name: str
    where: str


def _parse(cells: list[str]) -> list[tuple[int, ast.stmt]]:
    found = []
    for n, source in enumerate(cells, start=1):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue                          # the worker reports it; nothing runs from it
        found += [(n, stmt) for stmt in tree.body]
    return found


def _defines(stmt: ast.stmt) -> set[str] | None:
    """The names a plain top-level definition binds, or None for any other statement."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = set()
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    names.add(node.id)
                elif not isinstance(node, (ast.Tuple, ast.List, ast.Starred, ast.Load, ast.Store)):
                    return None               # assigns into an object: a patch, always kept
        return names
    return None


def _used_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def reachable(cells: list[str], function: str) -> list[tuple[int, ast.stmt]]:
    """The top-level statements ``function`` can reach by name, plus every other statement."""
    stmts = _parse(cells)
    defined: dict[str, list[int]] = {}
    keep: set[int] = set()
    for i, (_, stmt) in enumerate(stmts):
        names = _defines(stmt)
        if names is None:
            keep.add(i)
        else:
            for name in names:
                defined.setdefault(name, []).append(i)
    todo = [function] + [name for i in keep for name in _used_names(stmts[i][1])]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for i in defined.get(name, []):
            if i not in keep:
                keep.add(i)
                todo += _used_names(stmts[i][1])
    return [stmts[i] for i in sorted(keep)]


def _where(cell: int, node: ast.AST) -> str:
    return f"cell {cell}, line {getattr(node, 'lineno', '?')}"


def names_used(code: list[tuple[int, ast.stmt]], wanted: set[str]) -> list[Finding]:
    """Where any of ``wanted`` appears as a name, an attribute or an imported name."""
    found = []
    for cell, stmt in code:
        for node in ast.walk(stmt):
            names = []
            if isinstance(node, ast.Name):
                names = [node.id]
            elif isinstance(node, ast.Attribute):
                names = [node.attr]
            elif isinstance(node, ast.alias):
                names = [node.name.split(".")[-1], node.asname or ""]
            found += [Finding(n, _where(cell, node)) for n in names if n in wanted]
    return found


def escape_hatches(code: list[tuple[int, ast.stmt]]) -> list[Finding]:
    """Constructs that reach code by computed names or outside torch's dispatcher."""
    found = []
    for cell, stmt in code:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in _DYNAMIC_CALLS:
                found.append(Finding(f"{node.func.id}()", _where(cell, node)))
            elif isinstance(node, ast.Attribute) and (
                    node.attr.startswith("_") or node.attr in _ESCAPE_ATTRS):
                found.append(Finding(f".{node.attr}", _where(cell, node)))
            elif isinstance(node, ast.Import):
                found += [Finding(f"import {a.name}", _where(cell, node)) for a in node.names
                          if a.name.split(".")[0] in _ESCAPE_MODULES]
            elif isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.split(".")[0] in _ESCAPE_MODULES:
                found.append(Finding(f"from {node.module} import", _where(cell, node)))
            elif isinstance(node, ast.Name) and node.id.startswith("__") \
                    and node.id not in ("__name__",):
                found.append(Finding(node.id, _where(cell, node)))
    return found
