"""The referee: grades a notebook's answers without ever running learner code in its own process.

It reads the notebook, takes the code cells to run (the learner's answer cells and the
course's own non-test cells, in order; IPython magics and shell escapes are refused), makes
every input itself (the visible battery of ``exercise(qid).check`` and, when grading, hidden
cases from a secret seed), sends them to a sandboxed worker (:mod:`gather_course._sandbox`),
receives the outputs as plain data (``torch.load(..., weights_only=True)``), and judges them
with the question's loop spec here, with the same tiers and messages as ``check``.

Rules are judged here too: a static scan of the source (:mod:`gather_course._scan`) and, for
"vectorized" questions, the CPU time the kernel measured for the worker as the input grows,
against the course's own solution measured the same way.
"""

from __future__ import annotations

import io
import math
import re
import secrets
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from .._answer_api import OUTSIDE
from .._i18n import N_, _
from .._tier import Tier
from ..questions import exercise
from ..questions._cases import Case
from ..questions._judge import Opaque, Outcome, _shapes, judge_case
from ..questions._question import Question
from ..questions._result import NEVER_RAN, OPS_GROW, CheckResult, _Failure
from . import _scan
from ._sandbox import Worker, WorkerDied
from ._worker import _HOLD

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
TIMING_REPEAT = 2  # calls per timing run
_HIDDEN_SEEDS = 2
_JOB_CALLS = 6  # a job (cells and one question's calls) gets at most 6 call limits
_HIDDEN_SHOWN = ("case", "inputs", N_("first wrong element"), "error", "where")
_HIDDEN_NOTE = (
    N_("values"),
    N_("not shown for hidden cases: make your function right for any input of these shapes"),
)


class NotGraded(Exception):
    """The submission cannot be graded (corrupt, a test cell missing or edited, worker killed)."""


# -- the notebook ---------------------------------------------------------------------------------


@dataclass
class Submission:
    """What the referee runs of a notebook: code cells in order, and what it refused."""

    cells: list[str]
    notes: list[str] = field(default_factory=list)


