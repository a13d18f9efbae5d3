"""Misconceptions, named: a wrong answer's feedback and the class report say which known
mistake its output matches (issue 50), for the bank's typical wrong answers and, in every
variant, for the answer of the variant one knob away (the honest mistakes: counting from 0
or 1, rows or columns, another layout...)."""

from __future__ import annotations

import csv
import re

import pytest
import torch

from gather_course import Tier, exercise, exercise_ids
from gather_course.copies._crossed import cross_for, leads, mistakes_between
from gather_course.questions import _misconceptions as m
from tests.answers import RIGHT, WRONG
from tests.helpers import variant_solutions

# The bank's typical wrong answers that match a named mistake; every other one is "other".
NAMED = {
    "pick_dim0": m.OTHER_AXIS,
    "labels_no_squeeze": m.SIZE_ONE_DIM,
    "labels_dim_minus_2": m.OTHER_AXIS,
    "labels_no_unsqueeze": m.NOT_UNSQUEEZED,
    "tokens_softmax_not_log": m.LOG_OR_PROB,
    "nll_gathers_padding": m.NEGATIVE,
    "nll_per_position": m.OTHER_VARIANT,
    "pixels_advanced_no_permute": m.OTHER_VARIANT,
    "patches_no_expand": m.NOT_EXPANDED,
    "patches_lowest": m.OTHER_VARIANT,
    "masking_keeps_largest": m.OTHER_VARIANT,
}
WITH_KNOBS = [q for q in exercise_ids() if exercise(q).family]
# One knob away, the answer gives a shape the sibling's loop spec cannot reproduce on these
# inputs (a permuted input read in the public layout): "other", with its shape.
UNNAMED_KNOBS = {("vision.gather_pixels", "channels"), ("vision.select_heads", "layout")}


def _template(result) -> str | None:
    return result.diagnosis.template if result.diagnosis else None


@pytest.mark.parametrize("qid", sorted(WRONG))
def test_each_typical_wrong_answer_is_named_or_other(qid):
    for fn, _tier in WRONG[qid]:
        result = exercise(qid).check(fn)
        want = NAMED.get(fn.__name__)
        if want:
            assert _template(result) == want, (fn.__name__, str(result))
            assert ("likely mistake", result.diagnosis.text()) in result.details
        else:
            assert not m.is_misconception(_template(result) or ""), (fn.__name__, str(result))
    for fn in RIGHT.get(qid, []):
        assert exercise(qid).check(fn).diagnosis is None


@pytest.mark.parametrize("qid", WITH_KNOBS)
def test_in_every_variant_the_answer_one_knob_away_is_that_knobs_mistake(qid):
    """The answer of the variant one knob away is named by that knob (off by one, the wrong
    end, the other axis or layout...) wherever it gives wrong values, a wrong shape or a
    wrong dtype; the public answer, several knobs away, by one of them or as itself."""
    family, named = exercise(qid).family, 0
    for mine in family.every():
        q = exercise(qid, family.name(mine))
        for theirs in family.every():
            changed = m.variant_mistakes(family, mine, theirs)
            if len(changed) != 1 and (theirs != family.public or not changed):
                continue
            result = q.check(variant_solutions.solve(qid, theirs))
            if result.tier not in (Tier.WRONG_VALUES, Tier.WRONG_SHAPE, Tier.WRONG_DTYPE):
                continue
            got = _template(result)
            knob = next(k for k in mine if mine[k] != theirs[k])
            if len(changed) == 1 and (qid, knob) not in UNNAMED_KNOBS:
                assert got == changed[0], (q.variant_name, family.name(theirs), str(result))
                named += 1
            elif len(changed) > 1:
                assert got in (m.PUBLIC_ANSWER, *changed, None) or not m.is_misconception(got)
    assert named, qid  # every question with knobs has some honest mistakes named


def test_an_off_by_one_is_named_whether_it_raises_or_gives_wrong_values():
    q = exercise("basics.pick_per_row")
    wrapped = q.check(lambda x, cols: x[torch.arange(len(x))[:, None], cols - 1])
    raised = q.check(lambda x, cols: x.gather(1, cols + 1))
    assert wrapped.tier == Tier.WRONG_VALUES and _template(wrapped) == m.OFF_BY_ONE
    assert raised.tier == Tier.EXCEPTION and _template(raised) == m.OFF_BY_ONE
    one = exercise("basics.pick_per_row", "counting=one")
    assert _template(one.check(lambda x, cols: x.gather(1, cols))) == m.OFF_BY_ONE
    right_elsewhere = q.check(lambda x, cols: x.gather(1, cols) * 2)
    assert right_elsewhere.diagnosis.template == "wrong values"  # no mistake it matches


