"""Lectures 01 and 02 say what torch does, and the project asks for a torch that does it.

nbval re-runs every cell and compares its output; these tests check what nbval cannot:
that the torch floor matches the release lecture 01 names for int32 indices, that the
cells meant to raise do raise, that the prompts to predict stand before a cell to run,
that article 003's three parts are always named, and that no output is a long dump.
"""

from __future__ import annotations

import re

import nbformat
import pytest
import tomllib
import torch
from packaging.requirements import Requirement
from packaging.version import Version

from tests.helpers import ROOT

LECTURES = {
    name: ROOT / "notebooks" / f"{name}.ipynb"
    for name in ("01_basic_formula", "02_nlp_label_scores")
}
INT32_RELEASE = "2.8.0"  # the first torch whose gather takes int32 indices (lecture 01)


def lecture(name: str) -> nbformat.NotebookNode:
    return nbformat.read(LECTURES[name], as_version=4)


def torch_floor() -> str:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (spec,) = [Requirement(d).specifier for d in deps if Requirement(d).name == "torch"]
    return spec


def test_the_torch_floor_admits_no_release_without_int32_indices():
    spec = torch_floor()
    assert not spec.contains("2.7.1")
    assert spec.contains(INT32_RELEASE)


def test_lecture_01_names_the_release_and_the_installed_torch_agrees():
    text = "\n".join(
        c.source for c in lecture("01_basic_formula").cells if c.cell_type == "markdown"
    )
    assert f"from PyTorch **{INT32_RELEASE}** on also `int32`" in text
    assert "2.7.1" in text and "since PyTorch 2.x" not in text
    assert Version(torch.__version__.split("+")[0]) >= Version(INT32_RELEASE)
    out = torch.gather(torch.tensor([10, 20, 30]), 0, torch.tensor([2, 0], dtype=torch.int32))
    assert out.tolist() == [30, 10]


def test_an_empty_index_skips_every_check_but_dim():
    x = torch.zeros(2, 3)
    assert torch.gather(x, 0, torch.zeros(0, 2)).shape == (0, 2)  # float
    assert torch.gather(x, 0, torch.zeros(0, dtype=torch.long)).shape == (0,)  # fewer dims
    assert torch.gather(x, 0, torch.zeros(0, 9, dtype=torch.long)).shape == (0, 9)
    with pytest.raises(IndexError):
        torch.gather(x, 5, torch.zeros(0, 2, dtype=torch.long))


def test_take_keeps_the_shape_of_any_index():
    x = torch.arange(12).reshape(3, 4)
    lin = torch.tensor([[0, 5], [11, 6]])
    assert torch.take(x, lin).tolist() == [[0, 5], [11, 6]]
    with pytest.raises(IndexError):
        x.index_select(1, lin)


@pytest.mark.parametrize("name", LECTURES)
def test_cells_tagged_raises_exception_do_raise(name):
    tagged = [
        c
        for c in lecture(name).cells
        if "raises-exception" in c.get("metadata", {}).get("tags", [])
    ]
    assert tagged
    for cell in tagged:
        assert any(o.output_type == "error" for o in cell.outputs), cell.id


@pytest.mark.parametrize("name", LECTURES)
def test_every_predict_first_prompt_stands_right_before_a_code_cell(name):
    cells = lecture(name).cells
    prompts = [
        i
        for i, c in enumerate(cells)
        if c.cell_type == "markdown" and "**Predict first:**" in c.source
    ]
    assert len(prompts) >= 5
    for i in prompts:
        assert cells[i].source.rstrip().endswith("then run the cell."), cells[i].id
        assert cells[i + 1].cell_type == "code", cells[i].id


@pytest.mark.parametrize("name", LECTURES)
def test_article_003_is_always_cited_with_its_part(name):
    text = "\n".join(c.source for c in lecture(name).cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in lecture(name).cells if c.cell_type == "code")
    for source in (text, code):
        assert not re.search(r"\b003 §", source)
        assert "English half" not in source


@pytest.mark.parametrize("name", LECTURES)
def test_no_output_is_a_long_dump(name):
    for cell in lecture(name).cells:
        if cell.cell_type != "code":
            continue
        lines = 0
        for out in cell.outputs:
            if out.output_type == "stream":
                lines += out.text.rstrip("\n").count("\n") + 1
            elif out.output_type == "execute_result":
                lines += out.data.get("text/plain", "").count("\n") + 1
        assert lines <= 8, f"{name} cell {cell.id}: {lines} lines of output"
