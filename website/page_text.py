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
