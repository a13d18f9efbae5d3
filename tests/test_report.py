"""The class report: its statistics, its numbers against the class that made them, a variant
passed less often flagged (and a fair class not), and the page in a real browser."""

from __future__ import annotations

import csv
import json
import warnings
from math import comb
from pathlib import Path

import nbformat
import pytest

from gather_course import GatherCourseError, exercise
from gather_course._tier import Tier
from gather_course.cli import main
from gather_course.grading._verdict_log import SUFFIX
from gather_course.report import _stats, write_report
from gather_course.report._numbers import MIN_VARIANT, class_numbers
from tests import test_grading_e2e as e2e
from tests.helpers import website_build

find_browser = website_build().find_browser

PASSED, VALUES, NOT = Tier.PASSED.value, Tier.WRONG_VALUES.value, Tier.NOT_ATTEMPTED.value


# -- the statistics ----------------------------------------------------------------------------


def test_fishers_exact_test_is_the_hypergeometric_tail():
    def tail(passed, n, others_passed, others):  # summed the other way round
        total, wins = n + others, passed + others_passed
        return sum(
            comb(wins, k) * comb(total - wins, n - k) / comb(total, n) for k in range(passed + 1)
        )

    for case in [(0, 6, 30, 30), (3, 8, 20, 40), (8, 8, 10, 40), (1, 5, 1, 10)]:
        assert _stats.fisher_less(*case) == pytest.approx(tail(*case))
    assert _stats.fisher_less(8, 8, 40, 40) == pytest.approx(1.0)  # all pass: no evidence


def test_holm_keeps_the_order_and_never_lowers_a_p_value():
    raw = [0.001, 0.2, 0.01, 0.04]
    adjusted = _stats.holm(raw)
    assert adjusted == [0.004, 0.2, 0.03, 0.08]
    assert all(a >= r for a, r in zip(adjusted, raw))


def test_discrimination_is_high_for_a_question_the_strong_pass_and_none_without_spread():
    item = [1, 1, 1, 0, 0, 0]
    assert _stats.discrimination(item, [9, 8, 8, 2, 1, 0]) > 0.9
    assert _stats.discrimination(item, [0, 1, 2, 8, 8, 9]) < -0.9
    assert _stats.discrimination([1, 1, 1], [3, 2, 1]) is None  # everyone passed


# -- the numbers, from a verdict log written out by hand -----------------------------------------


def _log(path: Path, students: dict[str, dict[str, tuple]], lang: str = "en", problems=None):
    """A verdict log as grading writes it: ``students[name][gid] = (passed, tier, variant)``."""
    questions = [
        {"gid": "test_a", "qid": "topk.select_patches", "points": 2.0, "own": True},
        {"gid": "test_b", "qid": "topk.scatter_back", "points": 3.0, "own": True},
    ]
    lines = [
        {
            "assignment": "topk",
            "lang": lang,
            "started": "2026-11-26T10:00:00",
            "questions": questions,
        }
    ]
    for name, verdicts in students.items():
        lines.append(
            {
                "student": name,
                "problem": "",
                "verdicts": {
                    gid: {
                        "passed": passed,
                        "tier": tier,
                        "diagnosis": None if passed else ["wrong values", {}],
                        "message": f"❌ Incorrect ({gid})" if not passed else "✅ Correct",
                        "variant": variant,
                    }
                    for gid, (passed, tier, variant) in verdicts.items()
                },
            }
        )
    for name, why in (problems or {}).items():
        lines.append({"student": name, "problem": why, "verdicts": {}})
    lines.append({"end": True, "seconds": 12.5})
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return path


def _class(
    unfair: str | None,
    per_variant: int = 8,
    variants=("keep=lowest", "order=position", "layout=NBD", "keep=lowest,order=position"),
):
    """A class of ``per_variant`` students per variant of both questions; each student passes
    both, except: the students of ``unfair`` fail question a; and, to be a fair class with
    noise, every fourth student of each variant fails question b."""
    students = {}
    for v in variants:
        for i in range(per_variant):
            a = (v != unfair, PASSED if v != unfair else VALUES, v)
            b = (i % 4 != 3, PASSED if i % 4 != 3 else VALUES, v)
            students[f"{v}-{i}"] = {"test_a": a, "test_b": b}
    return students


