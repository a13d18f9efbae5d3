"""The claims of lectures 01, 02 and 04, checked: what their sentences say is what torch does,
what the stored outputs show, and what the articles print.

nbval re-runs the cells and compares their outputs; these tests check what it cannot: that a
sentence matches the output it talks about, that a cost holds on any machine (a ratio, never a
time), that an article's printed numbers follow (or not) from the article's own inputs, and
that the lessons of lecture 04 (the scatter check, ties in topk, no gradient through indices)
hold for the installed torch.
"""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from torch.utils import benchmark

import gather_course
from gather_course import default_device
from tests.lectures import NOTEBOOKS, article, cell, cells, needs_seeds, printed

LECTURES = ("01_basic_formula", "02_nlp_label_scores", "04_topk_patch_selection")
EVERY_LECTURE = sorted(p.stem for p in NOTEBOOKS.glob("[0-9]*.ipynb"))


def run_cell(name: str, cell_id: str, namespace: dict) -> dict:
    """Run one cell's code (no magics) in ``namespace``, on the CPU, and return the namespace."""
    exec(cell(name, cell_id).source, namespace)  # noqa: S102 - the course's own lecture code
    return namespace


# -- every lecture ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", EVERY_LECTURE)
def test_the_lecture_imports_only_public_names_of_the_package(name):
    code = "\n".join(c.source for c in cells(name) if c.cell_type == "code")
    assert not re.search(r"^\s*import gather_course|from gather_course\.", code, re.M)
    for names in re.findall(r"from gather_course import ([^\n]+)", code):
        assert set(re.split(r",\s*", names.strip())) <= set(gather_course.__all__), names


@pytest.mark.parametrize("name", LECTURES)
def test_only_timing_cells_time_and_no_sentence_carries_a_measured_number(name):
    nb = cells(name)
    for c in nb:
        if c.cell_type == "code" and re.search(
            r"\bTimer\b|time\.(perf_counter|time)\(|compare\(", c.source
        ):
            assert c.source.startswith("# timing"), c.id
        if c.cell_type == "code" and c.source.startswith("# timing"):
            assert "nbval-ignore-output" in c.metadata.get("tags", []), c.id
    text = "\n".join(c.source for c in nb if c.cell_type == "markdown")
    assert not re.search(
        r"\d\s*(µs|us|ms|ns|s)\b", text
    )  # a time belongs in a timing cell's output
    # a ratio in prose is a bound that holds on any machine, asserted below ("at least N times")
    assert not re.search(r"(?<!at least )\b\d[\d,.]*\s*times (as long|faster|slower)", text)


@pytest.mark.parametrize("name", LECTURES)
def test_no_lecture_calls_an_article_printout_irreproducible(name):
    text = "\n".join(c.source for c in cells(name) if c.cell_type == "markdown")
    assert not re.search(r"cannot be reproduced|depends? on the model|unreproducible", text)


def test_every_predict_first_prompt_of_lecture_04_stands_right_before_a_code_cell():
    nb = cells("04_topk_patch_selection")
    prompts = [i for i, c in enumerate(nb) if "**Predict first:**" in c.source]
    assert len(prompts) >= 7
    for i in prompts:
        assert nb[i].source.rstrip().endswith("then run the cell."), nb[i].id
        assert nb[i + 1].cell_type == "code", nb[i].id


# -- lecture 01 -------------------------------------------------------------------------------


def test_lecture_01_promises_exactly_what_lecture_06_measures():
    (sentence,) = [
        p
        for p in cell("01_basic_formula", "c24c").source.split("\n\n")
        if "lecture 06" in p.lower()
    ]
    for part in ("`gather`, `index_select`, `take`", "advanced indexing", "outside the timing"):
        assert part in sentence
    assert "torch.utils.benchmark" in sentence and "ratios computed in its own run" in sentence
    assert not re.search(r"faster|slower|quicker|×|%", sentence)
    assert not re.search(r"\d", sentence.replace("06", ""))  # no numbers


