"""Build the course website in both languages, then check what was built.

    python website/build.py [--out build/site] [--check-browser]

English lectures (notebooks/*.ipynb) land at the site's root, Chinese ones (zh/notebooks/,
complete, partial or empty) under zh/. Each student exercise (exercises/<a>/<a>.ipynb; the
Chinese site shows zh/exercises/, else the English ones) has its page too, at
exercises/<a>/<a>.html. Sphinx runs with -W --keep-going and nitpicky, on a staged copy of
each language's pages (build/site-work/<lang>/src/); the stored notebooks are shown as they
are, never executed. solutions/ is never read nor published: it holds the answers.

Then the built HTML is checked: every internal href and src resolves to a file, every
lecture and every exercise of each language has its page, with the language switch and the
launch links (Colab, Binder, the .ipynb download), and each exercise page shows the stored
student version, its answer cells still blank. Any failure is listed and the exit status is 1. ``--check-browser`` also opens one lecture of
each language in Chromium (Playwright) and checks that its figures loaded and its code cells
are there; screenshots go to artifacts/site/.

This module imports only the standard library at the top, so that the tests and conf.py
can use its helpers without Sphinx.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
LANGS = ("en", "zh")
PLACEHOLDER = re.compile(r"\bOWNER\b|\bREPO\b|example|your[-_]", re.IGNORECASE)
BROWSERS = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]


# --- what the site holds ---------------------------------------------------------------------


def site_lang(language: str | None) -> str:
    """``en`` or ``zh`` for a Sphinx language setting (``zh``, ``zh_CN``, ``zh-Hans``, ...)."""
    lang = (language or "en").lower()
    if lang.startswith("zh"):
        return "zh"
    if lang.startswith("en"):
        return "en"
    raise SystemExit(f"website: language must be en or zh (zh_CN also works); got {language!r}")


def lecture_dir(root: Path, lang: str) -> Path:
    """Where a language's lecture notebooks are stored."""
    return edition_root(root, lang) / "notebooks"


def lecture_names(root: Path, lang: str) -> list[str]:
    """The lectures of a language, by file stem (``01_basic_formula``), in course order."""
    folder = lecture_dir(root, lang)
    return sorted(p.stem for p in folder.glob("[0-9]*.ipynb")) if folder.is_dir() else []


def exercise_names(root: Path, lang: str = "en") -> list[str]:
    """A language's student exercise notebooks, as paths relative to its edition's root
    (``exercises/<a>/<a>.ipynb``; the Chinese ones are stored under ``zh/``)."""
    base = edition_root(root, lang)
    return sorted(p.relative_to(base).as_posix() for p in (base / "exercises").glob("*/*.ipynb"))


def edition_root(root: Path, lang: str) -> Path:
    """Where a language's edition is stored: the repository, or ``zh/`` in it."""
    return root if lang == "en" else root / lang


def exercises_shown(root: Path, lang: str) -> tuple[Path, list[str]]:
    """The exercises a language's site offers, and the root they are read from: its own,
    else the English ones."""
    own = exercise_names(root, lang)
    return (edition_root(root, lang), own) if own else (root, exercise_names(root, "en"))


def exercise_pages(root: Path, lang: str) -> list[tuple[str, str]]:
    """A language's exercise pages: (the notebook's path on the site, its stored path).

    ``("exercises/nlp/nlp.ipynb", "zh/exercises/nlp/nlp.ipynb")`` on a Chinese site with its
    own exercises, ``("exercises/nlp/nlp.ipynb", "exercises/nlp/nlp.ipynb")`` where it falls
    back to the English ones. The page is the path without ``.ipynb`` (``.html`` built), the
    stored path is what the Colab and Binder links open.
    """
    base, shown = exercises_shown(root, lang)
    return [(path, (base.relative_to(root) / path).as_posix()) for path in shown]


