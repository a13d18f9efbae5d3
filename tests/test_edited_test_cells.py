"""A test cell the learner edited or deleted (issue 48): graded all the same, with a note.

Grading never runs a submission's test cells (the referee judges each question from the
released notebook's), so an edited test cell gains nothing and a deleted one loses nothing;
the note says so in the student's feedback, and ``gather-course check`` says it in the same
words."""

from __future__ import annotations

import nbformat
import pytest

from gather_course import exercise
from gather_course.grading._classjob import StudentJob, judge_student
from gather_course.grading._notebook_check import check_notebook
from gather_course.grading._submission import graded_cells
from gather_course.grading._test_notes import (
    deleted_test_note,
    edited_locked_note,
    edited_test_note,
    not_restored_note,
)
from tests import test_grading_e2e as e2e
from tests.helpers import ROOT, fill_cells

RELEASED = ROOT / "exercises" / "basics" / "basics.ipynb"


@pytest.fixture(scope="module")
def tampered():
    """basics with every answer right but the first, whose test cell says ``pass`` (an edit
    that would make a run of the notebook look fine); the second test cell deleted; the
    third with a comment added."""
    released = nbformat.read(RELEASED, 4)
    qs = e2e._questions(released)
    assert len(qs) >= 3
    (q0, a0, t0, _), (_, _, t1, _), (_, _, t2, _) = qs[:3]
    answers = {cell: e2e._solution(qid) for qid, cell, _, _ in qs}
    answers[a0] = e2e._typical_wrong(q0)
    original = {c.metadata["nbgrader"]["grade_id"]: c.source for c in released.cells
                if c.metadata.get("nbgrader", {}).get("grade_id")}  # fmt: skip
    tests = {t0: "pass", t1: None, t2: original[t2] + "\n# I read this test"}
    return released, fill_cells(released, answers, tests), (t0, t1, t2)


def test_edited_and_deleted_test_cells_are_graded_with_a_note(referee, tampered):
    released, nb, (edited_to_pass, deleted, commented) = tampered
    job = StudentJob("s00000_tampered", {"basics.ipynb": nbformat.writes(nb)})
    result = judge_student(referee, job, {"basics.ipynb": released}, 1)
    assert result["problem"] == "", result["problem"]  # graded, not NOT GRADED
    verdicts = result["verdicts"]
    assert sorted(verdicts) == sorted(gid for gid, _q, _p in graded_cells(released))
    assert not verdicts[edited_to_pass]["passed"]  # its `pass` changed nothing: still wrong
    assert verdicts[deleted]["passed"] and verdicts[commented]["passed"]
    assert all(v["passed"] for gid, v in verdicts.items() if gid != edited_to_pass)
    notes = result["notes"]
    assert edited_test_note(edited_to_pass) in notes and edited_test_note(commented) in notes
    assert deleted_test_note(deleted) in notes
    assert "course's own test, as released" in edited_test_note(commented)
    assert len([n for n in notes if "The test cell" in n]) == 3  # the untouched ones: none


def test_check_says_in_the_same_words_what_grading_does(referee, tampered, tmp_path):
    released, nb, (edited_to_pass, deleted, commented) = tampered
    path = tmp_path / "basics.ipynb"
    nbformat.write(nb, path)
    reports, notes = check_notebook(path, referee=referee)
    job = StudentJob("s00000_tampered", {"basics.ipynb": nbformat.writes(nb)})
    graded = judge_student(referee, job, {"basics.ipynb": released}, 1)
    about_tests = sorted(n for n in notes if n.startswith("The test cell"))
    assert about_tests == sorted(n for n in graded["notes"] if n.startswith("The test cell"))
    assert not any("locked cell" in n for n in notes + graded["notes"])  # tests, not setup
    by_gid = {r.grade_id: r for r in reports}
    assert set(by_gid) == {gid for gid, _q, _p in graded_cells(released)}
    assert by_gid[commented].passed and by_gid[commented].status == "passed"  # judged
    for gid, status in ((edited_to_pass, "edited"), (deleted, "deleted")):  # not judgeable
        assert by_gid[gid].status == status and by_gid[gid].score == 0
        assert by_gid[gid].message.startswith("Not judged") and "grading" in by_gid[gid].message
    for r in reports:
        assert "refuses" not in r.message  # grading refuses no notebook for its test cells


