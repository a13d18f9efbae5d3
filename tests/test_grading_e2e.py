"""The whole grading round trip with nbgrader's real gradebook, in a temporary copy of the course.

For every assignment: the solution scores full marks, the untouched student notebook 0, and a
typical wrong answer loses exactly its question's points. For one assignment, the dishonest and
broken submissions: an edited or deleted test cell, patched torch or checker, an endless loop,
a loop that ignores interrupts. Then the feedback HTML is searched for the hidden tests.
"""

from __future__ import annotations

import copy
import csv
import inspect
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from answers import WRONG
from gather_course import exercise
from gather_course._course import assignments
from test_course import qid_of

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = assignments(ROOT)
IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"
CELL_TIMEOUT = 8


def _questions(nb) -> list[tuple[str, str, float]]:
    """(question id, answer cell id, test cell id, points) in notebook order."""
    found = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            found.append((qid_of(cell), meta["grade_id"].removeprefix("test_"), meta["grade_id"],
                          float(meta["points"])))
    return found


def _typical_wrong(qid: str) -> str:
    """The first self-contained typical wrong answer of tests/answers.py, as cell source."""
    name = exercise(qid).name
    for fn, _tier in WRONG[qid]:
        src = textwrap.dedent(inspect.getsource(fn))
        src = "\n".join(line for line in src.splitlines() if not line.startswith("@"))
        if " _" not in src and "(_" not in src:          # no private helpers of answers.py
            return f"{IMPORTS}\n{src}\n\n{name} = {fn.__name__}\n"
    raise AssertionError(f"no self-contained wrong answer for {qid}")


def _solution(qid: str) -> str:
    return IMPORTS + exercise(qid).solution_code


def _fill(nb, answers: dict[str, str], tests: dict[str, str | None] | None = None):
    nb = copy.deepcopy(nb)
    tests = tests or {}
    cells = []
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
        if gid in tests:
            if tests[gid] is None:
                continue                                   # the learner deleted it
            cell.source = tests[gid]
        cells.append(cell)
    nb.cells = cells
    return nb


