"""A class's own release (its question variants), graded the referee's way, and the copy report."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gather_course import GatherCourseError, exercise
from gather_course.copies._crossed import mistakes_between
from gather_course.copies._fingerprints import partial_copies
from gather_course.copies._similar import normalise, similar
from gather_course.course._course import assignments, course_root
from gather_course.course._execute import execute_notebook
from gather_course.grading._classes import own_variants, release_class
from gather_course.grading._classjob import referee_files, student_job
from gather_course.grading._roster import read_roster
from gather_course.grading._submission import NotGraded, graded_cells
from tests.helpers import ROOT, cli, fill_cells, variant_solutions

answer_lines, solution_code, squeeze = (
    variant_solutions.answer_lines,
    variant_solutions.solution_code,
    variant_solutions.squeeze,
)

SEED = 2026
IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"


def referee_student(referee, folder, released, secret, variants=None):
    """A student's folder judged as grading does: the StudentJob it reads (its notebooks'
    text, its own variants), then every question by the referee."""
    job = student_job(folder, folder.parent.name, released, variants)
    return referee_files(referee, job.files, released, secret, job.variants)


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# A class release for six students, checked question by question: the third test command
# (README), with the rest of the classroom; the first keeps the quick checks of this file.
CLASS = pytest.mark.classroom

ROSTER = ["ada_37q", "bob_37q", "cyd_37q", "dee_37q", "eve_37q", "fay_37q"]  # ids seen nowhere else


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    before = _digest(ROOT / "solutions") | _digest(ROOT / "exercises")
    target = tmp_path_factory.mktemp("class") / "course"
    info = release_class(course_root(ROOT), SEED, target, ROSTER, execute=False)
    assert _digest(ROOT / "solutions") | _digest(ROOT / "exercises") == before
    return target, info


def _released(target: Path, assignment: str):
    return nbformat.read(target / "exercises" / assignment / f"{assignment}.ipynb", 4)


def _answers(nb, variants: dict[str, str]) -> dict[str, str]:
    """A student's right answers: their own variant's, or the public solution."""
    found = {}
    for _gid, qid, _ in graded_cells(nb):
        q = exercise(qid.partition(":")[0], variants.get(qid.partition(":")[0], "public"))
        found[q.name] = IMPORTS + (solution_code(q.qid, q.params) if q.family else q.solution_code)
    return found


@CLASS
def test_one_notebook_for_the_class_and_a_variant_for_each_student(klass):
    target, info = klass
    assert info["roster"] == ROSTER and info["preview"] == "ada_37q"
    assert set(info["variants"]) == set(assignments(ROOT))
    for assignment, table in info["variants"].items():
        assert set(table) == set(ROSTER)
        student = _released(target, assignment)
        text = "\n".join(c.source for c in student.cells)
        # the notebook opens the class without its seed or its ids
        assert info["key"] in text and str(SEED) not in text.replace(info["key"], "")
        assert not any(name in text for name in ROSTER)
        for _gid, qid, _ in graded_cells(student):
            qid = qid.partition(":")[0]
            public = exercise(qid)
            if not public.family:
                assert all(table[s][qid] == "public" for s in ROSTER)
                continue
            assert f'mine.exercise("{qid}").check(' in text and f'\nmine.exercise("{qid}")' in text
            assert public.task not in text  # the task is each student's, shown at run time
            for s in ROSTER:  # no one's answer is given away
                answer = solution_code(qid, exercise(qid, table[s][qid]).params)
                for line in answer.splitlines():
                    if "gather(" in line or "scatter(" in line:
                        assert line.strip() not in text, line
        sets = {json.dumps(table[s], sort_keys=True) for s in ROSTER}
        assert len(sets) >= 3, assignment  # six students, several sets of variants


@CLASS
def test_the_sources_hold_the_preview_students_answers(klass):
    target, info = klass
    for assignment, table in info["variants"].items():
        source = nbformat.read(target / "solutions" / assignment / f"{assignment}.ipynb", 4)
        text = "\n".join(c.source for c in source.cells)
        for qid, name in table["ada_37q"].items():
            q = exercise(qid, name)
            answer = solution_code(qid, q.params) if q.family else q.solution_code
            for line in answer.splitlines()[1:]:
                assert line.strip() in text, (qid, line)
            assert f"def {exercise(qid).signature}:" in text  # one signature for everyone


@CLASS
@pytest.mark.parametrize("assignment", assignments(ROOT))
def test_own_answers_pass_and_a_classmates_or_the_public_ones_lose_every_varied_question(
    klass, referee, assignment, tmp_path
):
    """Each student's own answers get full marks; a classmate's, handed in as theirs, lose
    every question whose variants differ; the public solution loses every varied question;
    an id not on the roster is not graded, with the reason."""
    target, info = klass
    name = f"{assignment}.ipynb"
    released = {name: _released(target, assignment)}
    own, note = own_variants(target, assignment, released)
    assert note == ""  # released and graded with the same bank
    table = info["variants"][assignment]
    cases = [
        ("bob_37q", "bob_37q"),
        ("cyd_37q", "bob_37q"),
        ("dee_37q", "public"),
        ("eve_37q", "fay_37q"),
    ]
    for who, whose in cases:
        folder = tmp_path / who / assignment
        folder.mkdir(parents=True)
        answers = _answers(released[name], {} if whose == "public" else table[whose])
        nbformat.write(fill_cells(released[name], answers), folder / name)
        verdicts, _ = referee_student(referee, folder, released, secret=99, variants=own(who))
        for gid, qid, _points in graded_cells(released[name]):
            qid = qid.partition(":")[0]
            theirs = "public" if whose == "public" else table[whose][qid]
            expected = table[who][qid] == theirs
            assert verdicts[gid].passed == expected, (who, whose, gid, str(verdicts[gid]))
    folder = tmp_path / "zed_37q" / assignment
    folder.mkdir(parents=True)
    nbformat.write(released[name], folder / name)
    with pytest.raises(NotGraded, match="not on the class roster"):
        referee_student(referee, folder, released, secret=99, variants=own("zed_37q"))


@CLASS
def test_every_class_source_notebook_runs_as_the_preview_student_and_passes_nbval(klass, tmp_path):
    """The sources of all six assignments, run as the preview student (whose answers they
    hold), pass nbval in one run: what they show is what they compute."""
    from concurrent.futures import ThreadPoolExecutor

    target, info = klass
    env = {**os.environ, "GATHER_COURSE_STUDENT": info["preview"], "JUPYTERHUB_USER": ""}
    paths = []
    for assignment in assignments(ROOT):
        path = tmp_path / assignment / f"{assignment}.ipynb"
        path.parent.mkdir()
        path.write_bytes((target / "solutions" / assignment / path.name).read_bytes())
        paths.append(path)
    assert len(paths) == 6
    with ThreadPoolExecutor(2) as pool:  # a kernel each: two at a time
        list(pool.map(lambda p: execute_notebook(p, env=env), paths))
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
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    cells = sum(c.cell_type == "code" for p in paths for c in nbformat.read(p, 4).cells)
    assert f"{cells} passed" in done.stdout, done.stdout[-2000:]  # every cell of all six


def _bank_changed(monkeypatch, qids: list[str]) -> None:
    """The installed bank, upgraded since the release: the first question's first knob gains
    a choice, the second's first knob with three or more choices has them reordered."""
    from gather_course.questions._knobs import Knob

    first = exercise(qids[0]).family
    knob = next(iter(first.knobs))
    grown = Knob((*first.knobs[knob], "added_since"), first.knobs[knob].steps)
    monkeypatch.setitem(first.knobs, knob, grown)
    second = exercise(qids[1]).family
    knob = next(k for k, v in second.knobs.items() if len(v) >= 3)
    public, *others = second.knobs[knob]
    monkeypatch.setitem(second.knobs, knob, Knob((public, *others[::-1]), second.knobs[knob].steps))


