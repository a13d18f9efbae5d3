"""Test-wide set-up: pictures are drawn without a display, and the learner's data folder
(``XDG_DATA_HOME``, where ``gather-course start`` remembers its working copy) is a temporary
one, so no test run writes into the data folder of whoever runs it. And the checkout keeps
its mode: grading closes a course folder to other users, and a test that grades in the
checkout itself would close it (the classroom's Unix users run the course from it)."""

import os
import stat
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")


@pytest.fixture(scope="session", autouse=True)
def _own_data_folder(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
        # the locale is a learner's language too (_i18n.language): the tests' is C, whatever
        # the machine's, so what they read does not depend on where they run
        mp.setenv("LANG", "C.UTF-8")
        mp.delenv("LC_ALL", raising=False)
        mp.delenv("LC_MESSAGES", raising=False)
        yield


@pytest.fixture(autouse=True)
def _cwd_is_kept(request):
    """(Named to come first of the autouse fixtures, which pytest orders by name: set up before
    monkeypatch, it is checked after monkeypatch's undo.)
    A test that leaves the process in another folder breaks every later one that reads a
    relative path (nbval's sanitize file: 187 errors once): it fails itself instead."""
    before = os.getcwd()
    yield
    after = os.getcwd()
    if after != before:
        os.chdir(before)
        pytest.fail(f"{request.node.nodeid} left the working directory at {after}")


@pytest.fixture(autouse=True)
def _no_remembered_working_copy(tmp_path_factory, monkeypatch):
    """Each test starts with no working copy remembered: the learner's commands speak the
    language of the one `start` last opened, so one test's Chinese copy would change what
    the next one reads."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg")))


@pytest.fixture(scope="session", autouse=True)
def _the_checkout_keeps_its_mode():
    root = Path(__file__).resolve().parents[1]
    before = stat.S_IMODE(root.stat().st_mode)
    yield
    after = stat.S_IMODE(root.stat().st_mode)
    assert after == before, f"a test changed {root}'s mode from {before:o} to {after:o}"


@pytest.fixture(scope="module")
def referee():
    """A referee with its sandboxed worker, one a test module (grading tests share it)."""
    from gather_course.grading._referee import Referee
    from gather_course.grading._sandbox import Worker

    ref = Referee(Worker, call_limit=10)
    yield ref
    ref.close()
