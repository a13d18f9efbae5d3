"""The gradebook is opened by nbgrader's API, where the course's config puts it."""

from __future__ import annotations

import shutil

from gather_course.grading._grade import _gradebook, _gradebook_knows
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
