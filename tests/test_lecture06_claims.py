"""Every claim of lecture 06 is true and measured.

A sentence of the lecture's prose states either a fact about the installed torch, checked
here, or nothing about speed: what a way costs is printed by the timing cell from that
run's numbers, and the tests below check that the printed words follow those numbers.
"""

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch
from torch.autograd.gradcheck import GradcheckError

from tests.lectures import TAKE_ALONG_DIM_WRAPS as WRAPS
from tests.lectures import TORCH, flat, printed, prose

NB = Path(__file__).resolve().parents[1] / "notebooks" / "06_gather_and_friends.ipynb"


@pytest.fixture(scope="module")
def cells():
    return {c.id: c for c in nbformat.read(NB, as_version=4).cells}


def operators(fn):
    fn()
    with torch.autograd.profiler.profile() as prof:
        fn()
    return {e.key: e.count for e in prof.key_averages()}


# -- 1. take_along_dim: wraps with a dim, flattens and refuses without one ---------------------

X = torch.arange(20.0).reshape(4, 5)


@pytest.mark.parametrize("bad", [-1, -6, 5, 7, 100])
def test_with_a_dim_take_along_dim_wraps_every_index_where_gather_raises(bad):
    with pytest.raises(RuntimeError, match="out of bounds") as gather:
        X.gather(1, torch.full((4, 1), bad))
    if WRAPS:
        got = torch.take_along_dim(X, torch.full((4, 1), bad), dim=1).flatten()
        assert torch.equal(got, X[:, bad % 5])  # -1 reads the last column: wrapped, not refused
    else:
        with pytest.raises(RuntimeError) as refused:
            torch.take_along_dim(X, torch.full((4, 1), bad), dim=1)
        assert str(refused.value) == str(gather.value)  # gather's own check and message


def test_without_dim_take_along_dim_is_gather_on_the_flattened_tensors():
    index = torch.tensor([[7, 0], [19, 3]])
    got = torch.take_along_dim(X, index)
    assert got.shape == (4,) and torch.equal(got, X.flatten().gather(0, index.flatten()))
    for bad in (-1, 20, -21):
        with pytest.raises(RuntimeError) as no_dim:
            torch.take_along_dim(X, torch.tensor([bad]))
        with pytest.raises(RuntimeError) as gather:
            X.flatten().gather(0, torch.tensor([bad]))
        assert str(no_dim.value) == str(gather.value)  # gather's own check and message
        assert f"index {bad} is out of bounds for dimension 0 with size 20" in str(gather.value)
    no_dim_ops = operators(lambda: torch.take_along_dim(X, index))
    with_dim_ops = operators(lambda: torch.take_along_dim(X, torch.full((4, 1), 3), dim=1))
    assert "aten::gather" in no_dim_ops and "aten::remainder" not in no_dim_ops
    assert "aten::gather" in with_dim_ops and ("aten::remainder" in with_dim_ops) == WRAPS


def test_the_lecture_shows_both_cases_and_says_which_wraps(cells):
    assert "index -1 in every row:\n  gather                    raises RuntimeError\n" in (
        printed(cells["c18e"])
    )
    assert "  take_along_dim            [4.0, 9.0, 14.0, 19.0]" in printed(cells["c18e"])
    assert printed(cells["c18k"]) == (
        "tensor([ 7.,  0., 19.,  3.])\n"
        "True\n"
        "index -1, no dim: raises RuntimeError: index -1 is out of bounds for dimension 0 "
        "with size 20\n"
        "index -1, dim=1:  [4.0, 9.0, 14.0, 19.0]\n"
        "index 20, no dim: raises RuntimeError: index 20 is out of bounds for dimension 0 "
        "with size 20\n"
        "index 20, dim=1:  [0.0, 5.0, 10.0, 15.0]\n"
    )
    text = flat(prose("06_gather_and_friends"))
    assert "`take_along_dim` never asserts" not in text
    assert "from torch 2.10 on `take_along_dim` with a `dim` never asserts: it wraps" in text
    assert "(2.8 and 2.9 check like gather, and assert on a GPU)" in text
    assert "`take_along_dim` with a `dim` wraps every index, negative or too large" in text
    assert "torch 2.8 and 2.9 refuse such an index in `take_along_dim` exactly as `gather`" in text
    assert "It depends on the torch version: 2.8 and 2.9 run no `aten::remainder`" in text
    for cell in ("c18b", "c18e", "c18k", "c18i"):  # what they print differs by release
        assert "torch-version-bound" in cells[cell].metadata.get("tags", []), cell
    assert "without `dim` it flattens both tensors and raises like gather" in text


# -- 2. checking a backward: finite differences, the same verdict as gradcheck ----------------


