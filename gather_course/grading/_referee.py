"""The referee: grades a notebook's answers without ever running learner code in its own process.

It takes the cells to run from the notebook (:mod:`._submission`), makes every input itself
(the visible battery of ``exercise(qid).check`` and, when grading, hidden cases from a
secret seed), sends them to a sandboxed worker (:mod:`._sandbox`), receives the outputs as
plain data (:mod:`._jobdata`), and judges them here with the question's loop spec, by the
same steps and in the same words as ``check`` (:mod:`gather_course.questions.steps`,
:mod:`gather_course.questions.verdicts`): this module only gathers the evidence.

Constraints are judged here too: a static scan of the source (:mod:`._scan`) and, for
"vectorized" questions, the CPU time the kernel measured for the answer on a large input,
against the course's own solution measured the same way (:mod:`._timing`).
"""

from __future__ import annotations

import secrets
import threading
import traceback
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from .._i18n import language
from ..questions import (
    HIDDEN_CASE,
    Case,
    CheckResult,
    Constraints,
    Evidence,
    Growth,
    LargeInputTiming,
    Outcome,
    Question,
    Seen,
    Stop,
    Summary,
    Unfinished,
    exercise,
    steps,
)
from ..questions.verdicts import shapes
from . import _scan
from ._failures import GraderBroken, WorkerDied, WorkerStartFailed, start_problem
from ._frames import RESULT_CAP, JobStatus, ended
from ._jobdata import _load, _outcome, _payload
from ._sandbox import Worker
from ._submission import NotGraded, Submission
from ._timing import _TimingConstraint

# Names in learner source that stand for an aten op a question forbids or requires.
SOURCE_NAMES = {  # forbidden ops; required ones are in REQUIRED_NAMES below
    "gather": {"gather", "take_along_dim", "take_along_axis"},
    "nll_loss_forward": {"cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"},
}
# A required op must be named in the reachable code (autograd's backward of gather runs
# scatter_add, so asking autograd counts); the in-sandbox op counter must also have seen it.
REQUIRED_NAMES = {
    "scatter_add": {"scatter_add", "scatter_add_", "backward", "grad"},
    "take": {"take"},
}
CALL_LIMIT = 10.0  # seconds per call of the learner's function (and per cell)
MEMORY = 2 * 2**30  # bytes a job may allocate on top of the worker's own
_HIDDEN_SEEDS = 2
_JOB_CALLS = 6  # a job (cells and one question's calls) gets at most 6 call limits
_PLANS: OrderedDict[tuple[str, int], Plan] = OrderedDict()  # a grading run's, see Plan.make
_PLANS_LOCK = threading.Lock()
_PLANS_KEPT = 256  # a class's variants of every question of a few assignments


@dataclass
class Plan:
    """What the referee asks of one question: the cases, visible first, then hidden ones."""

    question: Question
    cases: list[Case]
    hidden_from: int
    timing_seed: int = 0  # the large timing input's: secret, or fresh for every check

    @classmethod
    def make(cls, qid: str, secret: int | None, own: bool = False) -> Plan:
        """``qid`` may name a class variant (``qid:variant``, as :func:`graded_cells` gives);
        ``own``: the student's own variant of a class release (its feedback names it as the
        notebook does, ``mine.exercise(qid)``).

        A grading run's plans (a secret seed) are made once and kept: every student meets the
        same cases, whose expected outputs are then computed once (:func:`expected_of`). A
        check's (no secret) are drawn afresh, with a fresh timing seed.
        """
        if secret is None:
            return cls._draw(qid, None, own)
        with _PLANS_LOCK:
            key = (qid, secret, own)
            if key not in _PLANS:
                while len(_PLANS) >= _PLANS_KEPT:
                    _PLANS.popitem(last=False)
                _PLANS[key] = cls._draw(qid, secret, own)
            _PLANS.move_to_end(key)
            return _PLANS[key]

    @classmethod
    def _draw(cls, qid: str, secret: int | None, own: bool = False) -> Plan:
        qid, _sep, variant = qid.partition(":")
        q = replace(exercise(qid, variant or "public"), own=own)
        gen = torch.Generator().manual_seed(0)  # exactly check()'s battery
        cases = [q.build(gen, sizes) for sizes in q.sizes]
        visible = len(cases)
        if secret is not None:
            for k in range(_HIDDEN_SEEDS):
                hidden = torch.Generator().manual_seed(
                    (secret + 7919 * k + zlib.crc32(qid.encode())) % 2**63
                )
                for sizes in q.large_sizes if k % 2 == 0 else q.sizes:
                    case = q.build(hidden, sizes)
                    cases.append(Case(HIDDEN_CASE.format(label=case.label), case.inputs))
        timing_seed = (
            secrets.randbits(63)  # a check: nobody knows it before the cells have run
            if secret is None
            else (secret * 31 + 104729 + zlib.crc32(qid.encode())) % 2**63
        )
        return cls(q, cases, visible, timing_seed)


