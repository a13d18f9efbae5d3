"""New submissions written in bulk: nbgrader's autograde, its steps run once a batch.

Stock, ``nbgrader autograde`` runs once a student: an app and an exporter set up, the
notebook read, deep-copied and written twice (its sanitizing pass, then its grading pass),
and the gradebook written row by row, two queries and an update for each test cell. Here a
student whose submission is new to the gradebook (the common case: a class graded the first
time) goes through the same steps with the set-up done once a run:

- the files (:meth:`Bulk.prepare`): the submission's other files and the source's copied as
  nbgrader's ``init_assignment`` copies them, and each notebook through nbgrader's own
  preprocessor instances, in its order, as nbconvert's exporter runs them (its
  normalisation, its validation, its writer; the sanitized text read back as nbgrader reads
  its own file), without the copies nbconvert makes to protect the caller's notebook;
- the rows (:meth:`Bulk.write`): what ``add_submission`` and ``SaveAutoGrades`` write for the
  batch's students, one INSERT per table, the grades and comments as ``SaveAutoGrades``
  decides them (``determine_grade``, the checksum) from the same cells; a late student's
  penalty by nbgrader's ``AssignLatePenalties``, on the rows just written.

Anything else goes to nbgrader's autograde (:meth:`Bulk.prepare` returns None): a student
not graded, one who was graded before (their rows are updated, manual grades kept), a
notebook missing or unknown, a notebook nbgrader refuses, a course whose config asks for
what is not mirrored here (hooks, shared groups, excluded students). ``tests/test_record.py``
compares every row and every ``autograded/`` file with stock ``nbgrader autograde``'s.

Like nbgrader's autograde here, it reads a submission as data (its notebooks as JSON, its
other files copied, what nbgrader reads and no more) and runs none of it.
"""

from __future__ import annotations

import dataclasses
import datetime
import glob
import os
import shutil
from typing import Any

from ._autograde import copy_source_files

_DB_STEPS = ("SaveAutoGrades", "AssignLatePenalties")  # written in bulk, not per cell


@dataclasses.dataclass
class _Notebook:
    """One notebook of the assignment as the gradebook holds it (its id and cells)."""

    id: str
    grade_cells: dict[str, str]  # name: id (grade cells, then task cells: each has a Grade)
    comment_cells: dict[str, str]  # name: id (solution and task cells: each has a Comment)


@dataclasses.dataclass
class Prepared:
    """A student's ``autograded/`` files written; their rows still to write."""

    result: dict[str, Any]  # judge_student's, for nbgrader's path if the batch is undone
    timestamp: datetime.datetime | None
    scores: dict[str, dict[str, float | None]]  # notebook: {grade cell: auto_score}
    comments: dict[str, dict[str, str | None]]  # notebook: {comment cell: auto_comment}
    graded: list[tuple[Any, Any]]  # (notebook, resources) each, for the late penalty

    @property
    def student(self) -> str:
        return self.result["student"]


