"""The referee and its sandboxed worker: every catalogue answer judged the grading way, the
static scan, what runs of a notebook, and what the worker's process can and cannot do.

These run the learner code the way grading does (in the worker, never in this process),
so a verdict here is what ``gather-course grade`` and ``check`` give.
"""

from __future__ import annotations

import dataclasses
import os
import textwrap

import nbformat
import pytest
import torch
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from gather_course import CheckResult, exercise, exercise_ids
from gather_course import Tier as T
from gather_course._i18n import speaking
from gather_course.grading import _scan
from gather_course.grading._sandbox import SANDBOX, isolation
from gather_course.grading._submission import read_submission
from gather_course.questions._outcome import (
    Opaque,  # what the referee sends for values it cannot carry
)
from tests import answers
from tests.answers import RIGHT, WRONG
from tests.helpers import ROOT
from tests.helpers import judge as _judge

ANSWERS = (ROOT / "tests" / "answers.py").read_text(encoding="utf-8")
IMPORTS = "import itertools\nimport torch\nimport torch.nn.functional as F\n"
REQUIRE_SANDBOX = os.environ.get("GATHER_COURSE_REQUIRE_SANDBOX", "") not in ("", "0")


def test_ci_has_the_sandbox():
    if REQUIRE_SANDBOX:
        assert isolation().level == SANDBOX, str(isolation())


# ------------------------------------------------------------------ the catalogue, graded
@pytest.mark.parametrize("qid", exercise_ids())
def test_own_solution_passes_with_hidden_cases(referee, qid):
    result = _judge(referee, qid, [IMPORTS, exercise(qid).solution_code])
    assert result.passed, str(result)
    assert "hidden cases" in result.headline


@pytest.mark.parametrize("qid, name", [(q, f.__name__) for q, fs in RIGHT.items() for f in fs])
def test_other_correct_answers_pass(referee, qid, name):
    result = _judge(referee, qid, [ANSWERS, f"{exercise(qid).name} = {name}\n"])
    assert result.passed, str(result)


@pytest.mark.parametrize(
    "qid, name, tier", [(q, f.__name__, t) for q, items in WRONG.items() for f, t in items]
)
def test_typical_wrong_answers_fail_at_their_tier(referee, qid, name, tier):
    result = _judge(referee, qid, [ANSWERS, f"{exercise(qid).name} = {name}\n"], secret=None)
    assert not result.passed and result.tier == tier, str(result)
    local = exercise(qid).check(getattr(answers, name))
    assert result.tier == local.tier  # what check() says in the notebook, and in words
    if tier != T.CONSTRAINTS:  # (the referee names the line that breaks a constraint)
        assert str(result) == str(local)


# ------------------------------------------------------------ constraints that can't be escaped
PICK = "import torch\n"
LISTS = (
    "def pick_per_row(x, cols):\n    xl, cl = x.tolist(), cols.tolist()\n"
    "    return torch.tensor([[r[c] for c in cs] for r, cs in zip(xl, cl)], "
    "dtype=x.dtype).reshape(cols.shape)\n"
)  # a Python loop over lists
EVASIONS = {  # each tries to use gather in basics.gather_loop without the scan seeing it
    "getattr": "g = getattr(torch, 'gat' + 'her')\ndef gather_loop(input, dim, index):\n"
    "    return g(input, dim, index)\n",
    "torch internals": "def gather_loop(input, dim, index):\n"
    "    return torch.ops.aten.gather.default(input, dim, index)\n",
    "_C": "def gather_loop(input, dim, index):\n"
    "    return torch._C._VariableFunctions.gather(input, dim, index)\n",
    "numpy": "import numpy as np\ndef gather_loop(input, dim, index):\n"
    "    d = dim % input.dim()\n"
    "    part = input.numpy()[tuple(slice(None) if k == d else slice(0, s)\n"
    "                               for k, s in enumerate(index.shape))]\n"
    "    return torch.from_numpy(np.take_along_axis(part, index.long().numpy(), d))\n",
    "thread": "import threading\ndef gather_loop(input, dim, index):\n    box = []\n"
    "    t = threading.Thread(target=lambda: box.append(torch.gather(input, dim, index)))\n"
    "    t.start(); t.join()\n    return box[0]\n",
    "eval": "def gather_loop(input, dim, index):\n"
    "    return eval('torch.' + 'gat' + 'her')(input, dim, index)\n",
    "alias in a patch": "torch.Tensor.pick = torch.Tensor.gather\n"
    "def gather_loop(input, dim, index):\n    return input.pick(dim, index)\n",
}


