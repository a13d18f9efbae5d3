"""The nbgrader course: its notebooks, the release, the hidden-test guard and `gather-course check`."""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
import torch

from gather_course import GatherCourseError, Tier, exercise, exercise_ids
from gather_course.course._course import course_root, release
from gather_course.questions._question import IMPORTS_CONSTRAINT
from tests.helpers import ROOT, cli

SOURCES = sorted((ROOT / "solutions").glob("*/*.ipynb"))


def _cells(path: Path):
    nb = nbformat.read(path, 4)
    return nb, [(c, c.metadata.get("nbgrader", {})) for c in nb.cells]


def qid_of(test_cell) -> str:
    """The question id a test cell checks: ``exercise("basics.pick_per_row").check(...)``."""
    return test_cell.source.split('exercise("', 1)[1].split('"', 1)[0]


# ------------------------------------------------------------------ the source notebooks
def test_every_question_of_the_bank_is_graded_once_in_two_or_three_per_assignment():
    used = []
    for path in SOURCES:
        _, cells = _cells(path)
        tests = [qid_of(c) for c, m in cells if m.get("grade")]
        assert 2 <= len(tests) <= 3, (path, tests)
        used += tests
    assert sorted(used) == sorted(exercise_ids())
    assert {p.parent.name for p in SOURCES} == {"basics", "nlp", "vision", "topk", "mae", "friends"}


def test_exercise_ids_follow_the_notebooks():
    """Course order: the assignments in the order of their lectures,
    and within an assignment the order of its test cells (nlp.masked_nll is graded in friends)."""
    import re

    from gather_course.course._course import assignment_order

    lectures = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    own = [
        re.search(r"exercises/([a-z]+)/", path.read_text(encoding="utf-8"))[1] for path in lectures
    ]  # a lecture's first link is its assignment
    assert assignment_order() == own
    in_notebooks = []
    for name in assignment_order():
        _, cells = _cells(ROOT / "solutions" / name / f"{name}.ipynb")
        in_notebooks += [qid_of(c) for c, m in cells if m.get("grade")]
    assert exercise_ids() == in_notebooks


def _code_lines(code: str) -> list[str]:
    """A solution's lines without nbgrader's markers, imports and blank lines."""
    return [
        line.rstrip()
        for line in code.splitlines()
        if line.strip()
        and "### BEGIN SOLUTION" not in line
        and "### END SOLUTION" not in line
        and not line.startswith(("import ", "from "))
    ]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.parent.name)
def test_each_solution_cell_is_the_banks_solution(path):
    """A solution is written in the bank (``.solution()``, class variants) and in the nbgrader
    source; the two must say the same thing, line for line (imports live in the setup cell)."""
    _, cells = _cells(path)
    for i, (cell, meta) in enumerate(cells):
        if not meta.get("grade"):
            continue
        answer = next(c for c, m in reversed(cells[:i]) if m.get("solution"))
        bank = exercise(qid_of(cell)).solution_code
        assert _code_lines(answer.source) == _code_lines(bank), (
            f"{path.name}: the answer cell before the test of {qid_of(cell)} differs from "
            f"exercise({qid_of(cell)!r}).solution_code; change both together"
        )


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.parent.name)
def test_each_question_is_an_answer_cell_and_a_locked_pointed_test_cell(path):
    nb, cells = _cells(path)
    tests = {}
    for i, (cell, meta) in enumerate(cells):
        if not meta.get("grade"):
            continue
        qid = qid_of(cell)
        q = exercise(qid)
        answer, answer_meta = cells[i - 1]
        assert answer_meta.get("solution") and not answer_meta.get("locked")
        assert answer.source.startswith(f"def {q.name}({q.args[0]}")
        assert "### BEGIN SOLUTION" in answer.source
        assert meta["locked"] and meta["points"] > 0 and meta["grade_id"] == f"test_{q.name}"
        assert f'exercise("{qid}").check({q.name}).assert_passed()' in cell.source
        assert "HIDDEN TESTS" not in cell.source  # the referee holds the hidden cases
        task = cells[i - 2][0].source
        assert (q.constraints in task) if q.constraints else "**Constraints:**" not in task
        assert IMPORTS_CONSTRAINT in task  # what an answer may import (test_grading_isolation)
        tests[meta["grade_id"]] = meta["points"]
    assert nb.metadata["gather_course"] == {"assignment": path.parent.name, "tests": tests}


