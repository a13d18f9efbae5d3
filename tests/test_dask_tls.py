"""A grading cluster no student can reach: the class's certificates, a TLS cluster started for
real on the loopback, the refusal of an open scheduler, and a wrong address in one line.

Nothing here sends a byte anywhere but 127.0.0.1: the refusal of another host is checked
with every connection made impossible, and ``--insecure`` in a network namespace of its own
with no route out (``unshare -n``)."""

from __future__ import annotations

import http.server
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from gather_course._errors import GatherCourseError
from gather_course.cli import main
from gather_course.grading._scheduler_address import check_scheduler_address, parse
from gather_course.grading._tls import make_certificates
from tests import test_dask_grading as dg
from tests.helpers import free_port

pytest.importorskip("distributed")
pytest.importorskip("cryptography")


# -- the certificates (fast: in README's first command) ------------------------------------------


def test_the_certificates_are_a_ca_and_three_signed_roles_and_no_ca_key(tmp_path):
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    folder = tmp_path / "certs"
    written = make_certificates(folder)
    names = sorted(p.name for p in written)
    assert names == sorted(
        ["ca.pem", "README.txt"] + [f"{r}{s}" for r in ("scheduler", "worker", "client")
                                    for s in (".pem", "-key.pem")]
    )  # fmt: skip
    assert folder.stat().st_mode & 0o777 == 0o700
    for key in folder.glob("*-key.pem"):
        assert key.stat().st_mode & 0o777 == 0o600, key  # the owner's alone
        assert b"PRIVATE KEY" in key.read_bytes()
    ca = x509.load_pem_x509_certificate((folder / "ca.pem").read_bytes())
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not [
        p for p in folder.iterdir() if b"PRIVATE" in p.read_bytes() and "-key" not in p.name
    ]
    for role in ("scheduler", "worker", "client"):
        cert = x509.load_pem_x509_certificate((folder / f"{role}.pem").read_bytes())
        cert.verify_directly_issued_by(ca)  # raises if another key signed it
        usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH} <= set(usage)
    guide = (folder / "README.txt").read_text()
    assert "--protocol tls" in guide and "--no-dashboard" in guide
    assert guide.count("--dashboard-address 127.0.0.1:") == 2  # Dask's pages: loopback only
    assert f"--certificates {folder.resolve()}" in guide
    again = make_certificates(tmp_path / "other")  # a new class: another CA
    other = x509.load_pem_x509_certificate(again[0].read_bytes())
    assert other.public_key() != ca.public_key()


