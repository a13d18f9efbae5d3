"""``gather-course tasks STUDENT``: an instructor sees a student's own tasks, as the class
release stored them and as the student's notebook shows them (issue 48)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import torch

from gather_course import exercise
from gather_course._i18n import catalog
from gather_course.course._course import course_root
from gather_course.grading._classes import release_class
from tests.helpers import ROOT, cli

SEED = 2026
ROSTER = ["ada_37q", "bob_37q", "cyd_37q"]  # ids seen nowhere else


def _release(tmp_path_factory, course: Path, name: str) -> tuple[Path, dict]:
    target = tmp_path_factory.mktemp(name) / "course"
    return target, release_class(course_root(course), SEED, target, ROSTER, execute=False)


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    return _release(tmp_path_factory, ROOT, "tasks-en")


@pytest.fixture(scope="module")
def zh_klass(tmp_path_factory):
    return _release(tmp_path_factory, ROOT / "zh", "tasks-zh")


def _blocks(out: str) -> dict[str, list[str]]:
    """The lines the listing gives each question, by qid (each block starts ``  QID: ...``)."""
    found: dict[str, list[str]] = {}
    qid = None
    for line in out.splitlines():
        head = re.match(r"  (\w+\.\w+): variant ", line)
        if head:
            qid = head.group(1)
            found[qid] = [line]
        elif qid and line.startswith("    "):
            found[qid].append(line)
        else:
            qid = None
    return found


def _first_case(qid: str, variant: str) -> tuple[str, list[str]]:
    """The first visible case's label and its tensors, worked out here as the referee
    builds them."""
    q = exercise(qid, variant)
    case = q.build(torch.Generator().manual_seed(0), q.sizes[0])
    return case.label, [
        f"{name}: {str(v.dtype).removeprefix('torch.')} {list(v.shape)}"
        for name, v in case.inputs.items()
        if isinstance(v, torch.Tensor)
    ]


def _check_listing(out: str, stored: dict[str, dict[str, str]], lang: str) -> None:
    """Every stored question of ``stored`` ({assignment: {qid: variant}}) is in ``out``, with
    its variant, title, signature, task in ``lang`` and first case; and no other one."""
    tr = catalog(lang).gettext
    blocks = _blocks(out)
    assert set(blocks) == {qid for own in stored.values() for qid in own}
    for own in stored.values():
        for qid, variant in own.items():
            q = exercise(qid, variant)
            lines = blocks[qid]
            assert lines[0] == f"  {qid}: variant {variant} " + (
                "(no variants: every student's)" if variant == "public" else "(drawn for them)"
            )
            assert f"    title: {tr(q.title)}" in lines
            assert f"    def {q.signature}" in lines
            assert f"    task: {q.task_text(tr)}" in lines
            first = next(line for line in lines if line.startswith("    first case ("))
            label, tensors = _first_case(qid, variant)
            assert first.startswith(f"    first case ({label}): ") and tensors
            assert all(tensor in first for tensor in tensors), (first, tensors)


@pytest.mark.parametrize("student", ["ada_37q", "bob_37q"])
def test_each_question_with_the_stored_variant_and_its_task_as_the_student_sees_it(klass, student):
    target, info = klass
    done = cli("tasks", student, "--course", str(target))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    stored = {a: table[student] for a, table in info["variants"].items()}
    _check_listing(done.stdout, stored, "en")
    assert all(f"\n{a} (English edition)\n" in done.stdout for a in stored)
    others = {a: table["cyd_37q"] for a, table in info["variants"].items()}
    differ = [
        (qid, others[a][qid])
        for a in stored
        for qid in stored[a]
        if stored[a][qid] != others[a][qid]
    ]
    assert differ, "the seed gives two students the same variants: the test proves nothing"
    for qid, variant in differ:  # a classmate's variant of that question is not shown
        assert exercise(qid, variant).task_text(catalog("en").gettext) not in done.stdout


def test_one_assignment_and_the_class_folder_as_the_working_directory(klass):
    target, info = klass
    done = cli("tasks", "cyd_37q", "mae", cwd=target)  # --course: . by default
    assert done.returncode == 0, done.stderr
    _check_listing(done.stdout, {"mae": info["variants"]["mae"]["cyd_37q"]}, "en")
    assert "\nbasics (" not in done.stdout and "basics." not in done.stdout


def test_the_stored_variant_is_shown_whatever_a_new_draw_would_give(klass, tmp_path):
    target, info = klass
    stored = info["variants"]["basics"]["ada_37q"]["basics.pick_per_row"]
    names = [
        exercise("basics.pick_per_row", n).variant_name for n in ("counting=one", "axis=columns")
    ]
    other = next(name for name in names if name != stored)  # not what the release drew
    changed = json.loads((target / "class.json").read_text())
    changed["variants"]["basics"]["ada_37q"]["basics.pick_per_row"] = other
    (tmp_path / "class.json").write_text(json.dumps(changed))
    done = cli("tasks", "ada_37q", "basics", "--course", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert f"  basics.pick_per_row: variant {other} (drawn for them)" in done.stdout
    task = exercise("basics.pick_per_row", other).task_text(catalog("en").gettext)
    assert f"    task: {task}" in done.stdout
    assert exercise("basics.pick_per_row", stored).task_text(catalog("en").gettext) not in (
        done.stdout
    )


def test_a_chinese_class_shows_the_tasks_in_chinese(zh_klass):
    target, info = zh_klass
    done = cli("tasks", "bob_37q", "--course", str(target))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    stored = {a: table["bob_37q"] for a, table in info["variants"].items()}
    _check_listing(done.stdout, stored, "zh")
    assert "\nnlp (Chinese edition)\n" in done.stdout
    own = next((qid, v) for own in stored.values() for qid, v in own.items() if v != "public")
    english = exercise(*own).task_text(catalog("en").gettext)
    assert exercise(*own).task_text(catalog("zh").gettext) != english
    assert english not in done.stdout


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["tasks", "ada_37q", "--course", "{empty}"],
            ["not a class release: expected ", "class.json", "--class-seed"],
        ),
        (
            ["tasks", "ada_37", "--course", "{class}"],
            ["'ada_37' is not on the class's roster (3 students", "did you mean 'ada_37q'"],
        ),
        (
            ["tasks", "zoe_99x", "--course", "{class}"],
            ["'zoe_99x' is not on the class's roster (3 students"],
        ),
        (
            ["tasks", "ada_37q", "basix", "--course", "{class}"],
            [
                "unknown assignment 'basix'; this class has: basics, friends, mae, nlp, topk, vision."
            ],
        ),
    ],
)
def test_bad_input_gets_one_line_exit_2_and_nothing_is_written(klass, tmp_path, args, says):
    target, _info = klass
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "solutions").mkdir()  # a course, but no class release
    before = _digest(target), _digest(empty), target.stat().st_mode
    done = cli(*(a.format(empty=empty, **{"class": target}) for a in args))
    assert done.returncode == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("gather-course: ")
    for words in says:
        assert words in done.stderr, done.stderr
    if "did you mean" not in says[-1]:
        assert "did you mean" not in done.stderr
    assert (_digest(target), _digest(empty), target.stat().st_mode) == before
    shutil.rmtree(empty)
