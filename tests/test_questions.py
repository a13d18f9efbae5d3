"""The question bank: right answers pass, typical wrong answers fail at the expected tier."""

import pytest
import torch

from gather_course import GatherCourseError, exercise, exercise_ids
from gather_course import Tier as T
from tests.answers import RIGHT, WRONG
from tests.helpers import solution_fn

IDS = exercise_ids()
FIXED_IDS = [  # in the order of the notebooks (tests/test_course.py checks that order)
    "basics.pick_per_row",
    "basics.gather_loop",
    "basics.reverse_index",
    "nlp.label_scores",
    "nlp.token_log_probs",
    "nlp.causal_lm_log_probs",
    "vision.gather_pixels",
    "vision.select_heads",
    "topk.select_patches",
    "topk.scatter_back",
    "mae.random_masking",
    "mae.restore_sequence",
    "friends.gather_backward",
    "friends.gather_via_take",
    "nlp.masked_nll",
]


def own_solution(qid):
    return solution_fn(exercise(qid))


def test_ids_and_signatures_are_the_fixed_ones():
    assert IDS == FIXED_IDS
    sigs = {q: exercise(q).args for q in IDS}
    assert sigs["nlp.masked_nll"] == ("logits", "labels", "ignore_index")
    assert sigs["vision.gather_pixels"] == ("features", "coords")
    assert sigs["friends.gather_backward"] == ("grad_out", "dim", "index", "input_shape")
    assert sigs["mae.random_masking"] == ("x", "mask_ratio", "noise")


@pytest.mark.parametrize("qid", IDS)
@pytest.mark.parametrize("seed, large", [(0, False), (11, True), (2024, False)])
def test_own_solution_passes(qid, seed, large):
    result = exercise(qid).check(own_solution(qid), seed=seed, large=large)
    assert result.passed, str(result)
    assert result and "✅" in result._repr_markdown_()


@pytest.mark.parametrize("qid", IDS)
def test_catalogue_is_complete(qid):
    assert len(RIGHT[qid]) >= 2, "at least two different correct implementations"
    assert len(WRONG[qid]) >= 3, "at least three typical wrong answers"


