"""Words the website derives from the course: an alt text for each figure, and the course's
own terms for the Chinese search. Standard library only (the tests use it without Sphinx).

>>> figure_alt('fig = draw_gather(x, 1, idx, title="gather along dim 1")', "", "Lecture 01")
'gather along dim 1'
>>> figure_alt("# the loss curve\\nplt.plot(losses)", "", "Lecture 01")
'the loss curve'
>>> first_sentence("Each row picks its own columns. Then we flatten.")
'Each row picks its own columns.'
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

# A figure's title as the code gives it: title="...", set_title("..."), suptitle("...")
_TITLE = re.compile(r"""(?:\btitle\s*=\s*|set_title\(\s*|suptitle\(\s*)[rf]?(["'])(.+?)\1""")
_COMMENT = re.compile(r"^\s*#\s*(.+?)\s*$", re.MULTILINE)
_SENTENCE = re.compile(r"(.+?[.!?。！？])(?:\s|$)", re.DOTALL)
_MARKUP = re.compile(r"`|\*\*|\$")  # Markdown's code and bold marks, TeX's dollars


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of ``text``, on one line, at most ``limit`` characters."""
    text = " ".join(_MARKUP.sub("", text).split())
    found = _SENTENCE.match(text)
    sentence = found[1] if found else text
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def figure_alt(source: str, before: str, page: str) -> str:
    """What a figure shows, for those who cannot see it: its title as the cell's code gives
    it, else the cell's first comment, else the first sentence of the text just before the
    cell (``before``), else the page's title (``page``)."""
    for found in (_TITLE.search(source), _COMMENT.search(source)):
        if found:
            text = found.group(found.lastindex or 1).strip()
            if text and "{" not in text:  # an f-string's braces say nothing to a listener
                return first_sentence(text)
    return first_sentence(before) if before.strip() else page


def search_words(glossary: Path) -> list[str]:
    """The Chinese terms of ``zh/glossary.md``'s table (its first column, without what is in
    brackets): whole words for the search index, so that 注意力头 finds the lecture."""
    words = []
    for line in glossary.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or set(cells[0]) <= {"-", ":", " "} or cells[0] == "中文":
            continue
        term = re.sub(r"[（(].*?[）)]", "", cells[0]).strip()
        if re.search(r"[\u4e00-\u9fff]", term) and " " not in term:
            words.append(term)
    return words


_CELL = '<div class="cell docutils container">'
_PRE = re.compile(r'<div class="cell_input.*?<pre>(.*?)</pre>', re.DOTALL)
_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.DOTALL)
_IMG_ALT = re.compile(r'(<img alt=")[^"]*(")')


def plain_text(html_text: str) -> str:
    """The text of an HTML fragment: tags dropped, entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", html_text))


def _name_figures(part: str, alt: str) -> str:
    """Every ``<img alt="...">`` of one cell's HTML named ``alt`` (numbered when several)."""
    count = len(_IMG_ALT.findall(part))
    if count == 1:
        return _IMG_ALT.sub(lambda m: m[1] + alt + m[2], part)
    numbered = iter(range(1, count + 1))
    return _IMG_ALT.sub(lambda m: f"{m[1]}{alt} ({next(numbered)}/{count}){m[2]}", part)


def with_alt_texts(body: str, page: str) -> str:
    """Each figure of a notebook page says what it shows (a screen reader read its file's
    hash): its title in the cell's code, the cell's first comment, or the first sentence
    of the text just before the cell, in the page's language."""
    parts = body.split(_CELL)
    before = [plain_text(p) for p in _PARAGRAPH.findall(parts[0])]
    out = [parts[0]]
    for part in parts[1:]:
        code = _PRE.search(part)
        alt = html.escape(
            figure_alt(plain_text(code[1]) if code else "", (before or [""])[-1], page)
        )
        out.append(_name_figures(part, alt))
        before += [plain_text(p) for p in _PARAGRAPH.findall(part)]
    return _CELL.join(out)


# A section whose title has no ASCII letters gets the id "id1" from docutils; MyST puts the
# title's own slug on a span just inside it.
_SLUGGED = re.compile(r'<section[^>]*? id="(id\d+)"[^>]*>\s*<span id="([^"]+)"></span>')


def readable_anchors(body: str, toc: str) -> tuple[str, str]:
    """Links to a section (its heading's ``#`` and the page's table of contents) by its
    title's slug (``#1-一句话一个公式``), not ``#id1``; the ``id1`` anchor stays, for old links.

    >>> readable_anchors('<section id="id1">\\n<span id="1-公式"></span><a href="#id1">', '<a href="#id1">')
    ('<section id="id1">\\n<span id="1-公式"></span><a href="#1-公式">', '<a href="#1-公式">')
    """
    for old, new in _SLUGGED.findall(body):
        body = body.replace(f'href="#{old}"', f'href="#{new}"')
        toc = toc.replace(f'href="#{old}"', f'href="#{new}"')
    return body, toc


# The themes' own words that reach a Chinese page in English: pydata-sphinx-theme's zh
# catalog lacks the first three, and sphinx-book-theme writes the rest into its templates
# untranslated. Each is replaced where the page has it as an attribute or as a button's text.
THEME_WORDS_ZH = {
    "Color mode": "颜色模式",
    "System Settings": "跟随系统",
    "Link to this heading": "指向此标题的链接",
    "Toggle primary sidebar": "显示或隐藏导航栏",
    "Toggle secondary sidebar": "显示或隐藏本页目录",
    "Main": "主导航",
    "Page": "本页目录",
    "Search...": "搜索…",
}
_UI_WORDS = re.compile(r'((?:title|aria-label|placeholder)=")([^"]*)(")|(>)([^<>]*?)(</button>)')


def theme_words_in_chinese(page: str) -> str:
    """``page`` with the themes' English words (:data:`THEME_WORDS_ZH`) in Chinese.

    >>> theme_words_in_chinese('<i title="System Settings"></i><button>System Settings</button>')
    '<i title="跟随系统"></i><button>跟随系统</button>'
    >>> theme_words_in_chinese('<p>Main</p>')  # the page's own text is never touched
    '<p>Main</p>'
    """

    def chinese(found: re.Match) -> str:
        start, words, end = found.group(1, 2, 3) if found[1] else found.group(4, 5, 6)
        return start + THEME_WORDS_ZH.get(words.strip(), words) + end

    return _UI_WORDS.sub(chinese, page)


def english_ui_words(page: str) -> list[str]:
    """The English words of a Chinese page's controls: titles, ARIA labels, placeholders and
    buttons' texts that hold a Latin word and no Chinese. An element marked ``lang="en"``
    (the switch to the English page) is English on purpose, and a key's name (``<kbd>``)
    is printed on the key.

    >>> english_ui_words('<a title="Back to top"></a><a title="回到顶部"></a>')
    ['Back to top']
    >>> english_ui_words('<a lang="en" title="This page in English">English</a>')
    []
    >>> english_ui_words('<button>搜索 <kbd>Ctrl</kbd>+<kbd>K</kbd></button><button>Close</button>')
    ['Close']
    """
    reader = _Controls()
    reader.feed(page)
    found = []
    for words in reader.words:
        words = words.strip()
        latin, chinese = re.search(r"[A-Za-z]{3,}", words), re.search(r"[\u4e00-\u9fff]", words)
        if latin and not chinese and words not in found:
            found.append(words)
    return found


class _Controls(HTMLParser):
    """The words of a page's controls (see :func:`english_ui_words`)."""

    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self._buttons = 0
        self._keys = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        self._buttons += tag == "button"
        self._keys += tag == "kbd"
        if (named.get("lang") or "").startswith("en"):
            return
        self.words += [v for k, v in attrs if k in ("title", "aria-label", "placeholder") and v]

    def handle_endtag(self, tag: str) -> None:
        if tag == "button":
            self._buttons = max(0, self._buttons - 1)
        if tag == "kbd":
            self._keys = max(0, self._keys - 1)

    def handle_data(self, data: str) -> None:
        if self._buttons and not self._keys:
            self.words.append(data)
