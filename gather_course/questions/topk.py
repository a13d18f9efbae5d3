"""Top-k questions: choose the best patches, and put them back where they came from."""

from __future__ import annotations

from typing import Any

import torch

from .._i18n import _
from .._text import fmt_value
from ._cases import noncontig, randn, row_perms
from ._question import question

# -- topk.select_patches ------------------------------------------------------------


def _make_select(
    gen: torch.Generator, B: int, N: int, D: int, k: int, strided: bool = False
) -> dict[str, Any]:
    patches = randn(gen, B, N, D)
    # scores all different in a row: with ties, "the k best, highest first" has more than
    # one right order (argsort and topk break them differently). randn ties often enough:
    # 16 of 200 timing inputs (B=128, N=256) had a tied row, failing an honest argsort answer
    ranks = row_perms(gen, B, N).float() + 0.9 * torch.rand(B, N, generator=gen)
    scores = ranks * (4.0 / N) - 2.0
    return {"patches": noncontig(patches) if strided else patches, "scores": scores, "k": k}


def _ranked(scores_row: torch.Tensor) -> list[int]:
    """Patch numbers from the highest score to the lowest."""
    return sorted(range(len(scores_row)), key=lambda n: -float(scores_row[n]))


def _spec_select(patches: torch.Tensor, scores: torch.Tensor, k: int) -> torch.Tensor:
    B, N, D = patches.shape
    out = torch.empty(B, k, D, dtype=patches.dtype)
    for b in range(B):
        best = _ranked(scores[b])[:k]
        for j, n in enumerate(best):
            out[b, j] = patches[b, n]
    return out


def _formula_select(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    b, j, d = pos
    n = _ranked(inp["scores"][b].cpu())[j]
    return _(
        "out[{b}, {j}, {d}] = patches[{b}, n, {d}] with n = the patch of rank {j} "
        "(0 = highest) in scores[{b}] = {n} (score {score}), so patches[{b}, {n}, {d}] "
        "= {value}"
    ).format(
        b=b,
        j=j,
        d=d,
        n=n,
        score=fmt_value(inp["scores"][b, n]),
        value=fmt_value(inp["patches"][b, n, d]),
    )


question(
    "topk.select_patches",
    title="Keep the k best patches",
    spec=_spec_select,
    make=_make_select,
    sizes=(
        dict(label="random shapes", B=2, N=6, D=3, k=2),
        dict(label="k=1", B=3, N=4, D=2, k=1),
        dict(label="k=N", B=2, N=5, D=4, k=5),
        dict(label="D=1", B=2, N=7, D=1, k=3),
        dict(label="non-contiguous patches", B=2, N=8, D=5, k=4, strided=True),
    ),
    large_sizes=(
        dict(label="random shapes", B=8, N=49, D=16, k=12),
        dict(label="non-contiguous patches", B=4, N=30, D=9, k=30, strided=True),
    ),
    timing=dict(B=128, N=256, D=128, k=128),
    timing_factor=5,  # bench_timing.py: the middle of the measured gap
    scaling=(dict(B=2, N=6, D=3, k=2), dict(B=4, N=12, D=6, k=4)),
    formula=_formula_select,
    hints=(
        "Two steps: find the `[B, k]` indices of the best patches with `torch.topk` "
        "along dim 1 (highest first), then gather the patches they point to.",
        "A patch is a whole `D`-vector, so the index must say the same patch number for "
        "every feature: `[B, k]` -> `[B, k, 1]` -> `[B, k, D]` (unsqueeze, then expand). "
        "The gather along dim 1 returns the index's shape, `[B, k, D]`.",
        "In order: take the `.indices` of the top-k result (its `.values` are scores, "
        "not patch numbers), unsqueeze them at the end, expand that dim to `D`, and "
        "gather `patches` along dim 1. On a small example, scores `[[0.1, 0.9, 0.5]]` "
        "with `k=2` give the indices `[[1, 2]]`, so the answer is patches 1 then 2 of "
        "that sample.",
    ),
    solution_code="""
def select_patches(patches, scores, k):
    D = patches.size(-1)
    idx = torch.topk(scores, k, dim=1).indices               # [B, k], highest first
    return torch.gather(patches, 1, idx.unsqueeze(-1).expand(-1, -1, D))
""",
)


# -- topk.scatter_back --------------------------------------------------------------


def _make_back(
    gen: torch.Generator, B: int, K: int, D: int, n: int, dtype: torch.dtype = torch.float32
) -> dict[str, Any]:
    return {
        "selected": randn(gen, B, K, D, dtype=dtype),
        "indices": row_perms(gen, B, n)[:, :K],
        "n": n,
    }


def _spec_back(selected: torch.Tensor, indices: torch.Tensor, n: int) -> torch.Tensor:
    B, K, D = selected.shape
    out = torch.zeros(B, n, D, dtype=selected.dtype)
    for b in range(B):
        for k in range(K):
            out[b, indices[b, k]] = selected[b, k]
    return out


def _formula_back(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    b, i, d = pos
    row = [int(v) for v in inp["indices"][b]]
    if i in row:
        k = row.index(i)
        return _(
            "out[{b}, {i}, {d}] = selected[{b}, {k}, {d}] because indices[{b}, {k}] = {i}"
            ", = {value}"
        ).format(b=b, i=i, d=d, k=k, value=fmt_value(inp["selected"][b, k, d]))
    return _("out[{b}, {i}, {d}] = 0 because {i} does not appear in indices[{b}]").format(
        b=b, i=i, d=d
    )


question(
    "topk.scatter_back",
    title="Put selected patches back",
    spec=_spec_back,
    make=_make_back,
    sizes=(
        dict(label="random shapes", B=2, K=2, D=3, n=5),
        dict(label="all positions selected", B=2, K=4, D=2, n=4),
        dict(label="K=1", B=3, K=1, D=4, n=6),
        dict(label="float64", B=2, K=3, D=2, n=7, dtype=torch.float64),
    ),
    large_sizes=(
        dict(label="random shapes", B=8, K=12, D=16, n=49),
        dict(label="float64", B=4, K=20, D=5, n=30, dtype=torch.float64),
    ),
    timing=dict(B=128, K=128, D=128, n=256),
    timing_factor=3.5,  # bench_timing.py: the middle of the measured gap
    scaling=(dict(B=2, K=2, D=3, n=5), dict(B=4, K=4, D=6, n=10)),
    formula=_formula_back,
    hints=(
        "This is gather run backwards, with `scatter` along dim 1: it writes `src[b, k, d]` "
        "to `out[b, index[b, k, d], d]`.",
        "Start from zeros of shape `[B, n, D]` with `selected`'s dtype and device, and "
        "expand `indices` to `[B, K, D]` exactly as for gather (unsqueeze, then expand), "
        "so that every feature of a row goes to the same place.",
        "The method `new_zeros` makes zeros with a tensor's dtype and device, and "
        "`scatter` (without the trailing `_`) returns a new tensor. The pattern in 1-D: "
        "`torch.zeros(4).scatter(0, torch.tensor([2, 0]), torch.tensor([7., 8.]))` is "
        "`[8, 0, 7, 0]`.",
    ),
    solution_code="""
def scatter_back(selected, indices, n):
    B, K, D = selected.shape
    out = selected.new_zeros(B, n, D)                       # same dtype and device
    return out.scatter(1, indices.unsqueeze(-1).expand(-1, -1, D), selected)
""",
)