def _custom_gather_cell(cells, wrong=False):
    """Run cell c12 (the article's Function and its finite-difference check); its printout."""
    src = cells["c12"].source
    if wrong:  # scatter (no add): one of each duplicate's gradients is lost
        assert src.count("grad_input.scatter_add_(") == 1
        src = src.replace("grad_input.scatter_add_(", "grad_input.scatter_(")
    torch.manual_seed(0)
    namespace, out = {"torch": torch, "device": torch.device("cpu")}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(src, namespace)  # noqa: S102 - the lecture's own cell
    return namespace, out.getvalue()


def test_the_finite_difference_check_passes_the_article_s_function_and_fails_a_wrong_backward(
    cells,
):
    namespace, out = _custom_gather_cell(cells)
    assert out.split() == ["True", "True"]
    i = namespace["i"]
    assert any(len(set(row.tolist())) < len(row) for row in i)  # a duplicate to lose
    _, wrong = _custom_gather_cell(cells, wrong=True)
    assert wrong.split() == ["False", "True"]


def test_gradcheck_gives_the_same_verdicts_as_the_lecture_s_check(cells):
    namespace, _ = _custom_gather_cell(cells)
    a, i = namespace["a"], namespace["i"]
    assert torch.autograd.gradcheck(lambda t: namespace["CustomGather"].apply(t, 1, i), (a,))
    wrong, _ = _custom_gather_cell(cells, wrong=True)
    with pytest.raises(GradcheckError):
        torch.autograd.gradcheck(lambda t: wrong["CustomGather"].apply(t, 1, wrong["i"]), (a,))
    text = flat(prose("06_gather_and_friends"))
    assert (
        "`torch.autograd.gradcheck(lambda t: CustomGather.apply(t, 1, i), (a,))` makes this "
        "comparison for each output element separately" in text
    )


def test_the_gradient_of_the_weighted_sum_is_backward_given_grad_out(cells):
    assert "(inp.gather(1, idx) * grad_out).sum().backward()" in cells["c10"].source
    inp = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    idx, grad_out = torch.tensor([[0, 0, 3], [2, 1, 2]]), torch.randn(2, 3, dtype=torch.float64)
    (by_sum,) = torch.autograd.grad((inp.gather(1, idx) * grad_out).sum(), inp)
    (given,) = torch.autograd.grad(inp.gather(1, idx), inp, grad_out)
    assert torch.equal(by_sum, given)


# -- 3. what autograd keeps for gather's backward -----------------------------------------------


def saved_by(fn, *inputs):
    """What the saved-tensor hooks see fn(*inputs) store: 'input', 'index' or a new tensor."""
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        fn(*inputs)
    names = {inputs[0].untyped_storage().data_ptr(): "input"}
    names[inputs[1].untyped_storage().data_ptr()] = "index"
    return sorted(names.get(t.untyped_storage().data_ptr(), "new") for t in saved)


def test_gather_saves_its_input_and_index_and_index_select_only_its_index():
    a = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    i = torch.randint(0, 5, (3, 4))
    assert saved_by(lambda a, i: a.gather(1, i), a, i) == ["index", "input"]
    assert saved_by(lambda a, i: a.index_select(1, i[0]), a, i) == ["index"]
    node = a.gather(1, i).grad_fn
    assert node.name() == "GatherBackward0" and node._saved_self is a
    assert sorted(n for n in dir(node) if n.startswith("_saved_")) == [
        "_saved_dim",
        "_saved_index",
        "_saved_self",
        "_saved_sparse_grad",
    ]
    select = a.index_select(1, i[0]).grad_fn
    assert "_saved_self" not in dir(select) and "_saved_self_sym_sizes" in dir(select)


def test_what_gather_saves_stays_in_memory_until_backward_runs():
    leaf = torch.randn(1000, requires_grad=True)
    h = leaf * 2  # an intermediate result
    where = h.untyped_storage().data_ptr()
    out = h.gather(0, torch.tensor([3, 3, 7]))
    del h
    assert out.grad_fn._saved_self.untyped_storage().data_ptr() == where  # still held
    out.sum().backward()
    with pytest.raises(RuntimeError, match="freed"):
        out.grad_fn._saved_self  # noqa: B018 - released by backward


