"""The learner's working copy: ``gather-course start`` and ``progress``, and the learner's
JupyterLab settings (nbgrader's instructor and exchange screens off)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gather_course import GatherCourseError, exercise
from gather_course.course._workcopy import (
    LEARNER_CONFIG,
    MARKER,
    course_files,
    lab_command,
    make_working_copy,
)
from tests.helpers import ROOT, cli


def _start(tmp_path: Path, capsys, *args: str) -> tuple[int, str]:
    run = cli("start", *args, "--no-lab", cwd=Path.cwd())
    return run.returncode, run.stdout + run.stderr


def test_start_copies_the_lectures_and_exercises_and_never_overwrites(tmp_path, capsys):
    work = tmp_path / "work"
    code, out = _start(tmp_path, capsys, str(work))
    assert code == 0 and "Copied 12 notebooks" in out
    files = course_files()
    assert {p.as_posix() for p in files} >= {
        "notebooks/01_basic_formula.ipynb",
        "exercises/basics/basics.ipynb",
    }
    for rel in files:
        assert (work / rel).read_bytes() == (ROOT / rel).read_bytes()
    assert (work / MARKER).is_file()

    answer = work / "exercises/basics/basics.ipynb"
    answer.write_text("my answers", encoding="utf-8")  # the learner's work
    (work / "notebooks/02_nlp_label_scores.ipynb").unlink()  # a lecture deleted
    code, out = _start(tmp_path, capsys, str(work))
    assert code == 0 and "Copied 1 notebooks" in out and "Kept 11" in out
    assert answer.read_text(encoding="utf-8") == "my answers"
    assert (work / "notebooks/02_nlp_label_scores.ipynb").is_file()


def test_start_alone_reopens_a_chinese_copy_in_chinese(tmp_path, capsys):
    """The zh README says running start again reopens the same folder: with no --lang, the
    working copy's own edition, in its language (issue 47: it refused, in English)."""
    work = tmp_path / "work"
    code, out = _start(tmp_path, capsys, str(work), "--lang", "zh")
    assert code == 0, out
    code, out = _start(tmp_path, capsys, str(work))  # as the learner runs it again
    assert code == 0, out
    assert "保持原样" in out and "Kept" not in out, out
    assert json.loads((work / MARKER).read_text())["lang"] == "zh"
    assert (work / "notebooks/01_basic_formula.ipynb").read_bytes() == (
        ROOT / "zh/notebooks/01_basic_formula.ipynb"
    ).read_bytes()


def test_another_edition_in_the_same_folder_is_refused_in_the_copys_language(tmp_path, capsys):
    zh, en = tmp_path / "zh-work", tmp_path / "en-work"
    assert _start(tmp_path, capsys, str(zh), "--lang", "zh")[0] == 0
    code, out = _start(tmp_path, capsys, str(zh), "--lang", "en")
    assert code == 2, out
    assert "中文版" in out and f"gather-course start {zh}-en --lang en" in out, out
    assert f"gather-course start {zh}" in out and "Traceback" not in out
    assert _start(tmp_path, capsys, str(en))[0] == 0  # an English copy
    code, out = _start(tmp_path, capsys, str(en), "--lang", "zh")
    assert code == 2 and "your working copy of the English edition" in out, out
    assert f"gather-course start {en}-zh --lang zh" in out


@pytest.mark.parametrize(
    "where, words",
    [
        ("inside", "inside the course's own folder"),
        ("foreign", "already holds other files"),
        ("file", "is a file"),
    ],
)
def test_start_refuses_folders_that_are_not_the_learners_own(tmp_path, capsys, where, words):
    target = {
        "inside": ROOT / "my-work",
        "foreign": tmp_path / "photos",
        "file": tmp_path / "notes.txt",
    }[where]
    if where == "foreign":
        target.mkdir()
        (target / "cat.jpg").write_bytes(b"\xff")
    if where == "file":
        target.write_text("keep me", encoding="utf-8")
    code, out = _start(tmp_path, capsys, str(target))
    assert code == 2 and words in out
    assert not (ROOT / "my-work").exists()
    if where == "file":
        assert target.read_text(encoding="utf-8") == "keep me"
    if where == "foreign":
        assert sorted(p.name for p in target.iterdir()) == ["cat.jpg"]


