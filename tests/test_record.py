"""The class's verdicts in nbgrader's gradebook: what `gather-course grade` writes through one
connection (grading._record) is what stock `nbgrader autograde` writes with the same verdicts.

Two copies of one class, with a late submission, an extra file, a wrong answer, a submission
that was not graded and one whose notebook is missing: one recorded the stock way (every
nbgrader step opening its own connection, the metadata checked twice), one by the
``Recorder`` that `gather-course grade` runs. Every gradebook row that autograde writes
and every file of ``autograded/`` must match.
"""

from __future__ import annotations

import datetime
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbgrader.api import MissingEntry

from gather_course.course._course import nbgrader_api, nbgrader_errors
from gather_course.grading._gradebook import register as _register
from gather_course.grading._inbound import read_folder
from gather_course.grading._receipts import (
    Decision,
    Receipt,
    append,
    read_receipts,
    submission_times,
)
from gather_course.grading._record import Recorder
from gather_course.grading._submission import graded_cells
from tests.helpers import ROOT

DUE = datetime.datetime(2026, 3, 1, 12, 0, 0)
STUDENTS = ["ada", "bo", "cy", "dee", "eve", "fay"]


def _class(root: Path, config: str = "") -> Path:
    """The class, the assignment registered; ``config``: more of nbgrader_config.py."""
    root.mkdir()
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')  # late: score 0
        f.write(config)
    released = nbformat.read(root / "exercises" / "basics" / "basics.ipynb", 4)
    for i, student in enumerate(STUDENTS):
        folder = root / "submitted" / student / "basics"
        folder.mkdir(parents=True)
        stamp = DUE + datetime.timedelta(hours=-2 if i != 1 else 30)  # bo is late
        (folder / "timestamp.txt").write_text(stamp.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
        if student != "eve":  # eve's notebook is missing
            nb = nbformat.from_dict(json.loads(json.dumps(released)))
            nb.cells[-1].source += f"\n# {student}"  # each one their own
            if student == "fay":  # nbgrader metadata no notebook may have
                md = next(
                    c
                    for c in nb.cells
                    if c.cell_type == "markdown" and "nbgrader" not in c.metadata
                )
                md.metadata["nbgrader"] = {
                    **{"grade": False, "solution": True, "locked": False, "task": False},
                    **{"grade_id": "fays", "schema_version": 3},
                }
            nbformat.write(nb, folder / "basics.ipynb")
    (root / "submitted" / "cy" / "basics" / "data.txt").write_text("cy's own file\n")
    with nbgrader_api(root) as api:
        _register(api, root, "basics")
        with api.gradebook as gb:
            gb.update_or_create_assignment("basics", duedate=DUE)
    return root


def _results() -> tuple[dict, dict]:
    released = nbformat.read(ROOT / "exercises" / "basics" / "basics.ipynb", 4)
    gids = [gid for gid, _qid, _points in graded_cells(released)]
    results = {}
    for student in STUDENTS:
        verdicts = {
            gid: {"passed": not (student == "cy" and n == 1), "message": f"{student}: {gid}"}
            for n, gid in enumerate(gids)
        }
        notes = ["the cell after the answer prints"] if student == "ada" else []
        results[student] = {"student": student, "verdicts": verdicts, "notes": notes}
    problems = {"dee": "this student is not on the class roster (class.json)", "eve": "missing"}
    return results, problems


def _stock(root: Path, results: dict, problems: dict) -> dict:
    """The stock way: nbgrader's own autograde per student, its preprocessors as shipped."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        IgnorePattern,
        LimitOutput,
        SaveAutoGrades,
    )

    from gather_course.grading._record import _verdicts
    from gather_course.grading.nbgrader_plugins import RefereeVerdicts

    problems = dict(problems)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "verdicts.json"
        table = {s: _verdicts(results[s], problems.get(s, "")) for s in STUDENTS}
        path.write_text(json.dumps(table))
        overrides = {
            "Autograde.autograde_preprocessors": [
                RefereeVerdicts,
                IgnorePattern,
                ClearMetadataPreprocessor,
                LimitOutput,
                SaveAutoGrades,
                AssignLatePenalties,
                CheckCellMetadata,
            ],
            "RefereeVerdicts.verdicts_file": str(path),
        }
        with nbgrader_api(root, **overrides) as api:
            for student in STUDENTS:
                done = api.autograde("basics", student, force=True, create=True)
                if not done["success"]:
                    problems.setdefault(student, nbgrader_errors(done))
            with api.gradebook as gb:
                for student in problems:
                    try:
                        sub = gb.find_submission("basics", student)
                    except MissingEntry:
                        continue
                    for nb in sub.notebooks:
                        for grade in nb.grades:
                            grade.needs_manual_grade = True
                gb.db.commit()
    return problems


def _columns(row: Any) -> dict[str, Any]:
    """Every column of a gradebook row (nbgrader's computed ones too), but its ids (random)."""
    from sqlalchemy import inspect

    return {
        c.key: getattr(row, c.key)
        for c in inspect(type(row)).column_attrs
        if c.key != "id" and not c.key.endswith("_id")
    }


def _written(root: Path, students: list[str] = STUDENTS) -> dict:
    """Every gradebook row autograde writes, and every file of autograded/ (with its mode):
    the rows' columns named below, and every column of each row (``all``)."""
    rows = {}
    with nbgrader_api(root) as api, api.gradebook as gb:
        for student in students:
            try:
                sub = gb.find_submission("basics", student)
            except MissingEntry:
                rows[student] = None
                continue
            rows[student] = {
                "timestamp": sub.timestamp,
                "seconds_late": sub.total_seconds_late,
                "score": sub.score,
                "notebooks": {
                    nb.name: {
                        "late_penalty": nb.late_submission_penalty,
                        "flagged": nb.flagged,
                        "grades": sorted(
                            (g.name, g.auto_score, g.manual_score, g.needs_manual_grade)
                            for g in nb.grades
                        ),
                        "comments": sorted((c.name, c.auto_comment) for c in nb.comments),
                    }
                    for nb in sub.notebooks
                },
                "all": [
                    _columns(gb.find_student(student)),
                    _columns(sub),
                    sorted(
                        (
                            nb.name,
                            _columns(nb),
                            sorted((g.name, sorted(_columns(g).items())) for g in nb.grades),
                            sorted((c.name, sorted(_columns(c).items())) for c in nb.comments),
                        )
                        for nb in sub.notebooks
                    ),
                ],
            }
        students = sorted(s.id for s in gb.students)
    files = {}
    for path in sorted((root / "autograded").rglob("*")):
        if path.is_file():
            files[str(path.relative_to(root))] = (path.read_bytes(), path.stat().st_mode)
    return {"rows": rows, "students": students, "files": files}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    results, problems = _results()
    stock_root = _class(tmp_path_factory.mktemp("stock") / "course")
    stock_problems = _stock(stock_root, results, problems)
    ours_root = _class(tmp_path_factory.mktemp("ours") / "course")
    ours_problems = dict(problems)
    # as grading gives it each student's result, with the times grading takes (no receipt
    # here: the students' claims, which is what stock nbgrader reads)
    recorder = Recorder(ours_root, "basics", submission_times(ours_root, "basics", STUDENTS, []))
    try:
        for student in STUDENTS:
            recorder.add({**results[student], "problem": problems.get(student, "")})
        ours_problems.update(recorder.finish(STUDENTS)[1])
    finally:
        recorder.close()
    return _written(stock_root), stock_problems, _written(ours_root), ours_problems, recorder


def test_the_gradebook_rows_are_stock_nbgraders(both):
    stock, _, ours, _, _ = both
    assert ours["students"] == stock["students"]
    for student in STUDENTS:
        assert ours["rows"][student] == stock["rows"][student], student
    late = stock["rows"]["bo"]
    assert late["seconds_late"] > 0 and late["notebooks"]["basics"]["late_penalty"] > 0
    scores = {s: stock["rows"][s]["score"] for s in STUDENTS if stock["rows"][s]}
    assert scores["ada"] > scores["cy"] > 0 and scores["dee"] == 0  # and so on


def test_new_submissions_are_written_in_bulk_and_the_others_by_nbgrader(both):
    """The comparisons above cover both ways: ada, bo and cy in bulk; dee and eve were not
    graded, fay's notebook is refused (nbgrader's autograde says why)."""
    *_, recorder = both
    assert recorder.in_bulk == {"ada", "bo", "cy"}


def test_the_gradebook_takes_the_time_the_exchange_received_not_the_claim(tmp_path):
    """ada claims 2 h before the due date and was received 30 h after it; bo claims 30 h
    after and was received 1 h before: the gradebook has the received times, and nbgrader's
    late penalty (zero) follows them."""
    root = _class(tmp_path / "course")
    results, _problems = _results()
    received = {"ada": DUE + datetime.timedelta(hours=30), "bo": DUE - datetime.timedelta(hours=1)}
    append(
        root,
        "basics",
        [
            Receipt(
                student=s,
                folder=f"{s}+basics+x",
                owner=s,
                decision=Decision.COLLECTED,
                received=when.replace(tzinfo=datetime.timezone.utc).isoformat(),
                first_received=when.replace(tzinfo=datetime.timezone.utc).isoformat(),
                digest=read_folder(root / "submitted" / s / "basics").digest,
            )
            for s, when in received.items()
        ],
    )
    times = submission_times(root, "basics", ["ada", "bo", "cy"], read_receipts(root, "basics"))
    assert times["ada"].claim_early_by > datetime.timedelta(hours=31)  # flagged
    assert times["bo"].claim_early_by is None and times["cy"].source.value == "claimed"
    recorder = Recorder(root, "basics", times)
    try:
        for student in ("ada", "bo", "cy"):
            recorder.add({**results[student], "problem": ""})
        found, _ = recorder.finish(["ada", "bo", "cy"])
    finally:
        recorder.close()
    rows = _written(root)["rows"]
    assert rows["ada"]["timestamp"] == received["ada"] and rows["bo"]["timestamp"] == received["bo"]
    assert found["ada"].seconds_late == 30 * 3600 and found["ada"].score == 0  # zero penalty
    assert found["ada"].late_penalty == found["ada"].raw > 0
    assert found["bo"].seconds_late == 0 and found["bo"].score == found["bo"].raw > 0
    assert found["cy"].seconds_late == 0  # its claim: 2 h early, no receipt


def test_the_autograded_files_are_stock_nbgraders(both):
    stock, _, ours, _, _ = both
    assert sorted(ours["files"]) == sorted(stock["files"])
    assert "autograded/cy/basics/data.txt" in ours["files"]
    for name, (data, mode) in stock["files"].items():
        assert ours["files"][name] == (data, mode), name


def test_the_same_students_are_left_for_manual_grading(both):
    _, stock_problems, _, ours_problems, _ = both
    assert ours_problems == stock_problems
    assert "fay" in ours_problems  # nbgrader refuses its metadata


def test_the_metadata_check_runs_once_per_kind_of_notebook_and_still_refuses():
    from nbgrader.nbgraderformat import ValidationError

    from gather_course.grading.nbgrader_plugins import _VALID_METADATA, CheckCellMetadataOnce

    nb = nbformat.read(ROOT / "exercises" / "basics" / "basics.ipynb", 4)
    check = CheckCellMetadataOnce()
    check.preprocess(nb, {})
    seen = len(_VALID_METADATA)
    check.preprocess(nb, {})  # the same cells' metadata: known to pass
    assert len(_VALID_METADATA) == seen
    bad = nbformat.from_dict(json.loads(json.dumps(nb)))
    md = next(c for c in bad.cells if c.cell_type == "markdown")
    md.metadata["nbgrader"] = {
        **{"grade": False, "solution": True, "locked": False, "task": False},
        **{"grade_id": "x", "schema_version": 3},
    }
    with pytest.raises(ValidationError):
        check.preprocess(bad, {})
    with pytest.raises(ValidationError):  # refused again: a failure is never remembered
        check.preprocess(bad, {})


def test_a_run_stopped_while_another_holds_the_gradebook_does_not_wait_for_it(tmp_path):
    import threading

    from gather_course.grading._gradebook import gradebook_lock

    root = _class(tmp_path / "course")
    results, _problems = _results()
    with gradebook_lock(root):  # another grading run is writing
        recorder = Recorder(root, "basics")
        recorder.add({**results["ada"], "problem": ""})
        closing = threading.Thread(target=recorder.close)  # Ctrl+C: the run stops
        closing.start()
        closing.join(timeout=60)
        assert not closing.is_alive()  # it did not wait for the other run
        assert recorder._thread.is_alive()  # (its writer is still waiting for the lock)
    recorder._thread.join(timeout=120)  # once the lock is free, it records what it had
    with nbgrader_api(root) as api, api.gradebook as gb:
        assert gb.find_submission("basics", "ada").score > 0


def _record(root: Path, students: list[str], batch: int, bulk: bool = True) -> tuple[dict, dict]:
    """``students`` recorded by one Recorder (``batch`` students per transaction; ``bulk``:
    new submissions written in bulk, else each by nbgrader's autograde)."""
    results, _problems = _results()
    recorder = Recorder(root, "basics", batch=batch, bulk=bulk)
    try:
        for student in students:
            recorder.add({**results[student], "problem": ""})
        return recorder.finish(students)
    finally:
        recorder.close()


def test_a_student_graded_again_is_updated_as_nbgrader_updates(tmp_path):
    """A second run: ada and bo graded before (ada with a manual grade given meanwhile) are
    updated by nbgrader's autograde; cy is new, and dee a student the gradebook knows
    (with a name) without a submission: both written in bulk. The rows are the same as with
    nbgrader's autograde for every student."""
    written, in_bulk = {}, {}
    students = ["ada", "bo", "cy", "dee"]
    for bulk in (True, False):
        root = _class(tmp_path / f"bulk-{bulk}")
        _record(root, ["ada", "bo"], 64, bulk)
        with nbgrader_api(root) as api, api.gradebook as gb:
            grade = gb.find_submission_notebook("basics", "basics", "ada").grades[0]
            grade.manual_score = 0.5
            gb.update_or_create_student("dee", first_name="Dee")
            gb.db.commit()
        results, _problems = _results()
        recorder = Recorder(root, "basics", bulk=bulk)
        try:
            for student in students:
                recorder.add({**results[student], "problem": ""})
            recorder.finish(students)
        finally:
            recorder.close()
        written[bulk], in_bulk[bulk] = _written(root), recorder.in_bulk
    assert in_bulk == {True: {"cy", "dee"}, False: set()}
    assert written[True]["rows"]["dee"]["all"][0]["first_name"] == "Dee"
    assert written[True]["rows"] == written[False]["rows"]
    assert written[True]["files"] == written[False]["files"]
    ada = written[True]["rows"]["ada"]["notebooks"]["basics"]["grades"]
    assert any(g[2] == 0.5 and g[3] for g in ada)  # kept, and to be reviewed


@pytest.fixture
def commits():
    """Every transaction the gradebook's engines commit, counted."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    counted: list[int] = []

    def count(_connection: Any) -> None:
        counted.append(1)

    event.listen(Engine, "commit", count)
    yield counted
    event.remove(Engine, "commit", count)


def test_a_batch_of_students_is_one_transaction(tmp_path, commits):
    one = _class(tmp_path / "one")
    many = _class(tmp_path / "many")
    students = ["ada", "bo", "cy", "dee"]
    commits.clear()
    _record(one, students, batch=1, bulk=False)
    stock = len(commits)  # nbgrader's own: a commit per step, about nine a student
    commits.clear()
    found, problems = _record(many, students, batch=64)
    # four of the run's own (the gradebook checked and opened), one for the batch
    assert stock >= 4 * 8 and len(commits) <= 5, (stock, len(commits))
    assert not problems and sorted(found) == students
    assert _written(many)["rows"] == _written(one)["rows"]


def test_a_writer_that_dies_mid_batch_loses_rows_that_the_next_run_writes(tmp_path, monkeypatch):
    """The rows of a batch not yet committed are lost together; each verdict is still in
    the journal, and the next run hands it to its recorder (``_judge_all``: kept results
    are recorded again), which writes it."""
    from gather_course.grading import _record as record_module

    root = _class(tmp_path / "course")

    def crash(self: Any) -> None:
        if self.waiting:
            raise OSError("the machine went down")

    monkeypatch.setattr(record_module._Batch, "commit", crash)
    with pytest.raises(OSError, match="went down"):
        _record(root, ["ada", "bo", "cy"], batch=64)
    assert all(row is None for row in _written(root)["rows"].values())  # none half-written
    monkeypatch.undo()
    found, problems = _record(root, ["ada", "bo", "cy"], batch=64)  # the run taken up
    assert not problems and all(found[s].score > 0 for s in ("ada", "bo", "cy"))


def test_a_rollback_of_nbgraders_mid_batch_writes_the_batch_again(tmp_path, monkeypatch):
    """nbgrader rolls back where it recovers from an error: the batch's earlier students
    went with it, and are written again, each committed as nbgrader commits."""
    from nbgrader.api import Gradebook

    root = _class(tmp_path / "course")
    student = Gradebook.update_or_create_student
    rolled = []

    def once(self: Any, name: str, **kwargs: Any) -> Any:
        if name == "cy" and not rolled:
            rolled.append(name)
            self.db.rollback()
        return student(self, name, **kwargs)

    monkeypatch.setattr(Gradebook, "update_or_create_student", once)
    found, problems = _record(root, ["ada", "bo", "cy", "dee"], batch=64, bulk=False)
    assert rolled and not problems
    assert sorted(found) == ["ada", "bo", "cy", "dee"]
    rows = _written(root)["rows"]
    assert all(rows[s] is not None and rows[s]["score"] > 0 for s in ("ada", "bo", "cy", "dee"))


def test_a_bulk_insert_that_fails_writes_the_batch_by_nbgrader(tmp_path, monkeypatch):
    """The batch's INSERT refused (the gradebook changed under the writer): the batch is
    rolled back and its students written again by nbgrader's autograde, the same rows."""
    from sqlalchemy.exc import IntegrityError

    from gather_course.grading._bulk import Bulk

    write, refused = Bulk.write, []

    def refuse(self: Any, batch: list) -> None:
        write(self, batch)  # the rows sent, then refused
        if not refused:
            refused.append([p.student for p in batch])
            raise IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed"))

    students = ["ada", "bo", "cy"]
    stock = _class(tmp_path / "stock")
    _record(stock, students, 64, bulk=False)
    root = _class(tmp_path / "course")
    monkeypatch.setattr(Bulk, "write", refuse)
    found, problems = _record(root, students, batch=64)
    assert refused == [students] and not problems and sorted(found) == students
    assert _written(root, students)["rows"] == _written(stock, students)["rows"]


def _committed(root: Path, student: str) -> bool:
    """Whether the gradebook holds ``student``'s submission, read on a connection of its
    own, without nbgrader's API: the writer's thread holds the API, and with it the working
    directory it sets, while it runs."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        try:
            gb.find_submission("basics", student)
        except MissingEntry:
            return False
    return True


def test_a_batch_waits_half_a_second_at_most_for_more_students(tmp_path):
    """A class judged slowly is not held in an open transaction: the writer commits what it
    has once no verdict came for LINGER seconds (then a crash loses nothing written)."""
    import time

    from gather_course.grading._record import LINGER

    root = _class(tmp_path / "course")
    results, _problems = _results()
    recorder = Recorder(root, "basics", batch=64)
    try:
        recorder.add({**results["ada"], "problem": ""})
        deadline = time.monotonic() + 60
        while not _committed(root, "ada"):  # another connection reads
            assert time.monotonic() < deadline, "ada was never committed"
            time.sleep(LINGER / 2)
        assert recorder._thread.is_alive()  # committed before the run's end
        recorder.add({**results["bo"], "problem": ""})
        found, problems = recorder.finish(["ada", "bo"])
    finally:
        recorder.close()
    assert not problems and sorted(found) == ["ada", "bo"]
