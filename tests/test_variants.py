"""Class variants from knobs: every one solvable, none solved by another's answer, no answer
in the package; the public solution fails each of them."""

from __future__ import annotations

from collections import Counter

import nbformat
import pytest

from gather_course import GatherCourseError, exercise, exercise_ids
from gather_course.questions._knobs import Family, Knob
from gather_course.questions._question import CLASS_ENV
from tests.answers import RIGHT
from tests.helpers import ROOT, solution_fn, variant_solutions

solution_code, solve = variant_solutions.solution_code, variant_solutions.solve

WITH_KNOBS = [q for q in exercise_ids() if exercise(q).family]
ALL = [(q, exercise(q).family.name(p)) for q in WITH_KNOBS for p in exercise(q).family.every()]


def test_questions_with_knobs_make_at_least_8_variants_and_the_others_say_why():
    assert len(WITH_KNOBS) >= 11
    for qid in WITH_KNOBS:  # eight or more, or a reason for fewer
        family = exercise(qid).family
        assert family.count >= 8 or (family.few and family.count >= 6), qid
    for qid in set(exercise_ids()) - set(WITH_KNOBS):
        assert exercise(qid).no_variant_why, qid


@pytest.mark.parametrize("qid", WITH_KNOBS)
def test_the_public_task_is_the_template_with_the_public_choices_as_the_notebooks_show_it(qid):
    q = exercise(qid)
    assert (
        q.task == q.shown.text(lambda text: text)
        and q.shown.template in q.family.build(q.family.public).template
    )
    assert q.variant("public") is q and q.params == q.family.public
    assignment = qid.split(".")[0] if qid != "nlp.masked_nll" else "friends"
    nb = nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4)
    assert any(q.task in c.source for c in nb.cells if c.cell_type == "markdown"), qid


@pytest.mark.parametrize("qid", WITH_KNOBS)
def test_every_variant_is_solved_by_its_answer_and_by_no_other_variants(qid):
    """The published answers (solutions/variant_solutions.py): each passes its own variant and
    fails every other, so two students whose choices differ can't share an answer."""
    family = exercise(qid).family
    answers = {family.name(p): solve(qid, p) for p in family.every()}
    for name, fn in answers.items():
        assert exercise(qid, name).check(fn).passed, (
            name,
            solution_code(qid, family.parse(qid, name)),
        )
    for name in answers:
        q = exercise(qid, name)
        for other, fn in answers.items():
            if other != name:
                assert not q.check(fn).passed, f"{other}'s answer passes {name}"


@pytest.mark.parametrize("qid", WITH_KNOBS)
def test_large_batteries_and_other_seeds_pass_too(qid):
    family = exercise(qid).family
    for p in family.every()[1:]:
        q = exercise(qid, family.name(p))
        assert q.check(solve(qid, p), seed=7, large=True).passed, q.variant_name
        for fn in RIGHT.get(qid, []):  # the public answers fail every variant
            assert not q.check(fn, seed=7).passed, (fn.__name__, q.variant_name)


@pytest.mark.parametrize("qid", WITH_KNOBS)
def test_each_variant_tells_what_changed_in_its_task(qid):
    """Two variants never share a task text: what differs in the answer is said in words."""
    family = exercise(qid).family
    texts = {exercise(qid, family.name(p)).task for p in family.every()}
    assert len(texts) == family.count


def test_no_variant_holds_a_solution_and_each_has_hints_made_from_its_knobs(monkeypatch):
    """A variant's hints name its own choices (each changed knob, its choice and the public
    one) and, where the task has one, its formula; variants that differ get different hints;
    a variant shows no solution, and in a class no hint either."""
    for qid in WITH_KNOBS:
        family, seen = exercise(qid).family, set()
        for params in family.every()[1:]:
            q = exercise(qid, family.name(params))
            assert not q.solution_code and len(q.hints) == 3
            for knob, choice in params.items():
                if choice != family.knobs[knob][0]:
                    change = f"`{knob}`: `{choice}` instead of `{family.knobs[knob][0]}`"
                    assert change in q.hints[0], (qid, params)
            if "formula" in q.shown.slots:
                assert f"`{q.shown.slots['formula']}`" in q.hints[1]
            assert q.hint(2).endswith(q.hints[1])
            with pytest.raises(GatherCourseError, match="a solution for the public question"):
                q.solution()
            seen.add(q.hints)
        assert len(seen) == family.count - 1, qid  # no two variants share their hints
    variant = exercise("basics.pick_per_row", "counting=one")
    assert "`.hint()` gives hints made for it" in variant._repr_markdown_()
    monkeypatch.setenv(CLASS_ENV, "1")
    with pytest.raises(GatherCourseError, match="Hints of graded questions are turned off"):
        variant.hint()
    shown = variant._repr_markdown_()  # the task says so, rather than offer what is refused
    assert "Hints and solutions are off in this class." in shown and ".hint()" not in shown
    wrong = exercise("basics.pick_per_row").check(lambda x, cols: x[:, :1])
    assert not wrong.passed and ".hint()" not in str(wrong) + wrong._repr_markdown_()
    monkeypatch.delenv(CLASS_ENV)
    assert "Stuck? exercise('basics.pick_per_row').hint()" in str(
        exercise("basics.pick_per_row").check(lambda x, cols: x[:, :1])
    )