class Bulk:
    """The run's autograde set up once (``app``: nbgrader's ``Autograde``, configured as
    the recorder configures it): new submissions prepared one by one, written a batch at a
    time."""

    def __init__(self, app: Any, gb: Any, assignment: str) -> None:
        from nbgrader.api import Assignment, MissingEntry, Student, SubmittedAssignment

        from .nbgrader_plugins import RefereeVerdicts

        self.app, self.gb, self.assignment = app, gb, assignment
        self.coursedir = app.coursedir
        try:
            found = gb.find_assignment(assignment)
        except MissingEntry:  # nbgrader's autograde says so, student by student
            self.enabled = False
            return
        self.assignment_id, self.duedate = found.id, found.duedate
        self.notebooks = {
            nb.name: _Notebook(
                nb.id,
                {c.name: c.id for c in [*nb.grade_cells, *nb.task_cells]},
                {c.name: c.id for c in [*nb.solution_cells, *nb.task_cells]},
            )
            for nb in found.notebooks
        }
        self.students = {s for (s,) in gb.db.query(Student.id)}
        self.submitted = {
            s
            for (s,) in gb.db.query(SubmittedAssignment.student_id)
            .join(Assignment)
            .filter(Assignment.name == assignment)
        }
        self.enabled = _mirrored(app)
        if self.enabled:
            self.exporter = app.exporter = app.exporter_class(parent=app, config=app.config)
            self.sanitize, self.autograde = _passes(app)
            self.verdicts = [s for s in self.autograde if isinstance(s, RefereeVerdicts)]
            late = [s for s in self.autograde if _gradebook_step(s) == "AssignLatePenalties"]
            self.late = late[0] if late else None

    def prepare(
        self, result: dict[str, Any], when: datetime.datetime | None, verdicts: dict
    ) -> Prepared | None:
        """``result``'s student's ``autograded/`` files, and their rows to write; None (and
        nothing written) where nbgrader's own autograde must record them. ``when``: the
        submission's time (nbgrader's, naive UTC); ``verdicts``: what ``RefereeVerdicts``
        reads (its file's content)."""
        student = result["student"]
        if not self.enabled or result["problem"] or student in self.submitted:
            return None
        if glob.has_magic(student) or os.sep in student or student in (".", ".."):
            return None
        source = self.coursedir.format_path(
            self.coursedir.submitted_directory, student, self.assignment
        )
        found = sorted(glob.glob(os.path.join(glob.escape(source), "*.ipynb")))
        names = [os.path.splitext(os.path.basename(p))[0] for p in found]
        if sorted(names) != sorted(self.notebooks):  # one missing, or one nbgrader skips
            return None
        dest = self.coursedir.format_path(
            self.coursedir.autograded_directory, student, self.assignment
        )
        prepared = Prepared(result, when, {}, {}, [])
        for step in self.verdicts:  # RefereeVerdicts: the verdicts handed over in memory
            step.given = verdicts
        try:
            self._files(student, source, dest)
            for path, name in zip(found, names, strict=True):
                self._notebook(path, name, dest, prepared)
            _set_permissions(dest, int(str(self.app.permissions), 8))
        except Exception:  # noqa: BLE001 - nbgrader's own autograde says what is wrong
            if os.path.exists(dest):
                shutil.rmtree(dest)
            return None
        self.submitted.add(student)  # (one result a student: another would be an update)
        return prepared

    def _files(self, student: str, source: str, dest: str) -> None:
        """nbgrader's ``init_destination`` (forced) and ``init_assignment``'s copies."""
        from nbgrader.utils import find_all_files, rmtree

        if os.path.exists(dest):
            rmtree(dest)
        for filename in find_all_files(source, self.coursedir.ignore + ["*.ipynb"]):
            path = os.path.join(dest, os.path.relpath(filename, source))
            if not os.path.exists(os.path.dirname(path)):
                os.makedirs(os.path.dirname(path))
            shutil.copy(filename, path)
        copy_source_files(self.app, self.assignment, student)

    def _notebook(self, path: str, name: str, dest: str, prepared: Prepared) -> None:
        """One notebook through both passes (the sanitized one read back as nbgrader reads
        the file it wrote); its grades and comments kept, its file written."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        out = os.path.join(dest, f"{name}{self.exporter.file_extension}")
        nb, _res = self._convert(text, self._resources(path, name, prepared), False)
        text = _writes(nb, indent=None)
        nb, resources = self._convert(text, self._resources(out, name, prepared), True)
        prepared.scores[name], prepared.comments[name] = _autogrades(nb, self.app.log)
        cells = self.notebooks[name]
        if not (
            set(prepared.scores[name]) <= set(cells.grade_cells)
            and set(prepared.comments[name]) <= set(cells.comment_cells)
        ):  # a cell the gradebook does not know: nbgrader's SaveAutoGrades fails
            raise LookupError(f"{name}: a graded cell the gradebook does not know")
        prepared.graded.append((nb, resources))
        text = _writes(nb, indent=1)
        _makedir(dest)
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)

    def _resources(self, path: str, name: str, prepared: Prepared) -> dict[str, Any]:
        """What nbgrader and nbconvert's ``from_filename`` give the preprocessors."""
        from nbconvert.exporters.exporter import ResourcesDict

        if os.path.exists(path):
            modified = datetime.datetime.fromtimestamp(
                os.path.getmtime(path), tz=datetime.timezone.utc
            )
        else:  # the sanitized notebook, which nbgrader would have written just now
            modified = datetime.datetime.now(tz=datetime.timezone.utc)
        return {
            "metadata": ResourcesDict(
                name=name,
                path=os.path.dirname(path),
                modified_date=modified.strftime("%B %-d, %Y"),
            ),
            "unique_key": name,
            "output_files_dir": f"{name}_files",
            "nbgrader": {
                "student": prepared.student,
                "assignment": self.assignment,
                "notebook": name,
                "db_url": self.coursedir.db_url,
            },
        }

    def _convert(self, text: str, resources: dict, grading: bool) -> tuple[Any, Any]:
        """nbconvert's ``Exporter.from_file`` with one pass's preprocessors (the gradebook's
        steps left to :meth:`write`): the notebook and resources, validated."""
        import nbformat
        from nbformat import validator

        exporter = self.exporter
        nb = nbformat.reads(text, as_version=4)
        resources = exporter._init_resources(resources)
        if "language" in nb["metadata"]:
            resources["language"] = nb["metadata"]["language"].lower()
        _, nb = validator.normalize(nb)
        steps = self.autograde if grading else self.sanitize
        for step in steps:
            if _gradebook_step(step):
                continue
            nb, resources = step(nb, resources)
            if not exporter.optimistic_validation:
                exporter._validate_preprocessor(nb, step)
        if exporter.optimistic_validation:
            exporter._validate_preprocessor(nb, steps[-1])
        if nb.nbformat != exporter.nbformat_version:  # (nbformat would convert it)
            raise ValueError(f"a notebook of nbformat {nb.nbformat}")
        return nb, resources

    def write(self, batch: list[Prepared]) -> None:
        """The batch's rows: its new students, their submissions, notebooks, grades and
        comments in one INSERT a table; then each late one's penalty, by nbgrader."""
        from nbgrader.api import Comment, Grade, Student, SubmittedAssignment, SubmittedNotebook
        from sqlalchemy import insert

        rows: dict[Any, list[dict[str, Any]]] = {
            Student: [{"id": s} for s in dict.fromkeys(p.student for p in batch)]
        }
        rows[Student] = [r for r in rows[Student] if r["id"] not in self.students]
        for table in (SubmittedAssignment, SubmittedNotebook, Grade, Comment):
            rows[table] = []
        for prepared in batch:
            self._rows(prepared, rows)
        for table, values in rows.items():
            if values:
                self.gb.db.execute(insert(table.__table__), values)
        for prepared in batch:  # nbgrader's AssignLatePenalties, on the rows just written
            if self.late is not None and _late(prepared.timestamp, self.duedate):
                for nb, resources in prepared.graded:
                    self.late(nb, resources)
        self.students.update(p.student for p in batch)

    def _rows(self, prepared: Prepared, rows: dict[Any, list[dict[str, Any]]]) -> None:
        """``add_submission``'s rows for one student, with ``SaveAutoGrades``' values."""
        from nbgrader.api import Comment, Grade, SubmittedAssignment, SubmittedNotebook, new_uuid

        submission = new_uuid()
        rows[SubmittedAssignment].append(
            {
                "id": submission,
                "assignment_id": self.assignment_id,
                "student_id": prepared.student,
                "timestamp": prepared.timestamp,
                "extension": None,
            }
        )
        for name, notebook in self.notebooks.items():
            nb_id = new_uuid()
            rows[SubmittedNotebook].append(
                {
                    "id": nb_id,
                    "assignment_id": submission,
                    "notebook_id": notebook.id,
                    "flagged": False,
                    "late_submission_penalty": None,
                }
            )
            scores, comments = prepared.scores[name], prepared.comments[name]
            for cell, cell_id in notebook.grade_cells.items():
                score = scores.get(cell)
                rows[Grade].append(
                    {
                        "id": new_uuid(),
                        "notebook_id": nb_id,
                        "cell_id": cell_id,
                        "auto_score": score,
                        "manual_score": None,
                        "extra_credit": None,
                        "needs_manual_grade": score is None,
                    }
                )
            for cell, cell_id in notebook.comment_cells.items():
                rows[Comment].append(
                    {
                        "id": new_uuid(),
                        "notebook_id": nb_id,
                        "cell_id": cell_id,
                        "auto_comment": comments.get(cell),
                        "manual_comment": None,
                    }
                )


