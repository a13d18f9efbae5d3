"""Run-wide pytest hooks: the GPU job's CUDA guard, the notebook a kernel runs (its language),
and the time each part of the suite takes.

GATHER_COURSE_REQUIRE_CUDA=1 (set by .ci/run-gpu) stops the run before any test unless the
course's default device is CUDA, so a GPU job can never pass by quietly running on the CPU.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from pathlib import Path
from unittest import mock

import pytest

PARTS = (
    ("grading", ("tests/test_grading_e2e.py",)),  # first match wins
    ("notebooks", ("notebooks/", "solutions/", "zh/notebooks/", "zh/solutions/")),
    ("unit", ("",)),
)
_seconds: dict[str, float] = defaultdict(float)
_started = time.perf_counter()


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("GATHER_COURSE_REQUIRE_CUDA", "") not in ("", "0"):
        import torch

        from gather_course import default_device

        if not torch.cuda.is_available():
            raise pytest.UsageError(
                f"GATHER_COURSE_REQUIRE_CUDA is set, but torch {torch.__version__} "
                f"(CUDA build: {torch.version.cuda}) sees no CUDA device. A GPU run must "
                "not pass on the CPU: check the driver (nvidia-smi) and the torch build."
            )
        if default_device().type != "cuda":
            raise pytest.UsageError(
                f"GATHER_COURSE_REQUIRE_CUDA is set, but the course's default device is "
                f"{default_device()} (GATHER_COURSE_DEVICE="
                f"{os.environ.get('GATHER_COURSE_DEVICE')!r}). Unset GATHER_COURSE_DEVICE."
            )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    """A notebook's kernel knows which notebook it runs (``JPY_SESSION_NAME``, as JupyterLab
    tells its kernels), so a notebook of the Chinese edition re-runs in Chinese, as stored;
    and its practice cells draw as the stored run drew (``gather-course execute``'s seed).
    Set only while nbval starts the kernel: every other test keeps its own language."""
    from gather_course._i18n import kernels_run
    from gather_course.course._execute import RUN_ENV
    from gather_course.questions import PRACTICE_SEED_ENV

    path = getattr(item, "path", None)
    if path is None or path.suffix != ".ipynb":
        yield
        return
    seed = {PRACTICE_SEED_ENV: RUN_ENV[PRACTICE_SEED_ENV]}
    with mock.patch.dict(os.environ, seed), kernels_run(path.resolve()):
        yield


# The torch the notebooks' outputs were stored with (CI's pin). A cell tagged
# `torch-version-bound` prints what the installed torch does where releases differ (lecture 06:
# take_along_dim wraps from 2.10 on); under another torch it runs, but its output is not
# compared. tests/test_lecture06_claims.py holds each such behaviour to its versions.
STORED_TORCH = next(
    line.split("==")[1].strip()
    for line in (Path(__file__).parent / ".ci" / "constraints.txt").read_text().splitlines()
    if line.startswith("torch==")
)
VERSION_BOUND = "torch-version-bound"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import torch

    if torch.__version__.split("+")[0] == STORED_TORCH:
        return
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is not None and VERSION_BOUND in cell.get("metadata", {}).get("tags", []):
            item.options["check"] = False


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    part = next(
        name for name, prefixes in PARTS if report.nodeid.replace(os.sep, "/").startswith(prefixes)
    )
    _seconds[part] += report.duration  # setup, call and teardown alike


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _seconds:
        return
    parts = ", ".join(
        f"{name} {_seconds[name]:.1f} s"
        for name in ("unit", "notebooks", "grading")
        if name in _seconds
    )
    terminalreporter.write_sep("=", "time by part")
    terminalreporter.write_line(f"{parts}; whole run {time.perf_counter() - _started:.0f} s")
