"""The benchmark suite times the same work every way, honestly: checked results, synchronised
blocks, medians, ratios and copy bandwidth. No test here asserts how fast anything is."""

import re
import time

import pytest
import torch

from gather_course import GatherCourseError, gather_reference
from gather_course import benchmark as bm
from tests.helpers import cli

SHAPES = [(1, 1, 1), (1, 7, 3), (5, 1, 4), (6, 9, 2), (3, 4, 8)]


def inputs(r, c, k, pattern, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(r, c, generator=g)
    if pattern == "per-row":
        return x, torch.randint(0, c, (r, k), generator=g)
    return x, torch.randint(0, c, (1, k), generator=g).expand(r, k)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("pattern", ["per-row", "shared"])
def test_every_way_computes_the_reference_formula(shape, pattern):
    x, index = inputs(*shape, pattern)
    expected = gather_reference(x, 1, index)
    for name, way in bm.WAYS.items():
        if bm._why_skipped(name, pattern, *shape):
            continue
        got = way(x, index)
        assert got.dtype == expected.dtype and torch.equal(got, expected), name


def test_index_select_really_differs_for_a_per_row_index():
    x, index = torch.arange(6.0).reshape(2, 3), torch.tensor([[0], [2]])
    assert not torch.equal(bm.WAYS["index_select"](x, index), x.gather(1, index))
    assert bm._why_skipped("index_select", "per-row", 2, 3, 1)
    assert bm._why_skipped("index_select", "shared", 2, 3, 1) is None


def test_slow_or_huge_ways_are_skipped_with_their_reason():
    assert bm._why_skipped("Python loop", "per-row", 64, 10, 64) is None  # 4,096 steps
    assert "4,097 output elements" in bm._why_skipped("Python loop", "shared", 4097, 10, 1)
    assert "GiB" in bm._why_skipped("one-hot matmul", "per-row", *bm.SIZES["large"])
    assert bm._why_skipped("one-hot matmul", "per-row", *bm.SIZES["small"]) is None
    assert bm._why_skipped("gather", "per-row", *bm.SIZES["xlarge"]) is None


def test_compare_refuses_a_candidate_that_computes_something_else():
    x, i = inputs(4, 5, 3, "per-row")
    cases = {
        "values": lambda: x.gather(1, i) + 1,
        "shape": lambda: x.gather(1, i)[:2],
        "dtype": lambda: x.gather(1, i).double(),
        "type": lambda: x.gather(1, i).tolist(),
    }
    for _what, wrong in cases.items():
        with pytest.raises(GatherCourseError, match="'wrong' does not compute the same tensor"):
            bm.compare(
                {"gather": lambda: x.gather(1, i), "wrong": wrong},
                baseline="gather",
                device="cpu",
                repeats=3,
            )
    listed = bm.compare(
        {"gather": lambda: x.gather(1, i), "wrong": cases["values"]},
        baseline="gather",
        device="cpu",
        repeats=3,
        skip_mismatches=True,
    )
    assert list(listed.timings) == ["gather"]
    assert listed.skipped == {
        "wrong": "not the same result as gather here (same shape and dtype, different values)"
    }
    with pytest.raises(GatherCourseError, match="baseline must be one of"):
        bm.compare({"gather": lambda: x.gather(1, i)}, baseline="loop", device="cpu")


def test_measure_warms_up_then_times_whole_blocks_with_torch_utils_benchmark(monkeypatch):
    calls, autoranges = [], []
    real = torch.utils.benchmark.Timer.blocked_autorange

    def spy(self, *args, **kwargs):
        autoranges.append(kwargs.get("min_run_time"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(torch.utils.benchmark.Timer, "blocked_autorange", spy)

    def slow():
        calls.append(1)
        time.sleep(0.002)  # longer than a block needs: one call per block

    t = bm.measure(slow, "cpu", warmup=2, repeats=5, min_block=1e-3)
    assert autoranges and all(m == pytest.approx(5e-3) for m in autoranges)
    assert t.number == 1 and t.repeats >= 5
    assert len(calls) >= 2 + 5  # the warm-up calls, then at least the timed blocks
    assert t.q1 <= t.median <= t.q3 and t.median >= 0.002
    with pytest.raises(GatherCourseError, match="repeats >= 3"):
        bm.measure(slow, "cpu", repeats=2)


def test_measure_waits_for_the_gpu_at_every_clock_reading(monkeypatch):
    events = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: events.append("sync"))
    bm.measure(
        lambda: events.append("call"), torch.device("cuda"), warmup=1, repeats=3, min_block=0.0
    )
    timed = "".join("s" if e == "sync" else "c" for e in events[1:])  # after the warm-up call
    assert re.fullmatch(r"s+(c+s+)+", timed), timed  # every block of calls between two syncs


def fake_comparison(skipped=None):
    timings = {
        "gather": bm.Timing(2e-6, 1e-6, 3e-6, 5, 100),
        "loop": bm.Timing(2e-3, 1e-3, 3e-3, 5, 1),
    }
    return bm.Comparison(
        "test",
        "gather",
        timings,
        skipped or {},
        copy=bm.Timing(1e-6, 1e-6, 1e-6, 5, 100),
        nbytes=16_000,
    )


def test_ratios_and_bandwidth_are_relative_to_gather_and_to_the_copy():
    c = fake_comparison()
    assert c.ratio("gather") == 1.0 and c.ratio("loop") == pytest.approx(1000)
    assert c.fraction_of_copy("gather") == pytest.approx(0.5)
    assert c.fraction_of_copy("loop") == pytest.approx(5e-4)
    text = c.to_markdown()
    assert "| gather | 2 µs | 1.00 | 8 | 50.0 |" in text
    assert "| loop | 2 ms | 1,000 | 0.008 | 0.05 |" in text
    assert "| *plain copy, same bytes* | 1 µs | 0.50 | 16 | 100 |" in text
    assert c._repr_markdown_() == text == repr(c)
    without = bm.Comparison("t", "gather", c.timings)
    assert "GB/s" not in without.to_markdown()
    with pytest.raises(GatherCourseError, match="without nbytes"):
        without.fraction_of_copy("loop")


def test_a_skipped_way_is_listed_with_its_reason_not_as_a_number():
    text = fake_comparison({"one-hot matmul": "too big"}).to_markdown()
    assert "Not timed:\n- one-hot matmul: too big" in text
    assert "| one-hot matmul |" not in text


def test_the_suite_reports_a_way_that_computes_something_else_instead_of_timing_it(monkeypatch):
    monkeypatch.setitem(bm.WAYS, "rounded", lambda x, i: x.gather(1, i).half().float())
    (part,) = bm.run_suite(["4x6x2"], "cpu", patterns=["per-row"], repeats=3).parts
    assert "rounded" not in part.timings
    assert part.skipped["rounded"] == (
        "not the same result as gather here (same shape and dtype, different values)"
    )


@pytest.mark.parametrize("size", ["huge", "10x10", "0x5x5", "axbxc", (3, 4), (2, 3, -1)])
def test_bad_sizes_say_what_a_size_is(size):
    with pytest.raises(GatherCourseError, match="a size is one of small, medium"):
        bm.run_suite([size], "cpu")


def test_bad_patterns_and_no_sizes_are_refused():
    with pytest.raises(GatherCourseError, match="patterns are per-row, shared or both"):
        bm.run_suite(["small"], "cpu", patterns=["rows"])
    with pytest.raises(GatherCourseError, match="at least one size"):
        bm.run_suite([], "cpu")
    with pytest.raises(GatherCourseError, match="repeats must be at least 3"):
        bm.run_suite(["small"], "cpu", repeats=2)


@pytest.mark.parametrize(
    "option, value, parser",
    [
        ("--sizes", "small,nope", bm.parse_sizes),
        ("--patterns", "rows", bm.parse_patterns),
        ("--repeats", "1", bm.parse_repeats),
        ("--repeats", "three", bm.parse_repeats),
    ],
)
def test_the_command_and_the_library_refuse_a_bad_value_in_the_same_words(option, value, parser):
    with pytest.raises(GatherCourseError) as refused:
        parser(value)
    run = cli("bench", option, value)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().endswith(f"argument {option}: {refused.value}"), run.stderr


def test_the_suite_times_every_way_that_applies_and_names_the_machine():
    report = bm.run_suite(["8x16x4", (2, 3, 1)], "cpu", repeats=3)
    assert [p.title.split(",")[0] for p in report.parts] == ["per-row index"] * 2 + [
        "shared index"
    ] * 2
    per_row, shared = report.parts[0], report.parts[2]
    assert list(per_row.timings) == [w for w in bm.WAYS if w != "index_select"]
    assert list(shared.timings) == list(bm.WAYS)
    assert set(per_row.skipped) == {"index_select"}
    assert per_row.nbytes == 2 * 8 * 4 * 4 + 8 * 4 * 8  # out written + values read + index
    assert shared.nbytes == 2 * 8 * 4 * 4 + 4 * 8  # the shared index is one row
    text = report.to_markdown()
    assert text.startswith("Measured on cpu: torch " + torch.__version__)
    assert text.count("| gather |") == 4 and "0x" not in text


def test_bench_command_checks_every_argument_before_timing():
    for args, message in [
        (["--sizes", "small,nope"], "got 'nope'"),
        (["--device", "foo"], "torch device such as cpu or cuda"),
        (["--patterns", "rows"], "per-row, shared or both"),
        (["--repeats", "1"], "at least 3"),
    ]:
        run = cli("bench", *args)
        assert run.returncode == 2 and message in run.stderr and run.stdout == ""
    if not torch.cuda.is_available():
        run = cli("bench", "--device", "cuda")
        assert run.returncode == 2 and "sees no CUDA device" in run.stderr


def test_bench_command_prints_one_section_per_device():
    run = cli("bench", "--sizes", "4x6x2", "--patterns", "shared", "--repeats", "3")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "## cpu\n" in out and "| index_select |" in out
    assert ("## cuda\n" in out) == torch.cuda.is_available()