# ------------------------------------------------------------------ the release
def test_release_regenerates_exercises_byte_identically(tmp_path):
    written = release(course_root(ROOT), tmp_path)
    assert {p.relative_to(tmp_path) for p in written} == {
        p.relative_to(ROOT / "exercises") for p in (ROOT / "exercises").glob("*/*.ipynb")
    }
    for path in written:
        committed = ROOT / "exercises" / path.relative_to(tmp_path)
        assert filecmp.cmp(path, committed, shallow=False), (
            f"{committed} differs from a fresh release: run `gather-course release`"
        )


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.parent.name)
def test_student_notebooks_say_how_to_work_and_hide_solutions_and_hidden_tests(path):
    student = ROOT / "exercises" / path.parent.name / path.name
    text = student.read_text(encoding="utf-8")
    nb = nbformat.read(student, 4)
    assert nb.cells[0].source.startswith("# ")  # the title first, then how to work it
    first = nb.cells[1].source
    for words in (
        "gather-course check",
        "gather-course progress",
        "Validate",
        "Studying on your own",
        "In a class",
        "Submit",
        "Run All",
    ):
        assert words in first, words  # what works alone, what needs a class
    assert "Generated" not in first and "instructor's source" not in first  # not for learners
    run_all = [
        c
        for c in nb.cells
        if c.cell_type == "code"
        and (
            c.metadata.get("nbgrader", {}).get("grade")
            or c.metadata.get("nbgrader", {}).get("solution")
        )
    ]
    assert run_all and all("raises-exception" in c.metadata.get("tags", []) for c in run_all)
    assert "torch._C.Generator" not in text
    for secret in ("BEGIN SOLUTION", "HIDDEN TESTS", "_grading"):
        assert secret not in text, secret
    _, source_cells = _cells(path)
    for cell, meta in source_cells:
        if meta.get("solution"):
            body = cell.source.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
            for line in (ln.strip() for ln in body.splitlines()):
                if any(word in line for word in ("return ", ".gather(", "scatter")):
                    assert line not in text, line  # the lines that give the answer away
    answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert answers and all("raise NotImplementedError()" in c.source for c in answers)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_release_refuses_a_folder_that_is_not_the_course(tmp_path):
    with pytest.raises(GatherCourseError, match="not the course root"):
        course_root(tmp_path)
    done = cli("release", "--course", str(tmp_path))
    assert done.returncode == 2 and "not the course root" in done.stderr
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ the in-notebook check
def test_a_tensor_subclass_cannot_fake_equality():
    class Liar(torch.Tensor):
        def __eq__(self, other):
            return torch.ones(self.shape, dtype=torch.bool)

    result = exercise("basics.pick_per_row").check(
        lambda x, cols: torch.zeros(cols.shape).as_subclass(Liar)
    )
    assert not result.passed and result.tier == Tier.WRONG_TYPE and "subclass" in result.headline


# ------------------------------------------------------------------ gather-course check
def test_check_passes_a_solution_and_fails_an_untouched_notebook(tmp_path):
    done = cli("check", str(SOURCES[0]))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every question passes" in done.stdout
    student = tmp_path / "basics.ipynb"
    shutil.copy2(ROOT / "exercises" / "basics" / "basics.ipynb", student)
    before = student.read_bytes()
    done = cli("check", str(student))
    assert done.returncode == 1
    assert done.stdout.count("Not attempted yet") == 3 and "0/8 points" in done.stdout
    assert student.read_bytes() == before and list(tmp_path.iterdir()) == [student]


def test_check_explains_wrong_answers_edited_and_deleted_tests_and_endless_loops(tmp_path):
    nb = json.loads((ROOT / "exercises" / "basics" / "basics.ipynb").read_text())
    cells = []
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if gid == "pick_per_row":
            cell["source"] = (
                "def pick_per_row(x, cols):\n    return torch.gather(x, 1, cols)[..., None]"
            )
        elif gid == "gather_loop":
            cell["source"] = "def gather_loop(input, dim, index):\n    while True:\n        pass"
        elif gid == "test_reverse_index":
            continue
        elif gid == "test_pick_per_row":
            cell["source"] += "\n# my note"
        cells.append(cell)
    nb["cells"] = cells
    student = tmp_path / "mine.ipynb"
    student.write_text(json.dumps(nb))
    done = cli("check", str(student), "--timeout", "5")
    assert done.returncode == 1
    out = done.stdout
    # an edited test cell changes no verdict (its wrong answer still fails), with a note
    assert "The test cell test_pick_per_row was edited: grading uses the course's own test" in out
    assert "Incorrect (basics.pick_per_row)" in out  # judged as usual
    assert "longer than 5 s" in out
    assert "The test cell test_reverse_index was deleted: grading uses" in out
    assert "Not judged: check needs the test cell" in out and "0/8 points" in out
    assert "refuses" not in out


