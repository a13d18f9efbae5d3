"""The Dask commands the docs give (issue 48): each binds to a named address (``--host``).

A Dask scheduler runs code for whoever reaches it, and a worker listens too; without
``--host`` Dask listens on every interface of the machine. The instructor guide's commands,
the ones in any other doc's code block, and those in the certificates' README.txt all name
the address; the guide's pair, run for real on the loopback, listen there and nowhere else
(and without ``--host``, the same command listens everywhere: what the check would catch)."""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT, free_port

pytest.importorskip("distributed")
pytest.importorskip("cryptography")

DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
WILDCARDS = {"", "0.0.0.0", "::", "[::]", "*"}


def _blocks(text: str) -> list[str]:
    """The fenced code blocks of a Markdown text."""
    return re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)


def dask_commands(text: str) -> list[list[str]]:
    """Every ``dask scheduler`` / ``dask worker`` command line of ``text`` (continuation
    lines joined), as words; comments left out."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.splitlines():
        if re.match(r"\s*dask\s+(scheduler|worker)\b", line):
            found.append(shlex.split(line, comments=True))
    return found


def _host(words: list[str]) -> str | None:
    for n, word in enumerate(words):
        if word == "--host":
            return words[n + 1] if n + 1 < len(words) else ""
        if word.startswith("--host="):
            return word.partition("=")[2]
    return None


def _guide_commands() -> list[list[str]]:
    text = (ROOT / "docs" / "instructor-guide.md").read_text(encoding="utf-8")
    return [c for block in _blocks(text) for c in dask_commands(block)]


def test_the_scan_finds_a_command_that_binds_every_interface():
    text = "```bash\ndask scheduler --protocol tls \\\n    --port 8786  # the old way\n```\n"
    [words] = [c for b in _blocks(text) for c in dask_commands(b)]
    assert words[:2] == ["dask", "scheduler"] and _host(words) is None
    assert _host(["dask", "worker", "tls://a:1", "--host=10.0.0.6"]) == "10.0.0.6"


def test_every_documented_dask_command_binds_to_a_named_address(tmp_path):
    from gather_course.grading._tls import make_certificates

    make_certificates(tmp_path / "certs")
    sources = {p.relative_to(ROOT): _blocks(p.read_text(encoding="utf-8")) for p in DOCS}
    sources["README.txt of gather-course certificates"] = [
        (tmp_path / "certs" / "README.txt").read_text()
    ]
    seen = {}
    for where, blocks in sources.items():
        for block in blocks:
            for words in dask_commands(block):
                host = _host(words)
                assert host is not None and host not in WILDCARDS, (where, " ".join(words))
                seen.setdefault(where, set()).add(words[1])
    assert seen[Path("docs/instructor-guide.md")] == {"scheduler", "worker"}
    assert seen["README.txt of gather-course certificates"] == {"scheduler", "worker"}


def _on_loopback(words: list[str], port: int, host_kept: bool = True) -> list[str]:
    """A documented command made runnable here: every address the loopback, a free port."""
    out, skip = [], False
    for n, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word == "--host":
            skip = True
            if host_kept:
                out += ["--host", "127.0.0.1"]
            continue
        if word == "--port" and n + 1 < len(words):
            out += ["--port", str(port)]
            skip = True
            continue
        out.append(re.sub(r"^tls://[^:/]+:\d+$", f"tls://127.0.0.1:{port}", word))
    return out


def _listening(pid: int, seconds: float = 60) -> set[str]:
    """The addresses the process ``pid`` listens on, once it listens (TCP)."""
    import psutil

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = {
            c.laddr.ip
            for c in psutil.Process(pid).net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN
        }
        if found:
            time.sleep(1.0)  # the rest of its servers (a worker opens several)
            return {
                c.laddr.ip
                for c in psutil.Process(pid).net_connections(kind="inet")
                if c.status == psutil.CONN_LISTEN
            }
        time.sleep(0.2)
    raise AssertionError(f"process {pid} listens on nothing after {seconds} s")


def _start(words: list[str], cwd: Path) -> subprocess.Popen:
    from tests import test_dask_grading as dg

    return subprocess.Popen(
        [str(dg.DASK), *words[1:]], cwd=cwd, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip


@pytest.mark.classroom
def test_the_guides_cluster_listens_on_its_named_address_only(tmp_path):
    from gather_course.grading._tls import make_certificates

    certs = tmp_path / "certs"
    make_certificates(certs)
    [scheduler] = [c for c in _guide_commands() if c[1] == "scheduler"]
    [worker] = [c for c in _guide_commands() if c[1] == "worker"]
    port, bare = free_port(), free_port()
    procs = [_start(_on_loopback(scheduler, port), certs)]
    try:
        assert _listening(procs[0].pid) == {"127.0.0.1"}
        procs.append(_start(_on_loopback(worker, port), certs))
        assert _listening(procs[1].pid) == {"127.0.0.1"}
        # the same scheduler without --host: every interface (what the docs no longer say)
        procs.append(_start(_on_loopback(scheduler, bare, host_kept=False), certs))
        assert _listening(procs[2].pid) & WILDCARDS
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=30)
