"""Vision questions: reading (y, x) points out of feature maps, selecting attention heads."""

from __future__ import annotations

from typing import Any

import torch

from .._i18n import _
from .._text import fmt_value
from ._cases import noncontig, randint, randn
from ._question import question

# 001 section 3: five (y, x) points per image of a [2, 3, 4, 4] feature map
_ARTICLE_COORDS = torch.tensor(
    [
        [[1, 2], [3, 0], [2, 2], [1, 1], [0, 3]],
        [[2, 1], [0, 2], [3, 3], [1, 0], [2, 2]],
    ]
)


# -- vision.gather_pixels -----------------------------------------------------------


def _make_pixels(
    gen: torch.Generator,
    B: int = 2,
    C: int = 3,
    H: int = 4,
    W: int = 4,
    P: int = 5,
    strided: bool = False,
    article: bool = False,
) -> dict[str, Any]:
    features = randn(gen, B, C, H, W)
    if article:
        coords = _ARTICLE_COORDS.clone()
    else:
        coords = torch.stack([randint(gen, H, B, P), randint(gen, W, B, P)], dim=-1)
    return {"features": noncontig(features) if strided else features, "coords": coords}


def _spec_pixels(features: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
    B, C, H, W = features.shape
    P = coords.shape[1]
    out = torch.empty(B, C, P, dtype=features.dtype)
    for b in range(B):
        for c in range(C):
            for p in range(P):
                y, x = int(coords[b, p, 0]), int(coords[b, p, 1])
                out[b, c, p] = features[b, c, y, x]
    return out


def _formula_pixels(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    b, c, p = pos
    y, x = (int(v) for v in inp["coords"][b, p])
    return _(
        "out[{b}, {c}, {p}] = features[{b}, {c}, y, x] with (y, x) = coords[{b}, {p}] = "
        "({y}, {x}), so features[{b}, {c}, {y}, {x}] = {value}"
    ).format(b=b, c=c, p=p, y=y, x=x, value=fmt_value(inp["features"][b, c, y, x]))


question(
    "vision.gather_pixels",
    title="Read points out of a feature map",
    spec=_spec_pixels,
    make=_make_pixels,
    sizes=(
        dict(label="H different from W", B=2, C=3, H=4, W=6, P=5),
        dict(label="the article's coordinates", article=True),
        dict(label="size-1 dims", B=1, C=1, H=1, W=1, P=1),
        dict(label="many points", B=1, C=2, H=3, W=2, P=9),
        dict(label="non-contiguous features", B=2, C=2, H=5, W=3, P=4, strided=True),
    ),
    large_sizes=(
        dict(label="H different from W", B=4, C=8, H=16, W=12, P=20),
        dict(label="non-contiguous features", B=2, C=5, H=7, W=9, P=30, strided=True),
    ),
    timing=dict(B=16, C=16, H=64, W=2, P=16384),
    timing_factor=6,  # bench_timing.py: the middle of the measured gap
    scaling=(dict(B=2, C=3, H=4, W=5, P=3), dict(B=4, C=6, H=8, W=10, P=6)),
    formula=_formula_pixels,
    hints=(
        "A point needs two coordinates, but gather reads along one dim. Flatten `H` and "
        "`W` into one dim of size `H*W` first, and turn each point into one position "
        "along it.",
        "In a row-major `[H, W]` grid, point `(y, x)` is at linear position `y * W + x` "
        "(W, not H), so the positions form a `[B, P]` tensor. The index must be `[B, C, P]`: "
        "the same point for every channel, so add a channel dim and expand it to `C`.",
        "In order: `features.flatten(2)` is `[B, C, H*W]`; the linear positions, "
        "unsqueezed at dim 1 and expanded with `expand(-1, C, -1)`, are `[B, C, P]`; "
        "gather along dim 2 gives `[B, C, P]`. Check the arithmetic on a `[3, 5]` grid: "
        "point `(2, 1)` is at 2 * 5 + 1 = 11, and `torch.arange(15).reshape(3, 5)[2, 1]` "
        "is 11.",
    ),
    solution_code="""
def gather_pixels(features, coords):
    B, C, H, W = features.shape
    lin = coords[..., 0] * W + coords[..., 1]              # [B, P] positions in H*W
    index = lin.unsqueeze(1).expand(-1, C, -1)             # [B, C, P]: same point, every channel
    return features.flatten(2).gather(2, index)            # [B, C, H*W] -> [B, C, P]
""",
)


# -- vision.select_heads ------------------------------------------------------------


def _make_heads(
    gen: torch.Generator, B: int, H: int, L: int, Dh: int, strided: bool = False
) -> dict[str, Any]:
    x = randn(gen, B, H, L, Dh)
    return {"x": noncontig(x) if strided else x, "heads": randint(gen, H, B, L)}


def _spec_heads(x: torch.Tensor, heads: torch.Tensor) -> torch.Tensor:
    B, H, L, Dh = x.shape
    out = torch.empty(B, L, Dh, dtype=x.dtype)
    for b in range(B):
        for l in range(L):
            out[b, l] = x[b, heads[b, l], l]  # the chosen head, at this same position
    return out


def _formula_heads(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    b, l, d = pos
    h = int(inp["heads"][b, l])
    return (
        f"out[{b}, {l}, {d}] = x[{b}, heads[{b}, {l}], {l}, {d}] = x[{b}, {h}, {l}, {d}] = "
        f"{fmt_value(inp['x'][b, h, l, d])}"
    )


question(
    "vision.select_heads",
    title="Pick one attention head per position",
    spec=_spec_heads,
    make=_make_heads,
    sizes=(
        dict(label="random shapes", B=2, H=3, L=4, Dh=5),
        dict(label="size-1 dims", B=1, H=1, L=1, Dh=1),
        dict(label="more heads than positions", B=2, H=6, L=2, Dh=3),
        dict(label="non-contiguous x", B=2, H=2, L=5, Dh=4, strided=True),
    ),
    large_sizes=(
        dict(label="random shapes", B=4, H=8, L=16, Dh=12),
        dict(label="non-contiguous x", B=3, H=4, L=9, Dh=7, strided=True),
    ),
    timing=dict(B=16, H=4, L=4096, Dh=32),
    timing_factor=5,  # bench_timing.py: the middle of the measured gap
    scaling=(dict(B=2, H=3, L=4, Dh=5), dict(B=4, H=6, L=8, Dh=10)),
    formula=_formula_heads,
    hints=(
        "The head is chosen along dim 1; the position `l` must stay lined up with `l`, "
        "and all `Dh` features of a position come from the same head. An index of size 1 "
        "in the L dim would read position 0 only.",
        "Make the index `[B, 1, L, Dh]`: give `heads` (`[B, L]`) a size-1 head dim and a "
        "feature dim, expand the feature dim to `Dh`, gather along dim 1, then drop the "
        "size-1 head dim.",
        "The gather gives `[B, 1, L, Dh]`, and `squeeze(1)` makes it `[B, L, Dh]`. "
        "Indexing with `None` adds a size-1 dim where it stands, and `expand` grows "
        "size-1 dims without copying (`-1` keeps a size): for `t` of shape `[5, 7]`, "
        "`t[:, None, :, None]` is `[5, 1, 7, 1]`, and `.expand(-1, 1, -1, 3)` makes it "
        "`[5, 1, 7, 3]`.",
    ),
    solution_code="""
def select_heads(x, heads):
    B, H, L, Dh = x.shape
    index = heads[:, None, :, None].expand(B, 1, L, Dh)    # [B, 1, L, Dh]
    return x.gather(1, index).squeeze(1)                    # [B, 1, L, Dh] -> [B, L, Dh]
""",
)