@CLASS
def test_a_class_graded_with_an_upgraded_bank_judges_each_student_on_their_stored_variant(
    klass, referee, monkeypatch, tmp_path
):
    """Released with one bank, graded and checked with another (a choice added, a knob
    reordered): every student, whose answers are right for the variants the release stored,
    gets full marks in grading and in their notebook's check; grading says the bank changed;
    a stored variant the bank can no longer make stops grading, naming it."""
    from gather_course.grading._notebook_check import check_notebook

    target, info = klass
    released = {"nlp.ipynb": _released(target, "nlp")}
    table = info["variants"]["nlp"]
    own_qids = [q for q in table[ROSTER[0]] if exercise(q).family]
    before = {s: {q: exercise(q).pick_variant(info["key"], s) for q in own_qids} for s in ROSTER}
    _bank_changed(monkeypatch, own_qids)
    redrawn = {s: {q: exercise(q).pick_variant(info["key"], s) for q in own_qids} for s in ROSTER}
    assert redrawn != before  # the upgrade changes some draws: stored variants must matter
    own, note = own_variants(target, "nlp", released)
    assert "released with the question bank" in note and "stored for them" in note
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    for who in ROSTER:
        folder = tmp_path / who / "nlp"
        folder.mkdir(parents=True)
        nb = fill_cells(released["nlp.ipynb"], _answers(released["nlp.ipynb"], table[who]))
        nbformat.write(nb, folder / "nlp.ipynb")
        verdicts, _notes = referee_student(referee, folder, released, secret=5, variants=own(who))
        assert all(v.passed for v in verdicts.values()), (who, [str(v) for v in verdicts.values()])
        monkeypatch.setenv("GATHER_COURSE_STUDENT", who)
        reports, _notes = check_notebook(folder / "nlp.ipynb", referee=referee)
        assert all(r.passed for r in reports), (who, reports)
    broken = json.loads((target / "class.json").read_text())
    broken["variants"]["nlp"][ROSTER[1]][own_qids[0]] = "layout=ZYX"
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "class.json").write_text(json.dumps(broken))
    with pytest.raises(GatherCourseError, match=rf"gives {ROSTER[1]} the variant 'layout=ZYX'"):
        own_variants(moved, "nlp", released)