def test_the_strides_are_the_first_line_of_the_3d_example():
    assert (
        "The first line of the output shows the strides." in cell("01_basic_formula", "c30").source
    )
    first = printed(cell("01_basic_formula", "c31")).splitlines()[0]
    assert first == "(2, 1, 0)"


def test_the_loop_shown_is_gather_references_with_its_helper_inlined():
    from gather_course import reference
    from gather_course._gather_call import source_position

    assert "source_position(pos, d, index)" in open(reference.__file__).read()
    assert source_position((1, 2), 1, torch.tensor([[0, 0, 3], [1, 4, 0]])) == (1, 0)
    assert "`source_position` written inline" in cell("01_basic_formula", "c02").source


def test_an_index_may_be_longer_than_input_along_dim_and_index_select_takes_0d():
    x = torch.arange(6).reshape(2, 3)
    assert torch.gather(x, 1, torch.tensor([[2, 2, 0, 1, 1]] * 2)).shape == (2, 5)
    assert x.index_select(1, torch.tensor(2)).tolist() == [[2], [5]]


def test_the_first_two_calls_are_the_ones_whose_messages_are_shown():
    source = cell("01_basic_formula", "c41").source
    assert "torch.tensor([[0.0, 2.0], [1.0, 0.0]])" in source  # the same float index as c39
    assert "torch.tensor([[0.0, 2.0], [1.0, 0.0]])" in cell("01_basic_formula", "c39").source


@needs_seeds
def test_article_001_calls_no_gather_in_its_shape_mismatch_example():
    text = article("001")
    section = text[text.index("6.1 形状不匹配") : text.index("6.2 索引越界")]
    assert "randn(3, 4, 5)" in section and "gather" not in section and "dim" not in section


# -- lecture 02 -------------------------------------------------------------------------------

ARTICLE_004_LOGITS = [  # article 004, 「实际数值示例」, the logits after 「例如」, as printed
    [0.5, 1.2, -0.3, 2.1, 0.8, -0.5, 1.0, 0.3, -0.2, 0.7],
    [0.3, -0.5, 1.8, 0.2, 1.5, 0.9, -0.3, 0.6, 1.1, 0.4],
    [1.0, 0.4, 0.7, -0.2, 0.5, 1.3, 0.8, 1.6, 0.2, -0.1],
]
ARTICLE_004_IDS = [3, 2, 7]
ARTICLE_004_RESULT = [-0.82, -1.15, -0.73]


@needs_seeds
def test_the_article_004_numbers_are_copied_from_the_article():
    text = article("004")
    for row in ARTICLE_004_LOGITS:
        assert "[" + ", ".join(str(v) for v in row) + "]" in text
    assert "input_ids = torch.tensor([[3, 2, 7]])" in text
    assert "# 结果：[[-0.82, -1.15, -0.73]]" in text


def test_article_004_prints_a_result_its_printed_logits_cannot_give():
    logits = torch.tensor([ARTICLE_004_LOGITS])
    ids = torch.tensor([ARTICLE_004_IDS]).unsqueeze(-1)
    log_probs = F.log_softmax(logits, dim=-1)
    got = log_probs.gather(2, ids).squeeze(-1)[0]
    assert got.round(decimals=2).tolist() == pytest.approx([-1.06, -1.35, -1.48])
    # the ids are each row's most likely token: no other id gets closer to the article
    assert torch.equal(got, log_probs.max(-1).values[0])
    # each printed logit is rounded to 0.1: the best case for the article's numbers
    bump = torch.where(torch.arange(10) == ids, 0.05, -0.05)
    best = F.log_softmax(logits + bump, dim=-1).gather(2, ids).squeeze(-1)[0]
    assert best.round(decimals=2).tolist() == pytest.approx([-1.00, -1.27, -1.40])
    assert all(b < a for b, a in zip(best.tolist(), ARTICLE_004_RESULT))
    assert got.exp()[2] < 0.23 < 0.48 < torch.tensor(ARTICLE_004_RESULT[2]).exp()
    # and the lecture shows exactly these numbers and says so
    out = printed(cell("02_nlp_label_scores", "c16a")).splitlines()
    assert out == [
        "tensor([[-1.0600, -1.3500, -1.4800]])",
        "tensor([[-1.0600, -1.3500, -1.4800]])",
        "tensor([[-1.0000, -1.2700, -1.4000]])",
    ]
    text = cell("02_nlp_label_scores", "c16b").source
    assert "not consistent" in text and "-1.00, -1.27 and -1.40" in text


