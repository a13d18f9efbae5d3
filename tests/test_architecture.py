"""The package's rooms hold: the import contracts, what the sandbox holds, and a grader
that starts without plotting (docs/architecture.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
import tomllib

import gather_course
from gather_course._answer_api import MODULES
from gather_course.grading._sandbox import WORKER

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(gather_course.__file__).resolve().parent
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())",
]


def _lint(cwd: Path, *contracts: str) -> subprocess.CompletedProcess:
    only = [a for c in contracts for a in ("--contract", c)]
    return subprocess.run(
        [*LINT, "--no-cache", *only], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_import_contracts_hold_and_each_says_why():
    found = _lint(ROOT)
    assert found.returncode == 0, found.stdout[-3000:] + found.stderr[-2000:]
    text = (ROOT / "pyproject.toml").read_text()
    contracts = tomllib.loads(text)["tool"]["importlinter"]["contracts"]
    assert {c["id"] for c in contracts} >= {"rooms", "no-plotting-in-grading", "no-circles"}
    for c in contracts:  # a one-line reason in the comment above the contract's type
        block = text[text.index(f'id = "{c["id"]}"') :].split("type =")[0]
        assert "# Why:" in block, f"contract {c['id']} has no '# Why:' line"
        reason = block.split("# Why:")[1].split("\n")
        assert not reason[1].startswith("#"), f"contract {c['id']}: its reason runs past one line"


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("questions/_cases.py", "from ..grading import _scan", "rooms"),
        ("reference.py", "from .course import _twins", "rooms"),
        ("grading/_scan.py", "from .. import draw", "no-plotting-in-grading"),
        ("_i18n.py", "from . import _tier", "no-circles"),  # _tier imports _i18n
    ],
)
def test_a_contract_breaks_when_an_arrow_goes_the_wrong_way(tmp_path, module, line, contract):
    """Each contract can fail: one wrong import in a copy of the package breaks it."""
    shutil.copytree(PACKAGE, tmp_path / "gather_course", ignore=shutil.ignore_patterns("locale"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    assert _lint(tmp_path, contract).returncode == 0  # the copy keeps it
    target = tmp_path / "gather_course" / module
    target.write_text(target.read_text() + f"\n\ndef _wrong():\n    {line}\n")
    found = _lint(tmp_path, contract)
    assert found.returncode == 1 and "BROKEN" in found.stdout, found.stdout[-2000:]


def _sandbox_modules() -> set[str]:
    workers = (WORKER,) if isinstance(WORKER, str) else WORKER
    return {f"gather_course.{m}" for m in MODULES} | {
        "gather_course." + w.replace("/", ".") for w in workers
    }


def test_the_sandbox_holds_every_module_its_files_import_and_no_plotting():
    """The sandbox's package folder holds only MODULES and the worker's files: whatever they
    import (lazily too) from the package must be among them, or grading an answer that calls
    a public helper would fail only inside the sandbox."""
    graph = grimp.build_graph("gather_course", include_external_packages=True)
    held = _sandbox_modules()
    reached: set[str] = set()
    for module in held:
        reached |= graph.find_upstream_modules(module)
    internal = {m for m in reached if m.startswith("gather_course.")}
    assert internal <= held | {"gather_course"}, sorted(internal - held)
    assert "matplotlib" not in reached


def test_the_grader_and_the_command_line_start_without_matplotlib():
    code = (
        "import sys, gather_course, gather_course.cli, gather_course.grading._grade, "
        "gather_course.grading._notebook_check, gather_course.grading._classes\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n"
        "from gather_course import draw_gather\n"
        "print('matplotlib' in sys.modules, draw_gather.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    before, after = out.stdout.splitlines()
    assert before == "[]"
    assert after == "True gather_course.draw"  # and a learner's drawing still loads it