class Referee(_TimingConstraint):
    """Runs jobs on one warm worker and judges the results here."""

    def __init__(
        self,
        worker_factory: Callable[[], Worker],
        call_limit: float = CALL_LIMIT,
        memory: int = MEMORY,
    ) -> None:
        self._factory = worker_factory
        self._worker: Worker | None = None
        self.call_limit, self.memory = call_limit, memory

    @property
    def worker(self) -> Worker:
        if self._worker is not None and not self._worker.alive:  # ended between jobs
            self.close()
        if self._worker is None:
            self._worker = self._factory()
        return self._worker

    def _worker_for_job(self) -> Worker:
        try:
            return self.worker
        except OSError as exc:  # the worker's command itself could not be run
            raise GraderBroken(start_problem(f"{type(exc).__name__}: {exc}")) from None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def _job(
        self,
        cells: list[str],
        function: str | None,
        calls: list[dict] | None = None,
        later: tuple[dict, bytes] | None = None,
        n_calls: int = 0,
        cpu_cap: float = 0.0,
    ) -> tuple[dict, dict]:
        header = {
            "cells": cells,
            "function": function,
            "lang": language(),  # the job words a gather's diagnosis in the class's language
            "cpu_cap": cpu_cap,
            "call_limit": self.call_limit,
            "memory": self.memory,
            "job_limit": min(
                self.call_limit * (2 + len(cells) + max(n_calls, len(calls or []))),
                self.call_limit * _JOB_CALLS,
            ),
        }
        payload = _payload(calls) if calls else b""
        for attempt in (1, 2):  # a worker an earlier job damaged is not this student's fault
            try:
                reply, data = self._worker_for_job().run(header, payload, later)
            except WorkerStartFailed as exc:
                self._worker = None
                raise GraderBroken(start_problem(str(exc))) from None
            except WorkerDied as exc:
                self._worker = None
                if attempt == 1:
                    continue  # it may have died of something else: once more, on a fresh one
                raise NotGraded(
                    f"the submission stopped its grading worker, twice ({exc})"
                ) from None
            if ended(reply).status is not JobStatus.GRADER:
                break
            self.close()
            if attempt == 2:
                raise NotGraded(
                    f"the grading worker failed twice, not the submission ({reply['status']}); "
                    "grade it again"
                )
        return reply, _load(data)

    # -- one question ----------------------------------------------------------------------------
    def judge(self, sub: Submission, plan: Plan) -> CheckResult:
        """The verdict on one question: the first failing case, constraint or measurement,
        by the steps every verdict follows (:mod:`gather_course.questions.steps`).

        Judging that breaks in this process (not the answer: the referee's own comparison,
        say a ``SystemError`` from a library under load) is tried once more, its job run
        again, one such retry at a time; a second break is NOT GRADED, with where it broke.
        """
        try:
            return steps.judge(plan.question, _FromJob(self, sub, plan))
        except (NotGraded, GraderBroken):
            raise
        except Exception as exc:  # noqa: BLE001 - whatever broke the judging: tried again
            first = exc
        with _RETRIES:
            try:
                return steps.judge(plan.question, _FromJob(self, sub, plan))
            except (NotGraded, GraderBroken):
                raise
            except Exception as exc:  # noqa: BLE001 - broke twice: the instructor is told
                raise NotGraded(
                    f"the grader could not judge what {plan.question.name} returned "
                    f"({_broke(exc)}; the first try: {_broke(first)}); grade it by hand"
                ) from None


_RETRIES = threading.Lock()  # a judging tried again: one at a time, beside the others