def test_the_lecture_prints_what_is_kept_and_says_it(cells):
    out = printed(cells["c13a"])
    for line in (
        "torch.gather                   keeps i (the index), a (the input)",
        "CustomGather (the article's)   keeps a (the input), i (the index)",
        "LeanGather                     keeps i (the index)",
        "index_select with row 0 of i   keeps i (the index)",
        "GatherBackward0 holds _saved_dim, _saved_index, _saved_self, _saved_sparse_grad "
        "| _saved_self is a: True",
        "IndexSelectBackward0 holds _saved_dim, _saved_index, _saved_self_sym_sizes",
        "LeanGather's gradient equals gather's: True",
    ):
        assert line in out, line
    text = flat(prose("06_gather_and_friends"))
    assert "Built-in gather already has this backward" not in text
    assert (
        "Built-in `gather` keeps its input: its backward node, `GatherBackward0`, holds "
        "`_saved_self`, which is `a` itself, and the index"
    ) in text
    assert "`index_select` keeps only its index" in text
    assert "Built-in gather saves its input and its index for backward" in text  # summary


# -- 4. no cost is claimed in prose; the facts that replaced the old ones ----------------------


def test_the_prose_states_no_time_ratio_or_speed_measured_elsewhere(cells):
    text = prose("06_gather_and_friends")
    assert not re.search(r"\d\s*(?:s|ms|µs|ns)\b", text), "a duration in the prose"
    assert not re.search(r"\d\s*×", text), "a ratio in the prose"
    assert "249" not in text and "40,783" not in text and "TF32" not in text
    # the only percentages are the timing cell's own thresholds
    timing = cells["c24"].source
    assert set(re.findall(r"(\d+) %", text)) == {"10"}
    assert "ratio < 0.9" in timing and "ratio > 1.1" in timing
    assert "% of copy above 100" in text and "pct > 100" in timing


