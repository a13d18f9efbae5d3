"""A class on JupyterHub, end to end, in a real browser, every student their own Unix user.

A real JupyterHub on 127.0.0.1 (pip's jupyterhub, npm's configurable-http-proxy, the dummy
authenticator in place of the institution's) run as root, as The Littlest JupyterHub runs
it, with JupyterHub's ``LocalProcessSpawner``: each student's server runs as that student's
own Unix user (made by the test, removed after: tests/classroom.py), never as root. The
instructor is a Unix user too, not root, and owns the course folder; nbgrader's exchange
is set up as docs/jupyterhub.md says, its owner check on. The instructor releases
``basics``; three students log in with Chromium, fetch it from the Assignments tab, answer
(one right, one partly wrong, one blank), run a check cell and submit; the instructor
collects, grades with ``gather-course grade``, and releases feedback; one student fetches it
and reads the verdicts. Then a student, with their own token and shell, tries the hub's
API, a classmate's server and kernel. Screenshots: artifacts/hub/.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from gather_course import exercise
from tests import test_browser as tb
from tests.classroom import (
    COURSE_ID,
    STUDENT_NBGRADER_CONFIG,
    Campus,
    campus,
    make_course,
    make_exchange,
    student_config,
    student_env,
)
from tests.helpers import ROOT, free_port, lab_settings, wait_until_serving

pytestmark = pytest.mark.classroom  # README: python -m pytest -m classroom tests
REQUIRE = os.environ.get("GATHER_COURSE_REQUIRE_HUB", "") not in ("", "0")
SHOTS = Path(os.environ.get("GATHER_COURSE_SCREENSHOTS") or ROOT / "artifacts") / "hub"
BIN = Path(sys.executable).parent
STUDENTS = {"ana": "right", "ben": "partly wrong", "cai": "blank"}  # role -> what they hand in
IMPORTS = "import torch\n\n"
chromium_path = tb.chromium_path  # the browser test's fixture: the same Chromium


def _missing(why: str) -> None:
    if REQUIRE:
        pytest.fail(f"{why} (GATHER_COURSE_REQUIRE_HUB=1: required here)", pytrace=False)
    pytest.skip(why)


@dataclass
class Classroom:
    url: str
    campus: Campus
    env: Path  # the Python environment the students' servers and the instructor run
    course: Path
    exchange: Path
    teach: str  # the instructor's Unix user
    users: dict[str, str]  # role -> the student's Unix user (and hub) name

    def home(self, role: str) -> Path:
        return self.campus.home(self.users[role])

    def instructor(self, *argv: str) -> str:
        """A command of the course's environment as the instructor, in the course root."""
        done = self.campus.run(
            self.teach,
            self.env / "bin" / argv[0],
            *argv[1:],
            env={"PATH": f"{self.env / 'bin'}:/usr/bin:/bin"},
            cwd=self.course,
            timeout=600,
        )  # (nbgrader runs alembic from PATH: the course's environment is on it)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    def nbgrader(self, *args: str) -> str:
        """An instructor's nbgrader command, run in the course root."""
        return self.instructor("nbgrader", *args, "--course", COURSE_ID)


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
c.JupyterHub.db_url = "sqlite:///{state}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{state}/cookie_secret"
c.ConfigurableHTTPProxy.pid_file = "{state}/proxy.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = ["{singleuser}"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {environment!r}
"""
# The students' environment, as docs/jupyterhub.md gives it (a test below holds them equal).
SPAWNER_ENVIRONMENT = {"GATHER_COURSE_DEVICE": "cpu", "GATHER_COURSE_CLASS": "1"}


@pytest.fixture(scope="module")
def classroom(chromium_path):
    if shutil.which("configurable-http-proxy") is None:
        _missing("no configurable-http-proxy: npm install -g configurable-http-proxy")
    if not (BIN / "jupyterhub").exists():
        _missing("no jupyterhub: pip install jupyterhub")
    with campus() as users:
        base = users.base
        env = student_env(base / "python")
        exchange = make_exchange(base)
        teach = users.add("teach")
        course = make_course(base, exchange, owner=teach)
        config = student_config(base / "jupyter", exchange)  # the test's /etc/jupyter
        lab_settings(config)
        for name, text in STUDENT_LAB.items():  # what docs/jupyterhub.md tells a hub to install
            (config / name).parent.mkdir(parents=True, exist_ok=True)
            (config / name).write_text(text)
        subprocess.run(["chmod", "-R", "a+rX", str(config)], check=True)
        roles = {role: users.add(role) for role in STUDENTS}
        state = base / "hub"  # the hub's database and cookie secret: root's alone
        state.mkdir(mode=0o700)
        port, hub_port = free_port(), free_port()
        environment = {
            **SPAWNER_ENVIRONMENT,
            "JUPYTER_CONFIG_DIR": str(config),  # the test's stand-in for /etc/jupyter
            "PATH": f"{env / 'bin'}:/usr/local/bin:/usr/bin:/bin",  # the course's environment
        }
        (state / "jupyterhub_config.py").write_text(
            HUB_CONFIG.format(
                port=port,
                hub_port=hub_port,
                state=state,
                singleuser=env / "bin" / "jupyterhub-singleuser",
                environment=environment,
            )
        )
        hub_env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        log = open(state / "hub.log", "w")
        hub = subprocess.Popen(
            [str(BIN / "jupyterhub"), "-f", str(state / "jupyterhub_config.py")],
            cwd=state,
            env=hub_env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(f"{url}/hub/health", hub, 60, state / "hub.log", "the hub")
            yield Classroom(url, users, env, course, exchange, teach, roles)
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


def _student(browser, room: Classroom, role: str, kind: str) -> None:
    user = room.users[role]  # the student's Unix user, and their name on the hub
    context, page = _log_in(browser, room, user)
    try:
        panel = _assignments_tab(page)
        panel.get_by_role("button", name="Fetch", exact=True).first.click()
        fetched = room.home(role) / "basics" / "basics.ipynb"
        deadline = time.monotonic() + 60
        while not fetched.exists():
            assert time.monotonic() < deadline, f"{user}: basics was not fetched"
            time.sleep(0.2)
        _shot(page, f"{role}_fetched")
        assert page.get_by_text("Create Assignment").count() == 0  # no instructor's sidebar
        nb = tb.Notebook(
            page, HubLab(f"{room.url}/user/{user}", room.home(role)), "basics/basics.ipynb"
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
            _shot(page, f"{role}_no_hints")
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
        _shot(page, f"{role}_checked")
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
        _shot(page, f"{role}_submitted")
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


def test_the_guides_students_nbgrader_config_is_this_tests():
    """docs/jupyterhub.md's /etc/jupyter/nbgrader_config.py is the one this test installs."""
    guide = (ROOT / "docs" / "jupyterhub.md").read_text(encoding="utf-8")
    found = re.search(
        r"^`/etc/jupyter/nbgrader_config.py`:\n\n```python\n(.*?)^```", guide, re.S | re.M
    )
    assert found, "docs/jupyterhub.md gives no /etc/jupyter/nbgrader_config.py"
    want = STUDENT_NBGRADER_CONFIG.format(course_id=COURSE_ID, exchange="/srv/nbgrader/exchange")
    assert found.group(1) == want


