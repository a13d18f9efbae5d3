"""The whole grading round trip: the real ``gather-course grade``, nbgrader's real gradebook, in a
temporary copy of the course, with a class of honest, wrong, broken and dishonest students.

For every assignment: the solution scores full marks, the untouched student notebook 0, and a
typical wrong answer loses exactly its question's points. On ``basics``, a class of cheats: each
in-process trick, attacks on the machine, constraint evasions, and honest answers that print to
stderr and warn. Honest students are spread between them: none may lose a point to a
classmate, and no file outside the student's own sandbox may change.
"""

from __future__ import annotations

import csv
import hashlib
import inspect
import os
import re
import secrets
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from gather_course import exercise
from gather_course.course._course import assignments, nbgrader_api
from gather_course.grading._sandbox import SANDBOX, isolation
from gather_course.grading._submission import graded_cells
from gather_course.grading._test_notes import deleted_test_note, edited_test_note
from tests.answers import WRONG
from tests.helpers import ROOT, fill_cells

# A class graded for real, every assignment and a class of cheats: README's classroom command
# (it took the first command past five minutes on two cores).
pytestmark = pytest.mark.classroom

ASSIGNMENTS = assignments(ROOT)
IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"
CALL_TIMEOUT = 2
SANDBOXED = isolation().level == SANDBOX
REQUIRE_SANDBOX = os.environ.get("GATHER_COURSE_REQUIRE_SANDBOX", "") not in ("", "0")


def _questions(nb) -> list[tuple[str, str, str, float]]:
    """(question id, answer cell id, test cell id, points) in notebook order."""
    return [(qid, gid.removeprefix("test_"), gid, points) for gid, qid, points in graded_cells(nb)]


def _typical_wrong(qid: str) -> str:
    """The first self-contained typical wrong answer of tests/answers.py, as cell source."""
    name = exercise(qid).name
    for fn, _tier in WRONG[qid]:
        src = textwrap.dedent(inspect.getsource(fn))
        src = "\n".join(line for line in src.splitlines() if not line.startswith("@"))
        if " _" not in src and "(_" not in src:  # no private helpers of answers.py
            return f"{IMPORTS}\n{src}\n\n{name} = {fn.__name__}\n"
    raise AssertionError(f"no self-contained wrong answer for {qid}")


def _solution(qid: str) -> str:
    return IMPORTS + exercise(qid).solution_code


