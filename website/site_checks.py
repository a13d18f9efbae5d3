"""The built site in Chromium, as readers meet it: on a phone, with a screen reader, searching
in Chinese. ``website/build.py --check-browser`` runs these after its own look at a lecture.

- every lecture and exercise page of both languages fits a 390 px screen (no sideways
  scrolling: long inline code wraps, code blocks and tables scroll in their own box);
- every figure has an alt text that says what it shows (not empty, not its file's name) and
  is stored at least twice the width it is shown at on a desktop (sharp on a phone and on a
  high-density screen);
- the Chinese site's search finds pages for the course's own words, and tells what it found
  in Chinese (its heading and its summary line, which Sphinx's own catalog left in English);
- both home pages give the README's clone-and-install line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

PHONE = 390
DESKTOP = 1280
SEARCHES = {"zh": ("索引", "注意力头", "gather", "torch"), "en": ("gather", "index")}
_LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
_FILE_LIKE = re.compile(r"(^|/)[0-9a-f]{16,}|\.(png|jpe?g|gif|svg)$", re.IGNORECASE)


def wide_pages(browser: Any, base: str, paths: Iterable[str]) -> list[str]:
    """Pages wider than a phone's screen: (path, width)."""
    problems = []
    page = browser.new_page(viewport={"width": PHONE, "height": 800})
    try:
        for path in paths:
            page.goto(base + path, wait_until="load")
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > PHONE:
                wide = page.evaluate(
                    """w => Array.from(document.querySelectorAll('article *'))
                    .filter(e => e.getBoundingClientRect().right > w + 1 &&
                                 !e.closest('pre, .highlight, table, .pst-scrollable-table-container'))
                    .slice(0, 3).map(e => e.tagName + ': ' + e.textContent.trim().slice(0, 60))""",
                    PHONE,
                )
                problems.append(f"{path}: {width} px wide at {PHONE} px ({'; '.join(wide)})")
    finally:
        page.close()
    return problems


def figure_problems(browser: Any, base: str, paths: Iterable[str]) -> list[str]:
    """Figures without a real alt text, or stored under twice their desktop width."""
    problems = []
    page = browser.new_page(viewport={"width": DESKTOP, "height": 900})
    try:
        for path in paths:
            page.goto(base + path, wait_until="load")
            page.wait_for_function(
                "Array.from(document.images).every(i => i.complete)", timeout=30_000
            )
            figures = page.eval_on_selector_all(
                "article img",
                "els => els.map(e => [e.getAttribute('alt') || '', e.naturalWidth, "
                "e.getBoundingClientRect().width, e.getAttribute('src')])",
            )
            for alt, natural, shown, src in figures:
                name = src.rsplit("/", 1)[-1][:16]
                if not alt.strip() or _FILE_LIKE.search(alt.strip()):
                    problems.append(f"{path}: figure {name}… has no alt text ({alt!r})")
                if shown and natural < 2 * shown - 1:
                    problems.append(
                        f"{path}: figure {name}… is stored {natural} px wide, shown {shown:.0f} px"
                    )
    finally:
        page.close()
    return problems


def search_problems(browser: Any, base: str) -> list[str]:
    """Searches that find nothing, or a search page that stops with an error."""
    problems = []
    for lang, terms in SEARCHES.items():
        prefix = "zh/" if lang == "zh" else ""
        for term in terms:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            try:
                page.goto(f"{base}{prefix}search.html?q={term}", wait_until="load")
                try:
                    page.wait_for_function(
                        "document.querySelectorAll('#search-results ul.search li').length > 0",
                        timeout=15_000,
                    )
                except Exception:  # noqa: BLE001 - no result within the wait: reported below
                    pass
                found = page.locator("#search-results ul.search li").count()
                if errors or not found:
                    problems.append(
                        f"search {lang} {term!r}: {found} results"
                        + (f"; the page raised {errors[0]}" if errors else "")
                    )
                elif lang == "zh":
                    problems += _english_in_search_words(page, term)
            finally:
                page.close()
    return problems


def _english_in_search_words(page: Any, term: str) -> list[str]:
    """English in the Chinese search page's own words: its heading and its summary line."""
    page.wait_for_function(
        "(document.querySelector('#search-results p.search-summary') || {}).innerText",
        timeout=15_000,
    )
    words = page.eval_on_selector_all(
        "#search-results > h2, #search-results > p.search-summary",
        "els => els.map(e => e.innerText.trim())",
    )
    return [
        f"search zh {term!r}: the page says {text!r} (English on the Chinese site)"
        for text in words
        if _LATIN_WORD.search(text)
    ]


def home_problems(browser: Any, base: str, clone: str) -> list[str]:
    """Home pages that do not give the README's clone line."""
    problems = []
    page = browser.new_page()
    try:
        for path in ("index.html", "zh/index.html"):
            page.goto(base + path, wait_until="load")
            if clone not in page.locator("article").inner_text():
                problems.append(f"{path}: no `{clone}` line (the README's install command)")
    finally:
        page.close()
    return problems
