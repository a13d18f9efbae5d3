"""Grading that no submission can see past: one test per class of attack that once beat it.

1. classmates in memory: a job process never holds another job's data (memory, /proc,
   files, descriptors, environment);
2. a timing input prepared for: the large input does not exist until the cells have run;
3. a loop that fits the limit: the fastest loops we know lose the vectorized constraint;
4. asking the course: the question bank is not in the sandbox, and reaching for it is named;
5. feedback as a channel: a learner's exception message is cut.

Each probe that looks for a leak also finds a planted control, so a probe that cannot see
anything does not pass for a sandbox that hides everything.
"""

from __future__ import annotations

import hashlib
import platform
import secrets
import textwrap
from dataclasses import replace

import pytest
import torch

from gather_course import Tier as T
from gather_course import exercise
from gather_course.grading._jobdata import MESSAGE_CHARS, _value
from gather_course.grading._referee import Plan, Referee
from gather_course.grading._sandbox import SANDBOX, Worker, isolation
from gather_course.questions import Measurement, Timed
from tests.answers import LOOPS, LOOPS_TESTED
from tests.helpers import judge as _judge

IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"
SANDBOXED = isolation().level == SANDBOX


def _raw(referee, cells: list[str], function: str) -> object:
    """What ``function()`` returned in a job process of its own (plain data)."""
    _reply, result = referee._job(cells, function, calls=[{"inputs": []}])
    return _value(result["results"][0].get("value"))


# A search for a secret that the searching process does not hold itself: it knows the
# secret's first 16 characters and the hash of the whole, never the rest.
_SEARCH = textwrap.dedent("""
    import ctypes, hashlib, os, re

    def _hits(data, prefix, digest, n):
        found, at = 0, data.find(prefix)
        while at >= 0:
            if hashlib.sha256(data[at:at + n]).hexdigest() == digest:
                found += 1
            at = data.find(prefix, at + 1)
        return found

    def _memory(prefix, digest, n):
        found = 0
        with open("/proc/self/maps") as f:
            regions = [line.split() for line in f]
        for fields in regions:
            lo, hi = (int(v, 16) for v in fields[0].split("-"))
            if fields[1].startswith("rw") and hi - lo < 2**31:
                found += _hits(ctypes.string_at(lo, hi - lo), prefix, digest, n)
        return found

    def _elsewhere(prefix, digest, n):
        found, me = 0, str(os.getpid())
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or pid == me:
                continue
            for name in ("environ", "cmdline"):
                try:
                    with open(f"/proc/{pid}/{name}", "rb") as f:
                        found += _hits(f.read(), prefix, digest, n)
                except OSError:
                    pass
            try:
                with open(f"/proc/{pid}/maps") as f:
                    regions = [line.split() for line in f]
                with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
                    for fields in regions:
                        lo, hi = (int(v, 16) for v in fields[0].split("-"))
                        if fields[1].startswith("rw") and hi - lo < 2**31:
                            mem.seek(lo)
                            found += _hits(mem.read(hi - lo), prefix, digest, n)
            except (OSError, ValueError, OverflowError):
                pass
        for top in ("/tmp", "/dev/shm", os.path.expanduser("~")):
            for folder, _dirs, files in os.walk(top):
                for name in files:
                    try:
                        with open(os.path.join(folder, name), "rb") as f:
                            found += _hits(f.read(2**24), prefix, digest, n)
                    except OSError:
                        pass
        for fd in range(3, 64):
            try:
                os.fstat(fd)
            except OSError:
                continue
            try:
                os.set_blocking(fd, False)
                found += _hits(os.read(fd, 2**20), prefix, digest, n)
            except OSError:
                pass
        return found
    """)


def _secret() -> tuple[str, bytes, str]:
    text = "classmate-secret-" + secrets.token_hex(16)
    return text, text[:16].encode(), hashlib.sha256(text.encode()).hexdigest()


def test_classmates_in_memory_a_job_process_never_holds_another_jobs_data(referee):
    """Attack 1: the warm worker used to fork each job from a process that had read every
    earlier job, so a submission could read its classmates' answers in its own memory."""
    secret, prefix, digest = _secret()
    classmate = (
        f"SECRET = {secret!r}\nFILE = open('notes.txt', 'w')\n"
        "FILE.write(SECRET * 3); FILE.flush()\n"
        "def pick_per_row(x, cols):\n    return torch.gather(x, 1, cols)\n"
    )
    assert _judge(referee, "basics.pick_per_row", [IMPORTS, classmate]).passed
    control = "control-" + secrets.token_hex(16)
    probe = _SEARCH + textwrap.dedent(f"""
        PLANTED = "".join(reversed({control[::-1]!r}))  # only in this process's memory
        def probe():
            args = ({prefix!r}, {digest!r}, {len(secret)})
            mine = ({control[:16].encode()!r}, {hashlib.sha256(control.encode()).hexdigest()!r},
                    {len(control)})
            return (_memory(*args), _elsewhere(*args), _memory(*mine))
        """)
    leaked_here, leaked_elsewhere, control_found = _raw(referee, [probe], "probe")
    assert control_found >= 1, "the memory search cannot even find its own planted secret"
    assert leaked_here == 0
    if SANDBOXED:  # without one, other processes and files of the machine are not hidden
        assert leaked_elsewhere == 0


