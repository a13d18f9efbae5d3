"""Learner-facing messages in Chinese: every marked message has a translation, and
GATHER_COURSE_LANG picks the language (English by default)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import torch
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po
from markdown_it import MarkdownIt

from gather_course import GatherCourseError, diagnose, exercise, explain
from gather_course._i18n import LANG_ENV, catalog, language
from gather_course.course._messages import bank_messages
from tests.helpers import ROOT

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")  # Chinese, and its punctuation
WORDS = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,}")  # two words in a row: text to translate
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
PO = ROOT / "gather_course" / "locale" / "zh" / "LC_MESSAGES" / "gather_course.po"


def marked_messages() -> set[str]:
    """Every message Babel extracts with the project's own mapping (babel.cfg): the ones
    marked in the code with _(), N_() and _fig(), and every text of the question bank."""
    with (ROOT / "babel.cfg").open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    found = extract_from_dir(
        ROOT,
        method_map,
        options_map,
        keywords={"_": None, "N_": None, "_fig": None},
        directory_filter=lambda d: (
            Path(d).parts[:1] in ((), ("gather_course",))
            or Path(d).is_relative_to(ROOT / "gather_course")
        ),
    )
    return {message for _file, _line, message, _comments, _context in found}


def untranslated(messages: set[str], catalog: Catalog) -> list[str]:
    """The messages with no Chinese text in ``catalog`` (a label that is only code, such as
    ``dim=-1`` or ``float64``, may keep its English as its translation)."""

    def done(m: str) -> bool:
        text = catalog.get(m).string if catalog.get(m) else ""
        return bool(text) and (bool(CJK.search(text)) or not WORDS.search(m))

    return sorted(m for m in messages if not done(m))


def _zh() -> Catalog:
    with PO.open("rb") as f:
        return read_po(f, locale="zh")


def test_every_message_has_chinese_text_and_the_catalog_has_no_stale_ones():
    messages, catalog = marked_messages(), _zh()
    bank = {text for text, _where in bank_messages()}
    assert bank <= messages and len(messages - bank) >= 150, "the extraction misses messages"
    missing = untranslated(messages, catalog)
    assert not missing, (
        f"{len(missing)} messages without Chinese text in {PO.relative_to(ROOT)} (run the "
        f"commands in docs/translating.md): {missing}"
    )
    stale = sorted(m.id for m in catalog if m.id and m.id not in messages)
    assert not stale, f"translations of messages the package no longer has: {stale}"
    fuzzy = sorted(m.id for m in catalog if m.id and m.fuzzy)
    assert not fuzzy, f"translations marked fuzzy (check them, then drop the flag): {fuzzy}"


def test_translations_keep_every_placeholder():
    for m in _zh():
        if m.id and m.string:
            want, got = set(PLACEHOLDER.findall(m.id)), set(PLACEHOLDER.findall(m.string))
            assert want == got, f"{m.id!r} has {sorted(want)}, its translation {sorted(got)}"


# -- Messages nobody marked ------------------------------------------------------------------
# Learner-facing code is every module but these, which speak to instructors and maintainers
# (grading, class releases, the sandbox, benchmarks, nbgrader's plugins) or hold only the
# bank's variant edits (their results are bank texts, checked above).
INSTRUCTOR_MODULES = {
    "grading/_classes.py",
    "grading/_roster.py",
    "grading/_classjob.py",
    "grading/_dask.py",
    "grading/_scheduler_address.py",  # the instructor's grading cluster
    "grading/_tls.py",
    "grading/_verdict_log.py",
    # the class report: errors for the instructor, CSS, matplotlib's words; the page's own
    # sentences are bank texts (N_), translated with the catalog (tests/test_report.py)
    "report/__init__.py",
    "report/_figures.py",
    "report/_page.py",
    "grading/_journal.py",
    "grading/_pools.py",
    "grading/_grade.py",
    "grading/_gradebook.py",
    "grading/_record.py",
    "grading/_autograde.py",  # nbgrader's own log lines, mirrored
    "grading/_sandbox.py",
    "grading/_failures.py",
    "grading/_scan.py",
    "copies/_similar.py",
    "grading/_worker.py",
    "grading/_frames.py",
    "grading/_job.py",
    "grading/_procs.py",
    "grading/_wipe.py",
    "grading/nbgrader_plugins.py",
    "grading/_inbound.py",
    "grading/_private.py",
    "grading/_receipts.py",
    "grading/_tasks.py",  # gather-course tasks: the words around a student's tasks
    "grading/_regrade.py",  # graded again: what changed, for the instructor
    "cli/_instructor.py",
    "cli/_class.py",
    "course/_execute.py",
    "course/_messages.py",
    "course/_twins.py",
    "_i18n.py",
    "benchmark.py",
    "_measure.py",
    "questions/_variants.py",
}
# Modules that also serve instructors: only these functions of theirs speak to learners.
LEARNER_FUNCTIONS = {
    "course/_course.py": {"notebook_file"},
    "grading/exchange.py": {"_close_to_classmates"},  # Submit's: in the student's server
}
PROSE = re.compile(r"[A-Za-z]+ [A-Za-z]+ [A-Za-z]+")  # three words in a row: a sentence
_COLAB_EN = (
    "# On Google Colab: install the course's package (Colab's torch stays). Elsewhere: nothing."
)
CODE_CONSTANTS = {  # prose-looking strings that are code, not messages
    ("_figure_text.py", "Noto Sans CJK SC"),  # font names
    ("_figure_text.py", "Noto Sans SC"),
    ("_figure_text.py", "WenQuanYi Zen Hei"),
    ("_figure_text.py", "Source Han Sans SC"),
    ("_figure_text.py", "Gather Course Sans SC"),  # the package's own (gather_course/fonts/)
    ("grading/_timing.py", "import itertools\nimport torch\nimport torch.nn.functional as F\n"),
    # the Colab cell's comment: written into each edition's notebooks, both languages spelled out
    ("course/_colab.py", _COLAB_EN),
    # matplotlib's own log line, matched to drop it
    ("_figure_text.py", "findfont: Failed to find font weight"),
    # nbgrader's code stub, per edition (its Chinese is spelled out beside it)
    ("course/_course.py", "# YOUR CODE HERE\nraise NotImplementedError()"),
}


def unmarked_prose(path: Path, rel: str, skip: set[str]) -> list[str]:
    """Strings in ``path`` that read like sentences and are neither marked for translation
    nor a bank text: no docstrings, no developer errors (``raise`` of anything but
    GatherCourseError), no solution code; in modules that also serve instructors, only the
    functions LEARNER_FUNCTIONS names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exempt: set[int] = set()

    def exempt_all(node: ast.AST) -> None:
        exempt.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("_", "N_", "_fig"):
            exempt_all(node)
        elif isinstance(node, ast.Raise) and node.exc is not None:
            call = node.exc
            if not (
                isinstance(call, ast.Call) and getattr(call.func, "id", "") == "GatherCourseError"
            ):
                exempt_all(node)
        elif isinstance(node, ast.keyword) and node.arg == "solution_code":
            exempt_all(node)
        elif isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                exempt_all(body[0])
            if rel in LEARNER_FUNCTIONS and isinstance(node, ast.FunctionDef):
                if node.name not in LEARNER_FUNCTIONS[rel]:
                    exempt_all(node)
    found = []
    for node in ast.walk(tree):
        if id(node) in exempt:
            continue
        if isinstance(node, ast.JoinedStr):
            exempt.update(id(v) for v in node.values)
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if PROSE.search(text) and text not in skip and (rel, text) not in CODE_CONSTANTS:
            found.append(f"{rel}:{node.lineno}: {text[:70]!r}")
    return found