def _numbers(path: Path):
    from gather_course.grading._verdict_log import read_log

    return class_numbers(*read_log(path))


def test_a_variant_its_students_fail_is_flagged_and_only_it(tmp_path):
    found = _numbers(_log(tmp_path / "g.verdicts.jsonl", _class("layout=NBD")))
    assert [(gid, v.name) for gid, v in found.flagged] == [("test_a", "layout=NBD")]
    a, b = found.questions
    assert a.passed == 24 and a.graded == 32 and not any(v.flagged for v in b.variants)
    unfair = next(v for v in a.variants if v.name == "layout=NBD")
    assert unfair.passed == 0 and unfair.students == 8 and unfair.p_value < 0.05


def test_a_fair_class_has_no_flag_and_few_students_are_too_few_to_judge(tmp_path):
    fair = _numbers(_log(tmp_path / "fair.verdicts.jsonl", _class(None)))
    assert fair.flagged == []
    assert all(v.p_value is not None for q in fair.questions for v in q.variants)
    few = _numbers(_log(tmp_path / "few.verdicts.jsonl", _class("layout=NBD", MIN_VARIANT - 1)))
    assert few.flagged == []  # every student of that variant failed, but they are 4
    assert all(v.p_value is None for q in few.questions for v in q.variants)


def _adjusted(groups):
    """Each group against the rest, one-sided Fisher, Holm: written out again, by the book."""
    wins, total = sum(p for p, _n in groups), sum(n for _p, n in groups)
    raw = [
        sum(comb(wins, k) * comb(total - wins, n - k) for k in range(p + 1)) / comb(total, n)
        for p, n in groups
    ]
    out, running = [0.0] * len(raw), 0.0
    for rank, j in enumerate(sorted(range(len(raw)), key=raw.__getitem__)):
        running = max(running, min(1.0, (len(raw) - rank) * raw[j]))
        out[j] = running
    return out


@pytest.mark.parametrize(
    "groups",
    [
        [(0, 5), (8, 10), (8, 10)],
        [(2, 8), (7, 8), (8, 8), (6, 8)],
        [(0, 5)] + [(3, 5), (3, 6)] * 3,  # the class: 0 of 5, siblings near 50%
        [(1, 12), (20, 30)],
        [(5, 5), (0, 10)],
    ],
)
def test_what_the_test_can_flag_is_found_count_by_count(groups):
    """first_unflagged: every count of passes below it is flagged, none from it on (all
    other groups unchanged); checked against every count, by brute force."""
    for i, (_p, n) in enumerate(groups):
        found = _stats.first_unflagged(groups, i, 0.05)
        trials = [[*groups[:i], (k, n), *groups[i + 1 :]] for k in range(n + 1)]
        flagged = [k for k, trial in enumerate(trials) if _adjusted(trial)[i] < 0.05]
        assert flagged == list(range(found)), (groups, i, found, flagged)


def _small_variant_class(per_sibling=(5, 5, 6, 6, 6, 6), failing=5, fail_every=2):
    """The issue's class: six variants of about six students who pass about half the time,
    and one, layout=NBD, whose ``failing`` students all hand in a wrong answer."""
    students = {}
    for j, n in enumerate(per_sibling):
        for i in range(n):
            ok = i % fail_every != fail_every - 1
            students[f"v{j}-{i}"] = {
                "test_a": (ok, PASSED if ok else VALUES, f"k={j}"),
                "test_b": (True, PASSED, f"k={j}"),
            }
    for i in range(failing):
        students[f"nbd-{i}"] = {
            "test_a": (False, VALUES, "layout=NBD"),
            "test_b": (True, PASSED, "layout=NBD"),
        }
    return students


