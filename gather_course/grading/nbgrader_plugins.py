"""nbgrader preprocessors of the course (named in ``nbgrader_config.py`` or set by ``grade``)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from nbformat.v4 import new_output
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    NbGraderPreprocessor,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)
from nbgrader.utils import is_grade, is_solution
from traitlets import Unicode

from .._i18n import _


class HideHiddenTestTracebacks(NbGraderPreprocessor):  # (enabled by default, unlike nbconvert's)
    """Keep only ``ErrorName: message`` of the errors in test cells.

    IPython's traceback quotes the lines around the failing one, which would show hidden
    tests in the feedback even after ``ClearHiddenTests`` removed them from the source. A test
    cell's message (the check's verdict) says all a student needs, so every test cell is
    treated alike: that works whatever the hidden-test markers are called, and before or
    after ``ClearHiddenTests`` in the list (once it has run, no marker is left to find).
    """

    def preprocess_cell(self, cell: Any, resources: dict, index: int) -> tuple[Any, dict]:
        if cell.cell_type == "code" and is_grade(cell) and not is_solution(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [
                        f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
                    ]
        return cell, resources


class RefereeVerdicts(NbGraderPreprocessor):
    """Put the referee's verdicts into the test cells, in place of running the notebook.

    ``gather-course grade`` decides every score outside the student's code, then runs
    nbgrader's autograde with this preprocessor instead of ``Execute``: a passed test cell
    gets the verdict as its output (full points), a failed one an error output with the
    message (no points), so the gradebook, formgrader, export and feedback work as usual.
    """

    verdicts_file = Unicode("", help="JSON: {student: {grade_id: {passed, message}}}").tag(
        config=True
    )
    given: dict | None = None  # the verdicts as verdicts_file holds them, handed over in memory

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        if self.given is not None:
            verdicts = self.given
        else:
            with open(self.verdicts_file, encoding="utf-8") as f:
                verdicts = json.load(f)
        self._mine = verdicts.get(resources["nbgrader"]["student"], {})
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: Any, resources: dict, index: int) -> tuple[Any, dict]:
        if cell.cell_type != "code" or not is_grade(cell) or is_solution(cell):
            return cell, resources
        meta = cell.metadata["nbgrader"]
        verdict = self._mine.get("__all__") or self._mine.get(
            meta.get("grade_id"), {"passed": False, "message": _("This question was not graded.")}
        )
        if verdict["passed"]:
            cell.outputs = [new_output("stream", name="stdout", text=verdict["message"] + "\n")]
        else:
            cell.outputs = [
                new_output(
                    "error",
                    ename="Failed",
                    evalue=verdict["message"],
                    traceback=verdict["message"].splitlines(),
                )
            ]
        return cell, resources


class RunAllShowsEveryVerdict(NbGraderPreprocessor):
    """Tag the student notebook's answer and test cells ``raises-exception``.

    JupyterLab's Run All and nbclient stop at the first cell that raises, unless it carries
    this tag: with it, a blank or half-done notebook shows a verdict under every question.
    Grading is unchanged (a failing test cell still has its error output, and the referee
    never runs test cells). Listed in ``nbgrader_config.py`` for ``generate_assignment``.
    """

    def preprocess_cell(self, cell: Any, resources: dict, index: int) -> tuple[Any, dict]:
        if cell.cell_type == "code" and (is_grade(cell) or is_solution(cell)):
            tags = cell.metadata.setdefault("tags", [])
            if "raises-exception" not in tags:
                tags.append("raises-exception")
        return cell, resources


# -- nbgrader's preprocessors on one gradebook connection ------------------------------------
# Stock, each of these opens the gradebook for every notebook (a new engine, every table
# checked): with `gather-course grade`'s other steps, about nine connections per student.
# While :func:`one_gradebook` holds a connection for a URL, they use it; anywhere else they
# are nbgrader's own. Their steps are nbgrader's: only where the connection comes from changes.
_OPEN: dict[str, Any] = {}


@contextlib.contextmanager
def one_gradebook(db_url: str, course_id: str) -> Iterator[Any]:
    """One gradebook connection for ``db_url``, used by the preprocessors below meanwhile."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url, course_id) as gb:
        _OPEN[db_url] = gb
        _RELEASED[db_url] = {}
        try:
            yield gb
        finally:
            del _OPEN[db_url], _RELEASED[db_url]


