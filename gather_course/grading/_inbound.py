"""A submission folder in the exchange's inbound, read as hostile: nothing followed, and no
time trusted but the one the kernel records.

A student writes their own folder in the exchange, names it and fills it: its name and its
``timestamp.txt`` say when they *claim* to have submitted. What they cannot set is the change
time (``st_ctime``) of what they wrote: the kernel stamps it at every change, and no system
call moves it back. A folder's *received* time is the latest change time of the folder and
of everything in it, so a later edit only makes the submission later.

:func:`read_folder` walks a folder without following anything: each entry is opened
relative to its parent's descriptor with ``O_NOFOLLOW``, checked again with ``fstat`` (a
regular file or a folder, owned by the submitting user), hashed and, with ``into``, copied.
Symbolic links, FIFOs, sockets, devices and entries someone else owns are never opened:
they are skipped and named. The digest covers the work only (not nbgrader's
``timestamp.txt`` and ``submission_secret.txt``), so two submissions of the same work have
the same digest, and the copy in ``submitted/`` has the digest of what was received.
"""

from __future__ import annotations

import datetime
import fnmatch
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

# nbgrader's own files in a submission, written anew on every submit: not part of the work
NBGRADER_FILES = ("timestamp.txt", "submission_secret.txt")
MAX_ENTRIES = 10_000  # a submission is a few notebooks; more is a folder bomb
MAX_DEPTH = 32
_CHUNK = 1 << 20


def shown_name(name: str) -> str:
    """A name a student chose, safe to print: as written where every character prints, else
    with the others escaped (no line break or terminal escape reaches the instructor's
    screen or log)."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in name)


class Unreadable(Exception):
    """The folder cannot be read as a submission (not a folder, a link, too large or deep)."""


@dataclass(frozen=True)
class Rules:
    """nbgrader's collecting rules (``CourseDirectory.ignore``, ``include``,
    ``max_file_size`` and ``max_dir_size``, the sizes in bytes)."""

    ignore: tuple[str, ...] = ()
    include: tuple[str, ...] = ("*",)
    max_file_size: int | None = None
    max_dir_size: int | None = None

    def skips(self, name: str, is_file: bool) -> bool:
        """nbgrader's ``ignore_patterns``: an excluded name, or a file not included."""
        if any(fnmatch.fnmatch(name, glob) for glob in self.ignore):
            return True
        return (
            is_file
            and bool(self.include)
            and not any(fnmatch.fnmatch(name, glob) for glob in self.include)
        )


@dataclass
class Folder:
    """What :func:`read_folder` found: the folder's owner, its received time (the latest
    change time of everything in it), the digest of its work, the student's claimed time
    (``timestamp.txt``, as written) and what was skipped, each with why."""

    owner: int
    received_ns: int
    digest: str
    claim: str = ""
    files: int = 0
    size: int = 0
    skipped: list[str] = field(default_factory=list)

    @property
    def received(self) -> datetime.datetime:
        """The received time, in UTC."""
        return datetime.datetime.fromtimestamp(self.received_ns / 1e9, datetime.timezone.utc)