def test_every_learner_facing_sentence_is_marked_for_translation():
    bank = {text for text, _where in bank_messages()}
    package = ROOT / "gather_course"
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel not in INSTRUCTOR_MODULES:
            found += unmarked_prose(path, rel, bank)
    assert not found, (
        "learner-facing text that is not marked with _() or N_(), so it has no Chinese "
        "(mark it as docs/translating.md says, or move it out of the learner's path): "
        + "\n".join(found)
    )


def test_the_scan_finds_an_unmarked_message(tmp_path):
    code = tmp_path / "m.py"
    code.write_text(
        '"""A module."""\n'
        "def f(x):\n"
        '    """Docs are not messages."""\n'
        "    if x:\n"
        '        raise GatherCourseError(f"x must be an int, got {x}.")\n'
        "    if x is None:\n"
        '        raise TypeError("for the course author only")\n'
        '    return _("this one is marked")\n'
    )
    assert unmarked_prose(code, "m.py", set()) == ["m.py:5: 'x must be an int, got {}.'"]


def test_the_check_finds_a_missing_translation():
    catalog = _zh()
    catalog.delete("Incorrect")
    assert untranslated({"Correct", "Incorrect", "a new message"}, catalog) == [
        "Incorrect",
        "a new message",
    ]


@pytest.mark.parametrize(
    "value, lang", [(None, "en"), ("zh", "zh"), ("zh_CN", "zh"), ("zh-Hans", "zh"), ("fr", "en")]
)
def test_the_language_comes_from_the_setting(monkeypatch, value, lang):
    if value is None:
        monkeypatch.delenv(LANG_ENV, raising=False)
    else:
        monkeypatch.setenv(LANG_ENV, value)
    assert language() == lang


