"""The classroom's exchange on a shared machine, attacked by a student with a shell.

Real Unix users (tests/classroom.py): an instructor (not root) and six students, each their
own user, with the exchange and the course set up as docs/jupyterhub.md says. The students
fetch and submit with nbgrader's own commands and the course's ``Submit``; the instructor
releases, collects with ``nbgrader collect`` (the course's ``Collect``, named in
``nbgrader_config.py``) and grades with ``gather-course grade``. Between the on-time and
the late submissions, the assignment's due date passes.

- ana hands in right answers on time;
- ben submits wrong answers in ana's name (``nbgrader submit --student=...``), then hands
  in his own right answers late, with ``timestamp.txt``, the folder's name and its files'
  times set an hour before the due date;
- cai hands in right answers late, honestly;
- dan hands in right answers on time, and the same again after the due date;
- eve hands in a folder made by hand, on time: her notebook a link to the instructor's
  solutions, a FIFO, a link to /etc/shadow; and a folder of 10,001 files;
- fay hands in wrong answers on time, then rewrites her submitted notebook in the exchange
  with right answers after the due date;
- gil prepares a submission folder in his home before the due date (right answers, an
  honest claim) and moves it into the exchange after it (a rename keeps the files' change
  times; the folder's own moves).

Then ben, with a shell of his own, tries to read, list, change, rename or delete what is
not his. Every attempt must fail with the system's refusal (each is checked to be about a
path that exists), and the honest students must keep their marks.
"""

from __future__ import annotations

import csv
import datetime
import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from gather_course import exercise, exercise_ids
from tests.classroom import (
    COURSE_ID,
    Campus,
    campus,
    make_course,
    make_exchange,
    student_config,
    student_env,
)
from tests.helpers import fill_cells

pytestmark = pytest.mark.classroom  # README: python -m pytest -m classroom tests
STUDENTS = ("ana", "ben", "cai", "dan", "eve", "fay", "gil")


@dataclass
class Room:
    campus: Campus
    env: Path
    exchange: Path
    course: Path
    config: Path  # the students' Jupyter configuration folder
    teach: str
    users: dict[str, str]  # role -> Unix user name
    due: datetime.datetime
    out: dict[str, str] = field(default_factory=dict)  # what each step printed
    folders: dict[str, str] = field(default_factory=dict)  # role -> its inbound folder's name

    @property
    def inbound(self) -> Path:
        return self.exchange / COURSE_ID / "inbound"

    def student(self, role: str, *args: str, check: bool = True) -> str:
        """``nbgrader ARGS`` as a student, in their home."""
        done = self.campus.run(
            self.users[role],
            self.env / "bin" / "nbgrader",
            *args,
            env={
                "JUPYTER_CONFIG_DIR": str(self.config),
                "PATH": f"{self.env / 'bin'}:/usr/bin:/bin",
            },
        )
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    def instructor(self, *argv: str, check: bool = True) -> str:
        """A command of the instructor's environment, as the instructor, in the course."""
        done = self.campus.run(
            self.teach,
            self.env / "bin" / argv[0],
            *argv[1:],
            env={"PATH": f"{self.env / 'bin'}:/usr/bin:/bin"},
            cwd=self.course,
            timeout=600,
        )
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    def shell(self, role: str, script: str):
        return self.campus.shell(self.users.get(role, role), script)


def _answers(right: bool) -> dict[str, str]:
    found = {}
    for qid in (q for q in exercise_ids() if q.startswith("basics.")):
        q = exercise(qid)
        found[q.name] = (
            q.solution_code
            if right
            else f"def {q.signature}:\n    import torch\n    return torch.zeros(1)\n"
        )
    return found


def _answer(room: Room, role: str, right: bool) -> None:
    """The student's answers in their fetched notebook (written into their own file)."""
    path = room.campus.home(room.users[role]) / "basics" / "basics.ipynb"
    nb = fill_cells(nbformat.read(path, 4), _answers(right))
    nbformat.write(nb, path)  # (root writes it; the file stays the student's)


def _submitted_as(out: str) -> str:
    """The inbound folder's name that ``nbgrader submit`` printed."""
    line = next(x for x in out.splitlines() if "Destination:" in x)
    return Path(line.split("Destination:", 1)[1].strip()).name