def test_certificates_never_go_into_a_folder_that_holds_something(tmp_path, capsys):
    folder = tmp_path / "kept"
    folder.mkdir()
    (folder / "ca.pem").write_text("the instructor's own file")
    assert main(["certificates", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an empty folder" in err
    assert (folder / "ca.pem").read_text() == "the instructor's own file"
    assert sorted(p.name for p in folder.iterdir()) == ["ca.pem"]


@pytest.mark.parametrize(
    ("address", "certificates", "said"),
    [
        ("tcp://grader-1:8786", False, "refused --scheduler tcp://grader-1:8786"),
        ("grader-1:8786", False, "refused --scheduler grader-1:8786"),
        ("tcp://10.0.0.7:8786", False, "--insecure says so"),
        ("tcp://[2001:db8::1]:8786", False, "without TLS runs whatever anyone"),
        ("tls://grader-1:8786", False, "takes the class's certificates"),
        ("tcp://127.0.0.1:8786", True, "use tls://127.0.0.1:8786"),
        ("ws://grader-1:8786", False, "expected tls://HOST:PORT"),
        ("tcp://grader-1:99999", False, "expected tls://HOST:PORT"),
    ],
)
def test_an_open_or_incomplete_address_is_refused_before_anything_connects(
    monkeypatch, address, certificates, said
):
    def no(*args, **kwargs):
        raise AssertionError("connected before refusing")

    monkeypatch.setattr(socket, "create_connection", no)
    monkeypatch.setattr(socket.socket, "connect", no)
    with pytest.raises(GatherCourseError, match=None) as refused:
        check_scheduler_address(address, certificates=certificates, insecure=False)
    assert said in str(refused.value), str(refused.value)


def test_the_loopback_and_an_explicit_insecure_pass_the_check():
    assert (
        check_scheduler_address("tcp://127.0.0.1:8786", certificates=False, insecure=False)[1]
        == "127.0.0.1"
    )
    assert check_scheduler_address("localhost:9", certificates=False, insecure=False) == (
        "tcp",
        "localhost",
        9,
    )
    assert (
        check_scheduler_address("tcp://[::1]:8786", certificates=False, insecure=False)[1] == "::1"
    )
    assert (
        check_scheduler_address("tcp://grader-1:8786", certificates=False, insecure=True)[1]
        == "grader-1"
    )
    assert parse("tls://grader-1") == ("tls", "grader-1", 8786)


def test_grade_refuses_an_open_scheduler_in_one_line_and_grades_no_one(
    tmp_path, monkeypatch, capsys
):
    def no(*args, **kwargs):
        raise AssertionError("connected before refusing")

    monkeypatch.setattr(socket, "create_connection", no)
    monkeypatch.setattr(socket.socket, "connect", no)
    root = dg._course(tmp_path, 1)
    code = main(["grade", "basics", "--course", str(root), "--scheduler", "tcp://grader-1:8786"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "gather-course certificates" in err, err
    assert not (root / "grades-basics.csv").exists()


# -- a cluster started for real, on the loopback (README's classroom command) -------------------


def _dask(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(dg.DASK), *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip


def _tls_scheduler(folder: Path, port: int) -> subprocess.Popen:
    return _dask(
        "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", str(port),
        "--no-dashboard", "--tls-ca-file", "ca.pem", "--tls-cert", "scheduler.pem",
        "--tls-key", "scheduler-key.pem", cwd=folder,
    )  # fmt: skip


def _listening(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert time.monotonic() < deadline, f"nothing listens on 127.0.0.1:{port}"
        time.sleep(0.1)


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
        p.wait(timeout=30)


def _grade(root: Path, *more: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "gather_course.cli", "grade", "basics", "--course", str(root)]
    return subprocess.run(
        [*args, "--timeout", str(dg.e2e.CALL_TIMEOUT), *more],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.classroom
def test_a_tls_cluster_grades_the_class_and_refuses_whoever_lacks_its_certificates(
    tmp_path, sandboxed
):
    certs = tmp_path / "certs"
    make_certificates(certs)
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    procs = [_tls_scheduler(certs, port)]
    try:
        _listening(port)
        procs.append(
            _dask(
                "worker",
                address,
                "--name",
                "w1",
                "--nthreads",
                "2",
                "--no-nanny",
                "--no-dashboard",
                "--tls-ca-file",
                "ca.pem",
                "--tls-cert",
                "worker.pem",
                "--tls-key",
                "worker-key.pem",
                cwd=certs,
            )
        )
        # a TLS client that trusts the class's CA but has no certificate, or another CA's
        stranger = make_certificates(tmp_path / "stranger")
        for cert in (None, stranger[5]):  # stranger's client.pem
            context = ssl.create_default_context(cafile=certs / "ca.pem")
            context.check_hostname = False
            if cert is not None:
                context.load_cert_chain(cert, stranger[6])
            with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
                with pytest.raises((ssl.SSLError, ConnectionResetError, BrokenPipeError)):
                    with context.wrap_socket(raw) as tls:
                        tls.settimeout(10)
                        assert tls.recv(4096) == b""  # (or the refusal raises)
                        raise ssl.SSLError("closed without a word")
        root = dg._course(tmp_path / "class", 5)
        done = _grade(root, "--scheduler", address, "--certificates", str(certs))
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"isolation on 1 Dask workers ({address}): sandbox" in done.stdout
        dg._check_scores(root)
        # the same folder named once in the course's nbgrader_config.py
        (root / "grades-basics.csv").unlink()
        shutil.rmtree(root / ".grading")
        with open(root / "nbgrader_config.py", "a") as f:
            f.write(f"\nc.GatherCourse.certificates = {str(certs)!r}\n")
        again = _grade(root, "--scheduler", address)
        assert again.returncode == 0, again.stdout + again.stderr
        dg._check_scores(root)
    finally:
        _stop(procs)


class _Web(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"<html>not a scheduler</html>")

    def log_message(self, *args):
        pass


@pytest.mark.classroom
def test_a_wrong_address_is_one_line_that_says_what_answered(tmp_path):
    certs, other = tmp_path / "certs", tmp_path / "other"
    make_certificates(certs)
    make_certificates(other)
    tls_port, plain_port, web_port, closed = (free_port() for _ in range(4))
    web = http.server.HTTPServer(("127.0.0.1", web_port), _Web)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    procs = [
        _tls_scheduler(certs, tls_port),
        _dask("scheduler", "--host", "127.0.0.1", "--port", str(plain_port), "--no-dashboard",
              cwd=tmp_path),
    ]  # fmt: skip
    root = dg._course(tmp_path / "class", 1)
    mine, theirs = ["--certificates", str(certs)], ["--certificates", str(other)]
    cases = [
        (f"tcp://127.0.0.1:{closed}", [], "nothing listens there"),
        (f"tls://127.0.0.1:{closed}", mine, "nothing listens there"),
        (f"tcp://127.0.0.1:{web_port}", [], "a web server answered"),
        (f"tls://127.0.0.1:{web_port}", mine, "a web server answered"),
        (f"tls://127.0.0.1:{plain_port}", mine, "a Dask scheduler without TLS answered"),
        (f"tcp://127.0.0.1:{tls_port}", [], "a TLS server answered"),
        (f"tls://127.0.0.1:{tls_port}", theirs, "not signed by this class's CA"),
    ]
    try:
        _listening(tls_port)
        _listening(plain_port)
        for address, more, said in cases:
            started = time.monotonic()
            done = _grade(root, "--scheduler", address, *more)
            took = time.monotonic() - started
            err = done.stderr.strip()
            assert done.returncode == 2, (address, done.stdout, err)
            assert len(err.splitlines()) == 1 and "Traceback" not in err, (address, err)
            assert err.startswith(f"gather-course: no Dask scheduler to grade with at {address}")
            assert said in err, (address, err)
            assert took < 30, (address, took)  # (nothing waits for Dask's 20 s connect)
            assert not (root / "grades-basics.csv").exists()
    finally:
        web.shutdown()
        _stop(procs)


@pytest.mark.classroom
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_insecure_lets_an_open_scheduler_through_and_it_is_tried(tmp_path):
    """In a network namespace with no route out, ``--insecure`` reaches the probe, which
    says in one line that the host cannot be reached (no traffic leaves this machine)."""
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode:
        pytest.skip("unshare -n is not allowed here")
    root = dg._course(tmp_path, 1)
    args = [sys.executable, "-m", "gather_course.cli", "grade", "basics", "--course", str(root)]
    done = subprocess.run(
        ["unshare", "-n", *args, "--scheduler", "tcp://10.255.255.1:8786", "--insecure"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    err = done.stderr.strip()
    assert done.returncode == 2 and len(err.splitlines()) == 1, err
    assert "could not be reached" in err and "Traceback" not in err, err


@pytest.mark.classroom
def test_a_local_cluster_speaks_tls_on_the_loopback_without_a_dashboard(sandboxed):
    from distributed import Client

    from gather_course.grading._dask import DaskPool

    pool = DaskPool("local:1", 2.0, False)
    try:
        address = pool.client.scheduler.address
        assert address.startswith("tls://127.0.0.1:"), address
        # no dashboard, and the pages Dask serves without one on the loopback only
        server = pool.cluster.scheduler.http_server
        (host,) = {sock.getsockname()[0] for sock in server._sockets.values()}
        assert host == "127.0.0.1", host
        port = pool.cluster.scheduler.services["dashboard"].port
        with pytest.raises(urllib.error.HTTPError) as page:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=10)
        assert page.value.code == 404  # (the dashboard's pages are not there)
        with pytest.raises(Exception):  # noqa: B017 - Dask's own error, whatever it is
            Client(address, timeout=5)  # no certificate: refused
    finally:
        pool.close()


@pytest.fixture
def sandboxed():
    if dg.isolation().level != "sandbox" and not dg.e2e.REQUIRE_SANDBOX:
        pytest.skip(f"grading on Dask is tested in the sandbox: {dg.isolation()}")
