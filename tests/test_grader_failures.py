"""The grader owns its failures: a worker that cannot start stops grading with one clear
error and blames no student; a worker that dies mid-class is replaced, and the submission it
had is judged again; check says the same in one line."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from gather_course import exercise
from gather_course.grading import _sandbox
from gather_course.grading._classjob import StudentJob, judge_student, self_test
from gather_course.grading._failures import GraderBroken
from gather_course.grading._notebook_check import check_notebook
from gather_course.grading._referee import Plan, Referee
from gather_course.grading._sandbox import PROCESS, SANDBOX, Isolation, Worker
from gather_course.grading._submission import Submission, graded_cells
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


def test_the_timing_input_is_made_before_the_self_test_waits_for_the_first_worker():
    # made after it, the 36 MB input (0.07 s) was one more step between the worker's start
    # and the first verdict; made before, it fills the time the worker takes to warm up
    from gather_course.grading import _classjob, _jobdata

    released = {"basics.ipynb": nbformat.read(ROOT / "exercises" / "basics" / "basics.ipynb", 4)}
    secret = 7_000_000 + os.getpid()  # no earlier test made this run's inputs
    seeds = {
        Plan.make(qid, secret).timing_seed
        for _gid, qid, _points in graded_cells(released["basics.ipynb"])
        if exercise(qid).timing and exercise(qid).vectorized
    }

    def held() -> set[int]:
        return {key[2] for key in _jobdata._TIMING_BYTES} & seeds

    assert seeds and not held()
    referee = Referee(Worker, call_limit=10)
    at_self_test = []
    judge = referee.judge

    def first_judge(*args, **kwargs):
        at_self_test.append(held())
        return judge(*args, **kwargs)

    referee.judge = first_judge
    try:
        _classjob.baselines(referee, released, secret)
    finally:
        referee.close()
    assert at_self_test[0] == seeds


# -- how a worker that never started ended: the cause the grader saw, through the real start --

SOLVED = ROOT / "solutions" / "basics" / "basics.ipynb"


@pytest.fixture(params=[SANDBOX, PROCESS])
def level(request, monkeypatch) -> str:
    """Workers started in bubblewrap (where it runs here) and as plain processes."""
    if request.param == SANDBOX and _sandbox.isolation().level != SANDBOX:
        pytest.skip(f"no sandbox here: {_sandbox.isolation()}")
    monkeypatch.setattr(_sandbox, "isolation", lambda: Isolation(request.param, "the test's"))
    return request.param


def _worker_runs(monkeypatch, code: str) -> None:
    monkeypatch.setattr(_sandbox, "_worker_argv", lambda: [sys.executable, "-I", "-c", code])


def _check_refused() -> str:
    """What ``check`` on a solved notebook says when its worker cannot start."""
    with pytest.raises(GraderBroken) as caught:
        check_notebook(SOLVED)
    return str(caught.value)


def test_a_worker_sigkilled_as_it_starts_names_the_out_of_memory_killer(monkeypatch, level):
    """What the kernel's OOM killer does to a worker importing torch: SIGKILL, no word said.
    (Under bubblewrap the grader sees bwrap's exit status, 128 + 9.) The kernel's SIGKILL
    is played by its CPU limit's: the worker is its sandbox's pid 1, which ignores a
    SIGKILL sent from inside the sandbox (by itself, or by a job), not one the kernel sends."""
    cpu_limit = "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (1, 1))\nwhile 1: pass"
    _worker_runs(monkeypatch, cpu_limit)
    said = _check_refused()
    assert said.startswith(
        "the grading worker was killed as it started (ended: killed by signal SIGKILL), most "
        "often by the kernel's out-of-memory killer"
    ), said
    assert "dmesg" in said and "journalctl -k" in said and "fewer --jobs" in said
    done = cli("check", str(SOLVED))
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "out-of-memory killer" in lines[0]


def test_a_worker_out_of_memory_as_it_starts_says_so(monkeypatch, level):
    _worker_runs(monkeypatch, "bytearray(1 << 62)")  # more than any machine: MemoryError
    assert _check_refused() == (
        "the grading worker ran out of memory while starting (MemoryError); free memory or "
        "grade with fewer --jobs."
    )


def test_a_sandbox_that_refuses_the_worker_says_what_to_do(monkeypatch, tmp_path):
    """bubblewrap as Ubuntu 24.04's AppArmor leaves it (unprivileged user namespaces
    restricted): it says why on stderr and exits 1 before the worker runs."""
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(_sandbox, "isolation", lambda: Isolation(SANDBOX, "probed before"))
    said = _check_refused()
    assert said.startswith(
        "the sandbox refused to start the grading worker (bwrap: setting up uid map: "
        "Permission denied)."
    ), said
    assert "apparmor_restrict_unprivileged_userns=0" in said
    assert "GATHER_COURSE_NO_SANDBOX=1" in said


# -- a worker that dies during a submission's job: rerun on a fresh one, blamed only twice ----


def _tree(root: int) -> list[str]:
    """The command names of ``root`` and every process below it, from /proc."""
    parent: dict[int, int] = {}
    name: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # ended meanwhile
        head, _sep, tail = stat.rpartition(")")
        pid = int(entry.name)
        name[pid], parent[pid] = head.partition("(")[2], int(tail.split()[1])
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(name.get(pid, "?"))
        todo += [child for child, up in parent.items() if up == pid]
    return found


class KillsMidJob:
    """A worker factory for the referee: real workers, the first ``deaths`` of which are
    SIGKILLed from a thread of the test once a job is running in them (the job's process
    exists beside the supervisor and the template), as the out-of-memory killer or an
    operator would: nothing a submission does or controls."""

    def __init__(self, deaths: int) -> None:
        self.deaths = deaths
        self.made: list[Worker] = []
        self.killed: list[Worker] = []

    def __call__(self) -> Worker:
        worker = Worker()
        self.made.append(worker)
        if len(self.made) <= self.deaths:
            threading.Thread(target=self._kill_when_busy, args=(worker,), daemon=True).start()
        return worker

    def _kill_when_busy(self, worker: Worker) -> None:
        deadline = time.monotonic() + 120
        while worker.alive and time.monotonic() < deadline:
            pythons = [n for n in _tree(worker._proc.pid) if n != "bwrap"]
            if worker._ready and len(pythons) >= 3:  # supervisor, template, and a job
                os.killpg(worker._proc.pid, signal.SIGKILL)
                self.killed.append(worker)
                return
            time.sleep(0.002)


def _judge_solution(factory: KillsMidJob, tmp_path: Path) -> tuple[dict, list]:
    """The course's solution of basics, submitted by one student, judged as a class is."""
    released = nbformat.read(ROOT / "exercises" / "basics" / "basics.ipynb", 4)
    solution = e2e._submissions("basics", tmp_path)["solution"]
    job = StudentJob("s00000_solution", {"basics.ipynb": nbformat.writes(solution)})
    referee = Referee(factory, call_limit=10)
    try:
        return judge_student(referee, job, {"basics.ipynb": released}, 1), graded_cells(released)
    finally:
        referee.close()