def _writes(nb: Any, indent: int | None) -> str:
    """``nbformat.writes(nb)`` as nbconvert's ``NotebookExporter`` calls it, for a version 4
    notebook the exporter has just validated (the validation ``writes`` repeats), without
    its copy: ``nb`` is given up (its lines split, its transient fields dropped). ``indent``
    None: the same JSON without line breaks, for a text read back at once."""
    import json

    from nbformat.v4.nbjson import BytesEncoder
    from nbformat.v4.rwbase import split_lines, strip_transient

    text = json.dumps(
        strip_transient(split_lines(nb)),
        cls=BytesEncoder,
        indent=indent,
        sort_keys=True,
        separators=(",", ": "),
        ensure_ascii=False,
    )
    return text if text.endswith("\n") else text + "\n"


def _gradebook_step(step: Any) -> str | None:
    """Which of nbgrader's gradebook steps ``step`` is (:meth:`Bulk.write` does them)."""
    for kind in type(step).__mro__:
        if kind.__name__ in _DB_STEPS and kind.__module__.startswith("nbgrader."):
            return kind.__name__
    return None


def _mirrored(app: Any) -> bool:
    """Whether the course's config asks only for what :class:`Bulk` mirrors of nbgrader."""
    from nbconvert.exporters import NotebookExporter
    from nbconvert.writers import FilesWriter

    coursedir = app.coursedir
    writer = FilesWriter(parent=app, config=app.config)
    return not (
        app.pre_convert_hook
        or app.post_convert_hook
        or coursedir.groupshared
        or coursedir.student_id_exclude
        or coursedir.notebook_id != "*"
        or glob.has_magic(coursedir.submitted_directory + coursedir.autograded_directory)
        or app.exporter_class is not NotebookExporter
        or writer.files
        or writer.relpath
    )


