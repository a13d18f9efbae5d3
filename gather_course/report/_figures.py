"""The class report's two pictures: the scores, and each question's verdicts by tier.

Each takes ``ax=None`` and returns its Figure; :func:`png` turns one into the bytes the
page holds inline. Text is in the report's language (a CJK font where it reads Chinese).
"""

from __future__ import annotations

import io
from typing import Any

from .._i18n import N_, _
from .._tier import Tier
from ._numbers import ClassNumbers

# Passed green, not attempted grey, each way of failing a colour of its own (the course's
# hues, lightened as its drawings are).
_TIER_COLOURS = {
    Tier.PASSED: "#2ca02c",
    Tier.NOT_ATTEMPTED: "#c7c7c7",
    Tier.EXCEPTION: "#d62728",
    Tier.MUTATED: "#e377c2",
    Tier.WRONG_TYPE: "#8c564b",
    Tier.WRONG_SHAPE: "#ff7f0e",
    Tier.WRONG_DTYPE: "#bcbd22",
    Tier.WRONG_DEVICE: "#17becf",
    Tier.WRONG_VALUES: "#9467bd",
    Tier.CONSTRAINTS: "#1f77b4",
    Tier.NOT_VECTORIZED: "#7f7f7f",
}
WIDTH = 4.2  # inches: 420 px on the page, where 10 pt text reads 14 px (12 px on a phone)
SHOWN = round(100 * WIDTH)  # the width the page shows a picture at, in CSS px
FONT = 10  # points: every text of both pictures, titles 11
_SCORES = N_("Scores of the graded students")
_STUDENTS = N_("students")
_SCORE = N_("score (of {max})")
_VERDICTS = N_("Verdicts by question")


def _font() -> dict[str, Any]:
    from .._figure_text import figure_font

    family = figure_font().get("fontfamily")
    sizes = {"font.size": FONT, "legend.fontsize": FONT, "axes.titlesize": FONT + 1}
    return {**sizes, "font.family": family} if family else sizes


def score_histogram(numbers: ClassNumbers, ax: Any = None) -> Any:
    """How many graded students got each total score."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(_font()):
        if ax is None:
            fig = Figure(figsize=(WIDTH, 2.6), layout="constrained")
            ax = fig.subplots()
        else:
            fig = ax.figure
        top = numbers.max_score
        counts: dict[float, int] = {}
        for s in numbers.scores:
            counts[s] = counts.get(s, 0) + 1
        width = max(top / 30, 0.2)
        ax.bar(
            list(counts), list(counts.values()), width=width, color="#9ecae1", edgecolor="#1f77b4"
        )
        ax.set_xlim(-width, top + width)
        ax.set_xlabel(_(_SCORE).format(max=f"{top:g}"))
        ax.set_ylabel(_(_STUDENTS))
        ax.set_title(_(_SCORES), loc="left")
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.spines[["top", "right"]].set_visible(False)
    return fig


def _columns(labels: list[str]) -> int:
    """Two columns of legend where the longest label fits half the width, else one (a
    Chinese character is about two Latin letters wide)."""
    widest = max((sum(2 if ord(c) > 0x2E80 else 1 for c in x) for x in labels), default=0)
    return 2 if widest <= 24 else 1


def tier_bars(numbers: ClassNumbers, ax: Any = None) -> Any:
    """One bar per question: its graded students, stacked by the tier of their verdict."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    questions = numbers.questions
    present = [t for t in Tier if any(q.tiers.get(t.value) for q in questions)]
    cols = _columns([_(t.value) for t in present])
    with rc_context(_font()):
        own = ax is None
        if own:
            height = 1.0 + 0.42 * len(questions) + 0.3 * -(-len(present) // cols)
            fig = Figure(figsize=(WIDTH, height), layout="constrained")
            ax = fig.subplots()
        else:
            fig = ax.figure
        labels = [q.qid for q in questions][::-1]
        left = [0] * len(questions)
        for tier in present:
            widths = [q.tiers.get(tier.value, 0) for q in questions][::-1]
            ax.barh(labels, widths, left=left, color=_TIER_COLOURS[tier], label=_(tier.value))
            left = [a + b for a, b in zip(left, widths)]
        ax.set_xlabel(_(_STUDENTS))
        ax.xaxis.get_major_locator().set_params(integer=True)  # whole students, never 2.5
        ax.set_title(_(_VERDICTS), loc="left")
        ax.spines[["top", "right"]].set_visible(False)
        where = {"loc": "outside lower left"} if own else {"loc": "best"}
        (fig if own else ax).legend(ncols=cols, frameon=False, **where)
    return fig


def png(fig: Any) -> bytes:
    """The figure as PNG bytes, at twice the resolution the page shows it at (SHOWN)."""
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=200)
    return out.getvalue()
