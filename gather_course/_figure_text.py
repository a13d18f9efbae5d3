"""Text in figures: a CJK font where the learner reads Chinese, and :func:`_fig`.

Plotting's side of the translations (it imports matplotlib, so :mod:`gather_course._i18n`,
which every part of the package imports, does not hold it).

>>> _fig("expected") in ("expected", "期望")
True
"""

from __future__ import annotations

import functools

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


@functools.cache
def _cjk_font() -> str | None:
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    return next((name for name in _CJK_FONTS if name in installed), None)


def figure_font() -> dict[str, list[str]]:
    """Text keywords for figures: a CJK fallback font when the learner reads Chinese.

    Empty in English, and in Chinese when no CJK font is installed (figures then stay English:
    see :func:`_fig`).
    """
    font = _cjk_font() if language() == "zh" else None
    if font is None:
        return {}
    from matplotlib import rcParams

    return {"fontfamily": [*rcParams["font.sans-serif"][:1], font]}


def _fig(message: str) -> str:
    """``message`` for a figure: translated only where a font can draw the translation."""
    return _(message) if figure_font() else message