# The released cells' columns OverwriteCells reads, kept while one_gradebook holds its
# connection (a grading run holds the gradebook lock: no generate_assignment changes them).
_RELEASED: dict[str, dict[tuple, SimpleNamespace]] = {}
_SOURCE_COLUMNS = ("cell_type", "locked", "checksum", "source")


class _ReleasedCells:
    """The open gradebook, whose released cells (``find_source_cell``, ``find_graded_cell``,
    and ``find_notebook``'s cells, which OverwriteCells reads to put back a deleted test
    cell) are read once a run: OverwriteCells asks for every graded cell of every notebook
    (two queries a cell, two more a notebook). What they hold is copied as plain values;
    everything else is the gradebook's own."""

    def __init__(self, gb: Any, db_url: str) -> None:
        self._gb, self._seen = gb, _RELEASED[db_url]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gb, name)

    def find_source_cell(self, name: str, notebook: str, assignment: str) -> SimpleNamespace:
        key = ("source", name, notebook, assignment)
        if key not in self._seen:  # (MissingEntry is raised, never kept)
            cell = self._gb.find_source_cell(name, notebook, assignment)
            self._seen[key] = SimpleNamespace(**{c: getattr(cell, c) for c in _SOURCE_COLUMNS})
        return self._seen[key]

    def find_graded_cell(self, name: str, notebook: str, assignment: str) -> SimpleNamespace:
        key = ("graded", name, notebook, assignment)
        if key not in self._seen:
            cell = self._gb.find_graded_cell(name, notebook, assignment)
            self._seen[key] = SimpleNamespace(max_score=cell.max_score)
        return self._seen[key]

    def find_notebook(self, name: str, assignment: str) -> SimpleNamespace:
        key = ("notebook", name, assignment)
        if key not in self._seen:
            nb = self._gb.find_notebook(name, assignment)
            cells = {c: [SimpleNamespace(name=x.name) for x in getattr(nb, c)] for c in _CELLS}
            for kind in ("grade_cells", "task_cells"):  # (in the same order)
                for plain, cell in zip(cells[kind], getattr(nb, kind), strict=True):
                    plain.max_score = cell.max_score
            cells["source_cells"] = [
                SimpleNamespace(name=c.name, **{k: getattr(c, k) for k in _SOURCE_COLUMNS})
                for c in nb.source_cells
            ]
            self._seen[key] = SimpleNamespace(**cells)
        return self._seen[key]


# the cells of find_notebook's notebook that OverwriteCells reads
_CELLS = ("grade_cells", "solution_cells", "task_cells")


def open_gradebook(db_url: str) -> Any:
    """The connection :func:`one_gradebook` holds for ``db_url``, or None."""
    return _OPEN.get(db_url)


def _ids(pp: Any, resources: dict) -> Any:
    """nbgrader's first lines of these preprocessors: the ids from the resources; the open
    connection (None: none is held, run nbgrader's own)."""
    info = resources["nbgrader"]
    pp.notebook_id, pp.assignment_id = info["notebook"], info["assignment"]
    pp.student_id, pp.db_url = info.get("student"), info["db_url"]
    return open_gradebook(info["db_url"])


