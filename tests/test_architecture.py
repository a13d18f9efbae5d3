"""The package's rooms hold: the import contracts, what the sandbox holds, and a grader
that starts without plotting (docs/architecture.md)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
import tomllib

import gather_course
from gather_course._answer_api import MODULES
from gather_course.grading._sandbox import WORKER

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(gather_course.__file__).resolve().parent
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())",
]


def _lint(cwd: Path, *contracts: str) -> subprocess.CompletedProcess:
    only = [a for c in contracts for a in ("--contract", c)]
    return subprocess.run(
        [*LINT, "--no-cache", *only], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_import_contracts_hold_and_each_says_why():
    found = _lint(ROOT)
    assert found.returncode == 0, found.stdout[-3000:] + found.stderr[-2000:]
    text = (ROOT / "pyproject.toml").read_text()
    contracts = tomllib.loads(text)["tool"]["importlinter"]["contracts"]
    assert {c["id"] for c in contracts} >= {"rooms", "no-plotting-in-grading", "no-circles"}
    for c in contracts:  # a one-line reason in the comment above the contract's type
        block = text[text.index(f'id = "{c["id"]}"') :].split("type =")[0]
        assert "# Why:" in block, f"contract {c['id']} has no '# Why:' line"
        reason = block.split("# Why:")[1].split("\n")
        assert not reason[1].startswith("#"), f"contract {c['id']}: its reason runs past one line"


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("questions/_cases.py", "from ..grading import _scan", "rooms"),
        ("reference.py", "from .course import _twins", "rooms"),
        ("grading/_scan.py", "from .. import draw", "no-plotting-in-grading"),
        ("_i18n.py", "from . import _tier", "no-circles"),  # _tier imports _i18n
    ],
)
def test_a_contract_breaks_when_an_arrow_goes_the_wrong_way(tmp_path, module, line, contract):
    """Each contract can fail: one wrong import in a copy of the package breaks it."""
    shutil.copytree(PACKAGE, tmp_path / "gather_course", ignore=shutil.ignore_patterns("locale"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    assert _lint(tmp_path, contract).returncode == 0  # the copy keeps it
    target = tmp_path / "gather_course" / module
    target.write_text(target.read_text() + f"\n\ndef _wrong():\n    {line}\n")
    found = _lint(tmp_path, contract)
    assert found.returncode == 1 and "BROKEN" in found.stdout, found.stdout[-2000:]


def _sandbox_modules() -> set[str]:
    workers = (WORKER,) if isinstance(WORKER, str) else WORKER
    return {f"gather_course.{m}" for m in MODULES} | {
        "gather_course." + w.replace("/", ".") for w in workers
    }


def test_the_sandbox_holds_every_module_its_files_import_and_no_plotting():
    """The sandbox's package folder holds only MODULES and the worker's files: whatever they
    import (lazily too) from the package must be among them, or grading an answer that calls
    a public helper would fail only inside the sandbox."""
    graph = grimp.build_graph("gather_course", include_external_packages=True)
    held = _sandbox_modules()
    reached: set[str] = set()
    for module in held:
        reached |= graph.find_upstream_modules(module)
    internal = {m for m in reached if m.startswith("gather_course.")}
    assert internal <= held | {"gather_course"}, sorted(internal - held)
    assert "matplotlib" not in reached


def test_the_grader_and_the_command_line_start_without_matplotlib():
    code = (
        "import sys, gather_course, gather_course.cli, gather_course.grading._grade, "
        "gather_course.grading._notebook_check, gather_course.grading._classes\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n"
        "from gather_course import draw_gather\n"
        "print('matplotlib' in sys.modules, draw_gather.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    before, after = out.stdout.splitlines()
    assert before == "[]"
    assert after == "True gather_course.draw"  # and a learner's drawing still loads it


def test_grade_starts_its_workers_before_this_process_imports_torch(tmp_path):
    """``gather-course grade`` opens the embedded pool before it imports torch, the question
    bank or nbgrader (the workers warm up meanwhile); the package's public names still load
    on first use, ``diagnose`` and ``explain`` as the functions, not their modules."""
    code = (
        "import sys\n"
        "from gather_course.grading import _pools\n"
        "def seen(*a, **k):\n"
        "    print(sorted(m for m in ('torch', 'nbgrader', 'gather_course.questions') "
        "if m in sys.modules))\n"
        "    raise SystemExit(0)\n"
        "_pools.open_pool = seen\n"
        "from gather_course.cli import main\n"
        f"main(['grade', 'basics', '--course', {str(tmp_path / 'course')!r}])\n"
    )
    course = tmp_path / "course"
    (course / "solutions" / "basics").mkdir(parents=True)
    (course / "solutions" / "basics" / "basics.ipynb").write_text("{}")
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    (course / "submitted" / "ada" / "basics").mkdir(parents=True)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
    names = (
        "import gather_course, gather_course.diagnose, gather_course.explain\n"
        "from gather_course import diagnose, explain, exercise\n"
        "print(type(diagnose).__name__, type(explain).__name__, exercise.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", names], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "function function gather_course.questions._question"


# -- what a maintainer can read in one place (docs/architecture.md, "Where to change what") ----


def _room(module: str) -> str:
    """A module's room: its subpackage of gather_course, or "" for the top-level modules."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir() else ""


