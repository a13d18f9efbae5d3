"""The class's verdicts written into nbgrader's gradebook, as nbgrader's own autograde writes them.

nbgrader's ``autograde`` runs for each student with the referee's verdicts in place of
running the notebook (:class:`.nbgrader_plugins.RefereeVerdicts`): the gradebook, the
``autograded/`` notebooks, formgrader, export and feedback are nbgrader's as usual.

What is left out is only what nbgrader repeats. Stock, it opens the gradebook about nine
times per student (each step of its set-up and each of four preprocessors makes its own
connection and checks every table), checks the cell metadata a second time after
preprocessors that change none, and validates the notebook after every preprocessor: 0.11 s
of CPU per student, more than the rest of grading in the instructor's process
(docs/benchmarks.md, issue 40). Here every student is written through one connection
(:func:`.nbgrader_plugins.one_gradebook`), the metadata is checked once per kind of
notebook, the notebook validated once per pass, the released cells read once a run, many
students in one transaction (:class:`_Batch`: nbgrader commits about nine times a student),
and all of it on a thread of its own while the judging goes on (:class:`Recorder`). A
student whose submission is new to the gradebook (a class graded the first time) does not
go through nbgrader's autograde at all: its steps are set up once a run and the batch's rows
written in one INSERT a table (:mod:`._bulk`); any other student does.
``tests/test_record.py`` compares what is written with stock ``nbgrader autograde``'s,
every column of every row and every file byte for byte, and guards the nbgrader steps
mirrored here against a change of nbgrader.
"""

from __future__ import annotations

import json
import queue
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..course import nbgrader_api, nbgrader_errors
from ._autograde import autograde_class, flag_for_manual_grading, utc
from ._gradebook import Scores, check_database, gradebook_lock, register, scores, warnings_to_log
from ._receipts import SubmissionTime

BATCH = 64  # students per gradebook transaction, at most
LINGER = 0.5  # seconds a recorded student may wait for the transaction's commit, at most
_COMMIT = object()  # the queue stayed empty LINGER seconds: commit


def _verdicts(result: dict[str, Any], problem: str) -> dict[str, dict[str, Any]]:
    """One student's {grade_id: {passed, message}} as RefereeVerdicts reads it (a
    submission that was not graded: ``__all__``, failed with the reason, for every test
    cell)."""
    if problem:
        return {"__all__": {"passed": False, "message": f"NOT GRADED: {problem}"}}
    extra = "".join(f"\nNote: {n}" for n in result["notes"])
    return {
        gid: {"passed": bool(v["passed"]), "message": str(v["message"]) + extra}
        for gid, v in result["verdicts"].items()
    }