def test_the_job_process_starts_from_the_template_not_from_whoever_ran_last(referee):
    """Attack 1, by the side door: a job that changes what it inherited (a module, a global,
    a file) leaves the next job's process as the template made it."""
    taint = (
        "import torch, sys\ntorch.gather = lambda *a, **k: 'tainted'\nsys.tainted = True\n"
        "def pick_per_row(x, cols):\n    return x[:, :1]\n"
    )
    assert not _judge(referee, "basics.pick_per_row", [IMPORTS, taint], secret=None).passed
    clean = (
        "import sys\ndef probe():\n"
        "    return (str(torch.gather).startswith('<built-in'), hasattr(sys, 'tainted'))\n"
    )
    assert _raw(referee, [IMPORTS, clean], "probe") == (True, False)


def test_a_job_process_shares_no_writable_memory_and_holds_only_its_own_descriptors(referee):
    """Attack 1, through what fork shares: a writable shared mapping inherited from the
    template would carry one job's data to the next; so would a descriptor of another job."""
    probe = textwrap.dedent("""
        import os
        def probe():
            with open("/proc/self/maps") as f:
                rows = [line.split() for line in f]
            shared = sum(1 for r in rows if r[1][3] == "s" and "w" in r[1])
            return (shared, len(os.listdir("/proc/self/fd")))
        """)
    shared, fds = _raw(referee, [probe], "probe")
    assert shared == 0
    assert fds == 6  # 0-2 (/dev/null), its channel, its heartbeat, and the listing itself


def test_a_job_process_is_the_supervisors_child_and_the_template_has_none(referee):
    """The template forks each job as its sibling (one fork, ``clone``'s CLONE_PARENT): the
    job's exit status goes to the supervisor, and the template is left with no child."""
    probe = textwrap.dedent("""
        import os
        def probe():
            parent = os.getppid()
            def stat(pid):
                with open("/proc/%d/stat" % pid) as f:
                    return f.read().rsplit(")", 1)[1].split()
            kids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()
                    and int(stat(int(p))[1]) == parent]  # the template: the other child
            with open("/proc/%d/task/%d/children" % (kids[0], kids[0])) as f:
                return (len(kids), f.read().split())
        """)
    if not SANDBOXED:
        pytest.skip("the sandbox's own process table: without one, the machine's")
    assert _raw(referee, [probe], "probe") == (1, [])


def test_fork_beside_makes_a_child_of_the_callers_parent():
    """``_procs.fork_beside`` in a template-like process (one thread, forked from its
    parent): the new process is that parent's child, not the caller's, and Python runs in
    it as after ``os.fork``."""
    import subprocess
    import sys

    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("clone's number is known for x86_64 and aarch64 only")
    code = textwrap.dedent("""
        import os
        from gather_course.grading import _procs
        r, w = os.pipe()
        template = os.fork()  # (one thread in it, as in the worker's template)
        if template == 0:
            try:
                pid = _procs.fork_beside()
                if pid == 0:
                    os._exit(7)
                try:
                    os.waitpid(pid, 0)
                    mine = "the template's"
                except ChildProcessError:
                    mine = "not the template's"
                os.write(w, f"{pid} {mine}".encode())
            finally:
                os._exit(0)
        os.close(w)
        os.waitpid(template, 0)
        pid, mine = os.read(r, 100).decode().split(" ", 1)
        _, status = os.waitpid(int(pid), 0)  # ours: we read its exit status
        print(mine, os.WEXITSTATUS(status))
        """)
    said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert said.stdout.strip() == "not the template's 7", said.stdout + said.stderr[-2000:]


def test_a_timing_input_prepared_for_at_the_top_of_a_cell_is_not_the_one_timed(referee):
    """Attack 2: the timing input used to be built (from a public seed) before the cells ran,
    so a cell could find it, answer it with a slow loop untimed, and replay the answer."""
    prepared = textwrap.dedent("""
        import gc, torch
        ANSWERS = {}
        def _slow(x, cols):
            rows, picks = x.tolist(), cols.tolist()
            return torch.tensor([[r[c] for c in p] for r, p in zip(rows, picks)], dtype=x.dtype)
        # the large input, if it is already in this process: answered here, untimed
        PAIRS = [o for o in gc.get_objects() if isinstance(o, list) and len(o) == 2
                 and all(isinstance(t, torch.Tensor) and t.dim() == 2 and t.shape[0] >= 10**5
                         for t in o)]
        for x, cols in PAIRS:
            ANSWERS[(x.data_ptr(), cols.data_ptr())] = _slow(x, cols)
        def pick_per_row(x, cols):
            got = ANSWERS.get((x.data_ptr(), cols.data_ptr()))
            return got if got is not None else _slow(x, cols)
        """)
    result = _judge(referee, "basics.pick_per_row", [IMPORTS, prepared])
    assert result.tier == T.NOT_VECTORIZED, str(result)