_BROKEN = {  # an answer cell as a student breaks it, and what every verdict must name
    "syntax": ("def pick_per_row(x, cols:\n    return x\n", "SyntaxError"),
    "misspelled": ("def pick_per_rows(x, cols):\n    return x\n", "NameError"),
    "import": (
        "import numpyy\n\ndef pick_per_row(x, cols):\n    return x\n",
        "ModuleNotFoundError",
    ),
}


@CLASS
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_class_students_broken_answer_is_told_its_own_cause_as_in_the_public_release(
    lang, tmp_path, monkeypatch, referee
):
    """A SyntaxError, a misspelled function, an import error in the student's own cell: the
    class release names that cause, as the public release does, never the course's set-up
    cell (``from gather_course import my_class``); its advice names the student's own
    variant's hints, and the class's notebook offers no solution."""
    from gather_course.grading._notebook_check import check_notebook

    course = ROOT if lang == "en" else ROOT / "zh"
    target = tmp_path / "class"
    info = release_class(course_root(course), 3, target, ["ann_1", "ben_1"], execute=False)
    released = _released(target, "basics")
    public = nbformat.read(course / "exercises" / "basics" / "basics.ipynb", 4)
    header = "\n".join(c.source for c in released.cells if c.cell_type == "markdown")
    assert ".solution()" not in header and 'mine.exercise("...").hint()' in header
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.setenv("GATHER_COURSE_STUDENT", "ann_1")
    for kind, (source, cause) in _BROKEN.items():
        said = {}
        for name, nb in (("class", released), ("public", public)):
            path = tmp_path / f"{name}-{kind}.ipynb"
            nbformat.write(fill_cells(nb, {"pick_per_row": source}), path)
            reports, _notes = check_notebook(path, referee=referee)
            said[name] = next(r.message for r in reports if "pick_per_row" in r.grade_id)
        for name, text in said.items():
            assert cause in text, (lang, kind, name, text)
            assert "CourseInternalError" not in text and "my_class" not in text, text
        assert "mine.exercise('basics.pick_per_row').hint()" in said["class"], said["class"]
        assert "exercise('basics.pick_per_row').hint()" in said["public"]
        folder = tmp_path / "ann_1" / kind / "basics"
        folder.mkdir(parents=True)
        nbformat.write(fill_cells(released, {"pick_per_row": source}), folder / "basics.ipynb")
        own, _note = own_variants(target, "basics", {"basics.ipynb": released})
        verdicts, _ = referee_student(
            referee, folder, {"basics.ipynb": released}, secret=1, variants=own("ann_1")
        )
        graded = next(str(v) for gid, v in verdicts.items() if "pick_per_row" in gid)
        assert cause in graded and "CourseInternalError" not in graded, graded
    assert info["variants"]["basics"]["ann_1"]["basics.pick_per_row"] != "public"


