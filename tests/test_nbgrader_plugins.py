"""The course's nbgrader preprocessors, tested the way nbgrader tests its own: a notebook built
in memory, run through the preprocessor, and its cells read back."""

from __future__ import annotations

import json

import pytest
from nbformat.v4 import new_notebook, new_output
from nbgrader.preprocessors import ClearHiddenTests
from nbgrader.tests import create_grade_cell, create_regular_cell, create_solution_cell
from traitlets.config import Config

from gather_course.grading.nbgrader_plugins import (
    HideHiddenTestTracebacks,
    RefereeVerdicts,
    RunAllShowsEveryVerdict,
)

SECRET = "assert out.sum() == 42  # a hidden case"


def _error(ename="AssertionError", evalue="❌ Incorrect (basics.pick_per_row): Wrong values."):
    return new_output(
        "error",
        ename=ename,
        evalue=evalue,
        traceback=["Traceback (most recent call last)", f"----> 3 {SECRET}", f"{ename}: {evalue}"],
    )


def _test_cell(begin="### BEGIN HIDDEN TESTS", end="### END HIDDEN TESTS"):
    cell = create_grade_cell(f"check()\n{begin}\n{SECRET}\n{end}", "code", "pick_per_row", 2)
    cell.outputs = [_error()]
    return cell


def _run(preprocessors, nb, resources=None):
    resources = resources or {}
    for pre in preprocessors:
        nb, resources = pre.preprocess(nb, resources)
    return nb


@pytest.mark.parametrize(
    "begin, end",
    [("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"), ("## SECRET BEGIN", "## SECRET END")],
)
@pytest.mark.parametrize("hide_first", [True, False], ids=["hide-then-clear", "clear-then-hide"])
def test_no_hidden_line_survives_in_either_order_and_with_any_markers(begin, end, hide_first):
    config = Config()
    config.ClearHiddenTests.begin_test_delimeter = begin.lstrip("# ")
    config.ClearHiddenTests.end_test_delimeter = end.lstrip("# ")
    clear, hide = ClearHiddenTests(config=config), HideHiddenTestTracebacks(config=config)
    nb = new_notebook(cells=[_test_cell(begin, end)])
    nb = _run([hide, clear] if hide_first else [clear, hide], nb)
    cell = nb.cells[0]
    assert SECRET not in cell.source  # ClearHiddenTests' own job
    assert SECRET not in json.dumps(cell.outputs)  # ours: the traceback is gone
    assert cell.outputs[0]["traceback"] == [
        "AssertionError: ❌ Incorrect (basics.pick_per_row): Wrong values."
    ]


def test_only_test_cells_lose_their_traceback():
    answer = create_solution_cell("def f():\n    raise ValueError('mine')", "code", "answer")
    answer.outputs = [_error("ValueError", "mine")]
    plain = create_regular_cell("1 / 0", "code")
    plain.outputs = [_error("ZeroDivisionError", "division by zero")]
    nb = _run([HideHiddenTestTracebacks()], new_notebook(cells=[answer, plain, _test_cell()]))
    assert [len(c.outputs[0]["traceback"]) for c in nb.cells] == [3, 3, 1]


def test_run_all_tags_answer_and_test_cells_only_and_once():
    answer = create_solution_cell("def f(): ...", "code", "answer")
    test = create_grade_cell("check()", "code", "t", 1)
    test.metadata["tags"] = ["raises-exception"]
    setup = create_regular_cell("import torch", "code")
    text = create_regular_cell("Some text", "markdown")
    nb = _run([RunAllShowsEveryVerdict()], new_notebook(cells=[answer, test, setup, text]))
    assert [c.metadata.get("tags") for c in nb.cells] == [
        ["raises-exception"],
        ["raises-exception"],
        None,
        None,
    ]


def test_referee_verdicts_become_the_test_cells_outputs(tmp_path):
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(
        json.dumps(
            {
                "ann": {
                    "a": {"passed": True, "message": "✅ Correct (q.a): All 3 test cases pass."},
                    "b": {
                        "passed": False,
                        "message": "❌ Incorrect (q.b): Wrong shape.\n  case: x",
                    },
                }
            }
        )
    )
    cells = [create_grade_cell("check a", "code", gid, 1) for gid in ("a", "b", "c")]
    pre = RefereeVerdicts(verdicts_file=str(verdicts))
    nb = _run([pre], new_notebook(cells=cells), {"nbgrader": {"student": "ann"}})
    a, b, c = (cell.outputs[0] for cell in nb.cells)
    assert a["output_type"] == "stream" and a["text"].startswith("✅ Correct (q.a)")
    assert b["output_type"] == "error" and b["traceback"] == [
        "❌ Incorrect (q.b): Wrong shape.",
        "  case: x",
    ]
    assert c["output_type"] == "error" and c["evalue"] == "This question was not graded."