def page_names(root: Path, lang: str) -> set[str]:
    """The notebook pages of a language's site, by Sphinx name: ``notebooks/01_x`` for its
    lectures, ``exercises/<a>/<a>`` for its exercises (the language switch's twins)."""
    lectures = {f"notebooks/{name}" for name in lecture_names(root, lang)}
    return lectures | {path.removesuffix(".ipynb") for path, _ in exercise_pages(root, lang)}


def lecture_title(path: Path) -> str:
    """The first ``# `` heading of a notebook's first Markdown cell."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return path.stem


def project(root: Path) -> dict:
    """pyproject.toml's ``[project]`` table."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def repository(root: Path) -> str:
    """OWNER/REPO of the course on GitHub: pyproject.toml's ``[project.urls] Repository``.

    It is the one setting every link to the repository reads (Binder, Colab, the README's,
    tests/test_project.py checks them); a fork changes that line.
    """
    url = project(root).get("urls", {}).get("Repository", "")
    slug = github_slug(url)
    if slug is None or PLACEHOLDER.search(slug):
        raise SystemExit(
            "website: pyproject.toml's [project.urls] Repository must be the course's GitHub "
            f"address, https://github.com/OWNER/REPO with the real owner and name; got {url!r}"
        )
    return slug


def release_tag(root: Path) -> str:
    """The git tag of the package's version (``v0.1.0``): Colab opens the notebooks of the
    release that the notebook's first cell installs, so the two always match."""
    return "v" + project(root)["version"]


def github_slug(url: str) -> str | None:
    """OWNER/REPO of a GitHub remote URL (https or ssh), or None for any other URL."""
    m = re.fullmatch(
        r"(?:https://|ssh://git@|git@)github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?", url
    )
    return f"{m[1]}/{m[2]}" if m else None


def binder_url(repo: str, path: str) -> str:
    """A mybinder.org link that opens ``path`` of the repository in JupyterLab."""
    return f"https://mybinder.org/v2/gh/{repo}/HEAD?urlpath=lab/tree/{path}"


def colab_url(repo: str, tag: str, path: str) -> str:
    """A Google Colab link that opens ``path`` of the repository at ``tag``."""
    return f"https://colab.research.google.com/github/{repo}/blob/{tag}/{path}"


def switch_href(lang: str, pagename: str, twins: set[str]) -> str:
    """The same page in the other language, relative to ``pagename`` (``notebooks/01_x``).

    English lives at the site's root and Chinese under zh/; a page without a twin in
    ``twins`` (the other language's pages, see ``page_names``) switches to the other
    landing page.
    """
    to_other_root = "../" * pagename.count("/") + ("zh/" if lang == "en" else "../")
    if pagename in twins:
        return to_other_root + pagename + ".html"
    return to_other_root + "index.html"


# --- staging one language's pages ------------------------------------------------------------

LANDING_WORDS = {
    "en": {
        "after": "lecture {n}: ",
        "colab": "open in Colab",
        "download": "download",
        "exercises": "Graded exercises",
        "missing": "",
        "none": "",
        "exercises_intro": "",
    },
    "zh": {
        "after": "第 {n} 讲：",
        "colab": "在 Colab 中打开",
        "download": "下载",
        "exercises": "评分练习",
        "missing": "已翻译 {done} 讲，共 {total} 讲；其余各讲的中文版正在翻译中，先读英文版：",
        "none": "中文版的讲义正在翻译中，很快上线。在此之前，请读英文版：",
        "exercises_intro": "练习本目前只有英文版：",
    },
}


def _exercise_of(root: Path, lecture: Path) -> str | None:
    """The exercise a lecture points to (``exercises/<a>/<a>.ipynb``), if it names one."""
    found = re.search(r"exercises/(\w+)/\1\.ipynb", lecture.read_text(encoding="utf-8"))
    return found[0] if found and (root / found[0]).is_file() else None


def lectures_by_exercise(root: Path) -> dict[str, str]:
    """Which lecture names each exercise (``exercises/<a>/<a>.ipynb`` -> ``01_x``), as the
    English lectures say it (the Chinese ones name the same)."""
    found = {}
    for name in lecture_names(root, "en"):
        exercise = _exercise_of(root, lecture_dir(root, "en") / f"{name}.ipynb")
        if exercise is not None:
            found.setdefault(exercise, name)
    return found