@pytest.mark.parametrize("how", EVASIONS)
def test_a_forbidden_op_cannot_be_reached_another_way(referee, how):
    result = _judge(referee, "basics.gather_loop", [PICK, EVASIONS[how]])
    assert result.tier == T.CONSTRAINTS, str(result)


def test_list_loops_are_measured_as_not_vectorized_even_in_another_process(referee):
    result = _judge(referee, "basics.pick_per_row", [PICK, LISTS])
    assert result.tier == T.NOT_VECTORIZED and "CPU" in str(result), str(result)
    forked = (
        "import os, pickle\ndef pick_per_row(x, cols):\n    r, w = os.pipe()\n"
        "    if os.fork() == 0:\n        xl, cl = x.tolist(), cols.tolist()\n"
        "        data = pickle.dumps([[a[c] for c in cs] for a, cs in zip(xl, cl)])\n"
        "        with os.fdopen(w, 'wb') as f: f.write(data)\n        os._exit(0)\n"
        "    os.close(w)\n    with os.fdopen(r, 'rb') as f: rows = pickle.loads(f.read())\n"
        "    return torch.tensor(rows, dtype=x.dtype)\n"
    )
    assert _judge(referee, "basics.pick_per_row", [PICK, forked]).tier == T.NOT_VECTORIZED


def test_an_answer_that_cheats_only_on_large_inputs_is_caught(referee):
    fake = LISTS.replace(
        "    xl, cl",
        "    if x.numel() > 10**5:\n"
        "        return torch.zeros(cols.shape, dtype=x.dtype)\n    xl, cl",
    )
    result = _judge(referee, "basics.pick_per_row", [PICK, fake])
    assert result.tier == T.WRONG_VALUES and "large input" in result.headline, str(result)


def test_honest_answers_that_print_to_stderr_and_warn_pass(referee):
    noisy = (
        "import sys, warnings\ndef pick_per_row(x, cols):\n"
        "    print('debug', cols.shape, file=sys.stderr)\n"
        "    warnings.warn('just a warning')\n"
        "    torch.meshgrid(torch.arange(2), torch.arange(2))   # torch's own warning\n"
        "    return torch.gather(x, 1, cols)\n"
    )
    assert _judge(referee, "basics.pick_per_row", [PICK, noisy]).passed


# ------------------------------------------------------------------ the static scan
def test_scan_follows_names_and_keeps_patches():
    cells = [
        "import torch\nimport numpy as np\n",
        "def helper(x):\n    return x.gather(1, x)\ndef unused():\n    return np.zeros(1)\n",
        "def f(x):\n    return helper(x)\n",
        "torch.Tensor.thing = 1\n",
    ]
    code = _scan.reachable(cells, "f")
    names = {n.name for n in _scan.names_used(code, {"gather", "zeros"})}
    assert names == {"gather"}  # unused() is not reachable from f
    assert any(isinstance(stmt, __import__("ast").Assign) for _, stmt in code)  # the patch
    assert _scan.escape_hatches(_scan.reachable(cells, "unused"))  # numpy, reached


# ------------------------------------------------------------------ what runs of a notebook
def _course_nb(answer: str, extra: list[str] = ()) -> nbformat.NotebookNode:
    def meta(gid, **kw):
        return {
            "nbgrader": {
                "grade_id": gid,
                "schema_version": 3,
                "grade": False,
                "solution": False,
                "locked": False,
                "task": False,
                **kw,
            }
        }

    cells = [
        new_markdown_cell("# title", metadata=meta("intro", locked=True)),
        new_code_cell("import torch\n", metadata=meta("setup", locked=True)),
        new_code_cell(answer, metadata=meta("pick_per_row", solution=True)),
        new_code_cell(
            'exercise("basics.pick_per_row").check(pick_per_row)',
            metadata=meta("test_pick_per_row", grade=True, locked=True, points=2),
        ),
    ]
    cells += [new_code_cell(src) for src in extra]
    return new_notebook(cells=cells)