def test_a_small_variant_all_failing_is_shown_with_what_the_test_could_see(tmp_path):
    found = _numbers(_log(tmp_path / "g.verdicts.jsonl", _small_variant_class()))
    a = found.questions[0]
    nbd = next(v for v in a.variants if v.name == "layout=NBD")
    assert found.flagged == [] and nbd.passed == 0 and nbd.far_below
    assert (nbd.others, nbd.others_passed) == (34, 18)  # 5+5+6+6+6+6, 3+3+3+3+3+3
    assert nbd.difference == pytest.approx(-18 / 34)
    # 0 of 5 among 39 of whom 21 failed: the smallest p of seven, so Holm multiplies by 7
    by_hand = 7 * comb(21, 5) / comb(39, 5)
    assert nbd.p_value == pytest.approx(by_hand) and nbd.best_p == pytest.approx(by_hand)
    assert by_hand > 0.05 and nbd.flag_below == 0 and nbd.smallest_gap is None
    assert not any(v.far_below for v in a.variants if v is not nbd)
    # with siblings passing every time, 0 of 5 is flagged, and 2 of 5 would be, not 3
    sure = _numbers(_log(tmp_path / "s.verdicts.jsonl", _small_variant_class(fail_every=99)))
    nbd = next(v for v in sure.questions[0].variants if v.name == "layout=NBD")
    assert nbd.flagged and nbd.flag_below == 3 and nbd.smallest_gap == pytest.approx(-0.6)


def test_the_numbers_count_tiers_scores_and_the_students_not_graded(tmp_path):
    students = {
        "s1": {"test_a": (True, PASSED, "public"), "test_b": (True, PASSED, "public")},
        "s2": {"test_a": (False, VALUES, "public"), "test_b": (True, PASSED, "public")},
        "s3": {"test_a": (False, NOT, "public"), "test_b": (False, NOT, "public")},
    }
    path = _log(tmp_path / "g.verdicts.jsonl", students, problems={"s4": "not a notebook"})
    found = _numbers(path)
    a, b = found.questions
    assert (a.graded, a.attempted, a.passed) == (3, 2, 1)
    assert a.tiers == {PASSED: 1, VALUES: 1, NOT: 1}
    assert a.diagnoses[0][:3] == (VALUES, "\u2014", 1)  # the tier's column says it all
    assert found.scores == [0.0, 3.0, 5.0] and found.max_score == 5.0
    assert found.not_graded == [("s4", "not a notebook")] and found.seconds == 12.5
    assert a.variants == []  # one variant: nothing to compare


def test_what_went_wrong_is_grouped_by_misconception_whatever_the_tier(tmp_path):
    """An off-by-one that raised (gather's range rule) and one that gave wrong values are
    one misconception; a failure that matches none is "other", with its rule."""
    path = _log(
        tmp_path / "m.verdicts.jsonl",
        {f"s{i}": {"test_a": (False, VALUES, "public")} for i in range(7)},
    )
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    kinds = [
        ("raised an exception", ["off by one", {}]),
        (VALUES, ["off by one", {}]),
        (VALUES, ["off by one", {}]),
        ("raised an exception", ["gather breaks its {rule} rule", {"rule": "range"}]),
        (VALUES, ["gathers along the wrong dim (the other axis or layout)", {}]),
        (VALUES, ["wrong values", {}]),
        ("not vectorized", ["not vectorized: a Python loop (operations grow)", {}]),
    ]
    for entry, (tier, diagnosis) in zip(entries[1:], kinds):
        entry["verdicts"]["test_a"].update(tier=tier, diagnosis=diagnosis)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    groups = {what: (tier, n) for tier, what, n, _example in _numbers(path).questions[0].diagnoses}
    assert groups == {
        "off by one": ("raised an exception", 3),
        "other: gather breaks its range rule": ("raised an exception", 1),
        "gathers along the wrong dim (the other axis or layout)": (VALUES, 1),
        "\u2014": (VALUES, 1),  # no more than the tier's own column says
        "other: a Python loop (operations grow)": ("not vectorized", 1),  # less the tier
    }
    from gather_course._i18n import speaking

    with speaking("zh"):
        zh = {what for _tier, what, _n, _example in _numbers(path).questions[0].diagnoses}
    assert {"\u2014", "其他：Python 循环（运算次数随输入增长）", "差一错误"} <= zh, zh


