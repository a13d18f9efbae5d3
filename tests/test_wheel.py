"""No answer in reach: the wheel a student installs holds no class variant's answer."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile

import pytest

from gather_course import exercise, exercise_ids
from tests.helpers import ROOT
from tests.variant_solutions import solution_code

# the lines of an answer that do the work (a gather, a scatter, a sort, a top-k)
WORK = re.compile(r"\b(gather|scatter|argsort|topk|take_along_dim|new_full|softmax)\b")


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def wheel_text(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("gather_course-*.whl")
    texts = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            texts[name] = z.read(name).decode("utf-8", errors="replace")
    return texts


def test_the_wheel_ships_the_package_and_no_tests(wheel_text):
    assert "gather_course/questions/_variants.py" in wheel_text
    assert not any(name.startswith("tests/") or "variant_solutions" in name for name in wheel_text)


def test_no_class_variants_answer_line_is_in_the_wheel(wheel_text):
    """Every line of every variant's answer that does the work, and that no public solution
    (the lectures teach them) shares, is nowhere in the wheel."""
    shipped = _squeeze("\n".join(wheel_text.values()))
    taught = _squeeze("\n".join(exercise(q).solution_code for q in exercise_ids()))
    checked = 0
    for qid in exercise_ids():
        public = exercise(qid)
        if not public.family:
            continue
        for params in public.family.every()[1:]:
            for line in solution_code(qid, params).splitlines():
                code = _squeeze(line.split("#")[0])
                if WORK.search(line) and code not in taught and len(code) > 12:
                    assert code not in shipped, (qid, params, line)
                    checked += 1
    assert checked > 100


def test_the_check_would_find_an_answer_that_shipped(wheel_text):
    """The search above is not blind: a public solution's lines are found in the wheel."""
    shipped = _squeeze("\n".join(wheel_text.values()))
    line = next(
        line
        for line in exercise("vision.select_heads").solution_code.splitlines()
        if "gather(" in line
    )
    assert _squeeze(line.split("#")[0]) in shipped