def _modules(package: Path) -> dict[str, ast.Module]:
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = ast.parse(path.read_text(encoding="utf-8"))
    return found


def _private_imports(module: str, tree: ast.Module, is_package: bool) -> list[str]:
    """``module`` imports a name that starts with ``_`` (gettext's ``_`` aside) from another
    room: a private name crossing a room's border."""
    crossing = []
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = here[: len(here) - node.level + 1] if node.level else []
        target = ".".join([*base, *([node.module] if node.module else [])])
        if not target.startswith("gather_course"):
            continue
        parts = target.split(".")
        if len(parts) > 2 and parts[2].startswith("_") and _room(target) != _room(module):
            crossing.append(f"{module} imports from {target}, a module of another room")
            continue
        for alias in node.names:
            into = f"{target}.{alias.name}"
            room = (
                _room(into)
                if (PACKAGE.parent / into.replace(".", "/")).is_dir()
                or (PACKAGE.parent / (into.replace(".", "/") + ".py")).exists()
                else _room(target)
            )
            if alias.name.startswith("_") and alias.name != "_" and room != _room(module):
                crossing.append(f"{module} imports {alias.name} from {target}")
    return crossing


def test_no_private_name_crosses_a_room():
    """A room's private names (``_Failure``, ``_shapes``, ``_scan``) and its modules stay in
    it: another room imports what the room's front door (its ``__init__``'s ``__all__``)
    names, in either spelling (``from ..grading import _scan`` and ``from ..grading._scan
    import reachable`` are both refused; issues 37 and 51)."""
    crossing = []
    for module, tree in _modules(PACKAGE).items():
        is_package = (PACKAGE.parent / module.replace(".", "/")).is_dir()
        crossing += _private_imports(module, tree, is_package)
    assert crossing == []
    wrong = ast.parse("from ..questions._result import _Failure\nfrom .._i18n import _, N_\n")
    assert _private_imports("gather_course.grading._referee", wrong, False) == [
        "gather_course.grading._referee imports from gather_course.questions._result, a module "
        "of another room"
    ]
    both = "from ..grading import _scan\nfrom ..grading._scan import reachable\n"
    assert len(_private_imports("gather_course.copies._similar", ast.parse(both), False)) == 2
    inside = "from ._scan import reachable\nfrom .._i18n import _\nfrom ..questions import Case\n"
    assert _private_imports("gather_course.grading._referee", ast.parse(inside), False) == []


def test_each_rooms_front_door_lists_names_its_modules_hold():
    """Every name a room's ``__init__`` exports is there (the lazy door would otherwise fail
    only when a command first asks for it), and every room has a door (``__all__``)."""
    import importlib

    for room in sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()):
        package = importlib.import_module(f"gather_course.{room}")
        assert package.__all__, f"gather_course.{room} has no front door"
        for name in package.__all__:
            assert getattr(package, name) is not None, f"gather_course.{room}.{name}"
    with pytest.raises(AttributeError, match="its front door"):
        _ = importlib.import_module("gather_course.grading").no_such_name


def test_no_function_outside_drawing_is_longer_than_80_lines():
    """Each function reads in one sitting; the figures (draw.py, _draw_*.py) lay out their
    panels step by step and may run longer."""
    long = []
    for module, tree in _modules(PACKAGE).items():
        if module.split(".")[-1].startswith(("draw", "_draw")):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > 80:
                    long.append(f"{module}.{node.name}: {lines} lines")
    assert long == []


