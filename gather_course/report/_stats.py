"""The item statistics of a class report, in plain Python (no SciPy on an instructor's laptop).

- **Facility**: the share of graded students who passed the question (Moodle's facility
  index, for questions scored all or nothing).
- **Discrimination**: the correlation between passing the question and the score on the
  assignment's other questions: the corrected item-total (point-biserial) correlation, which
  Moodle reports as its discrimination index. Near 1: the question separates stronger from
  weaker students; near 0 or below: it does not (or it measures something else). None when
  it cannot be computed (everyone passed, or failed, or there is no other question).
- **Variant fairness**: Fisher's exact test, one-sided, of one variant's pass rate against
  the rest of its question's students, with Holm's correction over the question's variants;
  and what that test can see: the fewest passes a variant would need not to be flagged
  (:func:`first_unflagged`), searched count by count. A variant of five among six siblings
  passed 80% of the time may never be flagged, even when all five fail.

>>> f"{fisher_less(0, 6, 30, 30):.2e}"  # 0 of 6 passed where 30 of 30 others did
'5.13e-07'
>>> holm([0.01, 0.04, 0.03])
[0.03, 0.06, 0.06]
>>> first_unflagged([(0, 5), (8, 10), (8, 10)], 0, 0.05)  # 0 of 5 is flagged, 1 of 5 is not
1
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb, sqrt


def facility(passed: int, graded: int) -> float | None:
    return passed / graded if graded else None


def discrimination(item: Sequence[float], rest: Sequence[float]) -> float | None:
    """Pearson's correlation of the item's scores with the rest of each student's score."""
    n = len(item)
    if n < 3 or len(rest) != n:
        return None
    mi, mr = sum(item) / n, sum(rest) / n
    si = sum((x - mi) ** 2 for x in item)
    sr = sum((y - mr) ** 2 for y in rest)
    if si == 0 or sr == 0:
        return None
    return sum((x - mi) * (y - mr) for x, y in zip(item, rest)) / sqrt(si * sr)


def fisher_less(passed: int, n: int, others_passed: int, others: int) -> float:
    """P(a group of ``n`` drawn from everyone passes ``passed`` times or fewer), given the
    totals: the one-sided p-value that the group passes less often than the others."""
    total, successes = n + others, passed + others_passed
    denominator = comb(total, n)
    low = max(0, n - (total - successes))
    return sum(
        comb(successes, k) * comb(total - successes, n - k) for k in range(low, passed + 1)
    ) / (denominator)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: each p-value as it is compared with the threshold."""
    order = sorted(range(len(p_values)), key=p_values.__getitem__)
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = round(running, 12)
    return adjusted


def against_rest(
    groups: Sequence[tuple[int, int]], untested: tuple[int, int] = (0, 0)
) -> list[float]:
    """Each ``(passed, students)`` group against all the others pooled (``untested``: the
    passes and students in the pool but not tested), one-sided Fisher, Holm-adjusted."""
    passed = sum(p for p, _n in groups) + untested[0]
    total = sum(n for _p, n in groups) + untested[1]
    return holm([fisher_less(p, n, passed - p, total - n) for p, n in groups])


def first_unflagged(
    groups: Sequence[tuple[int, int]], i: int, alpha: float, untested: tuple[int, int] = (0, 0)
) -> int:
    """The fewest passes of group ``i`` (its size and everyone else's results unchanged)
    whose adjusted p-value in :func:`against_rest` is not under ``alpha``: with fewer it is
    flagged. 0: no count can be flagged."""
    n = groups[i][1]
    for k in range(n + 1):
        trial = [*groups[:i], (k, n), *groups[i + 1 :]]
        if against_rest(trial, untested)[i] >= alpha:
            return k
    return n + 1


def median(values: Sequence[float]) -> float | None:
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return None
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