def _submissions(assignment: str) -> dict[str, object]:
    student_nb = nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4)
    qs = _questions(student_nb)
    right = {cell: _solution(qid) for qid, cell, _, _ in qs}
    wrong = {cell: _typical_wrong(qid) for qid, cell, _, _ in qs}
    subs = {
        "solution": _fill(student_nb, right),
        "untouched": student_nb,
        "wrong_odd": _fill(student_nb, {c: (wrong if i % 2 == 0 else right)[c]
                                        for i, (_, c, _, _) in enumerate(qs)}),
        "wrong_even": _fill(student_nb, {c: (wrong if i % 2 == 1 else right)[c]
                                         for i, (_, c, _, _) in enumerate(qs)}),
    }
    if assignment != "basics":
        return subs
    first, test = qs[0][1], qs[0][2]
    bad = {**right, first: wrong[first]}
    fake = "def pick_per_row(x, cols):\n    return x[:, :cols.shape[1]].clone()\n"
    subs.update({
        "edits_test": _fill(student_nb, bad, {test: "pass"}),
        "deletes_test": _fill(student_nb, bad, {test: None}),
        "patches_torch": _fill(student_nb, {**right, first: (
            "import torch\n"
            "torch.allclose = lambda *a, **k: True\n"
            "torch.equal = lambda *a, **k: True\n"
            "torch.isclose = lambda a, b, **k: torch.ones(torch.broadcast_shapes(a.shape, "
            "b.shape), dtype=torch.bool)\n" + fake)}),
        "patches_checker": _fill(student_nb, {**right, first: (
            "import gather_course\n"
            "from gather_course.questions._check import CheckResult\n"
            "CheckResult.assert_passed = lambda self: self\n"
            "CheckResult.__bool__ = lambda self: True\n" + fake)}),
        "endless_loop": _fill(student_nb, {**right, first: (
            "def pick_per_row(x, cols):\n    while True:\n        pass\n")}),
        "ignores_interrupt": _fill(student_nb, {**right, first: (
            "import signal\n"
            "def pick_per_row(x, cols):\n"
            "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "    while True:\n        pass\n")}),
    })
    return subs


def _grade(assignment: str, base: Path) -> tuple[Path, subprocess.CompletedProcess]:
    root = base / assignment
    root.mkdir()
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    for student, nb in _submissions(assignment).items():
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{assignment}.ipynb")
    done = subprocess.run([sys.executable, "-m", "gather_course.cli", "grade", assignment,
                           "--course", str(root), "--timeout", str(CELL_TIMEOUT)],
                          capture_output=True, text=True, timeout=900)
    return root, done


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("course")
    with ThreadPoolExecutor(max_workers=2) as pool:    # one course copy per assignment
        results = dict(zip(ASSIGNMENTS, pool.map(lambda a: _grade(a, base), ASSIGNMENTS)))
    return results


def _csv(root: Path, assignment: str) -> dict[str, dict[str, str]]:
    with open(root / f"grades-{assignment}.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def _expected(assignment: str) -> list[tuple[str, str, str, float]]:
    return _questions(nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_grading_runs_and_reports_every_student(graded, assignment):
    root, done = graded[assignment]
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _csv(root, assignment)
    assert {"solution", "untouched", "wrong_odd", "wrong_even"} <= set(rows)
    assert f"submissions graded; scores in {root / f'grades-{assignment}.csv'}" in done.stdout


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_full_marks_untouched_zero(graded, assignment):
    root, _ = graded[assignment]
    rows = _csv(root, assignment)
    total = sum(p for *_, p in _expected(assignment))
    assert float(rows["solution"]["score"]) == float(rows["solution"]["max_score"]) == total
    assert rows["solution"]["status"] == "graded"
    assert float(rows["untouched"]["score"]) == 0 and rows["untouched"]["status"] == "graded"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_typical_wrong_answer_loses_exactly_its_points(graded, assignment):
    root, _ = graded[assignment]
    rows = _csv(root, assignment)
    for i, (qid, _, test, points) in enumerate(_expected(assignment)):
        wrong_in, right_in = ("wrong_odd", "wrong_even") if i % 2 == 0 else ("wrong_even",
                                                                             "wrong_odd")
        assert float(rows[wrong_in][test]) == 0, (qid, rows[wrong_in])
        assert float(rows[right_in][test]) == points, (qid, rows[right_in])


def test_dishonest_submissions_gain_nothing(graded):
    root, _ = graded["basics"]
    rows = _csv(root, "basics")
    first = _expected("basics")[0][2]
    for student in ("edits_test", "deletes_test", "patches_torch", "patches_checker"):
        assert rows[student]["status"] == "graded", rows[student]
        assert float(rows[student][first]) == 0, (student, rows[student])
        assert float(rows[student]["score"]) < float(rows["solution"]["score"])
    # the deleted cell was put back and graded like the others
    assert float(rows["deletes_test"]["score"]) == float(rows["solution"]["score"]) - \
        _expected("basics")[0][3]


def test_endless_loops_score_zero_and_the_class_is_still_graded(graded):
    root, done = graded["basics"]
    rows = _csv(root, "basics")
    first, points = _expected("basics")[0][2], _expected("basics")[0][3]
    loop = rows["endless_loop"]
    assert loop["status"] == "graded" and float(loop[first]) == 0
    assert float(loop["score"]) == float(rows["solution"]["score"]) - points
    stubborn = rows["ignores_interrupt"]          # graded 0 for it, or reported as not graded
    assert float(stubborn["score"]) <= float(rows["solution"]["score"]) - points
    if stubborn["status"] != "graded":
        assert stubborn["problem"] and "ignores_interrupt" in done.stdout
    assert float(rows["solution"]["score"]) > 0     # students after them were graded


def test_feedback_shows_no_hidden_tests(graded):
    root, _ = graded["basics"]
    from gather_course._course import nbgrader_api

    with nbgrader_api(root) as api:
        result = api.generate_feedback("basics")
    assert result["success"], result.get("error")
    pages = sorted((root / "feedback").glob("*/basics/*.html"))
    assert len(pages) >= 8
    for page in pages:
        html = page.read_text(encoding="utf-8")
        for secret in ("HIDDEN TESTS", "_grading", "grade(&quot;", 'grade("', "seeds"):
            assert secret not in html, (page, secret)
    wrong = (root / "feedback" / "wrong_odd" / "basics" / "basics.html").read_text()
    assert "FAILED" in wrong                         # the check's message is kept