@pytest.mark.parametrize(
    "qid, fn",
    [(q, f) for q, fs in RIGHT.items() for f in fs],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_other_correct_answers_pass(qid, fn):
    for seed, large in [(0, False), (5, True)]:
        result = exercise(qid).check(fn, seed=seed, large=large)
        assert result.passed, str(result)


@pytest.mark.parametrize(
    "qid, fn, tier",
    [(q, f, t) for q, items in WRONG.items() for f, t in items],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_typical_wrong_answers_fail_at_their_tier(qid, fn, tier):
    result = exercise(qid).check(fn)
    assert not result.passed and not result
    assert result.tier == tier, str(result)
    text, md = str(result), result._repr_markdown_()
    assert text.startswith(f"❌ Incorrect ({qid}): ") or tier == T.NOT_ATTEMPTED, text
    assert md.startswith("❌ **")
    headline = result.headline
    assert headline[0].isupper() or headline[0].isdigit(), headline  # a sentence
    assert tier.lower() not in headline.lower(), (tier, headline)  # the tier said once
    assert (".hint()" in text) == (tier != T.NOT_ATTEMPTED)
    if tier in (T.EXCEPTION, T.WRONG_TYPE, T.WRONG_SHAPE, T.WRONG_DTYPE, T.WRONG_VALUES):
        assert "case:" in text and "inputs:" in text  # the inputs' shapes are shown
    if tier == T.WRONG_VALUES and exercise(qid).verify is None:
        for part in ("first wrong element", "expected", "got", "formula"):
            assert part in text, text


@pytest.mark.parametrize("qid", IDS)
def test_stub_is_not_attempted(qid):
    def stub(*args):
        raise NotImplementedError()

    result = exercise(qid).check(stub)
    assert result.tier == T.NOT_ATTEMPTED and "NotImplementedError" in str(result)


def test_only_the_templates_own_raise_is_not_attempted():
    """torch's NotImplementedError (an op it lacks on a device or dtype: CUDA has no integer
    matmul) and a helper's are errors of an attempted answer, said with their message."""
    q = exercise("basics.pick_per_row")

    def no_uint32_matmul(x, cols):
        return torch.ones(2, 2, dtype=torch.uint32) @ torch.ones(2, 2, dtype=torch.uint32)

    def unfinished_helper():
        raise NotImplementedError()

    def calls_unfinished_helper(x, cols):
        return unfinished_helper()

    def says_why(x, cols):
        raise NotImplementedError("rows of length 1 are not handled yet")

    def bare_raise(x, cols):
        raise NotImplementedError

    torch_says = q.check(no_uint32_matmul)
    assert torch_says.tier == T.EXCEPTION, str(torch_says)
    assert "raised NotImplementedError: " in str(torch_says)
    assert "not implemented for 'UInt32'" in str(torch_says)  # torch's own message
    assert q.check(calls_unfinished_helper).tier == T.EXCEPTION
    assert "rows of length 1" in str(q.check(says_why))
    assert q.check(bare_raise).tier == T.NOT_ATTEMPTED


def test_values_feedback_is_specific():
    def off_by_one_column(x, cols):
        return torch.gather(x, 1, (cols + 1) % x.size(1))

    text = str(exercise("basics.pick_per_row").check(off_by_one_column))
    assert "first wrong element: out[0, 0]" in text
    assert "formula: out[0, 0] = x[0, cols[0, 0]] = x[0, " in text


def test_exception_feedback_names_the_learners_line():
    def broken(x, cols):
        return torch.gather(x, 0, cols)

    text = str(exercise("basics.pick_per_row").check(broken))
    assert "RuntimeError" in text and "return torch.gather(x, 0, cols)" in text


def test_shape_feedback_suggests_squeeze():
    text = str(exercise("nlp.label_scores").check(lambda lg, lb: lg.gather(-1, lb.unsqueeze(-1))))
    assert "missing .squeeze(-1)" in text


def test_not_vectorized_feedback_counts_operations():
    def rowwise(logits, labels):
        return torch.stack(
            [logits[b].gather(-1, labels[b, :, None])[:, 0] for b in range(logits.size(0))]
        )

    result = exercise("nlp.label_scores").check(rowwise)
    assert result.tier == T.NOT_VECTORIZED
    assert "operations" in str(result) and "Python loop" in str(result)


def test_learner_inputs_are_left_alone_by_the_checker():
    seen = []

    def spy(x, cols):
        seen.append((x, x.clone(), cols.clone()))
        return torch.gather(x, 1, cols)

    exercise("basics.pick_per_row").check(spy)
    assert seen and all(torch.equal(x, x0) for x, x0, _ in seen)
    assert any(not x.is_contiguous() for x, _, _ in seen)  # non-contiguous inputs are tried


def test_check_is_deterministic_and_seed_changes_the_battery():
    shapes = {}
    for seed in (0, 0, 1):
        got = []
        exercise("basics.pick_per_row").check(
            lambda x, c, got=got: got.append(x.sum()) or x.gather(1, c), seed=seed
        )
        shapes.setdefault(seed, []).append(torch.stack([g.cpu() for g in got]))
    assert torch.equal(shapes[0][0], shapes[0][1])
    assert not torch.equal(shapes[0][0], shapes[1][0])


def test_hints_and_solution():
    q = exercise("topk.select_patches")
    assert len(q.hints) >= 2
    assert q.hint().startswith("**Hint 1/") and q.hint(2)._repr_markdown_().startswith("**Hint 2/")
    assert "```python" in q.solution() and "def select_patches" in q.solution()
    assert "select_patches(patches, scores, k)" in q._repr_markdown_()
    with pytest.raises(GatherCourseError, match="hints 1 to"):
        q.hint(len(q.hints) + 1)
    with pytest.raises(GatherCourseError, match="hints 1 to"):
        q.hint(0)


@pytest.mark.parametrize("qid", IDS)
def test_every_question_has_two_or_more_hints(qid):
    q = exercise(qid)
    assert len(q.hints) >= 2 and all(len(h) > 20 for h in q.hints)


def test_unknown_id_and_bad_fn():
    with pytest.raises(GatherCourseError, match=r"Did you mean 'basics\.pick_per_row'"):
        exercise("basics.pick_per_rows")
    with pytest.raises(GatherCourseError, match="question id"):
        exercise(3)
    q = exercise("basics.pick_per_row")
    with pytest.raises(GatherCourseError, match="without parentheses"):
        q.check(torch.zeros(2))
    with pytest.raises(GatherCourseError, match="expects your function"):
        q.check(None)
    with pytest.raises(GatherCourseError, match="seed must be an int"):
        q.check(own_solution("basics.pick_per_row"), seed="1")


def test_assert_passed_raises_with_the_feedback():
    result = exercise("basics.pick_per_row").check(lambda x, c: x)
    with pytest.raises(AssertionError, match="Expected out of shape"):  # plain text: no marks
        result.assert_passed()
    assert "Expected `out` of shape" in result._repr_markdown_()  # Markdown: code as code
    exercise("basics.pick_per_row").check(own_solution("basics.pick_per_row")).assert_passed()


# ---------------------------------------------------------------- the tiers' order
def _pick_mutates_then_raises(x, cols):
    x.zero_()
    raise ValueError("boom")


def _pick_mutates_returns_nothing(x, cols):
    x.zero_()


def _pick_wrong_shape_and_dtype(x, cols):
    return torch.gather(x, 1, cols).unsqueeze(0).double()


def _pick_wrong_dtype_and_values(x, cols):
    return (torch.gather(x, 1, cols) + 1).double()


def _loop_wrong_values_with_gather(input, dim, index):
    return torch.gather(input, dim, index) + 1


def _pick_mutates_returns_right(x, cols):
    out = torch.gather(x, 1, cols)
    x.zero_()
    return out


# (question, a function with two faults, the earlier tier, the same function with only the
# later fault): the check reports the earlier tier, so the documented order is the checked one.
TWO_FAULTS = [
    (
        "basics.pick_per_row",
        _pick_mutates_then_raises,
        T.EXCEPTION,
        _pick_mutates_returns_right,
        T.MUTATED,
    ),
    (
        "basics.pick_per_row",
        _pick_mutates_returns_nothing,
        T.MUTATED,
        lambda x, c: None,
        T.WRONG_TYPE,
    ),
    (
        "basics.pick_per_row",
        _pick_wrong_shape_and_dtype,
        T.WRONG_SHAPE,
        lambda x, c: torch.gather(x, 1, c).double(),
        T.WRONG_DTYPE,
    ),
    (
        "basics.pick_per_row",
        _pick_wrong_dtype_and_values,
        T.WRONG_DTYPE,
        lambda x, c: torch.gather(x, 1, c) + 1,
        T.WRONG_VALUES,
    ),
    (
        "basics.gather_loop",
        _loop_wrong_values_with_gather,
        T.WRONG_VALUES,
        lambda i, d, x: torch.gather(i, d, x),
        T.CONSTRAINTS,
    ),
]


@pytest.mark.parametrize(
    "qid, both, earlier, later_only, later",
    TWO_FAULTS,
    ids=lambda v: getattr(v, "__name__", None) or str(v),
)
def test_a_check_reports_the_earlier_of_two_tiers(qid, both, earlier, later_only, later):
    tiers = list(T)
    assert tiers.index(earlier) < tiers.index(later)
    assert exercise(qid).check(both).tier == earlier
    assert exercise(qid).check(later_only).tier == later


def test_constraints_come_before_vectorization():
    q = exercise("friends.gather_via_take")

    def per_element_gather(input, dim, index):  # right values, a loop, and gather
        d = dim % input.dim()
        out = torch.empty(index.shape, dtype=input.dtype, device=input.device)
        for pos in (
            torch.cartesian_prod(*[torch.arange(s) for s in index.shape])
            .reshape(-1, index.dim())
            .tolist()
        ):
            src = list(pos)
            src[d] = int(index[tuple(pos)])
            zero = torch.tensor([0], device=input.device)
            out[tuple(pos)] = torch.gather(input[tuple(src)].reshape(1), 0, zero)[0]
        return out

    def per_element_take(input, dim, index):  # the same loop with take: no constraint broken
        d = dim % input.dim()
        out = torch.empty(index.shape, dtype=input.dtype, device=input.device)
        for pos in (
            torch.cartesian_prod(*[torch.arange(s) for s in index.shape])
            .reshape(-1, index.dim())
            .tolist()
        ):
            src = list(pos)
            src[d] = int(index[tuple(pos)])
            zero = torch.tensor([0], device=input.device)
            out[tuple(pos)] = torch.take(input[tuple(src)].reshape(1), zero)[0]
        return out

    assert q.check(per_element_gather).tier == T.CONSTRAINTS
    assert q.check(per_element_take).tier == T.NOT_VECTORIZED


def test_tiers_are_strings_and_public():
    import gather_course

    assert "Tier" in gather_course.__all__ and "CheckResult" in gather_course.__all__
    assert T.WRONG_SHAPE == "wrong shape" and f"{T.WRONG_SHAPE}" == "wrong shape"
    assert list(T)[-1] is T.PASSED
    assert exercise("basics.pick_per_row").check(lambda x, c: x).tier is T.WRONG_SHAPE


# ---------------------------------------------------------------- declaring a question
def test_a_declaration_takes_its_name_from_the_qid_and_its_arguments_from_the_spec():
    from gather_course.questions._question import Question

    q = exercise("topk.select_patches")
    assert (q.name, q.args) == ("select_patches", ("patches", "scores", "k"))
    fields = dict(
        title="t",
        task="t",
        sizes=(dict(n=2),),
        large_sizes=(),
        scaling=((), ()),
        hints=("h",),
        solution_code="",
    )

    def spec(a, b):
        return a

    ok = Question("demo.ok", spec=spec, make=lambda gen, n: {"a": n, "b": n}, **fields)
    assert ok.signature == "ok(a, b)" and ok.formula is None and ok.constraints
    with pytest.raises(TypeError, match=r"demo.bad: make\(\) returns the inputs \('a', 'c'\)"):
        Question("demo.bad", spec=spec, make=lambda gen, n: {"a": n, "c": n}, **fields)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="an answer that works only on CUDA")
def test_an_answer_that_works_only_on_cuda_fails_check_as_it_fails_grading():
    def cuda_only(x, cols):  # passes on CUDA inputs; grading runs on the CPU
        return x.cuda().gather(1, cols.cuda())

    result = exercise("basics.pick_per_row").check(cuda_only)
    assert result.tier == T.WRONG_DEVICE, str(result)
    assert "grading: runs your function on the CPU" in str(result)


def test_check_says_grading_runs_on_the_cpu_where_a_cpu_case_fails_beside_a_gpu(monkeypatch):
    """On a machine with a GPU, check runs each case on the CPU first (as grading does), then
    on the GPU. A CPU case that fails there says why the CPU: the GPU is played here by the
    meta device, never reached since the CPU case fails first."""
    from gather_course.questions import _check

    def cuda_only(x, cols):  # right values on another device than its inputs' (the CPU)
        return x.gather(1, cols).to("meta")

    def wrong_values(x, cols):  # not about devices: check words it as grading does
        return x.gather(1, cols.flip(0))

    monkeypatch.setattr(_check, "default_device", lambda: torch.device("meta"))
    text = str(exercise("basics.pick_per_row").check(cuda_only))
    assert (
        "grading: runs your function on the CPU, so check tries every case there first, "
        "then on meta." in text
    ), text
    assert "grading:" not in str(exercise("basics.pick_per_row").check(wrong_values))
    monkeypatch.setattr(_check, "default_device", lambda: torch.device("cpu"))
    assert "grading:" not in str(exercise("basics.pick_per_row").check(cuda_only))
