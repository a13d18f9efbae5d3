"""Where the "not vectorized" limit can sit: honest answers against the fastest Python loop.

    python benchmarks/bench_timing.py [--questions q1,q2] [--repeats 3]

For every question with a timing input (``exercise(qid).timing``) it measures, through a real
:class:`~gather_course.grading._referee.Referee` and its sandboxed worker, the CPU seconds the kernel
counts for ``TIMING_REPEAT`` calls on that input, exactly as grading does, of:

- the course's solution (the reference, ``ref``);
- every other correct answer in ``tests/answers.py`` ``RIGHT[qid]`` (one-hot, advanced
  indexing, take_along_dim, ...): the slowest is what a ratio limit must let through;
- the fastest Python loop we know (``tests/answers.py`` ``LOOPS``): what a learner who dodges the question
  would write to pass the values checks: ``.tolist()`` once, comprehensions and list slices,
  one ``torch.tensor`` at the end, and every part of the answer that is *not* the gather done
  with whole-tensor ops (log_softmax, topk, argsort). Its op count does not grow with the
  input, so only the CPU time can catch it: the limit must stop it.

Each is the median of ``--repeats`` measurements. A ratio limit ``f`` (verdict "not
vectorized" when ``got > f * ref``) with a margin of 3 on both sides needs
``f >= 3 * slowest honest`` and ``fastest loop >= 3 * f``: the table shows the gap
(fastest loop / slowest honest, 9 or more needed) and the limit in the middle of it
(geometric mean). Every loop is checked first with ``exercise(qid).check`` in this process:
it must pass, or fail only as "not vectorized".
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import itertools
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from gather_course import Tier, exercise, exercise_ids  # noqa: E402  (after the path is set)
from gather_course.benchmark import machine  # noqa: E402
from gather_course.grading._jobdata import TIMING_REPEAT  # noqa: E402
from gather_course.grading._referee import Referee  # noqa: E402
from gather_course.grading._sandbox import Worker, isolation  # noqa: E402
from gather_course.questions._question import Question  # noqa: E402
from gather_course.questions.verdicts import sizes_text  # noqa: E402
from tests.answers import LOOPS, RIGHT  # noqa: E402

IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"
ANSWERS = (ROOT / "tests" / "answers.py").read_text(encoding="utf-8")
MARGIN = 3.0  # the limit must be this far from both sides

LOOP_IMPORTS = IMPORTS + "import math\n"


def loop_cells(qid: str) -> list[str]:
    return [LOOP_IMPORTS, LOOPS[qid]]


def honest_cells(qid: str) -> dict[str, list[str]]:
    """Every honest answer: the bank's own solution first (the reference), then RIGHT[qid]."""
    q = exercise(qid)
    found = {"solution (ref)": [IMPORTS, q.solution_code]}
    for fn in RIGHT.get(qid, []):
        found[fn.__name__] = [ANSWERS, f"{q.name} = {fn.__name__}\n"]
    return found


def check_loop(qid: str) -> str:
    """The loop, run here with ``check``: '' when right (or only not vectorized), else why."""
    namespace: dict = {}
    for cell in loop_cells(qid):
        exec(cell, namespace)  # noqa: S102 - this script's own loop text
    result = exercise(qid).check(namespace[exercise(qid).name])
    return "" if result.passed or result.tier == Tier.NOT_VECTORIZED else str(result)


def measure(referee: Referee, cells: list[str], q: Question) -> float:
    """CPU seconds (kernel-measured) of TIMING_REPEAT calls on ``q.timing``, as grading does.

    The one place that knows the referee's timing API: swap it here when ``measure`` changes.
    A run that did not measure (it failed, or was stopped) is ``inf``.
    """
    seconds = referee.measure(cells, q, seed=next(_SEEDS)).seconds
    return float("inf") if seconds is None else seconds


_SEEDS = itertools.count(11)  # a new timing input each time, as every grading run draws one


def median_of(referee: Referee, cells: list[str], q: Question, repeats: int) -> float:
    return statistics.median(measure(referee, cells, q) for _ in range(repeats))