def test_the_timing_input_is_drawn_anew_for_each_run_and_check():
    """Attack 2: a fixed seed can be prepared for; a secret one or a fresh one cannot."""
    qid = "basics.pick_per_row"
    checks = {Plan.make(qid, None).timing_seed for _ in range(4)}
    assert len(checks) == 4
    runs = {Plan.make(qid, s).timing_seed for s in (1, 2, 3, 4)}
    assert len(runs) == 4 and Plan.make(qid, 2).timing_seed == Plan.make(qid, 2).timing_seed
    assert Plan.make(qid, 2).timing_seed != Plan.make("basics.gather_loop", 2).timing_seed


@pytest.mark.parametrize("qid", LOOPS_TESTED)
def test_the_fastest_loops_we_know_are_not_vectorized(referee, qid):
    """Attack 3: a Python loop over lists used to fit the limit (10x the solution, or the
    solution + 1 s). benchmarks/bench_timing.py measures every question's fastest loop."""
    result = _judge(referee, qid, [IMPORTS + "import math\n", LOOPS[qid]])
    assert result.tier == T.NOT_VECTORIZED, str(result)


COURSE = {
    "a bank module": "from gather_course.questions import exercise as E\n"
    "def pick_per_row(x, cols):\n    return E('basics.pick_per_row').spec(x, cols)\n",
    "the bank's reference": "from gather_course import exercise\n"
    "def pick_per_row(x, cols):\n    return exercise('basics.pick_per_row').spec(x, cols)\n",
    "a private module": "import gather_course.grading._timing as R\n"
    "def pick_per_row(x, cols):\n    return R._solution_on(x, cols)\n",
    "the package attribute": "import gather_course\n"
    "def pick_per_row(x, cols):\n    return gather_course.questions.exercise('x')\n",
}


@pytest.mark.parametrize("how", COURSE)
def test_an_answer_that_reaches_for_the_course_is_told_what_answers_may_use(referee, how):
    """Attack 4, in plain sight: the static scan names it before anything runs."""
    result = _judge(referee, "basics.pick_per_row", [IMPORTS, COURSE[how]])
    assert result.tier == T.CONSTRAINTS and "answers may use torch" in str(result), str(result)


@pytest.mark.parametrize("how", COURSE)
def test_check_in_a_notebook_gives_the_same_verdict_on_reaching_for_the_course(how):
    """What ``check`` tells a learner is what grading gives."""
    namespace: dict = {}
    exec(IMPORTS + COURSE[how], namespace)  # noqa: S102 - our own test answer
    result = exercise("basics.pick_per_row").check(namespace["pick_per_row"])
    assert result.tier == T.CONSTRAINTS and "answers may use torch" in str(result), str(result)


HIDDEN = {
    "a computed import": "import importlib\n"
    "def pick_per_row(x, cols):\n"
    "    bank = importlib.import_module('gather_course.' + 'questions')\n"
    "    return bank.exercise('basics.pick_per_row').spec(x, cols)\n",
    "a computed name": "import gather_course as G\n"
    "def pick_per_row(x, cols):\n"
    "    return getattr(G, 'exer' + 'cise')('basics.pick_per_row').spec(x, cols)\n",
    "sys.modules": "import sys\n"
    "def pick_per_row(x, cols):\n"
    "    mods = [m for n, m in list(sys.modules.items()) if 'question' in n]\n"
    "    return mods[0].exercise('basics.pick_per_row').spec(x, cols)\n",
    # the worker's own modules were imported before any answer: they are gone from
    # sys.modules, so a right answer that needs one fails like any reach for the course
    "the worker's own modules": "import importlib\n"
    "def pick_per_row(x, cols):\n"
    "    job = importlib.import_module('gather_course.grading.' + '_job')\n"
    "    return torch.gather(x, 1, cols) if job._BEAT else None\n",
    "the worker's modules in sys.modules": "import sys\n"
    "def pick_per_row(x, cols):\n"
    "    mods = [m for n, m in list(sys.modules.items()) if n.startswith('gather_course.g')]\n"
    "    return torch.gather(x, 1, cols) if mods[0] else None\n",
}


