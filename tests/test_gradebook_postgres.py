"""The gradebook on a real PostgreSQL server: nbgrader's ``db_url``, and two grading runs at
once. The server is Debian's ``postgresql``, started in a temporary folder on a free port."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from tests import test_grading_e2e as e2e
from tests.helpers import free_port

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.classroom  # README: python -m pytest -m classroom tests
REQUIRE = os.environ.get("GATHER_COURSE_REQUIRE_POSTGRES", "") not in ("", "0")


def _bindir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """A PostgreSQL server of our own, for this module: its SQLAlchemy URL."""
    bindir = _bindir()
    if bindir is None or (not shutil.which("runuser") and os.geteuid() == 0):
        if REQUIRE:
            pytest.fail("GATHER_COURSE_REQUIRE_POSTGRES is set but PostgreSQL is not installed")
        pytest.skip("no PostgreSQL server here: apt-get install postgresql")
    try:
        import psycopg  # noqa: F401 - the driver nbgrader's SQLAlchemy will use
    except ImportError:
        if REQUIRE:
            pytest.fail("GATHER_COURSE_REQUIRE_POSTGRES is set but psycopg is not installed")
        pytest.skip("no psycopg here: pip install 'gather-course[postgres]'")
    base = Path(tempfile.mkdtemp(prefix="gather-course-pg-"))
    base.chmod(0o755)
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    as_root = os.geteuid() == 0
    if as_root:  # initdb refuses root: the server runs as the postgres user
        for path in (base, sock):
            shutil.chown(path, "postgres", "postgres")

    def run(*args: str | Path) -> None:
        cmd = [str(a) for a in args]
        cmd = ["runuser", "-u", "postgres", "--", *cmd] if as_root else cmd
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr

    port = free_port()
    run(bindir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
    options = f"-p {port} -k {sock} -c listen_addresses=''"
    run(bindir / "pg_ctl", "-D", data, "-o", options, "-l", base / "server.log", "-w", "start")
    try:
        run(bindir / "createdb", "-h", sock, "-p", str(port), "-U", "postgres", "gradebook")
        yield f"postgresql+psycopg://postgres@/gradebook?host={sock}&port={port}"
    finally:
        run(bindir / "pg_ctl", "-D", data, "stop", "-m", "fast")
        shutil.rmtree(base, ignore_errors=True)


def _course(base: Path, url: str, course_id: str = "gather-101") -> Path:
    root = base / "course"
    root.mkdir()
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, root / folder)
    config = (ROOT / "nbgrader_config.py").read_text()
    config += f"\nc.CourseDirectory.db_url = {url!r}\n"
    config += f"c.CourseDirectory.course_id = {course_id!r}\n" if course_id else ""
    (root / "nbgrader_config.py").write_text(config)
    for assignment in ("basics", "nlp"):
        subs = e2e._submissions(assignment, root)
        for student in ("solution", "wrong_odd", "untouched"):
            folder = root / "submitted" / student / assignment
            folder.mkdir(parents=True)
            nbformat.write(subs[student], folder / f"{assignment}.ipynb")
    return root


def _grade(root: Path, assignment: str) -> subprocess.Popen:
    args = [sys.executable, "-m", "gather_course.cli", "grade", assignment, "--course", str(root)]
    args += ["--jobs", "1", "--timeout", str(e2e.CALL_TIMEOUT)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_classes_graded_at_once_into_one_postgresql_gradebook(postgres, tmp_path):
    if e2e.isolation().level != "sandbox" and not e2e.REQUIRE_SANDBOX:
        pytest.skip(f"the grading tests run in the sandbox: {e2e.isolation()}")
    from nbgrader.api import Gradebook

    root = _course(tmp_path, postgres)
    runs = {a: _grade(root, a) for a in ("basics", "nlp")}  # at the same time
    for assignment, run in runs.items():
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, (assignment, out, err)
        assert f"{assignment}: 3 of 3 submissions graded" in out
    assert not (root / "gradebook.db").exists()  # nothing went to the default SQLite file
    with Gradebook(postgres) as gb:
        for assignment in ("basics", "nlp"):
            with open(root / f"grades-{assignment}.csv", newline="") as f:
                rows = {row["student"]: row for row in csv.DictReader(f)}
            total = sum(p for *_, p in e2e._expected(assignment))
            assert float(rows["solution"]["score"]) == total
            assert float(rows["untouched"]["score"]) == 0
            assert 0 < float(rows["wrong_odd"]["score"]) < total
            for student, row in rows.items():
                stored = gb.find_submission(assignment, student)
                assert float(stored.score) == float(row["score"]), (assignment, student)
                assert float(stored.max_score) == total
            assert len(gb.find_assignment(assignment).submissions) == 3


def test_a_database_server_without_a_course_id_is_refused_with_the_fix(postgres, tmp_path):
    root = _course(tmp_path, postgres, course_id="")
    run = _grade(root, "basics")
    out, err = run.communicate(timeout=300)
    assert run.returncode == 2, out + err
    assert "set c.CourseDirectory.course_id" in err and "(postgresql)" in err


def test_a_batch_of_students_writes_the_rows_of_nbgraders_commits(postgres, tmp_path):
    """The Recorder's batches (one transaction for many students, new submissions in one
    INSERT a table) on PostgreSQL: the same rows, every column, as nbgrader's autograde
    with its own commit per step, in three courses of one server; and a second run (ada
    graded again, by nbgrader's autograde) the same both ways."""
    from tests.test_record import _class, _record, _written

    students = ["ada", "bo", "cy", "dee"]
    rows = {}
    for batch, bulk in ((1, False), (1, True), (64, True)):
        config = f"c.CourseDirectory.db_url = {postgres!r}\n"
        config += f"c.CourseDirectory.course_id = 'batch-{batch}-{bulk}'\n"
        root = _class(tmp_path / f"b{batch}-{bulk}", config)
        found, problems = _record(root, students, batch, bulk)
        assert not problems and sorted(found) == students
        again, problems = _record(root, ["ada"], batch, bulk)
        assert not problems and again["ada"] == found["ada"]
        rows[batch, bulk] = _written(root, students)["rows"]
    assert rows[64, True] == rows[1, False] and rows[1, True] == rows[1, False]
    assert all(row["score"] > 0 for row in rows[64, True].values())