@CLASS
def test_check_judges_the_student_it_is_run_for(klass, tmp_path, monkeypatch):
    """What check says is what grading gives: each student's own variant, from their id."""
    target, info = klass
    released = _released(target, "nlp")
    path = tmp_path / "nlp.ipynb"
    nbformat.write(
        fill_cells(released, _answers(released, info["variants"]["nlp"]["bob_37q"])), path
    )
    scores = {}
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    for who in ("bob_37q", "cyd_37q"):
        monkeypatch.setenv("GATHER_COURSE_STUDENT", who)
        scores[who] = cli("check", str(path)).stdout.strip().splitlines()[-1]
    assert scores["bob_37q"].startswith("7/7 points"), scores
    assert scores["cyd_37q"].startswith("0/7 points"), scores
    monkeypatch.setenv("GATHER_COURSE_STUDENT", "zed_37q")
    done = cli("check", str(path))
    assert done.returncode != 0 and "zed_37q is not on this class's roster" in done.stderr
    assert "Traceback" not in done.stderr


@CLASS
def test_an_id_not_on_the_roster_gets_one_clear_line_in_the_notebook(klass, tmp_path):
    """The released notebook run by someone the roster does not know: the cell that shows
    the student's own task says so in one line, with no traceback under it."""
    from nbclient import NotebookClient

    target, _ = klass
    nb = _released(target, "basics")
    mine = next(i for i, c in enumerate(nb.cells) if c.source.startswith("mine.exercise("))
    nb.cells = nb.cells[: mine + 1]  # the set-up, then the first task of one's own
    env = {**os.environ, "GATHER_COURSE_STUDENT": "zed_37q", "JUPYTERHUB_USER": ""}
    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True)
    client.execute(cwd=str(tmp_path), env=env)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert len(errors) == 1 and nb.cells[mine].outputs == errors, errors  # that cell only
    shown = "\n".join(errors[0].traceback)
    assert "zed_37q is not on this class's roster" in shown, shown
    assert len(errors[0].traceback) == 1 and "Traceback" not in shown and "File " not in shown