def exercise_of_lecture(root: Path, lang: str, name: str) -> str | None:
    """The exercise page (``exercises/<a>/<a>``) a language's lecture ``name`` names, if that
    language's site has it."""
    exercise = _exercise_of(root, lecture_dir(root, lang) / f"{name}.ipynb")
    shown = {path for path, _ in exercise_pages(root, lang)}
    return exercise.removesuffix(".ipynb") if exercise in shown else None


def landing_sections(root: Path, lang: str) -> tuple[str, str]:
    """The Markdown of the landing page's lecture list and its exercise list."""
    words = LANDING_WORDS[lang]
    names = lecture_names(root, lang)
    lines = []
    if names:
        lines += ["```{toctree}", ":maxdepth: 1", ""]
        lines += [f"notebooks/{name}" for name in names]
        lines += ["```", ""]
    if lang != "en":
        english = [n for n in lecture_names(root, "en") if n not in names]
        if english:
            intro = words["missing"] if names else words["none"]
            total = len(set(names) | set(lecture_names(root, "en")))
            lines.append(intro.format(done=len(names), total=total))
            lines.append("")
            for name in english:
                title = _html(lecture_title(lecture_dir(root, "en") / f"{name}.ipynb"))
                lines.append(f'- <a href="../notebooks/{name}.html" hreflang="en">{title}</a>')
            lines.append("")
    exercises = []
    base, _ = exercises_shown(root, lang)
    if words["exercises_intro"] and base == root and lang != "en":
        exercises += [words["exercises_intro"], ""]
    by_exercise = lectures_by_exercise(root)
    # In the lectures' order; an exercise no lecture names comes last.
    pages = sorted(exercise_pages(root, lang), key=lambda p: (by_exercise.get(p[0], "~"), p[0]))
    for path, stored in pages:  # stored: zh/exercises/... for Chinese
        lecture = by_exercise.get(path)
        before = words["after"].format(n=lecture[:2]) if lecture else ""
        title = _html(lecture_title(base / path))
        colab = colab_url(repository(root), release_tag(root), stored)
        exercises.append(
            f'- {before}<a class="gc-exercise" href="{path.removesuffix(".ipynb")}.html">'
            f"{title}</a> (<code>{path}</code>: "
            f'<a href="{path}" download>{words["download"]}</a>, '
            f'<a class="gc-colab" href="{colab}">{words["colab"]}</a>)'
        )
    if pages:  # the pages' place in the sidebar: a toctree, hidden here (the list above shows them)
        exercises += ["", "```{toctree}", ":hidden:", f":caption: {words['exercises']}", ""]
        exercises += [
            f"{_plain(lecture_title(base / path))} <{path.removesuffix('.ipynb')}>"
            for path, _ in pages
        ]
        exercises += ["```"]
    return "\n".join(lines), "\n".join(exercises) + "\n"


def _plain(text: str) -> str:
    """A title for a toctree entry: no Markdown backticks, no ``<`` (it starts the target)."""
    return text.replace("`", "").replace("<", "(").replace(">", ")")


