"""A static scan of a learner's source, made by the referee (no learner code runs here).

Constraints such as "don't use gather" are checked on the code the learner's function can reach:
its own definition, the top-level definitions it names (transitively), and every top-level
statement that is not a plain definition (it may patch something). Code that reaches
functions by computed names (``getattr``, ``eval``, ``torch.ops``, private attributes...)
cannot be checked this way, so a question with such a constraint refuses it.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from .._answer_api import BANK_NAMES, PUBLIC, PUBLIC_MODULES
from .._i18n import _

# Ways around a name-based constraint: computed access, torch's internals, other array libraries,
# other threads and processes.
_DYNAMIC_CALLS = {
    "getattr",
    "setattr",
    "delattr",
    "eval",
    "exec",
    "compile",
    "__import__",
    "globals",
    "locals",
    "vars",
    "breakpoint",
}
_ESCAPE_MODULES = {
    "importlib",
    "ctypes",
    "numpy",
    "threading",
    "multiprocessing",
    "concurrent",
    "subprocess",
    "os",
    "sys",
    "builtins",
    "inspect",
    "gc",
    "pickle",
    "marshal",
    "types",
    "signal",
    "jax",
    "tensorflow",
    "cupy",
    "operator",
    "functools",
    "code",
    "codeop",
    "runpy",
}
# torch.ops.aten.gather, torch.library, torch.jit / torch.fx code, tensor.numpy()
_ESCAPE_ATTRS = {"ops", "library", "jit", "fx", "numpy", "compile"}


@dataclass(frozen=True)
class Finding:
    """One name in the scanned code: what it is, and where (its cell and line)."""

    name: str
    cell: int
    line: int | str

    @property
    def where(self) -> str:
        """``cell 2, line 3``, in the learner's language."""
        return _("cell {cell}, line {line}").format(cell=self.cell, line=self.line)


def _parse(cells: list[str]) -> list[tuple[int, ast.stmt]]:
    return list(_parsed(tuple(cells)))


@functools.lru_cache(maxsize=32)
def _parsed(cells: tuple[str, ...]) -> tuple[tuple[int, ast.stmt], ...]:
    """The cells' statements, parsed once per submission (each question's scans and
    constraints ask again; nothing here changes a tree)."""
    found: list[tuple[int, ast.stmt]] = []
    for n, source in enumerate(cells, start=1):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # the worker reports it; nothing runs from it
        found += [(n, stmt) for stmt in tree.body]
    return tuple(found)


def _bound(node: ast.AST) -> set[str]:
    """Names a statement binds at its own level (defs, imports, plain assignments, loops)."""
    names: set[str] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            continue  # its body binds its own names
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        todo += list(ast.iter_child_nodes(n))
    return names


def _runs_now(stmt: ast.stmt) -> list[ast.AST]:
    """The nodes of a top-level statement that run when the cell runs: not function bodies
    (only their decorators and defaults), nor lambda bodies."""
    found, todo = [], [stmt]
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            todo += node.decorator_list + [d for d in args.defaults + args.kw_defaults if d]
            continue
        if isinstance(node, ast.Lambda):
            continue
        todo += list(ast.iter_child_nodes(node))
    return found


def _is_patch(stmt: ast.stmt) -> bool:
    """A statement that, when its cell runs, may change an object others use: it assigns
    into an attribute or an item, or calls ``setattr``, ``exec`` and the like, or a private
    or dunder method (``M().__enter__()``). Reading ``np.__version__`` is not one."""
    for node in _runs_now(stmt):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AugAssign, ast.AnnAssign))
            else node.targets
            if isinstance(node, ast.Delete)
            else []
        )
        if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets):
            return True
        if isinstance(node, ast.Call):  # setattr(...), exec(...), x.__enter__()...
            func = node.func
            if isinstance(func, ast.Name) and func.id in _DYNAMIC_CALLS:
                return True
            if isinstance(func, ast.Attribute) and func.attr.startswith("_"):
                return True
    return False


