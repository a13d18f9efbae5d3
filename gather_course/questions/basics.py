"""Questions on the formula itself: gather by hand, one pick per row, reading an index back."""

from __future__ import annotations

import itertools
from typing import Any

import torch

from .._gather_call import accepted_index_dtypes
from .._i18n import N_, _
from .._text import fmt_value
from ..explain import explain
from ..reference import gather_reference
from ._cases import at, distinct, gather_inputs, noncontig, randint, randn
from ._question import question

# -- basics.pick_per_row ------------------------------------------------------------


def _make_pick(
    gen: torch.Generator, R: int, C: int, K: int, strided: bool = False, integer_input: bool = False
) -> dict[str, Any]:
    x = randint(gen, 100, R, C) if integer_input else randn(gen, R, C)
    return {"x": noncontig(x) if strided else x, "cols": randint(gen, C, R, K)}


def _spec_pick(x: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    R, K = cols.shape
    out = torch.empty(R, K, dtype=x.dtype)
    for r in range(R):
        for k in range(K):
            out[r, k] = x[r, cols[r, k]]
    return out


def _formula_pick(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    r, k = pos
    c = int(inp["cols"][r, k])
    return f"out[{r}, {k}] = x[{r}, cols[{r}, {k}]] = x[{r}, {c}] = {fmt_value(inp['x'][r, c])}"


question(
    "basics.pick_per_row",
    title="One pick per row",
    spec=_spec_pick,
    make=_make_pick,
    sizes=(
        dict(label="random shapes", R=3, C=5, K=2),
        dict(label="size-1 dims", R=1, C=1, K=1),
        dict(label="more picks than columns", R=2, C=3, K=6),
        dict(label="integer input", R=4, C=4, K=4, integer_input=True),
        dict(label="non-contiguous inputs", R=3, C=6, K=3, strided=True),
    ),
    large_sizes=(
        dict(label="random shapes", R=16, C=40, K=7),
        dict(label="one row", R=1, C=50, K=9),
        dict(label="non-contiguous inputs", R=12, C=9, K=20, strided=True),
    ),
    timing=dict(R=250_000, C=2, K=8),
    timing_factor=12,  # bench_timing.py: the middle of the measured gap
    scaling=(dict(R=2, C=3, K=2), dict(R=8, C=12, K=6)),
    formula=_formula_pick,
    hints=(
        "Each row keeps its row number; only the column changes. Which `dim` is that?",
        "Changing the column means gathering along dim 1 of `x`. `cols` already has the "
        "output's shape `[R, K]` and as many dims as `x`, so it can be the index just as "
        "it is.",
        "The function `torch.gather` takes the tensor, the dim and the index, in that "
        "order, and returns a tensor of the index's shape. The same pattern on another "
        "tensor: for `t` of shape `[2, 4]` and `j = torch.tensor([[3], [0]])`, "
        "`torch.gather(t, 1, j)` is `[[t[0, 3]], [t[1, 0]]]`.",
    ),
    solution_code="""
def pick_per_row(x, cols):
    return torch.gather(x, 1, cols)      # out[r, k] = x[r, cols[r, k]]
""",
)


# -- basics.gather_loop -------------------------------------------------------------

question(
    "basics.gather_loop",
    title="gather by hand",
    task="return exactly what `torch.gather(input, dim, index)` returns (values, shape, "
    "dtype), written with Python loops and plain indexing, without `gather` or "
    "`take_along_dim`. Any rank, any `dim` (negative too).",
    spec=gather_reference,
    make=gather_inputs,
    sizes=(
        dict(label="2-D, dim=1", shape=(2, 3), dim=1, index_shape=(2, 2)),
        dict(label="1-D", shape=(5,), dim=0, index_shape=(3,)),
        dict(label="2-D, dim=0", shape=(3, 4), dim=0, index_shape=(2, 4)),
        dict(label="index smaller than input", shape=(3, 4), dim=-1, index_shape=(1, 2)),
        dict(label="3-D", shape=(2, 3, 4), dim=1, index_shape=(2, 2, 4)),
        dict(label="3-D, dim=-3", shape=(3, 2, 2), dim=-3, index_shape=(4, 2, 1)),
        dict(label="size-1 dims", shape=(1, 1, 1), dim=1, index_shape=(1, 3, 1)),
        dict(label="int32 index", shape=(2, 5), dim=1, index_shape=(2, 3), index_dtype=torch.int32),
        dict(label="integer input", shape=(3, 3), dim=0, index_shape=(3, 3), integer_input=True),
        dict(
            label="non-contiguous input",
            shape=(3, 4, 5),
            dim=2,
            index_shape=(3, 4, 2),
            strided=True,
        ),
    ),
    large_sizes=(
        dict(label="2-D, dim=1", shape=(6, 9), dim=1, index_shape=(6, 12)),
        dict(label="3-D, dim=0", shape=(5, 4, 3), dim=0, index_shape=(7, 4, 3)),
        dict(label="index smaller than input", shape=(4, 5, 6), dim=-2, index_shape=(2, 8, 3)),
        dict(
            label="int32 index", shape=(4, 6), dim=-1, index_shape=(4, 6), index_dtype=torch.int32
        ),
        dict(
            label="non-contiguous input",
            shape=(4, 5, 6),
            dim=1,
            index_shape=(4, 3, 6),
            strided=True,
            integer_input=True,
        ),
    ),
    scaling=(
        dict(shape=(2, 3), dim=1, index_shape=(2, 2)),
        dict(shape=(4, 6), dim=1, index_shape=(4, 4)),
    ),
    formula=lambda inp, which, pos: explain(inp["input"], inp["dim"], inp["index"], pos).text,
    hints=(
        "The output has **index's** shape and **input's** dtype (and device): start from "
        "an empty tensor like that, made with `torch.empty`, and fill it in one element "
        "at a time.",
        "Visit every position `pos` of `index`, a tuple of coordinates: "
        "`itertools.product` of one `range` per dim of `index` gives them all. The "
        "element to read is at `pos` with its `dim` coordinate replaced by the number "
        "stored in `index` at `pos`.",
        "A negative `dim` counts from the end, so turn it into a dim between 0 and "
        "`input.dim() - 1` first. Then, for each `pos`, copy it into a list, overwrite "
        "the entry at `dim` with the index value (a Python `int`), and read `input` at "
        "that tuple. For example, with a 3-D input and `dim=1`, if `index[0, 2, 1]` is 4 "
        "then `out[0, 2, 1]` is `input[0, 4, 1]`.",
    ),
    solution_code="""
import itertools

def gather_loop(input, dim, index):
    out = torch.empty(index.shape, dtype=input.dtype, device=input.device)
    dim = dim % input.dim()                      # -1 -> last dim
    for pos in itertools.product(*(range(s) for s in index.shape)):
        src = list(pos)                          # same position...
        src[dim] = int(index[pos])               # ...except along dim
        out[pos] = input[tuple(src)]
    return out
""",
    vectorized=False,
    forbid={"gather": "torch.gather or take_along_dim"},
)


# -- basics.reverse_index -----------------------------------------------------------

_SEED_INPUT = torch.arange(24).reshape(2, 3, 4)
_SEED_INDEX = torch.tensor([[[0, 0, 0, 0], [2, 2, 2, 2]], [[0, 0, 0, 0], [2, 2, 2, 2]]])


def _make_reverse(
    gen: torch.Generator,
    shape: tuple[int, ...] = (),
    dim: int = 0,
    index_shape: tuple[int, ...] = (),
    seed_example: bool = False,
) -> dict[str, Any]:
    if seed_example:
        return {
            "input": _SEED_INPUT.clone(),
            "output": torch.gather(_SEED_INPUT, 1, _SEED_INDEX),
            "dim": 1,
        }
    input = distinct(gen, *shape)
    index = randint(gen, shape[dim], *index_shape)
    return {"input": input, "output": torch.gather(input, dim, index), "dim": dim}


def _spec_reverse(input: torch.Tensor, output: torch.Tensor, dim: int) -> torch.Tensor:
    d = dim % input.dim()
    index = torch.empty(output.shape, dtype=torch.int64)
    for pos in itertools.product(*(range(s) for s in output.shape)):
        src = list(pos)
        for k in range(input.size(d)):  # search along dim for the value
            src[d] = k
            if input[tuple(src)] == output[pos]:
                index[pos] = k
    return index


def _verify_reverse(inp: dict[str, Any], index: torch.Tensor) -> Any:
    input, output, dim = inp["input"], inp["output"], inp["dim"]
    from ..diagnose import diagnose

    report = diagnose(input, dim, index)
    if not report.ok:
        p = report.problems[0]
        return (
            _("Gathering input along dim {dim} with your index fails: {message}").format(
                dim=dim, message=p.message
            ),
            [("fix", p.fix)],
        )
    got = torch.gather(input, dim, index)
    bad = (got != output).nonzero()
    if not len(bad):
        return None
    pos = tuple(int(p) for p in bad[0])
    return (
        _(
            "Gathering input along dim {dim} with your index differs from output in "
            "{count} of {total} places."
        ).format(dim=dim, count=len(bad), total=output.numel()),
        [
            (N_("first wrong element"), at("index", pos)),
            (
                "formula",
                _("{derivation}, but {where} = {value}").format(
                    derivation=explain(input, dim, index, pos).text,
                    where=at("output", pos),
                    value=fmt_value(output[pos]),
                ),
            ),
        ],
    )


question(
    "basics.reverse_index",
    title="Read the index back",
    task="`output` was made by `torch.gather(input, dim, index)`, and all values of `input` "
    "are different. Return an index such that `torch.gather(input, dim, index)` "
    "equals `output`.",
    spec=_spec_reverse,
    make=_make_reverse,
    sizes=(
        dict(label="the arange(24) example", seed_example=True),
        dict(label="1-D", shape=(6,), dim=0, index_shape=(4,)),
        dict(label="2-D, dim=0", shape=(3, 4), dim=0, index_shape=(2, 4)),
        dict(label="2-D, dim=-1", shape=(3, 5), dim=-1, index_shape=(3, 2)),
        dict(label="3-D", shape=(2, 3, 4), dim=2, index_shape=(2, 3, 4)),
        dict(label="index smaller than input", shape=(3, 4, 2), dim=1, index_shape=(2, 3, 1)),
    ),
    large_sizes=(
        dict(label="3-D", shape=(4, 5, 6), dim=1, index_shape=(4, 8, 6)),
        dict(label="2-D, dim=0", shape=(9, 7), dim=0, index_shape=(12, 5)),
    ),
    scaling=(
        dict(shape=(3, 4), dim=1, index_shape=(3, 2)),
        dict(shape=(6, 8), dim=1, index_shape=(6, 4)),
    ),
    hints=(
        "The index has the output's shape. For each output position, only the coordinate "
        "along `dim` is unknown: the other coordinates are the position's own.",
        "For `output[pos]`, search `input` along `dim` (all other coordinates equal to "
        "`pos`) for the same value: the place where you find it is `index[pos]`. Loops "
        "are allowed here.",
        "Without loops: since all values of `input` are different, you may search the "
        "whole input. Compare every output value with every input value (one reshaped to "
        "a column, the other to a row, and `==` broadcasts them to an `[output numel, input "
        "numel]` table), find the column of the match in each row (`argmax` does not take "
        "booleans: turn the table into integers first), and turn these flat positions "
        "into coordinates with `torch.unravel_index`. For example, flat position 7 of a "
        "`(2, 3, 4)` tensor is at `(0, 1, 3)`. Keep the coordinate of `dim` (a negative "
        "`dim` counts from the end) and give it the output's shape.",
    ),
    solution_code="""
def reverse_index(input, output, dim):
    dim = dim % input.dim()
    # where does each output value live in input? (the values are all different)
    match = output.reshape(-1, 1) == input.reshape(1, -1)    # [output numel, input numel]
    flat = match.int().argmax(dim=1)                          # flat position in input
    coords = torch.unravel_index(flat, input.shape)           # one tensor per dim
    return coords[dim].reshape(output.shape)
""",
    outputs=("index",),
    dtypes={"index": accepted_index_dtypes()},
    vectorized=False,
    verify=_verify_reverse,
)
