"""Grading a class on Dask, started for real: a LocalCluster, and a scheduler and workers
as separate processes, with a worker killed and then the scheduler killed mid-run."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gather_course.grading._sandbox import isolation
from tests import test_grading_e2e as e2e
from tests.helpers import free_port

pytest.importorskip("distributed")
ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.classroom  # README: python -m pytest -m classroom tests
KINDS = ("solution", "wrong_odd", "wrong_even", "untouched", "corrupt")
DASK = Path(sys.executable).parent / "dask"


def _course(base: Path, n: int) -> Path:
    """A course copy with ``n`` submissions of basics, the kinds above in turn."""
    base.mkdir(parents=True, exist_ok=True)
    return e2e.class_of(base, [KINDS[i % len(KINDS)] for i in range(n)])


def _grade(root: Path, scheduler: str, **popen) -> subprocess.Popen:
    args = [sys.executable, "-m", "gather_course.cli", "grade", "basics", "--course", str(root)]
    args += ["--scheduler", scheduler, "--timeout", str(e2e.CALL_TIMEOUT)]
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen
    )


def _check_scores(root: Path) -> dict[str, dict[str, str]]:
    """Every student graded as their kind deserves (or NOT GRADED for the corrupt file)."""
    with open(root / "grades-basics.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    expected = e2e._expected("basics")
    total = sum(p for *_, p in expected)
    odd = sum(p for i, (*_, p) in enumerate(expected) if i % 2 == 1)
    for student, row in rows.items():
        kind = student.split("_", 1)[1]
        if kind == "corrupt":
            assert row["status"] == "NOT GRADED" and "not a readable notebook" in row["problem"]
            continue
        want = {"solution": total, "untouched": 0, "wrong_odd": odd, "wrong_even": total - odd}
        assert row["status"] == "graded" and float(row["score"]) == want[kind], row
    return rows


def _results(root: Path) -> list[dict]:
    path = root / ".grading" / "basics.jsonl"
    lines = path.read_text().splitlines() if path.is_file() else []
    return [json.loads(line) for line in lines if line.strip()]


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(DASK), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _cluster(port: int, workers: int) -> list[subprocess.Popen]:
    address = f"tcp://127.0.0.1:{port}"
    procs = [_start("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")]
    procs += [  # procs[i] is the worker named wi
        _start("worker", address, "--name", f"w{i}", "--nthreads", "1", "--no-nanny",
               "--no-dashboard")
        for i in range(1, workers + 1)
    ]  # fmt: skip
    return procs


def _wait_for(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {seconds} s for {what}")
        time.sleep(0.05)


@pytest.fixture
def sandboxed():
    if isolation().level != "sandbox" and not e2e.REQUIRE_SANDBOX:
        pytest.skip(f"grading on Dask is tested in the sandbox: {isolation()}")


def test_a_local_cluster_grades_the_class_like_the_embedded_pool(tmp_path, sandboxed):
    root = _course(tmp_path, 5)
    done = _grade(root, "local:2")
    out, err = done.communicate(timeout=300)
    assert done.returncode == 0, out + err
    assert "isolation on 2 Dask workers (local:2): sandbox" in out
    assert "basics: 4 of 5 submissions graded" in out
    assert "5/5" in err and "submission" in err  # tqdm's bar on stderr: done / total
    _check_scores(root)
    entries = _results(root)
    assert "start" in entries[0] and "end" in entries[-1]
    assert sorted(e["result"]["student"] for e in entries if "result" in e) == sorted(
        p.name for p in (root / "submitted").iterdir()
    )


def _killed_mid_job(address: str, worker: subprocess.Popen, journaled) -> set[str]:
    """Kill ``worker`` (named w1) while it grades a submission: the student whose it was.

    A second client beside gather-course's asks w1 which task it is running (the submission
    is in the task's arguments); the worker dies right after, before that student is in the
    journal. Its other tasks, not started, are left to the rest of the run."""
    from distributed import Client

    def running(dask_worker) -> list[str]:  # runs in w1 (pickled by value)
        return [
            arg.student
            for task in dask_worker.state.executing
            for arg in getattr(task.run_spec, "args", ())
            if isinstance(getattr(arg, "student", None), str)
        ]

    with Client(address, timeout=30) as watcher:
        (w1,) = [a for a, w in watcher.scheduler_info()["workers"].items() if w["name"] == "w1"]
        deadline = time.monotonic() + 60
        while not (lost := set(watcher.run(running, workers=[w1])[w1])):
            assert time.monotonic() < deadline, "w1 never ran a job"  # (between two jobs)
            time.sleep(0.02)
        worker.send_signal(signal.SIGKILL)  # a worker dies mid-class, in the middle of a job
        before = journaled()
    assert not lost & before, f"{lost} had ended before w1 died: no job was lost"
    return lost


def _referees_of(address: str, name: str, mark: str) -> list[str]:
    """The referees that Dask worker ``name`` holds now, each marked with ``mark`` the first
    time it is seen: a referee seen before answers with its earlier mark."""
    from distributed import Client

    from gather_course.grading._dask import PLUGIN

    def referees(mark, dask_worker) -> list[str]:  # runs in the worker (pickled by value)
        for referee in dask_worker.plugins[PLUGIN].referees:
            referee.__dict__.setdefault("_test_mark", mark)
        return [referee._test_mark for referee in dask_worker.plugins[PLUGIN].referees]

    with Client(address, timeout=30) as watcher:
        (w,) = [a for a, w in watcher.scheduler_info()["workers"].items() if w["name"] == name]
        return watcher.run(referees, mark, workers=[w])[w]


def test_a_killed_worker_then_a_killed_scheduler_lose_nothing(tmp_path, sandboxed):
    """A worker killed mid-class: the job it had is judged again elsewhere, in the same run.
    The scheduler killed: the run stops with a clear error, and a rerun on a new cluster
    grades only the rest."""
    port = free_port()
    procs = _cluster(port, 2)
    try:
        # 1. w1 dies in the middle of a job: the run still grades everyone, each once
        whole = _course(tmp_path / "whole", 10)
        run = _grade(whole, f"tcp://127.0.0.1:{port}")
        results = lambda: [e for e in _results(whole) if "result" in e]
        journaled = lambda: {e["result"]["student"] for e in results()}
        _wait_for(lambda: len(results()) >= 2, 180, "the first results")
        lost = _killed_mid_job(f"tcp://127.0.0.1:{port}", procs[1], journaled)
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, out + err
        assert lost <= journaled()  # the run itself took the lost job up again
        assert len(_check_scores(whole)) == 10
        judged = [e["result"]["student"] for e in _results(whole) if "result" in e]
        assert sorted(judged) == sorted(p.name for p in (whole / "submitted").iterdir())
        assert _referees_of(f"tcp://127.0.0.1:{port}", "w2", "first class") == ["first class"]

        # 2. the scheduler dies mid-class (w2 alone is left): a clear stop, nothing written
        n = 6
        root = _course(tmp_path / "cut", n)
        run = _grade(root, f"tcp://127.0.0.1:{port}")
        results = lambda: [e for e in _results(root) if "result" in e]
        _wait_for(lambda: len(results()) >= 2, 180, "the first results")
        # the next class on the same cluster uses the referees w2 started for the first one
        assert _referees_of(f"tcp://127.0.0.1:{port}", "w2", "second") == ["first class"]
        os.killpg(procs[0].pid, signal.SIGKILL)
        out, err = run.communicate(timeout=120)
        assert run.returncode == 2, out + err
        assert "the Dask scheduler at tcp://127.0.0.1" in err and "went away after" in err
        assert not (root / "grades-basics.csv").exists()
        first = len(results())
        assert 2 <= first < n
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
    port = free_port()
    procs = _cluster(port, 1)
    try:
        rerun = _grade(root, f"tcp://127.0.0.1:{port}")
        out, err = rerun.communicate(timeout=300)
        assert rerun.returncode == 0, out + err
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
    rows = _check_scores(root)
    assert len(rows) == n
    entries = _results(root)
    starts = [i for i, e in enumerate(entries) if "start" in e]
    assert len(starts) == 1  # the rerun took the unfinished run up: same secret, same start
    judged = [e["result"]["student"] for e in entries if "result" in e]
    assert sorted(judged) == sorted(rows)  # each judged once: the rerun did only the rest
    log = [json.loads(line) for line in (root / "grading-log.jsonl").read_text().splitlines()]
    assert [entry["resumed"] for entry in log] == [False, True]
    assert log[0]["secret_seed"] == log[1]["secret_seed"]
