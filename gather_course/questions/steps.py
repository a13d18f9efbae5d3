"""The order of a verdict: the same steps for the in-notebook check and for grading.

A judge gathers :class:`Evidence` about one answer; :func:`judge` asks it step by step,
as nbgrader runs its preprocessors, and the first step that fails decides (its words are
:mod:`.verdicts`'). ``run_check`` (:mod:`._check`) gathers evidence by calling the function
in the learner's process; grading's referee (:mod:`gather_course.grading._referee`) from
the plain data its sandboxed job sent back. Evidence is asked for lazily: a step runs only
once every earlier step has passed, so a check never times an answer that is wrong.

>>> [step.__name__ for step in STEPS]
['reaching_in', 'cases', 'finished', 'constraints', 'operations', 'speed']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from . import verdicts as v
from ._cases import Case
from ._declared import Declared
from ._judge import judge_case
from ._outcome import Outcome
from ._result import CheckResult


@dataclass(frozen=True)
class Seen:
    """One case and what the answer did on it. ``hidden``: one of grading's hidden cases
    (its values are not shown); ``checked_on``: the device a check also runs on, when this
    case ran on the CPU of a machine that has it (grading runs on the CPU)."""

    case: Case
    outcome: Outcome
    hidden: bool = False
    checked_on: str = ""


@dataclass(frozen=True)
class Unfinished:
    """The job ended on ``case`` before every call had a result (grading only)."""

    case: Case
    stop: v.Stop
    status: str  # how the worker saw it end, shown as is
    limit: float  # the call limit, seconds
    cap_mb: int  # what a job may send back


@dataclass(frozen=True)
class Constraints:
    """What a judge found about the question's op constraints; empty: every one kept.

    The check sees ops run (its op counter); grading also scans the code the function
    reaches, and refuses code that hides what it calls."""

    forbidden_ran: str = ""  # a forbidden op seen running (the check's words)
    forbidden_in_code: tuple[str, str] | None = None  # (name, where): grading's words
    hidden_call: tuple[str, str] | None = None  # (name, where) of a call the scan cannot read
    never_ran: str = ""  # a required op never seen running


@dataclass(frozen=True)
class Growth:
    """Tensor operations counted on a small and a larger input (shapes as text)."""

    small: str
    n_small: int
    big: str
    n_big: int


class Large(Enum):
    """The answer's last result on the large input, judged once its time was within the
    limit."""

    RIGHT = "right"
    STOPPED = "stopped"  # the job's own alarm stopped the call
    RAISED = "raised"
    WRONG = "wrong"


@dataclass(frozen=True)
class LargeInputTiming:
    """The answer's CPU time on the large input against the course solution's (grading),
    and its result there (``large``; ``error``: (type, message) when it raised)."""

    sizes: str
    measured: v.Measurement
    solution: float  # the course solution's CPU seconds
    factor: float  # the limit, as a multiple of ``solution``
    calls: int
    call_limit: float
    large: Large = Large.RIGHT
    error: tuple[str, str] = ("", "")  # (type, message) when ``large`` is "raised"


@dataclass(frozen=True)
class Summary:
    """What a pass says: how many cases, their labels, where they ran, how many hidden."""

    n: int
    labels: list[str]
    devices: str
    hidden: int = 0


class Evidence:
    """What one judge can find out about an answer, step by step. Each method is asked
    only when every earlier step has passed; the defaults say "nothing to find"."""

    def reached(self) -> tuple[str, str] | None:
        """(name, where) of the first name reaching into the course itself, or None."""
        return None

    def seen(self) -> Iterable[Seen]:
        """Each case and its outcome, in order (calls may happen as they are asked for)."""
        return ()

    def unfinished(self) -> Unfinished | None:
        return None

    def constraints(self) -> Constraints:
        return Constraints()

    def growth(self) -> Growth | None:
        return None

    def timing(self) -> LargeInputTiming | None:
        return None

    def summary(self) -> Summary:
        raise NotImplementedError


Step = Callable[[Declared, Evidence], None]


def reaching_in(q: Declared, ev: Evidence) -> None:
    """An answer that names the course (the bank, its private modules) is refused first."""
    reached = ev.reached()
    if reached:
        raise v.reaches_into_course(*reached)


def cases(q: Declared, ev: Evidence) -> None:
    """Every case against the loop spec, in order; the first wrong one decides."""
    for seen in ev.seen():
        try:
            judge_case(q, seen.case, seen.outcome)
        except v.Failure as failure:
            if seen.hidden:
                raise v.hidden(failure) from None
            if seen.checked_on:
                raise v.graded_on_the_cpu(failure, seen.checked_on) from None
            raise


def finished(q: Declared, ev: Evidence) -> None:
    """A job that ended before its last call fails on the case it was on."""
    stop = ev.unfinished()
    if stop:
        raise v.unfinished(stop.case, stop.stop, stop.status, stop.limit, stop.cap_mb)


def constraints(q: Declared, ev: Evidence) -> None:
    """The ops a question forbids or requires."""
    if not (q.forbid or q.require):
        return
    found = ev.constraints()
    if found.forbidden_in_code:
        raise v.forbidden_in_code(q.forbidden_text, *found.forbidden_in_code)
    if found.forbidden_ran:
        raise v.forbidden_ran(q.forbidden_text, found.forbidden_ran)
    if found.hidden_call:
        raise v.hidden_call(v.constraint_words(q), *found.hidden_call)
    if found.never_ran:
        raise v.never_ran(q.required_text, found.never_ran)


def operations(q: Declared, ev: Evidence) -> None:
    """A vectorized answer runs as many tensor operations on a larger input."""
    if not q.vectorized:
        return
    g = ev.growth()
    if g and g.n_big > g.n_small:
        raise v.operations_grow(g.small, g.n_small, g.big, g.n_big)


def speed(q: Declared, ev: Evidence) -> None:
    """A vectorized answer's CPU time on a large input, within the question's factor of the
    course solution's; and right there too."""
    if not (q.vectorized and q.timing):
        return
    t = ev.timing()
    if t is None:
        return
    m, limit = t.measured, t.factor * t.solution
    if m.how is v.Timed.NEW_TASKS:
        raise v.started_tasks(t.sizes)
    if m.how is v.Timed.WALL_CLOCK:  # it waited, slept or hung: no CPU time tells a loop
        raise v.stopped_on_large(t.sizes, t.call_limit)
    if m.how is v.Timed.FAILED:
        raise v.failed_on_large(t.sizes)
    if m.over(limit):
        raise v.too_slow(t.sizes, m, t.solution, t.factor, t.calls)
    if t.large is Large.STOPPED:
        raise v.stopped_on_large(t.sizes, t.call_limit)
    if t.large is Large.RAISED:
        raise v.raised_on_large(t.sizes, *t.error)
    if t.large is Large.WRONG:
        raise v.wrong_on_large(t.sizes)


STEPS: tuple[Step, ...] = (reaching_in, cases, finished, constraints, operations, speed)


def judge(q: Declared, ev: Evidence) -> CheckResult:
    """The verdict: the first step that fails, or a pass."""
    try:
        for step in STEPS:
            step(q, ev)
    except v.Failure as failure:
        return failure.result(q)
    s = ev.summary()
    return v.all_pass(q.qid, s.n, s.labels, s.devices, s.hidden)