def test_a_seed_draws_non_public_variants_and_seeds_and_students_differ():
    for qid in WITH_KNOBS:
        q = exercise(qid)
        assert q.pick_variant(1234) != "public"
        picks = {q.pick_variant(seed) for seed in range(200)}
        assert len(picks) == q.family.count - 1, qid  # every other variant is drawn
        students = {q.pick_variant(1234, f"s{i}") for i in range(40)}
        assert len(students) >= 4, qid
    assert all(
        exercise(q).pick_variant(5) == "public" for q in exercise_ids() if q not in WITH_KNOBS
    )


def test_draws_are_fair_enough_and_every_other_variant_is_drawn():
    """Over 700 students, each question's other variants are all drawn, none more than
    about twice as often as the rarest (knob by knob, each choice is equally likely)."""
    for qid in WITH_KNOBS:
        q = exercise(qid)
        counts = Counter(q.pick_variant(99, f"s{i}") for i in range(700))
        assert "public" not in counts and len(counts) == q.family.count - 1, qid
        assert max(counts.values()) <= 2.6 * min(counts.values()), (qid, counts)


def _family(*sizes: int) -> Family:
    return Family(
        {f"k{n}": Knob(tuple(f"c{i}" for i in range(size))) for n, size in enumerate(sizes)}, None
    )


@pytest.mark.parametrize("sizes", [(2, 4), (3, 2, 2), (2,), (5, 3)])
def test_a_choice_added_to_a_knob_re_deals_about_one_student_in_n_plus_one(sizes):
    """A class released, then the bank gains a choice: a new release keeps each student's
    draw unless the new choice takes it (the old draw, modulo the number of variants,
    re-dealt about nine students in ten)."""
    before, after = _family(*sizes), _family(sizes[0] + 1, *sizes[1:])
    keys = [f"7:s{i}:q" for i in range(3000)]
    moved = sum(before.draw(k) != after.draw(k) for k in keys) / len(keys)
    # the least any fair draw re-deals: the new variants' share of the others
    expected = 1 - (before.count - 1) / (after.count - 1)
    assert abs(moved - expected) < 0.06, (moved, expected)
    modulo = sum(before.draw_modulo(k) != after.draw_modulo(k) for k in keys) / len(keys)
    if len(sizes) > 1:  # (one knob: any fair draw re-deals as many)
        assert modulo > moved + 0.2, (modulo, moved)  # the draw it replaces re-dealt most


def test_a_knobs_choices_reordered_leave_every_draw_as_it_was():
    first = Family({"a": Knob(("p", "x", "y", "z")), "b": Knob(("q", "u", "v"))}, None)
    again = Family({"b": Knob(("q", "v", "u")), "a": Knob(("p", "z", "x", "y"))}, None)
    for i in range(500):
        assert first.draw(f"k{i}") == again.draw(f"k{i}")
        assert first.draw(f"k{i}") != first.public


def test_variant_names_round_trip_and_unknown_ones_are_clear_errors():
    q = exercise("basics.pick_per_row")
    v = exercise("basics.pick_per_row", "counting=one,axis=columns")
    assert v.variant_name == "axis=columns,counting=one" and v.signature == "pick_per_row(x, rows)"
    assert v.params == {"axis": "columns", "counting": "one"}
    for bad in ("nope", "axis=diagonal", "axis=columns,size=3"):
        with pytest.raises(GatherCourseError, match="axis = rows \\| columns; counting = zero"):
            exercise("basics.pick_per_row", bad)
    with pytest.raises(GatherCourseError, match="public only"):
        exercise("basics.gather_loop", "axis=columns")
    assert q.variant("axis=rows,counting=zero") is q


def test_in_a_class_hints_and_solutions_refuse(monkeypatch):
    q = exercise("basics.pick_per_row")
    assert "gather" in q.solution() and q.hint(1)
    monkeypatch.setenv(CLASS_ENV, "1")
    for call in (q.solution, q.hint):
        with pytest.raises(GatherCourseError, match="turned off in this class"):
            call()
    assert q.check(solution_fn(q)).passed  # checking still works


def test_the_instructor_guide_lists_every_questions_knobs_as_they_are():
    guide = (ROOT / "docs" / "instructor-guide.md").read_text()
    total = 0
    for qid in WITH_KNOBS:
        family = exercise(qid).family
        knobs = "; ".join(f"{k}: {' / '.join(v)}" for k, v in family.knobs.items())
        assert f"| `{qid}` | {family.count} | {knobs} |" in guide, qid
        total += family.count
    assert f"each of the {total} variants" in guide
