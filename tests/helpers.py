"""What several test files share: the repository root, the README's commands, the CLI
runner, a random gather call, the text check of pictures, and a learner's JupyterLab
(``started_lab``). Test files import from here, never from each other."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import itertools
import json
import os
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gather_course import GatherCourseError
from gather_course.cli import main

ROOT = Path(__file__).resolve().parents[1]
DTYPES = [torch.int64, torch.int32, torch.int16, torch.uint8, torch.float32, torch.bool]


def solution_fn(question: Any) -> Callable[..., Any]:
    """The question's reference solution (``.solution_code``, text) as a function."""
    source = "import itertools\nimport torch\nimport torch.nn.functional as F\n"
    namespace: dict[str, Any] = {}
    exec(source + question.solution_code, namespace)  # noqa: S102 - the bank's own solution text
    return namespace[question.name]


def readme_command(heading: str) -> str:
    """The command block under ``<!-- heading -->`` in the README."""
    text = (ROOT / "README.md").read_text()
    block = re.search(rf"<!-- {heading} -->\s*```(?:bash)?\n(.+?)\n```", text, re.S)
    assert block, f"README has no '<!-- {heading} -->' command block"
    return block.group(1).strip()


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``gather-course ARGS`` run in this process from ``cwd`` (default: the course root).

    The one way the tests run the CLI: exit code, stdout and stderr, as a subprocess would
    give them, without a new interpreter (notebook kernels run apart anyway). The grading
    round trip (test_grading_e2e.py) alone runs the real command in a new process.
    """
    out, err = io.StringIO(), io.StringIO()
    before = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    except SystemExit as exit:  # argparse: --help, a usage error
        code = exit.code if isinstance(exit.code, int) else 1
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def random_call(rng: random.Random):
    nd = rng.randint(0, 3)
    shape = [rng.randint(0, 3) for _ in range(nd)]
    input = torch.randn(shape) if rng.random() < 0.7 else torch.randint(0, 9, shape)
    eff = max(nd, 1)
    dim = rng.randint(-eff - 1, eff) if rng.random() < 0.15 else rng.randint(-eff, eff - 1)
    ind = nd if rng.random() < 0.8 else max(0, nd + rng.choice([-1, 1]))
    ishape = []
    for k in range(ind):
        base = shape[k] if k < nd else 1
        ishape.append(max(0, base + rng.choice([-1, 0, 0, 0, 1, 2])))
    high = shape[dim % eff] if nd and -eff <= dim < eff else 1
    dtype = rng.choice(DTYPES) if rng.random() < 0.2 else torch.int64
    lo = -1 if rng.random() < 0.1 else 0
    hi = high + (1 if rng.random() < 0.1 else 0)
    values = torch.randint(lo, max(hi, lo + 1), ishape)
    index = values.to(dtype) if dtype != torch.bool else values > 0
    return input, dim, index


def outcome(fn, *args):
    try:
        return True, fn(*args)
    except (RuntimeError, IndexError, TypeError, GatherCourseError):
        return False, None


def text_problems(fig: Figure, min_pt: float = 9.0) -> list[str]:
    """Texts of ``fig`` that leave their axes, are smaller than ``min_pt`` or overlap."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    problems = []
    for ax in fig.axes:
        frame = ax.get_window_extent(renderer)
        texts = [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
        boxes = [t.get_window_extent(renderer) for t in texts]
        for t, box in zip(texts, boxes):
            if t.get_fontsize() < min_pt:
                problems.append(f"{t.get_text()!r} is {t.get_fontsize()} pt")
            if (
                box.x0 < frame.x0 - 0.5
                or box.x1 > frame.x1 + 0.5
                or box.y0 < frame.y0 - 0.5
                or box.y1 > frame.y1 + 0.5
            ):
                problems.append(f"{t.get_text()!r} leaves the axes")
        for (t1, b1), (t2, b2) in itertools.combinations(zip(texts, boxes), 2):
            overlap_x = min(b1.x1, b2.x1) - max(b1.x0, b2.x0)
            overlap_y = min(b1.y1, b2.y1) - max(b1.y0, b2.y0)
            if overlap_x > 0.5 and overlap_y > 0.5:
                problems.append(f"{t1.get_text()!r} overlaps {t2.get_text()!r}")
    return problems


@functools.cache
def website_build() -> ModuleType:
    """``website/build.py`` as a module (the website is not a package): its checks and the
    Chromium it drives, shared with the tests."""
    spec = importlib.util.spec_from_file_location("site_build", ROOT / "website" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["site_build"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _variant_solutions() -> ModuleType:
    """``solutions/variant_solutions.py``, the instructor's answers to every class variant
    (beside the sources, not in the package): the class tests' published answers."""
    spec = importlib.util.spec_from_file_location(
        "variant_solutions", ROOT / "solutions" / "variant_solutions.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


variant_solutions = _variant_solutions()


@functools.cache
def cjk_font_tool() -> ModuleType:
    """``tools/cjk_font.py`` (a maintainer's tool, not in the package) as a module."""
    spec = importlib.util.spec_from_file_location("cjk_font", ROOT / "tools" / "cjk_font.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def judge(referee, qid: str, cells: list[str], secret: int | None = 4321):
    """``referee``'s verdict on ``cells`` for question ``qid`` (hidden cases from ``secret``)."""
    from gather_course.grading._referee import Plan
    from gather_course.grading._submission import Submission

    return referee.judge(Submission(cells), Plan.make(qid, secret))


def fill_cells(
    nb, answers: dict[str, str], tests: dict[str, str | None] | None = None, extra: list[str] = ()
):
    """A copy of notebook ``nb`` with the cells named by grade id replaced: ``answers`` in
    answer cells, ``tests`` in test cells (None deletes the cell), and ``extra`` cells added."""
    import copy

    import nbformat

    nb = copy.deepcopy(nb)
    tests = tests or {}
    cells = []
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
        if gid in tests:
            if tests[gid] is None:
                continue  # the learner deleted it
            cell.source = tests[gid]
        cells.append(cell)
    cells += [nbformat.v4.new_code_cell(src) for src in extra]
    nb.cells = cells
    return nb


# --- a learner's JupyterLab: gather-course start, the README's open command -------------------


@dataclass
class Lab:
    url: str
    token: str
    work: Path  # the learner's working copy, JupyterLab's root

    def tree(self, rel: str) -> str:
        return f"{self.url}/lab/tree/{rel}?reset&token={self.token}"

    def shut_down_kernels(self) -> None:
        """End every notebook session (its kernel), as closing a notebook and its kernel does."""

        def call(method: str, path: str):
            request = urllib.request.Request(
                f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
            )
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.read()

        for session in json.loads(call("GET", "/api/sessions")):
            call("DELETE", f"/api/sessions/{session['id']}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_settings(config: Path) -> None:
    """JupyterLab user settings in the test's own JUPYTER_CONFIG_DIR: every cell rendered
    (no windowing), no news or update pop-up over the page."""
    user = config / "lab" / "user-settings" / "@jupyterlab"
    for ext, name, value in [
        ("notebook-extension", "tracker", {"windowingMode": "none"}),
        ("apputils-extension", "notification", {"fetchNews": "false", "checkForUpdates": False}),
    ]:
        (user / ext).mkdir(parents=True, exist_ok=True)
        (user / ext / f"{name}.jupyterlab-settings").write_text(json.dumps(value))


def wait_until_serving(
    url: str, server: subprocess.Popen, seconds: float, log: Path, what: str
) -> None:
    """Until ``url`` answers 200; the test fails, with the end of ``log``, when ``server``
    (``what``) exits first or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while True:
        if server.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:]
            pytest.fail(f"{what} exited ({server.returncode}):\n{tail}", pytrace=False)
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:]
            pytest.fail(f"{what} did not answer in {seconds:g} s:\n{tail}", pytrace=False)
        time.sleep(0.2)


@contextlib.contextmanager
def started_lab(tmp: Path, *start: str, bindir: Path | None = None, student: str = ""):
    """`gather-course start` as a learner runs it (``start``: its options), from ``bindir``
    (default: this interpreter's), with its own Jupyter folders under ``tmp`` and a working
    copy ``tmp/work``, on a free port of the loopback; the Lab it serves, shut down with its
    kernels after. ``student``: GATHER_COURSE_STUDENT (a class notebook's student)."""
    bindir = bindir or Path(sys.executable).parent
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTER_DATA_DIR=str(tmp / "data"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
        IPYTHONDIR=str(tmp / "ipython"),
        PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        GATHER_COURSE_STUDENT=student,  # a class notebook's student (public ones ignore it)
    )
    env.pop("JUPYTERHUB_USER", None)
    lab_settings(tmp / "config")
    port, token = free_port(), secrets.token_hex(16)
    work = tmp / "work"
    command = [
        str(bindir / "gather-course"),
        "start",
        str(work),
        *start,
        "--",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.token={token}",
        "--allow-root",
    ]
    log = tmp / "jupyter.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(
            f"{url}/api/status?token={token}", server, 90, log, "`gather-course start`"
        )
        yield Lab(url, token, work)
    finally:
        # The server leads its own process group (start_new_session), its kernels in it.
        try:
            os.killpg(server.pid, signal.SIGTERM)  # JupyterLab shuts its kernels down
            server.wait(15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(server.pid, signal.SIGKILL)  # anything of the group still there
        except ProcessLookupError:
            pass
        server.wait(5)
