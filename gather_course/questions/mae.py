"""MAE questions: random masking with a given noise, and restoring the full sequence."""

from __future__ import annotations

from typing import Any

import torch

from .._gather_call import accepted_index_dtypes
from .._i18n import _
from .._text import fmt_value
from ._cases import noncontig, randn
from ._question import question

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _order(noise_row: torch.Tensor) -> list[int]:
    """Positions from the smallest noise to the largest (small is keep)."""
    return sorted(range(len(noise_row)), key=lambda l: float(noise_row[l]))


# -- mae.random_masking -------------------------------------------------------------


def _make_masking(
    gen: torch.Generator,
    N: int,
    L: int,
    D: int,
    mask_ratio: float,
    article: bool = False,
    strided: bool = False,
) -> dict[str, Any]:
    x = torch.arange(N * L * D).reshape(N, L, D) if article else randn(gen, N, L, D)
    return {
        "x": noncontig(x) if strided else x,
        "mask_ratio": mask_ratio,
        "noise": torch.rand(N, L, generator=gen),
    }


def _spec_masking(x: torch.Tensor, mask_ratio: float, noise: torch.Tensor):
    N, L, D = x.shape
    len_keep = int(L * (1 - mask_ratio))
    x_masked = torch.empty(N, len_keep, D, dtype=x.dtype)
    mask = torch.ones(N, L)
    ids_restore = torch.empty(N, L, dtype=torch.int64)
    for n in range(N):
        for rank, l in enumerate(_order(noise[n])):
            ids_restore[n, l] = rank  # where position l went in the shuffle
            if rank < len_keep:
                x_masked[n, rank] = x[n, l]  # kept, in order of increasing noise
                mask[n, l] = 0
    return x_masked, mask, ids_restore


