"""The steps of a verdict, one by one, on evidence written out by hand (no answer runs).

``run_check`` and the referee gather evidence and call :func:`steps.judge`; these tests give
each step the plain data a judge would find and read the verdict it words
(gather_course/questions/verdicts.py). The check's and the referee's own evidence are tested
end to end in test_questions.py, test_feedback.py and test_referee.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import torch

from gather_course import Tier, exercise
from gather_course.questions import (
    Constraints,
    Evidence,
    Growth,
    Large,
    LargeInputTiming,
    Measurement,
    Seen,
    Stop,
    Summary,
    Timed,
    Unfinished,
    steps,
)
from gather_course.questions._cases import Case
from gather_course.questions._outcome import Outcome
from gather_course.questions.verdicts import Failure

PICK = exercise("basics.pick_per_row")  # vectorized and timed; no op constraints
VIA_TAKE = exercise("friends.gather_via_take")  # forbids gather, requires take
X = torch.arange(12.0).reshape(3, 4)
COLS = torch.tensor([[1, 0], [3, 3], [0, 2]])
CASE = Case("a small case", {"x": X, "cols": COLS})
RIGHT = torch.gather(X, 1, COLS)


@dataclass
class Found(Evidence):
    """Evidence as data; ``asked`` records which questions a step put to it."""

    seen_: list[Seen] = field(default_factory=list)
    reached_: tuple[str, str] | None = None
    unfinished_: Unfinished | None = None
    constraints_: Constraints = field(default_factory=Constraints)
    growth_: Growth | None = None
    timing_: LargeInputTiming | None = None
    asked: list[str] = field(default_factory=list)

    def reached(self):
        self.asked.append("reached")
        return self.reached_

    def seen(self):
        self.asked.append("seen")
        return self.seen_

    def unfinished(self):
        self.asked.append("unfinished")
        return self.unfinished_

    def constraints(self):
        self.asked.append("constraints")
        return self.constraints_

    def growth(self):
        self.asked.append("growth")
        return self.growth_

    def timing(self):
        self.asked.append("timing")
        return self.timing_

    def summary(self):
        return Summary(len(self.seen_), [s.case.label for s in self.seen_], "cpu")


def _fails(step, q, found) -> Failure:
    with pytest.raises(Failure) as failure:
        step(q, found)
    return failure.value


def test_the_order_is_the_one_the_tiers_promise():
    assert steps.STEPS == (
        steps.reaching_in,
        steps.cases,
        steps.finished,
        steps.constraints,
        steps.operations,
        steps.speed,
    )


def test_reaching_in_names_what_and_where_and_passes_when_nothing_is_reached():
    f = _fails(steps.reaching_in, PICK, Found(reached_=("gather_course._check", "line 3")))
    assert f.tier == Tier.CONSTRAINTS
    assert "`gather_course._check` (line 3)" in f.headline
    steps.reaching_in(PICK, Found())  # nothing reached: no verdict


def test_cases_judge_each_outcome_and_the_first_wrong_one_decides():
    wrong = RIGHT.clone()
    wrong[1, 0] += 1
    found = Found(
        seen_=[
            Seen(CASE, Outcome(value=RIGHT)),
            Seen(CASE, Outcome(value=wrong)),
            Seen(CASE, Outcome(value=None)),
        ]
    )
    f = _fails(steps.cases, PICK, found)
    assert f.tier == Tier.WRONG_VALUES and "1 of the 6 values" in f.headline
    assert ("first wrong element", "out[1, 0]") in f.details and f.pair is not None
    steps.cases(PICK, Found(seen_=[Seen(CASE, Outcome(value=RIGHT))]))


def test_a_hidden_case_shows_its_shapes_not_its_values():
    wrong = RIGHT + 1
    f = _fails(steps.cases, PICK, Found(seen_=[Seen(CASE, Outcome(value=wrong), True)]))
    keys = [k for k, _v in f.details]
    assert "expected" not in keys and "got" not in keys and f.pair is None
    assert keys[-1] == "values" and "inputs" in keys


def test_a_check_on_a_gpu_names_gradings_cpu_only_for_a_failure_about_devices():
    moved = Outcome(value=RIGHT.to("meta"))
    f = _fails(steps.cases, PICK, Found(seen_=[Seen(CASE, moved, checked_on="cuda")]))
    assert f.tier == Tier.WRONG_DEVICE and f.details[-1][0] == "grading"
    assert "then on cuda" in f.details[-1][1]
    off = _fails(
        steps.cases, PICK, Found(seen_=[Seen(CASE, Outcome(value=RIGHT + 1), False, "cuda")])
    )
    assert "grading" not in [k for k, _v in off.details]  # check's words equal grading's


@pytest.mark.parametrize(
    ("stop", "status", "said"),
    [
        (Stop.TIMEOUT, "timeout", "longer than 10 s (an endless loop?)"),
        (Stop.TOO_LARGE, "result too large", "more than 64 MB"),
        (Stop.KILLED, "too much memory", "was killed (too much memory, or the code ended"),
        (Stop.ENDED, "exit 3", "ended early (exit 3)"),
    ],
)
def test_finished_says_why_the_job_ended_on_the_case_it_was_on(stop, status, said):
    found = Found(unfinished_=Unfinished(CASE, stop, status, 10.0, 64))
    f = _fails(steps.finished, PICK, found)
    assert f.tier == Tier.EXCEPTION and said in f.headline, f.headline
    assert ("case", "a small case") in f.details
    steps.finished(PICK, Found())


@pytest.mark.parametrize(
    ("found", "said"),
    [
        (Constraints(forbidden_in_code=("gather", "line 2")), "uses `gather` (line 2)"),
        (Constraints(forbidden_in_code=("gather", "")), "your code uses `gather`."),
        (Constraints(forbidden_ran="gather"), "your function ran `gather`"),
        (Constraints(hidden_call=("getattr", "line 4")), "`getattr` (line 4). Leave out"),
        (Constraints(never_ran="take"), "never ran `take`"),
    ],
)
def test_constraints_word_what_broke_them(found, said):
    f = _fails(steps.constraints, VIA_TAKE, Found(constraints_=found))
    assert f.tier == Tier.CONSTRAINTS and said in f.headline, f.headline
    steps.constraints(VIA_TAKE, Found())  # every constraint kept


def test_constraints_are_not_asked_of_a_question_without_any():
    found = Found(constraints_=Constraints(forbidden_ran="gather"))
    steps.constraints(PICK, found)
    assert found.asked == []


def test_operations_that_grow_with_the_input_are_a_loop():
    grows = Found(growth_=Growth("x: [3, 4]", 2, "x: [30, 4]", 20))
    f = _fails(steps.operations, PICK, grows)
    assert f.tier == Tier.NOT_VECTORIZED
    assert ("larger input", "x: [30, 4]: 20 operations") in f.details
    steps.operations(PICK, Found(growth_=Growth("x: [3, 4]", 2, "x: [30, 4]", 2)))
    gather_loop = exercise("basics.gather_loop")  # a loop is asked for: never counted
    steps.operations(gather_loop, grows)


def _timing(measured: Measurement, **more) -> Found:
    return Found(timing_=LargeInputTiming("B=64, C=4096", measured, 0.01, 4.0, 2, 10.0, **more))


@pytest.mark.parametrize(
    ("measured", "more", "tier", "said"),
    [
        (Measurement(Timed.NEW_TASKS), {}, Tier.NOT_VECTORIZED, "started a thread or a process"),
        (Measurement(Timed.WALL_CLOCK), {}, Tier.EXCEPTION, "longer than 10 s and was stopped"),
        (Measurement(Timed.FAILED), {}, Tier.EXCEPTION, "raised an error or ended its process"),
        (Measurement(Timed.OVER_CAP), {}, Tier.NOT_VECTORIZED, "far more CPU time"),
        (Measurement(Timed.MEASURED, 0.5), {}, Tier.NOT_VECTORIZED, "far more CPU time"),
        (
            Measurement(Timed.MEASURED, 0.02),
            {"large": Large.STOPPED},
            Tier.EXCEPTION,
            "longer than 10 s and was stopped",
        ),
        (
            Measurement(Timed.MEASURED, 0.02),
            {"large": Large.RAISED, "error": ("ValueError", "no")},
            Tier.EXCEPTION,
            "large input (B=64, C=4096): ValueError: no",
        ),
        (
            Measurement(Timed.MEASURED, 0.02),
            {"large": Large.WRONG},
            Tier.WRONG_VALUES,
            "wrong values on a large input",
        ),
    ],
)
def test_speed_words_each_way_a_timing_run_ends(measured, more, tier, said):
    f = _fails(steps.speed, PICK, _timing(measured, **more))
    assert f.tier == tier and said in f.headline, f.headline


def test_speed_shows_the_measured_time_or_the_cap_it_passed():
    slow = _fails(steps.speed, PICK, _timing(Measurement(Timed.MEASURED, 0.5)))
    assert dict(slow.details)["large input"] == "B=64, C=4096: 0.50 s of CPU for 2 calls"
    assert dict(slow.details)["the limit"] == "4 × 0.010 s"
    capped = _fails(steps.speed, PICK, _timing(Measurement(Timed.OVER_CAP)))
    assert "more than 0.04 s" in dict(capped.details)["large input"]
    steps.speed(PICK, _timing(Measurement(Timed.MEASURED, 0.039)))  # within 4 x 0.01 s


def test_judge_stops_at_the_first_failure_and_asks_nothing_after_it():
    found = Found(
        reached_=None,
        seen_=[Seen(CASE, Outcome(value=RIGHT + 1))],
        timing_=LargeInputTiming("B=1", Measurement(Timed.FAILED), 1.0, 2.0, 2, 10.0),
    )
    result = steps.judge(PICK, found)
    assert result.tier == Tier.WRONG_VALUES and not result.passed
    assert found.asked == ["reached", "seen"]  # no timing run for a wrong answer


def test_judge_passes_when_every_step_passes_and_says_how_many_cases():
    found = Found(
        seen_=[Seen(CASE, Outcome(value=RIGHT))] * 2,
        growth_=Growth("x: [3, 4]", 2, "x: [30, 4]", 2),
        timing_=LargeInputTiming("B=1", Measurement(Timed.MEASURED, 0.01), 0.01, 4.0, 2, 10.0),
    )
    result = steps.judge(PICK, found)
    assert result.passed and result.tier == Tier.PASSED
    assert result.headline == "All 2 test cases pass (a small case; on cpu)."
    assert found.asked == ["reached", "seen", "unfinished", "growth", "timing"]