def read_folder(
    path: Path, owner: int | None = None, rules: Rules = Rules(), into: Path | None = None
) -> Folder:
    """Read the submission folder ``path`` as hostile; copy what it keeps ``into`` a new
    folder when given.

    ``owner``: the uid every entry must have (``None``: any, for a folder the instructor's
    side wrote). The folder itself is refused (:class:`Unreadable`) when it is a link or
    not a folder, or past :data:`MAX_ENTRIES`, :data:`MAX_DEPTH` or ``rules.max_dir_size``.

    >>> import tempfile; tmp = Path(tempfile.mkdtemp())
    >>> _ = (tmp / "basics.ipynb").write_text("{}"); (tmp / "x").symlink_to("/etc/passwd")
    >>> read_folder(tmp).skipped
    ['x: a symbolic link (not followed)']
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise Unreadable(
            f"{shown_name(path.name)} is not a folder one can read ({exc.strerror})"
        ) from None
    try:
        top = os.fstat(fd)
        if owner is not None and top.st_uid != owner:
            raise Unreadable(f"{shown_name(path.name)} belongs to uid {top.st_uid}, not {owner}")
        walk = _Walk(owner, rules, top.st_ctime_ns)
        if into is not None:
            into.mkdir(parents=True)
        walk.folder(fd, "", into, 0)
    finally:
        os.close(fd)
    return Folder(
        owner=top.st_uid,
        received_ns=walk.latest_ns,
        digest=walk.digest(),
        claim=walk.claim,
        files=len(walk.hashes),
        size=walk.size,
        skipped=walk.skipped,
    )


class _Walk:
    """One walk of a folder: the latest change time seen, each kept file's hash, what was
    skipped."""

    def __init__(self, owner: int | None, rules: Rules, ctime_ns: int) -> None:
        self.owner, self.rules = owner, rules
        self.latest_ns = ctime_ns
        self.hashes: dict[str, str] = {}
        self.skipped: list[str] = []
        self.claim = ""
        self.size = 0
        self.entries = 0

    def digest(self) -> str:
        h = hashlib.sha256()
        for rel in sorted(self.hashes):
            if rel not in NBGRADER_FILES:
                h.update(f"{rel}\0{self.hashes[rel]}\n".encode())
        return h.hexdigest()

    def folder(self, fd: int, rel: str, into: Path | None, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise Unreadable(f"folders nested deeper than {MAX_DEPTH} ({shown_name(rel)})")
        with os.scandir(fd) as found:
            entries = sorted(found, key=lambda e: e.name)
        for entry in entries:
            self.entries += 1
            if self.entries > MAX_ENTRIES:
                raise Unreadable(f"more than {MAX_ENTRIES} files and folders")
            name = f"{rel}/{entry.name}" if rel else entry.name  # (hashed as written)
            st = os.stat(entry.name, dir_fd=fd, follow_symlinks=False)
            self.latest_ns = max(self.latest_ns, st.st_ctime_ns)
            why = self._refused(st)
            if why:
                self.skipped.append(f"{shown_name(name)}: {why}")
                continue
            if self.rules.skips(entry.name, stat.S_ISREG(st.st_mode)):
                continue  # nbgrader's ignore and include rules: not collected, not a problem
            if stat.S_ISDIR(st.st_mode):
                sub = os.open(
                    entry.name,
                    os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                    dir_fd=fd,
                )
                try:
                    if self._changed(sub, st, name):
                        continue
                    target = into / entry.name if into is not None else None
                    if target is not None:
                        target.mkdir()
                    self.folder(sub, name, target, depth + 1)
                finally:
                    os.close(sub)
            else:
                self.file(fd, entry.name, name, st, into)

    def file(self, fd: int, name: str, rel: str, st: os.stat_result, into: Path | None) -> None:
        limit = self.rules.max_file_size
        if limit is not None and st.st_size > limit:
            self.skipped.append(
                f"{shown_name(rel)}: larger than {limit} bytes (CourseDirectory.max_file_size)"
            )
            return
        src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        try:
            if self._changed(src, st, rel):
                return
            h, read = hashlib.sha256(), 0
            out = open(into / name, "xb") if into is not None else None
            try:
                while chunk := os.read(src, _CHUNK):
                    read += len(chunk)
                    self._count(len(chunk), rel)
                    h.update(chunk)
                    if out is not None:
                        out.write(chunk)
            finally:
                if out is not None:
                    out.close()
            if into is not None:
                os.utime(into / name, ns=(st.st_atime_ns, st.st_mtime_ns))
            self.hashes[rel] = h.hexdigest()
            if rel == "timestamp.txt":  # the student's claim, as written
                self.claim = os.pread(src, 100, 0).decode("utf-8", "replace").strip()
        finally:
            os.close(src)

    def _count(self, n: int, rel: str) -> None:
        self.size += n
        limit = self.rules.max_dir_size
        if limit is not None and self.size > limit:
            raise Unreadable(f"larger than {limit} bytes in all (CourseDirectory.max_dir_size)")

    def _refused(self, st: os.stat_result) -> str:
        """Why an entry is never opened: not a file or folder, or someone else's."""
        kind = stat.S_IFMT(st.st_mode)
        if kind == stat.S_IFLNK:
            return "a symbolic link (not followed)"
        if kind not in (stat.S_IFREG, stat.S_IFDIR):
            return "not a file or a folder (a FIFO, socket or device)"
        if self.owner is not None and st.st_uid != self.owner:
            return f"written by another user (uid {st.st_uid})"
        return ""

    def _changed(self, fd: int, before: os.stat_result, rel: str) -> bool:
        """The entry was swapped between the look and the open: skip it, say so."""
        now = os.fstat(fd)
        self.latest_ns = max(self.latest_ns, now.st_ctime_ns)
        if (now.st_ino, now.st_dev) != (before.st_ino, before.st_dev) or self._refused(now):
            self.skipped.append(f"{shown_name(rel)}: changed while it was read (skipped)")
            return True
        return False
