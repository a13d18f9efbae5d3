"""How long one ``.check()`` of a correct answer takes, per question (CPU).

Run: ``python benchmarks/bench_check.py``. Reports, side by side, the first call in a
fresh process and the median of later calls. The very first check of a session pays
torch's one-time set-up of dispatch modes (about a second), once per kernel.
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("GATHER_COURSE_DEVICE", "cpu")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gather_course import exercise, exercise_ids  # noqa: E402

REPEATS = 7


def solution(qid: str):
    namespace = {"torch": torch, "F": F}
    exec(exercise(qid).solution_code, namespace)
    return namespace[exercise(qid).name]


def main() -> None:
    rows = []
    for qid in exercise_ids():
        q, fn = exercise(qid), solution(qid)
        t0 = time.perf_counter()
        q.check(fn)
        first = time.perf_counter() - t0
        runs = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            result = q.check(fn)
            runs.append(time.perf_counter() - t0)
        assert result.passed, str(result)
        rows.append((qid, first, statistics.median(runs)))
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, median of {REPEATS} checks")
    print(f"{'question':28s} {'first call':>11s} {'median':>9s}")
    for qid, first, med in rows:
        print(f"{qid:28s} {first * 1000:9.1f}ms {med * 1000:7.1f}ms")
    worst = max(r[2] for r in rows)
    print(f"slowest median: {worst * 1000:.1f} ms (goal: under 500 ms); the first call of the "
          f"first question includes torch's one-time set-up: {rows[0][1] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
