"""The claims of lectures 03 and 05, checked: what their sentences say is what torch does,
what the stored outputs show, and what the articles print.

nbval re-runs the cells and compares their outputs; these tests check what it cannot: that a
sentence matches the output it talks about, that a claim about memory holds for any map (a
ratio or a view, never a measured size), that article 002's printed trace follows from its own
numbers without its noise, and that what the lectures say torch does (what raises, what is a
view, what is copied) holds for the installed torch. The two lectures time nothing and make no
claim about speed.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest
import torch

from tests.lectures import article, cell, cells, flat, needs_seeds, printed, prose

PIXELS, MAE = "03_pixel_indexing", "05_mae_random_masking"
LECTURES = (PIXELS, MAE)
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
CPU = torch.device("cpu")


def run_cells(name: str, ids: tuple[str, ...], namespace: dict | None = None) -> dict:
    """Run cells' code (no magics) in one namespace, on the CPU, and return the namespace."""
    ns = {"torch": torch, "device": CPU} if namespace is None else namespace
    for cell_id in ids:
        exec(cell(name, cell_id).source, ns)  # noqa: S102 - the course's own lecture code
    return ns


# -- both lectures ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", LECTURES)
def test_the_lecture_times_nothing_and_no_sentence_carries_a_measured_number(name):
    for c in cells(name):
        if c.cell_type == "code":
            assert not re.search(r"\bTimer\b|time\.(perf_counter|time)\(|compare\(", c.source)
            assert not c.source.startswith("# timing"), c.id
    text = prose(name)
    assert not re.search(r"\d\s*(µs|us|ms|ns|s)\b", text)
    assert not re.search(r"\b\d[\d,.]*\s*times (as long|faster|slower)|\b(faster|slower)\b", text)
    assert not re.search(
        r"\d\s*([KMG]i?B|bytes)\b", text
    )  # memory is said as a ratio, checked below


@pytest.mark.parametrize("name", LECTURES)
def test_no_lecture_calls_an_article_printout_irreproducible(name):
    text = prose(name)
    assert not re.search(
        r"cannot be reproduced|depends? on the model|unreproducible|nobody can re-?run|"
        r"numbers are random",
        text,
    )


@pytest.mark.parametrize("name", LECTURES)
def test_every_predict_first_prompt_stands_right_before_a_code_cell(name):
    nb = cells(name)
    prompts = [i for i, c in enumerate(nb) if "**Predict first:**" in c.source]
    assert prompts
    for i in prompts:
        assert nb[i].source.rstrip().endswith("then run the cell."), nb[i].id
        assert nb[i + 1].cell_type == "code", nb[i].id


@pytest.mark.parametrize("name", LECTURES)
def test_cell_ids_are_unique(name):
    ids = [c.get("id") for c in cells(name)]
    assert None not in ids and len(ids) == len(set(ids))


# -- lecture 03: the article's two steps --------------------------------------------------------


def test_the_articles_two_steps_read_column_0_then_raise_at_dim_3():
    ns = {"torch": torch}
    with pytest.raises(
        IndexError, match=re.escape("Dimension out of range (expected to be in range of [-3, 2]")
    ):
        run_cells(PIXELS, ("c06",), ns)
    features, y, height_gathered = ns["features"], ns["y_coords"], ns["height_gathered"]
    assert height_gathered.shape == (2, 3, 5, 1)
    for b in range(2):
        for p in range(5):
            assert torch.equal(height_gathered[b, :, p, 0], features[b, :, y[b, p], 0])
    # the error shown is the second call's: squeeze(-1) left 3 dims, so dim=3 does not exist
    assert height_gathered.squeeze(-1).dim() == 3
    (error,) = [o for o in cell(PIXELS, "c06").outputs if o.output_type == "error"]
    assert error.ename == "IndexError" and "but got 3" in error.evalue
    assert printed(cell(PIXELS, "c08")).splitlines()[:2] == ["torch.Size([2, 3, 5, 1])", "True"]


@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (1, 3, 24, 32), (2, 5, 7, 3), (1, 1, 1, 9)])
def test_two_steps_that_keep_the_width_are_right_and_copy_w_times_the_answer(shape):
    B, C, H, W = shape
    gen = torch.Generator().manual_seed(0)
    features = torch.rand(shape, generator=gen)
    y = torch.randint(0, H, (B, 6), generator=gen)
    x = torch.randint(0, W, (B, 6), generator=gen)
    rows = features.gather(2, y[:, None, :, None].expand(-1, C, -1, W))
    two_step = rows.gather(3, x[:, None, :, None].expand(-1, C, -1, 1)).squeeze(-1)
    assert torch.equal(two_step, features[torch.arange(B)[:, None], :, y, x].transpose(1, 2))
    assert rows.numel() == W * two_step.numel()  # the intermediate: W times the answer
    assert rows.untyped_storage().nbytes() == W * two_step.untyped_storage().nbytes()
    assert printed(cell(PIXELS, "c07c")).splitlines()[1] == "120 values copied in step 1 to keep 30"
    assert "`120 = 4 × 30`" in cell(PIXELS, "c07d").source
    assert "W` times the size of the answer" in cell(PIXELS, "c07d").source


