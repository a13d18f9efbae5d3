"""The drawings' layout engine: cells, panels, colours, hatches and text sizes.

A tensor becomes a grid of cells (a 3-D tensor, slices side by side); a panel is one
tensor's grid with its title, sized from the widest text it holds so that no label
overlaps. :mod:`gather_course.draw` composes panels into the public drawings.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field

import torch
from matplotlib import rcParams
from matplotlib.axes import Axes
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Rectangle
from matplotlib.textpath import TextPath

_MAX_SIDE = 12  # cells per row or column that stay readable
_GAP_PT = 56  # least space between panels, in points
_SLICE_GAP = 0.6  # space between the slices of a 3-D tensor, in cells
_UNREAD = "#e8e8e8"  # grey: an input cell nobody reads
_VALUE_PT = 10  # cell values and panel titles, in points
_SMALL_PT = 9  # source labels, slice labels, the dim label: readable at the default dpi
_MIN_CELL_PT = 40  # a cell is at least this many points wide (0.55 inch)
_PAD_PT = 10  # free space around the widest text of a cell
_LINE = 1.25  # a line of text is this many times its font size high

# tab10 without its grey (grey means "unread"), mixed 35 % with white so that black text
# stays readable on every colour: nine hues told apart at a glance (the closest pair,
# purple and pink, is 17 CIELAB units apart). Positions past the ninth reuse the hues,
# hatched.
_HUES = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#17becf",
]
_HATCHES = ["", "///", "xx"]


def _lighten(hex_colour: str, amount: float = 0.35) -> tuple[float, float, float]:
    """``#rrggbb`` mixed with white (``amount`` 0: the colour itself, 1: white)."""
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount


def _style(k: int) -> tuple[tuple[float, float, float], str]:
    """Face colour and hatch for position ``k`` along the gather dim."""
    return _lighten(_HUES[k % len(_HUES)]), _HATCHES[(k // len(_HUES)) % len(_HATCHES)]


def _width_pt(text: str, size: float, bold: bool = False) -> float:
    """The width of ``text`` in points, without drawing it."""
    fonts = tuple(str(rcParams[key]) for key in ("font.family", "font.sans-serif", "font.serif"))
    return _ink_width(text, size, bold, fonts)


@functools.lru_cache(maxsize=512)  # a drawing measures the same digits many times
def _ink_width(text: str, size: float, bold: bool, fonts: tuple[str, ...]) -> float:
    """``_width_pt``, for the fonts that ``fonts`` (the settings' texts) name."""
    prop = FontProperties(size=size, weight="bold" if bold else "normal")
    return TextPath((0, 0), text, prop=prop).get_extents().width


def _grid_size(t: torch.Tensor) -> tuple[int, int, int]:
    """(slices, rows, columns) of a 0-3-D tensor's drawing."""
    shape = (1,) * (3 - t.dim()) + tuple(t.shape)
    return shape[0], shape[1], shape[2]


def _cells(t: torch.Tensor) -> dict[tuple[int, ...], tuple[int, int, int]]:
    """Map each position of a 0-3-D tensor to (slice, row, column) in the drawing."""
    return {
        pos: (0,) * (3 - len(pos)) + pos for pos in itertools.product(*(range(s) for s in t.shape))
    }


@dataclass
class _Panel:
    """One tensor drawn as a grid: its texts, the colour key of each cell, its place."""

    t: torch.Tensor
    title: str
    texts: dict
    keys: dict  # position -> position along the gather dim (colour)
    subtexts: dict = field(default_factory=dict)
    x0: float = 0.0

    @property
    def size(self) -> tuple[int, int, int]:
        """(slices, rows, columns)."""
        return _grid_size(self.t)

    @property
    def height(self) -> float:
        """Height of the stacked slices, in cells."""
        slices, rows, _ = self.size
        return slices * (rows + _SLICE_GAP) - _SLICE_GAP

    def extents(self, unit: float) -> tuple[float, float]:
        """Cells this panel's texts reach left of its grid and right of it."""
        slices, _, cols = self.size
        over = max(0.0, (_width_pt(self.title, _VALUE_PT, True) / unit - cols) / 2)
        left = over
        if slices > 1:
            left = max(left, 0.15 + _width_pt(f"[{slices - 1}]", _SMALL_PT) / unit)
        return left, over

    def draw(self, ax: Axes) -> None:
        """Cells, values, source labels, slice labels and title, at ``self.x0``."""
        slices, rows, cols = self.size
        for s in range(slices):
            if slices > 1:
                ax.text(
                    self.x0 - 0.15,
                    s * (rows + _SLICE_GAP) + rows / 2,
                    f"[{s}]",
                    ha="right",
                    va="center",
                    fontsize=_SMALL_PT,
                    color="#444444",
                )
        value_y = 0.36 if self.subtexts else 0.5
        for pos, (s, r, c) in _cells(self.t).items():
            top = s * (rows + _SLICE_GAP) + r
            key = self.keys.get(pos)
            face, hatch = _style(key) if key is not None else (_UNREAD, "")
            ax.add_patch(
                Rectangle(
                    (self.x0 + c, top),
                    1,
                    1,
                    facecolor=face,
                    hatch=hatch,
                    edgecolor="#444444",
                    linewidth=1,
                )
            )
            box = dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85)
            ax.text(
                self.x0 + c + 0.5,
                top + value_y,
                self.texts[pos],
                ha="center",
                va="center",
                fontsize=_VALUE_PT,
                bbox=box if hatch else None,
            )
            if self.subtexts:
                ax.text(
                    self.x0 + c + 0.5,
                    top + 0.77,
                    self.subtexts[pos],
                    ha="center",
                    va="center",
                    fontsize=_SMALL_PT,
                    color="#222222",
                    bbox=box if hatch else None,
                )
        ax.text(
            self.x0 + cols / 2,
            -0.3,
            self.title,
            ha="center",
            va="bottom",
            fontsize=_VALUE_PT,
            fontweight="bold",
        )