def _passes(app: Any) -> tuple[list[Any], list[Any]]:
    """The preprocessors of nbgrader's two passes, as its ``Autograde`` registers them."""
    passes = []
    for sanitizing in (True, False):
        app._sanitizing = sanitizing
        app._init_preprocessors()
        passes.append(list(app.exporter._preprocessors))
    app._sanitizing = True
    return passes[0], passes[1]


def _autogrades(nb: Any, log: Any) -> tuple[dict[str, float | None], dict[str, str | None]]:
    """What nbgrader's ``SaveAutoGrades`` writes for ``nb``'s cells: each grade cell's
    auto_score, each solution or task cell's auto_comment (by grade id)."""
    from nbgrader import utils

    scores: dict[str, float | None] = {}
    comments: dict[str, str | None] = {}
    for cell in nb.cells:
        if utils.is_grade(cell):
            scores[cell.metadata["nbgrader"]["grade_id"]] = utils.determine_grade(cell, log)[0]
        for commented in (utils.is_solution(cell), utils.is_task(cell)):
            if commented:
                unchanged = cell.metadata.nbgrader.get("checksum", None) == (
                    utils.compute_checksum(cell)
                )
                comments[cell.metadata["nbgrader"]["grade_id"]] = (
                    "No response." if unchanged and not utils.is_task(cell) else None
                )
    return scores, comments


def _late(when: datetime.datetime | None, due: datetime.datetime | None) -> bool:
    """nbgrader's ``total_seconds_late > 0`` for a new submission (no extension)."""
    return when is not None and due is not None and (when - due).total_seconds() > 0


def _makedir(path: str) -> None:
    """The folder nbconvert's ``FilesWriter`` makes for its notebook, as it makes it."""
    if not os.path.exists(path):
        os.makedirs(path, mode=0o755)


def _set_permissions(dest: str, permissions: int) -> None:
    """nbgrader's ``set_permissions`` (not group-shared): every file of ``dest``."""
    for dirname, _, filenames in os.walk(dest):
        for filename in filenames:
            os.chmod(os.path.join(dirname, filename), permissions)
