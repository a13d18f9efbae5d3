"""The learner's working copy: the lectures and the student exercises in a folder they own.

``gather-course start DIR`` makes it, or brings a corrected course into it (never over the
learner's work), and opens it in JupyterLab with the learner's settings; ``gather-course
progress DIR`` checks its exercises.
The course's own folders are only read, so studying never changes them.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from .._errors import GatherCourseError
from .._i18n import N_, _, choosing, setting
from .._learner_files import MARKER, enclosing_working_copy, write_atomic
from ._upgrade import BESIDE, LAST, Copied, read_marker, read_text, sync_file

DEFAULT_DIR = "~/gather-course-work"
LEARNER_CONFIG = Path(__file__).parent / "_learner_config"


def _installed_course() -> Path:
    """Where the course's notebooks are: inside the package when installed from a wheel or an
    sdist (``gather_course/_material/``, copied there by setup.py), else the checkout around an
    editable install."""
    package = Path(__file__).resolve().parents[1]
    material = package / "_material"
    return material if (material / "notebooks").is_dir() else package.parent


_COURSE = _installed_course()


def course_files(course: Path = _COURSE) -> list[Path]:
    """The files a working copy holds, relative to the course: lectures, then exercises."""
    lectures = sorted((course / "notebooks").glob("*.ipynb"))
    exercises = sorted((course / "exercises").glob("*/*.ipynb"))
    if not lectures or not exercises:
        raise GatherCourseError(
            _(
                "the course's notebooks are not in {course}: expected notebooks/*.ipynb and "
                "exercises/<assignment>/<assignment>.ipynb. Reinstall the course "
                "(pip install gather-course, or pip install -e . in its git clone)."
            ).format(course=course)
        )
    return [p.relative_to(course) for p in lectures + exercises]


def released_exercises(course: Path = _COURSE) -> list[Path]:
    """The course's own student notebooks as released, both editions (``check`` restores a
    locked cell a learner edited from them)."""
    return sorted(course.glob("exercises/*/*.ipynb")) + sorted(
        course.glob("zh/exercises/*/*.ipynb")
    )


def working_dir(path: str | Path | None) -> Path:
    """The working copy's folder: ``path``, or the default ``~/gather-course-work``."""
    return Path(os.path.expanduser(str(path or DEFAULT_DIR))).resolve()


def make_working_copy(
    path: str | Path | None = None, course: Path = _COURSE, lang: str | None = None
) -> Copied:
    """Copy the lectures and the student exercises into ``path`` (default ``~/gather-course-work``).

    The folder must be new, empty, or an earlier working copy, and outside the course itself.
    ``lang`` picks the edition (default: the learner's language); ``zh`` copies the Chinese
    edition, ``zh/notebooks`` and ``zh/exercises``, into the same layout.

    A learner's work is never overwritten. The marker records the sha256 of each file copied,
    so a later start can bring a corrected course over: a lecture the learner has not changed
    is updated in place; a lecture they changed, and every exercise, keeps their version,
    with the course's new one beside it (``basics.new.ipynb``). See :class:`Copied`.

    >>> make_working_copy("~/gather-course-work").folder      # doctest: +SKIP
    PosixPath('/home/me/gather-course-work')
    """
    folder = working_dir(path)
    course = course.resolve()
    _check_folder(folder, course)
    made_for = _edition_of(folder / MARKER)
    edition = lang or made_for or setting() or "en"  # a working copy reopens in its own
    if edition == "zh":
        course = course / "zh"
    if made_for is not None and made_for != edition:
        with choosing(made_for):  # said in the language of the copy the learner has
            raise GatherCourseError(
                _(
                    "{folder} is your working copy of the {had} edition. To have the "
                    "{wanted} edition too, give it a folder of its own: `gather-course start "
                    "{folder}-{want} --lang {want}`; `gather-course start {folder}` reopens "
                    "this one."
                ).format(
                    folder=folder,
                    had=_(EDITIONS[made_for]),
                    wanted=_(EDITIONS.get(edition, edition)),
                    want=edition,
                )
            )
    files = course_files(course)
    folder.mkdir(parents=True, exist_ok=True)
    record, set_aside = read_marker(folder / MARKER)
    copied = Copied(folder, set_aside=set_aside)
    given = record.get("files")
    given = given if isinstance(given, dict) else {}
    entries = {}
    for rel in files:
        entry = given.get(rel.as_posix())
        entries[rel.as_posix()] = sync_file(
            folder, course, rel, entry if isinstance(entry, dict) else {}, copied
        )
    record.update(course=str(course), lang=edition, files=entries)
    if copied.updated or copied.beside or copied.exercises:
        record[LAST] = {
            "date": time.strftime("%Y-%m-%d"),
            "updated": [p.as_posix() for p in copied.updated],
            "beside": [[a.as_posix(), b.as_posix()] for a, b in copied.beside],
            "exercises": [[a.as_posix(), b.as_posix()] for a, b in copied.exercises],
        }
    text = json.dumps(record, indent=1, ensure_ascii=False) + "\n"
    if set_aside is not None or read_text(folder / MARKER) != text:
        write_atomic(folder / MARKER, text.encode("utf-8"))
    return copied