def test_a_class_release_refuses_a_folder_with_other_things_in_it(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(GatherCourseError, match="not empty and holds no class release"):
        release_class(course_root(ROOT), 1, tmp_path, ROSTER, execute=False)
    assert (tmp_path / "mine.txt").read_text() == "keep me"
    with pytest.raises(GatherCourseError, match="its own folder"):
        release_class(course_root(ROOT), 1, ROOT / "solutions" / "x", ROSTER, execute=False)
    with pytest.raises(GatherCourseError, match="needs its students: expected --roster"):
        release_class(course_root(ROOT), 1, tmp_path / "new", execute=False)


def _import_students(folder: Path, *ids: str) -> None:
    """``nbgrader db student import`` of a student CSV, run in ``folder`` as an instructor
    does (it makes ``folder/gradebook.db``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "students.csv").write_text(
        "id,first_name,last_name,email\n" + "".join(f"{s},,,\n" for s in ids)
    )
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "db", "student", "import", "students.csv"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (folder / "students.csv").unlink()


@CLASS
def test_a_class_release_without_students_says_how_to_import_them(tmp_path, monkeypatch):
    """A gradebook with no students: the error says what was expected, what was found and
    how to import a roster; the folder is left as it was."""
    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}"):
        pass  # an empty gradebook, as nbgrader makes it
    with pytest.raises(GatherCourseError, match=r"expected --roster .* found no students") as e:
        release_class(course_root(ROOT), 1, tmp_path, execute=False)
    assert "nbgrader db student import" in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gradebook.db"]


@CLASS
def test_a_class_release_without_roster_takes_the_gradebooks_students(tmp_path, monkeypatch):
    """No --roster: the first release into a folder where students were imported (nbgrader's
    CLI) gives them their variants; a release made again takes the students added since
    (nbgrader's API), keeps the gradebook, and one made from a --roster is made again from
    the same roster when the gradebook has none."""
    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    target = tmp_path / "class"
    _import_students(target, "bob_37q", "ada_37q")
    first = release_class(course_root(ROOT), 5, target, execute=False)
    assert (first["roster"], first["roster_from"]) == (["ada_37q", "bob_37q"], "the gradebook")
    assert all(set(t) == {"ada_37q", "bob_37q"} for t in first["variants"].values())
    assert (target / "exercises" / "basics" / "basics.ipynb").is_file()
    with Gradebook(f"sqlite:///{target / 'gradebook.db'}") as gb:
        gb.update_or_create_student("cyd_37q")
    again = release_class(course_root(ROOT), 5, target, execute=False)
    assert again["roster"] == ["ada_37q", "bob_37q", "cyd_37q"]
    assert all(
        t["ada_37q"] == first["variants"][a]["ada_37q"] for a, t in again["variants"].items()
    )
    assert json.loads((target / "class.json").read_text()) == again
    with Gradebook(f"sqlite:///{target / 'gradebook.db'}") as gb:
        assert sorted(s.id for s in gb.students) == again["roster"]
    other = tmp_path / "other"
    release_class(course_root(ROOT), 5, other, ["eve_37q", "dee_37q"], execute=False)
    remade = release_class(course_root(ROOT), 5, other, execute=False)
    assert (remade["roster"], remade["roster_from"]) == (
        ["eve_37q", "dee_37q"],
        "the earlier release (class.json)",
    )


def test_the_copy_report_without_copydetect_says_how_to_install_it(monkeypatch):
    """copydetect is an extra (the instructor's, not a learner's): without it, one line."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "copydetect" else real(name, *a),
    )
    done = cli("similar", "basics")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "pip install 'gather-course[copies]'" in done.stderr


def test_a_roster_is_nbgraders_student_csv(tmp_path):
    good = tmp_path / "students.csv"
    good.write_text("id,first_name,last_name,email\nada,Ada,L,\nbob.l@uni.example,,,\n")
    assert read_roster(good) == ["ada", "bob.l@uni.example"]
    head = "id,first_name,last_name,email\nada,Ada,L,\n"
    for rows, said in (
        ("bob,,,\n\ncyd,,,\n", "row 4: the row is blank"),
        (",Bob,,\n", "row 3: the id is blank"),
        ("ada,Ada,Lovelace,\n", "row 3: the id 'ada' is given again (first on row 2)"),
        ("bob smith,,,\n", "row 3: the id 'bob smith' cannot name a student"),
        ("bob+1,,,\n", "row 3: the id 'bob+1' cannot name a student"),
        (" bob,,,\n", "row 3: the id ' bob' cannot name a student"),
        ("../bob,,,\n", "row 3: the id '../bob' cannot name a student"),
    ):
        bad = tmp_path / "bad.csv"
        bad.write_text(head + rows)
        with pytest.raises(GatherCourseError, match=re.escape(f"bad.csv, {said}")) as e:
            read_roster(bad)
        assert "\n" not in str(e.value)
    bad = tmp_path / "names.csv"
    bad.write_text("name,email\nada,\n")
    with pytest.raises(GatherCourseError, match=r"no column 'id'.*got columns name, email"):
        read_roster(bad)
    with pytest.raises(GatherCourseError, match="cannot read the roster"):
        read_roster(tmp_path / "missing.csv")


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
        "bob_37q": "def pick_per_row(a, b):\n    # my own!\n    i = b\n    return a.gather(1, i)\n",
        "carol": IMPORTS + exercise("basics.pick_per_row").solution_code,
        "dan": "def pick_per_row(x, cols):\n    return x[torch.arange(len(x))[:, None], cols]\n",
        "erin": "from gather_course import exercise\ndef pick_per_row(x, cols):\n"
        "    return exercise('basics.pick_per_row').spec(x, cols)\n",
        "fay_37q": "import gather_course.questions.basics as B\ndef pick_per_row(x, cols):\n"
        "    return B._spec_pick(x, cols)\n",
    }
    for student, code in answers.items():
        folder = root / "submitted" / student / "basics"
        folder.mkdir(parents=True)
        nbformat.write(fill_cells(released, {"pick_per_row": code}), folder / "basics.ipynb")
    report = similar(root, "basics", {"basics.ipynb": released})
    assert report.groups["basics.pick_per_row"] == [["alice", "bob_37q"]]
    assert report.published["basics.pick_per_row"] == [("carol", "public")]
    assert report.internals["basics.pick_per_row"] == [
        ("erin", "exercise"),
        ("fay_37q", "gather_course.questions.basics"),
    ]


