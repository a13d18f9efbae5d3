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

from collections.abc import Callable

from . import verdicts as v
from ._declared import Declared
from ._evidence import (
    Evidence,
    Large,
)
from ._judge import judge_case
from ._result import CheckResult

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