def _new_modules(*statements: str) -> list[list[str]]:
    """The modules each statement imports, run one after the other in a fresh interpreter."""
    code = "import sys, torch\n" + "".join(
        f"before = set(sys.modules)\n{statement}\n"
        "print(' '.join(sorted(set(sys.modules) - before)) or '-')\n"
        for statement in statements
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return [[] if line == "-" else line.split() for line in run.stdout.splitlines()]


def test_what_the_lecture_says_imports_the_compiler_does_and_its_alternatives_do_not(cells):
    text = flat(prose("06_gather_and_friends"))
    assert (
        "so from torch 2.10 on it imports the compiler, hundreds of modules (2.8 and 2.9 "
        "import none), where" in text
    )
    assert "the former imports the compiler, `torch._inductor` (hundreds of modules)" in text
    debug_mode, old_profiler, switch = _new_modules(
        "torch.set_deterministic_debug_mode('error')",
        "with torch.autograd.profiler.profile(): pass",
        "torch.use_deterministic_algorithms(True)",
    )
    (new_profiler,) = _new_modules("import torch.profiler\nwith torch.profiler.profile(): pass")
    assert debug_mode == [] and old_profiler == []
    assert "torch._inductor" in new_profiler and len(new_profiler) >= 200, len(new_profiler)
    if TORCH >= (2, 10):
        assert "torch._inductor" in switch and len(switch) >= 200, len(switch)
    else:
        assert switch == [], switch


def test_the_docs_say_what_the_lecture_quotes_about_deterministic_speed(cells):
    doc = flat(torch.use_deterministic_algorithms.__doc__)
    assert "deterministic operations tend to have worse performance" in doc
    assert '(the docs warn that they "tend to have worse performance")' in flat(
        prose("06_gather_and_friends")
    )


def python_loop(x, index):  # the timing cell's loop
    out = torch.empty(index.shape, dtype=x.dtype, device=x.device)
    for r in range(index.shape[0]):
        for j in range(index.shape[1]):
            out[r, j] = x[r, index[r, j]]
    return out


def test_the_python_loop_runs_several_operations_per_pick_and_the_others_one_pass(cells):
    x, index = torch.randn(6, 32), torch.randint(0, 32, (6, 5))
    ops = operators(lambda: python_loop(x, index))
    assert sum(ops.values()) >= 3 * index.numel()
    assert ops["aten::copy_"] == index.numel()  # one write per pick, and more before it
    cols = index[0]
    assert "aten::index" in operators(lambda: x[:, cols])
    assert "aten::index_select" in operators(lambda: x.index_select(1, cols))
    assert "several small tensor operations per output element" in flat(
        prose("06_gather_and_friends")
    )


# -- 5. the timing cell: four ways and more on one selection, words from its own numbers -------

WAYS = (
    "gather",
    "index_select",
    "take (linear index built before)",
    "advanced indexing",
    "take_along_dim",
    "remainder, then gather",
)


def test_one_timing_cell_times_each_way_with_take_s_index_built_outside(cells):
    timing = [c for c in cells.values() if c.cell_type == "code" and "# timing" in c.source]
    assert [c.id for c in timing] == ["c24"]
    src = cells["c24"].source
    assert src.startswith("# timing") and "nbval-ignore-output" in cells["c24"].metadata.tags
    assert "from torch.utils import benchmark" in src and "gather_course" not in src
    # five blocks of about 1 ms, each long enough that reading the clock (tens of ns) is lost in it
    assert "def block_times(fn, block=1e-3):" in src
    assert "return [timer.timeit(number).times[0] for _ in range(5)]" in src
    assert "assert torch.equal(fn(), expected)" in src  # checked before it is timed
    # torch.utils.benchmark's own clock, which waits for the GPU, wherever there is one
    assert 'clock = benchmark.timer if device.type != "cpu" else timeit.default_timer' in src
    assert 'benchmark.Timer("fn()", globals={"fn": fn}, timer=clock)' in src
    for way in WAYS:
        assert f'"{way}": lambda' in src, way
    assert '"take (linear index built before)": lambda: torch.take(xb, lin),' in src
    assert src.index("lin = ") < src.index("same = Timings(")


def _run_timing_cell(cells):
    namespace, out = {"torch": torch, "device": torch.device("cpu")}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(cells["c24"].source, namespace)  # noqa: S102 - the lecture's own cell
    return namespace, out.getvalue()


VERDICT = re.compile(r"^(.+): (\d+\.\d+)× gather's time here, (.+)\.$", re.M)
ROW = re.compile(r"^ +([\d,.]+) µs +([\d,.]+)(?: +([\d,.]+))?  (\S.*)$", re.M)  # name last


def _verdict(ratio):
    return (
        "faster than gather"
        if ratio < 0.9
        else "slower than gather"
        if ratio > 1.1
        else "within 10 % of gather"
    )


def test_the_timing_cell_checks_every_way_and_prints_words_from_its_own_numbers(cells):
    namespace, out = _run_timing_cell(cells)
    same, loop = namespace["same"], namespace["loop"]
    assert list(same) == list(WAYS) and list(loop) == ["gather", "Python loop"]
    assert all(len(times) >= 5 for run in (same, loop) for times in run.values())
    found = {name: (float(r), verdict) for name, r, verdict in VERDICT.findall(out)}
    assert set(found) == set(WAYS) - {"gather"}
    for name, (ratio, verdict) in found.items():
        assert ratio == pytest.approx(same.ratio(name), abs=0.006)
        assert verdict == _verdict(same.ratio(name)), (name, ratio, verdict)
    r = {name: same.ratio(name) for name in same}
    assert f"Fastest here: {min(r, key=r.get)}; slowest: {max(r, key=r.get)}." in out
    assert f"Python loop: {loop.ratio('Python loop'):.0f}× gather's time" in out
    assert torch.get_num_threads() == namespace["threads"]  # put back


def test_a_way_that_computes_something_else_is_not_timed(cells):
    namespace, _ = _run_timing_cell(cells)
    with pytest.raises(AssertionError, match="does not return gather's result"):
        namespace["Timings"]({"gather": lambda: torch.ones(3), "other": lambda: torch.zeros(3)})


def test_the_stored_run_s_words_match_its_stored_table(cells):
    out = printed(cells["c24"])
    table = out.split("\n\n16 rows")[0]
    ratios = {name: float(ratio.replace(",", "")) for _, ratio, _, name in ROW.findall(table)}
    assert set(ratios) == {*WAYS, "plain copy"}
    found = VERDICT.findall(out)
    assert {name for name, _, _ in found} == set(WAYS) - {"gather"}
    for name, ratio, verdict in found:
        assert float(ratio) == pytest.approx(ratios[name], abs=0.006)
        assert verdict == _verdict(float(ratio))
    ways = {w: ratios[w] for w in WAYS}
    assert f"Fastest here: {min(ways, key=ways.get)}; slowest: {max(ways, key=ways.get)}." in out


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_the_timing_tables_line_up_on_screen_and_name_their_ways_in_the_edition(edition):
    """The table puts each way's name last, so a name of any width leaves the numbers in
    their columns; CJK characters take two columns on screen."""
    from gather_course._text import _columns

    path = NB if edition == "en" else NB.parents[1] / "zh" / NB.relative_to(NB.parents[1])
    out = printed({c.id: c for c in nbformat.read(path, 4).cells}["c24"])
    chinese = ("高级索引", "先取余再 gather", "普通复制", "Python 循环", "take（线性索引事先构造）")
    english = ("advanced indexing", "remainder, then gather", "plain copy", "Python loop")
    for name in chinese if edition == "zh" else english:
        assert f"  {name}\n" in out, name
    for part in out.split("\n\n")[1:3]:  # the two tables: a title, a header, the rows
        header, *rows = part.splitlines()[1:]
        assert header.endswith("写法" if edition == "zh" else "way") and rows
        numbers_end = {_columns(line[: line.rindex("  ")]) for line in [header, *rows]}
        assert len(numbers_end) == 1, part  # every line's numbers end in the same column