def test_the_cli_wants_a_seed_and_a_folder_together(tmp_path):
    assert cli("release", "--course", str(ROOT), "--class-seed", "3").returncode == 2
    assert cli("release", "--course", str(ROOT), "--to", str(tmp_path / "x")).returncode == 2
    assert not (tmp_path / "x").exists()


# ------------------------------------------------------------------ partial and crossed copies
_MINE = """def masked_nll(logits, labels, ignore_index=-100):
    valid = labels.ne(ignore_index)
    picked = torch.where(valid, labels, labels.new_zeros(()))
    lp = torch.log_softmax(logits.float(), dim=2)
    per_token = lp.gather(2, picked[..., None])[..., 0]
    per_token = -per_token * valid
    return per_token.sum() / valid.sum().clamp(min=1)
"""
_PARTIAL = """def _count(m):
    return m.sum().clamp(min=1)

def masked_nll(scores, gold, ignore_index=-100):
    ok = gold.ne(ignore_index)
    chosen = torch.where(ok, gold, gold.new_zeros(()))
    logp = torch.log_softmax(scores.float(), dim=2)
    tok = logp.gather(2, chosen[..., None])[..., 0]
    tok = -(tok * ok)
    return tok.sum() / _count(ok)
"""
_OWN_WAY = """def masked_nll(logits, labels, ignore_index=-100):
    mask = (labels != ignore_index).float()
    onehot = F.one_hot(labels.clamp(min=0), logits.shape[-1]).float()
    nll = -(F.log_softmax(logits, -1) * onehot).sum(-1)
    return (nll * mask).sum() / mask.sum()
"""


def test_partial_copies_are_found_with_their_lines_side_by_side_and_honest_answers_are_not():
    public = exercise("nlp.masked_nll").solution_code
    stub = "def masked_nll(logits, labels, ignore_index=-100):\n    raise NotImplementedError()\n"
    answers = {"ann": _MINE, "ben": _PARTIAL, "cat": _OWN_WAY, "dan": public, "eli": public}
    found = partial_copies("nlp.masked_nll", answers, [stub, public])
    assert [m.students for m in found] == [("ann", "ben")]  # the public solution is boilerplate
    (m,) = found
    assert m.share >= 0.5
    pairs = dict(m.lines)
    assert pairs["    per_token = lp.gather(2, picked[..., None])[..., 0]"] == (
        "    tok = logp.gather(2, chosen[..., None])[..., 0]"
    )


