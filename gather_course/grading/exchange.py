"""The course's nbgrader exchange: each student reaches only their own work, and a
submission's time is one no student can set.

nbgrader's exchange is a folder every student writes to. Stock, a student who learns a
submission folder's name can read and rewrite it (``submit`` leaves it mode 777), anyone
can rename the course's folder out of the exchange (its root is 777 without the sticky
bit), and ``collect`` takes a submission's time from ``timestamp.txt`` and the folder's
name, both the student's to write, follows symbolic links as the instructor, and only
warns about a folder submitted in another student's name (nbgrader #1104, #1097). These
plugins close each of those; docs/jupyterhub.md lists every permission, and
tests/test_classroom_exchange.py tries each attack as a real second user.

They are named in the course's ``nbgrader_config.py``, so ``nbgrader collect``, the
formgrader and the students' *Assignments* tab use them::

    c.ExchangeFactory.release_assignment = "gather_course.grading.exchange.ReleaseAssignment"
    c.ExchangeFactory.collect = "gather_course.grading.exchange.Collect"
    c.ExchangeFactory.release_feedback = "gather_course.grading.exchange.ReleaseFeedback"

and, for the students, in ``/etc/jupyter/nbgrader_config.py``::

    c.ExchangeFactory.submit = "gather_course.grading.exchange.Submit"
"""

from __future__ import annotations

import dataclasses
import datetime
import fnmatch
import glob
import os
import pwd
import shutil
import stat
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.exchange.default.submit import ExchangeSubmit

from .._i18n import _
from ._inbound import Folder, Rules, Unreadable, read_folder, shown_name
from ._receipts import Decision, Receipt, append

REFUSED = "refused"  # the course root's folder where refused submissions are set aside
SET_ASIDE_BYTES = 20_000_000  # a refused folder's files are kept up to this much (a notebook
# is kilobytes): a student who fills the inbound with refused folders cannot fill the course's disk


def _iso(when: datetime.datetime) -> str:
    return when.isoformat(timespec="microseconds")


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


class ReleaseAssignment(ExchangeReleaseAssignment):
    """nbgrader's release, then the exchange's folders closed: its root and ``inbound``
    sticky (no one renames or deletes what another wrote), ``inbound`` not readable by
    students (they write into it, never list it), ``outbound`` writable by its owner only."""

    def ensure_root(self) -> None:
        super().ensure_root()  # (it may reset the mode to 777: the sticky bit comes after)
        self._set(self.root, add=stat.S_ISVTX, why="a student could rename the course away")

    def init_dest(self) -> None:
        super().init_dest()
        shared = stat.S_IRGRP if self.coursedir.groupshared else 0
        self._set(
            self.inbound_path,
            add=stat.S_ISVTX,
            drop=stat.S_IROTH | (0 if shared else stat.S_IRGRP),
            why="a student could list, rename or delete classmates' submissions",
        )
        self._set(self.outbound_path, drop=stat.S_IWOTH, why="a student could change a release")

    def _set(self, path: str, add: int = 0, drop: int = 0, why: str = "") -> None:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        want = (mode | add) & ~drop
        if want == mode:
            return
        try:
            os.chmod(path, want)
        except PermissionError:
            self.fail(
                f"{path} has mode {mode:o}, and {why}; it belongs to {_user(os.stat(path).st_uid)}, "
                f"who can set it: chmod {want:o} {path}"
            )


class Submit(ExchangeSubmit):
    """nbgrader's submit, then the submission's folder closed to classmates: mode 770, its
    group the instructor's (``inbound`` is setgid, so the folder is made in that group). The
    files inside keep nbgrader's modes: no one but the student and that group can enter the
    folder to reach them, even knowing its name.

    nbgrader leaves the folder 777 so that the instructor can delete it; the group keeps
    that. Where the folder is not in ``inbound``'s group (an ``inbound`` that is not setgid),
    it is left as nbgrader made it, and the student is told."""

    def copy_files(self) -> None:
        super().copy_files()
        self._close_to_classmates(os.path.join(self.inbound_path, self.assignment_filename))

    def _close_to_classmates(self, folder: str) -> None:
        if os.stat(folder).st_gid != os.stat(self.inbound_path).st_gid:
            self.log.warning(
                _(
                    "The exchange's inbound is not setgid: this submission stays readable by "
                    "whoever learns its name. Tell your instructor."
                )
            )
            return
        os.chmod(folder, 0o770)


@dataclasses.dataclass
class _Seen:
    """One folder of the inbound that names this assignment."""

    name: str
    student: str
    owner: str = ""
    folder: Folder | None = None
    problem: str = ""


