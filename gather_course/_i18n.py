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
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

LANG_ENV = "GATHER_COURSE_LANG"
_DOMAIN = "gather_course"


def language() -> str:
    """``zh`` for ``GATHER_COURSE_LANG=zh`` (also ``zh_CN``, ``zh-Hans``), else ``en``; unset,
    the language of the notebook in hand (:func:`about_notebook`), or of the notebook
    JupyterLab runs this kernel for."""
    value = os.environ.get(LANG_ENV, "").strip().lower().replace("-", "_")
    if not value:
        return _ABOUT.get() or _notebook_language(os.environ.get(SESSION_ENV, ""))
    return "zh" if value.startswith("zh") else "en"


_ABOUT: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "gather_course_about", default=None
)


@contextlib.contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Speak ``lang`` (``en``, ``zh``) meanwhile; ``GATHER_COURSE_LANG`` still wins."""
    token = _ABOUT.set("zh" if lang == "zh" else "en")
    try:
        yield
    finally:
        _ABOUT.reset(token)


def about_notebook(path: str | os.PathLike[str]) -> contextlib.AbstractContextManager[None]:
    """Speak the language of the notebook at ``path`` meanwhile (``GATHER_COURSE_LANG`` still
    wins): what ``gather-course check`` says about a Chinese notebook is Chinese."""
    return speaking(_notebook_language(os.path.abspath(path)))


def edition(nb: Any) -> str:
    """The edition a notebook belongs to, from its ``gather_course.lang``: ``zh`` or ``en``
    (``nb`` is an nbformat node, or the notebook's JSON as a dict)."""
    meta = nb.get("metadata") if isinstance(nb, dict) else None
    meta = meta.get("gather_course") if isinstance(meta, dict) else None
    return "zh" if isinstance(meta, dict) and meta.get("lang") == "zh" else "en"


SESSION_ENV = "JPY_SESSION_NAME"  # jupyter_server gives a notebook's kernel its path


@contextlib.contextmanager
def kernels_run(path: str | os.PathLike[str]) -> Iterator[None]:
    """Kernels started meanwhile from this process know they run the notebook at ``path``, as
    JupyterLab's do: a notebook of the Chinese edition runs in Chinese (nbval, Validate)."""
    before = os.environ.get(SESSION_ENV)
    os.environ[SESSION_ENV] = os.path.abspath(path)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SESSION_ENV, None)
        else:
            os.environ[SESSION_ENV] = before


@functools.lru_cache(maxsize=8)
def _notebook_language(path: str) -> str:
    """The ``gather_course.lang`` of the notebook at ``path`` (read once), or ``en``."""
    if not path.endswith(".ipynb"):
        return "en"
    import json

    try:
        with open(path, encoding="utf-8") as f:
            return edition(json.load(f))
    except (OSError, ValueError):
        return "en"


@functools.cache
def catalog(lang: str) -> gettext.NullTranslations:
    """The translations of ``lang`` (read once), or none for English."""
    # beside this file: the grading sandbox's bare package has no resources to ask
    path = Path(__file__).parent / "locale" / lang / "LC_MESSAGES" / f"{_DOMAIN}.po"
    if lang == "en" or not path.is_file():
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with path.open("rb") as po:
        messages = read_po(po, locale=lang, domain=_DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, messages)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def _(message: str) -> str:
    """``message`` in the learner's language."""
    return catalog(language()).gettext(message)


def N_(message: str) -> str:  # gettext's name for "mark now, translate later"
    """Mark ``message`` for translation without translating it (labels kept in English)."""
    return message


def listed(items: Iterable[str]) -> str:
    """Items of a list inside a sentence, in the learner's language: ``a, b`` (``a、b``).

    >>> listed(["a", "b"]) if language() == "en" else "a, b"
    'a, b'
    """
    return _(", ").join(items)
