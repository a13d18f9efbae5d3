"""The grader owns its failures: a worker that cannot start stops grading with one clear
error and blames no student; a worker that dies mid-class is replaced, and the submission it
had is judged again; check says the same in one line."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from gather_course import exercise
from gather_course.grading import _sandbox
from gather_course.grading._classjob import self_test
from gather_course.grading._notebook_check import check_notebook
from gather_course.grading._referee import Plan, Referee
from gather_course.grading._sandbox import GraderBroken, Worker
from gather_course.grading._submission import Submission
from tests import test_grading_e2e as e2e
from tests.helpers import ROOT, cli

IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"


@pytest.fixture
def cannot_import(monkeypatch):
    """Workers that fail as one does when the package it binds cannot be imported."""
    monkeypatch.setattr(
        _sandbox,
        "_worker_argv",
        lambda: [sys.executable, "-I", "-c", "import gather_course.grading._frames"],
    )


def test_check_with_a_worker_that_cannot_start_is_one_clear_line(cannot_import):
    with pytest.raises(GraderBroken, match=r"cannot import what it needs.*No module named"):
        check_notebook(ROOT / "solutions" / "basics" / "basics.ipynb")
    done = cli("check", str(ROOT / "solutions" / "basics" / "basics.ipynb"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "pip install -e ." in lines[0], done.stderr
    assert "NOT GRADED" not in done.stdout + done.stderr


def test_grade_with_a_worker_that_cannot_start_stops_and_blames_no_one(cannot_import, tmp_path):
    root = e2e.class_of(tmp_path, ["solution", "wrong_odd"])
    done = cli("grade", "basics", "--course", str(root))
    assert done.returncode != 0, done.stdout
    assert "cannot import what it needs" in done.stderr and "Traceback" not in done.stderr
    assert "NOT GRADED" not in done.stdout
    assert not (root / "grades-basics.csv").exists()


def test_a_worker_killed_between_jobs_is_replaced_and_the_next_submission_is_judged():
    referee = Referee(Worker, call_limit=10)
    q = exercise("basics.pick_per_row")
    right = Submission([IMPORTS + q.solution_code])
    try:
        assert referee.judge(right, Plan.make(q.qid, 1)).passed  # a warm worker
        worker = referee.worker
        os.killpg(worker._proc.pid, signal.SIGKILL)  # dies: not the student's doing
        worker._proc.wait()
        assert referee._worker is worker  # the referee finds out on the next job
        verdict = referee.judge(right, Plan.make(q.qid, 1))
        assert verdict.passed, str(verdict)
    finally:
        referee.close()


def test_the_self_test_refuses_a_grader_that_fails_the_courses_own_solution(tmp_path):
    import nbformat

    released = {"basics.ipynb": nbformat.read(ROOT / "exercises" / "basics" / "basics.ipynb", 4)}
    good = Referee(Worker, call_limit=10)
    try:
        self_test(good, released)  # the course's solution passes: nothing raised
    finally:
        good.close()
    broken = Referee(Worker, call_limit=10)
    broken.judge = lambda *a, **k: exercise("basics.pick_per_row").check(lambda x, cols: x)
    try:
        with pytest.raises(GraderBroken, match="fails the course's own solution"):
            self_test(broken, released)
    finally:
        broken.close()
