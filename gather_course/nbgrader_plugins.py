"""nbgrader preprocessors of the course (named in ``nbgrader_config.py``)."""

from __future__ import annotations

from typing import Any

from nbgrader.preprocessors import NbGraderPreprocessor

_BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"


class HideHiddenTestTracebacks(NbGraderPreprocessor):   # (enabled by default, unlike nbconvert's)
    """Keep only ``ErrorName: message`` of errors in test cells that have hidden tests.

    IPython's traceback quotes the lines around the failing one, which would show the hidden
    tests in the feedback even after ``ClearHiddenTests`` removed them from the source.
    The message (the check's explanation) stays.
    """

    def preprocess_cell(self, cell: Any, resources: dict, index: int) -> tuple[Any, dict]:
        if cell.cell_type == "code" and _BEGIN_HIDDEN in cell.source:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: "
                                           f"{output.get('evalue', '')}"]
        return cell, resources