def test_check_refuses_what_is_not_a_course_notebook(tmp_path):
    lecture = sorted((ROOT / "notebooks").glob("*.ipynb"))[0]
    done = cli("check", str(lecture))
    assert done.returncode == 2 and "not one of the course's exercise notebooks" in done.stderr
    done = cli("check", str(tmp_path / "missing.ipynb"))
    assert done.returncode == 2 and "missing.ipynb' is not found." in done.stderr
    done = cli("check", str(tmp_path / "notes.txt"))
    assert done.returncode == 2 and "expected a notebook file" in done.stderr
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{")
    done = cli("check", str(broken))
    assert done.returncode == 2 and "not a readable notebook" in done.stderr


def test_grade_refuses_an_unknown_assignment_a_protected_csv_and_an_empty_class():
    had_gradebook = (ROOT / "gradebook.db").exists()
    done = cli("grade", "nosuch")
    assert done.returncode == 2 and "unknown assignment 'nosuch'" in done.stderr
    assert "basics" in done.stderr
    done = cli("grade", "basics", "--csv", "exercises/scores.csv")
    assert done.returncode == 2 and "must not be written into exercises/" in done.stderr
    assert not (ROOT / "exercises" / "scores.csv").exists()
    done = cli("grade", "basics")
    assert done.returncode == 2 and "no submissions of 'basics'" in done.stderr
    assert (ROOT / "gradebook.db").exists() == had_gradebook


# ------------------------------------------------------------------ gather-course execute
def test_execute_stores_outputs_only_and_checks_every_path_first(tmp_path):
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell("import os\nos.environ['GATHER_COURSE_DEVICE']")])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    good = tmp_path / "good.ipynb"
    nbformat.write(nb, good)
    good.chmod(0o640)
    before = good.read_bytes()
    done = cli("execute", str(good), str(tmp_path / "missing.ipynb"))
    assert done.returncode == 2 and "missing.ipynb' is not found" in done.stderr
    assert good.read_bytes() == before  # nothing ran: a path was bad
    assert cli("execute", str(good)).returncode == 0
    out = nbformat.read(good, 4).cells[0]
    assert out.source == nb.cells[0].source and out.execution_count == 1
    assert out.outputs[0]["data"]["text/plain"] == "'cpu'"  # run on the CPU
    assert "execution" not in out.metadata and good.stat().st_mode & 0o777 == 0o640


def test_check_passes_honest_noise_and_notes_the_cells_grading_would_not_run(tmp_path):
    nb = json.loads((ROOT / "exercises" / "basics" / "basics.ipynb").read_text())
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "pick_per_row":
            cell["source"] = (
                "import sys, warnings\ndef pick_per_row(x, cols):\n"
                "    print('debugging', file=sys.stderr)\n"
                "    warnings.warn('a warning')\n"
                "    return torch.gather(x, 1, cols)\n"
            )
    nb["cells"].append(
        {
            "cell_type": "code",
            "id": "learner-magic",
            "metadata": {},
            "source": "%timeit 1",
            "outputs": [],
            "execution_count": None,
        }
    )
    student = tmp_path / "noisy.ipynb"
    student.write_text(json.dumps(nb))
    done = cli("check", str(student))
    assert "passed  pick_per_row" in done.stdout and "2/8 points" in done.stdout, done.stdout
    assert "note" in done.stdout and "%timeit" in done.stdout and "IPython syntax" in done.stdout


def test_commands_skip_jsonschemas_slow_iri_checker_and_still_validate_notebooks():
    # rfc3987_syntax costs 1.2 s of CPU at import (gather-course grade's start-up): the command
    # line leaves it out; nbformat still validates every notebook it reads
    code = textwrap.dedent(
        """
        import sys
        from gather_course.cli import _without_the_slow_iri_checker
        _without_the_slow_iri_checker()
        import nbformat
        from nbformat.v4 import new_notebook, new_code_cell
        nb = new_notebook(cells=[new_code_cell("x = 1")])
        nbformat.validate(nb)
        nb.cells[0]["outputs"] = "not a list"
        try:
            nbformat.validate(nb)
        except nbformat.ValidationError:
            print("refused")
        print(sys.modules.get("rfc3987_syntax") is None)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["refused", "True"], done.stderr
