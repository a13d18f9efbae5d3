"""Class variants: each changes the answer and keeps the lesson; the public solution fails it."""

from __future__ import annotations

import pytest

from gather_course import GatherCourseError, exercise, exercise_ids
from gather_course.questions._question import CLASS_ENV
from tests.answers import RIGHT
from tests.helpers import solution_fn

WITH_VARIANTS = [q for q in exercise_ids() if exercise(q).variants]
PAIRS = [(q, v.name) for q in WITH_VARIANTS for v in exercise(q).variants]


def test_most_questions_have_a_variant_and_the_others_say_why():
    assert len(WITH_VARIANTS) >= 10
    for qid in set(exercise_ids()) - set(WITH_VARIANTS):
        assert exercise(qid).no_variant_why, qid


@pytest.mark.parametrize("qid, name", PAIRS)
def test_every_edit_of_the_text_applies(qid, name):
    public = exercise(qid)
    variant = next(v for v in public.variants if v.name == name)
    texts = [public.title, public.task, *public.hints, public.solution_code]
    for old, _new in variant.edits:
        assert any(old in text for text in texts), old
    q = exercise(qid, name)
    assert q.task != public.task and q.solution_code != public.solution_code


@pytest.mark.parametrize("qid, name", PAIRS)
@pytest.mark.parametrize("seed, large", [(0, False), (7, True)])
def test_the_variant_solution_passes_and_the_public_one_fails(qid, name, seed, large):
    q, public = exercise(qid, name), exercise(qid)
    assert q.check(solution_fn(q), seed=seed, large=large).passed
    assert not q.check(solution_fn(public), seed=seed, large=large).passed
    assert not public.check(solution_fn(q), seed=seed, large=large).passed
    for fn in RIGHT.get(qid, []):  # other public answers fail the variant too
        assert not q.check(fn, seed=seed).passed, fn.__name__


def test_a_class_seed_picks_a_non_public_variant_of_each_and_seeds_differ():
    for qid in WITH_VARIANTS:
        assert exercise(qid).pick_variant(1234) != "public"
    assert all(
        exercise(q).pick_variant(5) == "public" for q in exercise_ids() if q not in WITH_VARIANTS
    )
    several = [q for q in WITH_VARIANTS if len(exercise(q).variants) > 1]
    assert len(several) >= 3
    for qid in several:  # different classes get different variants
        picks = {exercise(qid).pick_variant(seed) for seed in range(40)}
        assert picks == {v.name for v in exercise(qid).variants}, qid


def test_unknown_variants_are_clear_errors():
    with pytest.raises(GatherCourseError, match="has no variant 'nope'; it has: public, columns"):
        exercise("basics.pick_per_row", "nope")
    with pytest.raises(GatherCourseError, match="public only"):
        exercise("basics.gather_loop", "columns")


def test_in_a_class_hints_and_solutions_refuse(monkeypatch):
    q = exercise("basics.pick_per_row")
    assert "gather" in q.solution() and q.hint(1)
    monkeypatch.setenv(CLASS_ENV, "1")
    for call in (q.solution, q.hint, exercise("nlp.masked_nll", "vocab_first").solution):
        with pytest.raises(GatherCourseError, match="turned off in this class"):
            call()
    assert q.check(solution_fn(q)).passed  # checking still works
