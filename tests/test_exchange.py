"""The pieces of the classroom's exchange that need no second Unix user: a submission folder
read as hostile (grading/_inbound.py), collect's receipts and the time grading takes from
them (grading/_receipts.py), and a course folder closed to other users (grading/_private.py).
The whole exchange, attacked by real users, is tests/test_classroom_exchange.py."""

from __future__ import annotations

import datetime
import os
import stat
import time
from pathlib import Path

import pytest

from gather_course import GatherCourseError
from gather_course.grading import _inbound
from gather_course.grading._grade import StudentGrade, _time_cells
from gather_course.grading._inbound import Rules, Unreadable, read_folder, shown_name
from gather_course.grading._private import close_course
from gather_course.grading._receipts import (
    Decision,
    Receipt,
    SubmissionTime,
    TimeSource,
    append,
    duration,
    read_receipts,
    receipts_path,
    refused_receipts,
    submission_times,
    time_note,
)

UTC = datetime.timezone.utc
CLAIM = "2026-11-27 10:00:00.000000 UTC"


def _submission(folder: Path, work: str = "{}", claim: str = CLAIM, secret: str = "s1") -> Path:
    folder.mkdir(parents=True)
    (folder / "basics.ipynb").write_text(work)
    (folder / "timestamp.txt").write_text(claim)
    (folder / "submission_secret.txt").write_text(secret)
    return folder


# --- a folder read as hostile ---------------------------------------------------------------


def test_a_folder_is_read_without_following_links_fifos_or_opening_devices(tmp_path):
    secret = tmp_path / "solutions.ipynb"
    secret.write_text("the instructor's answers")
    folder = _submission(tmp_path / "in")
    (folder / "linked.ipynb").symlink_to(secret)
    (folder / "linked_dir").symlink_to(tmp_path)
    os.mkfifo(folder / "pipe")  # opening it for reading would block the whole collect
    into = tmp_path / "out"
    found = read_folder(folder, into=into)
    assert sorted(p.name for p in into.iterdir()) == [
        "basics.ipynb",
        "submission_secret.txt",
        "timestamp.txt",
    ]
    assert found.skipped == [
        "linked.ipynb: a symbolic link (not followed)",
        "linked_dir: a symbolic link (not followed)",
        "pipe: not a file or a folder (a FIFO, socket or device)",
    ]
    assert found.claim == CLAIM and found.files == 3
    assert (into / "basics.ipynb").stat().st_mtime_ns == (
        folder / "basics.ipynb"
    ).stat().st_mtime_ns


def test_names_a_student_chose_reach_no_terminal_or_log_as_control_characters(tmp_path):
    folder = _submission(tmp_path / "in")
    (folder / "evil\n\x1b[2J").symlink_to("/etc/passwd")  # a line break, a clear-screen
    assert read_folder(folder).skipped == ["evil\\n\\x1b[2J: a symbolic link (not followed)"]
    assert shown_name("ana+basics+\r\x1b]0;x\x07") == "ana+basics+\\r\\x1b]0;x\\x07"
    assert shown_name("学生 ana+basics") == "学生 ana+basics"  # printable names stay as written


def test_a_claim_is_never_a_csv_cell_as_the_student_wrote_it():
    received = datetime.datetime(2026, 11, 27, 11, 0, tzinfo=UTC)
    formula = '=HYPERLINK("http://x","late?")'
    forged = SubmissionTime(received, TimeSource.RECEIVED, formula)
    cells = _time_cells(StudentGrade("ben", True, time=forged))
    assert cells[4] == 'not a time: \'=HYPERLINK("http://x","late?")\''
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)
    honest = SubmissionTime(received, TimeSource.RECEIVED, CLAIM)
    assert _time_cells(StudentGrade("ana", True, time=honest))[2:5] == [
        "2026-11-27T11:00:00+00:00",
        "received",
        "2026-11-27T10:00:00+00:00",
    ]


def test_a_folder_that_is_a_link_or_not_a_folder_is_unreadable(tmp_path):
    real = _submission(tmp_path / "real")
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(Unreadable, match="is not a folder one can read"):
        read_folder(tmp_path / "link")
    (tmp_path / "file").write_text("x")
    with pytest.raises(Unreadable, match="is not a folder one can read"):
        read_folder(tmp_path / "file")


def test_entries_another_user_wrote_are_skipped_and_the_folder_must_be_the_students(tmp_path):
    folder = _submission(tmp_path / "in")
    me = os.getuid()
    assert read_folder(folder, owner=me).skipped == []
    with pytest.raises(Unreadable, match=f"belongs to uid {me}, not {me + 1}"):
        read_folder(folder, owner=me + 1)


