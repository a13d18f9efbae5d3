"""Sphinx configuration of the course website, one file for both languages.

The language comes from ``-D language=en|zh`` (``zh_CN`` also works) or, without it, from
``GATHER_SITE_LANG``; ``website/build.py`` stages each language's pages and sets both.
Lecture and exercise pages are the stored notebooks, rendered as they are (never executed);
each carries a launch bar (Colab, Binder, the .ipynb download).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# A folder named build/ beside the checkout makes ruff sort these two the other way round.
# isort: off
from build import (  # noqa: E402  (website/ is not a package: found through sys.path)
    ROOT,
    binder_url,
    colab_url,
    exercise_of_lecture,
    exercise_pages,
    lecture_names,
    lectures_by_exercise,
    page_names,
    release_tag,
    repository,
    site_lang,
    switch_href,
)
from page_text import (  # noqa: E402
    plain_text,
    readable_anchors,
    search_words,
    theme_words_in_chinese,
    with_alt_texts,
)

# isort: on

project = "gather-course"
author = "the gather-course authors"
copyright = "the gather-course authors, MIT licence"
language = os.environ.get("GATHER_SITE_LANG", "en")

extensions = ["myst_nb"]
nb_execution_mode = "off"  # the stored outputs are the lecture: figures and tables as stored
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
exclude_patterns = ["_build", "**.ipynb_checkpoints", "_extra"]
templates_path = [str(HERE / "_templates")]
html_static_path = [str(HERE / "_static")]
html_css_files = ["site.css"]
html_favicon = str(HERE / "_static" / "favicon.svg")
nitpicky = True

html_theme = "sphinx_book_theme"
html_title = "gather-course"
html_copy_source = False  # the .ipynb downloads are the notebooks themselves (_extra)
html_show_sourcelink = False
html_theme_options = {
    "article_header_end": ["gc-switch.html", "article-header-buttons.html"],
    "use_download_button": False,
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "navbar_persistent": [],  # the sidebar has the search field; no second one in a top bar
}

# The words of the bar above each lecture, and of the language switch.
WORDS = {
    "en": {
        "switch": "中文",
        "switch_title": "这一页的中文版",
        "colab": "Open in Colab",
        "colab_title": "Run this lecture on Google Colab (its first cell installs the course)",
        "binder": "Open in Binder",
        "binder_title": "Run this lecture in JupyterLab on mybinder.org (nothing to install)",
        "download": "Download .ipynb",
        "local": "Open in your JupyterLab: <code>gather-course start</code>, then {path}",
        "colab_title_exercise": (
            "Work this exercise on Google Colab (its first cell installs the course)"
        ),
        "binder_title_exercise": "Work this exercise in JupyterLab on mybinder.org",
        "to_exercise": "Graded exercise: <code>{name}</code>",
        "to_exercise_title": "The graded exercise of this lecture",
        "to_lecture": "Lecture {n}",
        "to_lecture_title": "The lecture this exercise goes with",
        "title": "gather-course: torch.gather, lecture by lecture",
        "author": "the gather-course authors",
        "copyright": "the gather-course authors, MIT licence",
    },
    "zh": {
        "switch": "English",
        "switch_title": "This page in English",
        "colab": "在 Colab 中打开",
        "colab_title": "在 Google Colab 上运行本讲（第一个单元格会安装本课程）",
        "binder": "在 Binder 中打开",
        "binder_title": "在 mybinder.org 的 JupyterLab 中运行本讲（无需安装）",
        "download": "下载 .ipynb",
        "colab_title_exercise": "在 Google Colab 上完成本练习（第一个单元格会安装本课程）",
        "binder_title_exercise": "在 mybinder.org 的 JupyterLab 中完成本练习",
        "to_exercise": "评分练习：<code>{name}</code>",
        "to_exercise_title": "本讲的评分练习",
        "to_lecture": "第 {n} 讲",
        "to_lecture_title": "本练习对应的讲义",
        "local": (
            "在自己的 JupyterLab 中打开：运行 <code>gather-course start --lang zh</code>，"
            "再打开 {path}"
        ),
        "title": "gather-course：逐讲学习 torch.gather",
        "author": "gather-course 的作者们",
        "copyright": "gather-course 的作者们，MIT 许可证",
    },
}


def _config_inited(app: Sphinx, config: Config) -> None:
    """Settle the language: ``en`` or ``zh`` here, ``zh_CN`` for Sphinx's own words."""
    lang = site_lang(config.language)
    config.language = "zh_CN" if lang == "zh" else "en"
    config.html_title = WORDS[lang]["title"]
    config.gc_lang = lang
    config.author = WORDS[lang]["author"]
    config.copyright = WORDS[lang]["copyright"]
    if lang == "zh":  # the course's terms as whole words for jieba, Sphinx's Chinese splitter
        words = Path(app.srcdir).parent / "search-words.txt"
        words.write_text(
            "".join(f"{w} 100000\n" for w in search_words(ROOT / "zh" / "glossary.md")),
            encoding="utf-8",
        )
        config.html_search_options = {"dict": str(words)}
        # after Sphinx's translations.js (priority 500): the search summary's words
        app.add_js_file("zh-search.js", priority=600)
    # Staged by build.py next to the pages: the .ipynb downloads and the exercises.
    extra = Path(app.srcdir) / "_extra"
    config.html_extra_path = [str(extra)] if extra.is_dir() else []


