"""The ``gather-course`` command line (maintainer tools)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from ._errors import GatherCourseError


def execute_notebook(path: Path, timeout: int = 600) -> None:
    """Run a notebook top to bottom on CPU and store its outputs, deterministically.

    Only outputs and execution counts change; the cells' sources are kept as they are.
    The file is replaced atomically, so a failed run leaves the old one in place.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    sources = [c.source for c in nb.cells]
    env = {"GATHER_COURSE_DEVICE": "cpu", "PYTHONHASHSEED": "0"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert [c.source for c in nb.cells] == sources
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    fd, tmp = tempfile.mkstemp(suffix=".ipynb", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        nbformat.write(nb, f)
    os.chmod(tmp, os.stat(path).st_mode & 0o777)    # keep the notebook's permissions
    os.replace(tmp, path)


def _execute(args: argparse.Namespace) -> int:
    for name in args.paths:
        path = Path(name)
        if path.suffix != ".ipynb" or not path.is_file():
            raise GatherCourseError(f"expected an existing .ipynb file, got {name!r}.")
    for name in args.paths:
        print(f"executing {name}", file=sys.stderr)
        execute_notebook(Path(name))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gather-course", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("execute", help="re-run lecture notebooks on CPU and store their outputs")
    run.add_argument("paths", nargs="+", help="notebooks, e.g. notebooks/*.ipynb")
    run.set_defaults(func=_execute)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except GatherCourseError as exc:
        print(f"gather-course: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