def exercise_page(notebook: Path) -> str:
    """The page's source of a stored exercise: its cells as stored, the one with the
    ``# `` title first (``gather-course release`` puts it there; nbgrader's header, how to
    work the notebook, comes above every cell, and a page must start with its title: MyST
    warns of a page whose headings start at H2). Nothing else moves or changes, and
    nothing runs."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    cells = nb.get("cells", [])
    for i, cell in enumerate(cells):
        source = "".join(cell["source"]) if cell["cell_type"] == "markdown" else ""
        if any(line.startswith("# ") for line in source.splitlines()):
            cells.insert(0, cells.pop(i))
            break
    return json.dumps(nb, ensure_ascii=False, indent=1) + "\n"


def _html(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def install_commands(root: Path, lang: str) -> str:
    """The README's two commands (clone and install, then start), as a Markdown code block:
    the landing page takes them from there, so the two cannot drift. The Chinese site opens
    the Chinese edition (``--lang zh``)."""
    readme = (root / "README.md").read_text(encoding="utf-8")
    commands = []
    for marker in ("<!-- setup -->", "<!-- open -->"):
        found = re.search(re.escape(marker) + r"\s*```bash\n(.+?)\n```", readme, re.DOTALL)
        if found is None:
            raise SystemExit(f"README.md: no ```bash block after {marker}")
        commands.append(found[1].strip())
    if lang == "zh":
        commands[-1] += " --lang zh"
    return "```bash\n" + "\n".join(commands) + "\n```\n"


def stage(root: Path, lang: str, src: Path) -> None:
    """Write one language's Sphinx source folder: landing page, lectures, downloads."""
    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks").mkdir(parents=True)
    extra = src / "_extra"
    (extra / "notebooks").mkdir(parents=True)
    for name in lecture_names(root, lang):
        notebook = lecture_dir(root, lang) / f"{name}.ipynb"
        shutil.copy2(notebook, src / "notebooks" / notebook.name)  # the page
        shutil.copy2(notebook, extra / "notebooks" / notebook.name)  # its download
    base, shown = exercises_shown(root, lang)
    for path in shown:  # the student version, as stored: never solutions/
        for folder in (src, extra):
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(base / path, extra / path)  # its download, byte for byte
        (src / path).write_text(exercise_page(base / path), encoding="utf-8")  # its page
    lectures, exercises = landing_sections(root, lang)
    landing = (HERE / lang / "index.md").read_text(encoding="utf-8")
    install = install_commands(root, lang)
    for marker, text in (
        ("<!-- lectures -->", lectures),
        ("<!-- exercises -->", exercises),
        ("<!-- install -->", install),
    ):
        if marker not in landing:
            raise SystemExit(f"website/{lang}/index.md: the marker {marker} is missing")
        landing = landing.replace(marker, text)
    (src / "index.md").write_text(landing, encoding="utf-8")


def sphinx_command(src: Path, out: Path, doctrees: Path, lang: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-W",
        "--keep-going",
        "-n",
        "-q",
        "-c",
        str(HERE),
        "-d",
        str(doctrees),
        "-D",
        f"language={lang}",
        str(src),
        str(out),
    ]


# --- checking the built site -----------------------------------------------------------------


class _Text(HTMLParser):
    """Collects the text of a page, without its scripts and styles."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def page_text(html: str) -> str:
    """What a page says: its text, tags left out and entities decoded (code as typed)."""
    parser = _Text()
    parser.feed(html)
    return "".join(parser.parts)


def answer_cells(notebook: Path) -> list[tuple[str, str]]:
    """The code answer cells of a stored exercise, as (grade_id, source): nbgrader's
    ``solution`` cells, which the student version holds blank (``raise NotImplementedError()``)."""
    cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    return [
        (cell["metadata"]["nbgrader"].get("grade_id", "?"), "".join(cell["source"]).strip())
        for cell in cells
        if cell["cell_type"] == "code"
        and cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    ]


def solution_shown(html: str, notebook: Path) -> list[str]:
    """Why an exercise's page may show a solution: nbgrader's solution markers on it, or an
    answer cell that is not the stored student version's (blank) one. Empty when sound."""
    text = page_text(html)
    problems = [
        f"it shows nbgrader's {marker} marker: a solution"
        for marker in ("BEGIN SOLUTION", "END SOLUTION")
        if marker in text
    ]
    for grade_id, source in answer_cells(notebook):
        if source not in text:
            problems.append(
                f"its answer cell {grade_id} is not the student version's "
                f"({source.splitlines()[-1].strip() if source else 'empty'}): "
                "a solution, or a stale copy"
            )
    return problems


