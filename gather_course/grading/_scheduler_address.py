"""A scheduler's address, refused or looked at before Dask connects to it.

``grade --scheduler ADDRESS`` takes ``tls://HOST:PORT`` with the class's certificates, or
``tcp://HOST:PORT`` on this machine's loopback only (a scheduler without TLS runs whatever
anyone who reaches it asks): another host is refused before anything connects, unless the
instructor says ``--insecure``. Without ``:PORT`` the port is Dask's scheduler's default,
8786 (``tls://grader-1`` is ``tls://grader-1:8786``); an IPv6 host goes in brackets
(``tls://[2001:db8::1]:8786``). Any other form is one line that says what was expected and
what was given. Then :func:`probe` looks at what answers, so a mistyped
address is one line that says what was tried, what was found and what to check, not a
traceback from Dask reading a web server's reply as a frame length.

>>> parse("tls://grader-1:8786"), is_loopback("127.0.0.2"), is_loopback("grader-1")
(('tls', 'grader-1', 8786), True, False)
>>> parse("tls://grader-1"), unparse("tcp", "::1", 8786)
(('tls', 'grader-1', 8786), 'tcp://[::1]:8786')
"""

from __future__ import annotations

import ipaddress
import re
import socket
import ssl
from typing import Any, NoReturn

from .._errors import GatherCourseError

DEFAULT_PORT = 8786  # Dask's scheduler's
_WAIT = 3.0  # seconds for each look at the other end
_DASK_GREETING = b"pickle-protocol"  # in the handshake a Dask comm sends as it opens
_FORMS = (
    f"tls://HOST:PORT (with the class's certificates; PORT defaults to {DEFAULT_PORT}), "
    "tcp://127.0.0.1:PORT or local:N"
)


