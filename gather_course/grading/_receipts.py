"""What collecting received, kept for grading: each submission's trusted time.

The course's collector (:class:`.exchange.Collect`, which ``nbgrader collect`` and the
formgrader use through ``nbgrader_config.py``) writes one line per submission folder it
looked at into ``.grading/receipts-<assignment>.jsonl``: who it claims to be from, who wrote
it, when the exchange received it (the kernel's change times, :mod:`._inbound`), the
student's claim (``timestamp.txt``), the digest of its work, and whether it was collected
or refused (and why). The file is appended to, never rewritten: every collect is kept.

Grading asks :func:`submission_times`: a student's submission time is when the exchange
*first* received the work now in ``submitted/<student>/<assignment>/`` (the same digest), so
a resubmission identical to an earlier one keeps the earlier time (nbgrader #1171). Where no
receipt matches (collected without the course's collector, or changed since), the time is
the student's claim, and grading says so. The claim is never the time where a receipt is.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import GatherCourseError
from .._i18n import N_
from ._inbound import Unreadable, read_folder
from ._journal import FOLDER
from ._private import private_file

# A claim earlier than the received time by more than this is flagged (a submission of a
# large folder, or a file system's clock a little off, takes seconds, not minutes).
TOLERANCE = datetime.timedelta(minutes=1)


def receipts_path(root: Path, assignment: str) -> Path:
    """``.grading/receipts-<assignment>.jsonl`` under the course root."""
    return root / FOLDER / f"receipts-{assignment}.jsonl"


class Decision(str, enum.Enum):
    """What collecting did with a submission folder."""

    COLLECTED = "collected"  # its work is in submitted/<student>/<assignment>/
    REFUSED = "refused"  # never collected as the student's (see ``reason``)


@dataclass(frozen=True)
class Receipt:
    """One submission folder as collecting found it. Times are ISO 8601, in UTC."""

    student: str  # the id its folder name claims
    folder: str  # its name in the exchange's inbound
    owner: str  # the Unix user who wrote it
    decision: Decision
    received: str = ""  # when the exchange last saw it change (the kernel's change time)
    first_received: str = ""  # the earliest received of this student's folders of the same work
    claim: str = ""  # timestamp.txt, as the student's side wrote it
    digest: str = ""  # of its work (not nbgrader's timestamp.txt and submission_secret.txt)
    reason: str = ""  # why it was refused
    skipped: tuple[str, ...] = ()  # entries never opened (links, FIFOs, another's files)
    set_aside: str = ""  # where a refused folder's files were copied, for the instructor
    collected_at: str = ""

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data["decision"], data["skipped"] = self.decision.value, list(self.skipped)
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> Receipt:
        data = json.loads(line)
        known = {f.name for f in dataclasses.fields(cls)}
        data = {k: v for k, v in data.items() if k in known}
        data["decision"] = Decision(data["decision"])
        data["skipped"] = tuple(data.get("skipped", ()))
        return cls(**data)


def append(root: Path, assignment: str, receipts: list[Receipt]) -> Path:
    """Add ``receipts`` to the assignment's file (made readable by its owner only)."""
    path = receipts_path(root, assignment)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    with open(path, "a", encoding="utf-8", opener=private_file) as f:
        f.writelines(r.to_json() + "\n" for r in receipts)
    return path


def read_receipts(root: Path, assignment: str) -> list[Receipt]:
    """Every receipt of ``assignment``, oldest first (``[]`` where nothing was collected by
    the course's collector)."""
    path = receipts_path(root, assignment)
    if not path.is_file():
        return []
    found = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            found.append(Receipt.from_json(line))
        except (ValueError, KeyError, TypeError) as exc:
            raise GatherCourseError(
                f"{path}, line {n}, is not a receipt the course's collector wrote ({exc}): "
                "expected one JSON object per line. Move the file away and collect again "
                "(`nbgrader collect ASSIGNMENT --update`): the exchange still holds the "
                "submissions."
            ) from None
    return found


def parse_time(text: str) -> datetime.datetime | None:
    """A time as nbgrader writes it (``2026-11-27 10:00:00.123456 UTC``) or ISO 8601, in
    UTC; None where it is not one (a student's side can write anything)."""
    if not text:
        return None
    try:  # nbgrader's own "... UTC" read here too: its parse_utc imports nbgrader (0.6 s)
        when = datetime.datetime.fromisoformat(text.removesuffix(" UTC"))
        if text.endswith(" UTC") and when.tzinfo is not None:
            raise ValueError(text)  # two zones: nbgrader's parser says what it is
    except ValueError:
        from nbgrader.utils import parse_utc

        try:
            when = parse_utc(text)
        except (ValueError, OverflowError, TypeError, LookupError):
            return None
    if when.tzinfo is None:
        return when.replace(tzinfo=datetime.timezone.utc)
    return when.astimezone(datetime.timezone.utc)