def test_read_submission_runs_answers_and_the_course_cells_and_refuses_magics():
    released = _course_nb("raise NotImplementedError()")
    submitted = _course_nb(
        "def pick_per_row(x, cols):\n    return x\n",
        ["%timeit pick_per_row(1, 2)", "!ls /", "def helper():\n    pass"],
    )
    submitted.cells[1].source = "import os; os.system('rm -rf ~')"  # a locked cell, edited
    sub = read_submission(submitted, released)
    assert sub.cells == [
        "import torch\n",
        "def pick_per_row(x, cols):\n    return x\n",
        "def helper():\n    pass",
    ]
    assert len(sub.notes) == 2 and "%timeit" in sub.notes[0] and "!ls" in sub.notes[1]


# ------------------------------------------------------------------ the worker's process
def test_the_worker_cannot_see_the_course_or_reach_the_network(referee):
    if isolation().level != SANDBOX:
        pytest.skip(f"no sandbox here: {isolation()}")
    course = [ROOT / "solutions", ROOT / "tests", ROOT / "pyproject.toml"]
    before = (ROOT / "pyproject.toml").read_bytes()
    probe = textwrap.dedent(f"""
        import os, socket
        seen = any(os.path.exists(p) for p in {[str(p) for p in course]!r})
        try:
            socket.create_connection(("127.0.0.1", 22), timeout=1); net = True
        except OSError:
            net = False
        try:                  # (at most a file of the sandbox's own /tmp, never the real one)
            open({str(ROOT / "pyproject.toml")!r}, 'a').write('# hacked')
        except OSError:
            pass
        def pick_per_row(x, cols):
            return torch.gather(x, 1, cols) + (1 if seen or net else 0)
        """)
    assert _judge(referee, "basics.pick_per_row", [PICK, probe], secret=None).passed
    assert (ROOT / "pyproject.toml").read_bytes() == before


def test_where_an_error_happened_is_said_in_the_learners_language(referee):
    raising = "def pick_per_row(x, cols):\n    y = x + 1\n    raise ValueError('mine')\n"
    result = _judge(referee, "basics.pick_per_row", [PICK, raising])
    assert ("where", "line 3: raise ValueError('mine')") in result.details, str(result)
    with speaking("zh"):
        result = _judge(referee, "basics.pick_per_row", [PICK, raising])
        text = str(result)
    assert "  出错位置：第 3 行：raise ValueError('mine')" in text, text
    assert text.startswith("❌ 不正确（basics.pick_per_row）：你的函数抛出了 ValueError"), text


def test_a_result_larger_than_any_answer_is_refused_with_its_size(referee):
    """Results are capped at 64 MB (4x the largest right answer on a timing input): a job
    that forged a 240 MB message had cost the referee 1.2 GiB to load it."""
    huge = "def pick_per_row(x, cols):\n    return torch.zeros(20_000_000)\n"  # 80 MB
    result = _judge(referee, "basics.pick_per_row", [PICK, huge], secret=None)
    assert result.tier == T.EXCEPTION and "more than 64 MB" in result.headline, str(result)


def test_endless_loops_memory_bombs_and_leftover_processes(referee):
    referee.call_limit = 2
    try:
        _limits(referee)
    finally:
        referee.call_limit = 10