def _is_ipython_syntax(source: str) -> str:
    """The first line that only IPython understands (a magic, a shell escape, ``x?``), or ''."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        compile(source, "<cell>", "exec")
        return ""  # plain Python, whatever IPython would do
    except (SyntaxError, ValueError):
        pass
    plain = source if source.endswith("\n") else source + "\n"
    try:
        transformed = TransformerManager().transform_cell(plain)
    except Exception:  # noqa: BLE001 - whatever IPython cannot read is not ours to run
        return source.splitlines()[0] if source.strip() else ""
    if transformed == plain:
        return ""
    for line in source.splitlines():
        if TransformerManager().transform_cell(line + "\n") != line + "\n":
            return line.strip()
    return source.strip().splitlines()[0]


def read_submission(nb: Any, reference: Any) -> Submission:
    """The cells to run: ``nb``'s answer and added cells, and ``reference``'s locked code cells.

    ``reference`` is the course's student notebook (for grading) or ``nb`` itself (for a
    learner's own check). Test cells are never run: the referee does their work.
    """
    from nbgrader.utils import is_grade, is_locked, is_solution

    ref = {
        c.metadata["nbgrader"]["grade_id"]: c
        for c in reference.cells
        if c.metadata.get("nbgrader", {}).get("grade_id")
    }
    run: list[str] = []
    notes: list[str] = []
    seen: set[str] = set()
    for n, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        source = cell.source
        if gid in ref:
            seen.add(gid)
            if is_grade(ref[gid]) and not is_solution(ref[gid]):
                continue  # a test cell: the referee's job
            if is_locked(ref[gid]):
                source = ref[gid].source  # the course's own code, as released
        magic = _is_ipython_syntax(source)
        if magic:
            notes.append(
                _(
                    "Code cell {n} was not run: the grader runs plain Python, and `{code}` is "
                    "IPython syntax (a magic or a shell command). Remove it from your answer "
                    "cells."
                ).format(n=n, code=magic[:60])
            )
            continue
        run.append(source)
    missing = [
        c.source
        for gid, c in ref.items()
        if gid not in seen and c.cell_type == "code" and is_locked(c) and not is_grade(c)
    ]
    return Submission(missing + run, notes)


_EXERCISE = re.compile(r"""exercise\(["']([\w.]+)["'](?:\s*,\s*["'](\w+)["'])?\)""")


def graded_cells(nb: Any) -> list[tuple[str, str, float]]:
    """(test cell's grade_id, question id, points) of a course notebook, in order.

    The question id carries the class variant a class release's test cell names, as
    ``qid:variant``.
    """
    from nbgrader.utils import is_grade, is_solution

    found = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if is_grade(cell) and not is_solution(cell) and cell.cell_type == "code":
            match = _EXERCISE.search(cell.source)
            if match:
                qid = match.group(1) + (f":{match.group(2)}" if match.group(2) else "")
                found.append((meta["grade_id"], qid, float(meta.get("points", 0))))
    return found


# -- the jobs ------------------------------------------------------------------------------------


def _payload(calls: list[dict]) -> bytes:
    buf = io.BytesIO()
    torch.save(calls, buf)
    return buf.getvalue()


_TIMING_BYTES: dict[tuple, tuple[dict, bytes]] = {}
_TIMING_LOCK = threading.Lock()


def _timing_bytes(q: Question, seed: int) -> tuple[dict, bytes]:
    """The timing input drawn from ``seed``, as :func:`_raw_inputs` sends it. A grading run
    gives every student the same one (and the solution's baseline): it is made once, and
    as many are kept as a worker's supervisor holds (``_worker._HOLD``)."""
    key = (q.qid, q.variant_name, seed, repr(q.timing))
    with _TIMING_LOCK:
        if key not in _TIMING_BYTES:
            case = q.build(torch.Generator().manual_seed(seed), q.timing or {})
            while len(_TIMING_BYTES) >= _HOLD:
                del _TIMING_BYTES[next(iter(_TIMING_BYTES))]
            meta, data = _raw_inputs(list(case.inputs.values()), TIMING_REPEAT)
            _TIMING_BYTES[key] = ({**meta, "key": repr(key)}, data)
        return _TIMING_BYTES[key]


def _raw_inputs(values: list[Any], repeat: int) -> tuple[dict, bytes]:
    """The timing input as raw bytes and what they hold (dtype, shape, offset; numbers as
    they are): the worker maps them in place, so the job is charged nothing for a copy."""
    items: list[dict] = []
    chunks: list[bytes] = []
    offset = 0
    for value in values:
        if not isinstance(value, torch.Tensor):
            items.append({"value": value})
            continue
        flat = value.detach().cpu().contiguous().reshape(-1)
        data = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
        items.append(
            {
                "dtype": str(flat.dtype).removeprefix("torch."),
                "shape": list(value.shape),
                "offset": offset,
            }
        )
        pad = -len(data) % 64  # each tensor starts aligned
        chunks += [data, b"\0" * pad]
        offset += len(data) + pad
    return {"inputs": items, "repeat": repeat, "size": offset}, b"".join(chunks)


def _load(data: bytes) -> dict:
    if not data:
        return {}
    try:
        loaded = torch.load(io.BytesIO(data), weights_only=True)
    except Exception:  # noqa: BLE001 - whatever the worker sent that is not plain data
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _value(plain: Any, depth: int = 0) -> Any:
    """A returned value as the worker sent it, turned back into tensors, tuples and Opaques.

    Only what the referee can compare safely comes back as itself: dense CPU tensors, short
    tuples and lists of them, numbers. Anything else (a sparse or quantized tensor, deep
    nesting) is described, never used.
    """
    if isinstance(plain, dict):
        items = plain.get("sequence")
        if isinstance(items, list) and depth < 3 and len(items) <= 16:
            values = [_value(v, depth + 1) for v in items]
            return tuple(values) if plain.get("kind") == "tuple" else values
        return Opaque(
            str(plain.get("opaque", _("an unknown object")))[:80], bool(plain.get("subclass"))
        )
    if type(plain) is torch.Tensor:
        if (
            plain.layout != torch.strided
            or plain.is_quantized
            or plain.is_nested
            or plain.device.type != "cpu"
        ):
            return Opaque(f"a {plain.layout} tensor".replace("torch.", ""), False)
        return plain
    if plain is None or type(plain) in (bool, int, float):
        return plain
    return Opaque(type(plain).__name__)


MESSAGE_CHARS = 240  # of a learner's exception message shown in feedback


def _cut(text: str, n: int) -> str:
    """``text`` on one line, at most ``n`` characters (an exception is feedback, not a channel)."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _learner_error(e: dict) -> dict:
    """An error the worker described, bounded: type, message, where, not implemented."""
    return {
        "type": str(e.get("type", "Error"))[:80],
        "message": _cut(str(e.get("message", "")), MESSAGE_CHARS),
        "where": _cut(str(e.get("where", "")), MESSAGE_CHARS),
        "not_implemented": bool(e.get("not_implemented")),
    }


def _outcome(raw: Any, cell_error: dict | None = None) -> Outcome:
    if not isinstance(raw, dict):
        return Outcome(
            error={
                "type": "GradingError",
                "message": _("no result came back"),
                "where": "",
                "not_implemented": False,
            }
        )
    if raw.get("missing"):
        if cell_error:  # the cell that should have defined it stopped early: say why
            return Outcome(error=_learner_error(cell_error))
        return Outcome(
            error={
                "type": "NameError",
                "message": _("the function is not defined (was its cell deleted or renamed?)"),
                "where": "",
                "not_implemented": False,
            }
        )
    if "not_callable" in raw:
        return Outcome(
            error={
                "type": "TypeError",
                "message": _("it is not a function but {what}").format(what=raw["not_callable"]),
                "where": "",
                "not_implemented": False,
            }
        )
    if "raised" in raw and isinstance(raw["raised"], dict):
        e = raw["raised"]
        gather = e.get("gather")
        return Outcome(
            error={
                **_learner_error(e),
                "gather": [str(x)[:400] for x in gather[:3]] if isinstance(gather, list) else [],
            }
        )
    after = raw.get("after")
    ops = raw.get("ops") if isinstance(raw.get("ops"), dict) else {}
    return Outcome(
        value=_value(raw.get("value")),
        after=tuple(_value(v) for v in after) if isinstance(after, list) else None,
        ops={str(k): int(v) for k, v in ops.items() if isinstance(v, int)},
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
                    cases.append(Case(f"hidden case: {case.label}", case.inputs))
        timing_seed = (
            secrets.randbits(63)  # a check: nobody knows it before the cells have run
            if secret is None
            else (secret * 31 + 104729 + zlib.crc32(qid.encode())) % 2**63
        )
        return cls(q, cases, visible, timing_seed)


def _reference_cells(q: Question) -> list[str]:
    return ["import itertools\nimport torch\nimport torch.nn.functional as F\n", q.solution_code]


class Referee:
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
                reply, data = self.worker.run(header, payload, later)
            except WorkerDied as exc:
                self._worker = None
                raise NotGraded(f"the submission stopped its grading worker ({exc})") from None
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
        """The verdict on one question: the first failing case, rule or measurement."""
        q = plan.question
        reached = _scan.course_internals(_scan.reachable(sub.cells, q.name))
        if reached:  # before anything runs: the sandbox would only say "not found"
            return _Failure(
                Tier.RULES,
                _("Your answer reaches into the course itself: {what} ({where}); {rule}").format(
                    what=f"`{reached[0].name}`",
                    where=reached[0].where,
                    rule=_(OUTSIDE).format(what=f"`{reached[0].name}`"),
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
            for raw in results:  # what every call ran (a signal: see _rules)
                for op, n in (_outcome(raw).ops or {}).items():
                    ran[op] = ran.get(op, 0) + n
            self._rules(q, sub, ran)
            if q.vectorized:
                small, big = (_outcome(r).ops or {} for r in results[-2:])
                if sum(big.values()) > sum(small.values()):
                    raise _Failure(
                        Tier.NOT_VECTORIZED,
                        _(OPS_GROW),
                        [
                            (
                                "small input",
                                f"{_shapes(scaling[0])}: {sum(small.values())} operations",
                            ),
                            (
                                "larger input",
                                f"{_shapes(scaling[1])}: {sum(big.values())} operations",
                            ),
                        ],
                    )
                self._timing(q, sub, plan.timing_seed)
        except _Failure as failure:
            return failure.result(q)
        except NotGraded:
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
            ).format(
                n=len(plan.cases), labels=", ".join(_(label) for label in labels), hidden=hidden
            ),
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

    def _rules(self, q: Question, sub: Submission, ops: dict[str, int]) -> None:
        if not (q.forbid or q.require):
            return
        code = _scan.reachable(sub.cells, q.name)
        forbidden = (
            set().union(*(SOURCE_NAMES.get(op, {op}) for op in q.forbid)) if q.forbid else set()
        )
        used = _scan.names_used(code, forbidden, _scan.own_names(sub.cells))
        ran = [op for op in q.forbid if ops.get(op)]
        if used or ran:
            what = f"`{used[0].name}` ({used[0].where})" if used else f"`{ran[0]}`"
            raise _Failure(
                Tier.RULES,
                _(
                    "Your values are right, but this question asks you not to use {rule}: "
                    "your code uses {what}."
                ).format(rule=q.forbidden_text, what=what),
            )
        hatches = _scan.escape_hatches(code, _scan.imported_names(sub.cells))
        if hatches:
            rule = (
                _("no {rule}").format(rule=q.forbidden_text)
                if q.forbid
                else _("use {rule}").format(rule=q.required_text)
            )
            raise _Failure(
                Tier.RULES,
                _(
                    "Your values are right, but this question's rule ({rule}) "
                    "is checked on the code your function can reach (what it calls, and "
                    "every top-level statement of the notebook), which must call torch's "
                    "functions by their names: your code uses `{name}` ({where}). Leave out "
                    "computed names, torch internals, other libraries, threads and processes."
                ).format(rule=rule, name=hatches[0].name, where=hatches[0].where),
            )
        for op in q.require:  # named in the code (autograd counts) and seen running
            if not _scan.names_used(code, REQUIRED_NAMES.get(op, {op})) or not ops.get(op):
                raise _Failure(
                    Tier.RULES,
                    _(NEVER_RAN).format(rule=q.required_text, op=op),
                )

    # -- vectorized: CPU time on a large input, measured by the kernel ---------------------------
    def _growth(
        self, cells: list[str], q: Question, seed: int, cpu_cap: float = 0.0
    ) -> tuple[float, Any]:
        """CPU seconds of the timing calls alone, on the large input drawn from ``seed``
        (``inf`` once past ``cpu_cap`` seconds, when one is given).

        The job process runs the cells, stops itself (the supervisor reads its CPU time),
        and only then receives the input: nothing at the top of a cell can prepare for it.
        """
        later = _timing_bytes(q, seed)
        reply, result = self._job(
            cells, q.name, later=later, n_calls=TIMING_REPEAT, cpu_cap=cpu_cap
        )
        if reply.get("status") in ("timeout", "cpu_limit"):
            return float("inf"), None
        if reply.get("status") == "new tasks":
            return -1.0, None  # a thread or process began during the timed calls
        if reply.get("status") != "ok" or reply.get("calls_cpu") is None:
            return float("nan"), None
        results = result.get("results") or [None]
        return float(reply["calls_cpu"]), results[-1]

    def baseline(self, q: Question, seed: int) -> float:
        """The course solution's CPU seconds on the timing input, measured once per question
        (in a job process of its own: the template never holds it, no student's process does),
        shared by every referee of this process."""
        key = f"{q.qid}:{q.variant_name}:{q.timing!r}"
        with _BASELINE_LOCKS.setdefault(key, threading.Lock()):  # once for all referees
            for _attempt in (1, 2):
                if key in _BASELINES:
                    break
                measured = self._growth(_reference_cells(q), q, seed)[0]
                if math.isfinite(measured) and measured > 0:
                    _BASELINES[key] = measured  # never a failed one: it would judge everyone
                else:
                    self.close()  # measure it again on a fresh worker
            if key not in _BASELINES:
                raise NotGraded(
                    f"the grader could not time the course's solution of {q.qid} (a worker "
                    "problem, not the submission's); grade it again"
                )
        return _BASELINES[key]

    def _timing(self, q: Question, sub: Submission, seed: int) -> None:
        if not q.timing:
            return
        ref = self.baseline(q, seed)
        got, last = self._growth(sub.cells, q, seed, cpu_cap=_CAP_MARGIN * q.timing_factor * ref)
        if got < 0:
            raise _Failure(
                Tier.NOT_VECTORIZED,
                _(
                    "Your values are right, but on a large input your function started a "
                    "thread or a process. Its CPU time is measured for whole-tensor code in "
                    "one thread; write it that way."
                ),
                [(N_("large input"), _size_text(q.timing))],
            )
        if got != got:  # nan: the run failed
            raise _Failure(
                Tier.EXCEPTION,
                _(
                    "Your function did not finish on a large input ({size}): it raised an "
                    "error or ended its process."
                ).format(size=_size_text(q.timing)),
                [],
            )
        if got == float("inf") or got > q.timing_factor * ref:
            shown = (
                _("more than {limit} s").format(limit=f"{q.timing_factor * ref:.2f}")
                if got == float("inf")
                else f"{got:.2f} s"
            )
            raise _Failure(
                Tier.NOT_VECTORIZED,
                _(
                    "Your values are right, but on a large input your "
                    "function takes far more CPU time than whole-tensor code, the way a "
                    "Python loop over elements does (also over lists or numpy arrays). "
                    "Replace the loop by whole-tensor operations (gather, indexing)."
                ),
                [
                    (
                        N_("large input"),
                        _("{size}: {time} of CPU for {n} calls").format(
                            size=_size_text(q.timing), time=shown, n=TIMING_REPEAT
                        ),
                    ),
                    (N_("the course's solution"), f"{ref:.3f} s"),
                    (N_("the limit"), f"{q.timing_factor:g} × {ref:.3f} s"),
                ],
            )
        self._check_large_answer(q, last, seed)

    def _check_large_answer(self, q: Question, raw: Any, seed: int) -> None:
        """The answer on the large input must be right too, all of it."""
        outcome = _outcome(raw)
        if outcome.error:
            raise _Failure(
                Tier.EXCEPTION,
                _(
                    "Your function raised an error on a large input ({size}): {error}: {message}"
                ).format(
                    size=_size_text(q.timing or {}),
                    error=outcome.error["type"],
                    message=outcome.error["message"],
                ),
                [],
            )
        expected = _solution_on(q, seed)
        expected = expected if isinstance(expected, tuple) else (expected,)
        got = outcome.value if isinstance(outcome.value, (tuple, list)) else (outcome.value,)
        ok = len(got) == len(expected)
        for exp, out in zip(expected, got if ok else ()):
            ok = (
                ok
                and type(out) is torch.Tensor
                and out.shape == exp.shape
                and bool(torch.isclose(out.double(), exp.double(), rtol=1e-4, atol=1e-5).all())
            )
        if not ok:
            raise _Failure(
                Tier.WRONG_VALUES,
                _(
                    "Your function gives wrong values on a large input ({size}), although the "
                    "small cases pass."
                ).format(size=_size_text(q.timing or {})),
                [],
            )


# The vectorized rule: the answer's CPU time on the large input against the course solution's,
# both measured by the kernel in the same worker, within the question's ``timing_factor``.
# benchmarks/bench_timing.py measures, per question, the slowest honest whole-tensor answer
# and the fastest Python loop as multiples of the solution; each factor sits between them,
# with the margins docs/grading.md records.
# the solution's CPU seconds, per question (all workers are alike)
_BASELINES: dict[str, float] = {}
_BASELINE_LOCKS: dict[str, threading.Lock] = {}
_CAP_MARGIN = 1.5  # a timing job is stopped past 1.5 x the limit: its verdict is known
_SOLUTIONS: dict[tuple[str, str, int], Any] = {}


def _solution_on(q: Question, seed: int) -> Any:
    """The course's solution (our code, run here) on the timing input built from ``seed``."""
    key = (q.qid, q.variant_name, seed)
    if key not in _SOLUTIONS:
        namespace: dict[str, Any] = {}
        for cell in _reference_cells(q):
            exec(cell, namespace)  # noqa: S102 - the course's own solution text
        case = q.build(torch.Generator().manual_seed(seed), q.timing or {})
        if len(_SOLUTIONS) > 64:  # a check draws a fresh seed every time
            _SOLUTIONS.clear()
        _SOLUTIONS[key] = namespace[q.name](*case.inputs.values())
    return _SOLUTIONS[key]


def _size_text(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items() if k != "label")
