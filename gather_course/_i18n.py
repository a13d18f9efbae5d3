"""The learner's language: English, or the edition ``GATHER_COURSE_LANG`` names (``zh``).

Without the setting, a notebook of the Chinese edition speaks Chinese: JupyterLab tells the
kernel which notebook it runs (``JPY_SESSION_NAME``), and that notebook's metadata says
``"gather_course": {"lang": "zh"}``. Anything else is English.

Messages are marked with ``_()`` (translated where they are shown) or ``N_()`` (marked only,
translated later with ``_()``), and their translations live in gettext catalogs,
``locale/<lang>/LC_MESSAGES/gather_course.po``, read through Babel. A language without a
catalog, or a message without a translation, shows the English text.

>>> import os; os.environ.pop(LANG_ENV, None) and None
>>> _("Correct")
'Correct'
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import gettext
import io
import os
from collections.abc import Iterator
from importlib.resources import files

LANG_ENV = "GATHER_COURSE_LANG"
_DOMAIN = "gather_course"


def language() -> str:
    """``zh`` for ``GATHER_COURSE_LANG=zh`` (also ``zh_CN``, ``zh-Hans``), else ``en``; unset,
    the language of the notebook in hand (:func:`about_notebook`), or of the notebook
    JupyterLab runs this kernel for."""
    value = os.environ.get(LANG_ENV, "").strip().lower().replace("-", "_")
    if not value:
        return _ABOUT.get() or _notebook_language(os.environ.get(_SESSION_ENV, ""))
    return "zh" if value.startswith("zh") else "en"


_ABOUT: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "gather_course_about", default=None
)


@contextlib.contextmanager
def about_notebook(path: str | os.PathLike[str]) -> Iterator[None]:
    """Speak the language of the notebook at ``path`` meanwhile (``GATHER_COURSE_LANG`` still
    wins): what ``gather-course check`` says about a Chinese notebook is Chinese."""
    token = _ABOUT.set(_notebook_language(os.path.abspath(path)))
    try:
        yield
    finally:
        _ABOUT.reset(token)


_SESSION_ENV = "JPY_SESSION_NAME"  # jupyter_server gives a notebook's kernel its path


@functools.lru_cache(maxsize=8)
def _notebook_language(path: str) -> str:
    """The ``gather_course.lang`` of the notebook at ``path`` (read once), or ``en``."""
    if not path.endswith(".ipynb"):
        return "en"
    import json

    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f).get("metadata", {}).get("gather_course", {})
    except (OSError, ValueError, AttributeError):
        return "en"
    return "zh" if isinstance(meta, dict) and meta.get("lang") == "zh" else "en"


@functools.cache
def _catalog(lang: str) -> gettext.NullTranslations:
    path = files("gather_course") / "locale" / lang / "LC_MESSAGES" / f"{_DOMAIN}.po"
    if lang == "en" or not path.is_file():
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with path.open("rb") as po:
        catalog = read_po(po, locale=lang, domain=_DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def _(message: str) -> str:
    """``message`` in the learner's language."""
    return _catalog(language()).gettext(message)


def N_(message: str) -> str:  # gettext's name for "mark now, translate later"
    """Mark ``message`` for translation without translating it (labels kept in English)."""
    return message


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


def bank_messages() -> list[tuple[str, str]]:
    """Every text of the question bank a learner can see, with where it is used.

    Titles, tasks, hints, rule wordings and test-case labels, of every question and class
    variant: ``[(text, "basics.pick_per_row (columns): hint 2"), ...]``. The bank's texts are
    plain strings in its declarations (a variant's come from edits of the public ones), so
    Babel's extractor for them is :func:`extract_bank`, and ``_()`` translates them where
    they are shown.
    """
    from .questions import exercise, exercise_ids

    found: list[tuple[str, str]] = []
    for qid in exercise_ids():
        public = exercise(qid)
        for name in ["public", *(v.name for v in public.variants)]:
            q = exercise(qid, name)
            where = f"{qid} ({name})"
            found += [(q.title, f"{where}: title"), (q.task, f"{where}: task")]
            found += [(h, f"{where}: hint {i}") for i, h in enumerate(q.hints, 1)]
            found += [(t, f"{where}: rule") for t in [*q.forbid.values(), *q.require.values()]]
            found += [(q.no_variant_why, f"{where}: why no variant")] * bool(q.no_variant_why)
            sizes = [*q.sizes, *q.large_sizes]
            found += [(s["label"], f"{where}: test case") for s in sizes if "label" in s]
    return found


def extract_bank(fileobj, keywords, comment_tags, options):
    """Babel extraction method for the bank's texts (see ``babel.cfg``)."""
    seen: dict[str, list[str]] = {}
    for text, where in bank_messages():
        seen.setdefault(text, []).append(where)
    for text, wheres in seen.items():
        yield 0, None, text, wheres