def _limits(referee):
    loop = "def pick_per_row(x, cols):\n    while True:\n        pass\n"
    with speaking("zh"):  # the job sends the limit; the referee words it for the learner
        result = _judge(referee, "basics.pick_per_row", [PICK, loop], secret=None)
    assert result.tier == T.EXCEPTION and "运行超过了 2 秒，已被停止" in result.headline, str(
        result
    )
    bomb = "def pick_per_row(x, cols):\n    return torch.empty(10**11)\n"
    result = _judge(referee, "basics.pick_per_row", [PICK, bomb], secret=None)
    assert result.tier == T.EXCEPTION, str(result)
    marker = f"/tmp/left-behind-{os.getpid()}"
    daemon = (
        f"import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(1)\n"
        f"    open({marker!r}, 'w').close()\n    os._exit(0)\n"
        "def pick_per_row(x, cols):\n    return torch.gather(x, 1, cols)\n"
    )
    assert _judge(referee, "basics.pick_per_row", [PICK, daemon], secret=None).passed
    if isolation().level == SANDBOX:  # a fork bomb, and one that hoards memory
        bomb = (
            "import os, time\nfor _ in range(300):\n    if os.fork() == 0:\n"
            "        hog = bytearray(50 * 2**20); time.sleep(30); os._exit(0)\n"
            "def pick_per_row(x, cols):\n    return torch.gather(x, 1, cols)\n"
        )
        result = _judge(referee, "basics.pick_per_row", [PICK, bomb], secret=None)
        assert result.tier == T.EXCEPTION and "killed" in result.headline, str(result)
    ok = (
        "import os\ndef pick_per_row(x, cols):\n"
        f"    assert not os.path.exists({marker!r})\n    return torch.gather(x, 1, cols)\n"
    )
    import time

    time.sleep(1.5)
    assert _judge(referee, "basics.pick_per_row", [PICK, ok], secret=None).passed


def test_nothing_done_in_the_worker_changes_this_process(referee):
    before = (torch.equal, torch.Tensor.__eq__, CheckResult.assert_passed)
    patch = (
        "import gather_course.questions._result as C\n"
        "torch.equal = lambda *a, **k: True\nC.CheckResult.__bool__ = lambda s: True\n"
        "def pick_per_row(x, cols):\n    return x[:, :cols.shape[1]]\n"
    )
    assert not _judge(referee, "basics.pick_per_row", [PICK, patch]).passed
    assert (torch.equal, torch.Tensor.__eq__, CheckResult.assert_passed) == before


def test_a_failure_on_a_hidden_case_shows_shapes_and_position_but_no_values(referee):
    # right on the visible battery (its largest input has 6 rows), wrong on larger ones
    cells = [
        PICK,
        "def pick_per_row(x, cols):\n    out = torch.gather(x, 1, cols)\n"
        "    return out if x.shape[0] <= 6 else out + 1\n",
    ]
    result = _judge(referee, "basics.pick_per_row", cells)
    text = str(result)
    assert result.tier == T.WRONG_VALUES and "hidden case" in text, text
    assert "first wrong element" in text and "not shown for hidden cases" in text
    assert "expected:" not in text and "formula:" not in text


# ------------------------------------------------------------------ found by attacking it
ANSWERS_BASICS = [
    IMPORTS,
    exercise("basics.pick_per_row").solution_code,
    exercise("basics.gather_loop").solution_code,
]


def test_what_the_worker_sends_back_cannot_crash_the_referee(referee):
    sparse = (
        "real_save = torch.save\ndef fake_save(obj, f, *a, **k):\n"
        "    for r in obj.get('results', []):\n"
        "        if isinstance(r, dict) and type(r.get('value')) is torch.Tensor:\n"
        "            r['value'] = r['value'].to_sparse()\n"
        "    return real_save(obj, f, *a, **k)\ntorch.save = fake_save\n"
    )  # (reaching into gather_course.grading._worker is refused: test_grading_isolation.py)
    result = _judge(referee, "basics.pick_per_row", ANSWERS_BASICS + [sparse])
    assert result.passed or result.tier == T.WRONG_TYPE, str(result)  # judged, no crash
    from gather_course.grading._jobdata import _value

    assert isinstance(_value(torch.eye(2).to_sparse()), Opaque)
    deep: dict = {"sequence": []}
    deep["sequence"].append(deep)
    assert isinstance(_value(deep), (list, tuple, Opaque))  # no recursion error


