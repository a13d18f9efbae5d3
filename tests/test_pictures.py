"""The pictures: every stored figure is shown once, and draw_gather's text stays readable.

Two checks, each tried first on a deliberately bad case so that it is known to fail:

- no cell of a lecture notebook stores the same PNG twice (a helper that returns a figure
  which inline display also draws), and no PNG is stored in two cells unless listed in
  ``SAME_PICTURE_ON_PURPOSE``;
- every drawing of ``draw_gather`` keeps its text inside its axes, at 9 pt or more, and no
  two labels overlap (measured with matplotlib's own text extents after a draw).
"""

from __future__ import annotations

import base64
import hashlib

import nbformat
import pytest
import torch
from matplotlib.figure import Figure

from gather_course import draw_gather
from tests.helpers import ROOT, text_problems

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# (notebook name, cell id) pairs whose picture may repeat one stored elsewhere: none so far.
SAME_PICTURE_ON_PURPOSE: set[tuple[str, str]] = set()


# -- stored pictures -----------------------------------------------------------------------


def png_hashes(cell: nbformat.NotebookNode) -> list[str]:
    """The SHA-256 of every image/png output of a code cell, in order."""
    return [
        hashlib.sha256(base64.b64decode(out["data"]["image/png"])).hexdigest()
        for out in cell.get("outputs", [])
        if "data" in out and "image/png" in out["data"]
    ]