def test_a_loops_partial_result_is_named():
    def first_row_only(x, cols):
        out = torch.zeros(cols.shape, dtype=x.dtype)
        for r in range(len(x)):
            out[r] = x[r, cols[r]]
            return out  # returns inside the loop

    result = exercise("basics.pick_per_row").check(first_row_only)
    assert _template(result) == m.PARTIAL


def test_the_numbers_of_a_refused_gather_are_read_as_hostile():
    q = exercise("basics.pick_per_row")
    good = ["call", "message", "fix", "range", "2 1 5 1 3 5"]
    assert m.from_error(q, good).template == m.OFF_BY_ONE
    for bad in (good[:4], [*good[:4], "1 2 x"], [*good[:4], "9" * 40], [*good[:4], "1 2"]):
        assert m.from_error(q, bad) is None


def test_copy_leads_list_no_honest_mistake_and_find_every_copier():
    """A class of 40 on basics.pick_per_row: honest students hand in their own variant's
    answer with one common mistake (the answer one knob away: counting from 0 or 1, rows or
    columns), copiers a classmate's answer. Judged as the copy report does, no honest
    student is a lead; every copier whose classmate's variant is more than one mistake away
    is one, and the others are set aside with the mistake named."""
    qid = "basics.pick_per_row"
    q, family = exercise(qid), exercise(qid).family
    table = {f"s{i}": {qid: q.pick_variant(50, f"s{i}")} for i in range(40)}
    answers, copiers = {}, {}
    for i, (student, mine) in enumerate(sorted(table.items())):
        own = family.parse(qid, mine[qid])
        if i % 4 == 0:  # a copier: the answer of the next student with another variant
            source = next(s for s, v in sorted(table.items()) if v[qid] != mine[qid])
            copiers[student] = table[source][qid]
            answers[student] = variant_solutions.solve(qid, family.parse(qid, table[source][qid]))
        else:  # honest, one slip: the answer of a variant one knob away
            slip = next(p for p in family.every() if len(m.variant_mistakes(family, own, p)) == 1)
            answers[student] = variant_solutions.solve(qid, slip)
    found = []
    for student, fn in answers.items():
        if exercise(qid, table[student][qid]).check(fn).passed:
            continue
        found += cross_for(qid, student, table, lambda v, fn=fn: exercise(qid, v).check(fn).passed)
    kept, set_aside = leads(found)
    assert {c.student for c in kept} <= set(copiers)  # no honest student listed
    far = {s for s, v in copiers.items() if len(mistakes_between(qid, table[s][qid], v)) > 1}
    assert far and {c.student for c in kept} == far  # every copier far from the source found
    honest = {c.student for c in set_aside} - set(copiers)
    assert honest and {c.student for c in set_aside} <= set(answers) - far  # one slip away
    assert all(len(c.mistakes) == 1 for c in set_aside)


# -- item 4: every fix shown is true for the variant ------------------------------------------
_MOD = re.compile(r"use index % (\d+)")
_DIM = re.compile(r"did you mean dim=(-?\d+)|use dim=(-?\d+)")