def _page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    lang = app.config.gc_lang
    words = WORDS[lang]
    other = "zh" if lang == "en" else "en"
    context["gc_switch_href"] = switch_href(lang, pagename, page_names(ROOT, other))
    context["gc_switch_label"] = words["switch"]
    context["gc_switch_title"] = words["switch_title"]
    context["gc_switch_lang"] = "zh-Hans" if other == "zh" else "en"
    if "body" not in context:
        return
    context["body"] = with_alt_texts(context["body"], plain_text(context.get("title", "")))
    context["body"], context["toc"] = readable_anchors(context["body"], context.get("toc", ""))
    if pagename.startswith("notebooks/"):
        context["body"] = _lecture_bar(lang, pagename.split("/", 1)[1]) + context["body"]
    elif pagename in _exercises(lang):
        context["body"] = _exercise_bar(lang, pagename) + context["body"]


def _exercises(lang: str) -> dict[str, str]:
    """A language's exercise pages (``exercises/<a>/<a>``) and the stored notebook of each."""
    return {path.removesuffix(".ipynb"): stored for path, stored in exercise_pages(ROOT, lang)}


def _bar(lang: str, path: str, download: str, local: str, extra: str, exercise: bool) -> str:
    """The launch bar: Colab and Binder open the stored ``path``; the download and the link
    to the lecture or exercise are relative to the page; ``local`` is the working copy's."""
    words = WORDS[lang]
    titles = (
        (words["colab_title_exercise"], words["binder_title_exercise"])
        if exercise
        else (words["colab_title"], words["binder_title"])
    )
    return (
        '<div class="gc-launch">'
        f'<a class="gc-colab" href="{colab_url(repository(ROOT), release_tag(ROOT), path)}" '
        f'title="{titles[0]}">{words["colab"]}</a>'
        f'<a class="gc-binder" href="{binder_url(repository(ROOT), path)}" '
        f'title="{titles[1]}">{words["binder"]}</a>'
        f'<a class="gc-download" href="{download}" download>{words["download"]}</a>'
        f"{extra}"
        # the working copy `gather-course start [--lang zh]` makes holds notebooks/ and
        # exercises/ either way
        f'<span class="gc-local">{words["local"].format(path=f"<code>{local}</code>")}</span>'
        "</div>"
    )


def _lecture_bar(lang: str, name: str) -> str:
    words = WORDS[lang]
    path = ("zh/" if lang == "zh" else "") + f"notebooks/{name}.ipynb"
    exercise = exercise_of_lecture(ROOT, lang, name)
    extra = ""
    if exercise is not None:
        label = words["to_exercise"].format(name=exercise.rsplit("/", 1)[1])
        extra = (
            f'<a class="gc-exercise" href="../{exercise}.html" '
            f'title="{words["to_exercise_title"]}">{label}</a>'
        )
    return _bar(lang, path, f"{name}.ipynb", f"notebooks/{name}.ipynb", extra, exercise=False)


def _exercise_bar(lang: str, pagename: str) -> str:
    words = WORDS[lang]
    stored = _exercises(lang)[pagename]  # zh/exercises/... or, as a fallback, exercises/...
    lecture = lectures_by_exercise(ROOT).get(pagename + ".ipynb")
    extra = ""
    if lecture in lecture_names(ROOT, lang):
        extra = (
            f'<a class="gc-lecture" href="../../notebooks/{lecture}.html" '
            f'title="{words["to_lecture_title"]}">{words["to_lecture"].format(n=lecture[:2])}</a>'
        )
    name = pagename.rsplit("/", 1)[1]
    return _bar(lang, stored, f"{name}.ipynb", pagename + ".ipynb", extra, exercise=True)


def _theme_words(app: Sphinx, exception: Exception | None) -> None:
    """The Chinese site's pages with the themes' English words in Chinese (page_text)."""
    if exception is not None or app.config.gc_lang != "zh":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if (changed := theme_words_in_chinese(text)) != text:
            page.write_text(changed, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_config_value("gc_lang", "en", "html")
    app.connect("config-inited", _config_inited)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _theme_words)
    return {"parallel_read_safe": True}