# -- the dishonest class of basics: what each one tries ------------------------------------------
FAKE = "def pick_per_row(x, cols):\n    return x[:, :cols.shape[1]].clone()\n"  # wrong values
IN_PROCESS = {
    # make every comparison say "equal"
    "patches_torch": "torch.allclose = lambda *a, **k: True\ntorch.equal = lambda *a, **k: True\n"
    "torch.isclose = lambda a, b, **k: torch.ones(torch.broadcast_shapes("
    "a.shape, b.shape), dtype=torch.bool)\n"
    "torch.Tensor.__eq__ = lambda a, b: torch.ones_like(a, dtype=torch.bool)\n",
    # replace the checker's own verdict and registry
    "patches_checker": "import gather_course.questions._check as C\n"
    "import gather_course.questions._question as Q\n"
    "import gather_course.questions._result as R\n"
    "R.CheckResult.__bool__ = lambda self: True\n"
    "R.CheckResult.passed = True\nC.run_check = lambda *a, **k: None\n"
    "Q._REGISTRY.clear()\n",
    # look up the caller's frames for the expected values and return those
    "reads_frames": "import sys\ndef pick_per_row(x, cols):\n    f = sys._getframe(1)\n"
    "    while f is not None:\n        for k in ('expected', 'exp', 'e'):\n"
    "            if k in f.f_locals:\n                return f.f_locals[k]\n"
    "        f = f.f_back\n    return x[:, :cols.shape[1]].clone()\n",
    # rebuild the public battery from seed 0 and answer it from a table (hidden cases differ)
    "replays_seeds": "from gather_course import exercise\nimport torch\n_q = exercise('basics.pick_per_row')\n"
    "_g = torch.Generator().manual_seed(0)\n"
    "_table = {}\nfor _s in _q.sizes:\n    _c = _q.build(_g, _s)\n"
    "    _x, _i = _c.inputs.values()\n"
    "    _table[(_x.shape, _i.shape, float(_x.sum()))] = _q.spec(_x, _i)\n"
    "def pick_per_row(x, cols):\n"
    "    return _table.get((x.shape, cols.shape, float(x.sum())), x[:, :cols.shape[1]].clone())\n",
    # torch function / dispatch modes that rewrite every result
    "function_mode": "from torch.overrides import TorchFunctionMode\n"
    "class M(TorchFunctionMode):\n    def __torch_function__(self, f, t, a=(), k=None):\n"
    "        if f in (torch.equal, torch.allclose): return True\n"
    "        return f(*a, **(k or {}))\nM().__enter__()\n",
    "dispatch_mode": "from torch.utils._python_dispatch import TorchDispatchMode\n"
    "class D(TorchDispatchMode):\n    def __torch_dispatch__(self, f, t, a=(), k=None):\n"
    "        if 'eq' in str(f) or 'isclose' in str(f):\n"
    "            return torch.ones(a[0].shape, dtype=torch.bool)\n"
    "        return f(*a, **(k or {}))\nD().__enter__()\n",
    # IPython hooks and builtins: rewrite how later cells run, make isinstance lie
    "ipython_hooks": "ip = get_ipython()\nip.events.register('pre_run_cell', lambda *a: None)\n",
    "builtins": "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.type = lambda *a: object\n",
    # a subclass that lies about equality
    "subclass": "class Liar(torch.Tensor):\n    def __eq__(self, o):\n"
    "        return torch.ones(self.shape, dtype=torch.bool)\n",
}
MACHINE = {
    # write the gradebook and a classmate's notebook, then stop the grader and leave a process
    "writes_files": "import glob\nfor p in ['{root}/gradebook.db', '{root}/grades-basics.csv'] + "
    "glob.glob('{root}/submitted/*/basics/*.ipynb') + glob.glob('/tmp/**/*.ipynb', "
    "recursive=True):\n    try:\n        open(p, 'w').write('overwritten')\n"
    "    except OSError:\n        pass\n",
    "kills_grader": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
    "os.kill(-1, signal.SIGKILL)\n",
    "leaves_process": "import os, time\nif os.fork() == 0:\n    os.setsid()\n    while True:\n"
    "        time.sleep(0.1)\n",
    "memory_bomb": "hog = bytearray(64 * 2**30)\n",
    "endless_loop": "def pick_per_row(x, cols):\n    while True:\n        pass\n",
    "ignores_signals": "import signal\nfor s in (signal.SIGINT, signal.SIGTERM, signal.SIGXCPU):\n"
    "    signal.signal(s, signal.SIG_IGN)\n"
    "def pick_per_row(x, cols):\n    while True:\n        pass\n",
}
EVASIONS = {  # gather_loop forbids gather: each reaches it anyway (question 2 must score 0)
    "evades_getattr": "g = getattr(torch, 'gat' + 'her')\n"
    "def gather_loop(input, dim, index):\n    return g(input, dim, index)\n",
    "evades_internals": "def gather_loop(input, dim, index):\n"
    "    return torch.ops.aten.gather.default(input, dim, index)\n",
    "evades_thread": "import threading\ndef gather_loop(input, dim, index):\n    box = []\n"
    "    t = threading.Thread(target=lambda: box.append(torch.gather(input, dim, "
    "index)))\n    t.start(); t.join()\n    return box[0]\n",
    "evades_numpy": "import numpy as np\ndef gather_loop(input, dim, index):\n"
    "    d = dim % input.dim()\n"
    "    part = input.numpy()[tuple(slice(None) if k == d else slice(0, s)\n"
    "                               for k, s in enumerate(index.shape))]\n"
    "    return torch.from_numpy(np.take_along_axis(part, index.long().numpy(), d))\n",
}
# Classmates in memory: three students hide a secret in their answers; a later one reads its
# own process's memory and carries whatever it finds out in an exception's message.
CLASSMATE_SECRETS = {f"plants_secret_{k}": "PLANTED-" + secrets.token_hex(12) for k in range(3)}
READS_CLASSMATES = textwrap.dedent("""
    import ctypes, re
    MINE = "PLANTED-" + "self-" + "CONTROL"  # its own planted text: the channel works
    def pick_per_row(x, cols):
        found = set()
        with open("/proc/self/maps") as f:
            regions = [line.split() for line in f]
        for fields in regions:  # where Python's objects live: the heap, anonymous memory
            lo, hi = (int(v, 16) for v in fields[0].split("-"))
            heap = len(fields) > 5 and fields[5] == "[heap]"
            small = len(fields) < 6 and hi - lo < 2**26  # not a CUDA build's large buffers
            if fields[1].startswith("rw") and (heap or small):
                for at in range(lo, hi, 2**20):  # in 1 MiB pieces, overlapping by a match
                    data = ctypes.string_at(at, min(2**20 + 64, hi - at))
                    found |= set(re.findall(b"PLANT" + b"ED-[0-9a-zA-Z-]{8,40}", data))
        raise ValueError(" ".join(sorted(f.decode() for f in found))[:230])
    """)