def test_the_report_is_written_beside_the_csv_and_never_over_it(tmp_path):
    grades = tmp_path / "grades-topk.csv"
    grades.write_text("student,score\n")
    _log(tmp_path / f"grades-topk{SUFFIX}", _class("layout=NBD"))
    written = write_report(grades)
    assert [p.name for p in written] == [
        "grades-topk-report.html",
        "grades-topk-report.csv",
        "grades-topk-report.json",
    ]
    assert grades.read_text() == "student,score\n"
    page = written[0].read_text()
    assert page.count('src="data:image/png;base64,') == 2 and "http" not in page.split("<body>")[1]
    assert "passed less often than its siblings" in page and "Fisher" in page
    rows = list(csv.DictReader(written[1].open()))
    flagged = [r for r in rows if r["flagged"] == "True"]
    assert [(r["question"], r["variant"]) for r in flagged] == [
        ("topk.select_patches", "layout=NBD")
    ]
    assert json.loads(written[2].read_text())["assignment"] == "topk"


def test_the_page_shows_a_small_variant_far_below_and_points_to_the_copy_report(tmp_path):
    grades = tmp_path / "grades-topk.csv"
    _log(tmp_path / f"grades-topk{SUFFIX}", _small_variant_class())
    page = write_report(grades)[0].read_text()
    p = f"{7 * comb(21, 5) / comb(39, 5):.3f}"
    assert "which does not make them fair" in page
    assert "layout=NBD: 0 of 5 passed, its siblings 53%: far below them, yet not flagged." in page
    assert f"5 students: at best p = {p} here" in page
    assert page.count('<span class="warn">far below its siblings</span>') == 1
    assert "If the students of layout=NBD handed in" in page
    assert '<code class="cmd">gather-course similar topk</code>' in page
    assert "discrimination is the correlation between the two" in page
    row = page[page.index("<code>layout=NBD</code>") :].split("</tr>")[0]
    assert ">0/5<" in row and ">\u221253<" in row and f">{p}<" in row and ">none<" in row
    # four students: too few to test, still shown
    _log(tmp_path / f"grades-topk{SUFFIX}", _small_variant_class(failing=MIN_VARIANT - 1))
    page = write_report(grades)[0].read_text()
    assert "0 of 4 passed" in page and "Too few students to test" in page


def test_every_table_cell_is_labelled_with_its_column_for_a_phone(tmp_path):
    grades = tmp_path / "grades-topk.csv"
    _log(tmp_path / f"grades-topk{SUFFIX}", _class("layout=NBD"), problems={"s9": "no file"})
    page = write_report(grades)[0].read_text()
    tables = page.split("<table>")[1:]
    assert len(tables) >= 5
    for table in tables:
        body = table.split("</table>")[0].split("</tr>", 1)[1]
        cells = body.count("<td")
        labelled = body.count("<td data-label=")
        assert cells > 0 and labelled >= cells - body.count("</tr>"), table[:300]
    assert '<td data-label="facility" class="n">' in page
    assert '<td data-label="why">no file</td>' in page


def test_a_chinese_class_gets_a_chinese_page(tmp_path):
    grades = tmp_path / "grades-topk.csv"
    _log(tmp_path / f"grades-topk{SUFFIX}", _class("layout=NBD"), lang="zh")
    page = write_report(grades)[0].read_text()
    assert "班级报告：topk" in page and '<html lang="zh-CN">' in page
    assert "通过率低于同题其他变体" in page and "Class report" not in page


def test_report_without_a_graded_run_says_what_it_needs(tmp_path, capsys):
    root = tmp_path / "course"
    (root / "source" / "basics").mkdir(parents=True)
    with pytest.raises(GatherCourseError, match="no verdicts to report on"):
        write_report(tmp_path / "grades-basics.csv")


