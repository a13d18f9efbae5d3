"""A real browser studies the course: JupyterLab opened the README's way, driven by Playwright.

One JupyterLab for the whole file, started as a learner starts it (``gather-course start DIR``,
with JupyterLab's options after ``--``), in a Chromium that is already on the machine:
``GATHER_COURSE_BROWSER``, else the first of chromium, chromium-browser, google-chrome,
google-chrome-stable on PATH that answers ``--version`` (Ubuntu's chromium-browser is a snap
stub that does not). Without Playwright or a browser the tests are skipped with how to install
them; with ``GATHER_COURSE_REQUIRE_BROWSER=1`` (CI) they fail instead.

What a learner sees is read off the page, not off the kernel: the outputs JupyterLab renders
under each cell. Screenshots go to ``GATHER_COURSE_SCREENSHOTS`` (default artifacts/browser/).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
import tomllib
import yaml

from tests.helpers import ROOT, Lab, started_lab, website_build

pytestmark = pytest.mark.browser  # README's browser command: a Chromium, a JupyterLab

REQUIRE = os.environ.get("GATHER_COURSE_REQUIRE_BROWSER") == "1"
SHOTS = Path(os.environ.get("GATHER_COURSE_SCREENSHOTS") or ROOT / "artifacts" / "browser")
HOW_TO_INSTALL = (
    'install Playwright with `pip install -e ".[test]"` and a Chromium: `sudo apt-get install '
    "chromium` on Debian; on Ubuntu, Google Chrome (Ubuntu's chromium is a snap), or name a "
    "Chromium-based browser in GATHER_COURSE_BROWSER"
)

# The page's words for a failed and a passed check; library frames a learner must never see.
FAILED = re.compile(r"Incorrect|Not attempted|failed|wrong", re.IGNORECASE)
LIBRARY_FRAMES = [
    "gather_course/",
    "_check.py",
    "_judge.py",
    "_result.py",
    "site-packages",
    "Traceback (most recent call last)",
]
ERROR_MIME = "application/vnd.jupyter.stderr"


def _missing(why: str) -> None:
    message = f"browser test: {why}; {HOW_TO_INSTALL}"
    if REQUIRE:
        pytest.fail(message + " (GATHER_COURSE_REQUIRE_BROWSER=1: required here)", pytrace=False)
    pytest.skip(message)


# The Chromium to drive: the website's browser check finds it the same way.
BROWSERS = website_build().BROWSERS
find_browser = website_build().find_browser


# --- the server: gather-course start, the README's open command ------------------------------


@pytest.fixture(scope="module")
def chromium_path() -> str:
    try:
        import playwright.sync_api  # noqa: F401 - only whether it imports
    except ImportError:
        _missing("Playwright is not installed")
    path = find_browser()
    if path is None:
        named = os.environ.get("GATHER_COURSE_BROWSER")
        _missing(
            f"no working browser at GATHER_COURSE_BROWSER={named}"
            if named
            else f"no Chromium on PATH (tried {', '.join(BROWSERS)})"
        )
    return path


@pytest.fixture(scope="module")
def lab(chromium_path, tmp_path_factory):
    with started_lab(tmp_path_factory.mktemp("lab"), student=CLASS_STUDENT) as started:
        yield started


@pytest.fixture(scope="module")
def browser(chromium_path, lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=chromium_path)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, lab):
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    yield page
    context.close()
    lab.shut_down_kernels()  # one kernel at a time on a 2-core machine


# --- reading and driving a notebook in the page ---------------------------------------------


def code_cells(lab: Lab, rel: str) -> dict[int, dict]:
    """The notebook's code cells by their index among all cells (as the page lists them)."""
    cells = json.loads((lab.work / rel).read_text())["cells"]
    return {i: c for i, c in enumerate(cells) if c["cell_type"] == "code"}


def source(cell: dict) -> str:
    return "".join(cell["source"])