@pytest.fixture(scope="module")
def graded(classroom, chromium_path):
    """The class's week in the browser: released, fetched, answered, submitted, collected,
    graded, feedback released and read by ben. Yields the grades CSV's rows."""
    from playwright.sync_api import sync_playwright

    room = classroom
    room.nbgrader("release_assignment", "basics")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path)
        try:
            for role, kind in STUDENTS.items():
                _student(browser, room, role, kind)
            room.nbgrader("collect", "basics")
            for user in room.users.values():
                assert (room.course / "submitted" / user / "basics" / "basics.ipynb").is_file()
            room.instructor("gather-course", "grade", "basics", "--course", str(room.course))
            with open(room.course / "grades-basics.csv", newline="") as f:
                rows = {row["student"]: row for row in csv.DictReader(f)}
            room.nbgrader("generate_feedback", "basics")
            room.nbgrader("release_feedback", "basics")
            ben = room.users["ben"]
            context, page = _log_in(browser, room, ben)
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
                page.goto(f"{room.url}/user/{ben}/files/{rel}")
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
    yield rows


def test_a_class_on_jupyterhub_fetches_submits_is_graded_and_reads_its_feedback(classroom, graded):
    rows = {role: graded[user] for role, user in classroom.users.items()}
    total = float(rows["ana"]["max_score"])
    assert float(rows["ana"]["score"]) == total
    assert 0 < float(rows["ben"]["score"]) < total
    assert float(rows["cai"]["score"]) == 0
    assert {r["time_source"] for r in rows.values()} == {"received"}  # collect's receipts