@pytest.mark.parametrize("how", HIDDEN)
def test_the_bank_is_not_in_the_grading_process_however_it_is_asked_for(referee, how):
    """Attack 4, hidden from the scan: at run time the bank is simply not there."""
    result = _judge(referee, "basics.pick_per_row", [IMPORTS, HIDDEN[how]])
    assert result.tier == T.EXCEPTION, str(result)


def test_the_bank_is_not_in_the_sandboxs_files_or_memory(referee):
    """Attack 4, by the file system and the heap: no module, source or compiled file of the
    bank is there, and no Question object or solution text is in the job process."""
    if not SANDBOXED:
        pytest.skip(f"no sandbox here: {isolation()}")
    solution_line = exercise("nlp.masked_nll").solution_code.strip().splitlines()[-1].strip()
    probe = textwrap.dedent(f"""
        import gc, os, sys, gather_course
        def probe():
            folder = gather_course.__path__[0]
            names = sorted(os.listdir(folder))
            bank = any(os.path.exists(os.path.join(folder, n))
                       for n in ("questions", "__pycache__", "__init__.py", "course",
                                 "grading/_referee.py", "grading/__init__.py", "draw.py"))
            objects = sum(1 for o in gc.get_objects()
                          if type(o).__name__ in ("Question", "CheckResult"))
            texts = sum(1 for o in gc.get_objects() if isinstance(o, str)
                        and {solution_line[::-1]!r}[::-1] in o and o is not __name__)
            return (bank, objects, len(names) > 0, "diagnose.py" in names)
        """)
    bank, objects, listed, public = _raw(referee, [probe], "probe")
    assert (bank, objects) == (False, 0)
    assert listed and public  # the probe did look in the package folder


def test_a_learners_exception_message_is_cut_in_feedback(referee):
    """Attack 5: an exception message is feedback, not a channel of any length."""
    long = (
        "def pick_per_row(x, cols):\n"
        "    if x.shape[0] > 4:\n"
        "        raise ValueError('A' * 20000 + ' tail')\n"
        "    return torch.gather(x, 1, cols)\n"
    )
    result = _judge(referee, "basics.pick_per_row", [IMPORTS, long])
    text = str(result)
    assert result.tier == T.EXCEPTION and "hidden case" in text, text
    assert "A" * 50 in text and "A" * MESSAGE_CHARS not in text
    assert len(text) < 2 * MESSAGE_CHARS + 600


# ---------------------------------------------- found by the red team against the new worker
OK = "def pick_per_row(x, cols):\n    return torch.gather(x, 1, cols)\n"


def test_leftovers_a_job_cannot_remove_never_reach_the_next_student(referee):
    """A folder made unreadable (chmod 000) in a full /tmp, a locked jobs folder, a System V
    object (shared memory then, which no job can make now: a semaphore set here): the wipe
    restores modes, and what it cannot undo gets a fresh worker."""
    if not SANDBOXED:
        pytest.skip(f"no sandbox here: {isolation()}")
    fill = textwrap.dedent("""
        import os
        os.makedirs('/tmp/.x/y', exist_ok=True)
        for i in range(4):
            try:
                with open('/tmp/.x/y/f%d' % i, 'wb') as f:
                    f.write(b'\\0' * 200 * 2**20)
            except OSError:
                break
        os.chmod('/tmp/.x/y', 0)
        os.chmod(os.path.dirname(os.getcwd()), 0o555)
        """)
    _judge(referee, "basics.pick_per_row", [IMPORTS, fill + OK])  # (its own result: no room)
    assert _judge(referee, "basics.pick_per_row", [IMPORTS, OK]).passed  # the next student
    sem = textwrap.dedent("""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def probe(create=True):
            sid = libc.semget(0x5EC2E7, 1, 0o1666 if create else 0o666)
            return int(sid >= 0)
        """)
    assert _raw(referee, [sem], "probe") == 1  # made
    look = sem.replace("def probe(create=True)", "def probe(create=False)")
    assert _raw(referee, [look], "probe") == 0  # not there for the next job


def test_the_baseline_is_measured_before_any_submission_and_never_kept_when_it_failed(referee):
    """Attack 04: a job that left /tmp full made the solution's timing job fail, and its NaN
    switched the vectorized constraint off for everyone."""
    from gather_course.grading import _submission, _timing

    q = exercise("basics.pick_per_row")
    key = _timing._baseline_key(q)
    _timing._BASELINES.pop(key, None)
    broken = Referee(Worker, call_limit=10)
    broken.measure = lambda *a, **k: Measurement(Timed.FAILED)  # every measurement fails
    try:
        with pytest.raises(_submission.NotGraded, match="could not time"):
            broken.baseline(q, 5)
        assert key not in _timing._BASELINES
    finally:
        broken.close()
    assert referee.baseline(q, 5) > 0