def bench(qid: str, referee: Referee, repeats: int, timing: dict | None = None) -> dict:
    q = exercise(qid)
    if timing is not None:  # try other sizes without editing the question bank
        q = dataclasses.replace(q, timing=timing)
    times = {name: median_of(referee, c, q, repeats) for name, c in honest_cells(qid).items()}
    ref = times["solution (ref)"]
    slow_name = max(times, key=times.get)
    loop = median_of(referee, loop_cells(qid), q, repeats)
    honest, fast = times[slow_name] / ref, loop / ref
    return {
        "qid": qid,
        "sizes": sizes_text(q.timing),
        "ref": ref,
        "times": times,
        "slow_name": slow_name,
        "honest": honest,
        "loop_s": loop,
        "loop": fast,
        "gap": fast / honest,
        "limit": math.sqrt(honest * fast),  # the middle of the gap, on a log scale
        "factor": q.timing_factor,  # the limit grading uses
        "ok": fast / honest >= MARGIN**2 and ref >= 0.05,
    }


def _table(rows: list[dict]) -> str:
    lines = [
        f"| question | timing sizes | ref s ({TIMING_REPEAT} calls) | slowest honest | "
        "fastest loop | gap | middle | limit used | margin honest / loop |",
        "|---|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['qid']} | {r['sizes']} | {r['ref']:.3f} | {r['slow_name']} "
            f"{r['honest']:.2f}x | {r['loop']:.1f}x ({r['loop_s']:.2f} s) | {r['gap']:.1f} | "
            f"{r['limit']:.1f}x | {r['factor']:g}x | {r['factor'] / r['honest']:.1f}x / "
            f"{r['loop'] / r['factor']:.1f}x |"
        )
    return "\n".join(lines)


def _global(rows: list[dict]) -> str:
    low = max(MARGIN * r["honest"] for r in rows)
    high = min(r["loop"] / MARGIN for r in rows)
    if low <= high:
        return (
            f"One global factor fits every question with a {MARGIN:g}x margin: any f in "
            f"[{low:.1f}, {high:.1f}] (middle {math.sqrt(low * high):.1f})."
        )
    return (
        f"No single factor has a {MARGIN:g}x margin everywhere: it would need "
        f"f >= {low:.1f} (3 x slowest honest) and f <= {high:.1f} (fastest loop / 3)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", default="", help="comma-separated ids (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--timing",
        action="append",
        default=[],
        metavar="QID=DICT",
        help='try other timing sizes, e.g. \'basics.pick_per_row={"R": 1000, "C": 2, "K": 8}\'',
    )
    args = parser.parse_args()
    overrides = {}
    for item in args.timing:
        qid, _, sizes = item.partition("=")
        overrides[qid] = ast.literal_eval(sizes)
    timed = [qid for qid in exercise_ids() if exercise(qid).timing is not None]
    chosen = [s for s in args.questions.split(",") if s] or list(overrides) or timed
    unknown = sorted(set(chosen) - set(timed))
    if unknown:
        raise SystemExit(f"no timing input: {', '.join(unknown)}")
    missing = [qid for qid in chosen if qid not in LOOPS]
    if missing:
        raise SystemExit(f"no loop written for: {', '.join(missing)}")
    for qid in chosen:
        wrong = check_loop(qid)
        if wrong:
            raise SystemExit(f"the loop for {qid} is not right:\n{wrong}")
    print(machine("cpu"))
    print(f"grading isolation: {isolation()}; median of {args.repeats} runs each\n")
    referee = Referee(Worker)
    rows = []
    try:
        for qid in chosen:
            rows.append(bench(qid, referee, args.repeats, overrides.get(qid)))
            r = rows[-1]
            others = ", ".join(f"{k} {v:.3f}" for k, v in r["times"].items())
            print(f"{qid}: {others}; loop {r['loop_s']:.3f} s", file=sys.stderr, flush=True)
    finally:
        referee.close()
    print(_table(rows))
    print()
    print(_global(rows))


if __name__ == "__main__":
    main()