class Notebook:
    def __init__(self, page, lab: Lab, rel: str):
        self.page, self.lab, self.rel = page, lab, rel
        self.cells_json = code_cells(lab, rel)
        page.goto(lab.tree(rel))
        self.cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
        n = len(json.loads((lab.work / rel).read_text())["cells"])
        page.wait_for_function(
            "n => document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')"
            ".length === n",
            arg=n,
        )
        self.wait_idle()

    def state(self) -> str:
        """The kernel's status and every code cell's prompt, for a failure message."""
        return self.page.evaluate("""() => {
            const ind = document.querySelector(
                '.jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator');
            const cells = document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell');
            const items = document.querySelectorAll('#jp-main-statusbar .jp-StatusBar-Item');
            const kernel = [...items].map(e => e.textContent.trim()).find(t => t.includes(' | '));
            return 'kernel ' + (ind && ind.getAttribute('data-status')) + ` (${kernel})` +
                '; prompts ' +
                [...cells].map((c, i) => c.classList.contains('jp-CodeCell')
                    ? i + c.querySelector('.jp-InputPrompt').textContent.trim() : null)
                    .filter(x => x).join(' ');
        }""")

    def wait_idle(self, timeout: float = 60_000) -> None:
        """A kernel is connected and idle, and no cell waits to run (no [*] prompt)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self._wait_idle(timeout)
        except PlaywrightTimeout:
            self.shot(f"timeout_{Path(self.rel).stem}")
            raise AssertionError(
                f"{self.rel}: still busy after {timeout / 1000:g} s: {self.state()}"
            ) from None

    def _wait_idle(self, timeout: float) -> None:
        self.page.wait_for_function(
            """() => {
                const ind = document.querySelector(
                    '.jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator');
                if (!ind || ind.getAttribute('data-status') !== 'idle') return false;
                // the status bar's kernel item: 'No Kernel | Initializing' before it starts
                const items = document.querySelectorAll('#jp-main-statusbar .jp-StatusBar-Item');
                if (![...items].some(e => /^(?!No Kernel).+ \\| Idle$/.test(e.textContent.trim())))
                    return false;
                const prompts = document.querySelectorAll('.jp-NotebookPanel .jp-InputPrompt');
                return ![...prompts].some(p => p.textContent.includes('*'));
            }""",
            timeout=timeout,
        )

    def prompt(self, i: int) -> str:
        return self.cells.nth(i).locator(".jp-InputPrompt").inner_text().strip()

    def output_text(self, i: int) -> str:
        return self.cells.nth(i).locator(".jp-OutputArea").inner_text()

    def error_outputs(self, i: int) -> list[str]:
        return (
            self.cells.nth(i)
            .locator(f'.jp-OutputArea-output[data-mime-type="{ERROR_MIME}"]')
            .all_inner_texts()
        )

    def run_cell(self, i: int) -> None:
        """Select cell i, run it with Ctrl+Enter, and wait for its new execution count."""
        before = self.prompt(i)
        cell = self.cells.nth(i)
        cell.locator(".jp-InputPrompt").click()  # selects the cell, command mode
        self.page.keyboard.press("Control+Enter")
        self.page.wait_for_function(
            """([i, before]) => {
                const c = document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')[i];
                const t = c.querySelector('.jp-InputPrompt').textContent.trim();
                return /^\\[\\d+\\]:$/.test(t) && t !== before;
            }""",
            arg=[i, before],
        )

    def type_into(self, i: int, text: str) -> None:
        """Replace cell i's code with text, typed into its editor."""
        editor = self.cells.nth(i).locator(".cm-content")
        editor.click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.press("Delete")
        # insert_text, as a paste would: CodeMirror's auto-indent does not re-indent lines
        self.page.keyboard.insert_text(text)
        self.page.keyboard.press("Escape")  # back to command mode
        shown = editor.evaluate(
            "e => [...e.querySelectorAll('.cm-line')].map(l => l.textContent).join('\\n')"
        )
        assert shown == text, f"the editor holds {shown!r}, not the typed {text!r}"

    def restart_run_all(self) -> None:
        """Kernel → Restart Kernel and Run All Cells…, confirm, and wait until all ran."""
        self.page.locator(".lm-MenuBar-item", has_text="Kernel").click()
        self.page.locator(".lm-Menu-item", has_text="Restart Kernel and Run All Cells").click()
        self.page.locator(".jp-Dialog .jp-mod-accept", has_text="Restart").click()
        first = min(self.cells_json)
        # Run All has started once the first code cell has run again; then wait for idle.
        self.page.wait_for_function(
            """i => /^\\[\\d+\\]:$/.test(document.querySelectorAll(
                '.jp-NotebookPanel .jp-Notebook .jp-Cell')[i]
                .querySelector('.jp-InputPrompt').textContent.trim())""",
            arg=first,
        )
        self.wait_idle(timeout=120_000)

    def shot(self, name: str, cell: int | None = None, block: str = "center") -> Path:
        """A screenshot of the page, with cell (if given) scrolled to block of the view."""
        if cell is not None:
            self.cells.nth(cell).evaluate("(e, block) => e.scrollIntoView({block})", block)
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path


