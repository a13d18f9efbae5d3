"""Every ``>>>`` example in the package's docstrings runs and shows what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import gather_course

MODULES = sorted(  # (a __main__ module runs its command when imported)
    m.name
    for m in pkgutil.walk_packages(gather_course.__path__, prefix="gather_course.")
    if not m.name.endswith(".__main__")
)


def test_the_walk_finds_every_room():
    rooms = {name.split(".")[1] for name in MODULES}
    assert {"grading", "course", "questions", "cli", "reference", "draw"} <= rooms


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for test in tests:
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)[-3000:]
