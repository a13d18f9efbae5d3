"""The nbgrader course on disk: its assignments and releasing them.

The course root is the folder with ``nbgrader_config.py``; ``solutions/<a>/<a>.ipynb`` are the
sources and ``exercises/<a>/<a>.ipynb`` the generated student versions.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import _, edition

SOURCE, RELEASE = "solutions", "exercises"
PROTECTED = (SOURCE, RELEASE, "submitted")  # folders our commands never write into, except release


def notebook_file(path: str | Path) -> Path:
    """``path`` as an existing ``.ipynb`` file, or a clear error."""
    path = Path(path)
    if path.suffix != ".ipynb":
        raise GatherCourseError(
            _("expected a notebook file (.ipynb), got {path}.").format(path=repr(str(path)))
        )
    if not path.exists():
        if path.is_absolute():
            raise GatherCourseError(_("{path} is not found.").format(path=repr(str(path))))
        raise GatherCourseError(
            _("{path} is not found (looked in {cwd}).").format(path=repr(str(path)), cwd=Path.cwd())
        )
    if not path.is_file():
        raise GatherCourseError(
            _("{path} is a folder; expected a notebook file (.ipynb).").format(path=repr(str(path)))
        )
    return path


def course_root(path: str | Path = ".") -> Path:
    """The course root at ``path``, or a clear error when it is not one."""
    root = Path(path).resolve()
    if not (root / "nbgrader_config.py").is_file() or not (root / SOURCE).is_dir():
        raise GatherCourseError(
            f"{path!s} is not the course root: expected nbgrader_config.py and a {SOURCE}/ "
            "folder there. Run this command from the course folder, or pass --course DIR."
        )
    return root


def assignments(root: Path) -> list[str]:
    """The assignments of the course: folders of ``solutions/`` that hold a notebook."""
    return sorted(
        p.name for p in (root / SOURCE).iterdir() if p.is_dir() and any(p.glob("*.ipynb"))
    )


def assignment_order() -> list[str]:
    """The assignments in the order of the lectures they go with (basics first)."""
    from ..questions import exercise_ids

    return list(dict.fromkeys(qid.split(".")[0] for qid in exercise_ids()))


def known_assignment(root: Path, name: str) -> str:
    names = assignments(root)
    if name not in names:
        raise GatherCourseError(
            f"unknown assignment {name!r}; this course has: {', '.join(names)}."
        )
    return name


def csv_target(root: Path, csv_path: Path) -> Path:
    """``csv_path``, resolved, unless it lies in a folder our commands never write into."""
    csv_path = csv_path.resolve()
    for folder in PROTECTED:
        if (root / folder).resolve() in csv_path.parents:
            raise GatherCourseError(f"the CSV must not be written into {folder}/; got {csv_path}.")
    return csv_path


def submissions(root: Path, assignment: str) -> list[str]:
    """Students with a submission of ``assignment`` in ``submitted/<student>/<assignment>/``."""
    base = root / "submitted"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / assignment).is_dir())


@contextlib.contextmanager
def nbgrader_api(root: Path, **config: Any) -> Iterator[Any]:
    """nbgrader's Python API on the course at ``root``, with its nbgrader_config.py.

    ``config`` overrides settings, e.g. ``{"Execute.timeout": 5}``. nbgrader reads some paths
    relative to the working directory and runs ``alembic`` from PATH, so both are set while
    the API is in use.
    """
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    cfg.CourseDirectory.root = str(root)
    for key, value in config.items():
        section, name = key.split(".")
        setattr(cfg[section], name, value)
    old_cwd = os.getcwd()
    os.chdir(root)  # (contextlib.chdir needs Python 3.11)
    try:
        with alembic_on_path():
            yield NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)
    finally:
        os.chdir(old_cwd)


@contextlib.contextmanager
def alembic_on_path() -> Iterator[None]:
    """This interpreter's scripts first on PATH, meanwhile: nbgrader's gradebook runs
    ``alembic`` from PATH to upgrade an old database."""
    old_path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + old_path
    try:
        yield
    finally:
        os.environ["PATH"] = old_path


_EXCEPTION_LINE = re.compile(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception|Interrupt)): (.+)$")
_NOISE = ("Please see", "There was", "Traceback", "Interrupting kernel")


def nbgrader_errors(result: dict[str, Any]) -> str:
    """Why an nbgrader API call failed, in a line: the exceptions its log names, else its
    ERROR lines."""
    text = (result.get("log") or "") + "\n" + (result.get("error") or "")
    found = [
        f"{m.group(2).strip()} ({m.group(1)})"
        for m in map(_EXCEPTION_LINE.match, text.splitlines())
        if m and m.group(1) != "NbGraderException"
    ]
    if not found:
        found = [
            line.split("ERROR]", 1)[1].strip() for line in text.splitlines() if "ERROR]" in line
        ]
        found = [line for line in found if line and not line.startswith(_NOISE)]
    return "; ".join(dict.fromkeys(found)) or "nbgrader failed without saying why"


# What nbgrader puts in place of a solution, in each edition's words (ClearSolutions.code_stub)
CODE_STUB = {
    "en": "# YOUR CODE HERE\nraise NotImplementedError()",
    "zh": "# 在这里写你的代码\nraise NotImplementedError()",
}


def _edition(root: Path) -> str:
    """The edition of the course at ``root``: its source notebooks' ``gather_course.lang``."""
    import json

    for path in sorted((root / SOURCE).glob("*/*.ipynb")):
        return edition(json.loads(path.read_text(encoding="utf-8")))
    return "en"


def release(root: Path, out: Path | None = None) -> list[Path]:
    """Generate the student notebooks of every assignment into ``out`` (default ``exercises/``).

    nbgrader runs in a temporary copy of the course, so a failure leaves ``out`` as it was and
    the course's gradebook is not touched. Returns the notebooks written.
    """
    out = Path(out) if out is not None else root / RELEASE
    names = assignments(root)
    with tempfile.TemporaryDirectory(prefix="gather-course-release-") as tmp:
        work = Path(tmp)
        shutil.copytree(root / SOURCE, work / SOURCE)
        shutil.copy2(root / "nbgrader_config.py", work / "nbgrader_config.py")
        stub = {"python": CODE_STUB[_edition(root)]}
        with nbgrader_api(work, **{"ClearSolutions.code_stub": stub}) as api:
            for name in names:
                done = api.generate_assignment(name, force=True, create=True)
                if not done["success"] or not (work / RELEASE / name).is_dir():
                    raise GatherCourseError(
                        f"nbgrader could not generate {name!r}: {nbgrader_errors(done)}"
                    )
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name in names:
            target = out / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(work / RELEASE / name, target)
            for notebook in sorted(target.glob("*.ipynb")):
                _title_first(notebook)
                written.append(notebook)
    return written


def _title_first(path: Path) -> None:
    """The notebook's ``# `` title cell first, then how to work it: nbgrader puts the
    course's header (how to work the notebook) above every cell of the source. Nothing
    else moves; nbgrader finds its cells by their ids, not their places."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.startswith("# "):
            if i:
                nb.cells.insert(0, nb.cells.pop(i))
                nbformat.write(nb, path)
            return
