"""Learner-facing messages in Chinese: every marked message has a translation, and
GATHER_COURSE_LANG picks the language (English by default)."""

from __future__ import annotations

import re

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from gather_course import exercise
from gather_course._i18n import LANG_ENV, _catalog, language
from tests.helpers import ROOT

CJK = re.compile(r"[\u4e00-\u9fff]")
PO = ROOT / "gather_course" / "locale" / "zh" / "LC_MESSAGES" / "gather_course.po"


def marked_messages() -> set[str]:
    """Every message the package marks with _() or N_(), as Babel extracts them."""
    found = extract_from_dir(
        ROOT / "gather_course",
        method_map=[("**.py", "python")],
        keywords={"_": None, "N_": None},
    )
    return {message for _file, _line, message, _comments, _context in found}


def untranslated(messages: set[str], catalog: Catalog) -> list[str]:
    """The messages with no Chinese text in ``catalog``."""
    return sorted(m for m in messages if not (catalog.get(m) and CJK.search(catalog.get(m).string)))


def _zh() -> Catalog:
    with PO.open("rb") as f:
        return read_po(f, locale="zh")


def test_every_marked_message_has_chinese_text_and_the_catalog_has_no_stale_ones():
    messages, catalog = marked_messages(), _zh()
    assert len(messages) >= 15
    assert not untranslated(messages, catalog), (
        f"messages without Chinese text in {PO.relative_to(ROOT)} (run the commands in "
        f"docs/translating.md): {untranslated(messages, catalog)}"
    )
    stale = sorted(m.id for m in catalog if m.id and m.id not in messages)
    assert not stale, f"translations of messages the package no longer has: {stale}"


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
    english = str(exercise("basics.pick_per_row").check(wrong))
    assert english.startswith("❌ Incorrect (basics.pick_per_row)") and "  expected: " in english
    monkeypatch.setenv(LANG_ENV, "zh")
    chinese = str(exercise("basics.pick_per_row").check(wrong))
    assert chinese.startswith("❌ 不正确 (basics.pick_per_row)") and "  期望值: " in chinese
    assert "卡住了" in chinese and "Stuck?" not in chinese
    assert _catalog("zh").gettext("Correct") == "正确"
