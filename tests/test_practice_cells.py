"""The "practise more" section at the end of every exercise notebook (issue 49), and grading,
which never runs it.

Each exercise notebook, in both editions, source and student version, ends with a section
that draws a practice variant of each of its questions (a draw cell) and checks the learner's
answer to it (an answer cell, under a name of its own). The cells carry
``"gather_course": {"practice": qid}``; grading and ``gather-course check`` skip them, and say
so where a practice cell defines a graded answer's name.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from gather_course import exercise
from gather_course.grading._classjob import StudentJob, judge_student
from gather_course.grading._notebook_check import check_notebook
from gather_course.grading._submission import graded_cells, practice_cell, read_submission
from tests import test_grading_e2e as e2e
from tests.helpers import ROOT, fill_cells

EDITIONS = {"en": ROOT, "zh": ROOT / "zh"}
NOTEBOOKS = [
    pytest.param(root / folder / a / f"{a}.ipynb", id=f"{lang}-{folder}-{a}")
    for lang, root in EDITIONS.items()
    for folder in ("solutions", "exercises")
    for a in ("basics", "nlp", "vision", "topk", "mae", "friends")
]
HEADING = {"en": "## Practise more (not graded)", "zh": "## 加练（不计分）"}


def _edition(path) -> str:
    return "zh" if ROOT / "zh" in path.parents else "en"


@pytest.mark.parametrize("path", NOTEBOOKS)
def test_every_exercise_notebook_ends_with_a_practice_of_each_question(path):
    nb = nbformat.read(path, 4)
    qids = [qid for _gid, qid, _points in graded_cells(nb)]
    last_test = max(
        i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade")
    )
    heading = next(
        i for i, c in enumerate(nb.cells) if c.source.startswith(HEADING[_edition(path)])
    )
    assert heading > last_test + 1  # after every question and the "before you submit" cell
    section = nb.cells[heading + 1 :]
    assert [practice_cell(c) for c in section] == [q for q in qids for _ in (0, 1)]
    for qid, draw, answer in zip(qids, section[::2], section[1::2]):
        name = exercise(qid).name
        assert f'practice_{name} = exercise("{qid}").practice()' in draw.source
        assert f"practice_{name}.check(my_{name})" in answer.source
        defined = re.findall(r"^def (\w+)", answer.source, re.MULTILINE)
        assert defined == [f"my_{name}"]  # never the graded answer's name
        assert "raise NotImplementedError()" in answer.source
        assert "nbgrader" not in draw.metadata and "nbgrader" not in answer.metadata
    if path.parent.parent.name == "solutions":  # stored run: the task drawn, a stub's verdict
        for draw, answer in zip(section[::2], section[1::2]):
            shown = draw.outputs[0]["data"]["text/markdown"]
            assert shown.startswith(("**Practice: ", "**加练：")), shown
            verdict = answer.outputs[0]["data"]["text/plain"]
            assert "NotImplementedError" in verdict and "❌" in verdict, verdict


# --- grading skips the section --------------------------------------------------------------

RELEASED = ROOT / "exercises" / "basics" / "basics.ipynb"


def _practised(released):
    """basics with every graded answer right; in the practice section, the first question's
    practice answer defines the graded name with a wrong body (pasted there by mistake), and
    the second's draw cell is replaced by code that would end the grader's worker."""
    answers = {cell: e2e._solution(qid) for qid, cell, _t, _p in e2e._questions(released)}
    nb = fill_cells(released, answers)
    practice = [c for c in nb.cells if practice_cell(c)]
    practice[1].source = "def pick_per_row(x, cols):\n    return x\n"
    practice[2].source = "import os\nos._exit(3)\n"
    return nb


def test_grading_runs_no_practice_cell_and_check_says_the_same(referee, tmp_path):
    released = nbformat.read(RELEASED, 4)
    nb = _practised(released)
    job = StudentJob("s00000_practised", {"basics.ipynb": nbformat.writes(nb)})
    graded = judge_student(referee, job, {"basics.ipynb": released}, 1)
    assert graded["problem"] == "", graded["problem"]
    assert all(v["passed"] for v in graded["verdicts"].values()), graded["verdicts"]
    n = next(i for i, c in enumerate(nb.cells, 1) if c.source.startswith("def pick_per_row(x"))
    note = (
        f"Code cell {n} is in the practice section, which is not graded: its `pick_per_row` "
        "counts for practice only. Your graded answer goes in the answer cell under its question."
    )
    assert note in graded["notes"], graded["notes"]
    path = tmp_path / "basics.ipynb"
    nbformat.write(nb, path)
    reports, notes = check_notebook(path, referee=referee)
    assert all(r.passed for r in reports) and note in notes, (reports, notes)


def test_a_practice_mark_on_a_cell_of_nbgrader_changes_nothing():
    """A practice mark a submission adds to the course's setup cell or to an answer cell is
    ignored, in grading (the released notebook as reference) and in the learner's own check
    (the notebook as its own) alike: only cells nbgrader does not know can be practice."""
    released = nbformat.read(RELEASED, 4)
    nb = _practised(released)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") in ("setup", "pick_per_row"):
            cell.metadata["gather_course"] = {"practice": "basics.pick_per_row"}
    setup = next(
        c.source
        for c in released.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "setup"
    )
    for reference in (released, nb):
        run = read_submission(nb, reference).cells
        assert setup in run
        assert sum(s.count("def pick_per_row(") for s in run) == 1  # the graded answer only
        assert any("torch.gather(x, 1, cols)" in s for s in run)
        assert not any("os._exit" in s for s in run)
