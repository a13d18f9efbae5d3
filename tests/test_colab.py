"""Google Colab: every lecture and exercise starts with a cell that installs the course there
and does nothing elsewhere. Colab itself cannot be reached from CI (docs/ci.md); these tests
run the cell with Colab's marker faked, and prove that what it installs is enough."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import nbformat
import pytest

from gather_course.course._colab import colab_cell
from tests.helpers import ROOT

NOTEBOOKS = sorted(
    p
    for top in ("notebooks", "exercises", "solutions", "zh/notebooks", "zh/exercises", "zh/solutions")
    for p in (ROOT / top).rglob("*.ipynb")
    if ".ipynb_checkpoints" not in p.parts and p.name not in ("header.ipynb", "class_header.ipynb")  # nbgrader's header
)  # fmt: skip


def test_every_lecture_and_exercise_is_found():
    assert len(NOTEBOOKS) == 36  # 6 lectures, 6 exercises, 6 sources; two editions


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_first_code_cell_installs_the_course_on_colab(path):
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    lang = "zh" if path.relative_to(ROOT).parts[0] == "zh" else "en"
    assert first.source == colab_cell(lang), (
        f"{path.relative_to(ROOT)}: the first code cell must be gather_course.course._colab."
        f"colab_cell({lang!r}) (a new version changes it)"
    )
    assert not first.get("outputs")  # off Colab it prints nothing
    if "solutions" in path.parts or "exercises" in path.parts:
        meta = first.metadata["nbgrader"]
        assert meta["locked"] and not meta["solution"] and not meta["grade"]


def _run_cell(source: str, monkeypatch, on_colab: bool) -> list:
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append((a, k)))
    if on_colab:
        monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    exec(compile(source, "<colab cell>", "exec"), {})  # noqa: S102 - the course's own cell
    return calls


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_cell_does_nothing_off_colab(monkeypatch, lang):
    assert _run_cell(colab_cell(lang), monkeypatch, on_colab=False) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_colab_the_cell_installs_this_version_without_touching_torch(monkeypatch, lang):
    ((args, kwargs),) = _run_cell(colab_cell(lang), monkeypatch, on_colab=True)
    assert kwargs == {"check": True}
    assert args[0] == [
        sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
        f"gather-course=={version('gather-course')}", "babel>=2.10",
    ]  # fmt: skip
    # (the interpreter's own path may hold "torch": /opt/torch/.venv/bin/python on a GPU image)
    assert not any(word in " ".join(args[0][1:]) for word in ("torch", "matplotlib", "--upgrade"))


def test_the_cell_is_plain_python_so_the_grader_runs_it():
    from gather_course.grading._submission import _is_ipython_syntax

    for lang in ("en", "zh"):
        compile(colab_cell(lang), "<cell>", "exec")
        assert _is_ipython_syntax(colab_cell(lang)) == ""


# what Colab lacks until the course's full install: the notebook side must not need any of it
_NOT_ON_COLAB = ("nbgrader", "nbformat", "nbclient", "nbval", "IPython", "jupyterlab",
                 "jupyter_server", "tqdm", "copydetect", "pytest", "dask", "psycopg")  # fmt: skip


def test_what_the_cell_installs_is_enough_for_the_lectures_and_the_exercise_checks():
    """--no-deps installs the package and Babel only: the toolkit, the drawings and the
    question bank run with none of the course's other dependencies importable."""
    code = f"""
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {_NOT_ON_COLAB!r}:
            raise ImportError(f"{{name}} is not installed on Colab")
sys.meta_path.insert(0, Refuse())
import matplotlib
matplotlib.use("Agg")
import torch
from gather_course import diagnose, draw_gather, exercise, explain, gather_reference
x = torch.arange(6).reshape(2, 3)
i = torch.tensor([[2, 0], [1, 1]])
assert torch.equal(gather_reference(x, 1, i), torch.gather(x, 1, i))
draw_gather(x, 1, i)
explain(x, 1, i, (0, 1))
q = exercise("basics.pick_per_row")
ns = {{"torch": torch}}
exec(q.solution_code, ns)
result = q.check(ns["pick_per_row"])
assert result.passed, result
wrong = q.check(lambda x, cols: x[:, : cols.shape[1]])
assert not wrong.passed
print(result._repr_markdown_()[:40])
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip()
