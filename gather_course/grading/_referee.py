"""The referee: grades a notebook's answers without ever running learner code in its own process.

It takes the cells to run from the notebook (:mod:`._submission`), makes every input itself
(the visible battery of ``exercise(qid).check`` and, when grading, hidden cases from a
secret seed), sends them to a sandboxed worker (:mod:`._sandbox`), receives the outputs as
plain data (:mod:`._jobdata`), and judges them with the question's loop spec here
(:func:`gather_course.questions._judge.judge_case`), with the same tiers and messages as
``check``.

Constraints are judged here too: a static scan of the source (:mod:`._scan`) and, for
"vectorized" questions, the CPU time the kernel measured for the answer on a large input,
against the course's own solution measured the same way (:mod:`._timing`).
"""

from __future__ import annotations

import secrets
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .._answer_api import OUTSIDE
from .._i18n import N_, _, language, listed
from .._tier import Tier
from ..questions import exercise
from ..questions._cases import Case
from ..questions._judge import _shapes, judge_case
from ..questions._question import Question
from ..questions._result import HIDDEN_CASE, NEVER_RAN, CheckResult, _Failure, operations_grow
from . import _scan
from ._failures import GraderBroken, WorkerDied, WorkerStartFailed, start_problem
from ._frames import RESULT_CAP, TOO_LARGE
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
_HIDDEN_SHOWN = ("case", "inputs", N_("first wrong element"), "error", "where")
_HIDDEN_NOTE = (
    N_("values"),
    N_("not shown for hidden cases: make your function right for any input of these shapes"),
)