def test_flattening_a_contiguous_map_copies_nothing_and_one_gather_builds_only_the_answer():
    ns = {"torch": torch, "image": torch.zeros(1, 3, 4, 5), "points": torch.zeros(1, 2, 2).long()}
    gather_points = run_cells(PIXELS, ("c10",), ns)["gather_points"]
    features = torch.rand(2, 3, 4, 5)
    flat_map = features.flatten(2)
    assert flat_map._base is features and flat_map.data_ptr() == features.data_ptr()
    # the limit of "contiguous": a transposed map is copied when flattened
    transposed = features.transpose(2, 3)
    assert transposed.flatten(2).data_ptr() != transposed.data_ptr()
    coords = torch.tensor([[[1, 2], [3, 0], [0, 4]], [[2, 1], [0, 2], [3, 3]]])
    out = gather_points(features, coords)
    assert out.shape == (2, 3, 3) and out.untyped_storage().nbytes() == out.numel() * 4
    index = (coords[..., 0] * 5 + coords[..., 1]).unsqueeze(1).expand(-1, 3, -1)
    assert index.stride(1) == 0  # the point index is expanded over the channels, not copied
    assert "for a contiguous map `flatten(2)` is a view" in cell(PIXELS, "c07d").source


# -- lecture 03: y * H + x ----------------------------------------------------------------------


def test_y_times_h_plus_x_stays_inside_every_map_no_taller_than_wide():
    for H in range(1, 9):
        for W in range(1, 9):
            largest = (H - 1) * H + (W - 1)  # the largest y * H + x
            assert (largest < H * W) == (H <= W), (H, W)
    assert (
        "Here `H < W`, so every wrong position stays inside the map" in cell(PIXELS, "c19b").source
    )


def test_the_wrong_reads_are_divmod_of_y_times_h_plus_x():
    points = [[3, 4], [12, 20], [20, 28], [6, 30], [18, 2]]
    wrong = [y * 24 + x for y, x in points]
    lines = printed(cell(PIXELS, "c19")).splitlines()
    assert lines[0] == f"[{wrong}] [{[y * 32 + x for y, x in points]}]"
    assert lines[1] == f"pixels read: {[list(divmod(w, 32)) for w in wrong]}"


def test_an_index_past_the_end_raises_a_runtime_error_on_the_cpu():
    tall = torch.arange(8.0).reshape(1, 1, 4, 2)
    with pytest.raises(RuntimeError, match="index 13 is out of bounds for dimension 2 with size 8"):
        tall.flatten(2).gather(2, torch.tensor([[[3 * 4 + 1]]]))
    assert "gather raises a `RuntimeError` on the CPU" in cell(PIXELS, "c19b").source
    assert "1 broken rule" in printed(cell(PIXELS, "c19c"))


