"""What grading one submission costs: stock ``nbgrader autograde`` against ``gather-course grade``.

    python benchmarks/bench_autograde.py [--students 12] [--assignment basics] [--jobs N]
        [--before PYTHON] [--repeats R]

Both grade the same class (``--students`` copies of the assignment's solution) in two
temporary copies of the course, in this one run, on this machine:

- stock: ``nbgrader autograde ASSIGNMENT`` (one kernel per notebook, one after another);
- referee: ``gather-course grade ASSIGNMENT --jobs N`` (warm sandboxed workers, hidden cases,
  the CPU-time measurement, then nbgrader's gradebook without execution).

Each prints wall-clock seconds per submission (the whole command divided by the class size,
start-up included) and the ratio referee / stock. Both must give every student full marks.

``--before PYTHON`` also times ``gather-course grade`` of an earlier revision, in the same
run: PYTHON is the interpreter of a venv where that revision is installed, for example
``git worktree add /tmp/before REV && python -m venv /tmp/before/.venv &&
/tmp/before/.venv/bin/pip install -e /tmp/before`` (with CI's constraints for the CPU torch).
Both graders then run ``--repeats`` times, alternately, and the medians are compared.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gather_course.benchmark import machine  # noqa: E402  (after the path is set)


def _course(tmp: Path, assignment: str, students: int) -> Path:
    root = tmp
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    source = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    for k in range(students):
        nb = nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4)
        for cell in nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in answers:
                cell.source = answers[gid]
        folder = root / "submitted" / f"s{k:03d}" / assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{assignment}.ipynb")
    return root


def _timed(args: list[str], cwd: Path, python: str = sys.executable) -> float:
    """Seconds of one command, with ``python``'s environment first on PATH."""
    bin_dir = os.path.dirname(python)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return seconds


def _full_marks(root: Path, assignment: str, students: int) -> bool:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        subs = [gb.find_submission(assignment, f"s{k:03d}") for k in range(students)]
        return all(s.score == s.max_score > 0 for s in subs)


def _grade(python: str, root: Path, assignment: str, jobs: int) -> tuple[float, bool]:
    """Seconds of one whole `gather-course grade` (by ``python``'s install), and full marks."""
    for stale in ("gradebook.db", f"grades-{assignment}.csv"):
        (root / stale).unlink(missing_ok=True)
    for folder in ("autograded", "feedback"):
        shutil.rmtree(root / folder, ignore_errors=True)
    args = [python, "-m", "gather_course.cli", "grade", assignment, "--jobs", str(jobs)]
    seconds = _timed(args, root, python)
    with open(root / f"grades-{assignment}.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    n = len(rows)
    return seconds, _full_marks(root, assignment, n) and all(r["status"] == "graded" for r in rows)


def _before_and_after(args: argparse.Namespace) -> None:
    """The earlier revision's grader and this one, alternately, on the same class."""
    import statistics

    times: dict[str, list[float]] = {"before": [], "after": []}
    ok = {"before": True, "after": True}
    pythons = {"before": args.before, "after": sys.executable}
    with tempfile.TemporaryDirectory() as tmp:
        roots = {k: _course(Path(tmp) / k, args.assignment, args.students) for k in pythons}
        for _ in range(args.repeats):
            for key, python in pythons.items():
                seconds, full = _grade(python, roots[key], args.assignment, args.jobs)
                times[key].append(seconds)
                ok[key] = ok[key] and full
    n = args.students
    print(
        f"machine: {machine('cpu')}; {n} submissions of {args.assignment}, --jobs {args.jobs}, "
        f"median of {args.repeats} runs each, alternating"
    )
    print("| grader | whole class (s), runs | median (s) | per submission (s) | all full marks |")
    print("|---|---|---|---|---|")
    for key in pythons:
        med = statistics.median(times[key])
        runs = ", ".join(f"{t:.1f}" for t in times[key])
        print(f"| {key} ({pythons[key]}) | {runs} | {med:.1f} | {med / n:.2f} | {ok[key]} |")
    ratio = statistics.median(times["after"]) / statistics.median(times["before"])
    print(f"\nafter / before: {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--assignment", default="basics")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--before", help="python of a venv with an earlier revision installed")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.before:
        args.before = os.path.abspath(args.before)  # the graders run in the course's copy
        _before_and_after(args)
        return
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        stock_root = _course(Path(a), args.assignment, args.students)
        _timed(["nbgrader", "generate_assignment", args.assignment, "--force"], stock_root)
        stock = _timed(["nbgrader", "autograde", args.assignment, "--force"], stock_root)
        stock_ok = _full_marks(stock_root, args.assignment, args.students)
        ours_root = _course(Path(b), args.assignment, args.students)
        ours = _timed(
            [
                sys.executable,
                "-m",
                "gather_course.cli",
                "grade",
                args.assignment,
                "--jobs",
                str(args.jobs),
            ],
            ours_root,
        )
        ours_ok = _full_marks(ours_root, args.assignment, args.students)
        with open(ours_root / f"grades-{args.assignment}.csv", newline="") as f:
            rows = list(csv.DictReader(f))
    n = args.students
    print(
        f"machine: {machine('cpu')}; {args.students} submissions of {args.assignment}, "
        f"--jobs {args.jobs}"
    )
    print("| grader | whole class (s) | per submission (s) | ratio to stock | all full marks |")
    print("|---|---|---|---|---|")
    print(f"| stock nbgrader autograde | {stock:.1f} | {stock / n:.2f} | 1.00 | {stock_ok} |")
    print(
        f"| gather-course grade | {ours:.1f} | {ours / n:.2f} | {ours / stock:.2f} | "
        f"{ours_ok and all(r['status'] == 'graded' for r in rows)} |"
    )


if __name__ == "__main__":
    main()
