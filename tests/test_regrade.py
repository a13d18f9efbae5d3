"""Grading a class again: the earlier grades are kept, and what changed is said per student."""

from __future__ import annotations

import csv
import shutil

import nbformat
import pytest

from gather_course.grading._regrade import Change, changes_path, read_changes
from tests import test_grading_e2e as e2e
from tests.helpers import cli

pytestmark = pytest.mark.classroom  # two real grading runs


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def test_grading_again_keeps_the_earlier_grades_and_says_what_changed(tmp_path):
    root = e2e.class_of(tmp_path, ["solution", "wrong_odd", "untouched"])
    first = cli("grade", "basics", "--course", str(root))
    assert first.returncode == 0, first.stderr[-2000:]
    assert "Graded again" not in first.stdout + first.stderr  # a first run has no changes
    grades = root / "grades-basics.csv"
    before = grades.read_bytes()
    log_before = (root / "grades-basics.verdicts.jsonl").read_bytes()
    rows = _rows(grades)
    wrong = next(s for s in rows if s.endswith("wrong_odd"))
    right = next(s for s in rows if s.endswith("solution"))
    # the student fixes their answers, and a late classmate's folder appears
    shutil.copy2(root / "submitted" / right / "basics" / "basics.ipynb",
                 root / "submitted" / wrong / "basics" / "basics.ipynb")  # fmt: skip
    late = root / "submitted" / "s00009_late" / "basics"
    late.mkdir(parents=True)
    nbformat.write(nbformat.read(root / "submitted" / right / "basics" / "basics.ipynb", 4),
                   late / "basics.ipynb")  # fmt: skip
    again = cli("grade", "basics", "--course", str(root))
    assert again.returncode == 0, again.stderr[-2000:]
    said = again.stdout + again.stderr
    # nothing the first run wrote is lost: its grades and verdicts, byte for byte
    (kept,) = (root / ".grading" / "history" / "basics").iterdir()
    assert (kept / "grades-basics.csv").read_bytes() == before
    assert (kept / "grades-basics.verdicts.jsonl").read_bytes() == log_before
    found, earlier = read_changes(grades)
    assert earlier == kept.name and changes_path(grades).is_file()
    mine = {c.question: c for c in found if c.student == wrong}
    old, new = float(rows[wrong]["score"]), float(_rows(grades)[wrong]["score"])
    assert new > old and mine["total"] == Change(wrong, "total", old, new, "graded", "graded")
    fixed = [c for q, c in mine.items() if q != "total"]
    assert fixed and all(c.now == "passed" and c.was != "passed" for c in fixed)
    assert all(c.after > c.before for c in fixed)
    assert {c.student for c in found} == {wrong, "s00009_late"}  # the others did not change
    late_total = next(c for c in found if c.student == "s00009_late" and c.question == "total")
    assert late_total.before is None and late_total.was == "not there"
    assert "Graded again:" in said and f"{wrong}, total: {old:g} -> {new:g} points" in said
    page = (root / "grades-basics-report.html").exists()
    assert not page  # (the report is written below, from the second run's files)
    report = cli("report", "basics", "--course", str(root))
    assert report.returncode == 0, report.stderr[-2000:]
    html = (root / "grades-basics-report.html").read_text(encoding="utf-8")
    assert "Changes since the earlier grading" in html and kept.name in html
    assert "The earlier run&#x27;s grades" in html  # its note escaped once, not twice
    assert f">{wrong}</td>" in html and "s00009_late" in html  # (cells carry their label)
    # a third run with nothing new: the second run's grades are kept too, and it says so
    third = cli("grade", "basics", "--course", str(root))
    assert "no student's points changed" in third.stdout + third.stderr
    assert len(list((root / ".grading" / "history" / "basics").iterdir())) == 2
    assert read_changes(grades) == ([], "")