def _free_names(node: ast.AST) -> set[str]:
    """Names a statement reads that it does not bind itself (a function's locals excluded)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        params |= {a.arg for a in (args.vararg, args.kwarg) if a}
        local = params | {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        reads = {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        defaults = [d for d in args.defaults + args.kw_defaults if d is not None]
        return (reads - local) | {
            n.id for d in defaults for n in ast.walk(d) if isinstance(n, ast.Name)
        }
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def reachable(cells: list[str], function: str) -> list[tuple[int, ast.stmt]]:
    """The top-level statements ``function`` can reach: what binds the names it reads,
    transitively, and every statement that patches something (and what that reaches).

    Other statements (a ``print``, a call of ``check``, a demo) cannot change what the
    function does, so they are left out.
    """
    stmts = _parse(cells)
    binds: dict[str, list[int]] = {}
    keep: set[int] = set()
    for i, (_cell, stmt) in enumerate(stmts):
        if _is_patch(stmt):
            keep.add(i)
        for name in _bound(stmt):
            binds.setdefault(name, []).append(i)
    todo = [function] + [name for i in keep for name in _free_names(stmts[i][1])]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for i in binds.get(name, []):
            if i not in keep:
                keep.add(i)
                todo += _free_names(stmts[i][1])
    return [stmts[i] for i in sorted(keep)]


def own_names(cells: list[str]) -> set[str]:
    """Names the learner defines with ``def``, ``class`` or an assignment (not imports)."""
    found: set[str] = set()
    for _cell, stmt in _parse(cells):
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            found |= _bound(stmt)
    return found


def _assignment(node: ast.AST, target: ast.expr) -> str:
    """An assignment (or ``del``) as the code it is: ``torch.Tensor.pick = …``."""
    if isinstance(node, ast.Delete):
        return f"del {ast.unparse(target)}"
    return f"{ast.unparse(target)} = …"


def _where(cell: int, node: ast.AST) -> tuple[int, int | str]:
    return cell, getattr(node, "lineno", "?")


def names_used(
    code: list[tuple[int, ast.stmt]], wanted: set[str], own: set[str] = frozenset()
) -> list[Finding]:
    """Where any of ``wanted`` appears as a name, an attribute or an imported name.

    A plain name the learner defined (``own``) is theirs, not torch's, so it does not count.
    """
    found = []
    for cell, stmt in code:
        for node in ast.walk(stmt):
            names = []
            if isinstance(node, ast.Name) and node.id not in own:
                names = [node.id]
            elif isinstance(node, ast.Attribute):
                names = [node.attr]
            elif isinstance(node, ast.alias):
                names = [node.name.split(".")[-1], node.asname or ""]
            found += [Finding(n, *_where(cell, node)) for n in names if n in wanted]
    return found


def escape_hatches(
    code: list[tuple[int, ast.stmt]], imported: set[str] = frozenset()
) -> list[Finding]:
    """Constructs that reach code by computed names or outside torch's dispatcher, and
    assignments into an imported module (``torch.save = ...``)."""
    return [f for cell, stmt in code for f in _hatches(cell, list(ast.walk(stmt)), imported)]


def imported_names(cells: list[str]) -> set[str]:
    """The names the learner's imports bind (``torch``, ``F``, ``np``...)."""
    return {
        (a.asname or a.name).split(".")[0]
        for _, stmt in _parse(cells)
        for node in ast.walk(stmt)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for a in node.names
    }


def _root(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _hatches(cell: int, nodes: list[ast.AST], imported: set[str] = frozenset()) -> list[Finding]:
    found = []
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            found += [
                Finding(_assignment(node, t), *_where(cell, node))
                for t in targets
                if isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) in imported
            ]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _DYNAMIC_CALLS
        ):
            found.append(Finding(f"{node.func.id}()", *_where(cell, node)))
        elif isinstance(node, ast.Attribute) and (
            node.attr.startswith("_") or node.attr in _ESCAPE_ATTRS
        ):
            found.append(Finding(f".{node.attr}", *_where(cell, node)))
        elif isinstance(node, ast.Import):
            found += [
                Finding(f"import {a.name}", *_where(cell, node))
                for a in node.names
                if a.name.split(".")[0] in _ESCAPE_MODULES
            ]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0] in _ESCAPE_MODULES
        ):
            found.append(Finding(f"from {node.module} import", *_where(cell, node)))
        elif (
            isinstance(node, ast.Name) and node.id.startswith("__") and node.id not in ("__name__",)
        ):
            found.append(Finding(node.id, *_where(cell, node)))
    return found


# What an answer may take from the course package: its public helpers (the grading sandbox
# holds nothing else of it, see _answer_api). The rest of gather_course (the question bank,
# its solutions and variants, the grading code) must not be reached by an answer.
_PUBLIC_MODULES = set(PUBLIC_MODULES)
_PUBLIC_NAMES = set(PUBLIC)
_COURSE_ONLY = set(BANK_NAMES)


def course_internals(code: list[tuple[int, ast.stmt]]) -> list[Finding]:
    """Where reachable code takes more than the public helpers from ``gather_course``: a
    private or question-bank module, a name other than the public helpers, or the bank's
    ``exercise`` (``code`` as :func:`reachable` gives it)."""
    found = []
    packages = {"gather_course"}
    for cell, stmt in code:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Import):
                for a in node.names:
                    parts = a.name.split(".")
                    if parts[0] == "gather_course":
                        packages.add(a.asname or "gather_course")
                        if len(parts) > 1 and parts[1] not in _PUBLIC_MODULES:
                            found.append(Finding(a.name, *_where(cell, node)))
            elif isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[0] != "gather_course" or node.level:
                    continue
                if len(parts) > 1 and parts[1] not in _PUBLIC_MODULES:
                    found.append(Finding(node.module, *_where(cell, node)))
                elif len(parts) == 1:
                    found += [
                        Finding(f"gather_course.{a.name}", *_where(cell, node))
                        for a in node.names
                        if a.name not in _PUBLIC_NAMES | _COURSE_ONLY
                    ]
    for cell, stmt in code:
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in packages
                and node.attr not in _PUBLIC_NAMES
            ):
                found.append(Finding(f"gather_course.{node.attr}", *_where(cell, node)))
            elif isinstance(node, ast.Name) and node.id in _COURSE_ONLY:
                if isinstance(node.ctx, ast.Load):
                    found.append(Finding(node.id, *_where(cell, node)))
    return found