class _Links(HTMLParser):
    """Collects the href and src attributes of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("href", "src") and value is not None:
                self.links.append(value)


def page_links(html: str) -> list[str]:
    """Every href and src of a page, in order."""
    parser = _Links()
    parser.feed(html)
    return parser.links


def _internal_target(page: Path, link: str, site: Path) -> Path | None:
    """The file an internal link points to, or None for an external link or an anchor."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or not parts.path:
        return None  # https:, mailto:, data:, javascript:, //host, or "#anchor" alone
    if parts.path.startswith("/"):
        return site / "__absolute__" / parts.path.lstrip("/")  # never works on a project site
    return (page.parent / unquote(parts.path)).resolve()


def check_links(site: Path) -> list[str]:
    """Problems with internal links: each names the page, the link and what is missing."""
    site = site.resolve()
    problems = []
    for page in sorted(site.rglob("*.html")):
        if "_static" in page.relative_to(site).parts:
            continue  # the themes' template fragments, not pages
        for link in page_links(page.read_text(encoding="utf-8", errors="replace")):
            target = _internal_target(page, link, site)
            if target is None:
                continue
            rel = page.relative_to(site).as_posix()
            if "__absolute__" in target.parts:
                problems.append(f"{rel}: {link!r} is an absolute path; expected a relative one")
            elif not target.is_relative_to(site):
                problems.append(f"{rel}: {link!r} leaves the site")
            elif not (target.is_file() or (target / "index.html").is_file()):
                problems.append(f"{rel}: {link!r} points to nothing ({target.relative_to(site)})")
    return problems


def lang_root(site: Path, lang: str) -> Path:
    """Where a language's pages are in the built site."""
    return site if lang == "en" else site / lang


def check_pages(site: Path, root: Path) -> list[str]:
    """Problems with the page list: each language's landing and every lecture's page."""
    problems = []
    for lang in LANGS:
        base = lang_root(site, lang)
        if not (base / "index.html").is_file():
            problems.append(f"{lang}: no landing page {base.relative_to(site) / 'index.html'}")
        for name in lecture_names(root, lang):
            page = base / "notebooks" / f"{name}.html"
            rel = page.relative_to(site).as_posix()
            if not page.is_file():
                problems.append(f"{lang}: lecture {name} has no page (expected {rel})")
                continue
            html = page.read_text(encoding="utf-8", errors="replace")
            problems += _bar_missing(rel, html, "https://colab.research.google.com/github/")
            if not (page.parent / f"{name}.ipynb").is_file():
                problems.append(f"{rel}: its download {name}.ipynb is missing")
        for path, stored in exercise_pages(root, lang):
            problems += _check_exercise_page(site, root, lang, path, stored)
    published = [
        p for p in site.rglob("*") if p.is_file() and "solutions" in p.relative_to(site).parts
    ]
    problems += [f"{p.relative_to(site)}: solutions must not be published" for p in published]
    return problems + _english_controls(site)


def _english_controls(site: Path) -> list[str]:
    """The Chinese pages' controls (tooltips, ARIA labels, buttons) still in English: the
    themes' words that ``conf.py`` translates, or new ones an upgrade of a theme brought."""
    if str(HERE) not in sys.path:  # (imported as a module by the tests: website/ is no package)
        sys.path.insert(0, str(HERE))
    from page_text import english_ui_words

    problems = []
    for page in sorted(lang_root(site, "zh").rglob("*.html")):
        english = english_ui_words(page.read_text(encoding="utf-8", errors="replace"))
        if english:
            problems.append(f"{page.relative_to(site)}: English on the Chinese site: {english}")
    return problems


def _bar_missing(rel: str, html: str, colab: str, to: str = "") -> list[str]:
    """What a notebook page's bar lacks: the language switch, the Binder link, the Colab link
    (``colab`` is what it must hold; ``to`` says where it opens) and the .ipynb download."""
    return [
        f"{rel}: {what} is missing"
        for needle, what in (
            ('class="gc-switch', "the language switch"),
            ("https://mybinder.org/v2/gh/", "the Binder link"),
            (colab, f"the Colab link{to}"),
            ('class="gc-download"', "the .ipynb download"),
        )
        if needle not in html
    ]


