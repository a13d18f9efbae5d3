"""The class report (``gather-course report``): where a class is stuck, from the verdicts
grading kept; outside the grader's trusted base (it draws, grading never does)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .._errors import GatherCourseError
from .._i18n import speaking

__all__ = ["write_report"]  # the front door: what the command line uses of the report


def write_report(csv_path: Path) -> list[Path]:
    """The report of the grading run that wrote ``csv_path``: HTML, CSV and JSON beside it,
    in the class's language. Reads the verdict log grading kept; runs nothing."""
    from ..grading import log_path, read_changes, read_log
    from ._numbers import class_numbers
    from ._page import write_files

    log = log_path(csv_path)
    if not log.is_file():
        raise GatherCourseError(
            f"no verdicts to report on: expected {log.name} beside {csv_path.name} (grading "
            "writes it; grade the assignment first, with this version of gather-course)"
        )
    header, entries, seconds = read_log(log)
    if not header:
        raise GatherCourseError(f"{log} has no header line: is it a verdict log of grading?")
    found, since = read_changes(csv_path)  # graded again: what changed, per student
    with speaking(header.get("lang", "en")):
        numbers = class_numbers(header, entries, seconds)
        numbers.changes = [dataclasses.asdict(c) for c in found]
        numbers.changes_since = since
        return write_files(numbers, csv_path)
