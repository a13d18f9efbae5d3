"""Drawings of a gather's index mapping: input, index and output side by side.

Long on purpose (about 430 lines): one idea, the two public drawings (``draw_gather`` and
``draw_gather_grad``) and their arguments' checks; their layout engine is
:mod:`._draw_layout`, the learner's result drawn is :mod:`._draw_result`.
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import FancyArrowPatch, Rectangle

from ._draw_layout import (
    _GAP_PT,
    _HUES,
    _LINE,
    _MAX_SIDE,
    _MIN_CELL_PT,
    _PAD_PT,
    _SMALL_PT,
    _VALUE_PT,
    _cells,
    _grid_size,
    _lighten,
    _Panel,
    _width_pt,
)
from ._errors import GatherCourseError
from ._figure import ShownFigure
from ._figure_text import _fig, figure_font, use_cjk_fallback
from ._gather_call import effective_ndim, ensure_valid, source_position
from ._i18n import _
from ._text import fmt_pos, fmt_value

__all__ = ["draw_gather", "draw_gather_grad"]

use_cjk_fallback()  # a Chinese notebook's own figures (titles in its code) draw Chinese too


def draw_gather(
    input: torch.Tensor, dim: int, index: torch.Tensor, ax: Axes | None = None
) -> Figure:
    """Draw input, index and ``out = torch.gather(input, dim, index)`` side by side.

    The colour of a cell is a position along ``dim``: an index cell has the colour of
    its value, an output cell the colour of the input cell it reads, and that input
    cell the same colour (input cells nobody reads stay grey). Under each output value
    is the input position it was read from (``in[1][1]``; ``in[0,2,1]`` for 3-D).
    3-D tensors are drawn as slices along dim 0, stacked. Without ``ax`` the figure is
    sized so that every label is at least 9 pt and none overlaps another.
    Returns the Figure; never shows it.

    >>> fig = draw_gather(torch.tensor([[10, 20, 30], [40, 50, 60]]), 1,
    ...                   torch.tensor([[0, 2], [1, 0]]))
    """
    ensure_valid(input, dim, index, _("cannot draw a call torch.gather rejects"))
    for name, t in (("input", input), ("index", index)):
        if t.dim() > 3:
            raise GatherCourseError(
                _(
                    "draw_gather draws 1-D, 2-D and 3-D tensors; {name} has {n} dims "
                    "(shape {shape}). Slice it first, e.g. {name}[0]."
                ).format(name=name, n=t.dim(), shape=list(t.shape))
            )
        if any(s > _MAX_SIDE for s in t.shape) or t.numel() > 200:
            raise GatherCourseError(
                _(
                    "{name} has shape {shape}: too large to draw readably (at most "
                    "{most} per dim and 200 cells). Draw a slice, e.g. {name}[:4, :4]."
                ).format(name=name, shape=list(t.shape), most=_MAX_SIDE)
            )
    if ax is not None and not isinstance(ax, Axes):
        raise GatherCourseError(
            _("ax must be a matplotlib Axes or None, got {got}.").format(got=type(ax).__name__)
        )

    d = int(dim) % effective_ndim(input)
    inp = input.detach().cpu()
    idx = index.detach().cpu()
    sources = {}
    for pos in itertools.product(*(range(s) for s in idx.shape)):
        sources[pos] = source_position(pos, d, idx) if inp.dim() else ()
    key = {p: (s[d] if s else 0) for p, s in sources.items()}  # the position along dim
    out = torch.gather(inp, d, idx)

    def source_label(s: tuple[int, ...]) -> str:
        """``in[1][1]``; ``in[0,2,1]`` for 3-D, shorter so cells stay narrow."""
        return f"in{fmt_pos(s)}" if len(s) < 3 else f"in[{','.join(map(str, s))}]"

    panels = [
        _Panel(
            inp,
            f"input {list(inp.shape)}",
            {p: fmt_value(inp[p]) for p in _cells(inp)},
            {s: (s[d] if s else 0) for s in sources.values()},
        ),
        _Panel(idx, f"index {list(idx.shape)}", {p: fmt_value(idx[p]) for p in _cells(idx)}, key),
        _Panel(
            out,
            f"out (dim={dim})",
            {p: fmt_value(out[p]) for p in _cells(out)},
            key,
            {p: source_label(s) for p, s in sources.items()},
        ),
    ]

    # One cell is `unit` points wide: wide enough for its widest text.
    unit = max(
        [_MIN_CELL_PT]
        + [_width_pt(t, _VALUE_PT) + _PAD_PT for p in panels for t in p.texts.values()]
        + [_width_pt(t, _SMALL_PT) + _PAD_PT for p in panels for t in p.subtexts.values()]
    )
    small_h = _LINE * _SMALL_PT / unit  # a line of small text, in cells
    title_h = _LINE * _VALUE_PT / unit

    # The dim arrow beside (or below) the input grid, and where the panels go.
    slices, rows, cols = _grid_size(inp)
    axis = d + 3 - effective_ndim(inp)  # which of (slice, row, column) it is
    left, _right = panels[0].extents(unit)
    if axis == 2:
        arrow_y = panels[0].height + 0.35
    else:
        arrow_x = -(left + 0.35)
        label_x = arrow_x - 0.2 - small_h / 2
        left = -(label_x - small_h / 2)
    x = 0.0
    for prev, panel in itertools.pairwise(panels):
        _left, right = prev.extents(unit)
        x += prev.size[2] + max(_GAP_PT / unit, right + 0.6 + panel.extents(unit)[0])
        panel.x0 = x

    own = ax is None
    if own:
        ax = ShownFigure().add_axes((0, 0, 1, 1))
    for panel in panels:
        panel.draw(ax)
    if axis == 2:
        ax.add_patch(
            FancyArrowPatch(
                (0, arrow_y),
                (cols, arrow_y),
                arrowstyle="-|>",
                mutation_scale=12,
                color="#c0392b",
                linewidth=1.5,
            )
        )
        ax.text(
            cols / 2,
            arrow_y + 0.2,
            f"dim={d}",
            color="#c0392b",
            fontsize=_SMALL_PT,
            ha="center",
            va="top",
        )
        bottom = max(max(p.height for p in panels), arrow_y + 0.2 + small_h)
    else:
        span = (0, panels[0].height) if axis == 0 else (0, rows)
        ax.add_patch(
            FancyArrowPatch(
                (arrow_x, span[0]),
                (arrow_x, span[1]),
                arrowstyle="-|>",
                mutation_scale=12,
                color="#c0392b",
                linewidth=1.5,
            )
        )
        ax.text(
            label_x,
            sum(span) / 2,
            f"dim={d}",
            color="#c0392b",
            fontsize=_SMALL_PT,
            ha="center",
            va="center",
            rotation=90,
        )
        bottom = max(p.height for p in panels)

    x_min = -left - 0.25
    x_max = panels[2].x0 + panels[2].size[2] + panels[2].extents(unit)[1] + 0.25
    y_min = -0.3 - title_h - 0.25
    y_max = bottom + 0.25
    ax.set_xlim(x_min, x_max)
    ax.set_ylim(y_max, y_min)
    ax.set_aspect("equal")
    ax.axis("off")
    if own:  # the axes fill the figure: one cell = unit
        ax.figure.set_size_inches((x_max - x_min) * unit / 72, (y_max - y_min) * unit / 72)
    return ax.figure


# --- gather's gradient: each grad_out value flows back to the cell it was read from ------

_GRAD_HUES = _HUES  # the same hues as draw_gather (tab10 without its grey)
_GRAD_GAP = 1.4  # room for the arrows between grad_out and grad_input, in cells
_GRAD_SEP = 0.8  # space between one line's pair of strips and the next, in cells
_GRAD_PT = (10, 9)  # font sizes: values and titles, then everything else


def _grad_colour(k: int, white: float) -> tuple[float, float, float]:
    """Hue ``k`` mixed with white (``white`` 0: the hue itself, 1: white)."""
    h = _GRAD_HUES[k % len(_GRAD_HUES)]
    return _lighten(h, white)


def _grad_text_pt(text: str, size: float, bold: bool = False, **font: Any) -> float:
    """The width of ``text`` in points (its advance width), measured without drawing it."""
    from matplotlib.textpath import TextToPath

    if not text:
        return 0.0
    family = font.get("fontfamily")
    prop = FontProperties(size=size, weight="bold" if bold else "normal", family=family)
    return TextToPath().get_text_width_height_descent(text, prop, ismath=False)[0]


def _grad_cell(ax: Axes, x: float, y: float, face: Any, text: str, sub: str) -> None:
    ax.add_patch(Rectangle((x, y), 1, 1, facecolor=face, edgecolor="#444444", linewidth=1))
    ax.text(
        x + 0.5, y + (0.36 if sub else 0.5), text, ha="center", va="center", fontsize=_GRAD_PT[0]
    )
    if sub:
        ax.text(
            x + 0.5,
            y + 0.76,
            sub,
            ha="center",
            va="center",
            fontsize=_GRAD_PT[1],
            color="#222222",
            **figure_font(),  # "to [c]" is words: 送往 [c] in Chinese
        )


def draw_gather_grad(
    grad_out: torch.Tensor,
    dim: int,
    index: torch.Tensor,
    input_shape: tuple[int, ...] | torch.Size,
    ax: Axes | None = None,
) -> Figure:
    """Draw gather's backward: every ``grad_out`` value is added to the cell it was read from.

    ``grad_input = zeros(input_shape).scatter_add(dim, index, grad_out)``. The drawing
    takes one line along ``dim`` at a time (a row for ``dim=1`` of a 2-D tensor): that
    line of ``grad_out`` above, the same line of ``grad_input`` below, and an arrow from
    each ``grad_out`` cell to the cell its index names (``to [c]``: position ``c`` along
    ``dim``), in that cell's colour. A cell reached twice or more shows the sum and its
    terms; a cell never reached stays grey at 0. 1-D to 3-D, at most 12 cells along
    ``dim`` and 8 lines. Without ``ax`` the figure is sized so that every text is 9 pt
    or more and fits its place. Returns the Figure; never shows it.

    >>> fig = draw_gather_grad(torch.tensor([[1., 2., 3.]]), 1,
    ...                        torch.tensor([[0, 0, 2]]), (1, 4))
    """
    if not isinstance(grad_out, torch.Tensor) or not isinstance(index, torch.Tensor):
        raise GatherCourseError(
            _("grad_out and index must be tensors, got {a} and {b}.").format(
                a=type(grad_out).__name__, b=type(index).__name__
            )
        )
    try:
        shape = tuple(int(s) for s in input_shape)
    except (TypeError, ValueError):
        raise GatherCourseError(
            _("input_shape must be a tuple of ints or a torch.Size, got {got}.").format(
                got=repr(input_shape)
            )
        ) from None
    if not 1 <= len(shape) <= 3:
        raise GatherCourseError(
            _("draw_gather_grad draws 1-D to 3-D tensors; input_shape is {shape}.").format(
                shape=list(shape)
            )
        )
    ensure_valid(
        torch.empty(shape),
        dim,
        index.detach().cpu(),
        _("cannot draw the gradient of a call torch.gather rejects"),
    )
    if grad_out.shape != index.shape:
        raise GatherCourseError(
            _(
                "grad_out has shape {a} but index has {b}: grad_out is the gradient of "
                "gather's output, which has index's shape."
            ).format(a=list(grad_out.shape), b=list(index.shape))
        )
    if ax is not None and not isinstance(ax, Axes):
        raise GatherCourseError(
            _("ax must be a matplotlib Axes or None, got {got}.").format(got=type(ax).__name__)
        )

    d = int(dim) % len(shape)
    g = grad_out.detach().cpu()
    idx = index.detach().cpu().long()
    grad_in = torch.zeros(shape, dtype=g.dtype).scatter_add(d, idx, g)
    lines = list(itertools.product(*(range(s) for k, s in enumerate(shape) if k != d)))
    n_out, n_in = idx.shape[d], shape[d]
    if len(lines) > 8 or max(n_out, n_in) > 12:
        raise GatherCourseError(
            _(
                "{lines} lines of up to {cells} cells along dim {d}: too many to draw "
                "readably (at most 8 lines of 12). Draw a small example."
            ).format(lines=len(lines), cells=max(n_out, n_in), d=d)
        )

    def full(line: tuple[int, ...], j: int) -> tuple[int, ...]:
        return line[:d] + (j,) + line[d:]

    def name(line: tuple[int, ...]) -> str:
        parts = [str(p) for p in line]
        parts.insert(d, ":")
        return "[" + ", ".join(parts) + "]"

    in_index = set(itertools.product(*(range(s) for s in idx.shape)))
    sources = [{} for _line in lines]  # per line: position along dim -> the j's that go there
    for k, line in enumerate(lines):
        for j in range(n_out):
            if full(line, j) in in_index:
                sources[k].setdefault(int(idx[full(line, j)]), []).append(j)
    hues = {
        p: h
        for h, p in enumerate(
            sorted(full(line, c) for k, line in enumerate(lines) for c in sources[k])
        )
    }
    out_cells, in_cells = {}, {}  # (line number, position along dim): (text, subtext)
    for k, line in enumerate(lines):
        for c, js in sources[k].items():
            for j in js:
                out_cells[k, j] = (fmt_value(g[full(line, j)]), _fig("to [{c}]").format(c=c))
        for c in range(n_in):
            js = sources[k].get(c, [])
            terms = "+".join(fmt_value(g[full(line, j)]) for j in js)
            in_cells[k, c] = (
                fmt_value(grad_in[full(line, c)]),
                "" if len(js) < 2 else terms if len(terms) <= 12 else f"{len(js)} terms",
            )
    font = figure_font()
    title = _fig("gather(dim={dim}) backward").format(dim=dim)
    formula = f"grad_input = zeros.scatter_add({dim}, index, grad_out)"
    labels = [f"{t}{name(line)}" for line in lines for t in ("grad_out", "grad_input")]
    big, small = _GRAD_PT
    # One cell is `unit` points wide: wide enough for its widest text, 40 pt at least.
    unit = max(
        [40.0]
        + [_grad_text_pt(t, big) + 10 for t, _sub in [*out_cells.values(), *in_cells.values()]]
        + [
            _grad_text_pt(s, small, **font) + 8
            for _text, s in [*out_cells.values(), *in_cells.values()]
        ]
    )
    left = (max(_grad_text_pt(s, small) for s in labels) + 14) / unit
    width = max(n_out, n_in)
    lo, hi = -left, width + 0.3
    note = _fig("(index has no cells here)")
    if not all(sources):  # the note on a line index does not reach must fit
        hi = max(hi, (_grad_text_pt(note, small, **font) + 6) / unit)
    spare = (
        max(_grad_text_pt(formula, small), _grad_text_pt(title, big, True, **font)) + 12
    ) / unit
    spare -= hi - lo
    if spare > 0:  # widen both sides until the titles fit
        lo, hi = lo - spare / 2, hi + spare / 2
    mid = (lo + hi) / 2
    top = -(1.3 * (big + small) + 11) / unit  # room for the two title lines
    pair = 2 + _GRAD_GAP  # a grad_out strip, the arrows, a grad_input strip
    bottom = len(lines) * (pair + _GRAD_SEP) - _GRAD_SEP + 0.3
    own = ax is None
    if own:
        fig = ShownFigure(figsize=((hi - lo) * unit / 72, (bottom - top) * unit / 72))
        ax = fig.add_axes((0, 0, 1, 1))

    for k, line in enumerate(lines):
        y_out = k * (pair + _GRAD_SEP)
        y_in = y_out + 1 + _GRAD_GAP
        ax.text(-6 / unit, y_out + 0.5, labels[2 * k], ha="right", va="center", fontsize=small)
        ax.text(-6 / unit, y_in + 0.5, labels[2 * k + 1], ha="right", va="center", fontsize=small)
        if not sources[k]:
            ax.text(
                0,
                y_out + 0.5,
                note,
                ha="left",
                va="center",
                fontsize=small,
                color="#555555",
                **font,
            )
        for c, js in sources[k].items():
            for j in js:
                _grad_cell(ax, j, y_out, _grad_colour(hues[full(line, c)], 0.55), *out_cells[k, j])
                ax.add_patch(
                    FancyArrowPatch(
                        (j + 0.5, y_out + 1.02),
                        (c + 0.5, y_in - 0.02),
                        arrowstyle="-|>",
                        mutation_scale=11,
                        linewidth=1.4,
                        shrinkA=0,
                        shrinkB=0,
                        color=_grad_colour(hues[full(line, c)], 0.0),
                    )
                )
        for c in range(n_in):
            reached = full(line, c) in hues
            _grad_cell(
                ax,
                c,
                y_in,
                _grad_colour(hues[full(line, c)], 0.55) if reached else "#e8e8e8",
                *in_cells[k, c],
            )
    ax.text(
        mid, top + 3 / unit, title, ha="center", va="top", fontsize=big, fontweight="bold", **font
    )
    ax.text(mid, -4 / unit, formula, ha="center", va="bottom", fontsize=small)
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom, top)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax.figure
