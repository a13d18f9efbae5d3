"""What autograding one submitted notebook costs, as a ratio to running a bare torch notebook.

    python benchmarks/bench_autograde.py [--repeat 3]

In a temporary copy of the course, each assignment's solution is submitted by `--repeat`
students and autograded one at a time through nbgrader's API (as `gather-course grade`
does). The baseline is nbclient executing a notebook whose only cell is `import torch`.
Both are medians of wall-clock seconds measured in this one run, on this machine.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gather_course._course import assignments, nbgrader_api  # noqa: E402
from gather_course.benchmark import machine  # noqa: E402


def bare_notebook_seconds(repeat: int) -> list[float]:
    times = []
    for _ in range(repeat + 1):                                  # the first one warms up
        nb = new_notebook(cells=[new_code_cell("import torch")])
        start = time.perf_counter()
        NotebookClient(nb, kernel_name="python3", timeout=120).execute()
        times.append(time.perf_counter() - start)
    return times[1:]


def _solution_submission(student_nb: nbformat.NotebookNode, source_nb) -> nbformat.NotebookNode:
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source_nb.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in student_nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    return student_nb


def autograde_seconds(repeat: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as tmp:
        root = Path(tmp)
        for folder in ("solutions", "exercises"):
            shutil.copytree(ROOT / folder, root / folder)
        shutil.copy2(ROOT / "nbgrader_config.py", root)
        names = assignments(root)
        for name in names:
            source = nbformat.read(root / "solutions" / name / f"{name}.ipynb", 4)
            for k in range(repeat):
                student = nbformat.read(root / "exercises" / name / f"{name}.ipynb", 4)
                folder = root / "submitted" / f"s{k}" / name
                folder.mkdir(parents=True)
                nbformat.write(_solution_submission(student, source), folder / f"{name}.ipynb")
        with nbgrader_api(root) as api:
            for name in names:
                api.generate_assignment(name, force=True, create=True)   # fills the gradebook
                found[name] = []
                for k in range(repeat):
                    start = time.perf_counter()
                    result = api.autograde(name, f"s{k}", force=True, create=True)
                    found[name].append(time.perf_counter() - start)
                    if not result["success"]:
                        raise SystemExit(f"autograde failed for {name}: {result.get('error')}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bare = statistics.median(bare_notebook_seconds(args.repeat))
    graded = autograde_seconds(args.repeat)
    print(f"machine: {machine('cpu')}")
    print(f"bare notebook (import torch), median of {args.repeat}: {bare:.2f} s  (ratio 1.00)")
    print("| assignment | autograde one notebook (median s) | ratio to bare |")
    print("|---|---|---|")
    medians = []
    for name, times in graded.items():
        med = statistics.median(times)
        medians.append(med)
        print(f"| {name} | {med:.2f} | {med / bare:.2f} |")
    overall = statistics.median(medians)
    print(f"| all (median) | {overall:.2f} | {overall / bare:.2f} |")


if __name__ == "__main__":
    main()