def test_the_default_folder_is_in_the_learners_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert make_working_copy().folder == tmp_path / "gather-course-work"


def test_lab_command_adds_the_learner_settings_in_front(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/site/config")
    command, env = lab_command(tmp_path, ["--no-browser"])
    assert command[:4] == [sys.executable, "-m", "jupyter", "lab"]
    assert command[-1] == "--no-browser"
    assert f"--ServerApp.root_dir={tmp_path}" in command
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [str(LEARNER_CONFIG), "/site/config"]
    assert env["PATH"].split(os.pathsep)[0] == os.path.dirname(sys.executable)


def test_a_chinese_working_copy_opens_jupyterlab_in_chinese(tmp_path):
    """Only the zh edition's JupyterLab gets the Chinese default (a setting the learner can
    change), the file docs/jupyterhub.md gives a zh class; the language pack is installed."""
    import importlib.metadata
    import json
    import re

    from gather_course.course._workcopy import LAB_SETTINGS_ZH, working_copy_language

    zh = make_working_copy(tmp_path / "zh", lang="zh").folder
    en = make_working_copy(tmp_path / "en", lang="en").folder
    assert (working_copy_language(zh), working_copy_language(en)) == ("zh", "en")
    flag = f"--LabApp.app_settings_dir={LAB_SETTINGS_ZH}"
    assert flag in lab_command(zh, [], lang="zh")[0]
    assert flag not in lab_command(en, [], lang="en")[0]
    overrides = json.loads((LAB_SETTINGS_ZH / "overrides.json").read_text())
    assert overrides == {"@jupyterlab/translation-extension:plugin": {"locale": "zh_CN"}}
    guide = (ROOT / "docs" / "jupyterhub.md").read_text(encoding="utf-8")
    found = re.search(r"### A class in Chinese.*?```json\n(.*?)^```", guide, re.S | re.M)
    assert found and json.loads(found.group(1)) == overrides
    assert importlib.metadata.version("jupyterlab-language-pack-zh-CN")


@pytest.mark.parametrize("root", [True, False])
def test_lab_command_allows_root_only_as_root(tmp_path, monkeypatch, root):
    from gather_course.course import _workcopy

    monkeypatch.setattr(_workcopy, "running_as_root", lambda: root)
    command, _env = lab_command(tmp_path, [])
    assert ("--allow-root" in command) == root
    command, _env = lab_command(tmp_path, ["--allow-root"])
    assert command.count("--allow-root") == 1


@pytest.mark.parametrize("euid", [0, 1000])
def test_start_as_root_says_so_in_one_line_and_allows_root(tmp_path, monkeypatch, euid):
    """As in a container: JupyterLab gets --allow-root, and the learner one line saying so.
    (Root is faked, and JupyterLab is not started: the command it would exec is kept.)"""
    started: list[list[str]] = []
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    monkeypatch.setattr(os, "execve", lambda path, argv, env: started.append(list(argv)))
    run = cli("start", str(tmp_path / "w"), "--", "--no-browser")
    assert run.returncode == 0, run.stderr
    ((*_, last),) = started
    said = [line for line in run.stdout.splitlines() if "--allow-root" in line]
    if euid == 0:
        assert said == ["Running as root (as in a container): JupyterLab starts with --allow-root."]
        assert started[0].count("--allow-root") == 1 and last == "--no-browser"
    else:
        assert said == [] and "--allow-root" not in started[0]


def test_start_runs_jupyterlab_through_its_own_python_without_an_active_environment(tmp_path):
    """An environment used without activating it (its bin/ not on PATH), as with pipx:
    ``start`` still finds JupyterLab, through the interpreter it runs on."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV",)}
    env["PATH"] = "/usr/bin:/bin"  # no jupyter of this environment on it
    env["XDG_DATA_HOME"] = str(tmp_path / "data")  # where start remembers its copy
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gather_course.cli",
            "start",
            str(tmp_path / "w"),
            "--",
            "--version",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"^\d+\.\d+", done.stdout.splitlines()[-1]), done.stdout


def test_learner_settings_switch_off_nbgrader_screens_that_exist():
    """The plugin and server-extension names must be nbgrader's real ones, or nothing is off."""
    import nbgrader

    page = json.loads((LEARNER_CONFIG / "labconfig/page_config.json").read_text())
    off = {k for k, v in page["disabledExtensions"].items() if v}
    assert {
        "@jupyter/nbgrader:formgrader",
        "@jupyter/nbgrader:create-assignment",
        "@jupyter/nbgrader:assignment-list",
        "@jupyter/nbgrader:course-list",
    } <= off
    assert "@jupyter/nbgrader:validate-assignment" not in off  # Validate stays
    static = Path(nbgrader.__file__).parent / "labextension"
    if not static.is_dir():  # installed under share/
        static = Path(sys.prefix) / "share/jupyter/labextensions/@jupyter/nbgrader"
    bundle = "".join(p.read_text(errors="ignore") for p in static.rglob("*.js"))
    # JupyterLab's own news pop-up ("Would you like to get notified about official Jupyter
    # news?") greets a first start: off too, from JupyterLab's core bundle
    news = "@jupyterlab/apputils-extension:announcements"
    assert news in off
    core = Path(sys.prefix) / "share/jupyter/lab/static"
    assert any(f'"{news}"' in p.read_text(errors="ignore") for p in core.glob("jlab_core*.js"))
    for plugin in off - {news}:
        assert f'"{plugin}"' in bundle, f"nbgrader has no plugin {plugin}"
    server = json.loads((LEARNER_CONFIG / "jupyter_server_config.json").read_text())
    exts = server["ServerApp"]["jpserver_extensions"]
    assert exts == {
        "nbgrader.server_extensions.assignment_list": False,
        "nbgrader.server_extensions.course_list": False,
        "nbgrader.server_extensions.formgrader": False,
        # Validate: ours, with a summary and whole verdicts (gather_course/course/_validate.py)
        "nbgrader.server_extensions.validate_assignment": False,
        "gather_course.course._validate": True,
    }
    for module in exts:
        __import__(module)


def test_progress_shows_what_passes_in_the_working_copy(tmp_path):
    work = make_working_copy(tmp_path / "work").folder
    for other in (work / "exercises").iterdir():  # one assignment keeps it short
        if other.name != "basics":
            shutil.rmtree(other)
    path = work / "exercises/basics/basics.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "pick_per_row":
            cell.source = "import torch\n" + exercise("basics.pick_per_row").solution_code
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "reverse_index":
            cell.source = "def reverse_index(input, output, dim):\n    return output\n"
    nbformat.write(nb, path)
    run = cli("progress", str(work))
    assert run.returncode == 0, run.stderr
    # with no folder named, the working copy the learner stands in, not the default one
    assert cli("progress", cwd=path.parent).stdout == run.stdout
    out = run.stdout
    assert "basics   1 of 3 questions pass" in out
    assert "✓ pick_per_row" in out and "· gather_loop              not attempted" in out
    assert "✗ reverse_index            failing" in out
    assert "1 of 3 questions pass." in out


@pytest.fixture
def data_home(tmp_path, monkeypatch) -> Path:
    """A learner of their own: HOME and XDG_DATA_HOME in tmp_path, nothing remembered yet."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    (tmp_path / "home").mkdir()
    return tmp_path / "data"


def _basics_only(work: Path) -> None:
    for other in (work / "exercises").iterdir():  # one assignment keeps it short
        if other.name != "basics":
            shutil.rmtree(other)


def test_progress_elsewhere_reports_the_working_copy_start_made(tmp_path, data_home):
    work = tmp_path / "somewhere" / "my-work"
    assert cli("start", str(work), "--no-lab").returncode == 0
    state = data_home / "gather-course" / "last-working-copy.json"
    assert json.loads(state.read_text()) == {"folder": str(work)}
    assert not (work / "last-working-copy.json").exists()  # nothing of it in the copy
    _basics_only(work)
    unrelated = tmp_path / "unrelated"
    unrelated.mkdir()
    run = cli("progress", cwd=unrelated)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"Not in a working copy: showing the one you last started, {work}."
    assert lines[1].startswith(f"Progress in {work} ")
    assert "basics   0 of 3 questions pass" in run.stdout
    # standing in another working copy: that one, and no word about the remembered one
    other = make_working_copy(tmp_path / "other").folder
    _basics_only(other)
    inside = cli("progress", cwd=other / "exercises")
    assert inside.returncode == 0 and inside.stdout.startswith(f"Progress in {other} ")


def test_start_remembers_the_last_copy_it_opened_and_honours_xdg_default(
    tmp_path, data_home, monkeypatch
):
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second, first):  # opening an earlier one makes it the last again
        assert cli("start", str(folder), "--no-lab").returncode == 0
    state = data_home / "gather-course" / "last-working-copy.json"
    assert json.loads(state.read_text())["folder"] == str(first)
    monkeypatch.delenv("XDG_DATA_HOME")  # unset: ~/.local/share, as the XDG spec says
    assert cli("start", str(second), "--no-lab").returncode == 0
    state = tmp_path / "home" / ".local/share/gather-course/last-working-copy.json"
    assert json.loads(state.read_text())["folder"] == str(second)


def test_a_remembered_copy_that_is_gone_is_skipped_with_a_note(tmp_path, data_home):
    gone = tmp_path / "gone"
    assert cli("start", str(gone), "--no-lab").returncode == 0
    shutil.rmtree(gone)
    default = make_working_copy().folder  # ~/gather-course-work, in tmp_path's home
    assert default == tmp_path / "home" / "gather-course-work"
    _basics_only(default)
    run = cli("progress", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"note: the working copy you last started, {gone}, is gone; skipped it."
    assert lines[1].startswith(f"Progress in {default} ")
    shutil.rmtree(default)  # and with no default either: the error names what to run
    run = cli("progress", cwd=tmp_path)
    assert run.returncode == 2 and "is not a working copy" in run.stderr
    assert "gather-course start" in run.stderr and "is gone; skipped it." in run.stdout


def test_start_does_not_fail_where_it_cannot_remember(tmp_path, data_home):
    data_home.write_text("a file, not a folder")  # the data folder cannot be made
    run = cli("start", str(tmp_path / "w"), "--no-lab")
    assert run.returncode == 0 and "Copied 12 notebooks" in run.stdout, run.stderr


def test_progress_refuses_a_folder_that_is_not_a_working_copy(tmp_path):
    run = cli("progress", str(tmp_path))
    assert run.returncode == 2 and "is not a working copy" in run.stderr


def test_check_says_a_missing_notebook_is_not_found(tmp_path):
    run = cli("check", "missing.ipynb", cwd=tmp_path)
    assert run.returncode == 2 and "'missing.ipynb' is not found" in run.stderr


def test_help_has_no_rst_markup():
    run = cli("--help")
    assert run.returncode == 0
    text = run.stdout
    assert "``" not in text and "start [DIR]" in text and "progress" in text


def test_options_after_double_dash_are_only_for_start():
    run = cli("check", "x.ipynb", "--", "--port", "1")
    assert run.returncode == 2 and "only `start` takes options after --" in run.stderr


def test_working_copy_errors_are_the_course_error(tmp_path):
    with pytest.raises(GatherCourseError, match="course's notebooks are not in"):
        make_working_copy(tmp_path / "w", course=tmp_path / "no-course")


def test_jupyterlabs_terminal_finds_the_courses_commands_after_a_login_profile(tmp_path):
    """start's JupyterLab runs its terminal as the learner's login shell and then puts the
    course's environment first on PATH: a login profile that sets PATH anew (Debian's
    /etc/profile) dropped it, and `gather-course` was not found there (issue 47)."""
    command, env = lab_command(tmp_path, [])
    (setting,) = [a for a in command if a.startswith("--ServerApp.terminado_settings=")]
    terminal = json.loads(setting.split("=", 1)[1])["shell_command"]
    assert terminal[1] == "-l"  # still a login shell: the learner's own profile
    typed = "command -v gather-course || echo NOT FOUND; exit\n"  # what a learner types
    found = subprocess.run(
        terminal, input=typed, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    bindir = os.path.dirname(sys.executable)
    assert found.stdout.strip() == os.path.join(bindir, "gather-course"), found
    stock = subprocess.run(  # JupyterLab's own terminal: the login shell alone
        [terminal[0], "-l"], input=typed, env=env, cwd=tmp_path, capture_output=True, text=True
    )
    if bindir not in stock.stdout:  # this machine's profile resets PATH, as Debian's does
        assert "NOT FOUND" in stock.stdout


def test_a_shell_that_takes_no_such_script_keeps_jupyterlabs_own_terminal():
    from gather_course.course._workcopy import terminal_command

    assert terminal_command("/venv/bin", "/usr/bin/fish") == []
    assert terminal_command("/venv/bin", "/bin/zsh")[:2] == ["/bin/zsh", "-l"]


def test_progress_in_chinese_joins_its_sentences_the_chinese_way(tmp_path):
    """`progress` of a zh working copy ends with two sentences: no space after 。 (issue 47:
    「…通过了 0 道。 运行…」)."""
    work = make_working_copy(tmp_path / "zh", lang="zh").folder
    run = cli("progress", str(work))
    assert run.returncode == 0, run.stderr
    last = run.stdout.strip().splitlines()[-1]
    assert "。" in last and "。 " not in last, last
    assert "gather-course check" in last, last


def test_a_chinese_learners_commands_speak_chinese_everywhere(tmp_path):
    """With a Chinese working copy (the one start last opened), the help, a note of
    progress outside the copy and check's error for a wrong path are Chinese; the locale
    alone does it too; the instructor's commands still speak English (issue 47)."""
    work = tmp_path / "zh"
    assert _start(tmp_path, None, str(work), "--lang", "zh")[0] == 0  # remembered
    helped = cli("--help", cwd=tmp_path)
    assert helped.returncode == 0
    assert "给学习者" in helped.stdout and "位置参数：" in helped.stdout, helped.stdout
    assert "positional arguments" not in helped.stdout and "用法：" in helped.stdout
    assert "For learners" not in helped.stdout
    elsewhere = cli("progress", cwd=tmp_path)
    assert "当前不在工作副本中" in elsewhere.stdout, elsewhere.stdout
    missing = cli("check", "nosuch.ipynb", cwd=tmp_path)
    assert missing.returncode == 2 and "找不到 'nosuch.ipynb'" in missing.stderr, missing.stderr
    instructor = cli("grade", "nosuch", cwd=tmp_path)
    assert "is not the course root" in instructor.stderr, instructor.stderr  # in English
    assert not re.search(r"[\u4e00-\u9fff]", instructor.stderr), instructor.stderr


def test_the_locale_alone_makes_the_commands_chinese(tmp_path, monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    missing = cli("check", "nosuch.ipynb", cwd=tmp_path)
    assert "找不到 'nosuch.ipynb'" in missing.stderr, missing.stderr
    monkeypatch.setenv("LANG", "C.UTF-8")
    missing = cli("check", "nosuch.ipynb", cwd=tmp_path)
    assert "is not found" in missing.stderr, missing.stderr
