"""A class on JupyterHub, end to end, in a real browser.

A real JupyterHub on 127.0.0.1 (pip's jupyterhub, npm's configurable-http-proxy, the dummy
authenticator, one local process per user) with an nbgrader exchange. The instructor
releases ``basics``; three students log in with Chromium, fetch it from the Assignments
tab, answer (one right, one partly wrong, one blank), run a check cell and submit; the
instructor collects, grades with ``gather-course grade``, and releases feedback; one
student fetches it and reads the verdicts. Screenshots: artifacts/hub/.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from gather_course import exercise
from tests import test_browser as tb
from tests.helpers import ROOT, free_port, lab_settings, wait_until_serving

pytestmark = pytest.mark.classroom  # README: python -m pytest -m classroom tests
REQUIRE = os.environ.get("GATHER_COURSE_REQUIRE_HUB", "") not in ("", "0")
SHOTS = Path(os.environ.get("GATHER_COURSE_SCREENSHOTS") or ROOT / "artifacts") / "hub"
BIN = Path(sys.executable).parent
COURSE_ID = "gather-101"
STUDENTS = {"ana": "right", "ben": "partly wrong", "cai": "blank"}
IMPORTS = "import torch\n\n"
chromium_path = tb.chromium_path  # the browser test's fixture: the same Chromium


def _missing(why: str) -> None:
    if REQUIRE:
        pytest.fail(f"{why} (GATHER_COURSE_REQUIRE_HUB=1: required here)", pytrace=False)
    pytest.skip(why)


@dataclass
class Classroom:
    url: str
    base: Path
    course: Path
    exchange: Path

    def home(self, user: str) -> Path:
        return self.base / "homes" / user

    def nbgrader(self, *args: str) -> str:
        """An instructor's nbgrader command, run in the course root."""
        done = subprocess.run(
            [str(BIN / "nbgrader"), *args, "--course", COURSE_ID],
            cwd=self.course,
            env=dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"),
            capture_output=True,
            text=True,
            timeout=300,
        )  # (nbgrader runs alembic from PATH: the course's environment is active)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr


EXCHANGE_CONFIG = """
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
"""
STUDENT_CONFIG = """import os
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
# Every server runs as the hub's own Unix user: each says who it is.
c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
"""
# The students' JupyterLab: the Assignments tab and the course's Validate (a summary first,
# whole verdicts, the notebook's language), no news pop-up, none of the instructor's tools.
# docs/jupyterhub.md gives these two files; a test below holds them equal.
STUDENT_LAB = {
    "labconfig/page_config.json": """{
  "disabledExtensions": {
    "@jupyter/nbgrader:formgrader": true,
    "@jupyter/nbgrader:create-assignment": true,
    "@jupyter/nbgrader:course-list": true,
    "@jupyterlab/apputils-extension:announcements": true
  }
}
""",
    "jupyter_server_config.json": """{
  "ServerApp": {
    "jpserver_extensions": {
      "nbgrader.server_extensions.formgrader": false,
      "nbgrader.server_extensions.course_list": false,
      "nbgrader.server_extensions.validate_assignment": false,
      "gather_course.course._validate": true
    }
  }
}
""",
}
HUB_CONFIG = """c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///{base}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{base}/cookie_secret"
c.ConfigurableHTTPProxy.pid_file = "{base}/proxy.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{base}/homes/{{username}}"
c.Spawner.cmd = ["{singleuser}"]
c.Spawner.args = {args!r}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {{"JUPYTER_CONFIG_DIR": "{base}/jupyter", **{environment!r}}}
"""
# The students' environment, as docs/jupyterhub.md gives it (a test below holds them equal);
# JUPYTER_CONFIG_DIR above is the test's stand-in for the hub's /etc/jupyter.
SPAWNER_ENVIRONMENT = {"GATHER_COURSE_DEVICE": "cpu", "GATHER_COURSE_CLASS": "1"}