def test_nothing_written_in_one_job_is_there_for_the_next(referee):
    walk = (
        "import os\ndef _dirs():\n    for top in ('/tmp', '/dev/shm'):\n"
        "        for here, dirs, files in os.walk(top):\n"
        "            if here.count('/') < 6:\n                yield here, files\n"
    )
    plant = (
        (
            walk + "for d, _ in list(_dirs()):\n    try:\n"
            "        open(os.path.join(d, 'share.pt'), 'w').write('x')\n"
            "    except OSError:\n        pass\n"
        )
        if isolation().level == SANDBOX
        else ""
    )
    probe = (
        walk + "def pick_per_row(x, cols):\n"
        "    left = any('share.pt' in files for _, files in _dirs())\n"
        "    return torch.gather(x, 1, cols) + (1 if left else 0)\n"
    )
    assert _judge(referee, "basics.pick_per_row", [PICK, plant + ANSWERS_BASICS[1]]).passed
    assert _judge(referee, "basics.pick_per_row", [PICK, probe], secret=None).passed


def test_faked_operation_counts_cannot_satisfy_a_constraint(referee):
    spoof = (
        "real_save = torch.save\ndef fake_save(obj, f, *a, **k):\n"
        "    for r in obj.get('results', []):\n"
        "        if isinstance(r, dict) and 'ops' in r:\n"
        "            r['ops'] = {'scatter_add': 1}\n"
        "    return real_save(obj, f, *a, **k)\ntorch.save = fake_save\n"
        "def gather_backward(grad_out, dim, index, input_shape):\n"
        "    grad = torch.zeros(input_shape, dtype=grad_out.dtype)\n"
        "    return grad.index_put_(tuple(torch.meshgrid(*[torch.arange(s) for s in "
        "index.shape], indexing='ij')[:dim % index.dim()]) + (index,), grad_out, "
        "accumulate=True) if False else grad.scatter_add(dim, index, grad_out)\n"
    )
    result = _judge(referee, "friends.gather_backward", [PICK, spoof])
    assert result.tier == T.CONSTRAINTS and "torch.save = …" in result.headline, str(result)


def test_a_forbidden_op_behind_a_string_or_a_replayed_input_is_caught(referee):
    sneaky = (
        "import operator\nseen = []\ndef gather_loop(input, dim, index):\n"
        "    for a, b, d in seen:\n        if d == dim and a.shape == input.shape and "
        "torch.equal(a, input):\n            return torch.zeros(index.shape, "
        "dtype=input.dtype)\n    seen.append((input.clone(), index.clone(), dim))\n"
        "    return operator.methodcaller('ga' + 'ther', dim, index.long())(input)\n"
    )
    assert _judge(referee, "basics.gather_loop", [PICK, sneaky]).tier == T.CONSTRAINTS


def test_cpu_burnt_outside_the_calls_does_not_hide_a_loop(referee):
    burn = (
        "import time\nt0 = time.process_time()\nwhile time.process_time() - t0 < 0.5:\n    pass\n"
    )
    result = _judge(referee, "basics.pick_per_row", [PICK, burn, LISTS, burn], secret=None)
    assert result.tier == T.NOT_VECTORIZED, str(result)


def test_honest_notebooks_are_not_flagged_for_what_else_they_hold(referee):
    scratch = [
        IMPORTS,
        "\n" + exercise("basics.pick_per_row").solution_code,  # blank line
        exercise("basics.gather_loop").solution_code,
        'from gather_course import exercise\nexercise("basics.pick_per_row").check(pick_per_row)\n',
        "x = torch.randn(3, 4); i = torch.randint(0, 4, (3, 2))\n"
        "print(torch.equal(gather_loop(x, 1, i), torch.gather(x, 1, i)))\n"
        "out = torch.gather(x, 1, i)\nimport numpy as np\nprint(np.pi)\n",
        "import numpy as np\nprint(np.__version__)\n",
    ]
    assert _judge(referee, "basics.gather_loop", scratch).passed
    assert _judge(referee, "basics.pick_per_row", scratch).passed
    own_helper = (
        "def nll_loss(log_probs, labels):\n"
        "    return -log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)\n"
        "def masked_nll(logits, labels, ignore_index=-100):\n"
        "    keep = labels != ignore_index\n    safe = torch.where(keep, labels, 0)\n"
        "    per_token = nll_loss(torch.log_softmax(logits, dim=-1), safe)\n"
        "    return (per_token * keep).sum() / keep.sum()\n"
    )
    assert _judge(referee, "nlp.masked_nll", [PICK, own_helper]).passed


