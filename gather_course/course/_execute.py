"""Running a notebook top to bottom and storing its outputs (lectures, sources, class copies)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .._i18n import SESSION_ENV
from ..questions import PRACTICE_SEED_ENV

if TYPE_CHECKING:
    from traitlets.config import Config

# What every stored run uses, whatever the machine: the CPU, a fixed hash seed, and fixed
# practice draws (a notebook's "practise more" cells store the same variant each run).
RUN_ENV = {"GATHER_COURSE_DEVICE": "cpu", "PYTHONHASHSEED": "0", PRACTICE_SEED_ENV: "0"}
RETINA = "--InlineBackend.figure_formats=retina"


def execute_notebook(path: Path, timeout: int = 600, env: Mapping[str, str] | None = None) -> None:
    """Run a notebook on CPU and store its outputs, deterministically.

    The kernel gets this process's environment plus :data:`RUN_ENV` and ``env``; this
    process's own environment is left as it is. Only outputs and execution counts change;
    the cells' sources are kept. The file is replaced atomically, so a failed run leaves the
    old one in place. The kernel is reached over Unix sockets only this user can open
    (:func:`_kernel_sockets`), not over TCP.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    sources = [c.source for c in nb.cells]
    # the kernel knows its notebook, as JupyterLab's do: a Chinese notebook runs in Chinese
    session = {SESSION_ENV: str(Path(path).resolve())}
    with _kernel_sockets() as config:
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,
            resources={"metadata": {"path": str(path.parent)}},
            # figures stored at twice the size they are shown at (their metadata's width):
            # sharp on a phone and on a high-density screen, in JupyterLab and on the website
            extra_arguments=[RETINA],
            config=config,
        )
        client.execute(env={**os.environ, **RUN_ENV, **session, **(env or {})})
    assert [c.source for c in nb.cells] == sources
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = _coalesce_streams(cell.outputs)
    nb.metadata.pop("widgets", None)
    fd, tmp = tempfile.mkstemp(suffix=".ipynb", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        nbformat.write(nb, f)
    os.chmod(tmp, os.stat(path).st_mode & 0o777)  # keep the notebook's permissions
    os.replace(tmp, path)


@contextlib.contextmanager
def _kernel_sockets() -> Iterator[Config]:
    """The kernel manager's settings: the kernel talks to this process over Unix sockets in
    a folder of this user's alone (``ipc``), not over TCP on the loopback, where any local
    user can reach its ports and ipykernel warns that the traffic is plain text. Where ZeroMQ
    has no ``ipc`` (Windows), the kernel stays on the loopback, as Jupyter's default."""
    import zmq
    from traitlets.config import Config

    if not zmq.has("ipc"):
        yield Config()
        return
    # a short path: a Unix socket's name has room for about 100 bytes
    with tempfile.TemporaryDirectory(prefix="gc-kernel-") as folder:  # mode 0700
        yield Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(folder, "k")}})


def _coalesce_streams(outputs: list) -> list:
    """Consecutive outputs to one stream merged into one: how the kernel splits a cell's
    printing into messages depends on timing, and a stored run must not."""
    merged: list = []
    for out in outputs:
        last = merged[-1] if merged else None
        if (
            out.get("output_type") == "stream"
            and last is not None
            and last.get("output_type") == "stream"
            and last.get("name") == out.get("name")
        ):
            last["text"] += out["text"]
        else:
            merged.append(out)
    return merged
