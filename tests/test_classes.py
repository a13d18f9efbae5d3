"""A class's own release (its question variants), graded the referee's way, and the copy report."""

from __future__ import annotations

import copy
import hashlib
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gather_course import GatherCourseError, exercise
from gather_course.course._course import assignments, course_root
from gather_course.course._execute import execute_notebook
from gather_course.grading._classes import release_class
from gather_course.grading._classjob import referee_student
from gather_course.grading._referee import Referee
from gather_course.grading._sandbox import Worker
from gather_course.grading._similar import normalise, similar
from gather_course.grading._submission import graded_cells
from tests.helpers import ROOT, cli
from tests.variant_solutions import solution_code

SEED = 2026
IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    before = _digest(ROOT / "solutions") | _digest(ROOT / "exercises")
    target = tmp_path_factory.mktemp("class") / "course"
    info = release_class(course_root(ROOT), SEED, target, execute=False)
    assert _digest(ROOT / "solutions") | _digest(ROOT / "exercises") == before
    return target, info


def _fill(nb, answers: dict[str, str]):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    return nb


def test_every_question_with_variants_gets_one_and_the_notebooks_say_which(klass):
    target, info = klass
    assert set(info["variants"]) == set(assignments(ROOT))
    for assignment, chosen in info["variants"].items():
        student = nbformat.read(target / "exercises" / assignment / f"{assignment}.ipynb", 4)
        text = "\n".join(c.source for c in student.cells)
        source = nbformat.read(target / "solutions" / assignment / f"{assignment}.ipynb", 4)
        source_text = "\n".join(c.source for c in source.cells)
        for qid, name in chosen.items():
            q = exercise(qid, name)
            assert (name != "public") == bool(exercise(qid).family)
            assert q.task in text and q.signature in text
            if name != "public":
                assert f'exercise("{qid}", "{name}")' in text
                assert q.task != exercise(qid).task
            answer = solution_code(qid, q.params) if q.family else q.solution_code
            for line in answer.splitlines():  # no answer line is given away
                if "gather(" in line or "return " in line:
                    assert line.strip() not in text, line
                    assert line.strip() in source_text, line  # the instructor's sources have it
        assert student.metadata["gather_course"]["variants"] == chosen


@pytest.fixture(scope="module")
def referee():
    ref = Referee(Worker, call_limit=10)
    yield ref
    ref.close()


@pytest.mark.parametrize("assignment", assignments(ROOT))
def test_the_class_solutions_pass_and_the_public_ones_lose_every_variant(
    klass, referee, assignment, tmp_path
):
    target, info = klass
    name = f"{assignment}.ipynb"
    released = {name: nbformat.read(target / "exercises" / assignment / name, 4)}
    source = nbformat.read(target / "solutions" / assignment / name, 4)
    class_answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    public_answers = {
        exercise(qid.partition(":")[0]).name: IMPORTS
        + exercise(qid.partition(":")[0]).solution_code
        for _gid, qid, _ in graded_cells(released[name])
    }
    for who, answers in (("class", class_answers), ("public", public_answers)):
        folder = tmp_path / who
        folder.mkdir()
        nbformat.write(_fill(released[name], answers), folder / name)
        verdicts, _ = referee_student(referee, folder, released, secret=99)
        for gid, qid, _points in graded_cells(released[name]):
            has_variant = info["variants"][assignment][qid.partition(":")[0]] != "public"
            expected = who == "class" or not has_variant
            assert verdicts[gid].passed == expected, (who, gid, str(verdicts[gid]))


def test_a_class_source_notebook_runs_and_passes_nbval(klass, tmp_path):
    target, _ = klass
    path = tmp_path / "basics.ipynb"
    path.write_bytes((target / "solutions" / "basics" / "basics.ipynb").read_bytes())
    execute_notebook(path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            "--nbval-current-env",
            "--nbval-sanitize-with",
            str(ROOT / "tests" / "nbval_sanitize.cfg"),
            "-p",
            "no:cacheprovider",
            "-q",
            "--rootdir",
            str(tmp_path),
            "-c",
            "/dev/null",
            str(path),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-2000:]


def test_a_class_release_refuses_a_folder_with_other_things_in_it(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(GatherCourseError, match="not empty and holds no class release"):
        release_class(course_root(ROOT), 1, tmp_path, execute=False)
    assert (tmp_path / "mine.txt").read_text() == "keep me"
    with pytest.raises(GatherCourseError, match="its own folder"):
        release_class(course_root(ROOT), 1, ROOT / "solutions" / "x", execute=False)


# ------------------------------------------------------------------ the copy report
def test_normalise_sets_names_comments_and_layout_aside_but_not_the_code():
    a = "def f(x, cols):\n    # mine\n    out = torch.gather(x, 1, cols)\n    return out\n"
    b = 'def f(t, idx):\n    """doc"""\n    res = torch.gather(t, 1,\n        idx)\n    return res'
    c = "def f(x, cols):\n    return torch.gather(x, 0, cols)\n"
    assert normalise(a, "f") == normalise(b, "f") != normalise(c, "f")
    assert normalise("def f(x):\n    raise NotImplementedError()\n", "f") is None


def test_similar_lists_copies_and_published_solutions(tmp_path):
    root = tmp_path / "course"
    for folder in ("solutions", "exercises"):
        (root / folder).mkdir(parents=True)
    released = nbformat.read(ROOT / "exercises" / "basics" / "basics.ipynb", 4)
    answers = {
        "alice": "def pick_per_row(x, cols):\n    idx = cols\n    return x.gather(1, idx)\n",
        "bob": "def pick_per_row(a, b):\n    # my own!\n    i = b\n    return a.gather(1, i)\n",
        "carol": IMPORTS + exercise("basics.pick_per_row").solution_code,
        "dan": "def pick_per_row(x, cols):\n    return x[torch.arange(len(x))[:, None], cols]\n",
        "erin": "from gather_course import exercise\ndef pick_per_row(x, cols):\n"
        "    return exercise('basics.pick_per_row').spec(x, cols)\n",
        "fay": "import gather_course.questions.basics as B\ndef pick_per_row(x, cols):\n"
        "    return B._spec_pick(x, cols)\n",
    }
    for student, code in answers.items():
        folder = root / "submitted" / student / "basics"
        folder.mkdir(parents=True)
        nbformat.write(_fill(released, {"pick_per_row": code}), folder / "basics.ipynb")
    report = similar(root, "basics", {"basics.ipynb": released})
    assert report.groups["basics.pick_per_row"] == [["alice", "bob"]]
    assert report.published["basics.pick_per_row"] == [("carol", "public")]
    assert report.internals["basics.pick_per_row"] == [
        ("erin", "exercise"),
        ("fay", "gather_course.questions.basics"),
    ]


def test_the_cli_wants_a_seed_and_a_folder_together(tmp_path):
    assert cli("release", "--course", str(ROOT), "--class-seed", "3").returncode == 2
    assert cli("release", "--course", str(ROOT), "--to", str(tmp_path / "x")).returncode == 2
    assert not (tmp_path / "x").exists()
