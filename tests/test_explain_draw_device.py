"""explain, draw_gather and default_device."""

import itertools
import math

import matplotlib
import pytest
import torch
from matplotlib.figure import Figure

from gather_course import GatherCourseError, default_device, draw_gather, explain

X = torch.tensor([[10, 20, 30], [40, 50, 60]])
I = torch.tensor([[0, 2], [1, 0]])


def test_explain_seed_example():
    e = explain(X, 1, I, (1, 0))
    assert str(e) == "out[1][0] = input[1][index[1][0]] = input[1][1] = 50"
    assert e.value == 50 and e._repr_markdown_().startswith("`out[1][0]")


def test_explain_3d_dim0_negative_position_and_float():
    x = torch.arange(24.0).reshape(2, 3, 4)
    idx = torch.tensor([[[1, 0, 0, 0]]])
    assert str(explain(x, 0, idx, (0, 0, 0))) == (
        "out[0][0][0] = input[index[0][0][0]][0][0] = input[1][0][0] = 12.0"
    )
    assert str(explain(x, -3, idx, (-1, -1, -1))).endswith("= 3.0")


def test_explain_1d_int_position():
    assert str(explain(torch.tensor([10, 20, 30]), 0, torch.tensor([2, 0]), 0)) == (
        "out[0] = input[index[0]] = input[2] = 30"
    )


@pytest.mark.parametrize(
    "position, words",
    [
        ((2, 0), "not a position of the output"),
        ((0,), "give 2 coordinate(s)"),
        ("a", "position must be an int or a tuple"),
    ],
)
def test_explain_bad_position(position, words):
    with pytest.raises(
        GatherCourseError, match=r"(?s).*" + words.replace("(", r"\(").replace(")", r"\)")
    ):
        explain(X, 1, I, position)


def test_explain_invalid_call():
    with pytest.raises(GatherCourseError, match="cannot explain"):
        explain(X, 1, torch.tensor([[5]]), (0, 0))


def cells(ax):
    return [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)]


def test_draw_returns_figure_and_ties_output_colours_to_input():
    fig = draw_gather(X, 1, I)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    rects = cells(ax)
    assert len(rects) == 6 + 4 + 4  # input, index, output cells
    inp, idx, out = rects[:6], rects[6:10], rects[10:]
    colour = lambda r: tuple(r.get_facecolor())
    # out[r][c] reads input[r][I[r][c]]: same colour; index cell too
    for k, (r, c) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        src = r * 3 + int(I[r, c])
        assert colour(out[k]) == colour(inp[src]) == colour(idx[k])
    # input[0][1] = 20 and input[1][2] = 60 are never read: they share the "unread" grey
    assert colour(inp[1]) == colour(inp[5]) != colour(inp[0])
    texts = {t.get_text() for t in ax.texts}
    assert {"dim=1", "in[1][1]", "50", "40"} <= texts


def _lab(rgb):
    """sRGB (0-1) to CIELAB, D65: distances in it follow what the eye tells apart."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    xyz = [
        sum(m * c for m, c in zip(row, lin))
        for row in ((0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505))
    ]
    f = [
        t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
        for t in (xyz[0] / 0.95047, xyz[1], xyz[2] / 1.08883)
    ]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_draw_colours_are_told_apart_and_labels_are_readable():
    # 12 positions along dim: 12 different looks, the hues far apart, no text under 9 pt
    fig = draw_gather(torch.arange(144).reshape(12, 12), 1, torch.arange(12).repeat(12, 1))
    ax = fig.axes[0]
    first_index_row = cells(ax)[144:156]
    looks = {(tuple(r.get_facecolor()), r.get_hatch()) for r in first_index_row}
    assert len(looks) == 12
    hues = {tuple(r.get_facecolor()[:3]) for r in first_index_row if not r.get_hatch()}
    assert len(hues) == 9
    closest = min(math.dist(_lab(a), _lab(b)) for a, b in itertools.combinations(hues, 2))
    assert closest > 15, closest  # the old pastel palette: 6.4
    assert min(t.get_fontsize() for t in ax.texts) >= 9
    # every cell of input column k is read by an index value k: all have that colour
    assert {tuple(r.get_facecolor()) for r in cells(ax)[0:144:12]} == {
        tuple(first_index_row[0].get_facecolor())
    }


def test_draw_uses_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert draw_gather(torch.arange(5), 0, torch.tensor([4, 0]), ax=ax) is fig


def test_draw_3d_and_1d():
    fig = draw_gather(torch.arange(24).reshape(2, 3, 4), 1, torch.zeros(2, 2, 4, dtype=torch.long))
    assert len(cells(fig.axes[0])) == 24 + 16 + 16
    assert len(cells(draw_gather(torch.arange(5), 0, torch.tensor([0, 2, 4])).axes[0])) == 11


@pytest.mark.parametrize(
    "args, words",
    [
        (
            (torch.zeros(2, 2, 2, 2), 0, torch.zeros(1, 1, 1, 1, dtype=torch.long)),
            "1-D, 2-D and 3-D",
        ),
        ((torch.zeros(20, 3), 0, torch.zeros(1, 3, dtype=torch.long)), "too large"),
        ((torch.zeros(2, 3), 1, torch.zeros(2, 3)), "cannot draw"),
    ],
)
def test_draw_refuses_clearly(args, words):
    with pytest.raises(GatherCourseError, match=words):
        draw_gather(*args)


def test_draw_rejects_non_axes():
    with pytest.raises(GatherCourseError, match="ax must be a matplotlib Axes"):
        draw_gather(X, 1, I, ax="left")


def test_default_device(monkeypatch):
    monkeypatch.delenv("GATHER_COURSE_DEVICE", raising=False)
    assert default_device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setenv("GATHER_COURSE_DEVICE", "cpu")
    assert default_device() == torch.device("cpu")
    monkeypatch.setenv("GATHER_COURSE_DEVICE", "gpu please")
    with pytest.raises(GatherCourseError, match="must name a torch device"):
        default_device()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA message")
def test_default_device_cuda_without_cuda(monkeypatch):
    monkeypatch.setenv("GATHER_COURSE_DEVICE", "cuda")
    with pytest.raises(GatherCourseError, match="sees no CUDA device"):
        default_device()