def _check_folder(folder: Path, course: Path) -> None:
    """Refuse a working copy inside the course, over a file, or in a folder of other files."""
    if folder == course or course in folder.parents:
        raise GatherCourseError(
            _(
                "{folder} is inside the course's own folder {course}: your work would change "
                "the course's files. Pick a folder of your own, e.g. `gather-course start "
                "{default}`."
            ).format(folder=folder, course=course, default=DEFAULT_DIR)
        )
    if folder.exists() and not folder.is_dir():
        raise GatherCourseError(
            _("{folder} is a file; expected a folder for your working copy.").format(folder=folder)
        )
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MARKER).is_file():
        raise GatherCourseError(
            _(
                "{folder} already holds other files and is not a working copy of the course "
                "(no {marker}). Pick a new or empty folder, so nothing of yours gets mixed in."
            ).format(folder=folder, marker=MARKER)
        )


EDITIONS = {"en": N_("English"), "zh": N_("Chinese")}  # the editions' names, in messages


def copy_edition(path: str | Path | None) -> str | None:
    """The edition of the working copy at ``path`` (default: the default folder), or None
    where there is none yet."""
    return _edition_of(working_dir(path) / MARKER)


def _edition_of(marker: Path) -> str | None:
    """The edition (``en``, ``zh``) an earlier working copy was made of; None when new. A
    marker that cannot be read: the edition its lectures say they are."""
    if not marker.is_file():
        return None
    try:
        return str(json.loads(marker.read_text(encoding="utf-8")).get("lang", "en"))
    except (ValueError, AttributeError, OSError):
        return _lectures_edition(marker.parent)


def _lectures_edition(folder: Path) -> str:
    """``zh`` where a lecture of the working copy at ``folder`` is of the Chinese edition."""
    from .._i18n import edition

    for path in sorted((folder / "notebooks").glob("*.ipynb")):
        try:
            if edition(json.loads(path.read_text(encoding="utf-8"))) == "zh":
                return "zh"
        except (ValueError, OSError):
            continue
    return "en"


def working_copy_language(folder: Path) -> str:
    """The edition of the working copy at ``folder``: ``zh`` or ``en``."""
    return _edition_of(folder / MARKER) or "en"


STATE = "last-working-copy.json"


def state_file() -> Path:
    """Where ``start`` remembers the working copy it last made or opened: the learner's data
    folder (``$XDG_DATA_HOME``, else ``~/.local/share``), ``gather-course/``; never the course."""
    base = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):  # unset, or relative (which the XDG spec says to ignore)
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "gather-course" / STATE


def remember(folder: Path, course: Path = _COURSE) -> bool:
    """Note ``folder`` as the working copy ``progress`` shows when run outside any working
    copy. False (and nothing written) where the data folder cannot be written, or lies
    inside the course: remembering is a convenience, never a reason for ``start`` to fail."""
    path = state_file()
    if course.resolve() in path.resolve().parents:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (json.dumps({"folder": str(folder)}) + "\n").encode("utf-8"))
    except OSError:
        return False
    return True


def remembered() -> tuple[Path | None, str]:
    """The working copy ``start`` last made or opened, if it still is one, else None; and a
    one-line note when it was remembered but is gone (empty when nothing was remembered)."""
    try:
        folder = json.loads(state_file().read_text(encoding="utf-8"))["folder"]
    except (OSError, ValueError, KeyError, TypeError):
        return None, ""
    if (Path(folder) / MARKER).is_file():
        return Path(folder), ""
    return None, _(
        "note: the working copy you last started, {folder}, is gone; skipped it."
    ).format(folder=folder)