def test_a_verdict_in_each_language(monkeypatch):
    def wrong(x, cols):
        return x[:, : cols.shape[1]]

    monkeypatch.delenv(LANG_ENV, raising=False)
    result = exercise("basics.pick_per_row").check(wrong)
    english, markdown = str(result), result._repr_markdown_()
    assert english.startswith("❌ Incorrect (basics.pick_per_row): ") and "  expected: " in english
    assert markdown.startswith("❌ **Incorrect** (`basics.pick_per_row`): ")
    assert "\n- **expected:** " in markdown and "hint. `.check(" in markdown
    monkeypatch.setenv(LANG_ENV, "zh")
    result = exercise("basics.pick_per_row").check(wrong)
    chinese, markdown = str(result), result._repr_markdown_()
    assert chinese.startswith("❌ 不正确（basics.pick_per_row）：") and "  期望值：" in chinese
    assert markdown.startswith("❌ **不正确**（`basics.pick_per_row`）：")
    assert "\n- **期望值**：" in markdown and "提示。`.check(" in markdown  # no space after 。
    # CommonMark closes ** after a full-width colon only before a space: the colon goes outside
    rendered = MarkdownIt("commonmark").render(markdown)
    assert "**" not in re.sub(r"<code>.*?</code>", "", rendered, flags=re.S), rendered
    assert "卡住了" in chinese and "Stuck?" not in chinese
    passed = str(exercise("basics.pick_per_row").check(lambda x, cols: x.gather(1, cols)))
    assert "（随机形状、大小为 1 的维度、" in passed, passed  # a list in a sentence: 、
    assert catalog("zh").gettext("Correct") == "正确"


def _notebook(path: Path, lang: str | None) -> str:
    meta = {"gather_course": {"lang": lang}} if lang else {}
    path.write_text(json.dumps({"cells": [], "metadata": meta, "nbformat": 4, "nbformat_minor": 5}))
    return str(path)


def test_a_notebook_of_the_chinese_edition_speaks_chinese(monkeypatch, tmp_path):
    """In JupyterLab the kernel knows its notebook (JPY_SESSION_NAME): the Chinese edition's
    notebooks say so in their metadata, and the setting still wins."""
    monkeypatch.delenv(LANG_ENV, raising=False)
    for name, lang, want in [("zh.ipynb", "zh", "zh"), ("en.ipynb", None, "en")]:
        monkeypatch.setenv("JPY_SESSION_NAME", _notebook(tmp_path / name, lang))
        assert language() == want
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "gone.ipynb"))  # renamed since
    assert language() == "en"
    monkeypatch.setenv("JPY_SESSION_NAME", _notebook(tmp_path / "zh2.ipynb", "zh"))
    monkeypatch.setenv(LANG_ENV, "en")
    assert language() == "en"


def test_diagnose_explain_and_errors_in_chinese(monkeypatch):
    monkeypatch.setenv(LANG_ENV, "zh")
    report = diagnose(torch.zeros(3, 4), 1, torch.tensor([[5], [0], [1]]))
    text, markdown = str(report), report._repr_markdown_()
    assert "违反 1 条规则" in text and "越界" in text and "修正：" in text
    assert "违反了 **1 条规则**" in markdown and "out of range" not in markdown
    with pytest.raises(GatherCourseError, match="无法解释"):
        explain(torch.zeros(3), 1, torch.zeros(1, dtype=torch.long), 0)
    with pytest.raises(GatherCourseError, match=re.escape("没有题目 'basics.nope'")):
        exercise("basics.nope")
    monkeypatch.setenv(LANG_ENV, "en")
    assert "1 broken rule" in str(diagnose(torch.zeros(3, 4), 1, torch.tensor([[5], [0], [1]])))