def assert_no_library_frames(text: str, where: str) -> None:
    shown = [frame for frame in LIBRARY_FRAMES if frame in text]
    assert not shown, f"{where} shows the course's own frames ({shown}):\n{text}"


def validate_shows_the_verdict_first(nb: Notebook, verdict: str, summary: str) -> None:
    """Save, press the toolbar's Validate, and read nbgrader's Validation Results dialog:
    ``summary`` comes first, ``verdict`` is there, in view without scrolling, no line is cut
    (no box scrolls sideways), and no library frame is shown."""
    page = nb.page
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-current.jp-mod-dirty')")
    page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate").click()
    dialog = page.locator(".jp-Dialog", has_text="Validation Results")
    dialog.wait_for(timeout=180_000)  # validate runs the whole notebook in a new kernel
    where = page.evaluate(
        """verdict => {
            const body = document.querySelector('.jp-Dialog .jp-Dialog-body');
            const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
            for (let node; (node = walker.nextNode());) {
                const k = node.textContent.indexOf(verdict);
                if (k < 0) continue;
                const range = document.createRange();
                range.setStart(node, k);
                range.setEnd(node, k + verdict.length);
                const r = range.getBoundingClientRect(), b = body.getBoundingClientRect();
                return {top: r.top, bottom: r.bottom, boxTop: b.top,
                        boxBottom: Math.min(b.bottom, window.innerHeight),
                        scrolled: body.scrollTop};
            }
            return null;
        }""",
        verdict,
    )
    text = dialog.inner_text()
    nb.shot(f"{Path(nb.rel).stem}_validate")
    assert where is not None, f"the Validate dialog does not show {verdict!r}:\n{text}"
    assert where["scrolled"] == 0 and where["boxTop"] <= where["top"], where
    assert where["bottom"] <= where["boxBottom"], (
        f"the verdict is below the dialog's fold (scrolling needed): {where}\n{text}"
    )
    assert_no_library_frames(text, "the Validate dialog")
    assert summary in text and text.index(summary) < text.index(verdict), text
    cut = page.evaluate(
        """() => [...document.querySelectorAll('.jp-Dialog .jp-Dialog-body pre')]
                  .filter(p => p.scrollWidth > p.clientWidth + 1)
                  .map(p => p.innerText.split('\\n').reduce((a, b) => a.length > b.length ? a : b))"""
    )
    assert not cut, f"the Validate dialog cuts these lines: {cut}"
    dialog.locator(".jp-mod-accept").click()
    dialog.wait_for(state="detached")


# --- the tests -----------------------------------------------------------------------------

LECTURE = "notebooks/01_basic_formula.ipynb"
BASICS = "exercises/basics/basics.ipynb"
BLANK = "exercises/topk/topk.ipynb"