def test_a_larger_logit_can_mean_a_smaller_probability():
    row = torch.tensor([[0.0, 2.3, -0.5, 1.0, 0.8], [2.5, -0.1, -1.2, 0.5, 3.0]])  # 003's sample 1
    p = F.softmax(row, dim=-1)
    assert round(p[0, 1].item(), 2) == 0.60 and round(p[1, 4].item(), 2) == 0.57
    assert (
        "the logit 3.0 gets probability 0.57, less than the 0.60"
        in cell("02_nlp_label_scores", "c09c").source
    )


def test_cross_entropy_is_the_masked_gather_and_a_raw_ignore_index_raises():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 4, 6, generator=gen)
    labels = torch.tensor([[1, 5, 2, -100], [0, 3, -100, -100]])
    keep = labels != -100
    nll = -F.log_softmax(logits, -1).gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    ours = (nll * keep).sum() / keep.sum()
    torch.testing.assert_close(ours, F.cross_entropy(logits.flatten(0, 1), labels.flatten()))
    with pytest.raises(RuntimeError, match="out of bounds"):
        logits.gather(-1, labels.unsqueeze(-1))


def test_the_python_loop_takes_at_least_ten_times_as_long_as_gather():
    """Lecture 02 section 6: the one claim about cost it makes for every machine."""
    device = default_device()
    gen = torch.Generator().manual_seed(0)
    log_probs = F.log_softmax(torch.randn(8, 128, 1000, generator=gen), dim=-1).to(device)
    ids = torch.randint(0, 1000, (8, 128), generator=gen).to(device)

    def loop():
        out = torch.empty(ids.shape, device=device)
        for i in range(ids.size(0)):
            for j in range(ids.size(1)):
                out[i, j] = log_probs[i, j, ids[i, j]]
        return out

    def vectorised():
        return log_probs.gather(2, ids.unsqueeze(-1)).squeeze(-1)

    assert torch.equal(loop(), vectorised())

    def median(fn):
        return (
            benchmark.Timer("fn()", globals={"fn": fn}).blocked_autorange(min_run_time=0.2).median
        )

    assert median(loop) >= 10 * median(vectorised)
    assert "at least 10 times as long as gather" in cell("02_nlp_label_scores", "c26").source


# -- lecture 04 -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lecture_04():
    """Section 1's image, patches and scores, made by the lecture's own cell, on the CPU."""
    return run_cell(
        "04_topk_patch_selection", "c03", {"torch": torch, "device": torch.device("cpu")}
    )


def scatter_check(patches, index):
    selected = patches.gather(1, index)
    canvas = torch.zeros_like(patches).scatter(1, index, selected)
    return torch.equal(canvas.gather(1, index), selected)


def test_repeat_takes_d_times_the_memory_of_expand():
    ids = torch.tensor([[6, 10, 5, 7]])
    for d in (2, 3, 192):
        e, r = ids.unsqueeze(-1).expand(-1, -1, d), ids.unsqueeze(-1).repeat(1, 1, d)
        assert r.untyped_storage().nbytes() == d * e.untyped_storage().nbytes()
        assert e.stride()[-1] == 0 and torch.equal(e, r)