def picture_problems(nb: nbformat.NotebookNode, name: str = "nb") -> list[str]:
    """Cells that store one picture twice, and pictures stored in two cells."""
    problems, first_seen = [], {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        hashes = png_hashes(cell)
        if len(set(hashes)) < len(hashes):
            problems.append(
                f"{name} cell {cell.get('id')}: the same picture stored "
                f"{len(hashes) - len(set(hashes)) + 1} times (drawn twice)"
            )
        for h in dict.fromkeys(hashes):
            if h in first_seen and (name, cell.get("id")) not in SAME_PICTURE_ON_PURPOSE:
                problems.append(
                    f"{name} cell {cell.get('id')}: same picture as cell {first_seen[h]}"
                )
            first_seen.setdefault(h, cell.get("id"))
    return problems


def _png_output(data: bytes, kind: str = "display_data") -> nbformat.NotebookNode:
    out = {
        "output_type": kind,
        "metadata": {},
        "data": {"image/png": base64.b64encode(data).decode(), "text/plain": "<Figure>"},
    }
    if kind == "execute_result":
        out["execution_count"] = 1
    return nbformat.from_dict(out)


def test_the_picture_check_catches_a_figure_drawn_twice_and_a_repeated_picture():
    nb = nbformat.v4.new_notebook()
    twice = nbformat.v4.new_code_cell("show()", id="a")
    twice.outputs = [_png_output(b"one", "execute_result"), _png_output(b"one")]
    again = nbformat.v4.new_code_cell("show()", id="b")
    again.outputs = [_png_output(b"one")]
    other = nbformat.v4.new_code_cell("show()", id="c")
    other.outputs = [_png_output(b"two")]
    nb.cells = [twice, again, other]
    problems = picture_problems(nb)
    assert len(problems) == 2
    assert "cell a: the same picture stored 2 times" in problems[0]
    assert "cell b: same picture as cell a" in problems[1]
    nb.cells = [other]
    assert picture_problems(nb) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_lecture_stores_a_picture_twice(path):
    assert picture_problems(nbformat.read(path, as_version=4), path.stem) == []


# -- text inside its axes, readable, not overlapping ------------------------------------------


def test_the_text_check_catches_overlap_small_text_and_text_outside():
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.text(0.5, 0.5, "in[0][0]", fontsize=10)
    ax.text(0.52, 0.5, "in[1][1]", fontsize=10)  # on top of the first
    ax.text(0.1, 0.1, "tiny", fontsize=6)
    ax.text(1.2, 0.5, "outside", fontsize=10)
    problems = text_problems(fig)
    assert "'in[0][0]' overlaps 'in[1][1]'" in problems
    assert "'tiny' is 6.0 pt" in problems
    assert "'outside' leaves the axes" in problems
    assert len(problems) == 3


def test_the_text_check_catches_a_drawing_squeezed_into_a_small_axes():
    fig = Figure(figsize=(3, 1.5))  # far too small for a 3-D drawing
    draw_gather(
        torch.arange(24).reshape(2, 3, 4),
        1,
        torch.zeros(2, 2, 4, dtype=torch.long),
        ax=fig.add_subplot(),
    )
    assert any("overlaps" in p for p in text_problems(fig))


CALLS = {
    "1-D": (torch.arange(5), 0, torch.tensor([4, 0, 2])),
    "1-D single": (torch.tensor([7]), 0, torch.tensor([0, 0, 0])),
    "2-D dim=1": (torch.tensor([[10, 20, 30], [40, 50, 60]]), 1, torch.tensor([[0, 2], [1, 0]])),
    "2-D dim=0": (torch.arange(12).reshape(3, 4), 0, torch.tensor([[2, 0, 1, 2]])),
    "2-D dim=-1 one column": (torch.arange(6).reshape(3, 2), -1, torch.tensor([[1], [0], [1]])),
    "2-D floats": (
        torch.linspace(-1, 1, 12).reshape(3, 4),
        1,
        torch.tensor([[3, 0], [1, 1], [2, 0]]),
    ),
    "3-D dim=0": (torch.arange(24).reshape(2, 3, 4), 0, torch.tensor([[[1, 0, 1, 0]]])),
    "3-D dim=1": (
        torch.arange(24).reshape(2, 3, 4),
        1,
        torch.tensor([[[0] * 4, [2] * 4], [[0] * 4, [2] * 4]]),
    ),
    "3-D dim=2": (torch.arange(24).reshape(2, 3, 4), 2, torch.tensor([[[3], [0]], [[1], [2]]])),
    "3-D flattened map (lecture 03)": (
        torch.arange(12).reshape(1, 2, 6),
        2,
        torch.tensor([[[5, 1], [5, 1]]]),
    ),
    "3-D patches (lecture 04)": (
        torch.arange(24).reshape(1, 6, 4),
        1,
        torch.tensor([[4, 1]]).unsqueeze(-1).expand(-1, -1, 4),
    ),
    "3-D tall (lecture 05)": (
        torch.arange(32).reshape(1, 8, 4),
        1,
        torch.tensor([[5, 2]]).unsqueeze(-1).expand(-1, -1, 4),
    ),
    "12 x 12, hatched colours": (
        torch.arange(144).reshape(12, 12),
        1,
        torch.arange(12).repeat(12, 1),
    ),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_every_drawing_keeps_its_text_readable_inside_and_apart(call):
    assert text_problems(draw_gather(*call)) == []


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_a_checks_drawing_shows_as_a_picture_in_an_exercise_notebook(tmp_path, edition):
    """``exercise(...).check(fn).draw()``, as the feedback recommends, in an exercise notebook
    run by a kernel (nbclient, as JupyterLab runs it): the cell's output is a picture, not
    ``<Figure size 500x250 with 2 Axes>``. The exercise imports no pyplot and turns on no
    inline backend: the figure shows itself (gather_course/_figure.py)."""
    from nbclient import NotebookClient

    released = nbformat.read(ROOT / f"{edition}exercises/basics/basics.ipynb", as_version=4)
    setup = [
        c
        for c in released.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") in ("colab", "setup")
    ]
    asked = nbformat.v4.new_code_cell(
        'exercise("basics.pick_per_row").check(lambda x, c: x[:, c[0]]).draw()'
    )
    nb = nbformat.v4.new_notebook(cells=[*setup, asked], metadata=released.metadata)
    path = tmp_path / "basics.ipynb"
    nbformat.write(nb, path)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    shown = [o for o in nb.cells[-1].outputs if o.output_type == "execute_result"]
    assert len(shown) == 1 and "image/png" in shown[0].data, nb.cells[-1].outputs
    assert base64.b64decode(shown[0].data["image/png"])[:4] == b"\x89PNG"
    assert not [o for o in nb.cells[-1].outputs if o.output_type == "display_data"]  # once
