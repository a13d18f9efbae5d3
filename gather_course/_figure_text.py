"""Text in figures: a CJK font where the learner reads Chinese, and :func:`_fig`.

Plotting's side of the translations (it imports matplotlib, so :mod:`gather_course._i18n`,
which every part of the package imports, does not hold it).

>>> _fig("expected") in ("expected", "期望")
True
"""

from __future__ import annotations

import functools
from pathlib import Path

from ._i18n import _, language

# Fonts that draw Simplified Chinese, most common first (Linux, macOS, Windows).
_CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "WenQuanYi Zen Hei",
    "Source Han Sans SC",
    "PingFang SC",
    "Microsoft YaHei",
    "SimHei",
)


# The package's own: a subset of Noto Sans CJK SC (SIL OFL 1.1, its licence beside it) with
# every character the course draws, for a machine with none of the above (Colab, Binder, a
# bare Linux). Registered by path: a font installed after matplotlib built its cache is not
# seen. Made by tools/cjk_font.py.
BUNDLED_FONT = Path(__file__).resolve().parent / "fonts" / "GatherCourseSansSC-Regular.otf"
BUNDLED_FAMILY = "Gather Course Sans SC"


@functools.cache
def _cjk_font() -> str | None:
    import logging

    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    font = next((name for name in _CJK_FONTS if name in installed), None)
    if font is None and BUNDLED_FONT.is_file():
        if BUNDLED_FAMILY not in installed:
            font_manager.fontManager.addfont(str(BUNDLED_FONT))
        font = BUNDLED_FAMILY
    if font is not None:  # a CJK font with one weight (WenQuanYi's is 500) is no warning
        logging.getLogger("matplotlib.font_manager").addFilter(_SameFontOtherWeight(font))
    return font


class _SameFontOtherWeight:
    """Drops matplotlib's "findfont: Failed to find font weight normal for FONT, now using
    500" for the CJK font alone: it draws every weight, and the note would land in a cell."""

    def __init__(self, font: str) -> None:
        self.font = font

    def filter(self, record: object) -> bool:
        message = str(getattr(record, "getMessage", lambda: "")())
        return not (
            message.startswith("findfont: Failed to find font weight") and self.font in message
        )


def figure_font() -> dict[str, list[str]]:
    """Text keywords for figures: a CJK fallback font when the learner reads Chinese.

    Empty in English, and in Chinese when no CJK font is installed and the package's own is
    missing (figures then stay English: see :func:`_fig`).
    """
    font = _cjk_font() if language() == "zh" else None
    if font is None:
        return {}
    from matplotlib import rcParams

    return {"fontfamily": [*rcParams["font.sans-serif"][:1], font]}


def _fig(message: str) -> str:
    """``message`` for a figure: translated only where a font can draw the translation."""
    return _(message) if figure_font() else message


def use_cjk_fallback() -> bool:
    """In a Chinese notebook, let matplotlib draw Chinese in any figure: the default family
    becomes the first sans-serif font, then the CJK font (Latin text looks as before; a
    Chinese character falls back to the CJK font; matplotlib falls back only between named
    families). Called when the drawings load; True when it applied."""
    font = _cjk_font() if language() == "zh" else None
    from matplotlib import rcParams

    if font is None or list(rcParams["font.family"]) != ["sans-serif"]:
        return False  # English, no CJK font, or a family the learner chose: left as it is
    rcParams["font.family"] = figure_font()["fontfamily"]
    return True
