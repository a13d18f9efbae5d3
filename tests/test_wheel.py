"""No answer in reach: the wheel a student installs holds no class variant's answer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from gather_course import exercise
from tests.helpers import ROOT, fill_cells, started_lab, variant_solutions, website_build

answer_lines, squeeze = variant_solutions.answer_lines, variant_solutions.squeeze

SHOTS = Path(os.environ.get("GATHER_COURSE_SCREENSHOTS") or ROOT / "artifacts" / "browser")


@pytest.fixture(scope="module")
def wheel_path(tmp_path_factory) -> Path:
    """The wheel pip builds from the checkout."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("gather_course-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel_text(wheel_path):
    texts = {}
    with zipfile.ZipFile(wheel_path) as z:
        for name in z.namelist():
            texts[name] = z.read(name).decode("utf-8", errors="replace")
    return texts


def test_the_wheel_ships_the_package_and_no_tests(wheel_text):
    assert "gather_course/questions/_variants.py" in wheel_text
    assert not any(name.startswith("tests/") or "variant_solutions" in name for name in wheel_text)


def test_no_class_variants_answer_line_is_in_the_wheel(wheel_text):
    """Every line of every variant's answer that does the work, and that no public solution
    shares, is nowhere in the wheel."""
    shipped = squeeze("\n".join(wheel_text.values()))
    checked = 0
    for qid, params, line, code in answer_lines():
        assert code not in shipped, (qid, params, line)
        checked += 1
    assert checked > 100


def test_no_class_variants_answer_line_is_in_the_hints_the_package_makes():
    """A variant's hints are made at run time from its knobs (in every language): none holds
    a line of any variant's answer that does the work (the templates are in the wheel, and
    the test above finds no answer line in them; this looks at what they become)."""
    checked = 0
    for qid, params, line, code in answer_lines():
        name = exercise(qid).family.name(params)
        hints = squeeze("\n".join(exercise(qid, name).hints)).replace("`", "")
        assert code not in hints, (qid, params, line)
        checked += 1
    assert checked > 100


def test_the_check_would_find_an_answer_that_shipped(wheel_text):
    """The search above is not blind: a public solution's lines are found in the wheel."""
    shipped = squeeze("\n".join(wheel_text.values()))
    line = next(
        line
        for line in exercise("vision.select_heads").solution_code.splitlines()
        if "gather(" in line
    )
    assert squeeze(line.split("#")[0]) in shipped


# -- the course in the wheel: pip install, then start from any folder (issue 27) -------------

MATERIAL = {"notebooks", "exercises", "zh/notebooks", "zh/exercises"}


def _notebooks_under(names, prefix: str) -> set[str]:
    return {n[len(prefix) :] for n in names if n.startswith(prefix) and n.endswith(".ipynb")}


def _course_notebooks() -> set[str]:
    return {
        p.relative_to(ROOT).as_posix()
        for top in MATERIAL
        for p in (ROOT / top).rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts
    }


def test_the_wheel_carries_both_editions_lectures_and_exercises_and_no_solutions(wheel_text):
    shipped = _notebooks_under(wheel_text, "gather_course/_material/")
    assert shipped == _course_notebooks()
    assert len(shipped) == 24  # 6 lectures and 6 exercises, in two languages
    assert not any("solutions" in name for name in wheel_text)
    # the student versions, byte for byte: no answer between BEGIN and END SOLUTION
    assert not any(
        "BEGIN SOLUTION" in text for name, text in wheel_text.items() if "_material/" in name
    )


def test_the_sdist_carries_the_course_and_builds_the_same_wheel(tmp_path):
    """A wheel built from the sdist (how pip installs from one) holds the same notebooks."""
    import tarfile

    from setuptools import build_meta

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        sdist = tmp_path / build_meta.build_sdist(str(tmp_path))
    finally:
        os.chdir(here)
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "src", filter="data")
    top = names[0].split("/")[0] + "/"
    assert _notebooks_under(names, top) == _course_notebooks()
    assert not any("/solutions/" in name or name.endswith("/solutions") for name in names)
    (src,) = (tmp_path / "src").iterdir()
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
         "-q", "-w", str(tmp_path / "wheel")],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        assert _notebooks_under(z.namelist(), "gather_course/_material/") == _course_notebooks()


def _solve(exercise_path: Path, assignment: str) -> None:
    """Put the course's solution into every answer cell of a learner's exercise notebook."""
    solved = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in solved.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    nbformat.write(fill_cells(nbformat.read(exercise_path, 4), answers), exercise_path)


