"""gather's friends: its gradient built with scatter_add, and gather through torch.take."""

from __future__ import annotations

import itertools
from typing import Any

import torch

from .._gather_call import source_position
from .._i18n import _
from .._text import fmt_value
from ..explain import explain
from ..reference import gather_reference
from ._cases import at, gather_inputs, randint, randn
from ._question import question, register
from .nlp import MASKED_NLL

# -- friends.gather_backward --------------------------------------------------------


def _make_backward(
    gen: torch.Generator,
    shape: tuple[int, ...],
    dim: int,
    index_shape: tuple[int, ...],
    dtype: torch.dtype = torch.float32,
    high: int | None = None,
) -> dict[str, Any]:
    index = randint(gen, high or shape[dim], *index_shape)
    return {
        "grad_out": randn(gen, *index_shape, dtype=dtype),
        "dim": dim,
        "index": index,
        "input_shape": torch.Size(shape),
    }


def _readers(dim: int, index: torch.Tensor, target: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The positions q of index whose gather reads input[target]."""
    d = dim % index.dim()
    found = []
    for q in itertools.product(*(range(s) for s in index.shape)):
        if source_position(q, d, index) == tuple(target):
            found.append(q)
    return found


def _spec_backward(
    grad_out: torch.Tensor, dim: int, index: torch.Tensor, input_shape: torch.Size
) -> torch.Tensor:
    grad = torch.zeros(input_shape, dtype=grad_out.dtype)
    d = dim % index.dim()
    for q in itertools.product(*(range(s) for s in index.shape)):
        grad[source_position(q, d, index)] += grad_out[q]  # every read sends its gradient back
    return grad


def _formula_backward(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    readers = _readers(inp["dim"], inp["index"].cpu(), pos)
    if not readers:
        return _("grad{pos} = 0: no element of the output reads input{pos}").format(pos=list(pos))
    terms = " + ".join(at("grad_out", q) for q in readers[:4]) + (
        " + ..." if len(readers) > 4 else ""
    )
    total = sum(float(inp["grad_out"][q]) for q in readers)
    return _(
        "grad{pos} = sum of grad_out over the {n} output element(s) that read "
        "input{pos} = {terms} = {total}"
    ).format(pos=list(pos), n=len(readers), terms=terms, total=fmt_value(total))


question(
    "friends.gather_backward",
    title="The gradient of gather",
    task="`out = torch.gather(input, dim, index)` and `grad_out` is the gradient of the loss "
    "with respect to `out`. Return the gradient with respect to `input` (shape "
    "`input_shape`, dtype of `grad_out`), built with `scatter_add`. Indices may repeat.",
    spec=_spec_backward,
    make=_make_backward,
    sizes=(
        dict(label="repeated indices", shape=(2, 3), dim=1, index_shape=(2, 4), high=2),
        dict(label="1-D", shape=(5,), dim=0, index_shape=(7,)),
        dict(label="index smaller than input", shape=(4, 5), dim=0, index_shape=(2, 3)),
        dict(label="3-D, dim=-1", shape=(2, 3, 4), dim=-1, index_shape=(2, 2, 6)),
        dict(label="float64", shape=(3, 3), dim=1, index_shape=(3, 3), dtype=torch.float64),
    ),
    large_sizes=(
        dict(label="repeated indices", shape=(8, 10), dim=1, index_shape=(8, 30), high=3),
        dict(label="3-D, dim=0", shape=(6, 5, 4), dim=0, index_shape=(9, 5, 2)),
    ),
    timing=dict(shape=(1024, 1024), dim=1, index_shape=(1024, 8192)),
    timing_factor=14,  # bench_timing.py: the middle of the measured gap
    scaling=(
        dict(shape=(2, 3), dim=1, index_shape=(2, 4)),
        dict(shape=(4, 6), dim=1, index_shape=(4, 8)),
    ),
    formula=_formula_backward,
    hints=(
        "Each output element read one input element, so its gradient goes back to that "
        "element; elements read twice get the sum of both gradients, and elements never "
        "read get 0.",
        "The call `scatter_add(dim, index, src)` sends each `src` element to the place "
        "that gather read for it and adds it there: in 2-D with `dim=1`, `grad[i, index[i, j]] += "
        "src[i, j]`. Duplicates add up; plain `scatter` would keep only one of them. Start from "
        "zeros of `input_shape` with `grad_out`'s dtype and device.",
        "On a 1-D example: gathering `[10., 20., 30.]` with the index `[2, 2, 0]` reads "
        "`[30., 30., 10.]`. With the upstream gradient `[1., 2., 3.]`, "
        "`torch.zeros(3).scatter_add(0, torch.tensor([2, 2, 0]), torch.tensor([1., 2., 3.]))` "
        "is `[3., 0., 3.]`, what autograd gives: element 2 gets 1 + 2, element 1 was "
        "never read. Check your answer against autograd the same way: `x.requires_grad_()`, "
        "`x.gather(dim, index).backward(grad_out)`, then compare with `x.grad`.",
    ),
    solution_code="""
def gather_backward(grad_out, dim, index, input_shape):
    grad = torch.zeros(input_shape, dtype=grad_out.dtype, device=grad_out.device)
    return grad.scatter_add(dim, index, grad_out)    # repeated indices add up
""",
    require={"scatter_add": "scatter_add (or scatter_add_)"},
)


# -- friends.gather_via_take --------------------------------------------------------


def _formula_take(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    input, dim, index = inp["input"], inp["dim"], inp["index"]
    d = dim % input.dim()
    src = source_position(pos, d, index)
    strides = [1] * input.dim()
    for k in range(input.dim() - 2, -1, -1):
        strides[k] = strides[k + 1] * input.size(k + 1)
    linear = sum(c * s for c, s in zip(src, strides))
    terms = " + ".join(f"{c}*{s}" for c, s in zip(src, strides))
    return _(
        "{derivation}; its linear position in input.flatten() is {terms} = {linear} "
        "(row-major strides of input's shape {shape})"
    ).format(
        derivation=explain(input, dim, index, pos).text,
        terms=terms,
        linear=linear,
        shape=list(input.shape),
    )


question(
    "friends.gather_via_take",
    title="gather through torch.take",
    task="Return `torch.gather(input, dim, index)` computed with `torch.take` on linear "
    "indices (no gather). `torch.take` reads `input` as if it were flattened in "
    "row-major order, whatever its memory layout.",
    spec=gather_reference,
    make=gather_inputs,
    sizes=(
        dict(label="2-D, dim=1", shape=(3, 4), dim=1, index_shape=(3, 2)),
        dict(label="1-D", shape=(6,), dim=0, index_shape=(4,)),
        dict(label="2-D, dim=0", shape=(3, 4), dim=0, index_shape=(5, 4)),
        dict(label="index smaller than input", shape=(4, 5, 3), dim=-2, index_shape=(2, 6, 2)),
        dict(
            label="non-contiguous input",
            shape=(3, 4, 5),
            dim=2,
            index_shape=(3, 4, 2),
            strided=True,
        ),
    ),
    large_sizes=(
        dict(label="3-D, dim=0", shape=(6, 5, 4), dim=0, index_shape=(9, 5, 4)),
        dict(
            label="non-contiguous input",
            shape=(5, 6, 7),
            dim=1,
            index_shape=(5, 8, 3),
            strided=True,
        ),
    ),
    timing=dict(shape=(512, 1024), dim=1, index_shape=(512, 2048)),
    timing_factor=2.7,  # bench_timing.py: the middle of the measured gap
    scaling=(
        dict(shape=(3, 4), dim=1, index_shape=(3, 2)),
        dict(shape=(6, 8), dim=1, index_shape=(6, 4)),
    ),
    formula=_formula_take,
    hints=(
        "As `torch.take` reads `input` flattened, compute, for every output position, "
        "the linear position of the element gather would read. An element at coordinates "
        "`(c0, c1, ...)` of a row-major tensor of shape `(s0, s1, ...)` sits at "
        "`c0*stride0 + c1*stride1 + ...`, with `stride_last = 1` and `stride_k = stride_(k+1) * "
        "s_(k+1)`.",
        "For output position `pos`, the coordinates are `pos` except along `dim`, where "
        "they are `index[pos]`. Build each coordinate as a tensor that broadcasts to "
        "index's shape: `index` itself for `dim`, and for every other dim `k` an "
        "`arange` over index's size `k`, viewed with size 1 in all the other dims.",
        "Use the strides of input's **shape**, not `input.stride()`: `torch.take` "
        "ignores the memory layout, so the strides of a non-contiguous input would be "
        "wrong. On a `[2, 3, 4]` input with `dim=1` the strides are `(12, 4, 1)`; the "
        "output element at `(1, 0, 2)` with `index[1, 0, 2] = 2` reads coordinates `(1, 2, 2)`, "
        "at linear position `1*12 + 2*4 + 2*1 = 22`. Add up such terms over the dims, as "
        "whole tensors, and `take` from `input` at the sum.",
    ),
    solution_code="""
def gather_via_take(input, dim, index):
    dim = dim % input.dim()
    strides = [1] * input.dim()                       # row-major strides of the shape
    for k in range(input.dim() - 2, -1, -1):
        strides[k] = strides[k + 1] * input.size(k + 1)
    linear = torch.zeros(index.shape, dtype=torch.long, device=index.device)
    for k in range(input.dim()):
        if k == dim:
            coord = index.long()
        else:
            view = [1] * index.dim()
            view[k] = index.size(k)
            coord = torch.arange(index.size(k), device=index.device).view(view)
        linear = linear + coord * strides[k]
    return torch.take(input, linear)
""",
    require={"take": "torch.take"},
    forbid={"gather": "torch.gather or take_along_dim"},
)


# -- nlp.masked_nll: defined with the other nlp questions, graded in this assignment ------------

register(MASKED_NLL)