def _formula_masking(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    noise, L = inp["noise"].cpu(), inp["x"].shape[1]
    len_keep = int(L * (1 - inp["mask_ratio"]))
    n = pos[0]
    order = _order(noise[n])
    if which == 0:
        j, d = pos[1], pos[2]
        l = order[j]
        return _(
            "len_keep = int({L} * (1 - {ratio})) = {keep}; x_masked[{n}, {j}, {d}] = "
            "x[{n}, ids_keep[{n}, {j}], {d}] where ids_keep = the positions sorted by "
            "increasing noise, so x[{n}, {l}, {d}] = {value}"
        ).format(
            L=L,
            ratio=inp["mask_ratio"],
            keep=len_keep,
            n=n,
            j=j,
            d=d,
            l=l,
            value=fmt_value(inp["x"][n, l, d]),
        )
    l = pos[1]
    rank = order.index(l)
    if which == 1:
        return _(
            "noise[{n}, {l}] is number {rank} (0 = smallest) of noise[{n}] and len_keep "
            "= {keep}, so mask[{n}, {l}] = {bit} (0 = kept, 1 = removed)"
        ).format(n=n, l=l, rank=rank, keep=len_keep, bit=0 if rank < len_keep else 1)
    return _(
        "ids_restore[{n}, {l}] = the rank of noise[{n}, {l}] in noise[{n}] (0 = smallest) = {rank}"
    ).format(n=n, l=l, rank=rank)


question(
    "mae.random_masking",
    title="MAE random masking",
    spec=_spec_masking,
    make=_make_masking,
    sizes=(
        dict(label="the arange(64) example", N=1, L=16, D=4, mask_ratio=0.75, article=True),
        dict(label="random shapes", N=3, L=8, D=5, mask_ratio=0.5),
        dict(label="len_keep rounds down", N=2, L=6, D=2, mask_ratio=0.75),
        dict(label="mask_ratio=0 keeps all", N=2, L=5, D=3, mask_ratio=0.0),
        dict(label="non-contiguous x", N=2, L=9, D=4, mask_ratio=0.6, strided=True),
    ),
    large_sizes=(
        dict(label="random shapes", N=8, L=49, D=16, mask_ratio=0.75),
        dict(label="len_keep rounds down", N=4, L=10, D=3, mask_ratio=0.75),
    ),
    timing=dict(N=64, L=1024, D=128, mask_ratio=0.75),
    timing_factor=5,  # bench_timing.py: the middle of the measured gap
    scaling=(dict(N=2, L=8, D=3, mask_ratio=0.5), dict(N=4, L=16, D=6, mask_ratio=0.5)),
    formula=_formula_masking,
    hints=(
        "Three steps: sort the positions by noise (`torch.argsort` along dim 1, smallest "
        "noise first), keep the first `len_keep` of them, and undo the sort for the mask.",
        "Gather the kept rows of `x` along dim 1 with an index of shape `[N, len_keep, D]` "
        "(the kept positions, unsqueezed and expanded, or MAE's `repeat`). `ids_restore` "
        "is the inverse of the sorting permutation: the `argsort` of the `argsort`. "
        "Build the float mask in sorted order (`len_keep` zeros, then ones), then gather "
        "it along dim 1 with `ids_restore` to put it back in the original order.",
        "Check the inverse on a small example: for `order = torch.tensor([2, 0, 3, 1])`, "
        "`torch.argsort(order)` is `[1, 3, 0, 2]`, and gathering `order` with it gives "
        "`[0, 1, 2, 3]`: gathering with the inverse undoes the shuffle. With `len_keep = 2` "
        "the sorted mask is `[0, 0, 1, 1]`; gathered with `[1, 3, 0, 2]` it becomes `[0, 1, 0, "
        "1]`: positions 2 and 0 are kept.",
    ),
    solution_code="""
def random_masking(x, mask_ratio, noise):
    N, L, D = x.shape
    len_keep = int(L * (1 - mask_ratio))
    ids_shuffle = torch.argsort(noise, dim=1)          # ascend: small is keep
    ids_restore = torch.argsort(ids_shuffle, dim=1)    # inverse permutation
    ids_keep = ids_shuffle[:, :len_keep]
    x_masked = torch.gather(x, 1, ids_keep.unsqueeze(-1).expand(-1, -1, D))
    mask = torch.ones(N, L, device=x.device)           # 0 is keep, 1 is remove
    mask[:, :len_keep] = 0
    mask = torch.gather(mask, 1, ids_restore)          # unshuffle
    return x_masked, mask, ids_restore
""",
    outputs=("x_masked", "mask", "ids_restore"),
    dtypes={"mask": _FLOATS, "ids_restore": accepted_index_dtypes()},
)


# -- mae.restore_sequence -----------------------------------------------------------


def _make_restore(
    gen: torch.Generator, N: int, L: int, D: int, keep: int, strided: bool = False
) -> dict[str, Any]:
    ids_restore = torch.argsort(torch.argsort(torch.rand(N, L, generator=gen), dim=1), dim=1)
    x_visible = randn(gen, N, keep, D)
    return {
        "x_visible": noncontig(x_visible) if strided else x_visible,
        "mask_token": randn(gen, D),
        "ids_restore": ids_restore,
    }


def _spec_restore(
    x_visible: torch.Tensor, mask_token: torch.Tensor, ids_restore: torch.Tensor
) -> torch.Tensor:
    N, len_keep, D = x_visible.shape
    L = ids_restore.shape[1]
    out = torch.empty(N, L, D, dtype=x_visible.dtype)
    for n in range(N):
        for l in range(L):
            j = int(ids_restore[n, l])  # where position l sits in the shuffle
            out[n, l] = x_visible[n, j] if j < len_keep else mask_token
    return out


def _formula_restore(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    n, l, d = pos
    j = int(inp["ids_restore"][n, l])
    keep = inp["x_visible"].shape[1]
    if j < keep:
        return (
            f"out[{n}, {l}, {d}] = x_visible[{n}, ids_restore[{n}, {l}], {d}] = "
            f"x_visible[{n}, {j}, {d}] = {fmt_value(inp['x_visible'][n, j, d])}"
        )
    return _(
        "out[{n}, {l}, {d}] = mask_token[{d}] = {value} because ids_restore[{n}, {l}] = "
        "{j} >= len_keep = {keep} (a removed position)"
    ).format(n=n, l=l, d=d, value=fmt_value(inp["mask_token"][d]), j=j, keep=keep)


question(
    "mae.restore_sequence",
    title="Restore the full sequence",
    spec=_spec_restore,
    make=_make_restore,
    sizes=(
        dict(label="random shapes", N=2, L=8, D=3, keep=2),
        dict(label="nothing removed", N=2, L=4, D=2, keep=4),
        dict(label="one kept", N=3, L=5, D=4, keep=1),
        dict(label="non-contiguous x_visible", N=2, L=6, D=5, keep=3, strided=True),
    ),
    large_sizes=(
        dict(label="random shapes", N=8, L=49, D=16, keep=12),
        dict(label="non-contiguous x_visible", N=4, L=16, D=6, keep=4, strided=True),
    ),
    timing=dict(N=512, L=2048, D=4, keep=512),
    timing_factor=4.5,  # bench_timing.py: the middle of the measured gap
    scaling=(dict(N=2, L=8, D=3, keep=2), dict(N=4, L=16, D=6, keep=4)),
    formula=_formula_restore,
    hints=(
        "First append `L - len_keep` copies of `mask_token` after the visible tokens: "
        "that is the full sequence, still in shuffled order. Then one gather puts it "
        "back in order.",
        "The token `mask_token` is `[D]`: `expand` it to `[N, L - len_keep, D]` (no copy "
        "needed) and `torch.cat` along dim 1 gives `[N, L, D]`. `ids_restore[n, l]` says "
        "where original position `l` sits in that shuffled sequence, so gather along dim "
        "1 with it, expanded to `[N, L, D]`.",
        "On a small example with `D = 1`: visible tokens `[a, b]` and one mask token "
        "`m`, so the shuffled sequence is `[a, b, m]`; with `ids_restore = [2, 0, 1]` "
        "the gather reads positions 2, 0, 1 and gives `[m, a, b]`. For `D > 1`, "
        "unsqueeze `ids_restore` at the end and expand it to `D`, so that all features "
        "of a token move together.",
    ),
    solution_code="""
def restore_sequence(x_visible, mask_token, ids_restore):
    N, len_keep, D = x_visible.shape
    L = ids_restore.shape[1]
    mask_tokens = mask_token.expand(N, L - len_keep, D)
    full = torch.cat([x_visible, mask_tokens], dim=1)        # shuffled order
    return full.gather(1, ids_restore.unsqueeze(-1).expand(-1, -1, D))
""",
)
