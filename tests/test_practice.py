"""Practice until it sticks (issue 49): a fresh variant of any question on demand, its check,
hints and solution, never a class student's graded variant, and mastery kept in the
learner's working copy."""

from __future__ import annotations

import json
import re

import pytest

from gather_course import GatherCourseError, exercise, exercise_ids
from gather_course._i18n import choosing
from gather_course.questions import _classroom, _mastery, _practice
from gather_course.questions._classroom import class_key, my_class, roster_tag
from gather_course.questions._question import CLASS_ENV
from tests.answers import RIGHT
from tests.helpers import cli, solution_fn, variant_solutions

WITH_KNOBS = [q for q in exercise_ids() if exercise(q).family]
WITHOUT = [q for q in exercise_ids() if not exercise(q).family]
ALL = [(q, exercise(q).family.name(p)) for q in WITH_KNOBS for p in exercise(q).family.every()[1:]]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def fresh_session(tmp_path, monkeypatch):
    """Each test a new session, outside any working copy, no class open."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_practice, "_SEEN", {})
    monkeypatch.setattr(_practice, "_SAID", set())
    monkeypatch.setattr(_mastery, "_SESSION", {})
    monkeypatch.delenv(CLASS_ENV, raising=False)
    yield
    _classroom.OPENED.clear()


@pytest.fixture
def work(tmp_path):
    """A working copy: a folder with the marker."""
    folder = tmp_path / "work"
    (folder / "exercises").mkdir(parents=True)
    (folder / ".gather-course.json").write_text("{}\n")
    return folder


def _answer(q):
    return variant_solutions.solve(q.qid, q.params)


def test_the_record_sits_beside_the_marker_the_working_copy_uses(tmp_path):
    from gather_course.course._workcopy import make_working_copy

    work = make_working_copy(tmp_path / "work").folder
    _mastery.note_check(work, "basics.gather_loop", "public", True, False)
    assert (work / _mastery.RECORD).is_file() and (work / ".gather-course.json").is_file()
    assert not [p for p in work.iterdir() if p.name.endswith(".part")]  # written whole


@pytest.mark.parametrize("qid", WITH_KNOBS)
def test_draws_differ_until_every_variant_is_seen_then_it_says_so_and_starts_over(qid):
    q = exercise(qid)
    n = q.family.count - 1
    drawn = [q.practice() for _ in range(n)]
    names = [p.variant for p in drawn]
    assert "public" not in names and len(set(names)) == n, names
    assert not any(p.notes for p in drawn)
    again = q.practice()
    assert again.variant != "public"
    assert any(f"all {n} practice variants of {qid}" in note for note in again.notes)
    rest = [q.practice() for _ in range(n - 1)]  # started over: each once more, no note
    assert len({again.variant, *(p.variant for p in rest)}) == n
    assert not any(p.notes for p in rest)


@pytest.mark.parametrize("qid", WITHOUT)
def test_a_question_without_variants_gives_fresh_inputs(qid):
    q = exercise(qid)
    seeds = {q.practice().seed for _ in range(5)}
    assert {q.practice().variant for _ in range(3)} == {"public"} and len(seeds) > 1
    fn = solution_fn(q)
    p = q.practice()
    assert p.check(fn).passed
    assert p.solution().count(q.solution_code.strip().splitlines()[0]) == 1


@pytest.mark.parametrize(("qid", "name"), ALL)
def test_every_practice_variant_passes_its_answer_and_fails_the_public_ones(qid, name):
    p = exercise(qid).practice(name)
    assert p.variant == name and p.question.task_text() == exercise(qid, name).task_text()
    assert p.check(_answer(p.question)).passed, name
    for fn in [solution_fn(exercise(qid)), *RIGHT.get(qid, [])]:
        assert not p.check(fn).passed, (fn, name)


def test_a_seed_draws_the_same_practice_and_fresh_draws_differ():
    q = exercise("nlp.label_scores")
    assert q.practice(seed=3).variant == q.practice(seed=3).variant
    assert q.practice(seed=3).seed == q.practice(seed=3).seed
    assert len({q.practice().seed for _ in range(4)}) == 4


@pytest.mark.parametrize("qid", WITH_KNOBS)
def test_hints_climb_in_both_languages_and_the_solution_waits_for_a_try(qid):
    p = exercise(qid).practice()
    hints = [str(p.hint(n)) for n in (1, 2, 3)]
    assert len(set(hints)) == 3 and all(p.variant in h for h in hints)
    with choosing("zh"):
        zh = [str(p.hint(n)) for n in (1, 2, 3)]
        assert all(CJK.search(h) for h in zh), zh
        assert CJK.search(p.question.task_text())
    with pytest.raises(GatherCourseError, match="hints 1 to 3; got 4"):
        p.hint(4)
    with pytest.raises(GatherCourseError, match="Try it first"):
        p.solution()
    p.check(solution_fn(exercise(qid)))  # a try (the public answer: wrong here)
    shown = str(p.solution())
    assert exercise(qid).solution_code.strip() in shown  # the public one, and what changes
    assert str(p.hint(3)).split("): ", 1)[1] in shown


def test_the_practice_shows_its_task_and_how_to_check_it():
    p = exercise("basics.pick_per_row").practice("axis=columns")
    text = p._repr_markdown_()
    assert "`pick_per_row(x, rows)`" in text and "variant `axis=columns`" in text
    assert "`my_pick_per_row(x, rows)`" in text and ".check(my_pick_per_row)" in text
    assert "**Constraints:**" in text and "gives another variant" in text
    with choosing("zh"):
        assert CJK.search(p._repr_markdown_()) and "。 " not in p._repr_markdown_()
    plain = exercise("basics.reverse_index").practice()._repr_markdown_()  # no variants
    assert "gives new inputs: this question has no variants" in plain
    assert "**Constraints:**" not in plain  # (it has none: no empty line for them)
    with pytest.raises(GatherCourseError, match="practice draws one of"):
        exercise("basics.pick_per_row").practice("public")
    with pytest.raises(GatherCourseError, match="no variant 'axis=diagonal'"):
        exercise("basics.pick_per_row").practice("axis=diagonal")


def test_a_failed_check_of_a_public_question_suggests_practice_and_a_variant_does_not():
    q = exercise("basics.pick_per_row")
    wrong = q.check(lambda x, cols: x[:, :1].expand_as(cols).clone())
    assert not wrong.passed and "exercise('basics.pick_per_row').practice()" in wrong.advice
    assert ".practice()" not in q.check(solution_fn(q)).advice  # passed: nothing to suggest
    variant = exercise("basics.pick_per_row", "axis=columns")
    assert ".practice()" not in variant.check(solution_fn(q)).advice
    p = q.practice("axis=columns")
    failed = p.check(solution_fn(q))
    assert ".practice()" not in failed.advice and "`.hint()`" in failed.advice


def _class(student: str, qid: str, monkeypatch):
    """A class opened for ``student`` (env set as the hub sets it); their graded variant."""
    monkeypatch.setenv(CLASS_ENV, "1")
    monkeypatch.setenv("GATHER_COURSE_STUDENT", student)
    key = class_key(7)
    q = exercise(qid)
    names = [q.family.name(p) for p in q.family.every()[1:]]
    graded = q.pick_variant(key, student)
    mine = my_class(
        key,
        roster=f"{roster_tag(key, student)}:{names.index(graded)}",
        variants={qid: " ".join(names)},
    )
    assert mine.exercise(qid).variant_name == graded
    return graded


def test_in_a_class_practice_never_draws_the_graded_variant_and_gives_no_solution(monkeypatch):
    qid = "mae.restore_sequence"
    monkeypatch.setenv(CLASS_ENV, "1")
    with pytest.raises(GatherCourseError, match="setup cell"):  # graded variant unknown
        exercise(qid).practice()
    graded = _class("ada", qid, monkeypatch)
    drawn = {exercise(qid).practice().variant for _ in range(30)}
    assert graded not in drawn and len(drawn) == exercise(qid).family.count - 2
    with pytest.raises(GatherCourseError, match="practice draws one of"):
        exercise(qid).practice(graded)
    p = exercise(qid).practice()
    p.check(solution_fn(exercise(qid)))
    with pytest.raises(GatherCourseError, match="Solutions are off in this class"):
        p.solution()
    assert p.hint(1)  # hints of a variant not graded
    # a question without variants: its own task on fresh inputs, as its graded check has it
    # (a class notebook's "practise more" cell draws it: Run All must not stop there)
    plain = exercise("basics.gather_loop").practice()
    assert plain.variant == "public"
    plain.check(solution_fn(exercise("basics.gather_loop")))
    with pytest.raises(GatherCourseError, match="Solutions are off in this class"):
        plain.solution()


def test_practice_checks_go_into_the_working_copys_record(work, monkeypatch):
    monkeypatch.chdir(work / "exercises")
    q = exercise("basics.pick_per_row")
    first = q.practice()
    assert first.folder == work
    result = first.check(_answer(first.question))
    assert result.passed and "session only" not in result.advice
    record = json.loads((work / _mastery.RECORD).read_text())
    entry = record["questions"]["basics.pick_per_row"]["variants"][first.variant]
    assert entry["tries"] == entry["passes"] == entry["clean"] == 1 and entry["last"]
    assert "return" not in (work / _mastery.RECORD).read_text()  # never an answer's code
    m = _mastery.mastery(record["questions"], q.qid)
    assert not m.mastered and _mastery.weakest(record["questions"]) == "basics.gather_loop"
    _mastery.note_check(work, "basics.gather_loop", "public", False, False)  # tried, failed
    assert _mastery.weakest(_mastery.read_record(work)[0]) == "basics.gather_loop"
    hinted = q.practice()
    hinted.hint(1)
    hinted.check(_answer(hinted.question))  # passed, with a hint: not clean
    questions, _said = _mastery.read_record(work)
    assert _mastery.mastery(questions, q.qid).passed_clean == 1
    second = q.practice()
    assert second.variant not in {first.variant, hinted.variant}
    second.check(_answer(second.question))
    questions, _said = _mastery.read_record(work)
    assert _mastery.mastery(questions, q.qid).mastered
    assert _mastery.weakest({q.qid: questions[q.qid]}) == "basics.gather_loop"
    assert "mastered" in _mastery.mastery_summary(_mastery.mastery(questions, q.qid))


def test_a_new_session_does_not_draw_what_the_record_says_was_tried(work, monkeypatch):
    monkeypatch.chdir(work)
    q = exercise("mae.restore_sequence")
    tried = q.practice()
    tried.check(_answer(tried.question))
    monkeypatch.setattr(_practice, "_SEEN", {})  # a new kernel
    assert tried.variant not in {q.practice().variant for _ in range(4)}


def test_a_corrupt_record_is_named_and_set_aside_never_a_crash(work, monkeypatch):
    monkeypatch.chdir(work)
    (work / _mastery.RECORD).write_text("{not json")
    p = exercise("basics.pick_per_row").practice()
    assert any("kept it as .gather-course-practice.json.corrupt" in n for n in p.notes)
    assert (work / (_mastery.RECORD + ".corrupt")).read_text() == "{not json"
    assert p.check(_answer(p.question)).passed
    (work / _mastery.RECORD).write_text('["a list"]')
    said = _mastery.note_check(work, "basics.pick_per_row", "axis=columns", False, False)
    assert ".corrupt-2" in said and json.loads((work / _mastery.RECORD).read_text())
    (work / _mastery.RECORD).unlink()  # deleting it loses the record only
    assert _mastery.read_record(work) == ({}, "")


def test_outside_a_working_copy_the_record_lasts_the_session_and_says_so_once():
    q = exercise("basics.pick_per_row")
    p = q.practice()
    assert p.folder is None
    said = p.check(_answer(p.question)).advice
    assert "session only" in said
    assert "session only" not in p.check(_answer(p.question)).advice
    questions, _said = _mastery.read_record(None)
    assert _mastery.mastery(questions, q.qid).tries == 2


def test_the_terminal_draws_the_weakest_question_or_the_one_named(work):
    run = cli("practice", "nlp.label_scores", cwd=work)
    assert run.returncode == 0, run.stderr
    assert "Practice nlp.label_scores, variant " in run.stdout
    assert "Write `label_scores(" in run.stdout and "**" not in run.stdout
    assert "p = gather_course.exercise('nlp.label_scores').practice('" in run.stdout
    assert "def my_label_scores(logits, labels):" in run.stdout
    assert "p.check(my_label_scores)" in run.stdout  # the graded label_scores stays as it is
    _mastery.note_check(work, "basics.pick_per_row", "axis=columns", True, False)
    _mastery.note_check(work, "basics.pick_per_row", "counting=one", True, False)
    run = cli("practice", cwd=work)
    assert run.returncode == 0 and "Practice basics.gather_loop, variant public" in run.stdout
    bad = cli("practice", "basics.pick", cwd=work)
    assert bad.returncode != 0 and "Did you mean 'basics.pick_per_row'?" in bad.stderr


def test_progress_shows_practice_and_what_to_practise_next(tmp_path):
    import shutil

    from gather_course.course._workcopy import make_working_copy

    work = make_working_copy(tmp_path / "w").folder
    for other in (work / "exercises").iterdir():  # one assignment keeps it short
        if other.name != "basics":
            shutil.rmtree(other)
    _mastery.note_check(work, "basics.pick_per_row", "axis=columns", True, False)
    _mastery.note_check(work, "basics.pick_per_row", "counting=one", True, False)
    _mastery.note_check(work, "basics.reverse_index", "public", False, False)
    run = cli("progress", str(work))
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "pick_per_row" in out and "practice: mastered (2 variants" in out
    assert "practice: 0 of 2 variants passed without a hint (1 checks" in out
    assert "practice: not yet" in out
    assert "Practise next: gather-course practice basics.reverse_index" in out