@CLASS
def test_the_class_copy_report_flags_crossed_and_published_variant_answers(klass, referee):
    """bob hands in ada's answers: right for ada's variants, wrong for his own; they are the
    published answers of ada's variants; a blank notebook is nothing alike."""
    target, info = klass
    released = {"nlp.ipynb": _released(target, "nlp")}
    table = info["variants"]["nlp"]
    ada, bob, cyd = ROSTER[:3]
    for student, whose in ((ada, ada), (bob, ada), (cyd, None)):
        folder = target / "submitted" / student / "nlp"
        folder.mkdir(parents=True)
        answers = _answers(released["nlp.ipynb"], table[whose]) if whose else {}
        nbformat.write(fill_cells(released["nlp.ipynb"], answers), folder / "nlp.ipynb")
    try:
        report = similar(target, "nlp", released, referee)
    finally:
        shutil.rmtree(target / "submitted")
    varied = [q for q in table[ada] if table[ada][q] != table[bob][q]]
    assert varied
    # a lead only where the two variants differ by more than one common mistake; the others
    # are set aside (an honest slip gives the same answer), and counted
    far = {q for q in varied if len(mistakes_between(q, table[bob][q], table[ada][q])) > 1}
    crossed = {(c.student, c.question): c for c in report.crossed + report.set_aside}
    assert set(crossed) == {(bob, q) for q in varied}
    assert {c.question for c in report.crossed} == far
    assert {c.question for c in report.set_aside} == set(varied) - far
    for q in varied:
        c = crossed[bob, q]
        assert (c.own, c.other) == (table[bob][q], table[ada][q]) and ada in c.holders
        assert c.mistakes == mistakes_between(q, c.own, c.other)
    for q in table[ada]:
        key = f"{q}:@student"
        assert report.groups[key] == [[ada, bob]]
        assert (ada, f"variant {table[ada][q]}") in report.published[key]
    # cyd's blank notebook is like no one's (cyd may hold ada's variant of a question, and be
    # named as its holder)
    assert all(cyd not in group for groups in report.groups.values() for group in groups)
    assert cyd not in {c.student for c in report.crossed}


@CLASS
def test_the_class_keeps_its_variant_answers_and_the_report_finds_them_where_it_moved(
    klass, tmp_path
):
    """class.json names the variant answers relative to the class folder, which holds a copy:
    a class folder moved elsewhere still compares with them; without them, the report says
    so in one line instead of quietly comparing less."""
    target, info = klass
    assert info["solver"] == "solutions/variant_solutions.py"
    assert (target / info["solver"]).read_bytes() == (
        ROOT / "solutions" / "variant_solutions.py"
    ).read_bytes()
    moved = tmp_path / "moved"
    shutil.copytree(target, moved)
    released = {"nlp.ipynb": _released(moved, "nlp")}
    ada = ROSTER[0]
    folder = moved / "submitted" / ada / "nlp"
    folder.mkdir(parents=True)
    own = _answers(released["nlp.ipynb"], info["variants"]["nlp"][ada])
    nbformat.write(fill_cells(released["nlp.ipynb"], own), folder / "nlp.ipynb")

    def variant_matches(report):
        return [w for found in report.published.values() for _s, w in found if "variant" in w]

    report = similar(moved, "nlp", released)
    assert variant_matches(report) and report.notes == []
    (moved / info["solver"]).unlink()
    report = similar(moved, "nlp", released)
    assert variant_matches(report) == []
    (note,) = report.notes
    assert "solutions/variant_solutions.py" in note and "not compared" in note
    shown = cli("similar", "nlp", "--course", str(moved)).stdout
    assert f"  note: {note}" in shown, shown


