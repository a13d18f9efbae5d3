"""A corrected course reaches the learner's working copy (issue 48, item 6): ``start`` of an
existing copy updates the lectures the learner left as they were, puts the course's new
version beside a lecture they changed and beside every exercise, and ``progress`` says what
the last such start did. Nothing the learner wrote is ever changed."""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from gather_course.course import _workcopy
from gather_course.course._upgrade import last_update
from gather_course.course._workcopy import MARKER, exercise_notebooks, make_working_copy
from tests.helpers import ROOT, cli

LECTURE = Path("notebooks/01_basic_formula.ipynb")
OTHER = Path("notebooks/02_nlp_label_scores.ipynb")
EXERCISE = Path("exercises/basics/basics.ipynb")


def _course(tmp_path: Path) -> Path:
    """Version 1 of a small course: two lectures and one exercise, in both editions."""
    course = tmp_path / "course"
    for rel in (LECTURE, OTHER, EXERCISE):
        for edition in (Path(), Path("zh")):
            (course / edition / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / edition / rel, course / edition / rel)
    return course


def _revise(path: Path, words: str = "Corrected.") -> bytes:
    """The course's next version of the notebook at ``path``: a sentence more in its first
    markdown cell (as a lecture's or an exercise's task is corrected). Its new bytes."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    cell["source"] = "".join(cell["source"]) + "\n\n" + words
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path.read_bytes()


def _edit(path: Path) -> bytes:
    """The learner's edit of the notebook at ``path`` (a note of their own); its new bytes."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "my own note"})
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path.read_bytes()


def _recorded(work: Path) -> dict:
    return json.loads((work / MARKER).read_text(encoding="utf-8"))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _start(monkeypatch, course: Path, work: Path, *args: str) -> list[str]:
    """``gather-course start WORK --no-lab`` from ``course`` (not the installed one): its lines."""
    made = functools.partial(_workcopy.make_working_copy, course=course)
    monkeypatch.setattr(_workcopy, "make_working_copy", made)
    run = cli("start", str(work), "--no-lab", *args)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.splitlines()


def _no_temporary_files(work: Path) -> None:
    left = [p for p in work.rglob("*") if p.name.endswith(".part")]
    assert left == [], left


def test_the_marker_records_what_was_copied_and_keeps_its_keys(tmp_path):
    course = _course(tmp_path)
    work = make_working_copy(tmp_path / "work", course=course, lang="en").folder
    record = _recorded(work)
    assert record["lang"] == "en" and record["course"] == str(course.resolve())
    assert set(record["files"]) == {p.as_posix() for p in (LECTURE, OTHER, EXERCISE)}
    for rel in (LECTURE, OTHER, EXERCISE):
        assert record["files"][rel.as_posix()]["sha256"] == _sha(course / rel)


def test_a_lecture_the_learner_left_as_it_was_is_updated_in_place(tmp_path, monkeypatch):
    course = _course(tmp_path)
    work = tmp_path / "work"
    _start(monkeypatch, course, work)
    new = _revise(course / LECTURE)
    said = _start(monkeypatch, course, work)
    assert (work / LECTURE).read_bytes() == new
    assert (work / OTHER).read_bytes() == (course / OTHER).read_bytes()
    assert not (work / "notebooks/01_basic_formula.new.ipynb").exists()
    assert _recorded(work)["files"][LECTURE.as_posix()]["sha256"] == _sha(course / LECTURE)
    assert (
        "Updated the lectures you had not changed to the course's new version: "
        "01_basic_formula.ipynb." in said
    ), said
    assert "Kept 2 notebooks already there as they are (your work is never overwritten)." in said
    _no_temporary_files(work)


def test_a_lecture_the_learner_changed_keeps_their_bytes_with_the_new_one_beside(
    tmp_path, monkeypatch
):
    course = _course(tmp_path)
    work = tmp_path / "work"
    _start(monkeypatch, course, work)
    mine = _edit(work / LECTURE)
    new = _revise(course / LECTURE)
    said = _start(monkeypatch, course, work)
    assert (work / LECTURE).read_bytes() == mine  # the learner's, byte for byte
    beside = work / "notebooks/01_basic_formula.new.ipynb"
    assert beside.read_bytes() == new
    assert (
        "Kept your notebooks/01_basic_formula.ipynb as it is; the course's new version is "
        "beside it: 01_basic_formula.new.ipynb." in said
    ), said
    assert not any("Updated" in line for line in said), said
    # the course corrects it again: the earlier offer, untouched, makes way for the newer one
    newer = _revise(course / LECTURE, "Corrected again.")
    _start(monkeypatch, course, work)
    assert beside.read_bytes() == newer and (work / LECTURE).read_bytes() == mine
    assert not (work / "notebooks/01_basic_formula.new-2.ipynb").exists()
    _no_temporary_files(work)