def parse(address: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a Dask address: ``tls://HOST:PORT``, ``tcp://HOST:PORT`` or
    ``HOST:PORT`` (``tcp``); without ``:PORT``, Dask's default scheduler port 8786. An IPv6
    host goes in brackets (``[::1]:8786``). Else :class:`GatherCourseError`, one line with
    what was expected, what was given and what is wrong with it."""
    scheme, sep, rest = address.strip().partition("://")
    if not sep:
        scheme, rest = "tcp", address.strip()
    if scheme not in ("tcp", "tls"):
        _malformed(address, f"the scheme is {scheme!r}, not tls:// or tcp://")
    if rest.startswith("["):  # an IPv6 host: [HOST] or [HOST]:PORT
        host, bracket, tail = rest[1:].partition("]")
        if not bracket or (tail and not tail.startswith(":")):
            _malformed(address, "an IPv6 host is [ADDRESS] or [ADDRESS]:PORT")
        port = tail[1:] if tail else str(DEFAULT_PORT)
        if not _is_ipv6(host):
            _malformed(address, f"{host!r} is not an IPv6 address")
    else:
        host, colon, port = rest.rpartition(":")
        if not colon:
            host, port = rest, str(DEFAULT_PORT)
        if ":" in host:
            _malformed(address, "an IPv6 host goes in brackets, as [::1]:8786")
        if not _HOST.fullmatch(host):
            _malformed(address, f"{host!r} is not a host name or address" if host else "no host")
    if not port.isdigit() or not 0 < int(port) < 65536:
        _malformed(address, f"the port {port!r} is not a number from 1 to 65535")
    return scheme, host, int(port)


def unparse(scheme: str, host: str, port: int) -> str:
    """The address Dask is given: the port always written, an IPv6 host in brackets."""
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


_HOST = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?")  # a name or an IPv4 address


def _is_ipv6(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).version == 6
    except ValueError:
        return False


def _malformed(address: str, why: str) -> NoReturn:
    raise GatherCourseError(f"--scheduler: expected {_FORMS}; got {address!r} ({why})")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine's loopback, by its text alone (no name is looked up)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_scheduler_address(
    address: str, *, certificates: bool, insecure: bool
) -> tuple[str, str, int]:
    """The address, if grading may use it; else one line that says why and what to do.
    Nothing connects here."""
    scheme, host, port = parse(address)
    if scheme == "tls" and not certificates:
        raise GatherCourseError(
            f"--scheduler {address}: a TLS scheduler takes the class's certificates: add "
            "--certificates DIR (the folder `gather-course certificates DIR` made), or set "
            "c.GatherCourse.certificates in the course's nbgrader_config.py"
        )
    if scheme == "tcp" and certificates:
        raise GatherCourseError(
            f"--scheduler {address}: the certificates are for a TLS scheduler: use "
            f"{unparse('tls', host, port)} (a scheduler started with --protocol tls and them)"
        )
    if scheme == "tcp" and not is_loopback(host) and not insecure:
        raise GatherCourseError(
            f"refused --scheduler {address}: a scheduler without TLS runs whatever anyone who "
            f"reaches {host}:{port} sends, on the workers that decide every grade. Make the "
            "class's certificates (gather-course certificates DIR), start the cluster with "
            f"them (DIR/README.txt), and grade with --scheduler {unparse('tls', host, port)} "
            "--certificates DIR; on a network no student can reach, --insecure says so"
        )
    return scheme, host, port


def probe(scheme: str, host: str, port: int, context: ssl.SSLContext | None) -> str:
    """What answers at the address, when it is not a Dask scheduler that accepts this client
    ("" when it is): a sentence that says what was found and what to check."""
    try:
        if scheme == "tls":
            return _tls(host, port, context)
        return _plain(host, port)
    except OSError as exc:  # after connecting: it closed, reset or went silent
        return f"the connection ended ({exc.strerror or type(exc).__name__})" + _CHECK


_CHECK = "; check the host and port the scheduler printed as it started"


def _connect(host: str, port: int) -> socket.socket | str:
    try:
        return socket.create_connection((host, port), timeout=_WAIT)
    except ConnectionRefusedError:
        return "nothing listens there (connection refused): is the scheduler running, on this port?"
    except TimeoutError:
        return f"nothing answered within {_WAIT:g} s (a firewall, or the wrong host?)"
    except socket.gaierror:
        return f"no host is named {host!r}: check its spelling"
    except OSError as exc:
        return f"it could not be reached ({exc.strerror or type(exc).__name__})"


def _read(sock: Any) -> bytes:
    """What the other end sends within the wait, unasked (a Dask comm greets at once)."""
    sock.settimeout(_WAIT)
    data = b""
    try:
        while len(data) < 4096:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
            if _DASK_GREETING in data:
                break
    except TimeoutError:
        pass
    return data


def _silent(host: str, port: int) -> str:
    """A server that waits for its client to speak first: ask it as a web browser would."""
    sock = _connect(host, port)
    if isinstance(sock, str):
        return sock
    with sock:
        sock.sendall(b"GET / HTTP/1.0\r\nHost: gather-course\r\n\r\n")
        try:
            reply = _read(sock)
        except ConnectionResetError:  # a TLS server resets a plain-text hello
            reply = b"\x15"
    if reply.startswith(b"HTTP/"):
        return (
            "a web server answered (a Dask dashboard, JupyterHub or another service): the "
            f"scheduler's own port is the one it printed as it started ({DEFAULT_PORT} unless "
            "it was given another)"
        )
    if reply[:1] == b"\x15":  # a TLS alert (or a reset): it expected a TLS handshake
        return (
            "a TLS server answered (a scheduler started with --protocol tls?): use "
            f"tls://{host}:{port} with the class's certificates"
        )
    return "something that is not a Dask scheduler answered" + _CHECK


def _plain(host: str, port: int) -> str:
    sock = _connect(host, port)
    if isinstance(sock, str):
        return sock
    with sock:
        first = _read(sock)
    if _DASK_GREETING in first:
        return ""
    if first:
        return f"something that is not a Dask scheduler answered ({len(first)} bytes)" + _CHECK
    return _silent(host, port)


def _tls(host: str, port: int, context: ssl.SSLContext | None) -> str:
    sock = _connect(host, port)
    if isinstance(sock, str):
        return sock
    if context is None:
        sock.close()
        raise GatherCourseError("a TLS address needs the class's certificates")
    sock.settimeout(_WAIT)
    try:
        tls = context.wrap_socket(sock)
    except ssl.SSLCertVerificationError:
        sock.close()
        return (
            "a TLS server answered whose certificate is not signed by this class's CA "
            "(another class's scheduler, or another certificates folder?)"
        )
    except (ssl.SSLError, ConnectionResetError, TimeoutError, OSError):
        sock.close()  # it does not speak TLS: what is it?
        found = _plain(host, port)
        if not found:
            return (
                "a Dask scheduler without TLS answered: restart it with the class's "
                "certificates (--protocol tls, DIR/README.txt)"
            )
        return found
    with tls:
        try:
            first = _read(tls)
        except ssl.SSLError:  # TLS 1.3: the server's verdict on our certificate comes now
            return (
                "a TLS scheduler refused this class's client certificate: it was started "
                "with another CA's files (start it with this folder's ca.pem and scheduler files)"
            )
    if _DASK_GREETING in first:
        return ""
    return "a TLS server answered that is not a Dask scheduler" + _CHECK
