"""``grade --scheduler ADDRESS`` read before anything connects (issue 48): an address without
a port is Dask's default scheduler port, 8786, all the way to the ``Client``; any other
malformed address is one line that says what was expected and what was given.

Nothing here connects anywhere: every socket is refused, and the ``Client`` is a stand-in."""

from __future__ import annotations

import socket

import pytest

from gather_course._errors import GatherCourseError
from gather_course.grading import _scheduler_address as sa
from tests import test_dask_grading as dg
from tests.helpers import cli

pytest.importorskip("distributed")

MALFORMED = [
    ("tls://127.0.0.1:", "the port ''"),
    ("tls://", "no host"),
    ("tls://grader 1:8786", "'grader 1' is not a host name"),
    ("tls://::1", "IPv6 host goes in brackets"),
    ("tls://[::1", "[ADDRESS]:PORT"),
    ("tls://[grader-1]:8786", "'grader-1' is not an IPv6 address"),
    ("https://grader-1:8786", "the scheme is 'https'"),
    ("tls://grader-1:8786/status", "the port '8786/status'"),
    ("tls://grader-1:0", "the port '0'"),
]


@pytest.fixture
def no_network(monkeypatch):
    def no(*args, **kwargs):
        raise AssertionError("connected while reading an address")

    monkeypatch.setattr(socket, "create_connection", no)
    monkeypatch.setattr(socket.socket, "connect", no)


@pytest.mark.parametrize(
    ("address", "parsed"),
    [
        ("tls://grader-1", ("tls", "grader-1", sa.DEFAULT_PORT)),
        ("tcp://127.0.0.1", ("tcp", "127.0.0.1", sa.DEFAULT_PORT)),
        ("tls://[2001:db8::1]", ("tls", "2001:db8::1", sa.DEFAULT_PORT)),
        ("tls://[2001:db8::1]:9000", ("tls", "2001:db8::1", 9000)),
        ("grader-1.example.edu:9000", ("tcp", "grader-1.example.edu", 9000)),
    ],
)
def test_an_address_without_a_port_is_dasks_default_scheduler_port(address, parsed):
    assert sa.DEFAULT_PORT == 8786
    assert sa.parse(address) == parsed
    scheme, host, port = parsed
    assert sa.parse(sa.unparse(scheme, host, port)) == parsed  # what Dask is given reads back


@pytest.mark.parametrize(("address", "why"), MALFORMED)
def test_a_malformed_address_is_one_line_with_what_was_expected_and_given(address, why):
    with pytest.raises(GatherCourseError) as refused:
        sa.parse(address)
    said = str(refused.value)
    assert "\n" not in said
    assert said.startswith("--scheduler: expected tls://HOST:PORT"), said
    assert f"got {address!r}" in said and why in said, said


def test_the_client_is_given_the_port_the_address_left_out(tmp_path, monkeypatch):
    """``tls://127.0.0.1`` reaches Dask as ``tls://127.0.0.1:8786`` (Dask itself would stop
    at ``ValueError: missing port number``)."""
    from gather_course.grading import _dask
    from gather_course.grading._tls import make_certificates

    make_certificates(tmp_path / "certs")
    seen = {}

    def probe(scheme, host, port, context):
        seen["probed"] = scheme, host, port
        return ""  # a TLS scheduler answered

    monkeypatch.setattr(_dask, "probe", probe)
    monkeypatch.setattr(_dask, "Client", lambda address, **kw: seen.setdefault("client", address))
    _dask._connect("tls://127.0.0.1", str(tmp_path / "certs"), insecure=False)
    assert seen["probed"] == ("tls", "127.0.0.1", 8786)
    assert seen["client"] == "tls://127.0.0.1:8786"


@pytest.mark.parametrize(("address", "why"), MALFORMED[:4])
def test_grade_says_a_malformed_address_in_one_line_and_grades_no_one(
    tmp_path, no_network, address, why
):
    root = dg._course(tmp_path, 1)
    done = cli("grade", "basics", "--course", str(root), "--scheduler", address, cwd=tmp_path)
    err = done.stderr
    assert done.returncode == 2, (done.stdout, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("gather-course: --scheduler: expected tls://HOST:PORT"), err
    assert f"got {address!r}" in err and why in err, err
    assert not (root / "grades-basics.csv").exists()