def test_the_digest_is_the_works_not_nbgraders_files(tmp_path):
    a = read_folder(_submission(tmp_path / "a", claim=CLAIM, secret="s1"))
    b = read_folder(_submission(tmp_path / "b", claim="2030-01-01 00:00:00 UTC", secret="s2"))
    c = read_folder(_submission(tmp_path / "c", work='{"cells": []}'))
    assert a.digest == b.digest  # the same work, submitted twice
    assert a.digest != c.digest
    (tmp_path / "a" / "sub").mkdir()
    (tmp_path / "a" / "sub" / "data.txt").write_text("x")
    assert read_folder(tmp_path / "a").digest != a.digest  # a file in a subfolder is work too


def test_the_received_time_is_the_latest_change_and_an_edit_only_moves_it_later(tmp_path):
    folder = _submission(tmp_path / "in")
    first = read_folder(folder).received_ns
    past = time.time() - 7200
    os.utime(folder / "basics.ipynb", (past, past))  # mtime set back: the ctime moves on
    os.utime(folder, (past, past))
    later = read_folder(folder).received_ns
    assert later >= first
    assert later >= (folder / "basics.ipynb").stat().st_ctime_ns
    assert read_folder(folder).received.tzinfo is UTC


def test_nbgraders_collecting_rules_and_the_limits_hold(tmp_path, monkeypatch):
    folder = _submission(tmp_path / "in")
    (folder / ".ipynb_checkpoints").mkdir()
    (folder / ".ipynb_checkpoints" / "x.ipynb").write_text("{}")
    (folder / "big.bin").write_bytes(b"x" * 3000)
    into = tmp_path / "out"
    found = read_folder(
        folder, rules=Rules(ignore=(".ipynb_checkpoints",), max_file_size=2000), into=into
    )
    assert not (into / ".ipynb_checkpoints").exists() and not (into / "big.bin").exists()
    assert found.skipped == ["big.bin: larger than 2000 bytes (CourseDirectory.max_file_size)"]
    only = read_folder(folder, rules=Rules(include=("*.ipynb",)))
    assert only.files == 2  # basics.ipynb and the checkpoint: timestamp.txt is not included
    with pytest.raises(Unreadable, match="larger than 100 bytes in all"):
        read_folder(folder, rules=Rules(max_dir_size=100))
    monkeypatch.setattr(_inbound, "MAX_ENTRIES", 3)
    with pytest.raises(Unreadable, match="more than 3 files and folders"):
        read_folder(folder)
    monkeypatch.setattr(_inbound, "MAX_ENTRIES", 10_000)
    monkeypatch.setattr(_inbound, "MAX_DEPTH", 1)
    deep = tmp_path / "deep" / "a" / "b" / "c"
    deep.mkdir(parents=True)
    with pytest.raises(Unreadable, match="nested deeper than 1"):
        read_folder(tmp_path / "deep")


# --- receipts and the time grading takes -----------------------------------------------------


def _course(tmp_path: Path, students: dict[str, str]) -> Path:
    root = tmp_path / "course"
    for student, work in students.items():
        _submission(root / "submitted" / student / "basics", work=work)
    return root


def _receipt(root: Path, student: str, received: datetime.datetime, **kw) -> Receipt:
    digest = read_folder(root / "submitted" / student / "basics").digest
    fields = dict(
        student=student,
        folder=f"{student}+basics+x",
        owner=student,
        decision=Decision.COLLECTED,
        received=received.isoformat(),
        first_received=received.isoformat(),
        claim=CLAIM,
        digest=digest,
    )
    return Receipt(**{**fields, **kw})


def test_the_time_is_the_first_receipt_of_the_work_in_submitted(tmp_path):
    root = _course(tmp_path, {"ana": "{}", "ben": '{"x": 1}', "cai": "{}"})
    t0 = datetime.datetime(2026, 11, 27, 10, 0, 30, tzinfo=UTC)
    append(
        root,
        "basics",
        [
            _receipt(root, "ana", t0 + datetime.timedelta(hours=2)),  # a resubmission, later
            _receipt(root, "ana", t0),  # the same work, first received here
            _receipt(root, "ben", t0, digest="other work"),  # not what is in submitted/ now
            _receipt(root, "cai", t0 + datetime.timedelta(hours=3), decision=Decision.REFUSED),
        ],
    )
    times = submission_times(root, "basics", ["ana", "ben", "cai"], read_receipts(root, "basics"))
    assert times["ana"] == SubmissionTime(t0, TimeSource.RECEIVED, CLAIM)
    assert times["ben"].source is TimeSource.CLAIMED  # no receipt of this work: its claim
    assert times["ben"].time == datetime.datetime(2026, 11, 27, 10, 0, tzinfo=UTC)
    assert times["cai"].source is TimeSource.CLAIMED  # a refused folder is no receipt
    assert [r.student for r in refused_receipts(read_receipts(root, "basics"))] == ["cai"]
    for t in times.values():  # as the verdict log keeps it for the class report
        assert SubmissionTime.from_plain(t.plain()) == t
    assert SubmissionTime.from_plain({}) == SubmissionTime(None, TimeSource.CLAIMED)
    assert stat.S_IMODE(receipts_path(root, "basics").stat().st_mode) == 0o600


