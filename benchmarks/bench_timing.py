"""Where the "not vectorized" limit can sit: honest answers against the fastest Python loop.

    python benchmarks/bench_timing.py [--questions q1,q2] [--repeats 3]

For every question with a timing input (``exercise(qid).timing``) it measures, through a real
:class:`~gather_course._referee.Referee` and its sandboxed worker, the CPU seconds the kernel
counts for ``TIMING_REPEAT`` calls on that input, exactly as grading does, of:

- the course's solution (the reference, ``ref``);
- every other correct answer in ``tests/answers.py`` ``RIGHT[qid]`` (one-hot, advanced
  indexing, take_along_dim, ...): the slowest is what a ratio limit must let through;
- the fastest Python loop written here (``LOOPS``): what a learner who dodges the question
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
import math
import statistics
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from gather_course import Tier, exercise, exercise_ids  # noqa: E402  (after the path is set)
from gather_course._referee import TIMING_REPEAT, Referee, _size_text  # noqa: E402
from gather_course._sandbox import Worker, isolation  # noqa: E402
from gather_course.benchmark import machine  # noqa: E402
from gather_course.questions._question import Question  # noqa: E402
from tests.answers import RIGHT  # noqa: E402

IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"
ANSWERS = (ROOT / "tests" / "answers.py").read_text(encoding="utf-8")
MARGIN = 3.0  # the limit must be this far from both sides

# The fastest loop per question: source text defining the question's function. Only the
# gather (the thing the question teaches) is done in Python; the rest is whole-tensor code.
LOOPS: dict[str, str] = {
    "basics.pick_per_row": """
def pick_per_row(x, cols):
    R, K = cols.shape
    out = []
    ext = out.extend
    for r, cs in zip(x.tolist(), cols.tolist()):
        ext(map(r.__getitem__, cs))
    return torch.tensor(out, dtype=x.dtype).view(R, K)
""",
    "nlp.label_scores": """
from operator import add

def label_scores(logits, labels):
    B, L, V = logits.shape
    f = logits.reshape(-1).tolist()
    picks = map(add, range(0, B * L * V, V), labels.reshape(-1).tolist())
    return torch.tensor(list(map(f.__getitem__, picks)), dtype=logits.dtype).view(B, L)
""",
    "nlp.token_log_probs": """
from operator import add

def token_log_probs(logits, input_ids):
    B, L, V = logits.shape
    f = F.log_softmax(logits, dim=-1).reshape(-1).tolist()
    picks = map(add, range(0, B * L * V, V), input_ids.reshape(-1).tolist())
    return torch.tensor(list(map(f.__getitem__, picks)), dtype=logits.dtype).view(B, L)
""",
    "nlp.causal_lm_log_probs": """
from operator import add

def causal_lm_log_probs(logits, input_ids):
    B, L, V = logits.shape
    n = B * (L - 1)
    f = F.log_softmax(logits[:, :-1], dim=-1).reshape(-1).tolist()
    picks = map(add, range(0, n * V, V), input_ids[:, 1:].reshape(-1).tolist())
    return torch.tensor(list(map(f.__getitem__, picks)), dtype=logits.dtype).view(B, L - 1)
""",
    "nlp.masked_nll": """
def masked_nll(logits, labels, ignore_index=-100):
    B, L, V = logits.shape
    f = F.log_softmax(logits, dim=-1).reshape(-1).tolist()
    picked = [f[k + t] for k, t in zip(range(0, B * L * V, V), labels.reshape(-1).tolist())
              if t != ignore_index]
    return torch.tensor(-sum(picked) / len(picked), dtype=logits.dtype)
""",
    "vision.gather_pixels": """
def gather_pixels(features, coords):
    B, C, H, W = features.shape
    P = coords.size(1)
    HW = H * W
    f = features.reshape(-1).tolist()
    out = []
    ext = out.extend
    for b, pts in enumerate(coords.tolist()):
        lin = [y * W + x for y, x in pts]
        for c in range(b * C, (b + 1) * C):
            ext(map(f[c * HW:(c + 1) * HW].__getitem__, lin))
    return torch.tensor(out, dtype=features.dtype).view(B, C, P)
""",
    "vision.select_heads": """
def select_heads(x, heads):
    B, H, L, Dh = x.shape
    f = x.reshape(-1).tolist()
    out = []
    ext = out.extend
    for b, hs in enumerate(heads.tolist()):
        for l, h in enumerate(hs):
            s = ((b * H + h) * L + l) * Dh
            ext(f[s:s + Dh])
    return torch.tensor(out, dtype=x.dtype).view(B, L, Dh)
""",
    "topk.select_patches": """
def select_patches(patches, scores, k):
    B, N, D = patches.shape
    f = patches.reshape(-1).tolist()
    out = []
    ext = out.extend
    for b, idx in enumerate(torch.topk(scores, k, dim=1).indices.tolist()):
        for i in idx:
            s = (b * N + i) * D
            ext(f[s:s + D])
    return torch.tensor(out, dtype=patches.dtype).view(B, k, D)
""",
    "topk.scatter_back": """