class OverwriteKernelspecOnce(OverwriteKernelspec):
    """nbgrader's ``OverwriteKernelspec`` on the open connection."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        gb = _ids(self, resources)
        if gb is None:
            return super().preprocess(nb, resources)
        key = ("kernelspec", self.notebook_id, self.assignment_id)  # read once a run
        seen = _RELEASED[self.db_url]
        if key not in seen:
            seen[key] = gb.find_notebook(self.notebook_id, self.assignment_id).kernelspec
        kernelspec = seen[key]
        if kernelspec is not None:
            kernelspec = json.loads(kernelspec)
        if kernelspec:
            nb.metadata["kernelspec"] = kernelspec
        return nb, resources


class OverwriteCellsOnce(OverwriteCells):
    """nbgrader's ``OverwriteCells`` on the open connection.

    A cell whose nbgrader metadata is empty is first made a plain cell: nbgrader's
    ``DeduplicateIds`` leaves ``{}`` on a copy of a cell of nbgrader's (a learner who
    pasted a cell: JupyterLab copies its metadata), and ``add_missing_task_cells`` then
    failed with KeyError 'grade_id', so the student was NOT GRADED where ``check`` said
    every question passed (red team, 2026-11-27)."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", None) == {}:
                del cell.metadata["nbgrader"]
        self.gradebook = _ids(self, resources)
        if self.gradebook is None:
            return super().preprocess(nb, resources)
        self.gradebook = _ReleasedCells(self.gradebook, self.db_url)
        nb, resources = super(OverwriteCells, self).preprocess(nb, resources)
        if self.add_missing_cells:
            nb, resources = self.add_missing_grade_cells(nb, resources)
            nb, resources = self.add_missing_task_cells(nb, resources)
        return nb, resources


class SaveAutoGradesOnce(SaveAutoGrades):
    """nbgrader's ``SaveAutoGrades`` on the open connection."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        self.gradebook = _ids(self, resources)
        if self.gradebook is None:
            return super().preprocess(nb, resources)
        return super(SaveAutoGrades, self).preprocess(nb, resources)


class AssignLatePenaltiesOnce(AssignLatePenalties):
    """nbgrader's ``AssignLatePenalties`` on the open connection."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        gb = _ids(self, resources)
        if gb is None:
            return super().preprocess(nb, resources)
        self.init_plugin()
        self.gradebook = gb
        nb, resources = super(AssignLatePenalties, self).preprocess(nb, resources)
        assignment = gb.find_submission(self.assignment_id, self.student_id)
        notebook = gb.find_submission_notebook(
            self.notebook_id, self.assignment_id, self.student_id
        )
        notebook.late_submission_penalty = None
        if assignment.total_seconds_late > 0:
            self.log.warning(f"{assignment} is {assignment.total_seconds_late} seconds late")
            penalty = self.plugin_inst.late_submission_penalty(
                self.student_id, notebook.score, assignment.total_seconds_late
            )
            self.log.warning(f"Late submission penalty: {penalty}")
            if penalty is not None:
                notebook.late_submission_penalty = self._check_late_penalty(notebook, penalty)
        gb.db.commit()
        return nb, resources


_VALID_METADATA: set[str] = set()  # the cell metadata CheckCellMetadataOnce has seen pass


class CheckCellMetadataOnce(CheckCellMetadata):
    """nbgrader's ``CheckCellMetadata``, once per distinct metadata of a notebook's cells.

    nbgrader checks its own schema again for every cell (25 ms a notebook); a class's
    notebooks mostly hold the released cells' metadata. What the check decides depends only
    on each cell's type and nbgrader metadata, so a notebook whose cells have those of one
    already passed passes; any other is checked by nbgrader.
    """

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        key = json.dumps(
            [[c.get("cell_type"), c.get("metadata", {}).get("nbgrader")] for c in nb.cells],
            sort_keys=True,
            default=str,
        )
        if key in _VALID_METADATA:
            return nb, resources
        nb, resources = super().preprocess(nb, resources)  # raises on invalid metadata
        if len(_VALID_METADATA) < 1024:
            _VALID_METADATA.add(key)
        return nb, resources