class Collect(ExchangeCollect):
    """nbgrader's collect, reading the inbound as hostile, with a receipt for each folder.

    - A folder whose name claims a student who did not write it (its owner is another Unix
      user) is refused: never collected as theirs, its files set aside in
      ``refused/<assignment>/`` and named in the log, the receipts and ``grade``'s summary.
      nbgrader's ``check_owner`` only warns; here it cannot be turned off.
    - Nothing in a folder is followed: links, FIFOs, devices and files another user wrote
      are skipped and named (:mod:`._inbound`). A folder nbgrader cannot parse is refused,
      not a crash of the whole collect.
    - Each student's latest submission by the time the exchange *received* it (the kernel's
      change times) is collected, not by the time in its name; with ``--before-duedate``,
      the latest received by the due date.
    - Every folder gets a receipt (:mod:`._receipts`): ``grade`` takes each submission's
      time from it, and flags a ``timestamp.txt`` that claims an earlier one.
    """

    def init_src(self) -> None:
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not os.access(self.inbound_path, os.R_OK | os.X_OK):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        self.duedate = self._duedate()
        rules = Rules(
            tuple(self.coursedir.ignore),
            tuple(self.coursedir.include),
            _kb(self.coursedir.max_file_size),
            _kb(self.coursedir.max_dir_size),
        )
        self.rules = rules
        self.seen = [self._look(name, rules) for name in self._names()]
        self.src_records = self._choose()

    def _names(self) -> list[str]:
        """The inbound's folders of this assignment (of one student with ``--student``)."""
        names = []
        student = self.coursedir.student_id or "*"  # (nbgrader's default: a glob of all)
        for name in sorted(os.listdir(self.inbound_path)):
            parts = name.rsplit("+", 3)
            if len(parts) >= 3 and parts[1] == self.coursedir.assignment_id:
                if fnmatch.fnmatchcase(parts[0], student):
                    names.append(name)
        return names

    def _duedate(self) -> datetime.datetime | None:
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                due = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                return None
        return due.replace(tzinfo=datetime.timezone.utc) if due is not None else None

    def _look(self, name: str, rules: Rules) -> _Seen:
        seen = _Seen(name, name.rsplit("+", 3)[0])
        path = Path(self.inbound_path, name)
        try:
            st = os.lstat(path)
        except OSError as exc:
            seen.problem = f"cannot be read ({exc.strerror})"
            return seen
        seen.owner = _user(st.st_uid)
        if not stat.S_ISDIR(st.st_mode):
            seen.problem = "is not a folder"
            return seen
        try:
            uid = pwd.getpwnam(seen.student).pw_uid
        except KeyError:
            seen.problem = (
                f"claims to be {shown_name(seen.student)}'s, and no Unix user has that name"
            )
            return seen
        if st.st_uid != uid:
            seen.problem = f"claims to be {shown_name(seen.student)}'s, but {seen.owner} wrote it"
            return seen
        try:
            seen.folder = read_folder(path, uid, rules)
        except Unreadable as exc:
            seen.problem = str(exc)
        return seen

    def _choose(self) -> list[dict]:
        """Per student, the folder to collect: the latest received (by the due date, with
        ``--before-duedate``), with the first time its work was received."""
        chosen = []
        for student in sorted({s.student for s in self.seen if s.folder is not None}):
            mine = sorted(
                (s for s in self.seen if s.student == student and s.folder is not None),
                key=lambda s: s.folder.received_ns,
            )
            pick = mine[-1]
            if self.before_duedate and self.duedate is not None:
                early = [s for s in mine if s.folder.received <= self.duedate]
                pick = early[-1] if early else pick
            first = min(s.folder.received for s in mine if s.folder.digest == pick.folder.digest)
            chosen.append(
                {"username": student, "filename": pick.name, "seen": pick, "first": first}
            )
        return chosen

    def copy_files(self) -> None:
        now = _iso(datetime.datetime.now(datetime.timezone.utc))
        receipts = [self._refuse(s, now) for s in self.seen if s.problem]
        if not self.src_records:
            self.log.warning(
                f"No submissions of '{self.coursedir.assignment_id}' for course "
                f"'{self.coursedir.course_id}' to collect"
            )
        else:
            self.log.info(
                f"Processing {len(self.src_records)} submissions of "
                f"'{self.coursedir.assignment_id}' for course '{self.coursedir.course_id}'"
            )
        for record in self.src_records:
            receipt = self._collect(record, now)
            if receipt is not None:
                receipts.append(receipt)
        if receipts:
            append(Path(self.coursedir.root), self.coursedir.assignment_id, receipts)

    def _collect(self, record: dict, now: str) -> Receipt | None:
        seen, student = record["seen"], record["username"]
        dest = Path(
            self.coursedir.format_path(
                self.coursedir.submitted_directory, student, self.coursedir.assignment_id
            )
        )
        dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = seen.folder
        if dest.is_dir():
            try:
                same = read_folder(dest).digest == folder.digest
            except Unreadable:
                same = False
            if not same and not (self.update or self.before_duedate):
                self.log.info(
                    f"Submission already exists, use --update to update: {student} "
                    f"{self.coursedir.assignment_id}"
                )
                return None
        else:
            same = False
        if not same:
            self.log.info(f"Collecting submission: {student} {self.coursedir.assignment_id}")
            folder = self._copy(seen, dest)
            if folder is None:
                return self._refuse(seen, now)
        for line in folder.skipped:
            self.log.warning(f"{shown_name(seen.name)}: skipped {line}")
        first = min(record["first"], folder.received)
        return Receipt(
            student=student,
            folder=seen.name,
            owner=seen.owner,
            decision=Decision.COLLECTED,
            received=_iso(folder.received),
            first_received=_iso(first),
            claim=folder.claim,
            digest=folder.digest,
            skipped=tuple(folder.skipped),
            collected_at=now,
        )

    def _copy(self, seen: _Seen, dest: Path) -> Folder | None:
        """Copy ``seen`` into ``dest`` (replacing it only once the copy is whole); None,
        with ``seen.problem`` set, where it cannot be read."""
        tmp = dest.with_name(f".{dest.name}.collecting")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            folder = read_folder(
                Path(self.inbound_path, seen.name), seen.folder.owner, self.rules, into=tmp
            )
        except Unreadable as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            seen.problem = str(exc)
            return None
        folder.received_ns = max(folder.received_ns, seen.folder.received_ns)
        if self.coursedir.groupshared:
            _group_shared(tmp)
        if dest.is_dir():
            shutil.rmtree(dest)
        os.rename(tmp, dest)
        return folder

    def _refuse(self, seen: _Seen, now: str) -> Receipt:
        """A folder not collected: say so, and set its files aside for the instructor."""
        self.log.error(f"Refused {shown_name(seen.name)}: {seen.problem}. It is not collected.")
        aside = Path(self.coursedir.root, REFUSED, self.coursedir.assignment_id, seen.name)
        limit = min(self.rules.max_dir_size or SET_ASIDE_BYTES, SET_ASIDE_BYTES)
        kept = ""
        try:
            owner = os.lstat(Path(self.inbound_path, seen.name)).st_uid
            if not aside.exists():
                aside.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                rules = dataclasses.replace(self.rules, max_dir_size=limit)
                read_folder(Path(self.inbound_path, seen.name), owner, rules, into=aside)
            kept = str(aside.relative_to(self.coursedir.root))
            self.log.error(f"Its files are set aside in {shown_name(kept)}.")
        except (OSError, Unreadable) as exc:
            shutil.rmtree(aside, ignore_errors=True)
            self.log.error(f"Its files are not set aside: {exc}. It is still in the inbound.")
        folder = seen.folder
        return Receipt(
            student=seen.student,
            folder=seen.name,
            owner=seen.owner,
            decision=Decision.REFUSED,
            received=_iso(folder.received) if folder else "",
            claim=folder.claim if folder else "",
            digest=folder.digest if folder else "",
            reason=seen.problem,
            set_aside=kept,
            collected_at=now,
        )


