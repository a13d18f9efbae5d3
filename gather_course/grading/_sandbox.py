"""Where learner code runs when it is graded: warm worker processes, in bubblewrap when it is there.

Each worker is ``python -I .../gather_course/grading/_worker.py`` (a supervisor, a pristine template
with torch imported once, and a fresh job process per job: see :mod:`._worker`).
With bubblewrap (Debian/Ubuntu package ``bubblewrap``) the worker sees the system and Python
read-only, of the course package only the public helpers answers may use, its own empty
``/tmp``, no network, no other process of the machine, no capabilities, and none of the
course's files: sources, solutions, the question bank, the gradebook, other submissions and
the CSV are not in its file system. Without bubblewrap it is a plain process with the same
limits, and :func:`isolation` says so.
"""

from __future__ import annotations

import fcntl
import os
import queue
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._answer_api import MODULES
from .._errors import GatherCourseError
from ._failures import WorkerDied, WorkerStartFailed
from ._frames import HOLD, JobStatus, ended, read_frame, write_frame

SANDBOX, PROCESS = "sandbox", "process"
# The worker: its script first, then the modules it imports (paths in the package folder).
WORKER = ("grading/_worker", "grading/_frames", "grading/_job", "grading/_procs", "grading/_wipe")
TMP_BYTES = 512 * 2**20  # the sandbox's /tmp, wiped after every job
_ETC = (  # of /etc, only what Python and torch read: no /etc/shadow
    "ld.so.cache ld.so.conf ld.so.conf.d localtime nsswitch.conf passwd group hosts alternatives"
).split()
_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "MPLCONFIGDIR": "/tmp",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "GATHER_COURSE_DEVICE": "cpu",
    "CUDA_VISIBLE_DEVICES": "",
}


@dataclass(frozen=True)
class Isolation:
    """The isolation grading has here: ``level`` is ``"sandbox"`` or ``"process"``."""

    level: str
    detail: str

    def __str__(self) -> str:
        return f"{self.level} ({self.detail})"


def _package_dir() -> Path:
    return Path(__file__).resolve().parent.parent


def _readable_roots() -> list[str]:
    """What Python needs to start and import torch, read-only (the package: see
    :func:`_package_binds`)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    paths |= {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    found = []
    for p in sorted(paths):
        real = os.path.realpath(p)
        if not os.path.exists(real):
            continue
        found.append(real)
        if p != real:
            found.append(os.path.abspath(p))
    return sorted(set(found))


def _bwrap_command(bwrap: str) -> list[str]:
    cmd = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--die-with-parent",
        "--as-pid-1",  # the supervisor is pid 1 (not a dumpable init a job could ptrace)
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--clearenv",
        "--disable-userns",
        "--ro-bind",
        "/usr",
        "/usr",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--size",
        str(TMP_BYTES),
        "--tmpfs",
        "/tmp",
        "--size",
        str(TMP_BYTES // 8),
        "--tmpfs",
        "/dev/shm",
        "--chdir",
        "/tmp",
    ]
    for name in _ETC:  # only what Python and torch read: no /etc/shadow
        if os.path.exists(f"/etc/{name}"):
            cmd += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for name in ("bin", "lib", "lib32", "lib64", "sbin"):
        target = Path("/") / name
        if target.is_symlink():
            cmd += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            cmd += ["--ro-bind", str(target), str(target)]
    for path in _readable_roots():  # (under /tmp too: mounted over the tmpfs)
        if not path.startswith("/usr/") and path != "/tmp":
            cmd += ["--ro-bind", path, path]
    cmd += _package_binds()
    for key, value in {**_ENV, "GATHER_COURSE_SANDBOXED": "1"}.items():
        cmd += ["--setenv", key, value]
    # only /tmp and /dev/shm stay writable: /dev is a tmpfs of its own (half the memory,
    # never wiped), where a job could leave files for the next job or fill the memory
    return cmd + ["--remount-ro", "/dev", "--remount-ro", "/"]


def _package_binds() -> list[str]:
    """The course package as the sandbox holds it: an empty read-only folder with only the
    modules answers may use and the worker needs (:data:`_answer_api.MODULES`) and the
    messages' translations. No question bank, solution, class variant, grading code or
    compiled ``__pycache__`` (which would hold them all) is in the sandbox's file system."""
    package = _package_dir()
    binds = ["--tmpfs", str(package)]
    for name in (*MODULES, *WORKER):
        binds += ["--ro-bind", str(package / f"{name}.py"), str(package / f"{name}.py")]
    binds += ["--ro-bind", str(package / "locale"), str(package / "locale")]
    return binds + ["--remount-ro", str(package)]