def test_the_sandbox_reads_no_secrets_of_the_machine(referee):
    if isolation().level != SANDBOX:
        pytest.skip(f"no sandbox here: {isolation()}")
    probe = (
        "import os, subprocess\nopen_ok = os.path.exists('/etc/shadow')\n"
        "nested = subprocess.run(['unshare', '-U', '-r', 'true']).returncode == 0\n"
        "def pick_per_row(x, cols):\n"
        "    return torch.gather(x, 1, cols) + (1 if open_ok or nested else 0)\n"
    )
    assert _judge(referee, "basics.pick_per_row", [PICK, probe], secret=None).passed


def test_slow_cells_cannot_hold_a_worker_for_long(referee):
    import time

    referee.call_limit = 1
    try:
        start = time.monotonic()
        cells = [PICK] + ["import time\ntime.sleep(0.8)\n"] * 30 + [ANSWERS_BASICS[1]]
        result = _judge(referee, "basics.pick_per_row", cells, secret=None)
        assert not result.passed and time.monotonic() - start < 12
    finally:
        referee.call_limit = 10


def test_what_torch_imports_on_a_first_call_is_already_in_every_job(referee):
    # torch.unravel_index imports sympy on its first call (0.3 s of CPU): the template pays it
    # once, so that no job does (and a learner's answer is not charged for it)
    reply, result = referee._job(
        ["import sys\nWARM = 'sympy' in sys.modules\n", "def probe(x):\n    return x + WARM\n"],
        "probe",
        [{"inputs": [torch.zeros(1)]}],
    )
    assert result["results"][0]["value"].item() == 1, (reply, result)


def test_a_grading_runs_plans_are_made_once_and_a_checks_afresh():
    from gather_course.grading._referee import Plan
    from gather_course.questions._judge import expected_of

    kept = Plan.make("basics.pick_per_row", 987654)
    assert Plan.make("basics.pick_per_row", 987654) is kept  # every student: the same cases
    assert Plan.make("basics.pick_per_row", 987655) is not kept  # another run's secret
    fresh = Plan.make("basics.pick_per_row", None)
    assert Plan.make("basics.pick_per_row", None) is not fresh
    calls = []
    spec = kept.question.spec
    q = dataclasses.replace(kept.question, spec=lambda *a: calls.append(1) or spec(*a))
    case = kept.cases[-1]  # a hidden one
    first = expected_of(q, case)
    assert expected_of(q, case) is first and calls == [1]  # computed once
    assert torch.equal(first, spec(*case.inputs.values()))


def test_the_pipes_to_a_worker_carry_a_timing_input_in_large_pieces(referee):
    # 64 KiB by default: the 36 MB timing input and a timing job's 8 MB result crossed in
    # 560 and 130 reads, each a switch between the two processes (docs/benchmarks.md)
    import fcntl

    worker = referee.worker
    for pipe in (worker._in, worker._out):
        assert fcntl.fcntl(pipe, fcntl.F_GETPIPE_SZ) == 1 << 20


def test_a_frame_larger_than_the_pipe_arrives_whole_and_in_order():
    import threading

    from gather_course.grading._frames import read_frame, write_frame

    payload = bytes(range(256)) * (3 * 2**20 // 256 + 7)  # past any pipe's buffer
    r, w = os.pipe()
    writer = threading.Thread(target=write_frame, args=(w, {"n": len(payload)}, payload))
    writer.start()
    try:
        header, got = read_frame(r)
    finally:
        writer.join()
        os.close(r)
        os.close(w)
    assert header == {"n": len(payload)} and got == payload