def _check_exercise_page(site: Path, root: Path, lang: str, path: str, stored: str) -> list[str]:
    """Problems with one exercise's page: it exists, carries the language switch and the
    launch bar (its Colab link opens ``stored``), its download is the stored student
    notebook, and it shows no solution."""
    page = lang_root(site, lang) / (path.removesuffix(".ipynb") + ".html")
    rel = page.relative_to(site).as_posix()
    if not page.is_file():
        return [f"{lang}: exercise {path} has no page (expected {rel})"]
    html = page.read_text(encoding="utf-8", errors="replace")
    colab = colab_url(repository(root), release_tag(root), stored)
    problems = _bar_missing(rel, html, f'href="{colab}"', f" (to {stored})")
    download = page.with_suffix(".ipynb")
    if not download.is_file():
        problems.append(f"{rel}: its download {download.name} is missing")
    elif download.read_bytes() != (root / stored).read_bytes():
        problems.append(f"{rel}: its download {download.name} is not the stored {stored}")
    problems += [f"{rel}: {why}" for why in solution_shown(html, root / stored)]
    return problems


# --- the browser check -----------------------------------------------------------------------


def find_browser() -> str | None:
    """The Chromium to drive: GATHER_COURSE_BROWSER, else the first working one on PATH."""
    named = os.environ.get("GATHER_COURSE_BROWSER")
    for name in [named] if named else BROWSERS:
        path = shutil.which(name)
        if not path:
            continue
        try:
            run = subprocess.run(
                [path, "--version"], capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if run.returncode == 0 and re.search(r"\d+\.\d+", run.stdout):
            return path
    return None


@dataclass
class _Seen:
    url: str
    images: int
    broken_images: list[str]
    code_cells: int
    switch_visible: bool


def _serve(site: Path):
    """A local HTTP server for the built site, in a thread; returns (server, base URL)."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.handle_error = lambda request, address: None  # a page closed mid-download
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def check_browser(site: Path, root: Path, shots: Path) -> list[str]:
    """Open one lecture per language in Chromium: figures loaded, code cells there."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return ['--check-browser needs Playwright: pip install -e ".[test]"']
    chromium = find_browser()
    if chromium is None:
        return [
            "--check-browser needs a Chromium: apt-get install chromium (Debian), Google Chrome "
            "(Ubuntu), or name one in GATHER_COURSE_BROWSER"
        ]
    shots.mkdir(parents=True, exist_ok=True)
    problems = []
    server, base = _serve(site)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium)
            try:
                for lang in LANGS:
                    names = lecture_names(root, lang)
                    prefix = "" if lang == "en" else f"{lang}/"
                    if not names:
                        print(f"browser: {lang} has no lectures yet; its landing page instead")
                    path = prefix + (f"notebooks/{names[0]}.html" if names else "index.html")
                    seen = _look(browser, base + path, shots / f"{lang}.png")
                    problems += _judge(lang, path, seen, lecture=bool(names))
                problems += _as_readers_meet_it(browser, base, root)
            finally:
                browser.close()
    finally:
        server.shutdown()
    return problems


def _as_readers_meet_it(browser, base: str, root: Path) -> list[str]:
    """Every page on a phone, every figure's alt text and size, the Chinese search, the
    home pages' clone line (:mod:`site_checks`)."""
    if str(HERE) not in sys.path:  # (imported as a module by the tests: website/ is no package)
        sys.path.insert(0, str(HERE))
    import site_checks

    pages = []
    for lang in LANGS:
        prefix = "" if lang == "en" else f"{lang}/"
        pages += [f"{prefix}notebooks/{name}.html" for name in lecture_names(root, lang)]
        pages += [
            prefix + path.removesuffix(".ipynb") + ".html" for path, _ in exercise_pages(root, lang)
        ]
    clone = re.search(r"git clone \S+", (root / "README.md").read_text(encoding="utf-8"))
    problems = site_checks.wide_pages(browser, base, pages)
    problems += site_checks.figure_problems(browser, base, pages)
    problems += site_checks.search_problems(browser, base)
    problems += site_checks.home_problems(browser, base, clone[0] if clone else "git clone")
    if not problems:
        print(
            f"browser: {len(pages)} pages fit {site_checks.PHONE} px, their figures have alt "
            "texts and twice their shown width, Chinese search finds, both home pages clone"
        )
    return problems


