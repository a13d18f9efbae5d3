"""gather_reference must agree with torch.gather on every call: same result, or both refuse."""

import random

import pytest
import torch

from gather_course import GatherCourseError, gather_reference
from tests.helpers import outcome, random_call


def test_randomized_battery_agrees_with_torch():
    rng = random.Random(1234)
    valid = invalid = 0
    for _ in range(1500):
        input, dim, index = random_call(rng)
        ok_t, want = outcome(torch.gather, input, dim, index)
        ok_r, got = outcome(gather_reference, input, dim, index)
        assert ok_t == ok_r, (list(input.shape), dim, list(index.shape), index.dtype, index)
        if ok_t:
            valid += 1
            assert got.shape == want.shape and got.dtype == want.dtype
            assert torch.equal(got, want)
        else:
            invalid += 1
    assert valid > 300 and invalid > 300  # the battery covers both sides


@pytest.mark.parametrize(
    "input, dim, index",
    [
        (torch.tensor(5.0), 0, torch.tensor(0)),  # 0-d
        (torch.tensor(5.0), -1, torch.tensor([0, 0, 0])),  # 0-d input, 1-d index
        (torch.arange(3.0), 0, torch.tensor(2)),  # 1-d input, 0-d index
        (torch.zeros(2, 3), 1, torch.zeros(0, 2, dtype=torch.long)),  # empty index
        (torch.zeros(2, 3), 1, torch.zeros(5, 0)),  # empty float index: accepted
        (torch.zeros(2, 3), 0, torch.zeros(0, dtype=torch.long)),  # empty, fewer dims: accepted
        (torch.arange(12).reshape(3, 4), -1, torch.tensor([[3], [0]])),  # negative dim, smaller
        (torch.arange(24).reshape(2, 3, 4), -3, torch.ones(1, 3, 4, dtype=torch.int32)),
        (torch.tensor([True, False]), 0, torch.tensor([1, 1, 0])),  # bool input
        (torch.arange(12.0).reshape(3, 4).t(), 0, torch.tensor([[3, 0, 1]])),  # non-contiguous
    ],
)
def test_edge_cases_match_torch(input, dim, index):
    want = torch.gather(input, dim, index)
    got = gather_reference(input, dim, index)
    assert got.shape == want.shape and got.dtype == want.dtype and torch.equal(got, want)


def test_seed_examples():
    x = torch.tensor([[10, 20, 30], [40, 50, 60]])
    assert gather_reference(x, 1, torch.tensor([[0, 2], [1, 0]])).tolist() == [[10, 30], [50, 40]]
    t = torch.arange(24).reshape(2, 3, 4)
    idx = torch.tensor([[[0, 0, 0, 0], [2, 2, 2, 2]], [[0, 0, 0, 0], [2, 2, 2, 2]]])
    assert gather_reference(t, 1, idx).tolist() == [
        [[0, 1, 2, 3], [8, 9, 10, 11]],
        [[12, 13, 14, 15], [20, 21, 22, 23]],
    ]


@pytest.mark.parametrize(
    "input, dim, index, words",
    [
        (torch.zeros(2, 3), 2, torch.zeros(2, 3, dtype=torch.long), "dim=2 is out of range"),
        (
            torch.zeros(3, 4, 5),
            1,
            torch.zeros(3, 4, dtype=torch.long),
            "index has 2 dims but input has 3",
        ),
        (torch.zeros(2, 3), 1, torch.zeros(3, 1, dtype=torch.long), "index.size(0) is 3"),
        (torch.zeros(2, 3), 1, torch.zeros(2, 1), "dtype float32"),
        (torch.zeros(2, 3), 1, torch.full((2, 1), 3), "out of range"),
        (torch.zeros(2, 3), 1, torch.full((2, 1), -1), "does not count from the end"),
        ([1, 2, 3], 0, torch.tensor([0]), "input must be a torch.Tensor, got list"),
        (torch.zeros(3), 0.0, torch.tensor([0]), "dim must be an int, got float"),
        (torch.zeros(3), True, torch.tensor([0]), "dim must be an int, got bool"),
    ],
)
def test_rejections_say_what_and_why(input, dim, index, words):
    with pytest.raises(GatherCourseError) as info:
        gather_reference(input, dim, index)
    assert words in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_inputs_are_not_modified():
    x, i = torch.randn(3, 4), torch.randint(0, 4, (3, 2))
    x0, i0 = x.clone(), i.clone()
    gather_reference(x, 1, i)
    assert torch.equal(x, x0) and torch.equal(i, i0)
