"""The gradebook is opened by nbgrader's API, where the course's config puts it."""

from __future__ import annotations

import shutil

from gather_course.grading._gradebook import gradebook as _gradebook
from gather_course.grading._gradebook import gradebook_knows as _gradebook_knows
from tests.helpers import ROOT


def _course(tmp_path, db_url: str | None = None):
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", root)
    if db_url:
        with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
            f.write(f"\nc.CourseDirectory.db_url = {db_url!r}\n")
    return root


def test_a_configured_db_url_is_honoured(tmp_path):
    elsewhere = tmp_path / "grades" / "class.db"
    elsewhere.parent.mkdir()
    root = _course(tmp_path, f"sqlite:///{elsewhere}")
    assert not _gradebook_knows(root, "basics") and not elsewhere.exists()  # nothing created
    with _gradebook(root) as gb:
        gb.update_or_create_assignment("basics")
    assert elsewhere.is_file() and not (root / "gradebook.db").exists()
    assert not _gradebook_knows(root, "basics")  # known, but it has no notebooks yet


def test_the_default_is_gradebook_db_in_the_root(tmp_path):
    root = _course(tmp_path)
    assert not _gradebook_knows(root, "basics") and not (root / "gradebook.db").exists()
    with _gradebook(root) as gb:
        gb.update_or_create_assignment("basics")
    assert (root / "gradebook.db").is_file()


def test_a_new_gradebook_is_made_as_nbgraders_first_gradebook_makes_it(tmp_path):
    import sqlite3

    from nbgrader.api import Gradebook

    from gather_course.course._course import alembic_on_path
    from gather_course.grading._gradebook import _new_database

    ours, theirs = tmp_path / "ours.db", tmp_path / "theirs.db"
    _new_database(f"sqlite:///{ours}")
    with alembic_on_path(), Gradebook(f"sqlite:///{theirs}"):  # (runs `alembic heads`)
        pass

    def made(path):
        with sqlite3.connect(path) as db:
            tables = sorted(db.execute("SELECT type, name, sql FROM sqlite_master"))
            return tables, db.execute("SELECT version_num FROM alembic_version").fetchall()

    mine, nbgraders = made(ours), made(theirs)
    assert mine == nbgraders and len(mine[1]) == 1 and mine[1][0][0]
    with Gradebook(f"sqlite:///{ours}") as gb:  # nbgrader takes it as its own
        gb.update_or_create_assignment("basics")
    _new_database(f"sqlite:///{ours}")  # one that exists is left alone
    assert made(ours)[1] == nbgraders[1]