def _forge(room: Room, role: str, claim: str, script_after: str = "") -> str:
    """A submission folder made by hand in the inbound, claiming ``claim`` as its time."""
    name = f"{room.users[role]}+basics+{claim}+forgedforged"
    folder = room.inbound / name
    done = room.shell(
        role,
        f'set -e; D="{folder}"; mkdir "$D"; cp ~/basics/basics.ipynb "$D/"; '
        f'printf "%s" "{claim}" > "$D/timestamp.txt"; touch -d "{claim}" "$D"/* "$D"; {script_after}',
    )
    assert done.returncode == 0, done.stderr
    return name


@pytest.fixture(scope="module")
def room():
    with campus() as users:
        env = student_env(users.base / "python")
        exchange = make_exchange(users.base)
        teach = users.add("teach")
        course = make_course(
            users.base,
            exchange,
            owner=teach,
            extra='c.LateSubmissionPlugin.penalty_method = "zero"\n',
        )
        config = student_config(users.base / "jupyter", exchange)
        r = Room(
            users, env, exchange, course, config, teach, {s: users.add(s) for s in STUDENTS}, None
        )
        r.out["release"] = r.instructor("nbgrader", "release_assignment", "basics")
        for role in STUDENTS:
            r.student(role, "fetch_assignment", "basics")
        on_time = datetime.datetime.now(datetime.timezone.utc)
        stamp = on_time.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        # --- before the due date
        _answer(r, "ana", right=True)
        r.folders["ana"] = _submitted_as(r.student("ana", "submit", "basics"))
        _answer(r, "ben", right=False)
        r.out["ben as ana"] = r.student("ben", "submit", "basics", f"--student={r.users['ana']}")
        _answer(r, "dan", right=True)
        r.folders["dan"] = _submitted_as(r.student("dan", "submit", "basics"))
        _answer(r, "fay", right=False)
        r.folders["fay"] = _submitted_as(r.student("fay", "submit", "basics"))
        solutions = course / "solutions" / "basics" / "basics.ipynb"
        eve = f"{r.users['eve']}+basics+{stamp}+handmadeeve1"
        done = r.shell(
            "eve",
            f'set -e; D="{r.inbound / eve}"; mkdir "$D"; ln -s "{solutions}" "$D/basics.ipynb"; '
            f'mkfifo "$D/pipe"; ln -s /etc/shadow "$D/shadow"; printf "%s" "{stamp}" > "$D/timestamp.txt"; '
            f'F="{r.inbound}/{r.users["eve"]}+basics+{stamp}+flood"; mkdir "$F"; '
            'for i in $(seq 0 10000); do : > "$F/$i"; done',
        )
        assert done.returncode == 0, done.stderr
        r.folders["eve"] = eve
        _answer(r, "gil", right=True)
        r.folders["gil"] = f"{r.users['gil']}+basics+{stamp}+preparedgil1"
        done = r.shell(
            "gil",
            f'set -e; D=~/"{r.folders["gil"]}"; mkdir "$D"; cp ~/basics/basics.ipynb "$D/"; '
            f'printf "%s" "{stamp}" > "$D/timestamp.txt"',
        )
        assert done.returncode == 0, done.stderr
        time.sleep(1.2)
        r.due = datetime.datetime.now(datetime.timezone.utc)
        time.sleep(1.2)
        r.instructor(
            "nbgrader", "db", "assignment", "add", "basics", f"--duedate={r.due.isoformat()}"
        )
        # --- after the due date
        forged = (r.due - datetime.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        _answer(r, "ben", right=True)
        r.folders["ben"] = _forge(r, "ben", forged)
        _answer(r, "cai", right=True)
        r.folders["cai"] = _submitted_as(r.student("cai", "submit", "basics"))
        r.student("dan", "submit", "basics")  # the same work again, after the due date
        _answer(r, "fay", right=True)
        fay = r.shell(
            "fay", f'cp ~/basics/basics.ipynb "{r.inbound / r.folders["fay"]}/basics.ipynb"'
        )
        assert fay.returncode == 0, fay.stderr
        gil = r.shell("gil", f'mv ~/"{r.folders["gil"]}" "{r.inbound}/"')
        assert gil.returncode == 0, gil.stderr
        # --- the instructor's week
        r.out["collect"] = r.instructor("nbgrader", "collect", "basics")
        assert r.out["collect"].count("Collecting submission") == len(STUDENTS), r.out["collect"]
        r.out["grade"] = r.instructor(
            "gather-course",
            "grade",
            "basics",
            "--course",
            str(course),
            "--require-sandbox",
            "--report",
        )
        r.out["feedback"] = r.instructor("nbgrader", "generate_feedback", "basics")
        r.out["release feedback"] = r.instructor("nbgrader", "release_feedback", "basics")
        yield r


@pytest.fixture(scope="module")
def grades(room) -> dict[str, dict[str, str]]:
    with open(room.course / "grades-basics.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def _refused(room: Room, role: str, script: str, target: Path) -> None:
    """``script`` as ``role`` fails with the system's refusal, about ``target``, which exists."""
    room.campus.refused(room.users[role], script, target)


# --- marks ----------------------------------------------------------------------------------


def test_the_honest_students_keep_their_marks(room, grades):
    u = room.users
    full = grades[u["ana"]]["max_score"]
    assert float(full) == 8
    for role in ("ana", "dan"):  # on time; dan's identical resubmission after the due date
        row = grades[u[role]]
        assert (row["score"], row["late_penalty"], row["seconds_late"]) == (full, "0", "0"), row
        assert row["time_source"] == "received" and row["time_note"] == "", row


def test_a_submission_in_a_classmates_name_is_refused_and_set_aside(room):
    ben, ana = room.users["ben"], room.users["ana"]
    assert "Refused" in room.out["collect"] and f"but {ben} wrote it" in room.out["collect"]
    folder = next(room.course.glob(f"refused/basics/{ana}+basics+*"))
    assert (folder / "basics.ipynb").is_file()  # ben's wrong answers, for the instructor to see
    assert f"Refused at collection: {folder.name}" in room.out["grade"]
    # what ana's name got graded is ana's own work: her right answers
    submitted = nbformat.read(room.course / "submitted" / ana / "basics" / "basics.ipynb", 4)
    assert "torch.zeros(1)" not in json.dumps(submitted)


def test_a_forged_time_is_not_believed_and_is_flagged(room, grades):
    row = grades[room.users["ben"]]
    assert float(row["seconds_late"]) > 0 and row["score"] == "0" and row["late_penalty"] == "8"
    assert row["time_source"] == "received"
    assert "before the exchange received it" in row["time_note"], row
    forged = (room.due - datetime.timedelta(hours=1)).replace(microsecond=0)
    assert row["claimed_at"] == forged.isoformat()  # the claim, kept as a time
    assert "before a late penalty of 8" in room.out["grade"]
    assert "before the exchange received it" in room.out["grade"]
    log = [json.loads(x) for x in (room.course / "grading-log.jsonl").read_text().splitlines()]
    assert room.users["ben"] in log[-1]["claims_earlier_than_received"]
    report = (room.course / "grades-basics-report.html").read_text(encoding="utf-8")
    assert "before the exchange received it" in report and "Refused at collection" in report


def test_late_hand_ins_get_the_late_penalty_whether_new_edited_in_place_or_moved_in(room, grades):
    # an honest late hand-in; an on-time one rewritten later; one made early and moved in late
    for role in ("cai", "fay", "gil"):
        row = grades[room.users[role]]
        assert float(row["seconds_late"]) > 0, row
        assert (row["score"], row["late_penalty"]) == ("0", "8"), row  # nbgrader's "zero"
        assert row["time_note"] == "", row  # no claim to flag: their own times are honest
    assert "before a late penalty of 8" in room.out["grade"]


def test_links_fifos_and_floods_in_a_submission_are_never_followed(room, grades):
    eve = room.users["eve"]
    submitted = room.course / "submitted" / eve / "basics"
    assert sorted(p.name for p in submitted.iterdir()) == ["timestamp.txt"]  # nothing followed
    assert grades[eve]["score"] == "0"
    receipts = [
        json.loads(x)
        for x in (room.course / ".grading" / "receipts-basics.jsonl").read_text().splitlines()
    ]
    mine = next(r for r in receipts if r["folder"] == room.folders["eve"])
    assert any("basics.ipynb: a symbolic link" in s for s in mine["skipped"]), mine
    assert any("pipe: not a file or a folder" in s for s in mine["skipped"]), mine
    flood = next(r for r in receipts if r["folder"].endswith("+flood"))
    assert flood["decision"] == "refused" and "more than 10000" in flood["reason"]
    assert flood["set_aside"] == ""  # not copied into the course: its disk is not the student's
    assert "Its files are not set aside: more than 10000 files" in room.out["collect"]


# --- ben's shell --------------------------------------------------------------------------


def test_a_student_cannot_list_the_inbound_or_read_a_classmates_submission(room):
    ana = room.inbound / room.folders["ana"]  # the name, as if ben had learned it
    _refused(room, "ben", f'ls "{room.inbound}"', room.inbound)
    _refused(room, "ben", f'cat "{ana}/basics.ipynb"', ana / "basics.ipynb")
    _refused(room, "ben", f'ls "{ana}"', ana)


def test_a_student_cannot_change_rename_or_delete_a_classmates_submission(room):
    ana = room.inbound / room.folders["ana"]
    _refused(room, "ben", f'echo x > "{ana}/basics.ipynb"', ana / "basics.ipynb")
    _refused(room, "ben", f'echo x > "{ana}/extra.py"', ana)
    _refused(room, "ben", f'rm -rf "{ana}"', ana)
    _refused(room, "ben", f'mv "{ana}" "{room.inbound}/moved"', ana)  # the sticky bit


def test_a_student_cannot_take_over_the_course_in_the_exchange(room):
    course = room.exchange / COURSE_ID
    _refused(room, "ben", f'mv "{course}" "{room.exchange}/gone"', course)
    outbound = course / "outbound" / "basics"
    _refused(room, "ben", f'echo x > "{outbound}/basics.ipynb"', outbound / "basics.ipynb")
    _refused(room, "ben", f'mkdir "{outbound}/mine"', outbound)
    feedback = course / "feedback"
    _refused(room, "ben", f'ls "{feedback}"', feedback)
    _refused(room, "ben", f'echo x > "{feedback}/forged.html"', feedback)


def test_a_course_squatted_before_its_release_is_refused_by_the_release(room):
    """A student who makes the course's folder in the exchange first owns it: the release
    stops, naming it, instead of releasing into a folder the student can read."""
    squat = room.exchange / "gather-999"
    done = room.shell("ben", f'mkdir -p "{squat}/inbound" && chmod 777 "{squat}"')
    assert done.returncode == 0, done.stderr
    out = room.instructor(
        "nbgrader", "release_assignment", "basics", "--course", "gather-999", check=False
    )
    assert "You don't own the directory" in out, out
    assert not (squat / "outbound").exists()


def test_a_student_cannot_read_the_course_folder_its_gradebook_or_a_classmates_home(room):
    assert "closed" in room.out["grade"] and "to other users" in room.out["grade"]
    for path in [
        room.course / "solutions" / "basics" / "basics.ipynb",
        room.course / "gradebook.db",
        room.course / "grades-basics.csv",
        room.course / ".grading" / "receipts-basics.jsonl",
    ]:
        _refused(room, "ben", f'cat "{path}"', path)
    _refused(room, "ben", f'ls "{room.course}"', room.course)
    ana = room.campus.home(room.users["ana"])
    _refused(room, "ben", f'ls "{ana}"', ana)
    _refused(room, "ben", f'cat "{ana}/basics/basics.ipynb"', ana / "basics" / "basics.ipynb")


def test_a_submission_made_by_hand_does_not_stop_the_classes_feedback(room):
    ben = room.users["ben"]  # his late folder, made by hand, has no submission_secret.txt
    assert f"No feedback released for {ben}" in room.out["release feedback"]
    assert (room.course / "feedback" / ben / "basics" / "basics.html").is_file()
    # ben's, eve's and gil's folders were made by hand: none holds a submission secret
    assert room.out["release feedback"].count("Feedback released to") == len(STUDENTS) - 3


def test_a_student_fetches_their_own_feedback_and_no_one_elses(room):
    out = room.student("ana", "fetch_feedback", "basics")
    pages = list(
        (room.campus.home(room.users["ana"]) / "basics" / "feedback").glob("*/basics.html")
    )
    assert pages, out
    assert "Correct (basics." in pages[0].read_text(encoding="utf-8")
    released = sorted((room.exchange / COURSE_ID / "feedback").glob("*.html"))
    assert released, room.out["release feedback"]
    for page in released:
        _refused(room, "ben", f'ls "{page.parent}"', page.parent)  # the names are the secret


def test_the_grading_cluster_refuses_a_student_and_its_certificates_are_not_theirs(room):
    """The instructor's TLS cluster (the class's certificates) on the loopback: ben can
    read none of its keys, and his client, without a certificate or with one of his own
    CA's, runs nothing on it, where the instructor's does."""
    srv = room.campus.base / "srv"  # the instructor's, open to all: the folder's own mode counts
    srv.mkdir(mode=0o755)
    shutil.chown(srv, room.teach, room.teach)
    certs = srv / "certs"
    room.instructor("gather-course", "certificates", str(certs))
    key = certs / "client-key.pem"
    _refused(room, "ben", f'cat "{key}"', key)
    _refused(room, "ben", f'ls "{certs}"', certs)
    env = [
        "env",
        "-i",
        f"HOME={room.campus.home(room.teach)}",
        f"PATH={room.env / 'bin'}:/usr/bin:/bin",
    ]
    cluster = subprocess.Popen(
        ["runuser", "-u", room.teach, "--", *env, str(room.env / "bin" / "python"), "-c",
         _CLUSTER.replace("CERTS", str(certs))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        cwd=room.campus.home(room.teach),
    )  # fmt: skip
    try:
        first, said = _first_line(cluster, "INSTRUCTOR RAN ", timeout=240)
        assert first, f"the instructor's cluster did not start in 240 s:\n{said[-3000:]}"
        address = first.split()[-1]
        assert address.startswith("tls://127.0.0.1:")
        for how, extra in [("no certificate", ""), ("his own CA's", _OWN_CA)]:
            done = room.campus.run(
                room.users["ben"],
                room.env / "bin" / "python",
                "-c",
                _ATTACK.format(address=address, extra=extra),
                timeout=120,
            )
            assert "REFUSED" in done.stdout and "RAN A TASK" not in done.stdout, (
                how,
                done.stdout + done.stderr[-2000:],
            )
    finally:
        cluster.stdin.close()
        try:
            cluster.wait(60)
        except subprocess.TimeoutExpired:
            cluster.kill()


def _first_line(proc: subprocess.Popen, start: str, timeout: float) -> tuple[str, str]:
    """The first line of ``proc``'s output that begins with ``start`` (Dask may warn first:
    a slow disk, a port in use), and all it said until then; ``("", said)`` after ``timeout``
    seconds, never waiting longer (a reader thread: the process keeps its pipe open)."""
    import queue
    import threading

    lines: queue.Queue = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in iter(proc.stdout.readline, "")], daemon=True
    ).start()
    said, deadline = "", time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        said += line
        if line.startswith(start):
            return line, said
    return "", said


# The instructor's cluster: TLS with the class's certificates on the loopback; it runs a task
# for the instructor, prints its address and waits until its input is closed.
_CLUSTER = """
import sys
from distributed import Client, LocalCluster
from distributed.security import Security

if __name__ == "__main__":
    sec = Security(tls_ca_file="CERTS/ca.pem", tls_client_cert="CERTS/client.pem",
                   tls_client_key="CERTS/client-key.pem", tls_scheduler_cert="CERTS/scheduler.pem",
                   tls_scheduler_key="CERTS/scheduler-key.pem", tls_worker_cert="CERTS/worker.pem",
                   tls_worker_key="CERTS/worker-key.pem", require_encryption=True)
    with LocalCluster(n_workers=1, processes=True, protocol="tls", host="127.0.0.1",
                      security=sec, dashboard_address=None) as cluster:
        with Client(cluster, security=sec) as client:
            assert client.submit(sum, [1, 2]).result() == 3
            print("INSTRUCTOR RAN", cluster.scheduler_address, flush=True)
            sys.stdin.read()
"""
# A student's client against it: no certificate, or (extra) one from a CA of their own.
_ATTACK = """
from distributed import Client
sec = None
{extra}
try:
    kwargs = {{"security": sec}} if sec else {{}}
    with Client("{address}", timeout=5, **kwargs) as c:
        c.submit(sum, [1]).result(timeout=5)
except Exception as exc:
    print("REFUSED", type(exc).__name__)
else:
    print("RAN A TASK")
"""
_OWN_CA = "from distributed.security import Security\nsec = Security.temporary()"