LISTS = (
    "def pick_per_row(x, cols):\n    xl, cl = x.tolist(), cols.tolist()\n"
    "    return torch.tensor([[r[c] for c in cs] for r, cs in zip(xl, cl)], "
    "dtype=x.dtype).reshape(cols.shape)\n"
)
NOISY = (
    "import sys, warnings\ndef pick_per_row(x, cols):\n"
    "    print('debugging', cols.shape, file=sys.stderr)\n    warnings.warn('a warning')\n"
    "    torch.meshgrid(torch.arange(2), torch.arange(2))     # torch warns: indexing=\n"
    "    return torch.gather(x, 1, cols)\n"
)


def class_of(base: Path, kinds: list[str]) -> Path:
    """A course copy under ``base`` with one basics submission per entry of ``kinds`` (the
    names of :func:`_submissions`), in ``submitted/s00000_<kind>/`` and so on."""
    root = base / "course"
    root.mkdir()
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    subs = _submissions("basics", root)
    for i, kind in enumerate(kinds):
        folder = root / "submitted" / f"s{i:05d}_{kind}" / "basics"
        folder.mkdir(parents=True)
        nb = subs[kind]
        if isinstance(nb, str):
            (folder / "basics.ipynb").write_text(nb)
        else:
            nbformat.write(nb, folder / "basics.ipynb")
    return root


def _submissions(assignment: str, root: Path) -> dict[str, object]:
    student_nb = nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4)
    qs = _questions(student_nb)
    right = {cell: _solution(qid) for qid, cell, _, _ in qs}
    wrong = {cell: _typical_wrong(qid) for qid, cell, _, _ in qs}
    subs = {
        "solution": fill_cells(student_nb, right),
        "untouched": student_nb,
        "wrong_odd": fill_cells(
            student_nb,
            {c: (wrong if i % 2 == 0 else right)[c] for i, (_, c, _, _) in enumerate(qs)},
        ),
        "wrong_even": fill_cells(
            student_nb,
            {c: (wrong if i % 2 == 1 else right)[c] for i, (_, c, _, _) in enumerate(qs)},
        ),
    }
    if assignment != "basics":
        return subs
    first, test = qs[0][1], qs[0][2]
    subs.update(
        {
            "edits_test": fill_cells(student_nb, right, {test: "pass"}),
            "deletes_test": fill_cells(student_nb, right, {test: None}),
            "magic_in_answer": fill_cells(
                student_nb, right, extra=["%timeit pick_per_row(1, 2)", "!cat /etc/passwd"]
            ),
            "noisy_but_right": fill_cells(student_nb, {**right, first: IMPORTS + NOISY}),
            "lists_not_vectorized": fill_cells(student_nb, {**right, first: IMPORTS + LISTS}),
            "corrupt": "{ not a notebook",
        }
    )
    for n, (name, code) in enumerate({**IN_PROCESS, **MACHINE}.items()):
        code = code.replace("{root}", str(root))
        body = code if "def pick_per_row" in code else code + FAKE
        subs[name] = fill_cells(student_nb, {**right, first: IMPORTS + body})
        subs[f"honest_{n:02d}"] = fill_cells(student_nb, right)  # a classmate after each one
    for name, secret in CLASSMATE_SECRETS.items():
        planted = f"SECRET = {secret!r}\n" + _solution(qs[0][0])
        subs[name] = fill_cells(student_nb, {**right, first: IMPORTS + planted})
    subs["reads_classmates"] = fill_cells(student_nb, {**right, first: IMPORTS + READS_CLASSMATES})
    subs["pastes_cells"] = _pasted(fill_cells(student_nb, right), {"setup", first, test})
    loop_cell = qs[1][1]
    for name, code in EVASIONS.items():
        subs[name] = fill_cells(student_nb, {**right, loop_cell: IMPORTS + code})
    return subs


