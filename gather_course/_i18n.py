"""The learner's language: English, or the edition ``GATHER_COURSE_LANG`` names (``zh``).

Messages are marked with ``_()`` (translated where they are shown) or ``N_()`` (marked only,
translated later with ``_()``), and their translations live in gettext catalogs,
``locale/<lang>/LC_MESSAGES/gather_course.po``, read through Babel. A language without a
catalog, or a message without a translation, shows the English text.

>>> import os; os.environ.pop(LANG_ENV, None) and None
>>> _("Correct")
'Correct'
"""

from __future__ import annotations

import functools
import gettext
import io
import os
from importlib.resources import files

LANG_ENV = "GATHER_COURSE_LANG"
_DOMAIN = "gather_course"


def language() -> str:
    """``zh`` for ``GATHER_COURSE_LANG=zh`` (also ``zh_CN``, ``zh-Hans``), else ``en``."""
    value = os.environ.get(LANG_ENV, "").strip().lower().replace("-", "_")
    return "zh" if value.startswith("zh") else "en"


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
