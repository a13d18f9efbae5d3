"""The hidden test of a graded exercise, hardened against a notebook that patches the checker.

A graded notebook runs the learner's code and our tests in one kernel, so the learner's code
could replace ``torch.equal``, ``torch.isclose``, ``CheckResult.assert_passed`` or ``exercise``
to make every check pass. ``grade`` refuses to give points when anything the verdict depends
on differs from what it was when ``gather_course`` was first imported (or is, for torch, a
function defined outside torch), before or after the learner's function runs.

This defends against the usual tricks; code that reads this module and patches ``grade``
itself still can cheat, as with any grader that runs in the learner's kernel.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any, Callable

import torch

# The torch functions whose honesty the checker's verdict relies on.
_TORCH_FUNCTIONS = ("isclose", "equal", "allclose", "eq", "ne", "where", "all", "any")
_TENSOR_METHODS = ("__eq__", "__ne__", "__invert__", "__bool__", "__getitem__", "__len__",
                   "all", "any", "sum", "nonzero", "detach", "cpu", "to", "clone", "item",
                   "tolist", "numel", "dim", "size", "reshape", "is_floating_point",
                   "is_complex")
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_SNAPSHOT: dict[tuple[str, str], tuple[Any, Any]] = {}   # (object kept alive, identity)
_CONTENTS: dict[tuple[str, str], dict[Any, Any]] = {}
_OWN_STATE = ("_SNAPSHOT", "_CONTENTS")


def _torch_objects() -> dict[tuple[str, str], Any]:
    found = {("torch", n): getattr(torch, n, None) for n in _TORCH_FUNCTIONS}
    found.update({("torch.Tensor", n): getattr(torch.Tensor, n, None) for n in _TENSOR_METHODS})
    return found


def _package_objects() -> dict[tuple[str, str], Any]:
    """Every module-level name and class attribute of the loaded gather_course modules."""
    found: dict[tuple[str, str], Any] = {}
    for mod_name, mod in list(sys.modules.items()):
        if not (mod_name == "gather_course" or mod_name.startswith("gather_course.")):
            continue
        if not isinstance(mod, types.ModuleType):
            continue
        for name, obj in vars(mod).items():
            if name.startswith("__") or (mod_name == __name__ and name in _OWN_STATE):
                continue
            found[(mod_name, name)] = obj
            if isinstance(obj, type) and obj.__module__ == mod_name:
                for attr, value in vars(obj).items():
                    found[(f"{mod_name}.{name}", attr)] = value
    return found


def _fingerprint(obj: Any) -> tuple[Any, Any]:
    """The object's identity and, for a function, its code and defaults (swappable in place).

    The snapshot keeps the objects alive, so their ids cannot be reused.
    """
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        return obj, (id(obj), id(obj.__code__), obj.__defaults__, obj.__kwdefaults__)
    return obj, (id(obj),)


def _contents(d: dict[Any, Any]) -> dict[Any, Any]:
    """A dict's entries, each with its attributes (a registered Question's spec, make...)."""
    return {k: (_fingerprint(v)[1],
                {a: _fingerprint(x)[1] for a, x in vars(v).items()} if hasattr(v, "__dict__")
                else None)
            for k, v in d.items()}


def _take_snapshot() -> None:
    """Record the checker as it is now (called once, when gather_course is imported)."""
    if _SNAPSHOT:
        return
    for key, obj in {**_torch_objects(), **_package_objects()}.items():
        _SNAPSHOT[key] = _fingerprint(obj)
        if isinstance(obj, dict):
            _CONTENTS[key] = _contents(obj)


def _foreign(obj: Any) -> bool:
    """A torch attribute that is a Python function written outside torch (a patch)."""
    if isinstance(obj, types.FunctionType):
        return not os.path.abspath(obj.__code__.co_filename).startswith(_TORCH_DIR)
    return False


def tampered() -> list[str]:
    """Names of the checker's parts that were replaced since import; empty when all is well."""
    changed = []
    torch_now = _torch_objects()
    for key, obj in torch_now.items():
        if _foreign(obj) or (key in _SNAPSHOT and _fingerprint(obj)[1] != _SNAPSHOT[key][1]):
            changed.append(".".join(key))
    package_now = _package_objects()
    for key, before in _SNAPSHOT.items():
        if key in torch_now:
            continue
        if key not in package_now or _fingerprint(package_now[key])[1] != before[1]:
            changed.append(".".join(key))
    for key, contents in _CONTENTS.items():
        obj = package_now.get(key)
        if not isinstance(obj, dict) or _contents(obj) != contents:
            changed.append(".".join(key) + " (contents)")
    return changed


def _refuse(when: str, changed: list[str]) -> None:
    shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
    raise AssertionError(
        f"This notebook replaced parts of the checker {when} ({shown}). The hidden tests "
        "cannot trust their verdict, so this question scores 0. Remove the code that "
        "patches torch or gather_course, restart the kernel and run all cells.")


def grade(qid: str, fn: Callable[..., Any], seeds: tuple[int, ...] = (101, 202)) -> None:
    """The hidden test: other seeds, larger shapes, and a tamper check before and after.

    Raises ``AssertionError`` with the full feedback when the function is wrong.

    >>> grade("basics.pick_per_row", lambda x, cols: torch.gather(x, 1, cols))
    """
    from ._check import CheckResult, run_check
    from ._question import _REGISTRY

    changed = tampered()
    if changed:
        _refuse("before the hidden tests ran", changed)
    question = _REGISTRY[qid]
    for n, seed in enumerate(seeds):
        result = run_check(question, fn, seed, large=n % 2 == 0)
        changed = tampered()
        if changed:
            _refuse("while your function ran", changed)
        if type(result) is not CheckResult or result.passed is not True:
            raise AssertionError(f"\nHidden test (other random inputs"
                                 f"{', larger shapes' if n % 2 == 0 else ''}):\n{result}")