def test_a_file_of_the_learners_own_under_the_beside_name_is_never_overwritten(
    tmp_path, monkeypatch
):
    course = _course(tmp_path)
    work = tmp_path / "work"
    _start(monkeypatch, course, work)
    _edit(work / LECTURE)
    theirs = work / "notebooks/01_basic_formula.new.ipynb"
    theirs.write_text("the learner's own notes", encoding="utf-8")
    new = _revise(course / LECTURE)
    said = _start(monkeypatch, course, work)
    assert theirs.read_text(encoding="utf-8") == "the learner's own notes"
    assert (work / "notebooks/01_basic_formula.new-2.ipynb").read_bytes() == new
    assert any("01_basic_formula.new-2.ipynb" in line for line in said), said


def test_an_exercise_is_never_overwritten_and_its_change_is_said(tmp_path, monkeypatch):
    course = _course(tmp_path)
    work = tmp_path / "work"
    _start(monkeypatch, course, work)
    given = (work / EXERCISE).read_bytes()  # not changed by the learner, and still kept
    new = _revise(course / EXERCISE)
    said = _start(monkeypatch, course, work)
    assert (work / EXERCISE).read_bytes() == given
    assert (work / "exercises/basics/basics.new.ipynb").read_bytes() == new
    (line,) = [line for line in said if "exercise basics" in line]
    assert line == (
        "The course's exercise basics is not the one in your exercises/basics/basics.ipynb, "
        "which is kept as it is: the course's version is beside it, basics.new.ipynb. To take "
        "it, copy your answers into it, then delete yours and rename it basics.ipynb."
    )
    assert not any("Updated" in line for line in said), said
    # progress checks the learner's exercise, not the course's new version beside it
    assert [p.name for p in exercise_notebooks(work)] == ["basics.ipynb"]


def test_starting_again_changes_and_says_nothing_more(tmp_path, monkeypatch):
    course = _course(tmp_path)
    work = tmp_path / "work"
    _start(monkeypatch, course, work)
    _edit(work / LECTURE)
    for rel in (LECTURE, OTHER, EXERCISE):
        _revise(course / rel)
    first = _start(monkeypatch, course, work)
    assert len([line for line in first if "beside it" in line]) == 2, first
    files = sorted(p.relative_to(work) for p in work.rglob("*"))
    marker = (work / MARKER).read_bytes()
    again = _start(monkeypatch, course, work)
    assert sorted(p.relative_to(work) for p in work.rglob("*")) == files  # no second .new
    assert (work / MARKER).read_bytes() == marker
    assert again == [
        "Kept 3 notebooks already there as they are (your work is never overwritten).",
        f"Open it with: gather-course start {work}",
    ]


def test_a_learner_who_takes_the_new_version_is_in_step_again(tmp_path, monkeypatch):
    course = _course(tmp_path)
    work = tmp_path / "work"
    _start(monkeypatch, course, work)
    _edit(work / LECTURE)
    _revise(course / LECTURE)
    _start(monkeypatch, course, work)
    beside = work / "notebooks/01_basic_formula.new.ipynb"
    beside.replace(work / LECTURE)  # the learner takes the course's version
    _start(monkeypatch, course, work)
    assert _recorded(work)["files"][LECTURE.as_posix()] == {"sha256": _sha(course / LECTURE)}
    newer = _revise(course / LECTURE, "Corrected again.")
    said = _start(monkeypatch, course, work)  # not changed since: updated in place
    assert (work / LECTURE).read_bytes() == newer and not beside.exists(), said