def _kb(value: float | None) -> int | None:
    """nbgrader's sizes are in kilobytes (of 1000 bytes)."""
    return int(1000 * value) if value else None


def _group_shared(folder: Path) -> None:
    """nbgrader's ``groupshared``: the course's group reads and writes what was collected."""
    for dirpath, _dirnames, filenames in os.walk(folder):
        os.chmod(dirpath, 0o2770)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o660)


class ReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's feedback release, past what a student's side can break, then closed.

    A submission made by hand (not by ``nbgrader submit``) has no ``submission_secret.txt``:
    stock, the release stops there for the whole class. Such a student is left out and
    named (their feedback page is in ``feedback/``, for the instructor to hand over); the
    others get theirs. Then the folder is not listable by students (711: each opens their
    own page by its secret name), and each released page readable (644) whatever the
    instructor's umask."""

    def copy_files(self) -> None:
        left_out = []
        for folder in sorted(Path(p) for p in glob.glob(self.src_path)):
            if not all((folder / f).is_file() for f in ("timestamp.txt", "submission_secret.txt")):
                left_out.append(folder.parent.name)
        if left_out:
            for student in left_out:
                self.log.warning(
                    f"No feedback released for {student}: their submission has no "
                    "submission_secret.txt (it was not made by nbgrader submit). Their feedback "
                    f"is in feedback/{student}/{self.coursedir.assignment_id}/ for you to hand over."
                )
            excluded = [s for s in self.coursedir.student_id_exclude.split(",") if s]
            self.coursedir.student_id_exclude = ",".join(excluded + left_out)
        super().copy_files()
        folder = Path(self.dest_path)
        mode = stat.S_IMODE(folder.stat().st_mode)
        if mode & (stat.S_IROTH | stat.S_IWOTH):
            folder.chmod(mode & ~(stat.S_IROTH | stat.S_IWOTH) | stat.S_IXOTH)
        me = os.getuid()
        for page in folder.glob("*.html"):
            st = page.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_uid == me:
                page.chmod(0o644)
