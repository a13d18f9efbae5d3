"""Where one submission's core-seconds go when ``gather-course grade`` grades a class.

    python benchmarks/bench_profile.py [--students 30] [--assignment basics] [--jobs N]

Builds a class of ``--students`` solved notebooks (as ``bench_autograde.py`` does), then
grades it with the real ``gather-course grade`` in a child process that times its parts:
every part is a function of the grader, wrapped here (never in the package) to add up its
CPU time, exclusive of the parts it calls, on whatever thread runs it. The workers' side
(the sandboxed supervisor, template and job processes) is read from ``/proc``: the CPU of a
worker's whole process tree before and after each job it runs.

Prints one Markdown table: each part's core-seconds for the whole class and per
submission, its share of the run's core-seconds (wall time x cores), and the idle rest.
docs/benchmarks.md records runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

_TICK = os.sysconf("SC_CLK_TCK")


def _started_ago() -> float:
    """Seconds since this process started (the kernel's start time, to a clock tick)."""
    with open("/proc/self/stat", "rb") as f:
        start = int(f.read().rsplit(b")", 1)[1].split()[19]) / _TICK
    with open("/proc/uptime") as f:
        return float(f.read().split()[0]) - start


_START = time.perf_counter() - _started_ago()  # events count from the command's start

# part: what it covers (the order of the table)
PARTS = {
    "start-up: imports and settings": "the instructor's process until the pool opens, its imports",
    "start-up: workers": "each worker's sandbox, Python, torch and template, until ready",
    "start-up: gradebook registration": "nbgrader's generate_assignment, the released notebooks",
    "start-up: self-test and baselines": "the course solution graded once, then timed",
    "reading the submissions": "each student's files read, hashed, the journal asked",
    "reading the notebook": "nbformat, the test-cell checksums, the cells to run",
    "making the cases": "each question's visible, hidden and scaling inputs",
    "job processes: questions": "the worker side of a question's job: fork, cells, calls",
    "job processes: timing": "the worker side of a timing job: fork, cells, timed calls",
    "decoding results": "each job's reply turned back into tensors",
    "loop spec and comparison": "the expected outputs by the loop spec, compared",
    "judging, the rest": "the steps around the cases: scan, constraints, growth, words",
    "timing: the large result": "the answer's result on the timing input, checked",
    "gradebook: nbgrader autograde": "the verdicts written through nbgrader, per student",
    "journal, logs, CSV": "the journal, the verdict log, the scores read back, the CSV",
    "instructor, elsewhere": "the instructor's process outside the parts above",
    "workers, between jobs": "the workers' processes outside the jobs above",
}


def _tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and every descendant, alive or reaped by its parent."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / _TICK  # utime stime cutime cstime
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return total


class _Recorder:
    """CPU seconds per part, exclusive of nested parts, on every thread."""

    def __init__(self) -> None:
        self.cpu = dict.fromkeys(PARTS, 0.0)
        self.calls = dict.fromkeys(PARTS, 0)
        self.local = threading.local()
        self.lock = threading.Lock()
        self.events: dict[str, float] = {}

    def _stack(self) -> list:
        if not hasattr(self.local, "stack"):
            self.local.stack = []
        return self.local.stack

    def wrap(self, owner: object, name: str, part: str, worker_side: bool = False) -> None:
        original = getattr(owner, name)
        is_static = isinstance(owner, type) and isinstance(owner.__dict__.get(name), staticmethod)
        is_class = isinstance(owner, type) and isinstance(owner.__dict__.get(name), classmethod)
        func = original.__func__ if is_class else original
        rec = self

        def timed(*args, **kwargs):
            stack = rec._stack()
            stack.append(0.0)
            start = time.thread_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent = time.thread_time() - start
                nested = stack.pop()
                with rec.lock:
                    rec.cpu[part] += spent - nested
                    rec.calls[part] += 1
                if stack:
                    stack[-1] += spent

        if is_class:
            setattr(owner, name, classmethod(timed))
        elif is_static:
            setattr(owner, name, staticmethod(timed))
        else:
            setattr(owner, name, timed)

    def add(self, part: str, seconds: float) -> None:
        with self.lock:
            self.cpu[part] += seconds
            self.calls[part] += 1


def _instrument(rec: _Recorder) -> None:
    """Wrap the grader's parts (in this child process only): the workers' now, the rest
    once the pool is open (as the command does, this process imports torch only then)."""
    from gather_course.grading import _pools, _sandbox

    phase = threading.local()  # inside the baselines: their jobs are start-up

    def opened(original):
        def open_pool(*args, **kwargs):
            rec.add("start-up: imports and settings", time.process_time())
            rec.events["pool opened"] = time.perf_counter() - _START
            before = time.thread_time()  # (the workers' start is in their own processes)
            pool = original(*args, **kwargs)
            _instrument_judging(rec, phase)  # imports what the command imports next
            rec.add("start-up: imports and settings", time.thread_time() - before)
            return pool

        return open_pool

    _pools.open_pool = opened(_pools.open_pool)
    run, ready = _sandbox.Worker.run, _sandbox.Worker._wait_ready

    def wait_ready(self):
        was = self._ready
        ready(self)
        if not was:
            rec.add("start-up: workers", _tree_cpu(self._proc.pid))
            self._profiled = _tree_cpu(self._proc.pid)
            rec.events.setdefault("first worker ready", time.perf_counter() - _START)

    def job(self, header, payload=b"", later=None):
        self._wait_ready()
        before = _tree_cpu(self._proc.pid)
        try:
            return run(self, header, payload, later)
        finally:
            spent = _tree_cpu(self._proc.pid) - before
            self._profiled += spent
            if getattr(phase, "startup", False):
                rec.add("start-up: self-test and baselines", spent)
            else:
                rec.add(f"job processes: {'timing' if later else 'questions'}", spent)

    close = _sandbox.Worker.close

    def closed(self):
        if getattr(self, "_ready", False) and self._proc.poll() is None:
            rec.add("workers, between jobs", _tree_cpu(self._proc.pid) - self._profiled)
        close(self)

    _sandbox.Worker.run, _sandbox.Worker._wait_ready = job, wait_ready
    _sandbox.Worker.close = closed


def _instrument_judging(rec: _Recorder, phase: threading.local) -> None:
    """Wrap the instructor's parts of judging and recording."""
    import nbformat

    from gather_course.grading import (
        _classjob,
        _grade,
        _jobdata,
        _journal,
        _record,
        _referee,
        _timing,
        _verdict_log,
    )
    from gather_course.questions import steps

    baselines = _classjob.baselines

    def in_startup(*args, **kwargs):
        phase.startup = True
        try:
            return baselines(*args, **kwargs)
        finally:
            phase.startup = False
            rec.events.setdefault("first submission", time.perf_counter() - _START)

    _classjob.baselines = in_startup
    from gather_course.grading import _pools

    if hasattr(_pools, "baselines"):  # (a revision that imported it with the module)
        _pools.baselines = in_startup
    rec.wrap(_classjob, "self_test", "start-up: self-test and baselines")
    rec.wrap(_referee.Referee, "baseline", "start-up: self-test and baselines")
    rec.wrap(_grade, "release_notebooks", "start-up: gradebook registration")
    for name in ("register", "check_database"):
        rec.wrap(_record, name, "start-up: gradebook registration")
    rec.wrap(_grade, "student_job", "reading the submissions")
    rec.wrap(_journal.Journal, "done", "reading the submissions")
    rec.wrap(nbformat, "reads", "reading the notebook")
    rec.wrap(_classjob, "_check_tests", "reading the notebook")
    rec.wrap(_classjob, "read_submission", "reading the notebook")
    rec.wrap(_referee.Plan, "make", "making the cases")
    rec.wrap(_referee._FromJob, "__init__", "making the cases")
    rec.wrap(_referee, "_load", "decoding results")
    rec.wrap(_referee, "_outcome", "decoding results")
    rec.wrap(_timing, "_outcome", "decoding results")
    rec.wrap(steps, "judge_case", "loop spec and comparison")
    rec.wrap(_referee.Referee, "judge", "judging, the rest")
    rec.wrap(_timing, "_large_answer", "timing: the large result")
    rec.wrap(_record.Recorder, "_record", "gradebook: nbgrader autograde")
    add = _record.Recorder.add

    def first_verdict(self, result):
        rec.events.setdefault("first verdict", time.perf_counter() - _START)
        return add(self, result)

    _record.Recorder.add = first_verdict
    rec.wrap(_record, "scores", "journal, logs, CSV")
    finish = _record.Recorder.finish

    def finished(*args, **kwargs):
        rec.events["last verdict"] = time.perf_counter() - _START
        return finish(*args, **kwargs)

    _record.Recorder.finish = finished
    rec.wrap(_grade, "_write_csv", "journal, logs, CSV")
    rec.wrap(_journal.Journal, "add", "journal, logs, CSV")
    rec.wrap(_journal.Journal, "end", "journal, logs, CSV")
    rec.wrap(_verdict_log.VerdictLog, "add", "journal, logs, CSV")
    del _jobdata


def _inner(root: str, assignment: str, jobs: int, out: str) -> None:
    from gather_course.cli import _without_the_slow_iri_checker

    _without_the_slow_iri_checker()  # as the command does, before nbformat is imported here
    rec = _Recorder()
    _instrument(rec)
    from gather_course.cli import main

    code = main(["grade", assignment, "--course", root, "--jobs", str(jobs)])
    rec.events["end"] = time.perf_counter() - _START
    measured = sum(v for k, v in rec.cpu.items() if not k.startswith(("job", "workers")))
    measured -= rec.cpu["start-up: workers"] + rec.cpu["start-up: self-test and baselines"]
    rec.cpu["instructor, elsewhere"] = time.process_time() - measured
    Path(out).write_text(json.dumps({"code": code, "cpu": rec.cpu, "events": rec.events}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--assignment", default="basics")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--mix", action="store_true", help="bench_scale.py's class (basics): wrong answers too"
    )
    parser.add_argument("--inner", nargs=2, metavar=("ROOT", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        _inner(args.inner[0], args.assignment, args.jobs, args.inner[1])
        return
    import bench_autograde

    from gather_course._measure import machine

    with tempfile.TemporaryDirectory(prefix="bench-profile-") as tmp:
        if args.mix:
            import bench_scale

            root = bench_scale._class(Path(tmp), args.students)
        else:
            root = bench_autograde._course(Path(tmp) / "course", args.assignment, args.students)
        out = Path(tmp) / "profile.json"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--assignment", args.assignment, "--jobs", str(args.jobs)]
            + ["--inner", str(root), str(out)],
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
        if done.returncode != 0 or not out.is_file():
            raise SystemExit(f"grading failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
        data = json.loads(out.read_text())
        if args.mix:
            graded, wrong = bench_scale._check(root)
            full = graded == args.students and not wrong
        else:
            full = bench_autograde._full_marks(root, args.assignment, args.students)
    _table(data, wall, args, machine("cpu"), full)


def _table(data: dict, wall: float, args: argparse.Namespace, where: str, full: bool) -> None:
    cores, n = os.cpu_count() or 1, args.students
    budget = wall * cores
    cpu = data["cpu"]
    ev = data["events"]
    print(
        f"machine: {where}; {n} {'mixed' if args.mix else 'solved'} submissions of {args.assignment}, --jobs {args.jobs}; "
        f"whole command {wall:.1f} s wall on {cores} cores = {budget:.1f} core-s; "
        f"every score {'as deserved' if args.mix else 'full'}: {full}"
    )
    print(
        f"events (s from the start): pool opened {ev.get('pool opened', 0):.2f}, "
        f"first worker ready {ev.get('first worker ready', 0):.2f}, "
        f"first submission {ev.get('first submission', 0):.2f}, "
        f"first verdict {ev.get('first verdict', 0):.2f}, last verdict "
        f"{ev.get('last verdict', 0):.1f}, end {ev.get('end', 0):.1f}\n"
    )
    print("| part | what it covers | core-s, class | core-s per submission | share |")
    print("|---|---|---:|---:|---:|")
    for part, what in PARTS.items():
        s = cpu.get(part, 0.0)
        print(f"| {part} | {what} | {s:.2f} | {s / n:.3f} | {100 * s / budget:.0f} % |")
    idle = budget - sum(cpu.values())
    print(f"| idle | cores waiting | {idle:.2f} | {idle / n:.3f} | {100 * idle / budget:.0f} % |")
    print(f"| **all** | wall x cores | {budget:.2f} | {budget / n:.3f} | 100 % |")
    judging = sum(v for k, v in cpu.items() if not k.startswith("start-up"))
    print(
        f"\nCPU a submission, start-up and idle left out (robust on a shared machine): "
        f"{judging / n:.3f} core-s (workers {_workers(cpu) / n:.3f}, this process "
        f"{(judging - _workers(cpu)) / n:.3f})"
    )


def _workers(cpu: dict) -> float:
    """The workers' CPU outside start-up: their jobs and what they do between them."""
    return sum(v for k, v in cpu.items() if k.startswith(("job processes", "workers")))


if __name__ == "__main__":
    main()