def test_one_slow_timing_run_is_no_verdict_but_a_slow_answer_always_is(referee):
    """CI, 2026-11-25: the course's own solution of friends.gather_via_take lost the question
    once. A virtual machine's host can take the processor mid-call and charge the pause to the
    answer's CPU time, so an answer over the limit is measured again before it loses."""
    from gather_course.grading import _timing

    qid = "friends.gather_via_take"
    solution = [IMPORTS, exercise(qid).solution_code]
    referee.baseline(exercise(qid), 4321)  # measured before the host's pauses begin
    real, runs = referee.measure, []

    def paused(pauses: int):
        def growth(cells, q, seed, cpu_cap=0.0):
            got = real(cells, q, seed, cpu_cap)
            runs.append(got)
            return replace(got, cpu=got.cpu + 100.0) if len(runs) <= pauses else got

        return growth

    try:
        referee.measure = paused(0)
        assert _judge(referee, qid, solution).passed and len(runs) == 1  # no run spent
        runs.clear()
        referee.measure = paused(_timing._CONFIRM)  # every run but the last paused
        result = _judge(referee, qid, solution)
        assert result.passed, str(result)
        assert len(runs) == 1 + _timing._CONFIRM
        runs.clear()
        referee.measure = paused(1 + _timing._CONFIRM)  # the same pause on every run: slow
        result = _judge(referee, qid, solution)
        assert result.tier == T.NOT_VECTORIZED and "100." in str(result), str(result)
        assert len(runs) == 1 + _timing._CONFIRM
    finally:
        del referee.measure  # (loops lose on their fastest run: test_the_fastest_loops_...)


# What a job can reach in the template (same user, so prlimit, setpriority and affinity are
# allowed on it) or leave in the keyrings it shares with it: every later job would inherit it.
_TEMPLATE_OF_MINE = """
import os
def template():
    me, supervisor = os.getpid(), os.getppid()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (1, me, supervisor):
            with open(f"/proc/{name}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == supervisor:
                    return int(name)
"""


@pytest.mark.parametrize(
    "change, look",
    [
        (  # every later job could write only 1 KiB: honest students lost their questions
            "import resource\nresource.prlimit(template(), resource.RLIMIT_FSIZE, (1024, 1024))",
            "import resource\ndef probe():\n    return resource.getrlimit(resource.RLIMIT_FSIZE)[0]",
        ),
        (
            "os.setpriority(os.PRIO_PROCESS, template(), 19)",
            "import os\ndef probe():\n    return os.getpriority(os.PRIO_PROCESS, 0)",
        ),
        (  # 20 KB that survive the job: a note for the retry of a timing run, or a classmate
            "import ctypes\nctypes.CDLL(None).syscall(248, b'user', b'note', b'left', 4, -4)",
            "import ctypes\ndef probe():\n"
            "    return ctypes.CDLL(None).syscall(249, b'user', b'note', None, -4) > 0",
        ),
        (  # red team, 2026-11-27: the same in the user's persistent keyring, linked into the
            # job's own process keyring (KEYCTL_GET_PERSISTENT), which no comparison read
            "import ctypes\nlibc = ctypes.CDLL(None)\nring = libc.syscall(250, 22, -1, -2)\n"
            "libc.syscall(248, b'user', b'note', b'left', 4, ring)",
            "import ctypes\nlibc = ctypes.CDLL(None)\ndef probe():\n"
            "    ring = libc.syscall(250, 22, -1, -2)\n"
            "    return libc.syscall(250, 10, ring, b'user', b'note', 0) > 0",
        ),
    ],
    ids=[
        "template's limits",
        "template's priority",
        "a key in the user's keyring",
        "a key in the persistent keyring",
    ],
)
def test_what_a_job_changes_in_the_template_or_the_keyrings_no_later_job_inherits(
    referee, change, look
):
    """Red team, 2026-11-25: a job found the template (its supervisor's other child) and
    lowered its file size limit; every later job on that worker failed. The supervisor now
    compares the template's limits, priority, CPUs and keys after each job, and a change
    ends the worker: the next job runs on a fresh one."""
    if not SANDBOXED:
        pytest.skip("the template and its keyrings are the sandbox's")
    if platform.machine() != "x86_64" and "syscall" in change:
        pytest.skip("the keyctl probe uses x86_64 system call numbers")
    before = _raw(referee, [look], "probe")
    changed = _TEMPLATE_OF_MINE + change + "\ndef probe():\n    return 1\n"
    assert _raw(referee, [changed], "probe") == 1  # it ran, and changed what it could
    assert _raw(referee, [look], "probe") == before


