"""The grading journal: a run cut short is taken up, only what is missing is judged again."""

from __future__ import annotations

from gather_course.grading._classjob import StudentJob
from gather_course.grading._journal import Journal


def _result(job: StudentJob) -> dict:
    return {
        "student": job.student,
        "digest": job.digest,
        "verdicts": {},
        "notes": [],
        "problem": "",
    }


def test_an_unfinished_run_is_taken_up_with_its_secret_and_its_results(tmp_path):
    ada, bo = StudentJob("ada", {"a.ipynb": "{}"}), StudentJob("bo", {"a.ipynb": None})
    first = Journal(tmp_path, "basics")
    assert not first.resumed
    first.add(_result(ada))
    with open(first.path, "a") as f:
        f.write('{"result": {"student": "bo", "dig')  # the line being written when it stopped
    again = Journal(tmp_path, "basics")
    assert again.resumed and again.secret == first.secret
    assert again.done("ada", ada.digest) == _result(ada)
    assert again.done("bo", bo.digest) is None


def test_a_changed_submission_is_judged_again(tmp_path):
    ada = StudentJob("ada", {"a.ipynb": "{}"})
    Journal(tmp_path, "basics").add(_result(ada))
    changed = StudentJob("ada", {"a.ipynb": '{"cells": []}'})
    assert Journal(tmp_path, "basics").done("ada", changed.digest) is None


def test_a_run_that_reached_the_gradebook_is_not_taken_up(tmp_path):
    ada = StudentJob("ada", {"a.ipynb": "{}"})
    first = Journal(tmp_path, "basics")
    first.add(_result(ada))
    first.end()
    second = Journal(tmp_path, "basics")
    assert not second.resumed and second.secret != first.secret
    assert second.done("ada", ada.digest) is None
    assert Journal(tmp_path, "nlp").done("ada", ada.digest) is None  # one journal an assignment
