"""Grading a large class: the embedded pool against Dask, every score checked.

    python benchmarks/bench_scale.py [--students 1000] [--jobs N] [--only embedded,local:1]
    python benchmarks/bench_scale.py --scaling [--students 500]

Builds a synthetic class of ``basics`` submissions in known proportions (solutions, the
typical wrong answers of tests/answers.py, untouched notebooks, corrupt files and
in-process cheats), grades it with ``gather-course grade`` in each configuration, checks
every student's score against what their kind deserves, and prints one Markdown table:

- ``embedded``: this machine's pool (``--jobs``, default: the cores);
- ``local:1``, ``local:2``: a Dask ``LocalCluster`` of 1 and 2 worker processes;
- ``processes``: ``dask scheduler`` and two ``dask worker`` processes, as a real cluster runs.

Start-up is the wall time of grading a class of two in the same configuration; the rate is
(students - 2) / (wall - start-up). ``--scaling`` grades with Dask ``LocalCluster`` clusters of
1, 2, 4 and 8 workers (``--only local:1,local:2,local:4,local:8``, CPU only: the sandbox
hides any GPU) and prints each doubling's gain in rate: on a machine of 16 cores or more,
every worker and the instructor's process have cores of their own. docs/benchmarks.md
records a run.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gather_course._measure import machine  # noqa: E402
from tests import test_grading_e2e as e2e  # noqa: E402

# kind: share of the class (the cheats are in-process attacks the referee must not believe)
MIX = {
    "solution": 0.60,
    "wrong_odd": 0.12,
    "wrong_even": 0.12,
    "untouched": 0.08,
    "corrupt": 0.04,
    "patches_checker": 0.04,
}
BIN = Path(sys.executable).parent


def _class(base: Path, students: int) -> Path:
    kinds = [k for k, share in MIX.items() for _ in range(round(share * students))]
    return e2e.class_of(base, (kinds + ["solution"] * students)[:students])


def _deserved() -> dict[str, float | None]:
    expected = e2e._expected("basics")
    total = sum(p for *_, p in expected)
    odd = sum(p for i, (*_, p) in enumerate(expected) if i % 2 == 1)
    first = expected[0][3]
    return {
        "solution": total,
        "wrong_odd": odd,
        "wrong_even": total - odd,
        "untouched": 0.0,
        "corrupt": None,  # NOT GRADED
        # its first answer is the cheat: 0 there, and it may cost more (it clears the bank)
        "patches_checker": ("at most", total - first),
    }


def _check(root: Path) -> tuple[int, list[str]]:
    deserved = _deserved()
    with open(root / "grades-basics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    wrong = []
    for row in rows:
        want = deserved[row["student"].split("_", 1)[1]]
        got = None if row["status"] == "NOT GRADED" else float(row["score"])
        if isinstance(want, tuple):
            ok = got is not None and got <= want[1]
        else:
            ok = got == want
        if not ok:
            wrong.append(f"{row['student']}: {got} (deserves {want})")
    return len(rows), wrong


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cluster(workers: int) -> tuple[str, list[subprocess.Popen]]:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    procs = [
        subprocess.Popen(
            [
                str(BIN / "dask"),
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-dashboard",
            ],
            **quiet,
        )
    ]
    procs += [
        subprocess.Popen(
            [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard"], **quiet
        )
        for _ in range(workers)
    ]
    time.sleep(3)
    return address, procs


def _grade(root: Path, scheduler: str | None, jobs: int) -> float:
    args = [sys.executable, "-m", "gather_course.cli", "grade", "basics", "--course", str(root)]
    args += ["--jobs", str(jobs)] + (["--scheduler", scheduler] if scheduler else [])
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"grading failed ({scheduler or 'embedded'}):\n{done.stderr[-3000:]}")
    return wall


def _run(config: str, students: int, jobs: int, base: Path) -> dict:
    procs: list[subprocess.Popen] = []
    scheduler = None if config == "embedded" else config
    try:
        if config == "processes":
            scheduler, procs = _cluster(2)
        walls = {}
        for n in (2, students):
            folder = base / f"{config}-{n}"
            folder.mkdir()
            root = _class(folder, n)
            walls[n] = _grade(root, scheduler, jobs)
            graded, wrong = _check(root)
            if graded != n or wrong:
                raise SystemExit(f"{config}: wrong scores: {wrong[:10]} ({graded} of {n} rows)")
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    start = walls[2]
    rate = (students - 2) / max(walls[students] - start, 1e-9)
    return {"config": config, "wall": walls[students], "start": start, "rate": rate}


SCALING = ("local:1", "local:2", "local:4", "local:8")


def _doublings(rates: dict[str, float]) -> None:
    """Each doubling of Dask workers measured here: the rate's gain (2.00: perfect)."""
    pairs = [(a, b) for a, b in itertools.pairwise(SCALING) if a in rates and b in rates]
    if pairs:
        print(f"\nDask scaling on {os.cpu_count()} cores (rate ratio per doubling of workers):")
    for a, b in pairs:
        print(f"- {b} / {a}: {rates[b] / rates[a]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", default="embedded,local:1,local:2,processes")
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="Dask scaling: --only " + ",".join(SCALING) + ", and each doubling's gain",
    )
    args = parser.parse_args()
    configs = list(SCALING) if args.scaling else args.only.split(",")
    print(f"machine: {machine('cpu')}; {args.students} submissions of basics ({MIX})")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        for config in configs:
            rows.append(_run(config, args.students, args.jobs, Path(tmp)))
            print(f"  {config}: {rows[-1]['wall']:.1f} s", file=sys.stderr, flush=True)
    cores = os.cpu_count() or 1
    print(
        "\n| configuration | whole class (s) | start-up (s) | submissions/s "
        "| s per submission | core-s per submission |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['config']} | {r['wall']:.1f} | {r['start']:.1f} | {r['rate']:.2f} | "
            f"{1 / r['rate']:.2f} | {cores / r['rate']:.2f} |"
        )
    _doublings({r["config"]: r["rate"] for r in rows})
    best = max(rows, key=lambda r: r["rate"])
    per_machine = best["rate"]
    print(
        "\n30,000 submissions at the best rate here "
        f"({best['config']}, {per_machine:.2f}/s on {os.cpu_count()} cores):"
    )
    for machines in (1, 4, 16):
        hours = 30000 / (per_machine * machines) / 3600
        print(f"- {machines} such machine(s): {hours:.1f} h (if the rate scales with machines)")


if __name__ == "__main__":
    main()
