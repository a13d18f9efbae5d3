"""gather_course.course._execute: a notebook run with its environment given to the kernel only."""

from __future__ import annotations

import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from gather_course.course._execute import execute_notebook


def _notebook(tmp_path, source: str):
    nb = new_notebook(cells=[new_code_cell(source)])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    return path


def test_the_kernel_gets_the_environment_and_this_process_keeps_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("GATHER_COURSE_DEVICE", "cuda:7")
    monkeypatch.setenv("GATHER_TEST_INHERITED", "yes")
    before = dict(os.environ)
    path = _notebook(
        tmp_path,
        "import os\n[os.environ.get(k) for k in "
        "('GATHER_COURSE_DEVICE', 'PYTHONHASHSEED', 'GATHER_TEST_EXTRA', "
        "'GATHER_TEST_INHERITED')]",
    )
    execute_notebook(path, env={"GATHER_TEST_EXTRA": "given"})
    shown = nbformat.read(path, 4).cells[0].outputs[0]["data"]["text/plain"]
    assert shown == "['cpu', '0', 'given', 'yes']"
    assert dict(os.environ) == before  # nothing set, nothing left behind


def test_a_failing_run_leaves_the_notebook_as_it_was(tmp_path):
    path = _notebook(tmp_path, "raise RuntimeError('no')")
    before = path.read_bytes()
    with pytest.raises(Exception, match="no"):
        execute_notebook(path)
    assert path.read_bytes() == before


def test_a_cell_s_printing_is_stored_as_one_output_per_stream_however_it_arrived(tmp_path):
    # flushes between prints make the kernel send separate messages, as a slow cell may
    path = _notebook(
        tmp_path,
        "import sys, time\n"
        "print('a', flush=True); time.sleep(0.05)\n"
        "print('b', flush=True); time.sleep(0.05)\n"
        "print('e', file=sys.stderr, flush=True); time.sleep(0.05)\n"
        "print('c', flush=True)\n",
    )
    execute_notebook(path)
    outs = nbformat.read(path, 4).cells[0].outputs
    assert [(o["name"], o["text"]) for o in outs] == [
        ("stdout", "a\nb\n"),
        ("stderr", "e\n"),
        ("stdout", "c\n"),
    ]