def _pasted(nb, grade_ids: set[str]):
    """``nb`` with a copy of each cell named in ``grade_ids`` pasted after it, as JupyterLab
    pastes one: its nbgrader metadata and all."""
    import copy

    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell.metadata.get("nbgrader", {}).get("grade_id") in grade_ids:
            twin = copy.deepcopy(cell)
            twin["id"] = cell.get("id", "c") + "-copy"
            cells.append(twin)
    nb.cells = cells
    return nb


def _grade_all(base: Path) -> tuple[Path, subprocess.CompletedProcess, dict]:
    """Every assignment's class in one course copy, graded by one `gather-course grade`."""
    root = base / "course"
    root.mkdir()
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    for assignment in ASSIGNMENTS:
        subs = _submissions(assignment, root)
        if assignment == "basics":  # a folder named like a pattern of classmates' names
            subs[GLOB_NAMED] = subs["solution"]
        for student, nb in subs.items():
            folder = root / "submitted" / student / assignment
            folder.mkdir(parents=True)
            if isinstance(nb, str):
                (folder / f"{assignment}.ipynb").write_text(nb)
            else:
                nbformat.write(nb, folder / f"{assignment}.ipynb")
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}
    args = [
        sys.executable,
        "-m",
        "gather_course.cli",
        "grade",
        *ASSIGNMENTS,
        "--course",
        str(root),
        "--timeout",
        str(CALL_TIMEOUT),
        "--jobs",
        "2",
    ]
    done = subprocess.run(
        args + (["--require-sandbox"] if SANDBOXED else []),
        capture_output=True,
        text=True,
        timeout=900,
    )
    return root, done, before


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if not SANDBOXED:
        if REQUIRE_SANDBOX:
            pytest.fail(f"GATHER_COURSE_REQUIRE_SANDBOX is set but grading has {isolation()}")
        pytest.skip(
            f"the class of cheats attacks the machine: it runs only in the sandbox "
            f"({isolation()}); install bubblewrap (apt-get install bubblewrap)"
        )
    result = _grade_all(tmp_path_factory.mktemp("grading"))
    return {assignment: result for assignment in ASSIGNMENTS}


GLOB_NAMED = "[sw]*"  # as nbgrader reads it: solution, wrong_odd, writes_files...


def test_a_student_who_pasted_copies_of_the_courses_cells_is_graded(graded):
    """Red team, 2026-11-27: a pasted copy of a cell of nbgrader's (the setup cell, an
    answer cell, a test cell: JupyterLab copies the metadata) made nbgrader's autograde fail
    with KeyError 'grade_id' (its DeduplicateIds leaves {} on the copy): NOT GRADED, where
    ``check`` said every question passed."""
    root, _done, _before = graded["basics"]
    rows = _csv(root, "basics")
    full = sum(p for *_, p in _expected("basics"))
    row = rows["pastes_cells"]
    assert row["status"] == "graded" and float(row["score"]) == full, row


def test_a_folder_named_like_a_pattern_is_not_graded_and_touches_no_classmate(graded):
    """Red team, 2026-11-27: nbgrader finds a student's folder with glob, so a folder named
    ``[0-9]*`` (from an LMS export, zip_collect or a hand copy: the course's collector takes
    only real users' names) had nbgrader's autograde regrade every classmate it matched with
    0 points, their status still "graded". Such a folder is now NOT GRADED, and no more."""
    root, done, _before = graded["basics"]
    rows = _csv(root, "basics")
    odd = rows[GLOB_NAMED]
    assert odd["status"] == "NOT GRADED" and "pattern" in odd["problem"], odd
    full = sum(p for *_, p in _expected("basics"))
    for name in ("solution", "edits_test"):  # matched by the pattern, and right
        assert rows[name]["status"] == "graded" and float(rows[name]["score"]) == full
    assert not (root / "autograded" / GLOB_NAMED).exists()  # nbgrader never saw the name