def test_a_claim_earlier_than_received_by_more_than_a_minute_is_flagged(tmp_path):
    received = datetime.datetime(2026, 11, 27, 11, 2, 3, tzinfo=UTC)
    forged = SubmissionTime(received, TimeSource.RECEIVED, CLAIM)
    assert forged.claim_early_by == datetime.timedelta(hours=1, minutes=2, seconds=3)
    assert time_note(forged) == (
        "claims 2026-11-27 10:00:00 UTC (timestamp.txt and the folder's name, which the "
        "student writes), 1 h 2 min before the exchange received it at 2026-11-27 11:02:03 "
        "UTC: graded as received"
    )
    honest = SubmissionTime(
        datetime.datetime(2026, 11, 27, 10, 0, 59, tzinfo=UTC), TimeSource.RECEIVED, CLAIM
    )
    assert honest.claim_early_by is None and time_note(honest) == ""  # within the minute
    later = SubmissionTime(
        datetime.datetime(2026, 11, 27, 9, 0, tzinfo=UTC), TimeSource.RECEIVED, CLAIM
    )
    assert later.claim_early_by is None  # a claim later than received costs only its author
    garbage = SubmissionTime(received, TimeSource.RECEIVED, "yesterday-ish")
    assert garbage.claim_early_by is not None
    assert time_note(garbage).startswith(
        "claims 'yesterday-ish' (timestamp.txt), which is not a time"
    )
    claimed = SubmissionTime(None, TimeSource.CLAIMED, CLAIM)
    assert "no receipt of the course's collector matches" in time_note(claimed)


def test_durations_read_as_a_person_says_them():
    assert [duration(s) for s in (4.2, 65, 3725, 90061)] == [
        "4 s",
        "1 min 5 s",
        "1 h 2 min",
        "25 h 1 min",
    ]


def test_a_receipts_file_that_is_not_ours_is_named_with_its_line(tmp_path):
    root = tmp_path / "course"
    path = receipts_path(root, "basics")
    path.parent.mkdir(parents=True)
    path.write_text('{"student": "ana"}\nnot json\n')
    with pytest.raises(GatherCourseError, match=r"receipts-basics.jsonl, line 1, is not a receipt"):
        read_receipts(root, "basics")


# --- a course folder closed --------------------------------------------------------------------


def test_a_course_folder_open_to_others_is_closed_and_the_line_says_what_it_holds(tmp_path):
    course = tmp_path / "course"
    course.mkdir(mode=0o755)
    course.chmod(0o755)
    line = close_course(course)
    assert stat.S_IMODE(course.stat().st_mode) == 0o700
    assert line.startswith(f"closed {course} to other users (it was mode 755, now 700)")
    assert "submissions, gradebook and grades" in line
    assert close_course(course) == ""  # closed already: nothing to say
    (course / "class.json").write_text("{}")
    course.chmod(0o750)
    assert "the class's key (class.json) and answers" in close_course(course)


def test_a_course_whose_staff_share_it_keeps_its_group(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.groupshared = True\n"
    )
    course.chmod(0o2775)
    assert close_course(course)
    assert stat.S_IMODE(course.stat().st_mode) == 0o2770  # others out, the group in


def test_a_course_config_that_never_names_groupshared_is_not_run_to_close_it(tmp_path):
    """Closing the folder runs nbgrader_config.py (it imports nbgrader, 0.6 s before grading
    starts) only where the file could set groupshared: here it is never run, and the group
    is closed too, the safe side."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        "raise SystemExit('run')\nc = get_config()\nc.Exchange.timezone = 'UTC'\n"
    )
    course.chmod(0o2775)
    assert close_course(course)
    assert stat.S_IMODE(course.stat().st_mode) == 0o2700
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\nraise SystemExit('run')\nload_subconfig('staff_config.py')\n"
    )
    course.chmod(0o2775)
    with pytest.raises(SystemExit):
        close_course(course)


def test_a_time_as_nbgrader_writes_it_is_read_as_nbgrader_reads_it():
    """``parse_time`` reads nbgrader's own "... UTC" without nbgrader's import: the same
    moment as nbgrader's ``parse_utc``."""
    import datetime

    from nbgrader.utils import parse_utc

    from gather_course.grading._receipts import parse_time

    for text in (
        "2026-11-27 10:00:00.123456 UTC",
        "2026-11-27 10:00:00 UTC",
    ):
        theirs = parse_utc(text).replace(tzinfo=datetime.timezone.utc)
        assert parse_time(text) == theirs, text
    assert parse_time("2026-11-27 10:00:00+02:00 UTC") is None  # (nbgrader's cannot either)
    assert parse_time("not a time") is None
