"""The package's Chinese font: every character the course draws is in it, and a machine with no
CJK font draws Chinese figures with it, without a warning (CI installs a CJK font for the
browser; here matplotlib is made to forget the installed ones, as on Colab or Binder)."""

from __future__ import annotations

import ast
import json
import warnings

import pytest
from fontTools.ttLib import TTFont
from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gather_course import _figure_text
from gather_course._figure_text import BUNDLED_FAMILY, BUNDLED_FONT
from tests.helpers import ROOT, cjk_font_tool

TOOL = cjk_font_tool()
CJK, drawn_characters = TOOL.CJK, TOOL.drawn_characters


def _zh_strings() -> list[str]:
    """Every string literal with a CJK character in the Chinese edition's code cells."""
    found = []
    for path in sorted((ROOT / "zh").glob("*/**/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            code = "".join(line for line in cell["source"] if not line.lstrip().startswith("%"))
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if CJK.search(node.value):
                        found.append(node.value)
    return found


def test_the_font_holds_every_character_the_course_draws_and_stays_small():
    cmap = TTFont(BUNDLED_FONT).getBestCmap()
    missing = sorted(c for c in drawn_characters() if ord(c) not in cmap)
    assert not missing, (
        f"{''.join(missing)}: not in {BUNDLED_FONT.name}; make it again "
        "(tools/cjk_font.py says how)"
    )
    assert "Noto Sans CJK SC" not in str(TTFont(BUNDLED_FONT)["name"].getDebugName(1))
    assert BUNDLED_FONT.stat().st_size < TOOL.SIZE_BUDGET  # the wheel grows by less than 1.5 MiB
    licence = (BUNDLED_FONT.parent / "OFL.txt").read_text()
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence and "Noto Sans CJK" in licence


@pytest.fixture
def no_installed_cjk_font(monkeypatch):
    """matplotlib as on a machine without a CJK font: the package's font is all there is."""
    names = set(_figure_text._CJK_FONTS) | {BUNDLED_FAMILY}
    kept = [f for f in font_manager.fontManager.ttflist if f.name not in names]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", kept)
    monkeypatch.setenv("GATHER_COURSE_LANG", "zh")
    font_manager.fontManager._findfont_cached.cache_clear()
    _figure_text._cjk_font.cache_clear()
    yield
    _figure_text._cjk_font.cache_clear()
    font_manager.fontManager._findfont_cached.cache_clear()


def test_without_a_cjk_font_every_chinese_figure_text_draws_with_the_packages(
    no_installed_cjk_font,
):
    assert _figure_text._cjk_font() == BUNDLED_FAMILY
    family = _figure_text.figure_font()["fontfamily"]
    assert family[-1] == BUNDLED_FAMILY
    found = font_manager.findfont(font_manager.FontProperties(family=BUNDLED_FAMILY))
    assert found == str(BUNDLED_FONT)
    texts = _zh_strings()
    assert len(texts) > 20 and any("原" in t for t in texts)
    fig = Figure(figsize=(6, 0.2 * len(texts)))
    for n, text in enumerate(texts):
        fig.text(0.01, n / len(texts), text.replace("$", r"\$"), fontfamily=family)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" fails here
        FigureCanvasAgg(fig).draw()


def test_a_missing_character_would_be_seen(no_installed_cjk_font):
    """The check above can fail: a character the font lacks warns (and so fails it)."""
    fig = Figure()
    fig.text(0, 0, "龘", fontfamily=_figure_text.figure_font()["fontfamily"])
    with pytest.warns(UserWarning, match="missing from font"):
        FigureCanvasAgg(fig).draw()


def test_the_font_holds_the_common_characters_and_full_width_punctuation():
    """A learner titles a figure in their own words: the 3,500 characters of level one of
    《通用规范汉字表》 and the full-width punctuation are in the font (issue 52)."""
    common = TOOL.common_characters()
    assert len(common) == 3500 and all("\u4e00" <= c <= "\u9fff" for c in common)
    assert {"的", "我", "集", "损", "练"} <= common and "龘" not in common
    cmap = TTFont(BUNDLED_FONT).getBestCmap()
    missing = sorted(c for c in common | TOOL.PUNCTUATION if ord(c) not in cmap)
    assert not missing, f"{''.join(missing)[:40]}: not in {BUNDLED_FONT.name}; make it again"


def test_without_a_cjk_font_a_learners_own_chinese_title_draws(no_installed_cjk_font):
    """Titles the course never writes, in common characters, draw with the package's font and
    no missing-glyph warning (on Colab, before issue 52, they were empty boxes)."""
    titles = ["我的结果", "集合", "训练损失", "验证集准确率（第 3 轮）", "模型预测：猫、狗、鸟？"]
    course = drawn_characters()
    assert any(c not in course for t in titles for c in t if CJK.match(c))  # not the course's
    family = _figure_text.figure_font()["fontfamily"]
    fig = Figure()
    ax = fig.add_subplot()
    ax.set_title(titles[0], fontfamily=family)
    ax.set_xlabel(titles[2], fontfamily=family)
    for n, title in enumerate(titles):
        fig.text(0.01, n / len(titles), title, fontfamily=family)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" fails here
        FigureCanvasAgg(fig).draw()