_TRACE = textwrap.dedent("""
    import ctypes, os, time

    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]

    def _reach(pid):
        # what a job can do to ``pid``: attach (ptrace), write its memory, read its environment
        attached = libc.ptrace(16, pid, None, None) == 0  # PTRACE_ATTACH
        if attached:
            os.waitpid(pid, 0x40000000)  # __WALL
            libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
        reached = [attached]
        for name, mode in (("mem", "r+b"), ("environ", "rb")):
            try:
                with open(f"/proc/{pid}/{name}", mode, buffering=0):
                    reached.append(True)
            except OSError:
                reached.append(False)
        return reached

    def probe():
        control = os.fork()  # a process that lets itself be traced: the probe must reach it
        if control == 0:
            libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
            time.sleep(30)
            os._exit(0)
        time.sleep(0.2)
        others = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        others = [p for p in others if p not in (os.getpid(), control)]
        found = [os.getppid(), len(others), *_reach(control)]
        for pid in others:
            found += _reach(pid)
        os.kill(control, 9)
        os.waitpid(control, 0)
        return tuple(int(v) for v in found)
    """)


_SUPERVISOR_LIMIT = """
import resource
def probe():
    return resource.prlimit(1, resource.RLIMIT_CORE)[0]
"""


def test_a_note_in_the_supervisors_limits_reaches_no_later_job(referee):
    """Red team, 2026-11-27: a job may prlimit its supervisor (pid 1, the same user): its
    soft limits carried about 500 bits to the next job on the worker, and a loop answered
    its own timing retry from them (nlp.masked_nll passed). The supervisor's limits,
    priorities, CPUs and scheduler are compared after each job, as the template's are."""
    if not SANDBOXED:
        pytest.skip("the supervisor is pid 1 in the sandbox only")
    before = _raw(referee, [_SUPERVISOR_LIMIT], "probe")
    note = (
        "import os, resource\nhard = resource.prlimit(1, resource.RLIMIT_CORE)[1]\n"
        "resource.prlimit(1, resource.RLIMIT_CORE, (0x123456789ABCDEF, hard))\n"
        "os.setpriority(os.PRIO_PROCESS, 1, 5)\n"
        "def probe():\n    return resource.prlimit(1, resource.RLIMIT_CORE)[0]\n"
    )
    assert _raw(referee, [note], "probe") == 0x123456789ABCDEF  # it ran, and wrote its note
    assert _raw(referee, [_SUPERVISOR_LIMIT], "probe") == before


def test_no_process_of_the_sandbox_can_be_traced_or_written_by_a_job(referee):
    """Red team, 2026-11-27: the sandbox's pid 1 was bubblewrap's own init, same user and
    dumpable: a job attached to it with ptrace and made it run a program of the job's. Never
    a job's process, it outlived every job: it ran a Python loop for the timed calls (passed
    as vectorized), planted a FIFO as each later job's result (an honest student failed),
    and kept a classmate's results on the hidden cases. The supervisor is now pid 1, and no
    process besides the job's own can be attached, written or read."""
    if not SANDBOXED:
        pytest.skip("the sandbox's processes")
    found = _raw(referee, [_TRACE], "probe")
    parent, others, *reached = found
    assert parent == 1, found  # the job's parent, the supervisor, is the sandbox's init
    assert others == 2, found  # the supervisor and the template: nothing else is there
    assert reached[:3] == [1, 1, 1], found  # the control: the probe reaches what it may
    assert reached[3:] == [0] * 6, found  # neither the supervisor nor the template


def test_a_job_can_neither_stop_nor_kill_its_supervisor(referee):
    """The supervisor is the sandbox's pid 1: a signal a job sends it without a handler of
    its own is dropped, SIGKILL and SIGSTOP included, and it handles none (red team,
    2026-11-27: Python's own SIGINT handler let a job's SIGINT end it). The worker serves
    the next job."""
    if not SANDBOXED:
        pytest.skip("the sandbox's pid 1")
    probe = (
        "import os, signal\ndef probe():\n"
        "    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGSTOP, signal.SIGKILL):\n"
        "        os.kill(os.getppid(), sig)\n    return os.getppid()\n"
    )
    worker = referee.worker
    assert _raw(referee, [probe], "probe") == 1
    assert _raw(referee, ["def probe():\n    return 2\n"], "probe") == 2
    assert referee.worker is worker and worker.alive


