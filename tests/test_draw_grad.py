"""draw_gather_grad: the picture of gather's backward (a scatter_add of grad_out)."""

import pytest
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from gather_course import GatherCourseError, draw_gather_grad
from tests.helpers import text_problems

G = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
I = torch.tensor([[0, 0, 3], [2, 1, 2]])  # input[0][0] and input[1][2] read twice


def texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


def test_returns_a_figure_with_the_sums_of_repeats_and_one_arrow_per_grad_out_cell():
    fig = draw_gather_grad(G, 1, I, (2, 4))
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    cells = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(cells) == G.numel() + 2 * 4  # grad_out cells, then grad_input
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == G.numel()
    expected = torch.zeros(2, 4).scatter_add(1, I, G)  # [[3, 0, 0, 3], [0, 5, 10, 0]]
    words = texts(fig)
    assert "1.0+2.0" in words and "4.0+6.0" in words  # the terms of each repeated cell
    for value in expected.flatten().tolist():
        assert f"{value:.1f}" in words
    assert "grad_input = zeros.scatter_add(1, index, grad_out)" in words


def test_an_arrow_has_the_colour_of_the_input_cell_it_points_to():
    fig = draw_gather_grad(G, 1, I, (2, 4))
    ax = fig.axes[0]
    cells = [p for p in ax.patches if isinstance(p, Rectangle)]
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    grad_in = cells[3:7] + cells[10:14]  # per row: 3 grad_out cells, 4 grad_input
    unread = {tuple(c.get_facecolor()) for c, v in zip(grad_in, [1, 0, 0, 1, 0, 1, 1, 0]) if not v}
    assert len(unread) == 1  # one grey for "never read"
    # arrows, row by row: into [0][0] twice and [0][3]; into [1][2] twice and [1][1]
    colour = [tuple(a.get_edgecolor()) for a in arrows]
    assert len(set(colour[:3])) == 2 and len(set(colour[3:])) == 2
    assert len(set(colour)) == 4  # four input cells read, four colours


@pytest.mark.parametrize(
    "g, dim, index, shape",
    [
        (G, 1, I, (2, 4)),
        (
            torch.tensor([[0.5, -1.25, 3.0], [4.0, 5.0, 6.0]]),
            0,
            torch.tensor([[0, 2, 1], [0, 2, 2]]),
            (3, 3),
        ),
        (torch.tensor([1.0, 2.0, 3.0, 4.0]), 0, torch.tensor([3, 3, 0, 3]), (5,)),
        (
            torch.arange(12.0).reshape(2, 2, 3),
            -1,
            torch.tensor([[[0, 0, 1], [2, 2, 2]], [[1, 0, 1], [0, 0, 0]]]),
            (2, 2, 3),
        ),
        (torch.tensor([[1.0, 2.0]]), 1, torch.tensor([[0, 0]]), (3, 2)),  # rows index never reaches
        (
            torch.linspace(-1, 1, 36).reshape(3, 12),
            1,
            torch.arange(36).reshape(3, 12) % 12,
            (3, 12),
        ),
    ],
)
def test_text_stays_readable_inside_and_apart(g, dim, index, shape):
    assert text_problems(draw_gather_grad(g, dim, index, shape)) == []


def test_draws_into_a_given_axes_and_never_shows():
    fig = Figure()
    ax = fig.add_subplot()
    assert draw_gather_grad(G, 1, I, torch.Size([2, 4]), ax=ax) is fig


@pytest.mark.parametrize(
    "args, words",
    [
        ((G, 1, torch.tensor([[0, 0, 4], [2, 1, 2]]), (2, 4)), "rejects"),
        ((G[:, :2], 1, I, (2, 4)), "grad_out has shape"),
        ((G, 1, I, "2x4"), "input_shape must be"),
        ((G, 1, I, (2, 4), "axes"), "ax must be"),
        ((torch.zeros(2, 13), 1, torch.zeros(2, 13, dtype=torch.long), (2, 4)), "too many"),
    ],
)
def test_bad_calls_say_what_is_wrong(args, words):
    with pytest.raises(GatherCourseError, match=words):
        draw_gather_grad(*args)