class TimeSource(str, enum.Enum):
    """Where a submission's time comes from."""

    RECEIVED = "received"  # the exchange's receipt: the kernel's time, no student can set it
    CLAIMED = "claimed"  # no receipt matches: the student's timestamp.txt


@dataclass(frozen=True)
class SubmissionTime:
    """A submission's time as grading uses it, beside the student's claim."""

    time: datetime.datetime | None
    source: TimeSource
    claim: str = ""  # timestamp.txt as written

    @property
    def claimed(self) -> datetime.datetime | None:
        return parse_time(self.claim)

    @property
    def claim_early_by(self) -> datetime.timedelta | None:
        """How much earlier than the received time the claim is, where that is more than
        :data:`TOLERANCE` (a claim that cannot be read counts too); else None."""
        if self.source is not TimeSource.RECEIVED or self.time is None or not self.claim:
            return None
        claimed = self.claimed
        if claimed is None:
            return datetime.timedelta.max
        early = self.time - claimed
        return early if early > TOLERANCE else None

    def plain(self) -> dict[str, str]:
        """As the verdict log holds it (:meth:`from_plain` reads it back)."""
        when = self.time.isoformat() if self.time else ""
        return {"time": when, "source": self.source.value, "claim": self.claim}

    @classmethod
    def from_plain(cls, data: dict[str, Any]) -> SubmissionTime:
        """:meth:`plain`'s dict (a missing or empty source: the claim)."""
        source = TimeSource(data.get("source") or TimeSource.CLAIMED.value)
        return cls(parse_time(data.get("time", "")), source, data.get("claim", ""))


def submission_times(
    root: Path, assignment: str, students: list[str], receipts: list[Receipt]
) -> dict[str, SubmissionTime]:
    """Each student's submission time: the first of ``receipts`` (:func:`read`) of the work
    in ``submitted/``, else their claim (:class:`TimeSource`)."""
    first: dict[tuple[str, str], datetime.datetime] = {}
    for r in receipts:
        when = parse_time(r.first_received or r.received)
        if r.decision is Decision.COLLECTED and when is not None:
            key = (r.student, r.digest)
            first[key] = min(when, first.get(key, when))
    times = {}
    for student in students:
        folder = root / "submitted" / student / assignment
        try:
            found = read_folder(folder)
        except Unreadable:
            times[student] = SubmissionTime(None, TimeSource.CLAIMED)
            continue
        when = first.get((student, found.digest))
        source = TimeSource.RECEIVED if when is not None else TimeSource.CLAIMED
        times[student] = SubmissionTime(
            when if when is not None else parse_time(found.claim), source, found.claim
        )
    return times


def refused_receipts(receipts: list[Receipt]) -> list[Receipt]:
    """The submission folders collecting refused, each once (the latest word on it)."""
    latest = {r.folder: r for r in receipts}
    return [r for r in latest.values() if r.decision is Decision.REFUSED]


# The notes on a submission's time: the grades CSV and the terminal say them in English, the
# class report in the class's language (``tr``).
_EARLY = N_(
    "claims {claim} (timestamp.txt and the folder's name, which the student writes), "
    "{early} before the exchange received it at {received}: graded as received"
)
_UNREADABLE = N_(
    "claims {claim!r} (timestamp.txt), which is not a time: graded as received at {received}"
)
_NO_RECEIPT = N_(
    "no receipt of the course's collector matches this submission: its time is the "
    "student's claim (timestamp.txt), which they can set. Collect it again with `nbgrader "
    "collect ASSIGNMENT --update` in the course folder, whose nbgrader_config.py names the "
    "course's collector"
)
_HOURS = N_("{h} h {m} min")
_MINUTES = N_("{m} min {s} s")
_SECONDS = N_("{s} s")


def duration(seconds: float, tr=str) -> str:
    """``3725`` -> ``1 h 2 min``; ``65`` -> ``1 min 5 s``; ``4.2`` -> ``4 s``."""
    s = round(seconds)
    if s >= 3600:
        return tr(_HOURS).format(h=s // 3600, m=s % 3600 // 60)
    if s >= 60:
        return tr(_MINUTES).format(m=s // 60, s=s % 60)
    return tr(_SECONDS).format(s=s)


def utc_text(when: datetime.datetime) -> str:
    """A time as the instructor reads it: ``2026-11-27 11:02:03 UTC``."""
    return when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def time_note(t: SubmissionTime, tr=str) -> str:
    """What an instructor should know of a submission's time ('' when nothing): a claim
    earlier than the received time, or no receipt at all."""
    if t.source is TimeSource.CLAIMED:
        return tr(_NO_RECEIPT)
    early = t.claim_early_by
    if early is None or t.time is None:
        return ""
    claimed = t.claimed
    if claimed is None:
        return tr(_UNREADABLE).format(claim=t.claim, received=utc_text(t.time))
    return tr(_EARLY).format(
        claim=utc_text(claimed),
        early=duration(early.total_seconds(), tr),
        received=utc_text(t.time),
    )