def test_ci_requires_the_browser_test_and_keeps_its_screenshots():
    """No browser needed: CI installs one, cannot skip this file, and uploads what it saw."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "export GATHER_COURSE_REQUIRE_BROWSER=1" in ci and "apt-get install" in ci
    assert ci.index("GATHER_COURSE_REQUIRE_BROWSER") < ci.index("python -m pytest")
    (job,) = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())[
        "jobs"
    ].values()
    uploads = {
        s["with"]["path"].rstrip("/"): s
        for s in job["steps"]
        if s.get("uses", "").startswith("actions/upload-artifact")
    }
    assert uploads["artifacts/browser"]["if"] == "always()"  # artifacts/site: tests/test_site.py
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert any(r.startswith("playwright") for r in extras["test"])


def test_the_working_copy_is_where_jupyterlab_opens(lab):
    for rel in [LECTURE, BASICS, BLANK]:
        assert (lab.work / rel).is_file(), f"`gather-course start` did not copy {rel}"
        assert (lab.work / rel).read_bytes() == (ROOT / rel).read_bytes()


def test_a_lecture_runs_top_to_bottom_without_errors(lab, page):
    nb = Notebook(page, lab, LECTURE)
    nb.restart_run_all()
    deliberate = {
        i for i, c in nb.cells_json.items() if "raises-exception" in c["metadata"].get("tags", [])
    }
    assert deliberate, f"{LECTURE} has no raises-exception cell; the test expects one"
    not_run, errors = [], {}
    for i in nb.cells_json:
        if not re.fullmatch(r"\[\d+\]:", nb.prompt(i)):
            not_run.append(i)
        shown = nb.error_outputs(i)
        if shown and i not in deliberate:
            errors[i] = shown
    nb.shot("lecture_01_run_all", cell=min(deliberate))
    assert not errors, "error output under cells not tagged raises-exception:\n" + "\n".join(
        f"cell {i} ({source(nb.cells_json[i])[:60]!r}):\n{''.join(t)}" for i, t in errors.items()
    )
    assert not not_run, f"Run All did not run cells {not_run}"
    for i in deliberate:  # the deliberate error is shown, as the lecture says
        assert nb.error_outputs(i), f"cell {i} is tagged raises-exception but shows no error"


WRONG_PICK = "def pick_per_row(x, cols):\n    return x[:, :cols.shape[1]]"


def answer_and_test(nb: Notebook, answer: int, test: int, code: str, shot: str) -> str:
    """Type ``code`` into the answer cell, run it and its test cell; the test cell's output."""
    nb.type_into(answer, code)
    nb.run_cell(answer)
    nb.run_cell(test)
    shown = nb.output_text(test)
    nb.shot(shot, cell=test)
    return shown


def setup_cells(cells: dict[int, dict]) -> list[int]:
    """An exercise's locked code cells before the questions: Colab's install, the imports."""
    found = {
        gid: i
        for i, c in cells.items()
        if (gid := c["metadata"].get("nbgrader", {}).get("grade_id")) in ("colab", "setup")
    }
    assert list(found) == ["colab", "setup"], found  # both, in this order
    return list(found.values())


def _question_cells(cells: dict[int, dict], name: str) -> tuple[int, int]:
    answer = next(i for i, c in cells.items() if source(c).startswith(f"def {name}("))
    test = next(i for i, c in cells.items() if source(c).startswith(f"# Test of {name}"))
    return answer, test


def draw_shows_a_picture(nb: Notebook, below: int, shot: str) -> None:
    """The feedback's advice, ``.check(pick_per_row).draw()``, in a new cell under cell
    ``below``: its output is one picture (the expected values next to the learner's), not
    ``<Figure size ...>``."""
    nb.cells.nth(below).locator(".jp-InputPrompt").click()  # command mode on that cell
    nb.page.keyboard.press("b")  # a new cell below it
    cell = below + 1
    nb.type_into(cell, 'exercise("basics.pick_per_row").check(pick_per_row).draw()')
    nb.run_cell(cell)
    area = nb.cells.nth(cell).locator(".jp-OutputArea")
    pictures = area.locator("img")
    pictures.first.wait_for()
    assert pictures.count() == 1, f"{pictures.count()} pictures under .draw()"
    assert "<Figure" not in area.inner_text(), area.inner_text()
    assert pictures.first.bounding_box()["width"] > 150  # drawn, at a size one can read
    nb.shot(shot, cell=cell)