@pytest.fixture(scope="module")
def classroom(chromium_path, tmp_path_factory):
    if shutil.which("configurable-http-proxy") is None:
        _missing("no configurable-http-proxy: npm install -g configurable-http-proxy")
    if not (BIN / "jupyterhub").exists():
        _missing("no jupyterhub: pip install jupyterhub")
    base = tmp_path_factory.mktemp("hub")
    exchange = base / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    course = base / "course"
    course.mkdir()
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, course / folder)
    config = (ROOT / "nbgrader_config.py").read_text()
    values = {"course_id": COURSE_ID, "exchange": str(exchange)}
    config += EXCHANGE_CONFIG.format(**values)
    config += "c.ExchangeCollect.check_owner = False  # every server is the hub's own user\n"
    (course / "nbgrader_config.py").write_text(config)
    for user in STUDENTS:
        (base / "homes" / user).mkdir(parents=True)
        (base / "homes" / user / "nbgrader_config.py").write_text(STUDENT_CONFIG.format(**values))
    lab_settings(base / "jupyter")
    for name, text in STUDENT_LAB.items():  # what docs/jupyterhub.md tells a hub to install
        (base / "jupyter" / name).parent.mkdir(parents=True, exist_ok=True)
        (base / "jupyter" / name).write_text(text)
    port, hub_port = free_port(), free_port()
    args = ["--allow-root"] if os.geteuid() == 0 else []
    (base / "jupyterhub_config.py").write_text(
        HUB_CONFIG.format(
            port=port,
            hub_port=hub_port,
            base=base,
            singleuser=BIN / "jupyterhub-singleuser",
            args=args,
            environment=SPAWNER_ENVIRONMENT,
        )
    )
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    log = open(base / "hub.log", "w")
    hub = subprocess.Popen(
        [str(BIN / "jupyterhub"), "-f", str(base / "jupyterhub_config.py")],
        cwd=base,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(f"{url}/hub/health", hub, 60, base / "hub.log", "the hub")
        yield Classroom(url, base, course, exchange)
    finally:
        hub.send_signal(signal.SIGTERM)  # it stops the users' servers first
        try:
            hub.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(hub.pid, signal.SIGKILL)
        log.close()


@dataclass
class HubLab:
    """What the browser test's Notebook needs: the student's files and their lab's URL."""

    url: str
    work: Path

    def tree(self, rel: str) -> str:
        return f"{self.url}/lab/tree/{rel}"


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def _log_in(browser, room: Classroom, user: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(120_000)
    page = context.new_page()
    page.goto(f"{room.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", "any password")  # the dummy authenticator takes any
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user}/lab**")
    page.locator(".jp-LauncherCard, .jp-DirListing").first.wait_for()
    return context, page


def _assignments_tab(page):
    """Nbgrader → Assignment List: the students' Assignments tab."""
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
    items = page.locator(".lm-Menu-content .lm-Menu-item").all_inner_texts()
    assert not [i for i in items if "Formgrader" in i or "Course" in i], items  # students'
    page.locator(".lm-Menu-item", has_text="Assignment List").click()
    panel = page.locator("#nbgrader-assignment-list")
    panel.wait_for()
    return panel


def _answers(kind: str, cells: dict[int, dict]) -> dict[int, str]:
    """The code each kind of student types, by answer cell."""
    found = {}
    for i, cell in sorted(cells.items()):
        meta = cell["metadata"].get("nbgrader", {})
        if not meta.get("solution") or meta.get("grade"):
            continue
        name = tb.source(cell).split("(")[0].removeprefix("def ").strip()
        qid = next(q for q in _qids() if exercise(q).name == name)
        right = exercise(qid).solution_code.strip()
        if kind == "right" or (kind == "partly wrong" and found):
            found[i] = right
        elif kind == "partly wrong":
            found[i] = tb.WRONG_PICK  # the first question answered wrong
    return found


def _qids() -> list[str]:
    from gather_course import exercise_ids

    return [q for q in exercise_ids() if q.startswith("basics.")]


def _student(browser, room: Classroom, user: str, kind: str) -> None:
    context, page = _log_in(browser, room, user)
    try:
        panel = _assignments_tab(page)
        panel.get_by_role("button", name="Fetch", exact=True).first.click()
        fetched = room.home(user) / "basics" / "basics.ipynb"
        deadline = time.monotonic() + 60
        while not fetched.exists():
            assert time.monotonic() < deadline, f"{user}: basics was not fetched"
            time.sleep(0.2)
        _shot(page, f"{user}_fetched")
        assert page.get_by_text("Create Assignment").count() == 0  # no instructor's sidebar
        nb = tb.Notebook(
            page, HubLab(f"{room.url}/user/{user}", room.home(user)), "basics/basics.ipynb"
        )
        for setup in tb.setup_cells(nb.cells_json):
            nb.run_cell(setup)
        answers = _answers(kind, nb.cells_json)
        if kind == "right":  # a class (GATHER_COURSE_CLASS, as the guide sets it): no hints
            first = min(answers)
            nb.type_into(
                first, 'from gather_course import exercise\nexercise("basics.pick_per_row").hint()'
            )
            nb.run_cell(first)
            refused = nb.output_text(first)
            assert "Hints of graded questions are turned off in this class" in refused, refused
            _shot(page, f"{user}_no_hints")
        for cell, code in answers.items():
            nb.type_into(cell, code)
            nb.run_cell(cell)
        first_answer, first_test = tb._question_cells(nb.cells_json, "pick_per_row")
        if first_answer not in answers:
            nb.run_cell(first_answer)  # the stub, left as released
        nb.run_cell(first_test)  # a check cell, as the notebook asks
        shown = nb.output_text(first_test)
        want = {"right": "✅", "partly wrong": "Incorrect", "blank": "Not attempted"}[kind]
        assert want in shown, f"{user}: the check cell shows no {want!r}:\n{shown}"
        _shot(page, f"{user}_checked")
        if kind == "blank":  # the course's Validate, as the guide installs it: summary first
            tb.validate_shows_the_verdict_first(
                nb,
                "Not attempted yet (basics.pick_per_row)",
                "0 of 3 questions pass (0 of 8 points).",
            )
        page.keyboard.press("Control+s")
        page.wait_for_function("() => !document.querySelector('.jp-mod-current.jp-mod-dirty')")
        panel = _assignments_tab(page)
        panel.get_by_role("button", name="Submit", exact=True).first.click()
        inbound = room.exchange / COURSE_ID / "inbound"
        deadline = time.monotonic() + 60
        while not any(p.name.startswith(f"{user}+basics+") for p in inbound.glob("*")):
            assert time.monotonic() < deadline, f"{user}: nothing arrived in the exchange"
            time.sleep(0.2)
        _shot(page, f"{user}_submitted")
    finally:
        context.close()


def test_the_guides_student_files_are_this_tests():
    """docs/jupyterhub.md's two JupyterLab files for students are the ones this test installs."""
    guide = (ROOT / "docs" / "jupyterhub.md").read_text(encoding="utf-8")
    for name, text in STUDENT_LAB.items():
        found = re.search(rf"^`{re.escape(name)}`:\n\n```json\n(.*?)^```", guide, re.S | re.M)
        assert found, f"docs/jupyterhub.md gives no {name}"
        assert json.loads(found.group(1)) == json.loads(text), name


def test_the_guides_hub_gives_the_students_the_environment_this_test_gives_them():
    """docs/jupyterhub.md's ``c.Spawner.environment`` is this test's, class variable and all."""
    guide = (ROOT / "docs" / "jupyterhub.md").read_text(encoding="utf-8")
    found = re.search(r"^c\.Spawner\.environment = (\{.*?^\})", guide, re.S | re.M)
    assert found, "docs/jupyterhub.md has no c.Spawner.environment = {...} block"
    assert ast.literal_eval(found.group(1)) == SPAWNER_ENVIRONMENT


def test_a_class_on_jupyterhub_fetches_submits_is_graded_and_reads_its_feedback(
    classroom, chromium_path
):
    from playwright.sync_api import sync_playwright

    room = classroom
    room.nbgrader("release_assignment", "basics")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path)
        try:
            for user, kind in STUDENTS.items():
                _student(browser, room, user, kind)
            room.nbgrader("collect", "basics")
            for user in STUDENTS:
                assert (room.course / "submitted" / user / "basics" / "basics.ipynb").is_file()
            done = subprocess.run(
                [str(BIN / "gather-course"), "grade", "basics", "--course", str(room.course)],
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            with open(room.course / "grades-basics.csv", newline="") as f:
                rows = {row["student"]: row for row in csv.DictReader(f)}
            total = float(rows["ana"]["max_score"])
            assert float(rows["ana"]["score"]) == total
            assert 0 < float(rows["ben"]["score"]) < total
            assert float(rows["cai"]["score"]) == 0
            room.nbgrader("generate_feedback", "basics")
            room.nbgrader("release_feedback", "basics")
            context, page = _log_in(browser, room, "ben")
            try:
                panel = _assignments_tab(page)
                panel.get_by_role("button", name="Fetch Feedback", exact=True).first.click()
                feedback = room.home("ben") / "basics" / "feedback"
                deadline = time.monotonic() + 60
                while not list(feedback.glob("*/basics.html")):
                    assert time.monotonic() < deadline, "ben: no feedback arrived"
                    time.sleep(0.2)
                (html,) = feedback.glob("*/basics.html")
                rel = html.relative_to(room.home("ben")).as_posix()
                page.goto(f"{room.url}/user/ben/files/{rel}")
                page.wait_for_load_state()
                text = page.inner_text("body")
                page.get_by_text("Incorrect (basics.pick_per_row)").scroll_into_view_if_needed()
                _shot(page, "ben_feedback")
                assert "Incorrect (basics.pick_per_row)" in text, text[:2000]
                assert "Correct (basics." in text
            finally:
                context.close()
        finally:
            browser.close()