def test_the_scores_of_section_1_are_tie_free_and_the_coverage_alone_is_not(lecture_04):
    weights, coverage = lecture_04["attention_weights"], lecture_04["coverage"]
    assert weights.unique().numel() == weights.numel()
    assert (coverage == 0).sum() == 7 and (coverage > 0).sum() == 9


def test_the_scatter_check_passes_wrong_selections_the_selection_check_does_not(lecture_04):
    patches, scores, k = lecture_04["patches"], lecture_04["attention_weights"], 4
    D = patches.shape[-1]
    best = torch.topk(scores, k, dim=1).indices
    lowest = torch.topk(scores, k, dim=1, largest=False).indices
    # necessary: a scatter to the wrong places, or with the features mixed up, fails it
    index = best.unsqueeze(-1).expand(-1, -1, D)
    selected = patches.gather(1, index)
    for canvas in (
        torch.zeros_like(patches).scatter(1, (index + 1) % patches.shape[1], selected),
        torch.zeros_like(patches).scatter(1, index, selected.flip(-1)),
    ):
        assert not torch.equal(canvas.gather(1, index), selected)
    # not sufficient: wrong selections pass it
    for wrong in (
        lowest.unsqueeze(-1).expand(-1, -1, D),
        best.unsqueeze(-1),
        best[:, [0, 0, 1, 2]].unsqueeze(-1).expand(-1, -1, D),
    ):
        assert scatter_check(patches, wrong)
    ns = run_cell("04_topk_patch_selection", "d05", {"torch": torch, "selections": {}})
    selection_check = ns["selection_check"]
    assert selection_check(patches, scores, best.unsqueeze(-1).expand(-1, -1, D), k)
    assert not selection_check(patches, scores, lowest.unsqueeze(-1).expand(-1, -1, D), k)
    assert not selection_check(patches, scores, best.unsqueeze(-1), k)
    assert not selection_check(
        patches, scores, best[:, [0, 0, 1, 2]].unsqueeze(-1).expand(-1, -1, D), k
    )
    lines = printed(cell("04_topk_patch_selection", "d05")).splitlines()
    assert [line.endswith("selection check: True") for line in lines] == [True, False, False, False]
    assert all("scatter check: True" in line for line in lines)


def test_ties_are_checked_by_values_and_a_stable_sort_fixes_their_order(lecture_04):
    cover = lecture_04["coverage"]
    values, ids = torch.topk(cover, 10, dim=1)
    tied = [n for n in range(16) if cover[0, n] == 0 and n not in ids[0].tolist()]
    other = ids.clone()
    other[0, -1] = tied[0]
    assert not torch.equal(ids, other)
    assert torch.equal(cover.gather(1, other), values)
    assert torch.equal(values, cover.sort(dim=1, descending=True).values[:, :10])
    stable = cover.sort(dim=1, descending=True, stable=True).indices[0]
    assert stable[9:].tolist() == [0, 4, 8, 12, 13, 14, 15]  # tied zeros in patch order
    note = "the indices of tied elements are not guaranteed to be stable and may vary across different invocations"
    assert note in " ".join(torch.topk.__doc__.split())
    assert note in cell("04_topk_patch_selection", "d06").source


def test_gradient_flows_to_gathered_values_never_through_topk_indices(lecture_04):
    scores = lecture_04["attention_weights"].clone().requires_grad_()
    feats = lecture_04["patches"].clone().requires_grad_()
    D = feats.shape[-1]
    values, idx = torch.topk(scores, 4, dim=1)
    assert idx.dtype == torch.int64 and not idx.requires_grad and values.requires_grad
    feats.gather(1, idx.unsqueeze(-1).expand(-1, -1, D)).sum().backward()
    assert scores.grad is None
    assert feats.grad.sum(-1).nonzero()[:, 1].tolist() == sorted(idx[0].tolist())

    values, idx = torch.topk(scores, 4, dim=1)
    assert torch.equal(values, scores.gather(1, idx))
    kept = feats.gather(1, idx.unsqueeze(-1).expand(-1, -1, D))
    (kept * values.unsqueeze(-1)).sum().backward()
    selected = torch.zeros_like(scores, dtype=torch.bool).scatter(1, idx, True)
    assert (scores.grad[selected] != 0).all() and (scores.grad[~selected] == 0).all()
    assert printed(cell("04_topk_patch_selection", "d11")).splitlines()[1] == "None"