def test_hints_and_tasks_in_chinese(monkeypatch):
    q = exercise("basics.pick_per_row")
    monkeypatch.setenv(LANG_ENV, "zh")
    hint, task = str(q.hint(1)), q._repr_markdown_()
    assert hint.startswith("**提示 1/3**（`basics.pick_per_row`）：") and CJK.search(
        hint.split("）：", 1)[1]
    )
    assert "编写 `pick_per_row(x, cols)`" in task and "**约束**：" in task
    assert q.hints[0] not in hint and q.task not in task  # the English texts are gone


def test_figures_speak_chinese_only_with_a_font_that_draws_it(monkeypatch):
    import warnings

    from gather_course import draw_gather_grad
    from gather_course._figure_text import _cjk_font

    monkeypatch.setenv(LANG_ENV, "zh")
    args = (torch.tensor([[1.0, 2.0, 3.0]]), 1, torch.tensor([[0, 0, 2]]), (1, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph warns
        fig = draw_gather_grad(*args)
        fig.canvas.draw()
    texts = [t.get_text() for t in fig.axes[0].texts]
    if _cjk_font() is None:
        assert "gather(dim=1) backward" in texts
    else:
        assert "gather(dim=1) 的反向传播" in texts


def test_chinese_text_wraps_by_its_width_and_never_starts_a_line_with_a_closing_mark():
    from gather_course._text import _columns, wrap

    advice = "卡住了？" + "用 `exercise(...).hint()` 得到提示，逐格对照第一个未通过的用例。" * 4
    lines = wrap(advice, 40, indent="  ")
    assert len(lines) > 3 and "".join(lines).replace(" ", "") == advice.replace(" ", "")
    assert all(_columns(line) <= 40 for line in lines if " " in line.strip() or len(line) > 3)
    assert not any(line.strip()[0] in "，。、；：？！）" for line in lines)
    english = "a few words that go on for a while, then `a.very_long_code_span(with, args)`"
    assert wrap(english, 20) == [
        "a few words that go",
        "on for a while, then",
        "`a.very_long_code_span(with,",
        "args)`",
    ]


@pytest.mark.parametrize(
    "env, lang",
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C"}, "en"),  # LC_ALL first, as POSIX says
        ({"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "C"}, "zh"),
        ({"LANG": "zh_CN.UTF-8", LANG_ENV: "en"}, "en"),  # the setting before the locale
    ],
)
def test_the_locale_is_the_learners_language_where_nothing_else_says(monkeypatch, env, lang):
    from gather_course._i18n import language

    for name in (LANG_ENV, "LC_ALL", "LC_MESSAGES", "LANG", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert language() == lang


def test_a_working_copys_language_comes_before_the_setting(monkeypatch, tmp_path):
    from gather_course._i18n import _ as tr
    from gather_course._i18n import about_notebook, choosing, language, notebook_language

    monkeypatch.setenv(LANG_ENV, "en")
    with choosing("zh"):
        assert language() == "zh" and tr("Correct") == "正确"
        with choosing(None):  # a command about no working copy: the usual order again
            assert language() == "en"
    with about_notebook(ROOT / "zh" / "notebooks" / "01_basic_formula.ipynb"):
        assert language() == "en"  # in a kernel, GATHER_COURSE_LANG still decides
    assert notebook_language(ROOT / "zh" / "notebooks" / "01_basic_formula.ipynb") == "zh"
    assert notebook_language(tmp_path / "nosuch.ipynb") is None


@pytest.mark.parametrize("command", [[], ["start"], ["check"], ["progress"]])
def test_a_chinese_learners_help_has_no_english_sentence(monkeypatch, command):
    """gather-course --help and the learner's commands' help, in Chinese (issue 47: only some
    commands were translated): every line holds Chinese, or is code alone."""
    from tests.helpers import cli

    monkeypatch.setenv(LANG_ENV, "zh")
    done = cli(*command, "--help")
    assert done.returncode == 0 and done.stdout, done
    cjk = re.compile(r"[\u4e00-\u9fff]")
    english = [
        line
        for line in done.stdout.splitlines()
        if re.search(r"\b[a-z]{2,} [a-z]{2,} [a-z]{2,}\b", line) and not cjk.search(line)
    ]
    assert not english, english
    assert "：" in done.stdout and "usage:" not in done.stdout
