"""How long one ``.check()`` of a correct answer takes, per question (CPU).

Run: ``python benchmarks/bench_check.py``. Reports, side by side, the first call in a
fresh process and the median of later calls. The first row's first call is the first check
of a fresh kernel (after ``import torch`` and ``import gather_course``); the course's goal for
it is under 0.3 s. (It was about 1.1 s while torch's dispatch modes imported dynamo on
first use; the op counter opts out of that, see ``OpCounter._should_skip_dynamo``.)
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("GATHER_COURSE_DEVICE", "cpu")

import torch
import torch.nn.functional as F

from gather_course import exercise, exercise_ids

REPEATS = 7


def solution(qid: str):
    namespace = {"torch": torch, "F": F}
    exec(exercise(qid).solution_code, namespace)  # noqa: S102 - the bank's own solution text
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
    print(f"slowest median: {worst * 1000:.1f} ms (goal: under 500 ms)")
    print(
        f"first check of a fresh kernel ({rows[0][0]}): {rows[0][1] * 1000:.0f} ms, against "
        f"{rows[0][2] * 1000:.1f} ms later: {rows[0][1] / rows[0][2]:.1f}x (goal: under 300 ms)"
    )


if __name__ == "__main__":
    main()
