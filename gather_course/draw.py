"""Drawings of a gather's index mapping: input, index and output side by side."""

from __future__ import annotations

import itertools
from typing import Any

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from ._errors import GatherCourseError
from ._rules import effective_ndim, ensure_valid
from ._text import fmt_pos, fmt_value

__all__ = ["draw_gather"]

_MAX_SIDE = 12          # cells per row or column that stay readable
_GAP = 1.5              # space between panels, in cells
_UNREAD = "#f2f2f2"


def _palette(n: int) -> list[Any]:
    import matplotlib

    names = ["Pastel1", "Set3", "Pastel2"]
    colours = [c for name in names for c in matplotlib.colormaps[name].colors
               if max(c[:3]) - min(c[:3]) > 0.05]          # no greys: grey means "unread"
    if n <= len(colours):
        return colours[:n]
    hsv = matplotlib.colormaps["hsv"]
    return [hsv(i / n) for i in range(n)]


def _cells(t: torch.Tensor) -> dict[tuple[int, ...], tuple[int, int, int]]:
    """Map each position of a 0-3-D tensor to (slice, row, column) in the drawing."""
    shape = tuple(t.shape)
    out = {}
    for pos in itertools.product(*(range(s) for s in shape)):
        padded = (0,) * (3 - len(pos)) + pos
        out[pos] = padded
    return out


def _grid_size(t: torch.Tensor) -> tuple[int, int, int]:
    shape = (1,) * (3 - t.dim()) + tuple(t.shape)
    return shape[0], shape[1], shape[2]


def _panel(ax: Axes, t: torch.Tensor, x0: float, title: str, colours: dict, texts: dict,
           subtexts: dict | None = None) -> None:
    slices, rows, cols = _grid_size(t)
    y = 0.0
    for s in range(slices):
        if slices > 1:
            ax.text(x0 - 0.15, y + rows / 2, f"[{s}]", ha="right", va="center", fontsize=9,
                    color="#555555")
        y += rows + 0.6
    for pos, (s, r, c) in _cells(t).items():
        top = s * (rows + 0.6) + r
        ax.add_patch(Rectangle((x0 + c, top), 1, 1, facecolor=colours.get(pos, _UNREAD),
                               edgecolor="#444444", linewidth=1))
        ax.text(x0 + c + 0.5, top + 0.45, texts[pos], ha="center", va="center", fontsize=10)
        if subtexts:
            ax.text(x0 + c + 0.5, top + 0.85, subtexts[pos], ha="center", va="center",
                    fontsize=6, color="#333333")
    ax.text(x0 + cols / 2, -0.35, title, ha="center", va="bottom", fontsize=10,
            fontweight="bold")


def _dim_arrow(ax: Axes, input: torch.Tensor, d: int) -> None:
    """An arrow along the gather dim of the input panel, labelled ``dim=d``."""
    slices, rows, cols = _grid_size(input)
    axis = d + 3 - effective_ndim(input)      # which of (slice, row, column) it is
    height = slices * (rows + 0.6) - 0.6
    if axis == 2:
        start, end, label_xy = (0, height + 0.4), (cols, height + 0.4), (cols / 2, height + 0.9)
    else:
        span = (0, height) if axis == 0 else (0, rows)
        start, end = (-1.1, span[0]), (-1.1, span[1])
        label_xy = (-1.4, (span[0] + span[1]) / 2)
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12,
                                 color="#c0392b", linewidth=1.5))
    ax.text(*label_xy, f"dim={d}", color="#c0392b", fontsize=9, ha="center",
            va="center", rotation=0 if axis == 2 else 90)


def draw_gather(input: torch.Tensor, dim: int, index: torch.Tensor,
                ax: Axes | None = None) -> Figure:
    """Draw input, index and ``out = torch.gather(input, dim, index)`` side by side.

    Each output cell has the colour of the input cell it reads (unread input cells
    stay grey) and names that cell under its value; the index cell that chose it has
    the same colour. 3-D tensors are drawn as slices along dim 0, stacked.
    Returns the Figure; never shows it.

    >>> fig = draw_gather(torch.tensor([[10, 20, 30], [40, 50, 60]]), 1,
    ...                   torch.tensor([[0, 2], [1, 0]]))
    """
    ensure_valid(input, dim, index, "cannot draw a call torch.gather rejects")
    for name, t in (("input", input), ("index", index)):
        if t.dim() > 3:
            raise GatherCourseError(
                f"draw_gather draws 1-D, 2-D and 3-D tensors; {name} has {t.dim()} dims "
                f"(shape {list(t.shape)}). Slice it first, e.g. {name}[0].")
        if any(s > _MAX_SIDE for s in t.shape) or t.numel() > 200:
            raise GatherCourseError(
                f"{name} has shape {list(t.shape)}: too large to draw readably (at most "
                f"{_MAX_SIDE} per dim and 200 cells). Draw a slice, e.g. {name}[:4, :4].")
    if ax is not None and not isinstance(ax, Axes):
        raise GatherCourseError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}.")

    d = int(dim) % effective_ndim(input)
    inp = input.detach().cpu()
    idx = index.detach().cpu()
    sources = {}
    for pos in itertools.product(*(range(s) for s in idx.shape)):
        src = list(pos) if idx.dim() else [0]
        src[d] = int(idx[pos])
        sources[pos] = tuple(src) if inp.dim() else ()
    read = sorted(set(sources.values()))
    colour_of = dict(zip(read, _palette(len(read))))

    out = torch.gather(inp, d, idx)
    in_cols = _grid_size(inp)[2]
    ix_cols = _grid_size(idx)[2]
    x_index = in_cols + _GAP
    x_out = x_index + ix_cols + _GAP

    if ax is None:
        width = x_out + ix_cols + 1
        height = max(_grid_size(inp)[0] * (_grid_size(inp)[1] + 0.6),
                     _grid_size(idx)[0] * (_grid_size(idx)[1] + 0.6)) + 1.5
        fig = Figure(figsize=(min(0.55 * width + 0.6, 14), min(0.55 * height + 0.6, 10)))
        ax = fig.add_subplot()
    _panel(ax, inp, 0, f"input {list(inp.shape)}",
           {p: colour_of[p] for p in read},
           {p: fmt_value(inp[p]) for p in _cells(inp)})
    _panel(ax, idx, x_index, f"index {list(idx.shape)}",
           {p: colour_of[s] for p, s in sources.items()},
           {p: fmt_value(idx[p]) for p in _cells(idx)})
    _panel(ax, out, x_out, f"out (dim={dim})",
           {p: colour_of[s] for p, s in sources.items()},
           {p: fmt_value(out[p]) for p in _cells(out)},
           {p: f"in{fmt_pos(s)}" if len(s) < 3 else ",".join(map(str, s))
            for p, s in sources.items()})
    _dim_arrow(ax, inp, d)

    ax.set_xlim(-1.8, x_out + ix_cols + 0.3)
    bottom = max(_grid_size(t)[0] * (_grid_size(t)[1] + 0.6) for t in (inp, idx)) + 0.8
    ax.set_ylim(bottom, -1.0)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax.figure