def _broke(exc: BaseException) -> str:
    """An exception, and where in the package it was raised: ``SystemError at _judge.py:91``."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "gather_course" in f.filename] or frames
    where = f" at {Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else ""
    return f"{type(exc).__name__}{where}"


class _FromJob(Evidence):
    """The evidence of a grade: the static scan of the source, then one job that runs the
    cells and every call in the sandbox, read back as plain data; then the timing jobs."""

    def __init__(self, referee: Referee, sub: Submission, plan: Plan) -> None:
        self.referee, self.sub, self.plan, self.q = referee, sub, plan, plan.question
        gen = torch.Generator().manual_seed(1)
        self.scaling = [self.q.build(gen, sizes) for sizes in self.q.scaling]
        self._reply: dict | None = None
        self._results: list = []
        self._outcomes: dict[int, Outcome] = {}  # each result decoded once, when first asked
        self._cell_error: dict | None = None
        self._empty = True

    def reached(self) -> tuple[str, str] | None:
        """Before anything runs: the sandbox would only say "not found"."""
        reached = _scan.course_internals(_scan.reachable(self.sub.cells, self.q.name))
        return (reached[0].name, reached[0].where) if reached else None

    def _run(self) -> None:
        if self._reply is not None:
            return
        calls = [
            {"inputs": list(c.inputs.values()), "after": True, "count_ops": True}
            for c in self.plan.cases
        ]
        calls += [{"inputs": list(c.inputs.values()), "count_ops": True} for c in self.scaling]
        self._calls = len(calls)
        self._reply, result = self.referee._job(self.sub.cells, self.q.name, calls)
        self._empty = not result
        results = result.get("results")
        self._results = results if isinstance(results, list) else []
        cells = result.get("cells") if isinstance(result.get("cells"), list) else []
        # the learner's cells say why their function is missing; a course cell (the set-up,
        # a class's task cell) is not theirs to blame
        self._cell_error = next(
            (e for n, e in enumerate(cells) if isinstance(e, dict) and n not in self.sub.course),
            None,
        )

    def _outcome(self, n: int) -> Outcome:
        """Call ``n``'s result as an outcome (its tensors rebuilt: done once per call)."""
        if n not in self._outcomes:
            self._outcomes[n] = _outcome(self._results[n], self._cell_error)
        return self._outcomes[n]

    def seen(self) -> Iterator[Seen]:
        self._run()
        for n, case in enumerate(self.plan.cases[: len(self._results)]):
            yield Seen(case, self._outcome(n), n >= self.plan.hidden_from)

    def unfinished(self) -> Unfinished | None:
        self._run()
        got = len(self._results)
        if got == self._calls:
            return None
        end = ended(self._reply or {})
        stop = _STOPS.get(end.status, Stop.KILLED if self._empty else Stop.ENDED)
        case = self.plan.cases[min(got, len(self.plan.cases) - 1)]
        return Unfinished(case, stop, end.encode(), self.referee.call_limit, RESULT_CAP // 2**20)

    def constraints(self) -> Constraints:
        ops: dict[str, int] = {}
        for call in range(len(self._results)):  # what every call ran (a signal: the scan decides)
            for op, n in (self._outcome(call).ops or {}).items():
                ops[op] = ops.get(op, 0) + n
        return _constraints(self.q, self.sub, ops)

    def growth(self) -> Growth:
        last = len(self._results)
        small, big = (sum((self._outcome(n).ops or {}).values()) for n in (last - 2, last - 1))
        return Growth(shapes(self.scaling[0]), small, shapes(self.scaling[1]), big)

    def timing(self) -> LargeInputTiming:
        return self.referee.timing(self.q, self.sub, self.plan.timing_seed)

    def summary(self) -> Summary:
        cases, shown = self.plan.cases, self.plan.hidden_from
        return Summary(len(cases), [c.label for c in cases[:shown]], "cpu", len(cases) - shown)


# How a job that ended early is worded (else: killed when it sent nothing, ended early).
_STOPS = {
    JobStatus.TIMEOUT: Stop.TIMEOUT,
    JobStatus.TOO_LARGE: Stop.TOO_LARGE,
    JobStatus.KILLED: Stop.KILLED,
}


def _constraints(q: Question, sub: Submission, ops: dict[str, int]) -> Constraints:
    """The question's op constraints, on the code the function reaches (the scan) and on
    what its calls ran (the sandbox's op counter)."""
    code = _scan.reachable(sub.cells, q.name)
    forbidden = set().union(*(SOURCE_NAMES.get(op, {op}) for op in q.forbid)) if q.forbid else set()
    used = _scan.names_used(code, forbidden, _scan.own_names(sub.cells))
    ran = [op for op in q.forbid if ops.get(op)]
    hatches = _scan.escape_hatches(code, _scan.imported_names(sub.cells))
    never = [  # named in the code (autograd counts) and seen running
        op
        for op in q.require
        if not _scan.names_used(code, REQUIRED_NAMES.get(op, {op})) or not ops.get(op)
    ]
    return Constraints(
        forbidden_in_code=(
            (used[0].name, used[0].where) if used else (ran[0], "") if ran else None
        ),
        hidden_call=(hatches[0].name, hatches[0].where) if hatches else None,
        never_ran=never[0] if never else "",
    )
