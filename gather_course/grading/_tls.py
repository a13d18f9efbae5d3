"""A grading cluster no student can reach: a class's own certificates for Dask's mutual TLS.

Dask's scheduler runs whatever any client that reaches it asks, on every worker, and the
workers hold the referees that decide every verdict. So a class's cluster speaks TLS, and
both ends of every connection show a certificate signed by the class's own CA
(``distributed.security.Security``). ``gather-course certificates DIR`` makes them: a CA
whose key is thrown away once it has signed (nobody, the instructor included, can sign
another: make a new folder to start over), and a certificate and key for the scheduler, the
workers and the instructor's client.

>>> names = [f for role in ROLES for f in (f"{role}.pem", f"{role}-key.pem")]
>>> names[:2]
['scheduler.pem', 'scheduler-key.pem']
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError

ROLES = ("scheduler", "worker", "client")
CA = "ca.pem"
DAYS = 400  # a term and its regrades
_GUIDE = "README.txt"


def make_certificates(folder: Path, days: int = DAYS) -> list[Path]:
    """A new CA, and a certificate and key for each of :data:`ROLES`, in ``folder`` (new, or
    empty): the files written, the CA's certificate first. Keys are readable by their owner
    only; the CA's key is never written."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise GatherCourseError(
            f"{folder} already exists and is not an empty folder: certificates go into a new "
            "folder (nothing of an old one is overwritten; delete it yourself to start over)"
        )
    if days < 1:
        raise GatherCourseError(f"--days takes a number of days of at least 1, got {days}")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days))

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name(f"gather-course class CA {now:%Y-%m-%d %H:%M}")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0])
        .not_valid_after(valid[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(cert_sign=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    written = [_write(folder / CA, ca.public_bytes(serialization.Encoding.PEM), 0o644)]
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(name(f"gather-course {role}"))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid[0])
            .not_valid_after(valid[1])
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(cert_sign=False), critical=True)
            .add_extension(  # every role both serves and connects (Dask's comms go both ways)
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
            .sign(ca_key, hashes.SHA256())
        )
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        written.append(
            _write(folder / f"{role}.pem", cert.public_bytes(serialization.Encoding.PEM), 0o644)
        )
        written.append(_write(folder / f"{role}-key.pem", pem, 0o600))
    del ca_key  # never written: no one can sign another certificate for this class
    written.append(_write(folder / _GUIDE, guide(folder, valid[1]).encode(), 0o644))
    return written


def _usage(cert_sign: bool) -> Any:
    from cryptography import x509

    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=not cert_sign,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _write(path: Path, data: bytes, mode: int) -> Path:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, mode)  # whatever the umask
    return path


def guide(folder: Path, until: datetime.datetime) -> str:
    """Where each file goes, and the commands that use them."""
    d = folder.resolve()
    return f"""A grading cluster's certificates, made by gather-course certificates (valid until {until:%Y-%m-%d}).
Every connection in the cluster is TLS, and both ends show a certificate signed by this
folder's CA; the CA's key was thrown away, so no one can sign another.

Copy to each machine (scp, with the keys' permissions kept), and nowhere a student can read:
  the scheduler's machine:  ca.pem scheduler.pem scheduler-key.pem
  each grading machine:     ca.pem worker.pem worker-key.pem
  the instructor's machine: ca.pem client.pem client-key.pem (this folder will do)

Every Dask process is bound to one named address (--host): a scheduler runs code for
whoever reaches it, and without --host Dask listens on every interface of the machine.
SCHEDULER-IP and WORKER-IP are each machine's private address on the graders' network
(127.0.0.1 for all of them to try the cluster on one machine).

On the scheduler's machine (no dashboard, and its web pages, which Dask serves even
without one, on the loopback only: they would be a door of their own):
  dask scheduler --protocol tls --host SCHEDULER-IP --port 8786 --no-dashboard \\
      --dashboard-address 127.0.0.1:8787 \\
      --tls-ca-file ca.pem --tls-cert scheduler.pem --tls-key scheduler-key.pem
On each grading machine:
  dask worker tls://SCHEDULER-IP:8786 --host WORKER-IP --nthreads 4 --no-dashboard \\
      --dashboard-address 127.0.0.1:0 \\
      --tls-ca-file ca.pem --tls-cert worker.pem --tls-key worker-key.pem
On the instructor's machine:
  gather-course grade ASSIGNMENT --scheduler tls://SCHEDULER-IP:8786 --certificates {d}
  (or, in the course's nbgrader_config.py: c.GatherCourse.certificates = "{d}")

A key that may have leaked: make a new folder and restart the cluster with it.
"""


def security(folder: Path | str) -> Any:
    """The instructor's client's ``Security``: this class's CA, the client's certificate and
    key, encryption required. A clear error for a folder without them."""
    from distributed.security import Security

    folder = Path(folder).expanduser()
    files = [folder / CA, folder / "client.pem", folder / "client-key.pem"]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise GatherCourseError(
            f"--certificates {folder}: expected the folder `gather-course certificates` made "
            f"(ca.pem, client.pem, client-key.pem), but {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not there"
        )
    return Security(
        tls_ca_file=str(files[0]),
        tls_client_cert=str(files[1]),
        tls_client_key=str(files[2]),
        require_encryption=True,
    )