def scatter_back(selected, indices, n):
    B, K, D = selected.shape
    f = selected.reshape(-1).tolist()
    out = [0.0] * (B * n * D)
    t = 0
    for b, idx in enumerate(indices.tolist()):
        for i in idx:
            s = (b * n + i) * D
            out[s:s + D] = f[t:t + D]
            t += D
    return torch.tensor(out, dtype=selected.dtype).view(B, n, D)
""",
    "mae.random_masking": """
def random_masking(x, mask_ratio, noise):
    N, L, D = x.shape
    len_keep = int(L * (1 - mask_ratio))
    ids_shuffle = torch.argsort(noise, dim=1)
    ids_restore = torch.argsort(ids_shuffle, dim=1)
    f = x.reshape(-1).tolist()
    out = []
    ext = out.extend
    for b, ids in enumerate(ids_shuffle[:, :len_keep].tolist()):
        for i in ids:
            s = (b * L + i) * D
            ext(f[s:s + D])
    x_masked = torch.tensor(out, dtype=x.dtype).view(N, len_keep, D)
    mask = (ids_restore >= len_keep).float()
    return x_masked, mask, ids_restore
""",
    "mae.restore_sequence": """
def restore_sequence(x_visible, mask_token, ids_restore):
    N, K, D = x_visible.shape
    L = ids_restore.size(1)
    f = x_visible.reshape(-1).tolist()
    token = mask_token.tolist()
    out = []
    ext = out.extend
    for b, ids in enumerate(ids_restore.tolist()):
        base = b * K
        for i in ids:
            if i < K:
                s = (base + i) * D
                ext(f[s:s + D])
            else:
                ext(token)
    return torch.tensor(out, dtype=x_visible.dtype).view(N, L, D)
""",
    "friends.gather_backward": """
import itertools

def gather_backward(grad_out, dim, index, input_shape):
    d = dim % index.dim()
    shape = list(input_shape)
    moved = shape[:d] + shape[d + 1:] + [shape[d]]           # input's shape, dim last
    size = moved[-1]
    rows = [[0.0] * size for _ in range(math.prod(moved[:-1]))]
    lead = index.shape[:d] + index.shape[d + 1:]
    strides = [math.prod(moved[k + 1:-1]) for k in range(len(lead))]
    idx = index.movedim(d, -1).reshape(-1, index.size(d)).tolist()
    grads = grad_out.movedim(d, -1).reshape(-1, index.size(d)).tolist()
    for pos, ir, gr in zip(itertools.product(*map(range, lead)), idx, grads):
        row = rows[sum(p * s for p, s in zip(pos, strides))]
        for i, g in zip(ir, gr):
            row[i] += g
    flat = torch.tensor(rows, dtype=grad_out.dtype).reshape(-1)
    total = torch.zeros_like(flat).scatter_add_(0, torch.arange(flat.numel()), flat)
    return total.view(moved).movedim(-1, d).contiguous()
""",
    "friends.gather_via_take": """
import itertools

def gather_via_take(input, dim, index):
    d = dim % input.dim()
    shape = list(input.shape)
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    sd = strides[d]
    lead = index.shape[:d] + index.shape[d + 1:]
    lead_strides = strides[:d] + strides[d + 1:]
    idx = index.movedim(d, -1).reshape(-1, index.size(d)).tolist()
    lin = []
    ext = lin.extend
    for pos, ir in zip(itertools.product(*map(range, lead)), idx):
        base = sum(p * s for p, s in zip(pos, lead_strides))
        ext(map(base.__add__, ir) if sd == 1 else map(base.__add__, map(sd.__mul__, ir)))
    moved = list(lead) + [index.size(d)]
    linear = torch.tensor(lin, dtype=torch.long).view(moved).movedim(-1, d)
    return torch.take(input, linear)
""",
}
LOOP_IMPORTS = IMPORTS + "import math\n"


def loop_cells(qid: str) -> list[str]:
    return [LOOP_IMPORTS, textwrap.dedent(LOOPS[qid])]


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

    The one place that knows the referee's timing API: swap it here when ``_growth`` changes.
    """
    return referee._growth(cells, q)[0]


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
        "sizes": _size_text(q.timing),
        "ref": ref,
        "times": times,
        "slow_name": slow_name,
        "honest": honest,
        "loop_s": loop,
        "loop": fast,
        "gap": fast / honest,
        "limit": math.sqrt(honest * fast),  # the middle of the gap, on a log scale
        "ok": fast / honest >= MARGIN**2 and ref >= 0.05,
    }


def _table(rows: list[dict]) -> str:
    lines = [
        f"| question | timing sizes | ref s ({TIMING_REPEAT} calls) | slowest honest | "
        "fastest loop | gap | middle limit | margin 3x both sides, ref >= 0.05 s |",
        "|---|---|---:|---|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['qid']} | {r['sizes']} | {r['ref']:.3f} | {r['slow_name']} "
            f"{r['honest']:.2f}x | {r['loop']:.1f}x ({r['loop_s']:.2f} s) | {r['gap']:.1f} | "
            f"{r['limit']:.1f}x | {'yes' if r['ok'] else 'NO'} |"
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