def test_nbgraders_cell_rules_read_without_nbgrader_agree_with_nbgraders_own():
    """Judging reads nbgrader's cell metadata without importing nbgrader (0.6 s before the
    first submission): on every cell of the course's notebooks, and on edited copies, the
    rules and the checksum are nbgrader's."""
    from nbgrader import utils

    from gather_course.grading import _submission as ours

    paths = sorted((ROOT / "exercises").rglob("*.ipynb")) + sorted(
        (ROOT / "solutions").rglob("*.ipynb")
    )
    cells = [c for p in paths for c in nbformat.read(p, 4).cells]
    edited = []
    for cell in cells:
        meta = cell.metadata.get("nbgrader")
        if meta and meta.get("grade_id"):
            copy = nbformat.from_dict(cell)
            copy.source += "\n# edited"
            copy.metadata.nbgrader["locked"] = not meta.get("locked", False)
            edited.append(copy)
    checked = 0
    for cell in cells + edited:
        for rule in ("is_grade", "is_solution", "is_locked"):
            assert getattr(ours, rule)(cell) == bool(getattr(utils, rule)(cell)), (rule, cell)
        if cell.metadata.get("nbgrader", {}).get("grade_id"):
            assert ours.checksum(cell) == utils.compute_checksum(cell)
            checked += 1
    assert checked > 50


def test_an_edited_locked_setup_cell_runs_as_released_in_check_and_in_grading(referee, tmp_path):
    """Red team, 2026-11-27: a helper added to the locked setup cell, and an answer that
    calls it, passed ``check`` (which ran the cell as edited) and failed grading (which runs
    it as released), with no word in either. Both run it as released now, and say so."""
    released = nbformat.read(RELEASED, 4)
    qs = e2e._questions(released)
    (qid, answer, test, _points), *rest = qs
    name = exercise(qid).name
    uses_helper = f"def {name}(*args):\n    return _my_helper(*args)\n"
    helper = f"\n\ndef _my_helper(*args):\n    return {name}_solution(*args)\n"
    solution = e2e._solution(qid).replace(f"def {name}(", f"def {name}_solution(")
    answers = {answer: uses_helper} | {a: e2e._solution(q) for q, a, _t, _p in rest}
    nb = fill_cells(released, answers)
    setup = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    setup.source += helper + "\n" + solution
    path = tmp_path / "basics.ipynb"
    nbformat.write(nb, path)
    reports, notes = check_notebook(path, referee=referee)
    job = StudentJob("s00000_setup", {"basics.ipynb": nbformat.writes(nb)})
    graded = judge_student(referee, job, {"basics.ipynb": released}, 1)
    by_gid = {r.grade_id: r for r in reports}
    assert not by_gid[test].passed and "_my_helper" in by_gid[test].message, by_gid[test]
    assert not graded["verdicts"][test]["passed"]  # the same verdict: NameError
    assert all(graded["verdicts"][t]["passed"] for _q, _a, t, _p in rest)
    assert edited_locked_note("setup") in notes and edited_locked_note("setup") in graded["notes"]
    assert not any("could not find" in n for n in notes)
    # a locked cell the course's notebooks do not hold (its checksum forged too): check runs
    # it as edited, and says that grading may say otherwise
    setup.metadata["nbgrader"]["checksum"] = "0" * 32
    nbformat.write(nb, path)
    reports, notes = check_notebook(path, referee=referee)
    assert not_restored_note("setup") in notes
    assert {r.grade_id: r for r in reports}[test].passed  # (what its edit gives)


@pytest.mark.parametrize(
    "damage",
    [
        lambda meta: meta.update(points="abc"),
        lambda meta: meta.pop("points"),
        lambda meta: meta.update(grade_id=7),
    ],
    ids=["points as text", "points removed", "a grade id that is a number"],
)
def test_check_names_a_cell_whose_course_marks_are_damaged(tmp_path, damage):
    """Red team, 2026-11-27: a test cell's nbgrader metadata edited by hand ended ``check``
    in a traceback, where grading says NOT GRADED. It says so in a sentence now."""
    from gather_course import GatherCourseError

    nb = nbformat.read(RELEASED, 4)
    n, test = next(
        (n, c)
        for n, c in enumerate(nb.cells, start=1)
        if c.metadata.get("nbgrader", {}).get("grade")
    )
    damage(test.metadata["nbgrader"])
    path = tmp_path / "basics.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(GatherCourseError, match=rf"marks on cell {n} .*are damaged"):
        check_notebook(path)
    nb.cells[n - 1].metadata["nbgrader"] = "not a mapping"
    nbformat.write(nb, path)
    with pytest.raises(GatherCourseError, match=rf"marks on cell {n} "):
        check_notebook(path)
