"""The course website's build script, on tiny fake trees: no Sphinx run here (it stays fast).

``python website/build.py`` builds the real site; these tests check its link checker, its
page list (each lecture's and each exercise's page, with its Colab link, and no solution on
an exercise's), the language switch, the Binder and Colab links, the staging of each
language's pages and the CI wiring.
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


STUB = "def pick(x, cols):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
SOLVED = "def pick(x, cols):\n    return x.gather(1, cols)  # THE-SOLUTION"


def _exercise(path: Path, name: str, answer: str = STUB, lang: str = "en") -> Path:
    """An exercise as nbgrader stores it: how to work it first, then its title, an answer
    cell (nbgrader's ``solution``) and its test."""
    how = "## How to work this notebook\n" if lang == "en" else "## 如何完成这个 notebook\n"
    title = f"# Graded exercise `{name}`: <{lang}>\n"
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": [how, "Run the cells."]},
        {"cell_type": "markdown", "metadata": {}, "source": [title, "Goes with a lecture."]},
        {
            "cell_type": "code",
            "metadata": {"nbgrader": {"grade_id": "pick", "solution": True}},
            "source": answer.splitlines(keepends=True),
            "outputs": [],
            "execution_count": None,
        },
        {
            "cell_type": "code",
            "metadata": {"nbgrader": {"grade_id": "test_pick", "grade": True}},
            "source": ["exercise('ea.pick').check(pick)"],
            "outputs": [],
            "execution_count": None,
        },
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return _write(path, json.dumps(nb, indent=1))


def _course(tmp_path: Path, zh: list[str]) -> Path:
    root = tmp_path / "course"
    _notebook(root / "notebooks" / "01_a.ipynb", "01 · `gather` A", "exercises/ea/ea.ipynb")
    _notebook(root / "notebooks" / "02_b.ipynb", "02 · B")
    _write(root / "notebooks" / "scratch.ipynb", "{}")  # not a lecture: no number
    _exercise(root / "exercises" / "ea" / "ea.ipynb", "ea")
    _exercise(root / "exercises" / "aa" / "aa.ipynb", "aa")  # no lecture names it
    _exercise(root / "solutions" / "ea" / "ea.ipynb", "ea", answer=SOLVED)
    _write(root / "pyproject.toml", (ROOT / "pyproject.toml").read_text())  # the links' setting
    _write(root / "README.md", (ROOT / "README.md").read_text())  # the home page's commands
    for name in zh:
        _notebook(root / "zh" / "notebooks" / f"{name}.ipynb", f"{name} 中文")
    return root


LECTURE_PAGE = (
    '<a class="gc-switch btn" href="x">中文</a>'
    '<a href="https://mybinder.org/v2/gh/o/r/HEAD?urlpath=lab/tree/x">Binder</a>'
    '<a class="gc-download" href="x.ipynb">download</a>'
    '<a href="https://colab.research.google.com/github/o/r/blob/v1/x.ipynb">Colab</a>'
)


def _exercise_page(root: Path, stored: str, answer: str = STUB) -> str:
    """An exercise's page as Sphinx renders it: the bar, then the answer cell's code split
    into Pygments' spans, ``&`` and ``<`` escaped (nothing run)."""
    colab = build.colab_url(build.repository(root), build.release_tag(root), stored)
    code = "".join(
        f'<span class="n">{word}</span> ' if word else " "
        for word in answer.replace("&", "&amp;").replace("<", "&lt;").split(" ")
    ).rstrip(" ")
    return (
        '<a class="gc-switch btn" href="x">中文</a><div class="gc-launch">'
        f'<a class="gc-colab" href="{colab}">Open in Colab</a>'
        f'<a class="gc-binder" href="{build.binder_url("o/r", stored)}">Binder</a>'
        '<a class="gc-download" href="ea.ipynb" download>Download .ipynb</a></div>'
        f'<div class="highlight"><pre><span></span>{code}\n</pre></div>'
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
        for path, stored in build.exercise_pages(root, lang):
            page = base / path.removesuffix(".ipynb")
            _write(page.with_suffix(".html"), _exercise_page(root, stored))
            _write(page.with_suffix(".ipynb"), (root / stored).read_text(encoding="utf-8"))
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


@pytest.mark.parametrize("zh_exercises", [False, True], ids=["zh-falls-back", "zh-own"])
def test_exercise_pages_are_the_stored_student_notebooks_with_their_colab_links(
    tmp_path, zh_exercises
):
    root = _course(tmp_path, zh=["01_a"])
    if zh_exercises:
        _exercise(root / "zh" / "exercises" / "ea" / "ea.ipynb", "ea", lang="zh")
    assert build.exercise_pages(root, "en") == [
        ("exercises/aa/aa.ipynb", "exercises/aa/aa.ipynb"),
        ("exercises/ea/ea.ipynb", "exercises/ea/ea.ipynb"),
    ]
    zh = build.exercise_pages(root, "zh")
    if zh_exercises:  # its own only, stored under zh/
        assert zh == [("exercises/ea/ea.ipynb", "zh/exercises/ea/ea.ipynb")]
    else:  # the English ones, their Colab links to the English notebooks
        assert zh == build.exercise_pages(root, "en")
    assert build.check_pages(_site(tmp_path, root), root) == []


def test_page_check_fails_an_exercise_page_without_its_colab_link_or_page_or_download(tmp_path):
    root = _course(tmp_path, zh=["01_a"])
    _exercise(root / "zh" / "exercises" / "ea" / "ea.ipynb", "ea", lang="zh")
    site = _site(tmp_path, root)
    page = site / "exercises" / "ea" / "ea.html"
    colab = build.colab_url(build.repository(root), build.release_tag(root), "")
    page.write_text(page.read_text().replace(f'href="{colab}', 'href="https://other.org/'))
    # the zh page's Colab link opens the English notebook, not zh/exercises/ea/ea.ipynb
    zh_page = site / "zh" / "exercises" / "ea" / "ea.html"
    zh_page.write_text(_exercise_page(root, "exercises/ea/ea.ipynb"))
    (site / "exercises" / "aa" / "aa.html").unlink()
    _write(site / "zh" / "exercises" / "ea" / "ea.ipynb", "{}")  # not the stored notebook

    problems = build.check_pages(site, root)

    assert sorted(problems) == sorted([
        "exercises/ea/ea.html: the Colab link (to exercises/ea/ea.ipynb) is missing",
        "zh/exercises/ea/ea.html: the Colab link (to zh/exercises/ea/ea.ipynb) is missing",
        "en: exercise exercises/aa/aa.ipynb has no page (expected exercises/aa/aa.html)",
        "zh/exercises/ea/ea.html: its download ea.ipynb is not the stored zh/exercises/ea/ea.ipynb",
    ])  # fmt: skip


@pytest.mark.parametrize(
    "answer, why",
    [
        (SOLVED, "its answer cell pick is not the student version's"),
        ("### BEGIN SOLUTION\n" + SOLVED + "\n### END SOLUTION", "BEGIN SOLUTION marker"),
    ],
    ids=["solved", "nbgrader-markers"],
)
def test_page_check_fails_an_exercise_page_that_shows_a_solution(tmp_path, answer, why):
    root = _course(tmp_path, zh=[])
    site = _site(tmp_path, root)
    page = site / "zh" / "exercises" / "ea" / "ea.html"
    page.write_text(_exercise_page(root, "exercises/ea/ea.ipynb", answer=answer))
    problems = build.check_pages(site, root)
    assert problems and all(p.startswith("zh/exercises/ea/ea.html: ") for p in problems)
    assert any(why in p for p in problems), problems


def test_page_text_reads_code_as_typed_through_pygments_spans_and_entities():
    html = (
        '<style>p { x: 1 }</style><pre><span class="k">raise</span> '
        '<span class="ne">NotImplementedError</span><span class="p">()</span> &lt;&amp;</pre>'
        "<script>var raise = 1;</script>"
    )
    assert build.page_text(html) == "raise NotImplementedError() <&"


# --- the language switch, the Binder links -----------------------------------------------------


def test_language_switch_goes_to_the_twin_page_or_to_the_other_landing():
    twins = {"notebooks/01_a", "exercises/ea/ea"}
    assert build.switch_href("en", "notebooks/01_a", twins) == "../zh/notebooks/01_a.html"
    assert build.switch_href("en", "notebooks/02_b", twins) == "../zh/index.html"
    assert build.switch_href("en", "index", twins) == "zh/index.html"
    assert build.switch_href("en", "search", twins) == "zh/index.html"
    assert build.switch_href("zh", "notebooks/01_a", twins) == "../../notebooks/01_a.html"
    assert build.switch_href("zh", "index", set()) == "../index.html"
    assert build.switch_href("en", "exercises/ea/ea", twins) == "../../zh/exercises/ea/ea.html"
    assert build.switch_href("zh", "exercises/aa/aa", twins) == "../../../index.html"


def test_page_names_are_each_languages_lectures_and_exercises(tmp_path):
    root = _course(tmp_path, zh=["02_b"])
    assert build.page_names(root, "en") == {
        "notebooks/01_a", "notebooks/02_b", "exercises/aa/aa", "exercises/ea/ea",
    }  # fmt: skip
    # the zh site shows the English exercises while it has none of its own
    assert build.page_names(root, "zh") == {"notebooks/02_b", "exercises/aa/aa", "exercises/ea/ea"}
    _exercise(root / "zh" / "exercises" / "ea" / "ea.ipynb", "ea", lang="zh")
    assert build.page_names(root, "zh") == {"notebooks/02_b", "exercises/ea/ea"}


def test_a_lecture_that_names_its_exercise_links_to_the_exercise_page(tmp_path):
    root = _course(tmp_path, zh=["01_a"])
    assert build.lectures_by_exercise(root) == {"exercises/ea/ea.ipynb": "01_a"}
    assert build.exercise_of_lecture(root, "en", "01_a") == "exercises/ea/ea"
    assert build.exercise_of_lecture(root, "en", "02_b") is None
    _notebook(root / "zh" / "notebooks" / "01_a.ipynb", "01 甲", "exercises/ea/ea.ipynb")
    assert build.exercise_of_lecture(root, "zh", "01_a") == "exercises/ea/ea"  # the fallback


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
    stored = root / "exercises" / "ea" / "ea.ipynb"
    assert (src / "_extra" / "exercises" / "ea" / "ea.ipynb").read_bytes() == stored.read_bytes()
    assert (src / "exercises" / "ea" / "ea.ipynb").is_file()  # its page
    assert not any("solutions" in p.parts for p in src.rglob("*"))
    staged = "".join(p.read_text(encoding="utf-8") for p in src.rglob("*.ipynb"))
    assert "THE-SOLUTION" not in staged and "NotImplementedError()" in staged
    index = (src / "index.md").read_text(encoding="utf-8")
    assert "<!--" not in index  # both markers replaced
    assert "notebooks/02_b\n" in index and "notebooks/01_a\n" not in index


def test_an_exercise_page_is_its_stored_notebook_with_the_title_cell_first(tmp_path):
    stored = _exercise(tmp_path / "ea.ipynb", "ea")
    before = json.loads(stored.read_text(encoding="utf-8"))
    page = json.loads(build.exercise_page(stored))
    assert page["cells"] == [before["cells"][1], before["cells"][0], *before["cells"][2:]]
    assert page["metadata"] == before["metadata"]
    assert build.lecture_title(stored) == "Graded exercise `ea`: <en>"


def test_zh_landing_lists_the_untranslated_lectures_in_english(tmp_path):
    root = _course(tmp_path, zh=["02_b"])
    lectures, exercises = build.landing_sections(root, "zh")
    assert "```{toctree}" in lectures and "notebooks/02_b" in lectures
    assert "已翻译 1 讲，共 2 讲" in lectures
    assert '<a href="../notebooks/01_a.html" hreflang="en">01 · <code>gather</code> A</a>' in (
        lectures
    )
    assert "02_b.html" not in lectures
    assert '- 第 01 讲：<a class="gc-exercise" href="exercises/ea/ea.html">' in exercises


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
    line = (
        '<a class="gc-exercise" href="exercises/{0}/{0}.html">Graded exercise <code>{0}</code>: '
        "&lt;en&gt;</a> (<code>exercises/{0}/{0}.ipynb</code>: "
        '<a href="exercises/{0}/{0}.ipynb" download>download</a>, '
        '<a class="gc-colab" href="{1}/exercises/{0}/{0}.ipynb">open in Colab</a>)'
    )
    assert exercises.splitlines()[:2] == [
        "- lecture 01: " + line.format("ea", colab),
        "- " + line.format("aa", colab),
    ]  # in the lectures' order, one that no lecture names last
    # the pages' place in the sidebar, in the same order, titled without Markdown
    toctree = exercises[exercises.index("```{toctree}") :].splitlines()
    assert toctree[1:3] == [":hidden:", ":caption: Graded exercises"]
    assert toctree[4:6] == [
        "Graded exercise ea: (en) <exercises/ea/ea>",
        "Graded exercise aa: (en) <exercises/aa/aa>",
    ]


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
    zh_ea = _exercise(root / "zh" / "exercises" / "ea" / "ea.ipynb", "ea", lang="zh")
    _, exercises = build.landing_sections(root, "zh")
    assert "练习本目前只有英文版" not in exercises and "exercises/aa" not in exercises
    assert '- 第 01 讲：<a class="gc-exercise" href="exercises/ea/ea.html">' in exercises
    assert 'zh/exercises/ea/ea.ipynb">在 Colab 中打开</a>' in exercises
    src = tmp_path / "src"
    build.stage(root, "zh", src)
    assert (src / "_extra" / "exercises" / "ea" / "ea.ipynb").read_bytes() == zh_ea.read_bytes()
    assert "<zh>" in (src / "exercises" / "ea" / "ea.ipynb").read_text(encoding="utf-8")
    build.stage(root, "en", tmp_path / "en")
    en_ea = (tmp_path / "en" / "_extra" / "exercises" / "ea" / "ea.ipynb").read_text()
    assert "<en>" in en_ea and "<zh>" not in en_ea


# -- what readers meet: the install line, the figures' alt texts, Chinese search's words --------


def _page_text():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("page_text", ROOT / "website" / "page_text.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["page_text"] = module
    spec.loader.exec_module(module)
    return module


def test_the_home_pages_take_the_readmes_clone_and_start_commands():
    readme = (ROOT / "README.md").read_text()
    en, zh = (build.install_commands(ROOT, lang) for lang in ("en", "zh"))
    clone = next(line for line in readme.splitlines() if line.startswith("git clone "))
    assert en.splitlines()[1] == clone and zh.splitlines()[1] == clone
    assert en.splitlines()[2] == "gather-course start"
    assert zh.splitlines()[2] == "gather-course start --lang zh"
    for lang in ("en", "zh"):
        assert "<!-- install -->" in (ROOT / "website" / lang / "index.md").read_text()


def test_every_figure_gets_an_alt_text_from_its_cell_or_the_text_before_it():
    page_text = _page_text()
    cell = '<div class="cell docutils container">'
    body = (
        "<p>The picture shows <code>in[1][1]</code>. More follows.</p>"
        f'{cell}<div class="cell_input"><pre>draw_gather(x, 1, idx)</pre></div>'
        '<div class="cell_output"><img alt="../_images/ab12.png" src="../_images/ab12.png" /></div></div>'
        f'{cell}<div class="cell_input"><pre>fig = draw(t, title=&quot;gathered colours&quot;)</pre></div>'
        '<img alt="x.png" src="x.png" /><img alt="y.png" src="y.png" /></div>'
        f'{cell}<div class="cell_input"><pre># the loss, step by step\nplot(l)</pre></div>'
        '<img alt="z.png" src="z.png" /></div>'
    )
    alts = __import__("re").findall(r'alt="([^"]*)"', page_text.with_alt_texts(body, "Lecture"))
    assert alts == [
        "The picture shows in[1][1].",
        "gathered colours (1/2)",
        "gathered colours (2/2)",
        "the loss, step by step",
    ]
    assert page_text.figure_alt("plt.plot(x)", "", "01 · The formula") == "01 · The formula"


def test_chinese_search_knows_the_courses_own_terms_as_whole_words():
    words = _page_text().search_words(ROOT / "zh" / "glossary.md")
    assert {"索引", "注意力头", "索引张量", "梯度"} <= set(words)
    assert all(" " not in w and "（" not in w for w in words)


def test_chinese_sections_are_linked_by_their_titles_not_by_id1():
    page_text = _page_text()
    body = (
        '<section class="tex2jax_ignore" id="id1">\n<span id="1-一句话一个公式"></span>'
        '<h2>1. 一句话，一个公式<a class="headerlink" href="#id1">#</a></h2></section>'
        '<section id="dim-0"><h2>dim=0<a href="#dim-0">#</a></h2></section>'
    )
    toc = '<a class="reference internal" href="#id1">1.</a><a href="#dim-0">dim</a>'
    body, toc = page_text.readable_anchors(body, toc)
    assert 'href="#1-一句话一个公式"' in body and 'href="#id1"' not in body
    assert (
        toc
        == '<a class="reference internal" href="#1-一句话一个公式">1.</a><a href="#dim-0">dim</a>'
    )
    assert 'id="id1"' in body  # the old anchor still leads there


# the themes' markup as sphinx-book-theme 1.x writes it on a Chinese page (abridged)
THEME_MARKUP = (
    '<button class="sidebar-toggle primary-toggle btn btn-sm" title="Toggle primary sidebar">'
    '<span class="fa-solid fa-bars"></span></button>'
    '<nav class="bd-links bd-docs-nav" aria-label="Main"></nav>'
    '<input type="search" placeholder="Search..." aria-label="Search..."/>'
    '<button class="search-button"><kbd class="kbd-shortcut__modifier">Ctrl</kbd>+<kbd>K</kbd>'
    "</button>"
    '<div title="Color mode"><i data-mode="auto" title="System Settings"></i></div>'
    '<li><button class="dropdown-item theme-change-button" data-mode="auto">'
    '<i class="fa-solid fa-circle-half-stroke"></i>System Settings</button></li>'
    '<a class="gc-switch btn" href="../index.html" hreflang="en" lang="en" '
    'title="This page in English">English</a>'
    '<h2>Main 和 Page<a class="headerlink" href="#x" title="Link to this heading">#</a></h2>'
)


def test_the_chinese_site_has_no_english_controls_and_the_check_finds_any(tmp_path):
    page_text = _page_text()
    english = page_text.english_ui_words(THEME_MARKUP)
    assert english == [
        "Toggle primary sidebar",
        "Main",
        "Search...",
        "Color mode",
        "System Settings",
        "Link to this heading",
    ]  # the switch to English (lang="en") and the keys' names are English on purpose
    translated = page_text.theme_words_in_chinese(THEME_MARKUP)
    assert page_text.english_ui_words(translated) == []
    assert ">跟随系统</button>" in translated and "<h2>Main 和 Page<a" in translated
    assert 'title="This page in English">English</a>' in translated  # never translated
    site = tmp_path / "site"
    _write(site / "zh" / "notebooks" / "x.html", THEME_MARKUP)
    _write(site / "notebooks" / "x.html", THEME_MARKUP)  # the English site may say it
    problems = build._english_controls(site)
    assert len(problems) == 1 and problems[0].startswith("zh/notebooks/x.html: English")
    _write(site / "zh" / "notebooks" / "x.html", translated)
    assert build._english_controls(site) == []