def _worker_argv() -> list[str]:
    # Started by path, not with -m: the package's __init__ (which imports the question bank)
    # must never run in the worker. -I: no cwd, no script folder, no user site, no PYTHON*.
    return [sys.executable, "-I", str(_package_dir() / f"{WORKER[0]}.py")]


_probe: dict[str, Isolation] = {}
_probe_lock = threading.Lock()


def isolation() -> Isolation:
    """The best isolation available here (probed once: bubblewrap must start a process)."""
    with _probe_lock:
        if "found" not in _probe:
            _probe["found"] = _find_isolation()
        return _probe["found"]


def _find_isolation() -> Isolation:
    if os.environ.get("GATHER_COURSE_NO_SANDBOX", "") not in ("", "0"):
        return Isolation(PROCESS, "bubblewrap turned off by GATHER_COURSE_NO_SANDBOX")
    bwrap = shutil.which("bwrap")
    if not sys.platform.startswith("linux"):
        return Isolation(PROCESS, f"no sandbox on {sys.platform}: bubblewrap needs Linux")
    if not bwrap:
        return Isolation(PROCESS, "bubblewrap is not installed (apt-get install bubblewrap)")
    try:
        done = subprocess.run(
            _bwrap_command(bwrap) + [sys.executable, "-c", "pass"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Isolation(PROCESS, f"bubblewrap did not start: {exc}")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return Isolation(PROCESS, f"bubblewrap is installed but cannot run here: {why}")
    return Isolation(
        SANDBOX,
        "bubblewrap: no network, no course files, own /tmp and process table, no capabilities",
    )


def _widen(pipe: int) -> None:
    """Give a pipe to the worker a 1 MiB buffer (64 KiB by default): the timing input (tens
    of MB) and a timing job's result (8 MB) cross in 16 times fewer reads, writes and
    switches between the two processes. Where the system allows less (``pipe-max-size``, a
    user's pipe quota), the pipe keeps what it has."""
    try:
        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except OSError:
        pass


_PIPE_BYTES = 1 << 20


def _spawn(start: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    """Run ``start`` on one long-lived thread of this process.

    bubblewrap's ``--die-with-parent`` ends the sandbox when the *thread* that started it
    ends, so workers are started from a thread that lives as long as the process.
    """
    with _spawner_lock:
        if not _spawner:
            requests: queue.Queue = queue.Queue()

            def serve() -> None:
                while True:
                    job, box, done = requests.get()
                    try:
                        box["proc"] = job()
                    except BaseException as exc:  # noqa: BLE001 - handed to the caller
                        box["error"] = exc
                    done.set()

            threading.Thread(target=serve, name="gather-course-spawner", daemon=True).start()
            _spawner.append(requests)
    box: dict[str, Any] = {}
    done = threading.Event()
    _spawner[0].put((start, box, done))
    done.wait()
    if "error" in box:
        raise box["error"]
    return box["proc"]


_spawner: list[queue.Queue] = []
_spawner_lock = threading.Lock()


class Worker:
    """One warm worker: ``run(header, payload)`` runs a job in a fresh process forked from its
    pristine template (see :mod:`._worker`)."""

    def __init__(self, require_sandbox: bool = False) -> None:
        level = isolation()
        if require_sandbox and level.level != SANDBOX:
            raise GatherCourseError(
                f"--require-sandbox: grading would run with isolation "
                f"'{level}'. Install bubblewrap (apt-get install "
                "bubblewrap) or leave out --require-sandbox."
            )
        bwrap = shutil.which("bwrap")
        argv = _worker_argv()
        self._sandboxed = bool(level.level == SANDBOX and bwrap)
        if self._sandboxed:
            argv = _bwrap_command(str(bwrap)) + argv
            env = None
        else:
            env = {**_ENV, "PATH": os.environ.get("PATH", _ENV["PATH"])}
        self.isolation = level
        self._killed = False  # ended by close(), not by itself
        self._proc = _spawn(
            lambda: subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,  # read only if it never starts (then it says why)
                env=env,
                cwd="/",
                start_new_session=True,
            )
        )
        assert self._proc.stdin and self._proc.stdout
        self._in, self._out = self._proc.stdin.fileno(), self._proc.stdout.fileno()
        for pipe in (self._in, self._out):
            _widen(pipe)
        self._ready = False  # its hello is read by the first run: start-up overlaps
        self._said = ""  # its stderr, kept if it ends before it is ready
        self._held: list[str] = []  # the timing inputs the supervisor holds (its _HELD)

    def _wait_ready(self) -> None:
        if not self._ready:
            try:
                hello = self._receive(timeout=120)[0]
            except WorkerDied as exc:
                said = self._last_words()  # a signal says nothing: name it beside what was said
                why = f"{said}; {exc}" if said and "signal" in str(exc) else said or str(exc)
                raise WorkerStartFailed(why) from None
            if not hello.get("ready"):
                why = self._last_words() or hello.get("why", "no reason given")
                self.close()
                raise WorkerStartFailed(why)
            self._ready = True
            self._proc.stderr.close()  # past this point the worker writes nothing there

    def _last_words(self) -> str:
        """The last line the worker (or bubblewrap) wrote to stderr before it ended."""
        self.close()
        lines = [line.strip() for line in self._said.splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def _receive(self, timeout: float) -> tuple[dict, bytes]:
        box: dict[str, Any] = {}

        def read() -> None:
            try:
                box["frame"] = read_frame(self._out)
            except (EOFError, OSError, ValueError) as exc:
                box["error"] = exc

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if "frame" in box:
            return box["frame"]
        if reader.is_alive():
            self.close()
            raise WorkerDied("stopped answering")
        raise self._died()

    def _died(self) -> WorkerDied:
        """The worker closed its end: how its process ended, as the grader saw it (a signal,
        such as the out-of-memory killer's SIGKILL, or an exit status)."""
        try:  # let it finish ending, so that its exit status is its own, not close()'s kill
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.close()
        code = self._proc.returncode
        if self._killed or code is None:
            return WorkerDied("ended")
        if self._sandboxed and code > 128:  # bubblewrap: 128 + the signal that ended its child
            code = 128 - code
        if code >= 0:
            return WorkerDied(f"ended with exit status {code}")
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return WorkerDied(f"ended: killed by signal {name}")

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def run(
        self, header: dict, payload: bytes = b"", later: tuple[dict, bytes] | None = None
    ) -> tuple[dict, bytes]:
        """Send one job and wait for its reply (the supervisor enforces the job's limits).

        ``later`` (a timing input) reaches the job process only after its cells have run.
        """
        self._wait_ready()
        try:
            write_frame(self._in, {**header, "later": later is not None}, payload)
            if later is not None:
                meta, data = later
                key = str(meta.get("key", ""))
                if key and key in self._held:  # the supervisor has it: name it
                    write_frame(self._in, {"key": key, "held": True})
                else:
                    write_frame(self._in, meta, data)
                    self._held = [*self._held, key][-HOLD:]
        except OSError:
            raise self._died() from None
        reply = self._receive(timeout=float(header["job_limit"]) + 30)
        if (
            reply[0].get("template_gone")
            or not reply[0].get("clean", True)
            or ended(reply[0]).status is JobStatus.GRADER
        ):
            self.close()  # the supervisor has stopped: the next job needs a fresh worker
        return reply

    def close(self) -> None:
        if self._proc.poll() is None:
            self._killed = True
            try:
                os.killpg(self._proc.pid, 9)
            except OSError:
                pass
            self._proc.kill()
        self._proc.wait()
        if not self._ready and self._proc.stderr and not self._proc.stderr.closed:
            try:  # it ended before it was ready: what it said is why
                self._said = self._proc.stderr.read(65536).decode("utf-8", "replace")
            except (OSError, ValueError):
                pass
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
