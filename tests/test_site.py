"""The course website's build script, on tiny fake trees: no Sphinx run here (it stays fast).

``python website/build.py`` builds the real site; these tests check its link checker, its
page list, the language switch, the Binder links, the staging of each language's pages
and the CI wiring.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT, website_build

build = website_build()


def _write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _notebook(path: Path, title: str, text: str = "") -> Path:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": [f"# {title}\n", text]}]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return _write(path, json.dumps(nb))


# --- the link checker -------------------------------------------------------------------------


def test_link_checker_reports_exactly_the_links_that_resolve_to_nothing(tmp_path):
    site = tmp_path / "site"
    _write(site / "img" / "a.png", "png")
    _write(site / "sub" / "index.html", "<p>sub</p>")
    _write(
        site / "index.html",
        '<a href="notebooks/01_a.html#top">ok</a> <img src="img/a.png"> <a href="#here">anchor</a>'
        ' <a href="https://example.org/x">external</a> <a href="mailto:a@b.c">mail</a>'
        ' <img src="data:image/png;base64,AAAA"> <a href="sub/">a folder with index.html</a>'
        ' <a href="notebooks/02_b.html">missing</a> <script src="_static/gone.js"></script>',
    )
    _write(
        site / "notebooks" / "01_a.html",
        '<a href="../index.html">up</a> <img src="../img/missing.png">'
        ' <a href="/abs.html">absolute</a> <a href="../../outside.html">outside</a>'
        ' <a href="01_a.html?x=1">query</a> <a href="02%20c.html">escaped</a>',
    )
    _write(site / "notebooks" / "02 c.html")
    # A theme's template fragment under _static is not a page; its Jinja is not a link.
    _write(site / "_static" / "macros.html", "<script src=\"{{ pathto('x.js', 1) }}\"></script>")

    problems = build.check_links(site)

    assert len(problems) == 5, problems
    assert any(
        p.startswith("index.html: 'notebooks/02_b.html' points to nothing") for p in problems
    )
    assert any(p.startswith("index.html: '_static/gone.js' points to nothing") for p in problems)
    assert any("'../img/missing.png' points to nothing (img/missing.png)" in p for p in problems)
    assert any("'/abs.html' is an absolute path; expected a relative one" in p for p in problems)
    assert any("'../../outside.html' leaves the site" in p for p in problems)
    assert not any("_static/macros.html" in p for p in problems)


def test_link_checker_is_quiet_on_a_sound_site(tmp_path):
    site = tmp_path / "site"
    _write(site / "index.html", '<a href="zh/index.html">中文</a>')
    _write(site / "zh" / "index.html", '<a href="../index.html">English</a>')
    assert build.check_links(site) == []


# --- the page list -----------------------------------------------------------------------------


def _course(tmp_path: Path, zh: list[str]) -> Path:
    root = tmp_path / "course"
    _notebook(root / "notebooks" / "01_a.ipynb", "01 · `gather` A", "exercises/ea/ea.ipynb")
    _notebook(root / "notebooks" / "02_b.ipynb", "02 · B")
    _write(root / "notebooks" / "scratch.ipynb", "{}")  # not a lecture: no number
    _write(root / "exercises" / "ea" / "ea.ipynb", "{}")
    _write(root / "exercises" / "aa" / "aa.ipynb", "{}")  # no lecture names it
    _write(root / "solutions" / "ea" / "ea.ipynb", "{}")
    _write(root / "pyproject.toml", (ROOT / "pyproject.toml").read_text())  # the links' setting
    for name in zh:
        _notebook(root / "zh" / "notebooks" / f"{name}.ipynb", f"{name} 中文")
    return root


LECTURE_PAGE = (
    '<a class="gc-switch btn" href="x">中文</a>'
    '<a href="https://mybinder.org/v2/gh/o/r/HEAD?urlpath=lab/tree/x">Binder</a>'
    '<a class="gc-download" href="x.ipynb">download</a>'
    '<a href="https://colab.research.google.com/github/o/r/blob/v1/x.ipynb">Colab</a>'
)


def _site(tmp_path: Path, root: Path) -> Path:
    """A built site as build.py lays it out, complete for the course at ``root``."""
    site = tmp_path / "site"
    for lang in build.LANGS:
        base = build.lang_root(site, lang)
        _write(base / "index.html")
        for name in build.lecture_names(root, lang):
            _write(base / "notebooks" / f"{name}.html", LECTURE_PAGE)
            _write(base / "notebooks" / f"{name}.ipynb", "{}")
    return site


def test_lecture_names_are_the_numbered_notebooks_and_zh_may_be_missing(tmp_path):
    root = _course(tmp_path, zh=[])
    assert build.lecture_names(root, "en") == ["01_a", "02_b"]
    assert build.lecture_names(root, "zh") == []  # no zh/notebooks/ at all
    (root / "zh" / "notebooks").mkdir(parents=True)
    assert build.lecture_names(root, "zh") == []
    _notebook(root / "zh" / "notebooks" / "02_b.ipynb", "02 · 乙")
    assert build.lecture_names(root, "zh") == ["02_b"]


@pytest.mark.parametrize("zh", [[], ["02_b"], ["01_a", "02_b"]], ids=["empty", "partial", "all"])
def test_page_check_passes_when_every_lecture_of_each_language_has_its_page(tmp_path, zh):
    root = _course(tmp_path, zh)
    assert build.check_pages(_site(tmp_path, root), root) == []


def test_page_check_names_each_missing_page_and_what_a_lecture_page_lacks(tmp_path):
    root = _course(tmp_path, zh=["01_a", "02_b"])
    site = _site(tmp_path, root)
    (site / "zh" / "notebooks" / "02_b.html").unlink()
    _write(site / "notebooks" / "01_a.html", "<p>no bar</p>")
    (site / "notebooks" / "02_b.ipynb").unlink()
    (site / "zh" / "index.html").unlink()
    _write(site / "solutions" / "ea" / "ea.ipynb", "{}")

    problems = build.check_pages(site, root)

    assert "zh: lecture 02_b has no page (expected zh/notebooks/02_b.html)" in problems
    assert "zh: no landing page zh/index.html" in problems
    for what in ("the language switch", "the Binder link", "the Colab link", "the .ipynb download"):
        assert f"notebooks/01_a.html: {what} is missing" in problems
    assert "notebooks/02_b.html: its download 02_b.ipynb is missing" in problems
    assert any("solutions must not be published" in p for p in problems)
    assert len(problems) == 8, problems


# --- the language switch, the Binder links -----------------------------------------------------


def test_language_switch_goes_to_the_twin_page_or_to_the_other_landing():
    twins = {"01_a"}
    assert build.switch_href("en", "notebooks/01_a", twins) == "../zh/notebooks/01_a.html"
    assert build.switch_href("en", "notebooks/02_b", twins) == "../zh/index.html"
    assert build.switch_href("en", "index", twins) == "zh/index.html"
    assert build.switch_href("en", "search", twins) == "zh/index.html"
    assert build.switch_href("zh", "notebooks/01_a", twins) == "../../notebooks/01_a.html"
    assert build.switch_href("zh", "index", set()) == "../index.html"


def test_site_language_accepts_sphinx_spellings_and_refuses_others():
    assert [build.site_lang(x) for x in ("en", None, "zh", "zh_CN", "zh-Hans")] == [
        "en",
        "en",
        "zh",
        "zh",
        "zh",
    ]
    with pytest.raises(SystemExit, match=r"language must be en or zh.*got 'fr'"):
        build.site_lang("fr")


@pytest.mark.parametrize(
    "url, slug",
    [
        ("https://github.com/owner/gather-course.git", "owner/gather-course"),
        ("https://github.com/owner/gather-course", "owner/gather-course"),
        ("git@github.com:owner/gather.course.git", "owner/gather.course"),
        ("ssh://git@github.com/owner/repo.git", "owner/repo"),
        ("https://gitlab.com/owner/repo.git", None),
        ("/srv/git/repo.git", None),
        ("", None),
    ],
)
def test_github_slug_reads_github_remotes_only(url, slug):
    assert build.github_slug(url) == slug


def test_repository_is_the_one_setting_in_pyproject_and_refuses_a_placeholder(tmp_path):
    assert build.repository(ROOT) == "gather-course/gather-course"
    assert build.release_tag(ROOT) == "v" + build.project(ROOT)["version"]
    for url in ("https://github.com/OWNER/REPO", "https://github.com/example/course",
                "https://gitlab.com/me/course", ""):  # fmt: skip
        (tmp_path / "pyproject.toml").write_text(
            f'[project]\nname = "x"\nversion = "1"\nurls = {{ Repository = "{url}" }}\n'
        )
        with pytest.raises(SystemExit, match="must be the course's GitHub address"):
            build.repository(tmp_path)


def test_colab_url_opens_the_notebook_of_the_release():
    assert build.colab_url("o/r", "v1.2.0", "zh/exercises/nlp/nlp.ipynb") == (
        "https://colab.research.google.com/github/o/r/blob/v1.2.0/zh/exercises/nlp/nlp.ipynb"
    )


def test_binder_url_opens_the_notebook_in_jupyterlab():
    assert build.binder_url("o/r", "zh/notebooks/01_a.ipynb") == (
        "https://mybinder.org/v2/gh/o/r/HEAD?urlpath=lab/tree/zh/notebooks/01_a.ipynb"
    )


# --- staging a language's pages ----------------------------------------------------------------


def test_staging_copies_lectures_and_downloads_but_never_solutions(tmp_path):
    root = _course(tmp_path, zh=["02_b"])
    src = tmp_path / "src"
    build.stage(root, "zh", src)
    assert sorted(p.name for p in (src / "notebooks").iterdir()) == ["02_b.ipynb"]
    assert (src / "_extra" / "notebooks" / "02_b.ipynb").is_file()
    assert (src / "_extra" / "exercises" / "ea" / "ea.ipynb").is_file()
    assert not any("solutions" in p.parts for p in src.rglob("*"))
    index = (src / "index.md").read_text(encoding="utf-8")
    assert "<!--" not in index  # both markers replaced
    assert "notebooks/02_b\n" in index and "notebooks/01_a\n" not in index


def test_zh_landing_lists_the_untranslated_lectures_in_english(tmp_path):
    root = _course(tmp_path, zh=["02_b"])
    lectures, exercises = build.landing_sections(root, "zh")
    assert "```{toctree}" in lectures and "notebooks/02_b" in lectures
    assert "已翻译 1 讲，共 2 讲" in lectures
    assert '<a href="../notebooks/01_a.html" hreflang="en">01 · <code>gather</code> A</a>' in (
        lectures
    )
    assert "02_b.html" not in lectures
    assert '- 第 01 讲：<a href="exercises/ea/ea.ipynb" download>' in exercises


def test_empty_zh_landing_says_the_translation_is_coming_and_has_no_toctree(tmp_path):
    root = _course(tmp_path, zh=[])
    lectures, _ = build.landing_sections(root, "zh")
    assert "toctree" not in lectures  # an empty toctree is a Sphinx warning, and -W fails
    assert "正在翻译中" in lectures and "../notebooks/02_b.html" in lectures


def test_en_landing_has_every_lecture_in_its_toctree(tmp_path):
    root = _course(tmp_path, zh=[])
    lectures, exercises = build.landing_sections(root, "en")
    assert lectures.splitlines()[3:5] == ["notebooks/01_a", "notebooks/02_b"]
    assert "../notebooks" not in lectures
    colab = build.colab_url(build.repository(ROOT), build.release_tag(ROOT), "")[:-1]
    opens = '(<a class="gc-colab" href="{}/exercises/{}/{}.ipynb">open in Colab</a>)'
    assert exercises.splitlines()[:2] == [
        '- lecture 01: <a href="exercises/ea/ea.ipynb" download><code>exercises/ea/ea.ipynb</code>'
        "</a> " + opens.format(colab, "ea", "ea"),
        '- <a href="exercises/aa/aa.ipynb" download><code>exercises/aa/aa.ipynb</code></a> '
        + opens.format(colab, "aa", "aa"),
    ]  # in the lectures' order, one that no lecture names last


def test_the_real_landing_pages_carry_both_markers():
    for lang in build.LANGS:
        text = (ROOT / "website" / lang / "index.md").read_text(encoding="utf-8")
        assert "<!-- lectures -->" in text and "<!-- exercises -->" in text, lang


# --- CI ---------------------------------------------------------------------------------------


def _workflow(name: str) -> dict:
    data = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def test_ci_builds_the_site_with_the_browser_check_after_the_tests_and_keeps_screenshots():
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    install = lines.index('python -m pip install -e ".[site]"')
    build_line = lines.index("python website/build.py --check-browser")
    assert lines.index("python -m pytest") < install < build_line
    (job,) = _workflow("ci.yml")["jobs"].values()
    uploads = {
        s["with"]["path"].rstrip("/"): s
        for s in job["steps"]
        if s.get("uses", "").startswith("actions/upload-artifact")
    }
    assert uploads["artifacts/site"]["if"] == "always()"


def test_pages_workflow_publishes_the_site_built_by_the_same_command():
    wf = _workflow("site.yml")
    assert wf["on"]["push"]["branches"] == ["main"]
    assert wf["permissions"]["pages"] == "write" and wf["permissions"]["id-token"] == "write"
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    for action in ("configure-pages", "upload-pages-artifact", "deploy-pages"):
        assert f"actions/{action}" in uses
    runs = "\n".join(s["run"] for s in steps if "run" in s)
    assert "python website/build.py" in runs
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages"))
    assert upload["with"]["path"].rstrip("/") == "build/site"


def test_the_zh_site_offers_the_chinese_exercises_and_falls_back_to_the_english(tmp_path):
    root = _course(tmp_path, zh=["01_a"])
    _, exercises = build.landing_sections(root, "zh")
    assert "练习本目前只有英文版" in exercises and "exercises/ea/ea.ipynb" in exercises
    _write(root / "zh" / "exercises" / "ea" / "ea.ipynb", '{"zh": 1}')
    _, exercises = build.landing_sections(root, "zh")
    assert "练习本目前只有英文版" not in exercises and "exercises/aa" not in exercises
    assert '- 第 01 讲：<a href="exercises/ea/ea.ipynb" download>' in exercises
    src = tmp_path / "src"
    build.stage(root, "zh", src)
    assert (src / "_extra" / "exercises" / "ea" / "ea.ipynb").read_text() == '{"zh": 1}'
    build.stage(root, "en", tmp_path / "en")
    assert (tmp_path / "en" / "_extra" / "exercises" / "ea" / "ea.ipynb").read_text() == "{}"
