"""The learner's language: English, or Chinese (``zh``); :func:`language` says which.

A command of the learner's speaks the language of the working copy it is about (the edition
``start --lang`` copied). Else ``GATHER_COURSE_LANG`` decides; without it, a notebook of the
Chinese edition speaks Chinese (JupyterLab tells the kernel which notebook it runs,
``JPY_SESSION_NAME``, and that notebook's metadata says ``"gather_course": {"lang": "zh"}``),
and elsewhere the locale does (``LANG=zh_CN.UTF-8``). Anything else is English.

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
    """The learner's language, ``zh`` or ``en``, from the first of: the working copy a
    command runs for (:func:`choosing`); ``GATHER_COURSE_LANG`` (``zh``, ``zh_CN``,
    ``zh-Hans``: Chinese; anything else: English); the notebook in hand
    (:func:`about_notebook`), or the one JupyterLab runs this kernel for; the locale
    (``LC_ALL``, ``LC_MESSAGES``, ``LANG``: ``zh_*`` is Chinese); else English."""
    chosen = _CHOSEN.get() or setting()
    if chosen:
        return chosen
    return _ABOUT.get() or _notebook_language(os.environ.get(SESSION_ENV, "")) or _locale_language()


def setting() -> str | None:
    """The language ``GATHER_COURSE_LANG`` sets (``zh`` or ``en``), or None where it is unset."""
    value = os.environ.get(LANG_ENV, "").strip().lower().replace("-", "_")
    return ("zh" if value.startswith("zh") else "en") if value else None


def notebook_language(path: str | os.PathLike[str]) -> str | None:
    """The language of the notebook at ``path`` (``en`` for one that says none), or None
    where there is no notebook to read."""
    found = os.path.abspath(path)
    return _notebook_language(found) if os.path.isfile(found) else None


def _locale_language() -> str:
    """``zh`` where the locale's language is Chinese (``LANG=zh_CN.UTF-8``), else ``en``:
    the first of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set decides, as POSIX says."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "").strip().lower()
        if value:
            return "zh" if value.startswith("zh") else "en"
    return "en"


_ABOUT: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "gather_course_about", default=None
)
_CHOSEN: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "gather_course_chosen", default=None
)


@contextlib.contextmanager
def choosing(lang: str | None) -> Iterator[None]:
    """Speak ``lang`` meanwhile, before ``GATHER_COURSE_LANG``: the language of the working
    copy a command runs for, which the learner chose with ``start --lang`` (None: no copy,
    the usual order)."""
    token = _CHOSEN.set(("zh" if lang == "zh" else "en") if lang else None)
    try:
        yield
    finally:
        _CHOSEN.reset(token)


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
    return speaking(_notebook_language(os.path.abspath(path)) or "en")


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
def _notebook_language(path: str) -> str | None:
    """The ``gather_course.lang`` of the notebook at ``path`` (read once): ``en`` for a
    notebook that says none, None where ``path`` is no notebook."""
    if not path.endswith(".ipynb"):
        return None
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
