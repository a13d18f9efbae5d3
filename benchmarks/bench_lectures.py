"""How long each lecture takes to run end to end, against a notebook that only imports torch.

Run: ``python benchmarks/bench_lectures.py [ROUNDS] [NOTEBOOK ...]`` (default: 5 rounds, every
English lecture). Each notebook runs under ``nbclient`` with ``gather-course execute``'s
environment, kernel start and shutdown included, in interleaved rounds (bare, then each
lecture, then again), so that a change in the machine's load touches every row alike. Reports
medians of the wall time and of the kernel's CPU time (user + system of this process's
children), each as a ratio to the bare notebook. The course's goal: every lecture within
1.5× of the bare notebook. Compare wall times only from a quiet machine (see ``uptime``).
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from gather_course.course._execute import RUN_ENV

ROOT = Path(__file__).resolve().parents[1]


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(path: Path) -> tuple[float, float]:
    """(wall, kernel CPU) seconds of one end-to-end run of ``path``."""
    nb = nbformat.read(path, as_version=4)
    cpu, wall = _child_cpu(), time.perf_counter()
    client = NotebookClient(nb, timeout=600, kernel_name="python3")
    client.execute(cwd=str(path.parent))
    return time.perf_counter() - wall, _child_cpu() - cpu


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    lectures = [Path(p).resolve() for p in sys.argv[2:]] or sorted(
        (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")
    )
    os.environ.update(RUN_ENV)
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.ipynb"
        code = "import torch\n\ntorch.manual_seed(0)"
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), bare)
        paths = [bare, *lectures]
        times: dict[Path, list[tuple[float, float]]] = {p: [] for p in paths}
        for _ in range(rounds):
            for path in paths:
                times[path].append(run(path))
    wall0 = statistics.median(w for w, _ in times[bare])
    cpu0 = statistics.median(c for _, c in times[bare])
    print(f"{rounds} interleaved rounds, medians; load average now {os.getloadavg()[0]:.2f}")
    print("| notebook | wall | × bare | kernel CPU | × bare |\n|---|---:|---:|---:|---:|")
    for path in paths:
        wall = statistics.median(w for w, _ in times[path])
        cpu = statistics.median(c for _, c in times[path])
        name = "bare (`import torch`)" if path == bare else path.stem
        print(f"| {name} | {wall:.2f} s | {wall / wall0:.2f} | {cpu:.2f} s | {cpu / cpu0:.2f} |")


if __name__ == "__main__":
    main()