def test_a_worker_killed_during_a_job_is_replaced_and_the_job_rerun_for_full_points(tmp_path):
    factory = KillsMidJob(deaths=1)
    result, cells = _judge_solution(factory, tmp_path)
    assert factory.killed == factory.made[:1]  # the first worker died, in the middle of a job
    assert factory.made[0]._proc.returncode == -signal.SIGKILL
    assert len(factory.made) == 2  # one fresh worker, which judged the rest too
    assert result["problem"] == "", result["problem"]
    assert sorted(result["verdicts"]) == sorted(gid for gid, _qid, _points in cells)
    earned = sum(p for gid, _qid, p in cells if result["verdicts"][gid]["passed"])
    assert earned == sum(p for *_, p in cells) > 0, result["verdicts"]  # full points


def test_a_job_whose_worker_dies_twice_is_not_graded_with_the_reason(tmp_path):
    factory = KillsMidJob(deaths=2)
    result, _cells = _judge_solution(factory, tmp_path)
    assert len(factory.made) == 2 and factory.killed == factory.made  # both died mid-job
    assert result["verdicts"] == {}
    assert result["problem"] == (
        "the submission stopped its grading worker, twice (ended: killed by signal SIGKILL)"
    )


# -- the referee's own judging breaks (not the answer, not the worker) ------------------------


def _judging_that_breaks(monkeypatch, times: int) -> list[int]:
    """``steps.judge`` in the referee raises SystemError its first ``times`` calls (as a
    library did once under load), then judges as usual; the calls are counted."""
    from gather_course.grading import _referee

    real, calls = _referee.steps.judge, []

    def breaks(q, evidence):
        calls.append(1)
        if len(calls) <= times:
            raise SystemError("error return without exception set")
        return real(q, evidence)

    monkeypatch.setattr(_referee.steps, "judge", breaks)
    return calls


def test_judging_that_breaks_once_is_tried_again_and_the_answer_graded(monkeypatch, tmp_path):
    calls = _judging_that_breaks(monkeypatch, times=1)
    result, cells = _judge_solution(Worker, tmp_path)
    assert result["problem"] == "", result["problem"]
    assert all(v["passed"] for v in result["verdicts"].values()), result["verdicts"]
    assert len(calls) == len(cells) + 1  # the first question judged twice, the others once


def test_judging_that_breaks_twice_is_not_graded_and_says_where(monkeypatch, tmp_path):
    _judging_that_breaks(monkeypatch, times=99)
    result, _cells = _judge_solution(Worker, tmp_path)
    problem = result["problem"]
    assert "could not judge what pick_per_row returned" in problem, problem
    assert "SystemError at _referee.py:" in problem, problem  # the package's last frame
    assert "the first try: SystemError" in problem and "grade it by hand" in problem, problem