def test_every_students_server_runs_as_that_student_never_as_root(classroom, graded):
    for role, user in classroom.users.items():
        procs = _processes(user, "jupyterhub-singleuser")
        assert procs, f"{role}: no server running as {user}"
        for pid in procs:
            status = Path(f"/proc/{pid}/status").read_text()
            uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
            assert set(uids.split()[1:]) == {str(pwd.getpwnam(user).pw_uid)}, (role, uids)
    assert not _processes("root", "jupyterhub-singleuser")


def _processes(user: str, name: str) -> list[int]:
    found = subprocess.run(["pgrep", "-u", user, "-f", name], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def _server_env(user: str) -> dict[str, str]:
    """The environment of ``user``'s server (read as root): what their terminal has."""
    (pid, *_) = _processes(user, "jupyterhub-singleuser")
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def _get(url: str, token: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_students_token_opens_their_own_server_and_nothing_else(classroom, graded):
    """ben's own API token (the one his terminal has): his server and his own hub record
    answer; the hub's user list, ana's record and ana's server refuse it, through the proxy
    and straight to ana's server's port on the loopback."""
    room = classroom
    ben, ana = room.users["ben"], room.users["ana"]
    token = _server_env(ben)["JUPYTERHUB_API_TOKEN"]
    assert _get(f"{room.url}/user/{ben}/api/contents", token) == 200  # the control
    assert _get(f"{room.url}/hub/api/user", token) == 200
    assert _get(f"{room.url}/hub/api/users", token) == 403
    assert _get(f"{room.url}/hub/api/users/{ana}", token) in (403, 404)
    assert _get(f"{room.url}/user/{ana}/api/contents", token) == 403
    direct = _server_env(ana)["JUPYTERHUB_SERVICE_URL"].rstrip("/")  # ana's port, on 127.0.0.1
    assert direct.startswith("http://127.0.0.1:")
    assert _get(f"{direct}/api/contents", token) == 403
    assert _get(f"{direct}/api/kernels", token) == 403


def test_a_students_shell_cannot_reach_a_classmates_server_kernel_or_work(classroom, graded):
    room = classroom
    ana = room.users["ana"]
    (pid, *_) = _processes(ana, "jupyterhub-singleuser")
    home = room.home("ana")
    runtime = home / ".local" / "share" / "jupyter" / "runtime"
    kernels = list(runtime.glob("kernel-*.json"))
    assert kernels, "ana's kernel has no connection file"  # (ana ran her notebook's cells)
    for script, target in [
        (f"cat /proc/{pid}/environ", Path(f"/proc/{pid}/environ")),  # her server's token
        (f'cat "{kernels[0]}"', kernels[0]),  # her kernel's key: code in her kernel
        (f'ls "{home}"', home),
        (f'cat "{home}/basics/basics.ipynb"', home / "basics" / "basics.ipynb"),
        (f'ls "{room.course}"', room.course),
    ]:
        room.campus.refused(room.users["ben"], script, target)