def test_an_exercise_shows_a_clean_verdict_wrong_then_right(lab, page):
    nb = Notebook(page, lab, BASICS)
    menus = page.locator(".lm-MenuBar-item").all_inner_texts()
    assert "Kernel" in menus and not any("nbgrader" in m.lower() for m in menus), (
        f"the learner's JupyterLab shows nbgrader's instructor menu: {menus}"
    )
    assert page.locator(".jp-NotebookPanel-toolbar", has_text="Validate").count() == 1
    answer, test = _question_cells(nb.cells_json, "pick_per_row")
    assert nb.cells_json[test]["metadata"]["nbgrader"]["grade"] is True
    for setup in setup_cells(nb.cells_json):
        nb.run_cell(setup)
        assert not nb.error_outputs(setup), nb.output_text(setup)

    shown = answer_and_test(nb, answer, test, WRONG_PICK, "basics_wrong_answer")
    assert "basics.pick_per_row" in shown, f"no verdict under the test cell:\n{shown}"
    assert FAILED.search(shown), f"the verdict does not say it failed:\n{shown}"
    assert "✅" not in shown
    assert_no_library_frames(shown, "the failed verdict")
    validate_shows_the_verdict_first(
        nb, "Incorrect (basics.pick_per_row)", "0 of 3 questions pass (0 of 8 points)."
    )
    draw_shows_a_picture(nb, test, "basics_wrong_answer_drawn")

    right = "def pick_per_row(x, cols):\n    return torch.gather(x, 1, cols)"
    shown = answer_and_test(nb, answer, test, right, "basics_right_answer")
    assert "basics.pick_per_row" in shown and "✅" in shown, f"no passed verdict:\n{shown}"
    assert not nb.error_outputs(test), shown
    assert_no_library_frames(shown, "the passed verdict")


def test_run_all_on_a_blank_exercise_shows_a_verdict_under_every_test_cell(lab, page):
    nb = Notebook(page, lab, BLANK)
    tests = [
        i
        for i, c in nb.cells_json.items()
        if c["metadata"].get("nbgrader", {}).get("grade") is True
    ]
    assert tests and all(source(nb.cells_json[i]).startswith("# Test of") for i in tests)
    nb.restart_run_all()
    nb.page.set_viewport_size({"width": 1280, "height": 1400})  # both verdicts in one shot
    nb.shot("topk_blank_run_all", cell=tests[0] - 1, block="start")
    for i in tests:
        shown = nb.output_text(i)
        assert re.fullmatch(r"\[\d+\]:", nb.prompt(i)), (
            f"Run All stopped before test cell {i} ({source(nb.cells_json[i]).splitlines()[0]})"
        )
        assert "Not attempted" in shown and "NotImplementedError" in shown, (
            f"test cell {i} shows no not-attempted verdict:\n{shown}"
        )
        assert_no_library_frames(shown, f"test cell {i}'s verdict")


CLASS_STUDENT = "lin_wei"


@pytest.mark.classroom  # a class release: the third test command (README)
def test_a_class_notebook_shows_the_students_own_task_and_checks_it(lab, page, tmp_path):
    """A class release's notebook, opened by the student lin_wei: Run All shows her own task
    under each task cell and a verdict on her own variant; her own answer then passes."""
    from gather_course import exercise
    from gather_course.course._course import course_root
    from gather_course.grading._classes import release_class
    from tests.helpers import variant_solutions

    solution_code = variant_solutions.solution_code

    info = release_class(course_root(ROOT), 5, tmp_path / "class", ["ann", CLASS_STUDENT], False)
    shutil.copy(
        tmp_path / "class" / "exercises" / "basics" / "basics.ipynb", lab.work / "klass.ipynb"
    )
    mine = exercise(
        "basics.pick_per_row", info["variants"]["basics"][CLASS_STUDENT]["basics.pick_per_row"]
    )
    nb = Notebook(page, lab, "klass.ipynb")
    nb.restart_run_all()
    shown = {i: nb.output_text(i) for i in nb.cells_json}
    task = next(
        i for i, c in nb.cells_json.items() if source(c) == 'mine.exercise("basics.pick_per_row")'
    )
    nb.shot("class_own_task", cell=task, block="start")
    assert mine.task.replace("`", "") in shown[task] and mine.signature in shown[task], shown[task]
    assert "your own variant" in shown[task] and ".hint() gives hints made for it" in shown[task]
    assert not nb.error_outputs(task)
    answer, test = _question_cells(nb.cells_json, "pick_per_row")
    assert "Not attempted" in shown[test], shown[test]
    assert_no_library_frames(shown[test], "the class verdict")
    broken = answer_and_test(
        nb, answer, test, "def pick_per_row(x, cols:\n    return x", "class_syntax_error"
    )  # the student's own mistake is what they see, never the course's set-up cell
    assert "SyntaxError" in nb.output_text(answer), nb.output_text(answer)
    assert "my_class" not in broken and "CourseInternalError" not in broken, broken
    code = solution_code(mine.qid, mine.params).replace(
        f"def {mine.signature}", "def pick_per_row(x, cols)"
    )
    code = code.replace("rows", "cols") if "rows" in mine.args else code
    right = answer_and_test(nb, answer, test, code.rstrip(), "class_own_answer")
    assert "✅" in right and "basics.pick_per_row" in right, right


