"""The vectorized constraint, by CPU time: the answer on a large input against the course solution.

Both are measured by the kernel in the same kind of job process: the job runs the cells,
stops itself (the supervisor reads its CPU clock), and only then receives the timing input,
drawn from a secret seed. The answer fails past the question's ``timing_factor`` times the
solution's time, and it must be right on that input too.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import torch

from ..questions import Large, LargeInputTiming, Measurement, Timed, exercise
from ..questions.verdicts import sizes_text
from ._frames import JobStatus, ended
from ._jobdata import TIMING_REPEAT, _outcome, _timing_bytes, call_seed
from ._submission import NotGraded

if TYPE_CHECKING:
    from ..questions import Question
    from ._submission import Submission


def _baseline_key(q: Question) -> str:
    return f"{q.qid}:{q.timing!r}"


def _reference_cells(q: Question) -> list[str]:
    return ["import itertools\nimport torch\nimport torch.nn.functional as F\n", q.solution_code]


class _TimingConstraint:
    """The referee's timing half (:class:`~._referee.Referee` is one): it needs the referee's
    ``_job`` (run cells and calls on its worker), ``close`` (drop that worker) and
    ``call_limit`` (its wall-clock limit per call)."""

    _job: Any
    close: Any
    call_limit: float

    def measure(
        self, cells: list[str], q: Question, seed: int, cpu_cap: float = 0.0
    ) -> Measurement:
        """One timing run: the CPU seconds of the timed calls alone, on the large input drawn
        from ``seed`` (stopped past ``cpu_cap`` seconds, when one is given).

        The job process runs the cells, stops itself (the supervisor reads its CPU time),
        and only then receives the input: nothing at the top of a cell can prepare for it.
        """
        later = _timing_bytes(q, seed)
        reply, result = self._job(
            cells, q.name, later=later, n_calls=TIMING_REPEAT, cpu_cap=cpu_cap
        )
        status = ended(reply).status
        if status in _TIMED:
            return Measurement(_TIMED[status])
        if status is not JobStatus.OK or reply.get("calls_cpu") is None:
            return Measurement(Timed.FAILED)
        results = result.get("results") or [None]
        return Measurement(Timed.MEASURED, float(reply["calls_cpu"]), results[-1])

    def baseline(self, q: Question, seed: int) -> float:
        """The course solution's CPU seconds on the timing input, measured once per question
        (in a job process of its own: the template never holds it, no student's process does),
        shared by every referee of this process.

        A class variant is timed against the public solution (the bank holds no variant's
        vectorized answer); its limit adds what its change of inputs costs
        (:func:`_variant_extra`)."""
        if q.variant_name != "public":
            return self.baseline(exercise(q.qid), seed)
        key = _baseline_key(q)
        with _BASELINE_LOCKS.setdefault(key, threading.Lock()):  # once for all referees
            runs: list[float] = []
            for _attempt in range(_BASELINE_RUNS + 1):  # one failed run may be measured again
                if key in _BASELINES or len(runs) == _BASELINE_RUNS:
                    break
                measured = self.measure(_reference_cells(q), q, seed)
                if measured.how is Timed.MEASURED and (measured.cpu or 0) > 0:
                    runs.append(measured.cpu)  # never a failed one: it would judge everyone
                else:
                    self.close()  # measure it again on a fresh worker
            if runs and key not in _BASELINES:
                _BASELINES[key] = min(runs)  # a run the machine slowed down is not the solution
            if key not in _BASELINES:
                raise NotGraded(
                    f"the grader could not time the course's solution of {q.qid} (a worker "
                    "problem, not the submission's); grade it again"
                )
        return _BASELINES[key]

    def timing(self, q: Question, sub: Submission, seed: int) -> LargeInputTiming:
        """The answer's CPU time on the large input against the course solution's; and,
        once within the limit, its last result there. A run over the limit is measured
        once more (a run can be paused by the host): the faster counts."""
        ref = self.baseline(q, seed)
        factor = q.timing_factor
        if q.variant_name != "public":
            factor += _variant_extra(q, seed)
        cap = _CAP_MARGIN * factor * ref
        got = self.measure(sub.cells, q, seed, cpu_cap=cap)
        for _again in range(_CONFIRM):  # too slow must be slow again
            if not got.over(factor * ref):  # within the limit, or not about CPU time
                break
            again = self.measure(sub.cells, q, seed, cpu_cap=cap)
            if again.seconds is not None and again.seconds < (got.seconds or 0):
                got = again
        timing = LargeInputTiming(
            sizes_text(q.timing or {}), got, ref, factor, TIMING_REPEAT, self.call_limit
        )
        if got.how is not Timed.MEASURED or got.over(factor * ref):
            return timing
        large, error = _large_answer(q, got.raw, seed)
        return replace(timing, large=large, error=error)


def _large_answer(q: Question, raw: Any, seed: int) -> tuple[Large, tuple[str, str]]:
    """The answer's last result on the large input, against the course solution's."""
    outcome = _outcome(raw)
    if outcome.error and outcome.error.get("stopped"):  # the job's own alarm
        return Large.STOPPED, ("", "")
    if outcome.error:
        return Large.RAISED, (outcome.error["type"], outcome.error["message"])
    expected = _solution_on(q, call_seed(seed, TIMING_REPEAT - 1))  # the last call's
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = outcome.value if isinstance(outcome.value, (tuple, list)) else (outcome.value,)
    ok = len(got) == len(expected)
    for exp, out in zip(expected, got if ok else ()):
        ok = (
            ok
            and type(out) is torch.Tensor
            and out.shape == exp.shape
            and (  # the same values exactly (most answers: a fraction of the comparison's time)
                (out.dtype == exp.dtype and torch.equal(out, exp))
                or bool(torch.isclose(out.double(), exp.double(), rtol=1e-4, atol=1e-5).all())
            )
        )
    return (Large.RIGHT if ok else Large.WRONG), ("", "")


# How a timing job that did not run to its end is measured.
_TIMED = {
    JobStatus.TIMEOUT: Timed.WALL_CLOCK,  # the wall clock's limit, not the CPU's
    JobStatus.CPU_LIMIT: Timed.OVER_CAP,
    JobStatus.NEW_TASKS: Timed.NEW_TASKS,  # a thread or process began during the timed calls
}


# The vectorized constraint: the answer's CPU time on the large input against the course solution's,
# both measured by the kernel in the same worker, within the question's ``timing_factor``.
# benchmarks/bench_timing.py measures, per question, the slowest honest whole-tensor answer
# and the fastest Python loop as multiples of the solution; each factor sits between them,
# with the margins docs/grading.md records.
# the solution's CPU seconds, per question (all workers are alike)
_BASELINES: dict[str, float] = {}
_BASELINE_LOCKS: dict[str, threading.Lock] = {}
_CAP_MARGIN = 1.5  # a timing job is stopped past 1.5 x the limit: its verdict is known
# CPU time is not the same on every run: a virtual machine's host can take the processor
# mid-call and charge the pause to it. So the baseline is the faster of two runs, and an
# answer over the limit is measured once more before it loses the question: the faster run
# counts. (Each run is a fresh job on the same secret inputs; nothing a job leaves reaches
# the next: /tmp is wiped, /dev is read-only, the template is checked.)
_BASELINE_RUNS = 2
_CONFIRM = 1  # more runs of a loop: more of the grader's time for each loop in the class
_SOLUTIONS: OrderedDict[tuple[str, str, int], Any] = OrderedDict()


def _solution_on(q: Question, seed: int) -> Any:
    """What is right on the timing input built from ``seed``: the course's solution (our code,
    run here) or, for a class variant, the public solution on its inputs laid out the public
    way (the bank holds no variant's answer), or its own loop spec where the public solution
    does not give it (a few seconds, once per variant and seed)."""
    key = (q.qid, q.variant_name, seed)
    if key in _SOLUTIONS:
        _SOLUTIONS.move_to_end(key)
        return _SOLUTIONS[key]
    case = q.build(torch.Generator().manual_seed(seed), q.timing or {})
    v = q.shown if q.variant_name != "public" else None
    if v is not None and v.spec is not None:
        answer = q.spec(*case.inputs.values())
    else:
        public = exercise(q.qid)
        namespace: dict[str, Any] = {}
        for cell in _reference_cells(public):
            exec(cell, namespace)  # noqa: S102 - the course's own solution text
        if v is None:
            answer = namespace[q.name](*case.inputs.values())
        else:
            answer = v.from_public(namespace[q.name](*v.to_public(case.inputs).values()))
    while len(_SOLUTIONS) >= 128:  # a check draws a fresh seed every time
        _SOLUTIONS.popitem(last=False)
    _SOLUTIONS[key] = answer
    return answer


_EXTRAS: dict[tuple[str, str], float] = {}
_EXTRA_LOCK = threading.Lock()


def _variant_extra(q: Question, seed: int) -> float:
    """What a class variant's change of inputs and of answer costs (its ``to_public`` and
    ``from_public``: an argsort, a copy), as a multiple of the public solution's time on the
    public input: added to the question's factor. Timed here, best of 5 each, once per
    variant. A variant whose answer must sort, say, gets that sort in its limit; a mere
    change of layout gets next to nothing, so a loop stays as far above it as on the public
    question."""
    key = (q.qid, q.variant_name)
    with _EXTRA_LOCK:
        if key not in _EXTRAS:
            threads = torch.get_num_threads()
            torch.set_num_threads(1)  # as the workers run: one thread
            try:
                _EXTRAS[key] = _measure_extra(q, seed)
            finally:
                torch.set_num_threads(threads)
    return _EXTRAS[key]


def _measure_extra(q: Question, seed: int) -> float:
    import time

    public, v = exercise(q.qid), q.shown
    namespace: dict[str, Any] = {}
    for cell in _reference_cells(public):
        exec(cell, namespace)  # noqa: S102 - the course's own solution text
    solution = namespace[q.name]
    mine = q.build(torch.Generator().manual_seed(seed), q.timing or {}).inputs
    theirs = public.build(torch.Generator().manual_seed(seed), public.timing or {}).inputs

    def best(call: Any) -> float:
        times = []
        for _round in range(5):
            started = time.process_time()
            call()
            times.append(time.process_time() - started)
        return min(times)

    plain = best(lambda: solution(*theirs.values()))
    answer = solution(*v.to_public(mine).values())
    changes = best(lambda: v.to_public(mine)) + best(lambda: v.from_public(answer))
    return changes / max(plain, 1e-6)