# -- classes graded for real (README's classroom command) ---------------------------------------

KNOWN = ["solution"] * 4 + ["wrong_odd"] * 2 + ["wrong_even"] * 2
KNOWN += ["untouched", "corrupt", "patches_checker"]


def _typical_tier(qid: str) -> str:
    """The tier check gives the typical wrong answer e2e hands in for ``qid``."""
    namespace: dict = {}
    exec(e2e._typical_wrong(qid), namespace)  # noqa: S102 - the course's own test answers
    return exercise(qid).check(namespace[exercise(qid).name]).tier.value


@pytest.mark.classroom
def test_the_report_of_a_class_of_known_make_up_counts_what_it_was_built_with(tmp_path):
    root = e2e.class_of(tmp_path, KNOWN)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(["grade", "basics", "--course", str(root), "--report", "--timeout", "5"])
    assert code == 0
    # nbgrader's SQLAlchemy warnings go to the instructor's log, not to the terminal
    assert not [w for w in caught if w.category.__name__ == "SAWarning"]
    kept = (root / "nbgrader-warnings.log").read_text().splitlines()
    assert kept and all(": SAWarning: " in line and " basics: " in line for line in kept), kept
    numbers = json.loads((root / "grades-basics-report.json").read_text())
    with open(root / "grades-basics.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    graded = {s: r for s, r in rows.items() if r["status"] == "graded"}
    kinds = {s: s.split("_", 1)[1] for s in rows}
    assert numbers["students"] == len(KNOWN) and len(numbers["scores"]) == len(graded)
    assert sorted(numbers["scores"]) == sorted(float(r["score"]) for r in graded.values())
    assert [s for s, _why in numbers["not_graded"]] == [s for s in rows if kinds[s] == "corrupt"]
    assert "not a readable notebook" in numbers["not_graded"][0][1]
    assert numbers["seconds"] > 0
    for i, q in enumerate(numbers["questions"]):
        column = [float(r[q["gid"]]) for r in graded.values()]
        assert q["passed"] == sum(1 for c in column if c == q["points"]), q["gid"]
        assert q["graded"] == len(graded)
        assert q["attempted"] == len(graded) - KNOWN.count("untouched")
        assert q["tiers"].get(NOT) == KNOWN.count("untouched")
        # the typical wrong answer: handed in by wrong_odd on even questions, wrong_even on odd
        wrong = KNOWN.count("wrong_odd" if i % 2 == 0 else "wrong_even")
        tier = _typical_tier(q["qid"])
        cheats = KNOWN.count("patches_checker")  # reaches into the course: a constraint
        expected = wrong + (cheats if tier == Tier.CONSTRAINTS.value else 0)
        assert q["tiers"].get(tier) == expected, (q["qid"], tier, q["tiers"])
        assert q["tiers"].get(PASSED) == q["passed"]
        assert sum(q["tiers"].values()) == len(graded)
    assert numbers["lang"] == "en"


@pytest.mark.classroom
def test_a_variant_whose_students_hand_in_a_wrong_answer_is_flagged_and_the_fair_one_is_not(
    tmp_path,
):
    from gather_course.course._course import course_root
    from gather_course.grading._classes import release_class
    from gather_course.grading._submission import graded_cells
    from tests.helpers import ROOT, fill_cells, variant_solutions

    roster = [f"st{i:03d}" for i in range(42)]
    target = tmp_path / "class"
    info = release_class(course_root(ROOT), 20261126, target, roster, execute=False)
    table = info["variants"]["topk"]
    drawn: dict[str, list[str]] = {}
    for student in roster:
        drawn.setdefault(table[student]["topk.select_patches"], []).append(student)
    unfair = max(drawn, key=lambda v: len(drawn[v]))  # its students hand in the public answer
    assert len(drawn[unfair]) >= MIN_VARIANT
    released = nbformat.read(target / "exercises" / "topk" / "topk.ipynb", 4)
    imports = "import itertools\nimport torch\nimport torch.nn.functional as F\n"
    for student in roster:
        answers = {}
        for _gid, qid, _points in graded_cells(released):
            q = exercise(qid.partition(":")[0], table[student][qid.partition(":")[0]])
            code = variant_solutions.solution_code(q.qid, q.params)
            if q.qid == "topk.select_patches" and student in drawn[unfair]:
                code = exercise(q.qid).solution_code  # the public question's answer
            answers[q.name] = imports + code
        folder = target / "submitted" / student / "topk"
        folder.mkdir(parents=True)
        nbformat.write(fill_cells(released, answers), folder / "topk.ipynb")
    assert main(["grade", "topk", "--course", str(target), "--report", "--timeout", "5"]) == 0
    numbers = json.loads((target / "grades-topk-report.json").read_text())
    flagged = [
        (q["qid"], v["name"]) for q in numbers["questions"] for v in q["variants"] if v["flagged"]
    ]
    assert flagged == [("topk.select_patches", unfair)]
    back = next(q for q in numbers["questions"] if q["qid"] == "topk.scatter_back")
    assert back["passed"] == len(roster) and len(back["variants"]) > 1  # fair: no flag


# -- the page, as an instructor opens it ---------------------------------------------------------


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_opens_from_a_file_in_a_browser_and_fits_a_phone(tmp_path, lang):
    from playwright.sync_api import sync_playwright

    path = find_browser()
    if path is None:
        pytest.skip("no Chromium on PATH (README: apt-get install chromium)")
    grades = tmp_path / "grades-topk.csv"
    _log(tmp_path / f"grades-topk{SUFFIX}", _class("layout=NBD"), lang=lang)
    page_path = write_report(grades)[0]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path)
        try:
            for width in (1000, 390):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(page_path.as_uri())
                images = page.eval_on_selector_all(
                    "img", "els => els.map(e => [e.naturalWidth, e.clientWidth, e.alt])"
                )
                assert len(images) == 2
                for natural, shown, alt in images:
                    assert natural >= 2 * shown > 0 and len(alt) > 10, (natural, shown, alt)
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                title = page.locator("h1").inner_text()
                assert title == ("班级报告：topk" if lang == "zh" else "Class report: topk")
                shot = tmp_path / f"report-{lang}-{width}.png"
                page.screenshot(path=str(shot), full_page=True)
                assert shot.stat().st_size > 20_000
                page.close()
        finally:
            browser.close()