def test_a_chinese_exercise_speaks_chinese_without_any_setting(lab, page):
    """The Chinese edition's notebook says its language in its metadata: JupyterLab tells
    the kernel which notebook it runs, and the verdict comes in Chinese, untangled."""
    rel = "zh_basics.ipynb"  # the learner's copy of the Chinese exercise
    shutil.copy2(ROOT / "zh" / "exercises" / "basics" / "basics.ipynb", lab.work / rel)
    nb = Notebook(page, lab, rel)
    ids = {c["metadata"].get("nbgrader", {}).get("grade_id"): i for i, c in nb.cells_json.items()}
    setup, answer, test = ids["setup"], ids["pick_per_row"], ids["test_pick_per_row"]
    nb.run_cell(setup)
    shown = answer_and_test(nb, answer, test, WRONG_PICK, "zh_basics_wrong_answer")
    assert "❌ 不正确（basics.pick_per_row）" in shown, f"no Chinese verdict:\n{shown}"
    assert "期望值" in shown and "Incorrect" not in shown, shown
    assert_no_library_frames(shown, "the Chinese verdict")
    # Validate answers in the notebook's language too, summary first
    validate_shows_the_verdict_first(nb, "不正确（basics.pick_per_row）", "3 道题中通过 0 道")
    draw_shows_a_picture(nb, test, "zh_basics_wrong_answer_drawn")


# --- practice (issue 49): a fresh variant, a wrong then a right answer, the record -----------

PRACTICE_DRAW = 'practice_pick_per_row = exercise("basics.pick_per_row").practice()'
PRACTISED = re.compile(r"(?:practice: (\d) of 2 variants|practice: mastered \((\d))")
VERDICT = {"en": ("❌ Incorrect", "✅ Correct"), "zh": ("❌ 不正确", "✅ 正确")}