def _gather_args(code: str) -> tuple[int, int, int]:
    """Where the first ``.gather(`` call's dim argument starts, its index argument starts
    and the call ends, in ``code``."""
    start = code.index(".gather(") + len(".gather(")
    depth, comma = 0, None
    for i in range(start, len(code)):
        ch = code[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return start, comma, i
            depth -= 1
        elif ch == "," and depth == 0 and comma is None:
            comma = i
    raise ValueError(code)


def applied(code: str, fix: str) -> str | None:
    """The answer's code with a fix that can be applied mechanically (``index % n``,
    "subtract 1", "dim=j": the gather's dim, and its index's unsqueeze and squeeze there),
    or None when the fix is words only."""
    start, comma, end = _gather_args(code)
    dim, index = code[start:comma], code[comma + 1 : end].strip()
    if found := _MOD.search(fix):
        index = f"({index}) % {found.group(1)}"
    elif "subtract 1" in fix:
        index = f"({index}) - 1"
    elif found := _DIM.search(fix):  # the dim, where the gather and its index name it
        old, dim = dim.strip(), found.group(1) or found.group(2)
        index = re.sub(rf"\.(un)?squeeze\({old}\)", rf".\1squeeze({dim})", index)
        tail = re.sub(rf"^\)\.squeeze\({old}\)", f").squeeze({dim})", code[end:])
        return code[:start] + f"{dim}, {index}" + tail
    else:
        return None
    return code[:start] + f"{dim}, {index}" + code[end:]


def _raising_slips():
    """(qid, variant, the answer one knob away, its feedback) where that answer raises in
    gather: the variant's typical wrong answers that get a fix."""
    for qid in WITH_KNOBS:
        family = exercise(qid).family
        for mine in family.every():
            q = exercise(qid, family.name(mine))
            for theirs in family.every():
                if len(m.variant_mistakes(family, mine, theirs)) == 1:
                    code = variant_solutions.solution_code(qid, theirs)
                    result = q.check(variant_solutions.solve(qid, theirs))
                    if dict(result.details).get("fix"):
                        yield q, code, result


def _solve(code: str, name: str):
    namespace: dict = {}
    exec(variant_solutions.IMPORTS + code, namespace)  # noqa: S102 - the bank's own answers
    return namespace[name]


def test_every_fix_shown_on_a_variants_typical_wrong_answer_makes_it_right():
    """A fix that says what to write (``index % n``, subtract 1, dim=j) makes the answer
    right when applied; the others are the variant's own words (how its index counts, where
    its layout puts the dim), which no other variant gets."""
    shown, words = 0, 0
    for q, code, result in _raising_slips():
        fix = dict(result.details)["fix"]
        fixed = applied(code, fix)
        if fixed is None:
            words_only = ("Gather takes positions", "Find the dim", "Keep every value below")
            assert fix.startswith(words_only), (q.variant_name, fix)
            note = next((n for n in q.shown.notes if "counts" in n), "`{idx}` counts from 0")
            if fix.startswith("Gather takes"):
                assert note.format(**q.shown.values()).rstrip(".") in fix, (q.variant_name, fix)
            words += 1
            continue
        assert q.check(_solve(fixed, q.name)).passed, (q.variant_name, code, fix, fixed)
        shown += 1
    assert shown >= 4 and words > 50  # (the variant's words where "dim=j" or "% n" misled)


def test_the_fix_applier_applies_what_diagnose_says():
    code = "def f(x, cols):\n    return x.gather(1, (cols - 1).unsqueeze(1)).squeeze(1)\n"
    assert "x.gather(1, ((cols - 1).unsqueeze(1)) % 5)" in applied(code, "use index % 5 if")
    moved = applied(code, "did you mean dim=0 (or dim=-2)?")
    assert "x.gather(0, (cols - 1).unsqueeze(0)).squeeze(0)" in moved
    assert "x.gather(1, ((cols - 1).unsqueeze(1)) - 1)" in applied(code, "so subtract 1.")
    assert applied(code, "Gather takes positions from 0 to 4") is None


def test_the_grades_csv_has_each_questions_tier_and_misconception(tmp_path):
    from gather_course.grading._grade import StudentGrade, _write_csv
    from gather_course.grading._regrade import _points

    verdicts = {
        "test_a": {"passed": False, "tier": "raised an exception", "diagnosis": ["off by one", {}]},
        "test_b": {"passed": False, "tier": "wrong values", "diagnosis": ["wrong values", {}]},
    }
    other = {"test_a": {"passed": True, "tier": "passed", "diagnosis": None}}
    rows = [
        StudentGrade("ann", True, 0.0, 5.0, {"test_a": 0.0, "test_b": 0.0}, verdicts=verdicts),
        StudentGrade("ben", True, 2.0, 5.0, {"test_a": 2.0, "test_b": 0.0}, verdicts=other),
        StudentGrade("cat", False, problem="not a notebook"),
    ]
    path = tmp_path / "grades-x.csv"
    _write_csv(path, rows)
    with open(path, newline="") as f:
        got = {r["student"]: r for r in csv.DictReader(f)}
    assert got["ann"]["test_a:tier"] == "raised an exception"
    assert got["ann"]["test_a:misconception"] == "off by one"
    assert (got["ann"]["test_b:tier"], got["ann"]["test_b:misconception"]) == ("wrong values", "")
    assert got["ben"]["test_a:tier"] == "passed" and got["ben"]["test_b:tier"] == ""
    assert got["cat"]["test_a:tier"] == "" and got["cat"]["problem"] == "not a notebook"
    assert _points(path)["ann"] == {"total": 0.0, "test_a": 0.0, "test_b": 0.0}  # regrade reads it