@pytest.fixture(scope="module")
def installed(tmp_path_factory, wheel_path) -> tuple[Path, dict[str, str]]:
    """The learner with no clone: the wheel pip-installed into a fresh venv outside the
    repository (the CI torch pin); the venv and the learner's environment (a HOME of its own)."""
    tmp_path = tmp_path_factory.mktemp("installed")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "VIRTUAL_ENV", "XDG_DATA_HOME"}  # the learner's own: ~
    }
    env["PIP_CONSTRAINT"] = str(ROOT / ".ci" / "constraints.txt")
    done = subprocess.run(
        [venv / "bin/python", "-m", "pip", "install", "-q", str(wheel_path)],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    home = tmp_path / "home"
    home.mkdir()
    env["HOME"] = str(home)
    return venv, env


@pytest.mark.wheel
def test_pip_install_of_the_wheel_then_start_check_and_progress_from_any_folder(
    tmp_path, installed
):
    """The learner with no clone: start, check and progress from the installed wheel."""
    venv, env = installed
    home = Path(env["HOME"])

    def run(*args: str, cwd: Path = home) -> subprocess.CompletedProcess:
        return subprocess.run(
            [venv / "bin/gather-course", *args], capture_output=True, text=True, env=env, cwd=cwd
        )

    where = subprocess.run(
        [venv / "bin/python", "-c", "import gather_course; print(gather_course.__file__)"],
        capture_output=True, text=True, env=env, cwd=home,
    ).stdout  # fmt: skip
    assert where.startswith(str(venv)), where  # the installed package, not the checkout

    zh = run("start", "work-zh", "--no-lab", "--lang", "zh")
    assert zh.returncode == 0, zh.stderr
    assert "选" in (home / "work-zh/notebooks/01_basic_formula.ipynb").read_text(encoding="utf-8")
    started = run("start", "work", "--no-lab")  # the last one started: progress's elsewhere
    assert started.returncode == 0, started.stderr
    work = home / "work"
    assert {p.relative_to(work).as_posix() for p in work.rglob("*.ipynb")} == {
        n for n in _course_notebooks() if not n.startswith("zh/")
    }

    basics = work / "exercises/basics/basics.ipynb"
    _solve(basics, "basics")
    checked = run("check", str(basics))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "8/8 points; every question passes." in checked.stdout

    # from inside the working copy, no folder named: its own progress, not ~/gather-course-work
    progress = run("progress", cwd=work / "exercises")
    assert progress.returncode == 0, progress.stderr
    assert "basics   3 of 3 questions pass" in progress.stdout
    assert "nlp      0 of" in progress.stdout
    # from an unrelated folder: the working copy `start` last made, remembered in ~/.local/share
    unrelated = tmp_path / "unrelated"
    unrelated.mkdir()
    elsewhere = run("progress", cwd=unrelated)
    assert elsewhere.returncode == 0, elsewhere.stdout + elsewhere.stderr
    assert elsewhere.stdout.startswith(
        f"Not in a working copy: showing the one you last started, {work}.\nProgress in {work} "
    ), elsewhere.stdout
    assert "basics   3 of 3 questions pass" in elsewhere.stdout
    assert (home / ".local/share/gather-course/last-working-copy.json").is_file()


@pytest.mark.wheel
def test_the_wheels_start_lang_zh_opens_jupyterlab_in_chinese(tmp_path, installed):
    """`gather-course start --lang zh` from the installed wheel opens JupyterLab with its
    Simplified Chinese language pack (a dependency of the wheel): menus in Chinese, the
    Chinese lecture open. Needs Chromium, like tests/test_browser.py."""
    from playwright.sync_api import sync_playwright

    venv, env = installed
    chromium = website_build().find_browser()
    if chromium is None:
        (pytest.fail if os.environ.get("GATHER_COURSE_REQUIRE_BROWSER") else pytest.skip)(
            "no Chromium on PATH: apt-get install chromium"
        )
    with (
        started_lab(tmp_path, "--lang", "zh", bindir=venv / "bin") as zh_lab,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=chromium)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(60_000)
            page.goto(zh_lab.tree("notebooks/01_basic_formula.ipynb"))
            menubar = page.locator("#jp-menu-panel, .lm-MenuBar-content").first
            menubar.wait_for()
            heading = page.locator(".jp-RenderedMarkdown h1").first
            heading.wait_for()
            assert "的公式与形状规则" in heading.inner_text()  # the Chinese lecture itself
            labels = menubar.inner_text()
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "zh_jupyterlab.png"))
            page.locator(".lm-MenuBar-item", has_text="内核").click()
            kernel_menu = page.locator(".lm-Menu:visible .lm-Menu-itemLabel").all_inner_texts()
            page.screenshot(path=str(SHOTS / "zh_kernel_menu.png"))
        finally:
            browser.close()
    assert "文件" in labels and "编辑" in labels, labels
    assert "File" not in labels, labels
    # the menu item the Chinese exercises quote is the language pack's own label (issue 47:
    # they said 重启内核并运行所有单元格, the menu reads 重启内核 和 运行所有单元格…)
    header = (ROOT / "zh" / "exercises" / "basics" / "basics.ipynb").read_text(encoding="utf-8")
    quoted = set(re.findall(r"「内核 → ([^」]+)」", header))
    assert quoted and quoted <= set(kernel_menu), (quoted, kernel_menu)