def _preprocessors(verdicts_file: Path) -> dict[str, Any]:
    """nbgrader's two autograde passes with the verdicts in place of ``Execute``, each
    gradebook step on the open connection, the metadata checked once."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        ClearOutput,
        DeduplicateIds,
        IgnorePattern,
        LimitOutput,
    )

    from . import nbgrader_plugins as p

    return {
        "Autograde.sanitize_preprocessors": [
            ClearOutput,
            DeduplicateIds,
            p.OverwriteKernelspecOnce,
            p.OverwriteCellsOnce,
            p.CheckCellMetadataOnce,
        ],
        "Autograde.autograde_preprocessors": [
            p.RefereeVerdicts,
            IgnorePattern,
            ClearMetadataPreprocessor,
            LimitOutput,
            p.SaveAutoGradesOnce,
            p.AssignLatePenaltiesOnce,
        ],
        "RefereeVerdicts.verdicts_file": str(verdicts_file),
        # a test cell the student deleted comes back as released (whatever the course's
        # config says): its question is graded, as the referee judged it
        "OverwriteCells.add_missing_cells": True,
        # the notebook is validated once per pass, not after every preprocessor (nbconvert's
        # own option): a notebook that is not valid is refused all the same
        "Exporter.optimistic_validation": True,
    }


class Recorder:
    """The gradebook's side of a grading run, on a thread of its own, while the judging
    goes on: it checks where the gradebook is, registers the assignment, then writes each
    student's verdicts as the referee gives them (:meth:`add`), through one connection.
    It holds the gradebook lock throughout: one run at a time writes.

    :meth:`finish` waits for the last student and gives the scores read back and the
    students nbgrader could not record. An error of the gradebook's (a server without a
    course id, a broken source notebook) stops the run at the next :meth:`add`: what was
    judged is in the journal, and the next run records it without judging it again.
    """

    def __init__(
        self,
        root: Path,
        assignment: str,
        times: dict[str, SubmissionTime] | None = None,
        batch: int = BATCH,
        bulk: bool = True,
    ) -> None:
        self.root, self.assignment = root, assignment
        self.batch = batch  # students per gradebook transaction (1: nbgrader's own commits)
        self.times = times or {}  # each submission's time (:mod:`._receipts`)
        self.bulk = bulk  # new submissions' rows in bulk (False: nbgrader's autograde each)
        self.in_bulk: set[str] = set()  # the students whose rows were written in bulk
        self.problems: dict[str, str] = {}  # the students nbgrader could not record
        self.scores: dict[str, Scores] = {}
        self._queue: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        self._writing = False  # the gradebook lock is ours (another run may hold it)
        self._thread = threading.Thread(
            target=self._run, name="gather-course-gradebook", daemon=True
        )
        self._thread.start()

    def add(self, result: dict[str, Any]) -> None:
        """Record one student's result (``judge_student``'s); raises the recorder's error."""
        self._raise()
        self._queue.put(result)

    def finish(self, students: list[str]) -> tuple[dict[str, Scores], dict[str, str]]:
        """Wait until every result is recorded; then the scores of ``students`` and
        nbgrader's problems."""
        self._queue.put(list(students))
        self._thread.join()
        self._raise()
        return self.scores, self.problems

    def close(self) -> None:
        """Stop: a run that stops early. What was added is recorded first, unless another
        run still holds the gradebook (then nothing was written, and the journal keeps it)."""
        if self._thread.is_alive():
            self._queue.put(None)
            if self._writing:
                self._thread.join()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        try:
            with (
                gradebook_lock(self.root),
                warnings_to_log(self.root, self.assignment),
                tempfile.TemporaryDirectory(prefix="gather-course-verdicts-") as tmp,
            ):
                self._writing = True
                check_database(self.root)
                with nbgrader_api(self.root) as api:
                    register(api, self.root, self.assignment)
                self._record_all(Path(tmp) / "verdicts.json")
        except BaseException as exc:  # noqa: BLE001 - handed to the judging's thread
            self._error = exc

    def _record_all(self, path: Path) -> None:
        from ._bulk import Bulk
        from .nbgrader_plugins import one_gradebook

        with (
            nbgrader_api(self.root, **_preprocessors(path)) as api,
            one_gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb,
        ):
            autograde = autograde_class()
            bulk = Bulk(autograde(coursedir=api.coursedir, parent=api), gb, self.assignment)
            bulk.enabled = bulk.enabled and self.bulk

            def record(result: dict) -> None:
                self._record(api, gb, autograde, path, result, batch)

            with _Batch(gb, self.batch, bulk, record) as batch:
                while (item := batch.next(self._queue)) is not None:
                    if item is _COMMIT:  # the writer caught up: what it holds is written
                        batch.commit()
                    elif isinstance(item, list):  # the end: the class's students
                        batch.commit()
                        self.scores = scores(gb, self.assignment, item)
                        return
                    else:
                        self._add(item, path, bulk, batch)
                batch.commit()  # stopped early: what was recorded stays

    def _add(self, result: dict, path: Path, bulk: Any, batch: _Batch) -> None:
        """One student: their rows in the batch's bulk INSERT where they are new to the
        gradebook, else by nbgrader's autograde."""
        student = result["student"]
        verdicts = {student: _verdicts(result, result["problem"])}
        prepared = bulk.prepare(result, utc(self.times.get(student)), verdicts)
        if prepared is None:
            batch.record(result)
            batch.written(result)
        else:
            self.in_bulk.add(result["student"])
            batch.prepared(prepared)

    def _record(
        self, api: Any, gb: Any, autograde: type, path: Path, result: dict, batch: _Batch
    ) -> None:
        """One student: nbgrader's autograde with their verdicts (no execution)."""
        from nbgrader.utils import capture_log, temp_attrs

        student, problem = result["student"], result["problem"]
        self.in_bulk.discard(student)
        _write_verdicts(path, result)
        with temp_attrs(api.coursedir, assignment_id=self.assignment, student_id=student):
            app = autograde(coursedir=api.coursedir, parent=api)
            app.force, app.create_student = True, True
            app.submission_time = self.times.get(student)
            done = capture_log(app)
        if not batch.open:
            gb.db.remove()  # this student's rows leave the session (it stays open)
        if not done["success"] and not problem:
            self.problems[student] = problem = nbgrader_errors(done)
        if problem:
            flag_for_manual_grading(gb, self.assignment, student)