def test_nothing_in_the_package_names_a_file_of_tests():
    """The package never loads a file from tests/ (the variant answers live in solutions/)."""
    import ast

    def names_tests(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.startswith("tests/")
        parts = (  # Path("tests") and root / "tests"
            node.args
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Path"
            else [node.left, node.right]
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
            else []
        )
        return any(isinstance(a, ast.Constant) and a.value == "tests" for a in parts)

    for path in (ROOT / "gather_course").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            assert not names_tests(node), f"{path.relative_to(ROOT)}:{node.lineno}"
    assert names_tests(ast.parse('Path("tests") / "variant_solutions.py"').body[0].value.left)


@pytest.mark.classroom
def test_a_class_with_its_own_variants_graded_and_reported_end_to_end(tmp_path):
    """The whole way: release for a roster, three students hand in (their own answers, a
    classmate's, their own again from an id not on the roster), ``gather-course grade``
    scores each on their own variants, ``gather-course similar`` names the copy."""
    import csv

    target = tmp_path / "class"
    roster = tmp_path / "students.csv"
    roster.write_text("id,first_name,last_name,email\n" + "".join(f"{s},,,\n" for s in ROSTER))
    assert (
        cli(
            "release",
            "--course",
            str(ROOT),
            "--class-seed",
            "12",  # a class where one classmate is two named mistakes from ada
            "--roster",
            str(roster),
            "--to",
            str(target),
        ).returncode
        == 0
    )
    info = json.loads((target / "class.json").read_text())
    table = info["variants"]["basics"]
    released = _released(target, "basics")
    ada, cyd = ROSTER[0], ROSTER[2]

    def apart(s: str) -> int:  # how many named mistakes lie between s's variants and ada's
        return max(len(mistakes_between(q, table[s][q], table[ada][q])) for q in table[ada])

    bob = max(ROSTER[1:], key=apart)  # the classmate whose variant is farthest from ada's
    assert apart(bob) > 1  # a lead that holds up: more than one honest slip apart (seed 12)
    for student, whose in ((ada, ada), (bob, ada), ("zed_37q", cyd)):
        folder = target / "submitted" / student / "basics"
        folder.mkdir(parents=True)
        nbformat.write(
            fill_cells(released, _answers(released, table[whose])), folder / "basics.ipynb"
        )
    done = cli("grade", "basics", "--course", str(target))
    assert done.returncode == 0, done.stderr[-2000:]
    with open(target / "grades-basics.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    points = {gid: p for gid, _qid, p in graded_cells(released)}
    total = sum(points.values())
    assert float(rows[ada]["score"]) == total
    lost = sum(
        points[gid]
        for gid, qid, _ in graded_cells(released)
        if table[ada][qid.partition(":")[0]] != table[bob][qid.partition(":")[0]]
    )
    assert lost > 0 and float(rows[bob]["score"]) == total - lost
    assert rows["zed_37q"]["status"] == "NOT GRADED"
    assert "not on the class roster" in done.stdout
    # bob's feedback (he handed in ada's answers) tells him what is wrong, never how to write
    # his own variant's answer: no line of a variant's answer that he did not write himself
    # (an error's line quotes his own code) is in what grading wrote
    autograded = nbformat.read(target / "autograded" / bob / "basics" / "basics.ipynb", 4)
    said = [str(out) for cell in autograded.cells for out in cell.get("outputs", [])]
    assert any("❌" in text for text in said), said  # his wrong answers are judged there
    feedback = squeeze("\n".join(said)).replace("`", "")
    his = squeeze("\n".join(cell.source for cell in autograded.cells))
    checked = 0
    for qid, params, line, code in answer_lines():
        if qid.startswith("basics.") and code not in his:
            assert code not in feedback, (qid, params, line)
            checked += 1
    assert checked > 0  # (basics has few variant answer lines: six beyond what bob wrote)
    report = cli("similar", "basics", "--course", str(target)).stdout
    assert f"{bob}'s answer fails their own variant" in report and ada in report, report


@CLASS
def test_a_class_release_made_again_is_byte_identical(klass, tmp_path):
    target, info = klass
    again = tmp_path / "again"
    release_class(course_root(ROOT), SEED, again, ROSTER, execute=False)
    assert _digest(again / "exercises") == _digest(target / "exercises")
    assert json.loads((again / "class.json").read_text()) == info


def test_a_class_release_has_no_practice_section_and_the_public_one_does(tmp_path):
    """The self-paced edition's "practise more" section (it offers `.solution()`) is left out
    of a class's notebooks, in both editions; the public release keeps it."""
    from gather_course.grading._submission import practice_cell

    for course in (ROOT, ROOT / "zh"):
        release_class(course_root(course), 3, tmp_path / course.name, ["ann_1"], execute=False)
        for name in assignments(course):
            public = nbformat.read(course / "exercises" / name / f"{name}.ipynb", 4)
            released = _released(tmp_path / course.name, name)
            assert any(practice_cell(c) for c in public.cells), name
            assert not any(practice_cell(c) for c in released.cells), name
            text = "\n".join(c.source for c in released.cells if c.cell_type == "markdown")
            assert ".solution()" not in text and "## Practise more" not in text, name
            assert "加练（不计分）" not in text, name
            last = released.cells[-1]  # the course's own last cell: before you submit
            assert last.metadata.get("nbgrader", {}).get("grade_id") == "outro", name