def learners_copy() -> Path | None:
    """The working copy a learner's command is about, where none is named: the one the
    learner stands in, else the one ``start`` last made or opened."""
    return enclosing_working_copy() or remembered()[0]


def progress_folder(path: str | Path | None) -> tuple[Path, list[str]]:
    """The working copy ``progress`` reports on, and notes on how it was found: ``path``;
    else the working copy the learner stands in; else the one ``start`` last made or opened;
    else the default one."""
    if path:
        return working_dir(path), []
    here = enclosing_working_copy()
    if here is not None:
        return here, []
    last, note = remembered()
    notes = [note] if note else []
    if last is not None:
        return last, [
            _("Not in a working copy: showing the one you last started, {folder}.").format(
                folder=last
            )
        ]
    return working_dir(None), notes


def running_as_root() -> bool:
    """Whether this process is root (the default in Docker and many cloud notebooks)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


# JupyterLab's defaults for a Chinese working copy: its Simplified Chinese language pack
# (jupyterlab-language-pack-zh-CN, a dependency). Defaults only: a learner's own choice of
# language in Settings → Language still wins.
LAB_SETTINGS_ZH = LEARNER_CONFIG / "lab_settings_zh"


def lab_command(
    folder: Path, extra: list[str], lang: str = "en"
) -> tuple[list[str], dict[str, str]]:
    """The ``jupyter lab`` command line and environment that open ``folder`` for a learner.

    JupyterLab runs through this interpreter (``python -m jupyter lab``), so an environment
    that is not activated, or pipx's, works as well as an active one; as root it gets
    ``--allow-root``, which JupyterLab otherwise demands. A Chinese working copy (``lang``
    ``zh``) opens JupyterLab in Chinese.
    """
    import sys

    env = dict(os.environ)
    paths = [str(LEARNER_CONFIG)] + [
        p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p
    ]
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(paths)
    # the environment's other commands (nbgrader's alembic, the kernel's tools) next to it
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    root = ["--allow-root"] if running_as_root() and "--allow-root" not in extra else []
    command = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={folder}"]
    terminal = terminal_command(os.path.dirname(sys.executable), env.get("SHELL", ""))
    if terminal:
        settings = json.dumps({"shell_command": terminal})
        command.append(f"--ServerApp.terminado_settings={settings}")
    if lang == "zh":
        command.append(f"--LabApp.app_settings_dir={LAB_SETTINGS_ZH}")
    return [*command, *root, *extra], env


# Shells whose login mode reads the system's profile and that take `-l -c SCRIPT`.
_SHELLS = ("bash", "zsh", "sh", "dash", "ksh")


def terminal_command(bindir: str, shell: str = "") -> list[str]:
    """JupyterLab's terminal: the learner's shell as a login shell (their profile, as
    JupyterLab runs it), then ``bindir`` first on its PATH and an interactive shell.

    A login shell's profile sets PATH anew (Debian's /etc/profile does), which dropped the
    environment ``start`` runs in: ``gather-course`` was not found in JupyterLab's terminal.
    ``[]`` for a shell that does not take this script (JupyterLab's default then).
    """
    shell = shell or shutil.which("bash") or "/bin/sh"
    if os.path.basename(shell) not in _SHELLS:
        return []
    script = 'PATH="$1:$PATH"; export PATH; exec "$0" -i'
    return [shell, "-l", "-c", script, shell, bindir]


def exercise_notebooks(folder: Path) -> list[Path]:
    """The exercise notebooks of a working copy, in the course's order."""
    from ._course import assignment_order

    if not (folder / MARKER).is_file():
        raise GatherCourseError(
            _(
                "{folder} is not a working copy of the course (no {marker}); make one with "
                "`gather-course start {folder}`, or pass the folder you made."
            ).format(folder=folder, marker=MARKER)
        )
    found = [  # not the course's new versions put beside them (basics.new.ipynb)
        p for p in (folder / "exercises").glob("*/*.ipynb") if not BESIDE.fullmatch(p.name)
    ]
    order = {name: i for i, name in enumerate(assignment_order())}
    return sorted(found, key=lambda p: (order.get(p.parent.name, len(order)), p.name))