def _smallest_text_pt(numbers) -> float:
    """The smallest font size (points) of any text drawn in the report's two pictures."""
    import matplotlib.text

    from gather_course.report import _figures

    sizes = [
        t.get_fontsize()
        for fig in (_figures.score_histogram(numbers), _figures.tier_bars(numbers))
        for t in fig.findobj(matplotlib.text.Text)
        if t.get_visible() and t.get_text().strip()
    ]
    return min(sizes)


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_a_phone_every_table_fits_and_every_chart_reads(tmp_path, lang):
    """At 390 px no table scrolls sideways: each row is stacked, every number labelled and in
    view; each picture's smallest text is at least 11 px as shown."""
    from playwright.sync_api import sync_playwright

    from gather_course._i18n import speaking

    path = find_browser()
    if path is None:
        pytest.skip("no Chromium on PATH (README: apt-get install chromium)")
    grades = tmp_path / "grades-topk.csv"
    log = _log(tmp_path / f"grades-topk{SUFFIX}", _small_variant_class(), lang=lang)
    page_path = write_report(grades)[0]
    with speaking(lang):
        smallest = _smallest_text_pt(_numbers(log))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 800})
            page.goto(page_path.as_uri())
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            tables = page.eval_on_selector_all(
                "table", "els => els.map(e => [e.scrollWidth, e.clientWidth])"
            )
            assert len(tables) >= 4 and all(0 < s <= c for s, c in tables), tables
            cells = page.eval_on_selector_all(
                "td.n",
                "els => els.map(e => { const r = e.getBoundingClientRect(); "
                "return [r.left, r.right, r.width, getComputedStyle(e, '::before').content]; })",
            )
            assert len(cells) > 30
            for left, right, width, label in cells:  # a number, its label before it, in view
                assert (
                    0 <= left and right <= 390 and width > 0 and label.endswith((': "', '："'))
                ), label
            for natural, shown in page.eval_on_selector_all(
                "img", "els => els.map(e => [e.naturalWidth, e.clientWidth])"
            ):
                px = smallest / 72 * 200 * shown / natural  # the PNG is drawn at 200 dpi
                assert px >= 11, (smallest, natural, shown)
            page.screenshot(path=str(tmp_path / f"phone-{lang}.png"), full_page=True)
            page.close()
        finally:
            browser.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_figures_keep_every_text_inside_and_apart(tmp_path, lang):
    """Every label, tick and legend entry of both pictures lies inside its figure, none on
    another (a legend's third column was once cut off at the figure's edge)."""
    import itertools

    import matplotlib.text
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from gather_course._i18n import _, speaking
    from gather_course.report import _figures

    students = _class("layout=NBD")
    students["x"] = {
        "test_a": (False, NOT, "public"),
        "test_b": (False, Tier.EXCEPTION.value, "public"),
    }
    students["y"] = {
        "test_a": (False, Tier.CONSTRAINTS.value, "public"),
        "test_b": (False, Tier.NOT_VECTORIZED.value, "public"),
    }
    with speaking(lang):
        numbers = _numbers(_log(tmp_path / "g.verdicts.jsonl", students, lang=lang))
        for fig in (_figures.score_histogram(numbers), _figures.tier_bars(numbers)):
            canvas = FigureCanvasAgg(fig)
            canvas.draw()
            renderer = canvas.get_renderer()
            whole = fig.bbox
            ticks = {  # every tick label, and the ones drawn (those outside the view are not)
                id(t.label1) for ax in fig.axes for a in (ax.xaxis, ax.yaxis)
                for t in a.get_major_ticks() + a.get_minor_ticks()
            }  # fmt: skip
            drawn = {
                id(t.label1) for ax in fig.axes for a in (ax.xaxis, ax.yaxis)
                for t in a._update_ticks()
            }  # fmt: skip
            texts = [
                t
                for t in fig.findobj(matplotlib.text.Text)
                if t.get_visible()
                and t.get_text().strip()
                and (id(t) not in ticks or id(t) in drawn)
            ]
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
            for text, box in boxes:
                assert whole.x0 - 0.5 <= box.x0 and box.x1 <= whole.x1 + 0.5, text
                assert whole.y0 - 0.5 <= box.y0 and box.y1 <= whole.y1 + 0.5, text
            for (t1, b1), (t2, b2) in itertools.combinations(boxes, 2):
                apart = (
                    min(b1.x1, b2.x1) - max(b1.x0, b2.x0) <= 0.5
                    or min(b1.y1, b2.y1) - max(b1.y0, b2.y0) <= 0.5
                )
                assert apart, (t1, t2)
            legend = [t for t in texts if t.get_text() in {_(x.value) for x in Tier}]
            assert len(legend) in (0, 6), [t.get_text() for t in legend]


@pytest.mark.parametrize("size", [5, 7, 9])  # 10, 14, 18 students
def test_the_pictures_count_students_in_whole_numbers(tmp_path, size):
    """A count of students is never 2.5: both pictures' count axes have whole-number ticks
    (a class of 14 drew 0.0, 2.5, 5.0 ... 12.5 on the verdicts' bars)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from gather_course.report import _figures

    students = _class(None, per_variant=size, variants=("keep=lowest", "layout=NBD"))
    numbers = _numbers(_log(tmp_path / "g.verdicts.jsonl", students))
    for fig, axis in (
        (_figures.score_histogram(numbers), "y"),
        (_figures.tier_bars(numbers), "x"),
    ):
        FigureCanvasAgg(fig).draw()
        ax = fig.axes[0]
        ticks = ax.get_xticks() if axis == "x" else ax.get_yticks()
        assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), (axis, ticks)