@dataclass
class Plan:
    """What the referee asks of one question: the cases, visible first, then hidden ones."""

    question: Question
    cases: list[Case]
    hidden_from: int
    timing_seed: int = 0  # the large timing input's: secret, or fresh for every check

    @classmethod
    def make(cls, qid: str, secret: int | None) -> Plan:
        """``qid`` may name a class variant (``qid:variant``, as :func:`graded_cells` gives)."""
        qid, _sep, variant = qid.partition(":")
        q = exercise(qid, variant or "public")
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
            if not str(reply.get("status", "")).startswith("grader"):
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
        """The verdict on one question: the first failing case, constraint or measurement."""
        q = plan.question
        reached = _scan.course_internals(_scan.reachable(sub.cells, q.name))
        if reached:  # before anything runs: the sandbox would only say "not found"
            return _Failure(
                Tier.CONSTRAINTS,
                _(
                    "Your answer reaches into the course itself: {what} ({where}); {constraint}"
                ).format(
                    what=f"`{reached[0].name}`",
                    where=reached[0].where,
                    constraint=_(OUTSIDE).format(what=f"`{reached[0].name}`"),
                ),
            ).result(q)
        gen = torch.Generator().manual_seed(1)
        scaling = [q.build(gen, sizes) for sizes in q.scaling]
        calls = [
            {"inputs": list(c.inputs.values()), "after": True, "count_ops": True}
            for c in plan.cases
        ]
        calls += [{"inputs": list(c.inputs.values()), "count_ops": True} for c in scaling]
        reply, result = self._job(sub.cells, q.name, calls)
        results = result.get("results") if isinstance(result.get("results"), list) else []
        cell_errors = result.get("cells") if isinstance(result.get("cells"), list) else []
        cell_error = next((e for e in cell_errors if isinstance(e, dict)), None)
        try:
            for n, (case, raw) in enumerate(zip(plan.cases, results)):
                try:
                    judge_case(q, case, _outcome(raw, cell_error))
                except _Failure as failure:
                    if n >= plan.hidden_from:  # the shapes and where, not the values
                        failure.details = [
                            (k, v) for k, v in failure.details if k in _HIDDEN_SHOWN
                        ] + [_HIDDEN_NOTE]
                        failure.pair = None
                    raise
            if len(results) != len(calls):
                self._missing_results(q, plan, reply, result, len(results))
            ran: dict[str, int] = {}
            for raw in results:  # what every call ran (a signal: see _constraints)
                for op, n in (_outcome(raw).ops or {}).items():
                    ran[op] = ran.get(op, 0) + n
            self._constraints(q, sub, ran)
            if q.vectorized:
                small, big = (_outcome(r).ops or {} for r in results[-2:])
                n_small, n_big = sum(small.values()), sum(big.values())
                if n_big > n_small:
                    raise operations_grow(_shapes(scaling[0]), n_small, _shapes(scaling[1]), n_big)
                self._timing(q, sub, plan.timing_seed)
        except _Failure as failure:
            return failure.result(q)
        except (NotGraded, GraderBroken):
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the worker sent broke the judging
            raise NotGraded(
                f"the grader could not judge what {q.name} returned "
                f"({type(exc).__name__}); grade it by hand"
            ) from None
        hidden = len(plan.cases) - plan.hidden_from
        labels = list(dict.fromkeys(c.label for c in plan.cases[: plan.hidden_from]))
        return CheckResult(
            q.qid,
            True,
            Tier.PASSED,
            (
                _("All {n} test cases pass ({labels}; and {hidden} hidden cases; on cpu).")
                if hidden
                else _("All {n} test cases pass ({labels}; on cpu).")
            ).format(n=len(plan.cases), labels=listed(_(label) for label in labels), hidden=hidden),
        )

    def _missing_results(
        self, q: Question, plan: Plan, reply: dict, result: dict, got: int
    ) -> None:
        """The job ended early: name the case it was on and why."""
        case = plan.cases[min(got, len(plan.cases) - 1)]
        status = reply.get("status", "")
        if status == "timeout":
            why = _("it ran longer than {limit} s (an endless loop?) and was stopped").format(
                limit=f"{self.call_limit:g}"
            )
        elif status == TOO_LARGE:
            why = _(
                "what it returned came to more than {cap} MB (a far larger tensor than the answer?)"
            ).format(cap=RESULT_CAP // 2**20)
        elif status == "killed" or not result:
            why = _(
                "the process running it was killed (too much memory, or the code ended "
                "its own process: {status})"
            ).format(status=status)
        else:
            why = _("the process running it ended early ({status})").format(status=status)
        raise _Failure(
            Tier.EXCEPTION,
            _("Your function did not finish: {why}.").format(why=why),
            [("case", case.label), ("inputs", _shapes(case))],
        )

    def _constraints(self, q: Question, sub: Submission, ops: dict[str, int]) -> None:
        if not (q.forbid or q.require):
            return
        code = _scan.reachable(sub.cells, q.name)
        forbidden = (
            set().union(*(SOURCE_NAMES.get(op, {op}) for op in q.forbid)) if q.forbid else set()
        )
        used = _scan.names_used(code, forbidden, _scan.own_names(sub.cells))
        ran = [op for op in q.forbid if ops.get(op)]
        if used or ran:
            what = (
                _("{name} ({where})").format(name=f"`{used[0].name}`", where=used[0].where)
                if used
                else f"`{ran[0]}`"
            )
            raise _Failure(
                Tier.CONSTRAINTS,
                _(
                    "Your values are right, but this question asks you not to use {ops}: "
                    "your code uses {what}."
                ).format(ops=q.forbidden_text, what=what),
            )
        hatches = _scan.escape_hatches(code, _scan.imported_names(sub.cells))
        if hatches:
            constraint = (
                _("no {ops}").format(ops=q.forbidden_text)
                if q.forbid
                else _("use {ops}").format(ops=q.required_text)
            )
            raise _Failure(
                Tier.CONSTRAINTS,
                _(
                    "Your values are right, but this question's constraint ({constraint}) "
                    "is checked on the code your function can reach (what it calls, and "
                    "every top-level statement of the notebook), which must call torch's "
                    "functions by their names: your code uses `{name}` ({where}). Leave out "
                    "computed names, torch internals, other libraries, threads and processes."
                ).format(constraint=constraint, name=hatches[0].name, where=hatches[0].where),
            )
        for op in q.require:  # named in the code (autograd counts) and seen running
            if not _scan.names_used(code, REQUIRED_NAMES.get(op, {op})) or not ops.get(op):
                raise _Failure(
                    Tier.CONSTRAINTS,
                    _(NEVER_RAN).format(ops=q.required_text, op=op),
                )

    # -- vectorized: CPU time on a large input, measured by the kernel ---------------------------