def test_no_module_writes_another_modules_globals():
    """``_worker`` once set ``_procs.TEMPLATE`` and ``_job._FROMBUFFER``: a module's state is
    changed by its own functions (``adopt_template``, ``keep_frombuffer``)."""
    writes = []
    for module, tree in _modules(PACKAGE).items():
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                node.level or "gather_course" in (node.module or "")
            ):
                imported |= {a.asname or a.name for a in node.names}
            elif isinstance(node, ast.Import):
                imported |= {
                    (a.asname or a.name).split(".")[0]
                    for a in node.names
                    if "gather_course" in a.name
                }
        for node in ast.walk(tree):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else ([node.target] if isinstance(node, ast.AugAssign) else [])
            )
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id in imported
                ):
                    mod = PACKAGE.parent / "gather_course"
                    if any(mod.rglob(f"{t.value.id}.py")):  # a module of ours, not a class
                        writes.append(f"{module}: {t.value.id}.{t.attr} = ...")
    assert writes == []


def test_a_jobs_status_is_spelled_only_where_it_is_encoded():
    """Statuses cross the pipe as text, written and read in one place (``_frames.Ended``);
    every other module compares :class:`JobStatus` members, never the strings."""
    from gather_course.grading._frames import JobStatus

    spelled = {s.value for s in JobStatus} - {"signal", "exit"}  # (common words elsewhere)
    found = []
    for module, tree in _modules(PACKAGE / "grading").items():
        if module.endswith("._frames"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in spelled:
                found.append(f"{module}:{node.lineno}: {node.value!r}")
    assert found == []


def _repo_files() -> set[str]:
    skip = {".venv", ".git", "build", "__pycache__", "_material", "node_modules"}
    return {
        p.relative_to(ROOT).as_posix()
        for p in ROOT.rglob("*")
        if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
    }


def test_the_map_names_every_module_and_only_files_that_exist():
    """docs/architecture.md is true: every module of the package is on it, and every file it
    names exists (by its path, or its name where the map says which room it is in)."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    files = _repo_files()
    modules = [f for f in files if f.startswith("gather_course/") and f.endswith(".py")]
    assert len(modules) > 80  # (the walk found the package)
    unnamed = [m for m in modules if Path(m).name != "__init__.py" and Path(m).name not in doc]
    assert unnamed == [], f"not on the map: {unnamed}"
    named = set(re.findall(r"[\w/.-]*\w\.(?:py|md|ipynb|toml)\b", doc)) - {
        "notebooks/NN_topic.ipynb",
        "zh/notebooks/NN_topic.ipynb",
    }
    basenames = {Path(f).name for f in files}
    gone = [
        n
        for n in named
        if n not in files and f"gather_course/{n}" not in files and Path(n).name not in basenames
    ]
    assert gone == [], f"the map names files that do not exist: {gone}"


def test_every_guide_a_file_points_to_exists():
    """A docs/*.md named in the package, the docs, the READMEs or the tests exists."""
    pointed = {}
    sources = [*ROOT.glob("docs/*.md"), ROOT / "README.md", ROOT / "zh" / "README.md"]
    sources += [*(ROOT / "gather_course").rglob("*.py"), *(ROOT / "tests").glob("*.py")]
    for path in sources:
        for name in re.findall(r"docs/[\w.-]+\.md", path.read_text(encoding="utf-8")):
            pointed.setdefault(name, path.relative_to(ROOT).as_posix())
    assert "docs/architecture.md" in pointed
    missing = {n: where for n, where in pointed.items() if not (ROOT / n).is_file()}
    assert missing == {}, missing


def test_each_class_name_is_used_once_in_the_package():
    """One type, one name: a class name defined in two modules is a reader's trap (there
    were two Outcome, two Timing and two Diagnosis)."""
    homes: dict[str, list[str]] = {}
    for path in sorted((ROOT / "gather_course").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                homes.setdefault(node.name, []).append(path.relative_to(ROOT).as_posix())
    assert len(homes) > 40
    twice = {name: where for name, where in homes.items() if len(where) > 1}
    assert twice == {}, twice


LONG = 410  # lines: "about 400"


def test_a_long_module_says_why_it_is_one_idea():
    """No module runs past about 400 lines unless its length is one idea: its docstring says
    which ("Long on purpose"), and the map's "Long modules, kept whole" names it (issue 51)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    kept = text.split("## Long modules, kept whole", 1)[1].split("\n## ", 1)[0]
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines <= LONG:
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert "Long on purpose" in doc, f"{rel} has {lines} lines: split it, or say why"
        assert f"`{rel}`" in kept, f"{rel} ({lines} lines) is not in the map's long modules"
        long.append(rel)
    assert long, "no long module: this test would check nothing (lower LONG?)"
