"""Feedback that teaches: gather errors diagnosed, shifts named, wrong values traced to the input
element they came from, a drawing of expected against yours, and verdicts that show cleanly in
a notebook (no course frames) under every question on Run All."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
import torch
from matplotlib.figure import Figure
from nbclient import NotebookClient

from gather_course import GatherCourseError, exercise
from gather_course.grading._notebook_check import check_notebook
from tests.helpers import ROOT

PICK = exercise("basics.pick_per_row")


def _details(result) -> dict[str, str]:
    return dict(result.details)


def test_a_gather_along_the_wrong_dim_is_diagnosed():
    result = PICK.check(lambda x, cols: x.gather(0, cols))
    assert result.headline.startswith("Your function raised RuntimeError: index ")
    d = _details(result)
    assert d["your call"].startswith("torch.gather(input [")
    assert "is out of range" in d["broken rule"]
    assert "did you mean dim=1" in d["fix"]


def test_an_index_missing_a_dim_is_diagnosed():
    select = exercise("nlp.label_scores")
    result = select.check(lambda logits, labels: logits.gather(-1, labels))
    d = _details(result)
    assert "same number of dims" in d["broken rule"] and "unsqueeze(-1)" in d["fix"], result


def test_an_error_outside_gather_gets_no_gather_diagnosis():
    result = PICK.check(lambda x, cols: x @ cols)
    assert result.tier == "raised an exception" and "broken rule" not in _details(result)


def test_an_index_one_too_far_is_named_a_shift_and_traced_to_the_input():
    result = PICK.check(lambda x, cols: x.gather(1, (cols + 1).clamp(max=x.shape[1] - 1)))
    d = _details(result)
    assert d["traced"].startswith("Your out[") and "; expected x[" in d["traced"]
    assert "1 place further along dim 1 of `x`" in d["shift"]


def test_a_traced_value_names_the_element_it_came_from():
    q = exercise("topk.select_patches")
    wrong = lambda patches, scores, k: q.spec(patches, -scores, k)  # lowest, not highest
    result = q.check(wrong)
    traced = _details(result)["traced"]
    assert (
        traced.startswith("Your out[0, 0, 0] equals patches[0, ") and "expected patches" in traced
    )


def test_an_output_shifted_along_a_dim_is_named():
    result = PICK.check(lambda x, cols: x.gather(1, cols).roll(1, 0))
    assert "shifted by 1 along dim 0" in _details(result)["shift"]
    assert "after where it belongs" in _details(result)["shift"]


def test_no_shift_or_trace_is_claimed_for_unrelated_values():
    result = PICK.check(lambda x, cols: torch.zeros(cols.shape))
    assert "shift" not in _details(result) and "traced" not in _details(result)


def test_draw_shows_expected_next_to_yours_and_refuses_what_it_cannot_draw():
    result = PICK.check(lambda x, cols: x.gather(1, cols) + (cols == cols[0, 0]))
    assert "draws the expected values next to yours" in result.advice
    fig = result.draw()
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert [a.get_title() for a in fig.axes] == ["expected: out", "yours: out"]
    texts = [t.get_text() for t in fig.axes[1].texts]
    assert len(texts) == result._pair[1].numel()
    with pytest.raises(GatherCourseError, match="this result is a pass"):
        PICK.check(lambda x, cols: x.gather(1, cols)).draw()
    with pytest.raises(GatherCourseError, match="about something else"):
        PICK.check(lambda x, cols: x).draw()


def test_hints_do_not_say_wrong_things_about_a_pass():
    result = PICK.check(lambda x, cols: x.gather(1, cols))
    assert str(result).startswith("✅ Correct (basics.pick_per_row): All ")
    assert result._repr_markdown_().startswith("✅ **Correct** (`basics.pick_per_row`): All ")


def test_the_referee_gives_the_same_diagnosis(tmp_path):
    path = tmp_path / "basics.ipynb"
    shutil.copy(ROOT / "exercises/basics/basics.ipynb", path)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "pick_per_row":
            cell.source = "def pick_per_row(x, cols):\n    return x.gather(0, cols)\n"
    nbformat.write(nb, path)
    reports, _ = check_notebook(path)
    message = next(r.message for r in reports if r.grade_id == "test_pick_per_row")
    assert "did you mean dim=1" in message and "broken rule:" in message


def _run(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",  # no allow_errors, as Run All
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    return nb


def test_run_all_on_a_blank_notebook_shows_a_clean_verdict_under_every_question(tmp_path):
    path = tmp_path / "basics.ipynb"
    shutil.copy(ROOT / "exercises/basics/basics.ipynb", path)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # one answer half done and wrong, one with a syntax error
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "pick_per_row":
            cell.source = "def pick_per_row(x, cols):\n    return x.gather(0, cols)\n"
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "gather_loop":
            cell.source = "def gather_loop(input, dim, index)\n    pass\n"
    nbformat.write(nb, path)
    nb = _run(path)
    tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(tests) == 3
    for cell in tests:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert len(errors) == 1, cell.source  # every question has a verdict
        text = "\n".join(errors[0].traceback)
        for frame in ("gather_course/", "_check.py", "_judge.py", "_result.py", "site-packages"):
            assert frame not in text, (frame, text)
    first, second, third = ("\n".join(c.outputs[0].traceback) for c in tests)
    assert "Traceback" not in first and "Traceback" not in third  # the verdict alone
    assert "❌ Incorrect (basics.pick_per_row)" in first and "did you mean dim=1" in first
    # the answer cell's SyntaxError left gather_loop undefined: IPython's NameError says so
    assert "NameError" in second and "name 'gather_loop' is not defined" in second, second
    assert "❌ Not attempted yet (basics.reverse_index)" in third
    assert "NotImplementedError" in third