def practised_clean(lab: Lab) -> int:
    """What ``gather-course progress``, run in the working copy, says of pick_per_row's
    practice: the variants passed without a hint."""
    import subprocess
    import sys

    run = subprocess.run(
        [str(Path(sys.executable).parent / "gather-course"), "progress"],
        cwd=lab.work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    line = next(ln for ln in run.stdout.splitlines() if re.search(r"\bpick_per_row\b", ln))
    if "practice: not yet" in line:
        return 0
    found = PRACTISED.search(line)
    assert found, f"progress shows no practice for pick_per_row: {line!r}"
    return int(found[1] or found[2])


def practise_pick_per_row(lab: Lab, page, edition: Path, lang: str) -> None:
    """The learner's copy of ``edition``'s basics: run the set-up, draw a practice variant at
    the notebook's end, answer it wrong, then right (the variant's own solution, under a name
    of its own), and see ``progress`` count one more variant passed without a hint."""
    from gather_course import exercise
    from tests.helpers import variant_solutions

    rel = f"{lang}_practice_basics.ipynb"
    shutil.copy2(edition / "exercises" / "basics" / "basics.ipynb", lab.work / rel)
    before = practised_clean(lab)
    nb = Notebook(page, lab, rel)
    for setup in setup_cells(nb.cells_json):
        nb.run_cell(setup)
    draw = next(i for i, c in nb.cells_json.items() if PRACTICE_DRAW in source(c))
    nb.run_cell(draw)
    shown = nb.output_text(draw)
    nb.shot(f"{lang}_practice_drawn", cell=draw, block="start")
    assert not nb.error_outputs(draw), shown
    variant = re.search(r"basics\.pick_per_row(?:, variant |，变体 )(\S+?)[)）]", shown)
    assert variant, f"the draw shows no variant:\n{shown}"
    q = exercise("basics.pick_per_row", variant[1])
    assert q.signature in shown and f"my_{q.signature}" in shown, shown
    check = "\n\npractice_pick_per_row.check(my_pick_per_row)"
    failed = answer_practice(nb, draw + 1, f"def my_{q.signature}:\n    return x" + check, lang)
    assert VERDICT[lang][0] in failed and "✅" not in failed, failed
    code = variant_solutions.solution_code(q.qid, q.params)
    right = code.replace(f"def {q.signature}", f"def my_{q.signature}").rstrip() + check
    passed = answer_practice(nb, draw + 1, right, lang)
    assert VERDICT[lang][1] in passed, passed
    assert practised_clean(lab) == before + 1  # a variant not seen before, passed, no hint


def answer_practice(nb: Notebook, cell: int, code: str, lang: str) -> str:
    """Type ``code`` into the practice's answer cell and run it once: its verdict."""
    nb.type_into(cell, code)
    nb.run_cell(cell)
    shown = nb.output_text(cell)
    nb.shot(f"{lang}_practice_{'right' if '✅' in shown else 'wrong'}", cell=cell)
    assert not nb.error_outputs(cell), shown
    assert_no_library_frames(shown, "the practice's verdict")
    return shown


def test_a_learner_practises_a_fresh_variant_wrong_then_right(lab, page):
    practise_pick_per_row(lab, page, ROOT, "en")


def test_a_chinese_learner_practises_a_fresh_variant_wrong_then_right(lab, page):
    practise_pick_per_row(lab, page, ROOT / "zh", "zh")


def test_the_courses_commands_run_in_jupyterlabs_own_terminal(lab, page):
    """The course tells the learner to run `gather-course check` and `progress` in a
    terminal: JupyterLab's own (File → New → Terminal) finds them, though it is a login shell
    whose profile may set PATH anew (Debian's does; issue 47: "command not found")."""
    page.goto(f"{lab.url}/lab?reset&token={lab.token}")
    page.locator(".lm-MenuBar-item", has_text="File").click()
    page.locator(".lm-Menu-item", has_text="New").first.hover()
    page.locator(".lm-Menu-item:visible", has_text="Terminal").first.click()
    terminal = page.locator(".jp-Terminal").first
    terminal.wait_for()
    terminal.click()
    ready = lab.work / "terminal-ready.txt"  # the shell reads what is typed: its prompt is up
    page.keyboard.type(f"touch {ready.name}\n")
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert time.monotonic() < deadline, "JupyterLab's terminal started no shell in 60 s"
        time.sleep(0.2)
    ready.unlink()
    page.keyboard.type("clear\n")
    out = lab.work / "progress-in-terminal.txt"
    page.keyboard.type(f"gather-course progress > {out.name} 2>&1; echo exit=$? >> {out.name}\n")
    deadline = time.monotonic() + 60
    while "exit=" not in (out.read_text() if out.exists() else ""):
        assert time.monotonic() < deadline, "the terminal ran nothing in 60 s"
        time.sleep(0.2)
    shown = out.read_text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "terminal_progress.png"))
    out.unlink()
    assert "exit=0" in shown and "not found" not in shown, shown  # (in the working copy too)
    from gather_course import exercise_ids

    assert re.search(rf"\b\d+ of {len(exercise_ids())} questions pass\.", shown), shown