_HIDDEN = """
import ctypes, os, resource

def probe():
    found = []
    try:
        os.close(os.memfd_create("note"))
        found.append(0)
    except OSError as e:
        found.append(e.errno)
    libc = ctypes.CDLL(None, use_errno=True)
    made = libc.shmget(0, 1 << 20, 0o1600)  # IPC_PRIVATE, 1 MiB
    found.append(0 if made >= 0 else ctypes.get_errno())
    made = libc.msgget(0, 0o1600)
    found.append(0 if made >= 0 else ctypes.get_errno())
    return (*found, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


def test_a_job_cannot_hold_memory_that_no_process_maps(referee):
    """Red team, 2026-11-27: a job with a 256 MiB budget held 1.6 GiB in memory files it
    never mapped (in no process's RSS, under no RLIMIT_AS), enough to make the kernel's
    out-of-memory killer end the referee or a classmate's job. A job can make no memory
    file, System V segment or queue, and has few descriptors (socket buffers)."""
    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("the filter knows x86_64's and aarch64's system call numbers")
    import os

    os.close(os.memfd_create("control"))  # here (no job), the calls work
    assert _raw(referee, [_HIDDEN], "probe") == (1, 1, 1, 256)  # EPERM thrice, 256


def test_dev_is_read_only_in_the_sandbox(referee):
    """Red team, 2026-11-25: /dev was a writable tmpfs that no wipe cleaned. A loop saved its
    timing input there in its first run and answered the retry from it; files there held
    memory outside every budget."""
    if not SANDBOXED:
        pytest.skip("/dev is the sandbox's")
    probe = (
        "def probe():\n    try:\n        open('/dev/.left', 'w').write('x')\n"
        "    except OSError as e:\n        return e.errno\n    return 0\n"
    )
    assert _raw(referee, [probe], "probe") == 30  # EROFS
    shm = probe.replace("/dev/.left", "/dev/shm/left")
    assert _raw(referee, [shm], "probe") == 0  # /dev/shm stays writable (and is wiped)


def test_an_answer_in_a_notebook_that_asked_torch_for_threads_is_judged_as_any_other(referee):
    """Red team, 2026-11-27: with ``torch.set_num_threads(2)`` in a cell, the course's own
    solution lost the vectorized constraint ("started a thread or a process"): torch starts
    its threads at its first parallel op, which was in the timed call. They start before the
    stop now; a loop is still a loop, whatever threads torch has."""
    qid = "basics.pick_per_row"
    threads = IMPORTS + "torch.set_num_threads(2)\n"
    right = _judge(referee, qid, [threads + exercise(qid).solution_code])
    assert right.passed, str(right)
    loop = _judge(referee, qid, [threads, LOOPS[qid]])
    assert loop.tier == T.NOT_VECTORIZED, str(loop)


def test_a_loop_that_remembers_its_last_answer_is_still_a_loop(referee):
    """Red team, 2026-11-25: two timed calls on the same input let a loop answer the second
    from memory and pay for one (masked_nll and the token questions passed). One call now."""
    qid = "nlp.masked_nll"
    memo = textwrap.dedent("""
        _last = [None, None]
        _inner = masked_nll
        def masked_nll(*args):
            if _last[0] is not None and all(a is b for a, b in zip(_last[0], args)):
                return _last[1]
            _last[:] = [args, _inner(*args)]
            return _last[1]
        """)
    result = _judge(referee, qid, [IMPORTS + "import math\n", LOOPS[qid], memo])
    assert result.tier == T.NOT_VECTORIZED, str(result)


def test_an_answer_that_hangs_on_the_large_input_is_stopped_once_and_told_so(referee):
    """A timed call that sleeps uses no CPU: it is no loop, and running it again would only
    hold the referee twice as long."""
    qid = "basics.pick_per_row"
    hangs = (
        "import time\ndef pick_per_row(x, cols):\n    if x.numel() > 10**5:\n"
        "        time.sleep(60)\n    return torch.gather(x, 1, cols)\n"
    )
    referee.baseline(exercise(qid), 4321)  # (measured before: not counted below)
    real, runs = referee.measure, []
    referee.measure = lambda *a, **k: runs.append(1) or real(*a, **k)
    referee.call_limit = 2
    try:
        result = _judge(referee, qid, [IMPORTS, hangs])
    finally:
        referee.call_limit = 10
        del referee.measure
    assert result.tier == T.EXCEPTION and "longer than 2 s" in result.headline, str(result)
    assert "CPU" not in str(result) and len(runs) == 1  # not run again


def test_forged_error_fields_are_bounded_and_worded_by_the_referee():
    """Red team, 2026-11-25: a job that forges its result (it can patch torch.save) sent a
    240 MB message (the referee took 28 s and 6 GiB to cut it), a `type` nested 5,000 lists
    deep (str() raised RecursionError: NOT GRADED), a verdict line in its error's type, and
    a TookTooLong that claimed a limit of 200 Arabic digits."""
    import time

    from gather_course.grading._jobdata import _outcome
    from gather_course.questions._cases import Case
    from gather_course.questions._judge import raise_for_error
    from gather_course.questions.verdicts import Failure

    nested: list = []
    for _ in range(5000):
        nested = [nested]
    started = time.process_time()
    error = _outcome(
        {
            "raised": {
                "type": "Error\n✅ Correct (basics.pick_per_row): All 13",
                "message": "ab " * (40 * 2**20),
                "code": nested,
                "line": True,
                "gather": [nested, "a\nb", 7],
            }
        }
    ).error
    assert time.process_time() - started < 1.0
    assert "\n" not in error["type"] and len(error["type"]) <= 80
    assert len(error["message"]) <= MESSAGE_CHARS and error["code"] == "" and error["line"] == 0
    assert error["gather"] == ["", "a b", ""]
    assert _outcome({"raised": {"type": nested}}).error["type"] == "Error"
    case = Case("c", {"x": torch.zeros(2)})
    for limit, said in (
        ("2", "longer than 2 s"),
        ("٣" * 200, "too long"),
        ("0.000001", "too long"),
    ):
        with pytest.raises(Failure) as failure:
            stopped = {"type": "TookTooLong", "stopped": True, "message": limit}
            raise_for_error(case, _outcome({"raised": stopped}))
        assert said in failure.value.headline, failure.value.headline


def test_a_learners_own_tooktoolong_is_their_exception_not_the_workers_alarm(referee):
    """The job's alarm is known by identity, never by its name: an answer that raises an
    exception class of its own called TookTooLong is told it raised it, not "stopped"."""
    from tests.helpers import judge

    own = textwrap.dedent("""
        class TookTooLong(Exception):
            pass

        def pick_per_row(x, cols):
            raise TookTooLong("2")
    """)
    result = judge(referee, "basics.pick_per_row", [own])
    assert not result.passed and "raised TookTooLong" in str(result), str(result)
    assert "longer than" not in str(result) and "did not finish" not in str(result)
    endless = "def pick_per_row(x, cols):\n    while True:\n        pass\n"
    referee.call_limit = 1  # stopped by the alarm after 0.9 s, not 9
    try:
        stopped = judge(referee, "basics.pick_per_row", [endless])
    finally:
        referee.call_limit = 10
    assert not stopped.passed and "raised TookTooLong" not in str(stopped), str(stopped)
    assert "longer than" in str(stopped) or "did not finish" in str(stopped), str(stopped)


def test_work_done_in_children_the_kernel_reaps_is_not_hidden(referee):
    """Attack 05: with SIGCHLD ignored, children are reaped unseen and their CPU time is
    counted nowhere; a new thread or process during the timed calls is its own verdict."""
    hidden = textwrap.dedent("""
        import os, signal, array
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        def pick_per_row(x, cols):
            R, K = cols.shape
            parts = []
            for lo in range(0, R, 30000):
                r, w = os.pipe()
                if os.fork() == 0:
                    xs, cs = x[lo:lo + 30000].tolist(), cols[lo:lo + 30000].tolist()
                    data = array.array('d', [row[c] for row, cr in zip(xs, cs) for c in cr])
                    os.write(w, data.tobytes())
                    os._exit(0)
                os.close(w)
                chunks = []
                while True:
                    b = os.read(r, 1 << 22)
                    if not b:
                        break
                    chunks.append(b)
                os.close(r)
                parts.append(b''.join(chunks))
            flat = torch.frombuffer(bytearray(b''.join(parts)), dtype=torch.float64)
            return flat.to(x.dtype).reshape(R, K)
        """)
    result = _judge(referee, "basics.pick_per_row", [IMPORTS, hidden])
    if SANDBOXED:
        assert result.tier == T.NOT_VECTORIZED and "thread or a process" in str(result), str(result)


def test_no_job_can_change_the_timing_input_the_next_one_gets(referee):
    """Attack 06: the timing input is a sealed memory file: writing it fails."""
    keep = textwrap.dedent("""
        import os
        _close, KEPT, N = os.close, [], [0]
        def _keep(fd):
            try:
                if os.readlink('/proc/self/fd/%d' % fd).startswith('/memfd:timing-input'):
                    KEPT.append(fd)
                    return
            except OSError:
                pass
            _close(fd)
        os.close = _keep
        def pick_per_row(x, cols):
            out = torch.gather(x, 1, cols)
            N[0] += 1
            for fd in (KEPT if N[0] == 2 else []):
                try:
                    os.pwrite(fd, b'\\0' * os.fstat(fd).st_size, 0)
                except OSError:
                    pass
            return out
        """)
    assert _judge(referee, "basics.pick_per_row", [IMPORTS, keep]).passed
    assert _judge(referee, "basics.pick_per_row", [IMPORTS, OK]).passed


def test_a_stopped_template_is_replaced_before_the_next_student(referee):
    """Attack 09: a job stopped the template (SIGSTOP); the next job never started."""
    if not SANDBOXED:
        pytest.skip(f"no sandbox here: {isolation()}")
    stop = textwrap.dedent("""
        import os, signal
        me, parent = os.getpid(), os.getppid()
        for pid in os.listdir('/proc'):
            if pid.isdigit() and int(pid) not in (1, me, parent):
                try:
                    os.kill(int(pid), signal.SIGSTOP)
                except OSError:
                    pass
        """)
    _judge(referee, "basics.pick_per_row", [IMPORTS, stop + OK])
    assert _judge(referee, "basics.pick_per_row", [IMPORTS, OK]).passed
