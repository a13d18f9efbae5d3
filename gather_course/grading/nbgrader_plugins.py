"""nbgrader preprocessors of the course (named in ``nbgrader_config.py`` or set by ``grade``)."""

from __future__ import annotations

import json
from typing import Any

from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Unicode


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

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        with open(self.verdicts_file, encoding="utf-8") as f:
            verdicts = json.load(f)
        self._mine = verdicts.get(resources["nbgrader"]["student"], {})
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: Any, resources: dict, index: int) -> tuple[Any, dict]:
        if cell.cell_type != "code" or not is_grade(cell) or is_solution(cell):
            return cell, resources
        meta = cell.metadata["nbgrader"]
        verdict = self._mine.get("__all__") or self._mine.get(
            meta.get("grade_id"), {"passed": False, "message": "This question was not graded."}
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