def _write_verdicts(path: Path, result: dict) -> None:
    """The student's verdicts where ``RefereeVerdicts`` reads them."""
    problem = result["problem"]
    path.write_text(json.dumps({result["student"]: _verdicts(result, problem)}), encoding="utf-8")


class _Batch:
    """Many students' rows in one gradebook transaction (``size`` > 1).

    A student new to the gradebook is held (:meth:`prepared`: their files written, their
    rows not) until :meth:`commit` writes the batch's rows in bulk (:class:`._bulk.Bulk`).
    Any other is written by nbgrader's autograde, whose ``commit`` is a flush here (the
    same statements, the rows unchanged) until :meth:`commit`. It commits after ``size``
    students, when the queue stays empty :data:`LINGER` seconds, and at the end. A crash
    before that loses the batch's rows, never a verdict: each is in the journal before it
    reaches the recorder, and the next run records it again. Where nbgrader rolls back (an
    error it recovers from), or the bulk INSERT fails, the batch's earlier rows went with
    it: those students are written again by nbgrader's autograde, with its own commits.
    """

    def __init__(self, gb: Any, size: int, bulk: Any, record: Any) -> None:
        self.db, self.size, self.open = gb.db, size, False
        self.bulk, self.record = bulk, record
        self.pending: list[dict] = []  # written by nbgrader since the last commit
        self.held: list[Any] = []  # prepared for the bulk INSERT (:class:`._bulk.Prepared`)
        self.since = 0.0  # when the first of them was
        self.rolled_back = False

    def __enter__(self) -> _Batch:
        if self.size > 1:
            self.open = True
            self._commit, self._rollback = self.db.commit, self.db.rollback
            self.db.commit, self.db.rollback = self.db.flush, self._rolled
        return self

    def __exit__(self, *exc: object) -> None:
        if self.open:
            del self.db.commit, self.db.rollback  # the session's own methods again
            self.open = False

    @property
    def waiting(self) -> int:
        """The students written or held since the last commit."""
        return len(self.pending) + len(self.held)

    def _rolled(self) -> None:
        self.rolled_back = True
        self._rollback()

    def next(self, q: queue.Queue) -> Any:
        """The next item of the queue, or :data:`_COMMIT` when a batch waits too long."""
        if not self.waiting:
            return q.get()
        try:
            return q.get(timeout=max(0.0, self.since + LINGER - time.monotonic()))
        except queue.Empty:
            return _COMMIT

    def _started(self) -> None:
        if not self.waiting:
            self.since = time.monotonic()

    def prepared(self, prepared: Any) -> None:
        """A student's rows to write in the batch's bulk INSERT: commit when it is full
        (at once, one student a transaction)."""
        self._started()
        self.held.append(prepared)
        if not self.open or self.waiting >= self.size:
            self.commit()

    def written(self, result: dict) -> None:
        """``result``'s student is written by nbgrader (flushed): commit when the batch is
        full."""
        if not self.open:
            return
        self._started()
        self.pending.append(result)
        if self.rolled_back:  # nbgrader rolled back: its students again, commit by commit
            self._again([*self.pending])
        elif self.waiting >= self.size:
            self.commit()

    def _again(self, results: list[dict]) -> None:
        """``results`` written again by nbgrader, each with its own commits."""
        self.pending, self.rolled_back = [], False
        was_open = self.open
        self.__exit__()
        for each in results:
            self.record(each)
        if was_open:
            self.__enter__()

    def commit(self) -> None:
        """The batch's rows written for good; they leave the session."""
        held, self.held = self.held, []
        if held:
            try:
                self.bulk.write(held)
            except Exception:  # noqa: BLE001 - nbgrader's autograde, student by student, says why
                (self._rollback if self.open else self.db.rollback)()
                self._again([*self.pending, *(p.result for p in held)])
        if self.pending or held:
            (self._commit if self.open else self.db.commit)()
            self.db.remove()
        self.pending = []