def _csv(root: Path, assignment: str) -> dict[str, dict[str, str]]:
    with open(root / f"grades-{assignment}.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def _expected(assignment: str) -> list[tuple[str, str, str, float]]:
    return _questions(nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_grading_runs_and_reports_every_student(graded, assignment):
    root, done, _ = graded[assignment]
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _csv(root, assignment)
    assert {"solution", "untouched", "wrong_odd", "wrong_even"} <= set(rows)
    graded_here = sum(row["status"] == "graded" for row in rows.values())
    assert graded_here >= 4  # solution, untouched, wrong_odd, wrong_even at least
    assert (
        f"{assignment}: {graded_here} of {len(rows)} submissions graded; scores in "
        f"{root / f'grades-{assignment}.csv'}" in done.stdout
    ), done.stdout[-3000:]  # basics too: its broken submissions are counted, not graded
    assert "isolation: sandbox" in done.stdout
    # the embedded pool's progress bar (tqdm) on the terminal: done / total, rate, time left
    bar = re.search(rf"{assignment}: 100%\|[^|]*\| (\d+)/(\d+) \[[\d:]+<[\d:]+, ", done.stderr)
    judged = len(rows) - (GLOB_NAMED in rows)  # (a folder named like a pattern is not judged)
    assert bar and bar.group(1) == bar.group(2) == str(judged), done.stderr[-2000:]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_full_marks_untouched_zero(graded, assignment):
    root, _, _ = graded[assignment]
    rows = _csv(root, assignment)
    total = sum(p for *_, p in _expected(assignment))
    assert float(rows["solution"]["score"]) == float(rows["solution"]["max_score"]) == total
    assert rows["solution"]["status"] == "graded"
    assert float(rows["untouched"]["score"]) == 0 and rows["untouched"]["status"] == "graded"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_typical_wrong_answer_loses_exactly_its_points(graded, assignment):
    root, _, _ = graded[assignment]
    rows = _csv(root, assignment)
    for i, (qid, _, test, points) in enumerate(_expected(assignment)):
        wrong_in, right_in = (
            ("wrong_odd", "wrong_even") if i % 2 == 0 else ("wrong_even", "wrong_odd")
        )
        assert float(rows[wrong_in][test]) == 0, (qid, rows[wrong_in])
        assert float(rows[right_in][test]) == points, _verdict(root, assignment, right_in, test)


def _verdict(root: Path, assignment: str, student: str, test: str) -> str:
    """What the autograded notebook of ``student`` says under test cell ``test``."""
    nb = nbformat.read(root / "autograded" / student / assignment / f"{assignment}.ipynb", 4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == test:
            return "\n".join(str(o.get("text") or o.get("evalue") or o) for o in cell.outputs)
    return f"no cell {test} in the autograded notebook of {student}"


def _lost_only_first(rows, student):
    (_, _, first, points), *_ = _expected("basics")
    full = float(rows["solution"]["score"])
    return (
        rows[student]["status"] == "graded"
        and float(rows[student][first]) == 0
        and float(rows[student]["score"]) == full - points
    )


@pytest.mark.parametrize("student", sorted(IN_PROCESS))
def test_in_process_cheats_gain_nothing(graded, student):
    root, _, _ = graded["basics"]
    rows = _csv(root, "basics")
    (_, _, first, points), *_ = _expected("basics")
    assert rows[student]["status"] == "graded" and float(rows[student][first]) == 0
    assert float(rows[student]["score"]) <= float(rows["solution"]["score"]) - points


@pytest.mark.parametrize("student", sorted(EVASIONS))
def test_constraint_evasions_lose_the_question(graded, student):
    root, _, _ = graded["basics"]
    rows = _csv(root, "basics")
    (_, _, _, _), (_, _, loop_test, points), _ = _expected("basics")
    assert float(rows[student][loop_test]) == 0
    assert float(rows[student]["score"]) == float(rows["solution"]["score"]) - points


def test_list_loops_are_not_vectorized_and_honest_noise_costs_nothing(graded):
    root, _, _ = graded["basics"]
    rows = _csv(root, "basics")
    assert _lost_only_first(rows, "lists_not_vectorized")
    assert rows["noisy_but_right"]["score"] == rows["solution"]["score"]


def test_a_submission_cannot_read_its_classmates_answers(graded):
    """Issue 23's first attack: the warm worker used to hand every job process the memory of
    the jobs before it, and an exception's message carried classmates' answers out."""
    root, _, _ = graded["basics"]
    rows = _csv(root, "basics")
    for student in CLASSMATE_SECRETS:
        assert rows[student]["score"] == rows["solution"]["score"]
    assert _lost_only_first(rows, "reads_classmates")
    feedback = (root / "autograded" / "reads_classmates" / "basics" / "basics.ipynb").read_text()
    assert "PLANTED-self-CONTROL" in feedback  # what it found in its own process, shown
    for secret in CLASSMATE_SECRETS.values():
        assert secret not in feedback


def test_attacks_on_the_machine_change_nothing_but_their_own_score(graded):
    root, done, before = graded["basics"]
    rows = _csv(root, "basics")
    full = float(rows["solution"]["score"])
    honest = [s for s in rows if s.startswith("honest_")]
    assert len(honest) == len(IN_PROCESS) + len(MACHINE)
    assert all(float(rows[s]["score"]) == full and rows[s]["status"] == "graded" for s in honest)
    (_, _, first, points), *_ = _expected("basics")
    for name in (
        "writes_files",
        "leaves_process",
        "memory_bomb",
        "endless_loop",
        "ignores_signals",
        "kills_grader",  # its supervisor is pid 1 and drops the SIGKILL; kill(-1) spares it
    ):  # graded, and gained nothing
        assert rows[name]["status"] == "graded" and float(rows[name][first]) == 0, rows[name]
        assert float(rows[name]["score"]) <= full - points
    for name in ("memory_bomb", "endless_loop"):  # no escape hatch: only that question
        assert _lost_only_first(rows, name), rows[name]
    for path, digest in before.items():  # no submission, source or release changed
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path
    assert (root / "gradebook.db").read_bytes()[:15] == b"SQLite format 3"


def test_broken_submissions_are_not_graded_with_the_reason(graded):
    root, done, _ = graded["basics"]
    rows = _csv(root, "basics")
    assert "not a readable notebook" in rows["corrupt"]["problem"]
    assert rows["magic_in_answer"]["score"] == rows["solution"]["score"]  # refused, noted
    assert "%timeit" in done.stdout and "IPython syntax" in done.stdout


def test_an_edited_or_deleted_test_cell_is_graded_with_a_note(graded):
    """Grading never runs test cells: the student's `pass` in place of the first test, or no
    first test at all, changes no score (nbgrader puts the released cell back, and the
    verdict into it); the note says so in the feedback and in the instructor's report."""
    root, done, _ = graded["basics"]
    rows = _csv(root, "basics")
    (_, _, test, _), *_ = _expected("basics")
    for student, note in (
        ("edits_test", edited_test_note(test)),
        ("deletes_test", deleted_test_note(test)),
    ):
        row = rows[student]
        assert row["status"] == "graded" and row["problem"] == "", row
        assert row["score"] == rows["solution"]["score"] and float(row[test]) > 0, row
        assert done.stdout.count(note) == 1  # in the report, that student's alone
        graded_nb = nbformat.read(root / "autograded" / student / "basics" / "basics.ipynb", 4)
        [cell] = [
            c for c in graded_nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == test
        ]
        assert note in "".join(o.get("text", "") for o in cell.outputs), cell.outputs


def test_the_gradebook_has_the_scores_and_the_secret_stays_in_the_log(graded):
    root, _, _ = graded["basics"]
    from nbgrader.api import Gradebook

    rows = _csv(root, "basics")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for student in ("solution", "wrong_odd", "edits_test", "deletes_test"):
            assert gb.find_submission("basics", student).score == float(rows[student]["score"])
        flagged = gb.find_submission("basics", "corrupt").needs_manual_grade  # NOT GRADED
    assert flagged  # formgrader shows it needs a look
    log = (root / "grading-log.jsonl").read_text()
    seed = str(__import__("json").loads(log.splitlines()[-1])["secret_seed"])
    with nbgrader_api(root) as api:
        result = api.generate_feedback("basics")
    assert result["success"], result.get("error")
    pages = sorted((root / "feedback").glob("*/basics/*.html"))
    assert len(pages) >= 8
    for page in pages:
        html = page.read_text(encoding="utf-8")
        for secret in (seed, "HIDDEN TESTS", "_grading", "secret"):
            assert secret not in html, (page, secret)
    wrong = (root / "feedback" / "wrong_odd" / "basics" / "basics.html").read_text()
    assert "❌ Incorrect" in wrong and "first wrong element" in wrong  # the verdict, in full