def _look(browser, url: str, shot: Path) -> _Seen:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(url, wait_until="load")
        page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=30_000)
        broken = page.evaluate(
            "Array.from(document.querySelectorAll('article img'))"
            ".filter(i => !(i.naturalWidth > 0)).map(i => i.getAttribute('src'))"
        )
        images = page.locator("article img").count()
        cells = page.locator("div.cell div.cell_input").count()
        switch = page.locator(".gc-switch")
        visible = switch.count() == 1 and switch.is_visible()
        page.screenshot(path=str(shot))
        figure = page.locator("article div.cell_output img").first
        if figure.count():
            figure.scroll_into_view_if_needed()
            page.screenshot(path=str(shot.with_name(shot.stem + "-figure.png")))
        return _Seen(url, images, broken, cells, visible)
    finally:
        page.close()


def _judge(lang: str, path: str, seen: _Seen, lecture: bool) -> list[str]:
    problems = []
    if not seen.switch_visible:
        problems.append(f"browser {lang} {path}: the language switch is not visible")
    if seen.broken_images:
        problems.append(f"browser {lang} {path}: images did not load: {seen.broken_images}")
    if lecture and seen.images == 0:
        problems.append(f"browser {lang} {path}: expected the lecture's figures, found no img")
    if lecture and seen.code_cells == 0:
        problems.append(f"browser {lang} {path}: expected code cells, found none")
    if not problems:
        print(f"browser {lang} {path}: {seen.images} figures loaded, {seen.code_cells} code cells")
    return problems


# --- the command -----------------------------------------------------------------------------


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/site", help="the site's folder (build/site)")
    parser.add_argument(
        "--check-browser", action="store_true", help="also open lectures in Chromium"
    )
    parser.add_argument("--shots", default="artifacts/site", help="screenshots of --check-browser")
    args = parser.parse_args(argv)
    out = (ROOT / args.out).resolve()
    work = out.parent / f"{out.name}-work"  # staged sources and doctrees, outside the site
    repository(ROOT)  # the links' one setting: fails here, before any page, if unset
    for folder in (out, work):  # from scratch: a cached doctree would hide its warnings
        if folder.exists():
            shutil.rmtree(folder)
    failed = []
    for lang in LANGS:
        start = time.perf_counter()
        src = work / lang / "src"
        stage(ROOT, lang, src)
        # Sphinx writes into work/<lang>/html, then the pages move into the site: MyST-NB
        # keeps its intermediate files next to the output folder (work/<lang>/jupyter_execute),
        # so they stay out of the published site.
        html = work / lang / "html"
        cmd = sphinx_command(src, html, work / lang / "doctrees", lang)
        run = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "GATHER_SITE_LANG": lang})
        if html.is_dir():
            shutil.copytree(html, lang_root(out, lang), dirs_exist_ok=True)
        if run.returncode != 0:
            failed.append(
                f"{lang}: sphinx-build exited {run.returncode} (its messages above; paths under "
                f"{src} are staged copies of "
                f"{lecture_dir(ROOT, lang).relative_to(ROOT)}/, of the exercises shown and of "
                f"website/{lang}/index.md)"
            )
        count = len(lecture_names(ROOT, lang))
        exercises = len(exercise_pages(ROOT, lang))
        took = time.perf_counter() - start
        print(f"website: {lang}, {count} lectures, {exercises} exercises, built in {took:.1f} s")
    problems = failed + check_pages(out, ROOT) + check_links(out)
    if args.check_browser and not failed:
        problems += check_browser(out, ROOT, (ROOT / args.shots).resolve())
    if problems:
        print(f"website: {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"website: {out} ({_size(out) / 1e6:.1f} MB), every internal link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
