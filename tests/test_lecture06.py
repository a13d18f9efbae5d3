"""Lecture 06's specifics: the torch behaviour it teaches, and how its stored notebook shows it."""

import re
from pathlib import Path

import nbformat
import pytest
import torch

from tests.lectures import TAKE_ALONG_DIM_WRAPS

NB = Path(__file__).resolve().parents[1] / "notebooks" / "06_gather_and_friends.ipynb"


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NB, as_version=4).cells


def text_of(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


# -- the installed torch still behaves as the lecture says -----------------------------------


def test_take_along_dim_wraps_where_gather_raises():  # from torch 2.10 on
    x = torch.arange(20.0).reshape(4, 5)
    for bad, column in ((5, 0), (7, 2), (-1, 4), (-6, 4)):
        if TAKE_ALONG_DIM_WRAPS:
            got = torch.take_along_dim(x, torch.full((4, 1), bad), dim=1).flatten()
            assert torch.equal(got, x[:, column]), bad
        else:  # 2.8 and 2.9 refuse it, like gather
            with pytest.raises(RuntimeError, match="out of bounds"):
                torch.take_along_dim(x, torch.full((4, 1), bad), dim=1)
        with pytest.raises(RuntimeError, match="out of bounds"):
            x.gather(1, torch.full((4, 1), bad))


def test_the_wrapping_is_one_remainder_pass_and_advanced_indexing_one_index_op():
    x, cols = torch.arange(20.0).reshape(4, 5), torch.tensor([[4, 0], [1, 1], [3, 2], [0, 4]])
    rows = torch.arange(4)[:, None]

    def allocating_ops(fn):
        fn()
        with torch.autograd.profiler.profile(profile_memory=True) as prof:
            fn()
        return [e.key for e in prof.key_averages() if e.self_cpu_memory_usage > 0]

    wrapping = ["aten::remainder"] if TAKE_ALONG_DIM_WRAPS else []
    assert allocating_ops(lambda: torch.take_along_dim(x, cols, dim=1)) == [
        *wrapping,
        "aten::gather",
    ]
    assert allocating_ops(lambda: x[rows, cols]) == ["aten::index"]
    assert allocating_ops(lambda: x.gather(1, cols)) == ["aten::gather"]


def test_float_sums_depend_on_order_and_integer_sums_do_not():
    slot = torch.zeros(3, dtype=torch.long)
    f32 = [
        torch.zeros(1).scatter_add(0, slot, torch.tensor(v)).item()
        for v in ([1e8, 1.0, -1e8], [1e8, -1e8, 1.0])
    ]
    assert f32 == [0.0, 1.0]
    i64 = {
        torch.zeros(1, dtype=torch.long).scatter_add(0, slot, torch.tensor(v)).item()
        for v in ([10**8, 1, -(10**8)], [10**8, -(10**8), 1])
    }
    assert i64 == {1}


def test_set_deterministic_debug_mode_is_the_use_deterministic_algorithms_switch():
    assert not torch.are_deterministic_algorithms_enabled()
    try:
        torch.set_deterministic_debug_mode("error")
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        torch.set_deterministic_debug_mode("default")
    doc = " ".join(torch.use_deterministic_algorithms.__doc__.split())
    assert ":func:`torch.Tensor.scatter_add_` when called on a CUDA tensor" in doc
    assert ":func:`torch.gather` when called on a CUDA tensor that requires grad" in doc
    assert ":func:`torch.index_select` when attempting to differentiate a CUDA tensor" in doc
    assert (
        ":func:`torch.Tensor.__getitem__` when attempting to differentiate a CPU tensor "
        "and the index is a list of tensors"
    ) in doc


# -- the stored lecture ------------------------------------------------------------------------


def test_every_predict_first_prompt_comes_before_a_code_cell(cells):
    prompts = [
        i
        for i, c in enumerate(cells)
        if c.cell_type == "markdown" and "**Predict first:**" in c.source
    ]
    assert len(prompts) >= 6
    assert all(cells[i + 1].cell_type == "code" for i in prompts)


def test_the_gradient_picture_is_stored_once(cells):
    (cell,) = [c for c in cells if c.cell_type == "code" and "draw_gather_grad(" in c.source]
    pngs = [o for o in cell.outputs if "image/png" in o.get("data", {})]
    assert len(pngs) == 1


def test_the_wrapping_trap_runs_and_gather_is_shown_raising(cells):
    code = [c for c in cells if c.cell_type == "code"]
    wraps = next(c for c in code if "torch.take_along_dim(x.cpu(), five" in c.source)
    assert text_of(wraps) == "tensor([ 0.,  5., 10., 15.])\n"  # stored with torch 2.13
    assert "except RuntimeError as err:" in wraps.source  # 2.8 and 2.9 refuse: said, not raised
    assert "torch-version-bound" in wraps.metadata.get("tags", [])
    raises = next(c for c in code if "x.cpu().gather(1, five)" in c.source)
    assert "raises-exception" in raises.metadata.get("tags", [])
    assert [o.output_type for o in raises.outputs] == ["error"]


def test_profiler_outputs_name_operators_and_never_times(cells):
    out = next(
        text_of(c)
        for c in cells
        if c.cell_type == "code" and "aten_ops(fn)" in c.source and "for name, fn" in c.source
    )
    assert "aten::remainder ×1, allocates 64 bytes" in out and "aten::index ×1" in out
    assert not re.search(r"\d\s*(us|µs|ms|ns)\b|USDT|\d{2}:\d{2}:\d{2}", out)


def test_the_timing_cell_prints_its_conclusions_from_its_own_numbers(cells):
    (timing,) = [c for c in cells if c.cell_type == "code" and c.source.startswith("# timing")]
    src = timing.source
    assert "torch.set_num_threads(1)" in src and "torch.set_num_threads(threads)" in src
    assert ".ratio(" in src and "fraction_of_copy(" in src and "pct > 100" in src
    after = cells[cells.index(timing) + 1].source
    assert not re.search(r"\d\s*×|\d\s*%", after), "a measured number in the prose after it"


def test_the_one_hot_way_of_section_3_is_not_called_a_matmul(cells):
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert '"one-hot multiply-and-sum"' in code and '"one-hot matmul"' not in code


def test_article_003_is_cited_with_its_part(cells):
    source = "\n".join(c.source for c in cells)
    assert not re.search(r"\b003 §", source)
    assert "003-C §5" in source and "003-A §4.1" in source  # the timing is only in 003-C
