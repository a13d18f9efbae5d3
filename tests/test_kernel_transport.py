"""The kernels that ``release`` and ``execute`` start (issue 48): they talk to gather-course
over Unix sockets in a private folder, not over TCP, so ipykernel's "Kernel is running over
TCP without encryption" warning never reaches the instructor's terminal."""

from __future__ import annotations

import json
import os

import nbformat
import pytest
import zmq
from nbformat.v4 import new_code_cell, new_notebook

from gather_course.course import _execute
from gather_course.course._execute import execute_notebook

# what the kernel says about its own connection, from inside the kernel
_ASK = (
    "import json, os\n"
    "from ipykernel.kernelapp import IPKernelApp\n"
    "app = IPKernelApp.instance()\n"
    "folder = os.path.dirname(app.ip)\n"
    "print(json.dumps({'transport': app.transport, 'ip': app.ip,\n"
    "                  'mode': oct(os.stat(folder).st_mode & 0o777) if folder else ''}))"
)
WARNING = "without encryption"


def _run(tmp_path) -> dict:
    nb = new_notebook(cells=[new_code_cell(_ASK)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    execute_notebook(path)
    return json.loads(nbformat.read(path, 4).cells[0].outputs[0]["text"])


@pytest.mark.skipif(not zmq.has("ipc"), reason="ZeroMQ without ipc (Windows): TCP, as Jupyter")
def test_the_kernel_runs_over_private_unix_sockets_and_warns_of_nothing(tmp_path, capfd):
    said = _run(tmp_path)
    err = capfd.readouterr().err  # the kernel's own stderr is this process's (fd 2)
    assert said["transport"] == "ipc", said
    assert said["mode"] == "0o700", said  # the sockets' folder: this user's alone
    assert WARNING not in err and "Traceback" not in err, err
    assert not os.path.exists(os.path.dirname(said["ip"]))  # removed with the kernel


def test_on_tcp_the_same_kernel_warns_so_the_test_above_can_fail(tmp_path, capfd, monkeypatch):
    """Jupyter's default transport, as before the fix: what the instructor saw six times
    during a class release (when this ipykernel warns of it at all)."""
    import contextlib

    from traitlets.config import Config

    monkeypatch.setattr(_execute, "_kernel_sockets", lambda: contextlib.nullcontext(Config()))
    said = _run(tmp_path)
    err = capfd.readouterr().err
    assert said["transport"] == "tcp", said
    if WARNING not in err:
        pytest.skip("this ipykernel does not warn about TCP (it is older than 7)")