@needs_cuda
def test_on_a_gpu_it_is_a_device_side_assert_that_leaves_cuda_unusable():
    code = (
        "import torch\n"
        "x = torch.arange(8.0, device='cuda').reshape(1, 1, 8)\n"
        "try:\n"
        "    x.gather(2, torch.tensor([[[13]]], device='cuda')); torch.cuda.synchronize()\n"
        "    print('first: no error')\n"
        "except RuntimeError as e:\n"
        "    print('first:', 'device-side assert' in str(e))\n"
        "try:\n"
        "    (torch.zeros(1, device='cuda') + 1).cpu()\n"
        "    print('after: ok')\n"
        "except RuntimeError as e:\n"
        "    print('after:', 'device-side assert' in str(e))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.stdout.splitlines()[-2:] == ["first: True", "after: True"], run.stdout + run.stderr
    assert "device-side assert" in cell(PIXELS, "c19b").source


# -- lecture 03: one head per position ----------------------------------------------------------


def test_the_articles_head_selection_reads_sequence_position_0_and_the_fix_does_not():
    batch, num_heads, seq_len, head_dim = 2, 4, 5, 3
    mha = torch.arange(batch * num_heads * seq_len * head_dim).reshape(
        batch, num_heads, seq_len, head_dim
    )
    heads = torch.randint(
        0, num_heads, (batch, seq_len), generator=torch.Generator().manual_seed(1)
    )
    result = mha.gather(1, heads.unsqueeze(-1).unsqueeze(-1).expand(-1, -1, -1, head_dim))
    assert result.shape == (batch, seq_len, 1, head_dim)
    for b in range(batch):
        for position in range(seq_len):
            assert torch.equal(result[b, position, 0], mha[b, heads[b, position], 0])
    fixed = mha.gather(1, heads[:, None, :, None].expand(batch, 1, seq_len, head_dim)).squeeze(1)
    for b in range(batch):
        for position in range(seq_len):
            assert torch.equal(fixed[b, position], mha[b, heads[b, position], position])
    # the stored rows of the article's result: every one is (head * 15 + 0 * 3 + d), position 0
    rows = re.findall(r"\[\s*(\d+),\s*(\d+),\s*(\d+)\]", printed(cell(PIXELS, "c23")))[:5]
    assert all(int(first) % 15 == 0 for first, _, _ in rows)
    assert "every output reads sequence position **0**" in cell(PIXELS, "c22").source


# -- lecture 05: article 002's printed trace ------------------------------------------------------

PRINTED_INDEX = [[[10, 10, 10, 10], [12, 12, 12, 12], [4, 4, 4, 4], [13, 13, 13, 13]]]
PRINTED_X_MASKED = [[[40, 41, 42, 43], [48, 49, 50, 51], [16, 17, 18, 19], [52, 53, 54, 55]]]
KEPT = [10, 12, 4, 13]


@pytest.fixture(scope="module")
def lecture_05():
    """The lecture's code from the article's code to the check of its reproduction, on the CPU."""
    ns = run_cells(MAE, ("c03", "c05", "e01", "e03", "c07", "e05"))
    return ns


def rows(text: str) -> list[list[int]]:
    return [[int(v) for v in row.split(",")] for row in re.findall(r"\[([\d,\s]+)\]", text)]


@needs_seeds
def test_the_numbers_of_article_002_are_copied_from_the_article(lecture_05):
    text = article("002")
    text = text[text.index("3、实际案例") : text.index("相关文章")]
    assert "seed" not in text  # nothing seeds its torch.rand
    x_block = text.split(">>> x = torch.arange(64).reshape(1, 16, 4)\n", 1)[1].split("\n", 1)[0]
    assert [v for row in rows(x_block) for v in row] == list(range(64))  # x prints arange(64)
    marked = [int(m) for m in re.findall(r"# (\d+)", x_block)]
    assert marked == lecture_05["marked"] == [4, 10, 12, 13]
    for row, mark in re.findall(r"\[([\d,\s]+)\], # (\d+)", x_block):  # "# 4" follows row 4
        assert [int(v) for v in row.split(",")] == list(range(4 * int(mark), 4 * int(mark) + 4))
    index_block = text.split(">>> index\n", 1)[1].split("#", 1)[0]
    x_masked_block = text.split(">>> x_masked相当于out_tensor\n", 1)[1].split("\n", 1)[0]
    assert rows(index_block) == PRINTED_INDEX[0] == lecture_05["printed_index"][0].tolist()
    assert rows(x_masked_block) == PRINTED_X_MASKED[0] == lecture_05["printed_x_masked"][0].tolist()
    marked_rows = [rows(x_block)[m] for m in marked]
    assert sorted(map(tuple, marked_rows)) == sorted(map(tuple, PRINTED_X_MASKED[0]))


def test_the_printout_is_consistent_without_its_noise(lecture_05):
    x, index = torch.arange(64).reshape(1, 16, 4), torch.tensor(PRINTED_INDEX)
    assert torch.equal(x.gather(1, index), torch.tensor(PRINTED_X_MASKED))
    assert torch.equal(index, index[..., :1].expand(-1, -1, 4))  # ids_keep repeated over D
    assert index.shape[1] == int(16 * (1 - 0.75)) == 4
    lines = printed(cell(MAE, "e01")).splitlines()
    assert len(lines) == 4 and all(line.endswith(" True") for line in lines)
    assert "All four hold: the printout is consistent." in cell(MAE, "e02").source


def test_the_printout_fixes_the_mask_and_ids_restore_at_the_kept_patches(lecture_05):
    random_masking_with = lecture_05["random_masking_with"]
    x = torch.arange(64).reshape(1, 16, 4)
    article_mask = torch.ones(1, 16)
    article_mask[0, KEPT] = 0
    assert torch.equal(lecture_05["article_mask"], article_mask)
    gen = torch.Generator().manual_seed(0)
    others = set()
    for _ in range(50):
        noise = torch.rand(1, 16, generator=gen) * 0.9 + 0.1
        noise[0, KEPT] = torch.tensor([0.01, 0.02, 0.03, 0.04])
        x_masked, mask, ids_restore, _ = random_masking_with(x, 0.75, noise)
        assert torch.equal(x_masked, torch.tensor(PRINTED_X_MASKED))
        assert torch.equal(mask, article_mask)
        assert ids_restore[0, KEPT].tolist() == [0, 1, 2, 3]
        assert ids_restore[0, [4, 10, 12, 13]].tolist() == [2, 0, 1, 3]
        others.add(tuple(ids_restore[0, article_mask[0] == 1].tolist()))
    assert len(others) > 1  # the other twelve entries follow the unprinted noise
    for line in printed(cell(MAE, "e03")).splitlines():
        assert line.startswith("mask = article_mask: True  ids_restore [")
        entries = [int(v) for v in line.split("[", 1)[1].rstrip("]").split(",")]
        assert [entries[i] for i in (4, 10, 12, 13)] == [2, 0, 1, 3]
    assert "`ids_restore` holds 2, 0, 1, 3 at positions 4, 10, 12, 13" in cell(MAE, "e02").source
    assert printed(cell(MAE, "e05")).splitlines() == ["True True", "True [0, 1, 2, 3]"]


def test_a_rerun_keeps_the_same_four_patches_in_order_once_in_43680():
    assert math.perm(16, 4) == 16 * 15 * 14 * 13 == 43680
    text = flat(cell(MAE, "c04").source)
    assert "about once in 43,680 runs (16 · 15 · 14 · 13 ordered choices" in text
    # each as likely as the next: argsort of i.i.d. noise puts every patch first equally often
    gen = torch.Generator().manual_seed(0)
    first = torch.rand(64_000, 16, generator=gen).argsort(dim=1)[:, 0]
    counts = torch.bincount(first, minlength=16)
    assert ((counts - 4000).abs() < 300).all(), counts


def test_random_masking_with_is_the_articles_code_with_the_noise_passed_in(lecture_05):
    random_masking, random_masking_with = (
        lecture_05["random_masking"],
        lecture_05["random_masking_with"],
    )
    x = torch.arange(2 * 16 * 4).reshape(2, 16, 4)
    for seed in range(5):
        torch.manual_seed(seed)
        theirs = random_masking(x)
        torch.manual_seed(seed)
        ours = random_masking_with(x, 0.75, torch.rand(2, 16))
        assert all(torch.equal(a, b) for a, b in zip(theirs, ours[:3]))
        assert torch.equal(ours[3].argsort(dim=1), ours[2])  # ids_shuffle, returned too
    assert "returns `ids_shuffle` too" in cell(MAE, "c04").source


def test_argsort_of_argsort_is_the_inverse_permutation():
    noise = torch.rand(3, 16, generator=torch.Generator().manual_seed(0))
    ids_shuffle = noise.argsort(dim=1)
    ids_restore = ids_shuffle.argsort(dim=1)
    identity = torch.arange(16).expand(3, -1)
    assert torch.equal(ids_shuffle.gather(1, ids_restore), identity)
    assert torch.equal(ids_restore.gather(1, ids_shuffle), identity)


def test_repeat_and_expand_give_the_same_gather_and_expand_copies_nothing():
    x = torch.arange(16 * 192).reshape(1, 16, 192)
    ids_keep = torch.tensor([[10, 12, 4, 13]])
    for D in (4, 192):
        e = ids_keep.unsqueeze(-1).expand(-1, -1, D)
        r = ids_keep.unsqueeze(-1).repeat(1, 1, D)
        assert e.stride(-1) == 0 and e.data_ptr() == ids_keep.data_ptr()  # a view of ids_keep
        assert r.untyped_storage().nbytes() == D * ids_keep.untyped_storage().nbytes()
        assert torch.equal(x[..., :D].gather(1, e), x[..., :D].gather(1, r))
    assert "(`expand` would do, without the copy)" in cell(MAE, "c08").source
    assert "`expand` copies nothing" in cell(MAE, "c22").source


@needs_cuda
def test_the_same_seed_draws_other_numbers_on_a_gpu():
    torch.manual_seed(0)
    on_cpu = torch.rand(16)
    torch.manual_seed(0)
    on_gpu = torch.rand(16, device="cuda").cpu()
    assert not torch.equal(on_cpu, on_gpu)
    assert (
        "from the same seed, `torch.rand` on a GPU draws other numbers" in cell(MAE, "c04").source
    )
