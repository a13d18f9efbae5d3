"""A failed check, drawn: the expected values next to the learner's, wrong cells marked."""

from __future__ import annotations

from typing import Any

import torch
from matplotlib.figure import Figure

from ._errors import GatherCourseError
from ._figure import ShownFigure
from ._figure_text import _fig, figure_font
from ._i18n import _
from ._text import fmt_value

_MAX_CELLS = 12  # per side: bigger outputs are not readable as a grid
_WRONG, _RIGHT = "#f4b6b6", "#e8f1e4"


def _slice_2d(t: torch.Tensor, first_bad: tuple[int, ...]) -> tuple[torch.Tensor, str]:
    """The 2-D slice of ``t`` (its last two dims) that holds the first wrong element."""
    if t.dim() <= 2:
        return (t.reshape(1, -1) if t.dim() < 2 else t), ""
    lead = first_bad[:-2]
    return t[lead], f"[{', '.join(map(str, lead))}, :, :]"


def draw_expected_vs_got(
    name: str, expected: torch.Tensor, got: torch.Tensor, ax: Any = None
) -> Figure:
    """Two grids, expected and yours, of the slice with the first wrong value.

    >>> draw_expected_vs_got("out", torch.eye(2), torch.ones(2, 2))   # doctest: +SKIP
    """
    e, o = expected.detach().cpu(), got.detach().cpu().to(expected.dtype)
    wrong = ~(torch.isclose(o, e, equal_nan=True) if e.is_floating_point() else o == e)
    if not bool(wrong.any()):
        raise GatherCourseError(_("nothing to draw: every value is right."))
    first = tuple(int(i) for i in wrong.nonzero()[0])
    e2, where = _slice_2d(e, first)
    o2, _where = _slice_2d(o, first)
    w2, _where = _slice_2d(wrong, first)
    rows, cols = e2.shape
    if rows > _MAX_CELLS or cols > _MAX_CELLS:
        raise GatherCourseError(
            _(
                "{what} is {rows}x{cols}, too big to draw as a grid (at most {most}x{most}); "
                "read the first wrong element in the check's message."
            ).format(what=name + where, rows=rows, cols=cols, most=_MAX_CELLS)
        )
    if ax is None:
        fig = ShownFigure(figsize=(1.2 + 2 * 0.95 * cols, 1.0 + 0.5 * rows), layout="constrained")
        axes = fig.subplots(1, 2)
    else:
        axes = list(ax)
        if len(axes) != 2:
            raise GatherCourseError(
                _("ax must be two matplotlib Axes, got {n}.").format(n=len(axes))
            )
        fig = axes[0].figure
    font = figure_font()
    for a, values, title in zip(axes, (e2, o2), (_fig("expected"), _fig("yours"))):
        for r in range(rows):
            for c in range(cols):
                bad = bool(w2[r, c])
                a.add_patch(_cell(c, r, _WRONG if bad else _RIGHT))
                a.text(
                    c + 0.5,
                    r + 0.5,
                    fmt_value(values[r, c]),
                    ha="center",
                    va="center",
                    fontsize=9,
                    fontweight="bold" if bad else "normal",
                )
        a.set_xlim(0, cols)
        a.set_ylim(rows, 0)
        a.set_aspect("equal")
        a.set_xticks([c + 0.5 for c in range(cols)], [str(c) for c in range(cols)])
        a.set_yticks([r + 0.5 for r in range(rows)], [str(r) for r in range(rows)])
        a.tick_params(length=0, labelsize=8)
        a.set_title(
            _fig("{key}: {value}").format(key=title, value=name + where), fontsize=10, **font
        )
    fig.suptitle(
        _fig("{wrong} wrong (red) of {total}").format(wrong=int(wrong.sum()), total=wrong.numel()),
        fontsize=10,
        **font,
    )
    return fig


def _cell(x: int, y: int, colour: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5)