# -- device- and version-bound sentences of lectures 01 and 04 ----------------------------------


def test_index_select_refuses_a_2d_index_with_the_error_the_lecture_names_for_this_device():
    """Lecture 01 (c24b/c24c): an IndexError on the CPU, a RuntimeError on CUDA (seen with
    torch 2.11 on an H100); the cell catches both and prints what this machine raises."""
    x, lin = torch.arange(12).reshape(3, 4), torch.tensor([[0, 5], [11, 6]])
    with pytest.raises(IndexError, match=r"^index_select\(\): Index is supposed to be a vector$"):
        x.index_select(1, lin)
    if torch.cuda.is_available():
        with pytest.raises(
            RuntimeError, match="Index is supposed to be an empty tensor or a vector"
        ):
            x.cuda().index_select(1, lin.cuda())
    source = cell("01_basic_formula", "c24b").source
    assert "except (IndexError, RuntimeError) as err:" in source
    text = cell("01_basic_formula", "c24c").source
    assert "on the CPU an `IndexError`" in text and "on CUDA a `RuntimeError`" in text


def test_dim_is_checked_first_with_the_index_on_inputs_device():
    """Lecture 01 (c34e/c34f): with an empty index on input's device, an impossible dim is
    the error; the cell moves the index there (on CUDA a CPU index is refused for its device)."""
    x = torch.zeros(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.gather(x, 5, torch.zeros(0, 2, dtype=torch.long))
    assert ".to(device)" in cell("01_basic_formula", "c34f").source
    if torch.cuda.is_available():
        with pytest.raises(IndexError, match="Dimension out of range"):
            torch.gather(x.cuda(), 5, torch.zeros(0, 2, dtype=torch.long).cuda())
        with pytest.raises(RuntimeError, match="device"):
            torch.gather(x.cuda(), 5, torch.zeros(0, 2, dtype=torch.long))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_fill_and_zero_write_through_a_stride0_view_where_add_refuses_and_slices_differ(device):
    """Lecture 04 (c12a, c12c): most in-place writes to one location several times are
    refused; fill_ and zero_ are not, and write into the base tensor; a slice assignment is
    refused on the CPU only."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device: the CPU case holds the claim here")
    for write in (lambda v: v.add_(1), lambda v: v.copy_(v + 1)):
        base = torch.tensor([[6, 10]], device=device)
        view = base.unsqueeze(-1).expand(-1, -1, 3)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            write(view)
        assert base.tolist() == [[6, 10]]
    # a number assigned to a slice: refused on the CPU, written through on CUDA (torch 2.11, H200)
    base = torch.tensor([[6, 10]], device=device)
    view = base.unsqueeze(-1).expand(-1, -1, 3)
    if device == "cpu":
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            view[0, 1] = 3
        assert base.tolist() == [[6, 10]]
    else:
        view[0, 1] = 3
        assert base.tolist() == [[6, 3]]
    for value, write in ((7, lambda v: v.fill_(7)), (0, lambda v: v.zero_())):
        base = torch.tensor([[6, 10]], device=device)
        write(base.unsqueeze(-1).expand(-1, -1, 3))
        assert base.tolist() == [[value, value]]
    text = cell("04_topk_patch_selection", "c12a").source
    assert (
        "most in-place operations that would write one location several times are refused" in text
    )
    assert "`fill_` and `zero_` write through" in text
    told = cell("04_topk_patch_selection", "c12c").source
    assert "CUDA differs: there the slice assignment is not refused but writes through" in told
