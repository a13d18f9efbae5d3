"""A classroom on a shared machine, for real: Unix users, their Python, the exchange.

A classroom is a shared machine: every student is a Unix user of their own, and the
instructor another. These tests make such users for real (``useradd``, as root: CI runs as
root), run their commands as them (``runuser``) and remove them, their processes and their
homes afterwards, in a ``finally``. Names are new on every run (``gc`` and six random
letters, then the role), so a run that crashed leaves nothing a later run trips on.

A student runs the course's Python: :func:`student_env` makes one every user can execute
(this test environment's packages, seen through a Python outside ``/root``, whose mode 700
keeps other users out of pyenv's interpreters and of a checkout kept there).
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import string
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import ROOT

REQUIRE = os.environ.get("GATHER_COURSE_REQUIRE_USERS", "") not in ("", "0")
PATH = "/usr/local/bin:/usr/bin:/bin"
DENIED = ("Permission denied", "Operation not permitted")  # what the system says to a refusal


def need_root() -> None:
    """Skip (or fail, where ``GATHER_COURSE_REQUIRE_USERS=1``) without root or ``useradd``."""
    why = ""
    if os.geteuid() != 0:
        why = "real Unix users need root (useradd, runuser)"
    elif not (shutil.which("useradd") and shutil.which("runuser")):
        why = "no useradd or runuser on this machine"
    if why:
        if REQUIRE:
            pytest.fail(f"{why} (GATHER_COURSE_REQUIRE_USERS=1: required here)", pytrace=False)
        pytest.skip(why)


def everyone_reads(path: Path) -> bool:
    """Whether any user can reach ``path`` (every folder above it lets others in) and read it."""
    path = path.resolve()
    for folder in [*reversed(path.parents), path]:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH or (folder == path and not mode & stat.S_IROTH):
            return False
    return True


class Campus:
    """A shared machine's users: homes in a folder of its own (mode 755), each home the
    user's alone (700). :meth:`add` makes a user; leaving the ``with`` removes them all."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="gather-course-campus-", dir="/tmp"))
        self.base.chmod(0o755)
        (self.base / "homes").mkdir(mode=0o755)
        self.token = "".join(secrets.choice(string.ascii_lowercase) for _ in range(6))
        self.users: list[str] = []

    def home(self, user: str) -> Path:
        return self.base / "homes" / user

    def add(self, role: str) -> str:
        """A new Unix user (its own group, a home of mode 700); returns its name."""
        user = f"gc{self.token}{role}"[:32]
        home = self.home(user)
        subprocess.run(
            ["useradd", "--no-create-home", "--home-dir", str(home), "--shell", "/bin/bash", user],
            check=True,
            capture_output=True,
        )
        self.users.append(user)
        home.mkdir(mode=0o700)
        shutil.chown(home, user, user)
        return user

    def run(
        self,
        user: str,
        *argv: str | Path,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess:
        """``argv`` as ``user``, in a clean environment (their HOME, a plain PATH)."""
        clean = {"HOME": str(self.home(user)), "USER": user, "PATH": PATH, "LANG": "C.UTF-8"}
        clean.update(env or {})
        return subprocess.run(
            ["runuser", "-u", user, "--", "env", "-i", *(f"{k}={v}" for k, v in clean.items())]
            + [str(a) for a in argv],
            cwd=cwd or self.home(user),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def shell(self, user: str, script: str, **kwargs) -> subprocess.CompletedProcess:
        """A shell command line as ``user`` (what a student types in a terminal)."""
        return self.run(user, "/bin/bash", "-c", script, **kwargs)

    def refused(self, user: str, script: str, target: Path) -> None:
        """``script`` run by ``user`` fails with the system's refusal, about ``target``, which
        exists (a wrong path would fail too, and prove nothing)."""
        assert target.exists() or target.is_symlink(), target
        done = self.shell(user, script)
        assert done.returncode != 0, f"{script!r} succeeded for {user}:\n{done.stdout}"
        assert any(d in done.stderr for d in DENIED), (script, done.stderr)

    def close(self) -> None:
        for user in self.users:
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
        for user in self.users:
            subprocess.run(["userdel", "--force", user], capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)


@contextmanager
def campus() -> Iterator[Campus]:
    """A :class:`Campus`, removed with its users whatever happens."""
    need_root()
    made = Campus()
    try:
        yield made
    finally:
        made.close()


def _runnable_python() -> Path:
    """An interpreter of this Python's version that every user can run: this one where its
    folders let others in, else the system's (Debian's ``/usr/bin/python3.X``)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    mine = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    for candidate in (mine, Path(f"/usr/bin/python{version}")):
        if candidate.is_file() and everyone_reads(candidate):
            return candidate
    pytest.fail(
        f"no Python {version} that other users can run: {mine} is not theirs to run, and "
        f"there is no /usr/bin/python{version} (apt-get install python{version})",
        pytrace=False,
    )


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _fit_the_interpreter(env: Path, site: Path) -> None:
    """Replace each package of ``site`` whose ``Requires-Python`` excludes ``env``'s Python
    (Debian 12's is 3.11.2; soupsieve 4.1 asks for 3.11.5) by the newest release that
    accepts it, as pip would have chosen on that Python."""
    from importlib.metadata import distributions

    from packaging.specifiers import SpecifierSet

    version = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import platform; print(platform.python_version())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    for dist in distributions(path=[str(site)]):
        wanted = dist.metadata.get("Requires-Python")
        if not wanted or version in SpecifierSet(wanted):
            continue
        name = dist.metadata["Name"]
        for f in dist.files or []:
            (site / f).unlink(missing_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:",
                 "--python-version", version, "--target", tmp, name],
                check=True,
                capture_output=True,
                env={**os.environ, "PIP_CONSTRAINT": ""},
            )  # fmt: skip
            shutil.copytree(tmp, site, dirs_exist_ok=True)


def student_env(where: Path, copy: bool | None = None) -> Path:
    """A virtual environment in ``where`` that every user can run, as a hub would install
    the course for its students: a Python they can execute, and this environment's packages
    in its own site-packages (hard links where the disk allows, else copies: grading's
    sandbox mounts what lies under the environment's prefix), its ``share/`` and ``etc/``
    (JupyterLab's assets and extensions, the server extensions' switches) and its commands
    (``jupyterhub-singleuser``, ``nbgrader``, ``gather-course``), which run its Python.

    The course comes as installed here (an editable install finds it in the checkout) where
    every user can read the checkout; else (``copy`` None: found out; True: as if) its
    package is copied in.
    """
    prefix = Path(sys.prefix)
    packages = Path(sysconfig.get_paths()["purelib"])
    if copy is None:
        copy = not everyone_reads(ROOT / "gather_course")
    env = where / "env"
    subprocess.run(
        [str(_runnable_python()), "-m", "venv", "--without-pip", str(env)],
        check=True,
        capture_output=True,
    )
    mine = env / packages.relative_to(prefix)
    skip = shutil.ignore_patterns("__editable__*") if copy else None
    shutil.copytree(packages, mine, copy_function=_link_or_copy, ignore=skip, dirs_exist_ok=True)
    if copy:
        shutil.copytree(
            ROOT / "gather_course",
            mine / "gather_course",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    _fit_the_interpreter(env, mine)
    for folder in ("share", "etc"):
        if (prefix / folder).is_dir():
            shutil.copytree(prefix / folder, env / folder, copy_function=_link_or_copy)
    for script in (prefix / "bin").iterdir():
        first = script.read_bytes()[:200].split(b"\n", 1)[0] if script.is_file() else b""
        if (
            first.startswith(b"#!")
            and b"python" in first
            and not (env / "bin" / script.name).exists()
        ):
            body = script.read_text(encoding="utf-8").split("\n", 1)[1]
            (env / "bin" / script.name).write_text(f"#!{env / 'bin' / 'python'}\n{body}")
            (env / "bin" / script.name).chmod(0o755)
    for dirpath, _dirnames, filenames in os.walk(where):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode) and not mode & stat.S_IROTH:
                os.chmod(path, mode | 0o444)
    return env


# --- the exchange and the configuration files docs/jupyterhub.md gives --------------------------
COURSE_ID = "gather-101"

# The students' nbgrader settings (/etc/jupyter/nbgrader_config.py on a hub); the guide gives
# this file (tests/test_jupyterhub_classroom.py holds them equal).
STUDENT_NBGRADER_CONFIG = """c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "{course_id}"
c.Exchange.root = "{exchange}"
# Each submission closed to classmates (the exchange's group is the instructor's).
c.ExchangeFactory.submit = "gather_course.grading.exchange.Submit"
"""
# Added to the course's nbgrader_config.py (the repository's names the exchange's plugins).
COURSE_EXCHANGE_CONFIG = """
c.CourseDirectory.course_id = "{course_id}"
c.Exchange.root = "{exchange}"
"""


def make_exchange(where: Path) -> Path:
    """The exchange as the guide has the administrator make it: a folder every user may
    write into, sticky (``install -d -m 1777``), so no one renames what another made."""
    exchange = where / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    return exchange


def make_course(where: Path, exchange: Path, owner: str | None = None, extra: str = "") -> Path:
    """A course folder (a copy of this course's sources and releases, its nbgrader_config.py
    with the exchange and ``extra``), owned by ``owner`` (a Unix user) when given."""
    course = where / "course"
    course.mkdir()
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, course / folder)
    config = (ROOT / "nbgrader_config.py").read_text()
    config += COURSE_EXCHANGE_CONFIG.format(course_id=COURSE_ID, exchange=exchange) + extra
    (course / "nbgrader_config.py").write_text(config)
    if owner is not None:
        subprocess.run(["chown", "-R", f"{owner}:{owner}", str(course)], check=True)
    return course


def student_config(folder: Path, exchange: Path) -> Path:
    """The students' Jupyter configuration folder (the test's stand-in for /etc/jupyter),
    with their nbgrader settings; readable by every user."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    path = folder / "nbgrader_config.py"
    path.write_text(STUDENT_NBGRADER_CONFIG.format(course_id=COURSE_ID, exchange=exchange))
    path.chmod(0o644)
    return folder