def test_a_working_copy_made_before_records_is_not_guessed_at(tmp_path, monkeypatch):
    """An old marker (no hashes): a file like the course's is recorded; one that is not is
    taken as the learner's, with the course's version beside it, and said once."""
    course = _course(tmp_path)
    work = tmp_path / "work"
    _start(monkeypatch, course, work)
    old = {"course": str(course), "lang": "en"}
    (work / MARKER).write_text(json.dumps(old, indent=1) + "\n", encoding="utf-8")
    _revise(course / LECTURE)  # the learner's copy is the old lecture: not the course's now
    said = _start(monkeypatch, course, work)
    record = _recorded(work)
    assert {k: record[k] for k in old} == old
    assert record["files"][OTHER.as_posix()] == {"sha256": _sha(course / OTHER)}
    assert record["files"][EXERCISE.as_posix()] == {"sha256": _sha(course / EXERCISE)}
    assert record["files"][LECTURE.as_posix()]["sha256"] is None  # not known
    assert (work / LECTURE).read_bytes() != (course / LECTURE).read_bytes()  # not guessed
    assert (work / "notebooks/01_basic_formula.new.ipynb").read_bytes() == (
        course / LECTURE
    ).read_bytes()
    assert sum("made before gather-course recorded" in line for line in said) == 1, said
    assert any("01_basic_formula.new.ipynb" in line for line in said), said
    assert not (work / "exercises/basics/basics.new.ipynb").exists()
    again = _start(monkeypatch, course, work)
    assert not any("recorded" in line or "beside" in line for line in again), again


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "\xff\xfe"])
def test_a_marker_that_cannot_be_read_is_set_aside_and_said(tmp_path, monkeypatch, text):
    course = _course(tmp_path)
    work = tmp_path / "work"
    _start(monkeypatch, course, work)
    (work / MARKER).write_bytes(text.encode("latin-1"))
    (work / f"{MARKER}.corrupt").write_text("an earlier one", encoding="utf-8")
    said = _start(monkeypatch, course, work)
    aside = work / f"{MARKER}.corrupt-2"
    assert aside.read_bytes() == text.encode("latin-1")  # kept, never deleted
    assert (work / f"{MARKER}.corrupt").read_text(encoding="utf-8") == "an earlier one"
    assert said[0] == (
        f"Could not read {MARKER}, this working copy's record of what it was given: kept it "
        f"as {aside.name} and started a new record."
    )
    record = _recorded(work)
    assert record["lang"] == "en" and len(record["files"]) == 3
    assert not any(p.name.endswith(".new.ipynb") for p in work.rglob("*"))  # all alike


def test_a_chinese_copys_unreadable_marker_keeps_it_chinese(tmp_path, monkeypatch):
    course = _course(tmp_path)
    work = make_working_copy(tmp_path / "work", course=course, lang="zh").folder
    (work / MARKER).write_text("{", encoding="utf-8")
    copied = make_working_copy(work, course=course)  # no --lang: its own edition
    assert copied.set_aside == work / f"{MARKER}.corrupt"
    assert _recorded(work)["lang"] == "zh" and not copied.beside and not copied.exercises
    assert (work / LECTURE).read_bytes() == (course / "zh" / LECTURE).read_bytes()


def test_progress_says_what_the_last_start_brought(tmp_path, monkeypatch):
    course = _course(tmp_path)
    work = tmp_path / "work"
    _start(monkeypatch, course, work)
    assert last_update(work) is None
    _edit(work / LECTURE)
    for rel in (LECTURE, OTHER, EXERCISE):
        _revise(course / rel)
    _start(monkeypatch, course, work)
    _start(monkeypatch, course, work)  # a start with nothing new does not hide it
    run = cli("progress", str(work))
    assert run.returncode == 0, run.stdout + run.stderr
    date = _recorded(work)["last_update"]["date"]
    line = (
        f"Course updates at your start on {date}: lectures updated: 1; new version of "
        "01_basic_formula.ipynb: 01_basic_formula.new.ipynb; new version of basics.ipynb: "
        "basics.new.ipynb."
    )
    assert run.stdout.splitlines()[0] == line, run.stdout
    assert run.stdout.count("basics   ") == 1, run.stdout  # basics.new.ipynb is not checked
    (work / "exercises/basics/basics.new.ipynb").unlink()  # the learner dealt with it
    update = last_update(work)
    assert update is not None and update.exercises == [] and len(update.beside) == 1
    (work / MARKER).write_text("{", encoding="utf-8")  # progress reads it, never fails on it
    assert last_update(work) is None
