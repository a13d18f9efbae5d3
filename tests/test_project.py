"""The repository agrees with itself: dependencies, README vs CI, API size, notebooks."""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest
import tomllib
import yaml
from packaging.requirements import Requirement

import gather_course
from gather_course.grading._submission import graded_cells, practice_cell
from tests.helpers import ROOT, readme_command, website_build

CONDA_TO_PIP = {"pytorch": "torch"}


def pyproject_deps():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = [Requirement(r) for r in data["project"]["dependencies"]]
    return {r.name.lower(): str(r.specifier) for r in reqs}


def conda_deps():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = {}
    items = [i for i in env["dependencies"] if isinstance(i, str)]
    items += [
        i
        for d in env["dependencies"]
        if isinstance(d, dict)
        for i in d.get("pip", [])
        if not i.startswith("-")
    ]  # what conda-forge lacks comes from pip
    for item in items:
        item = item.split("#")[0].strip()
        name, spec = re.match(r"([A-Za-z0-9_.-]+)\s*(.*)", item).groups()
        if name in ("python", "pip"):
            continue
        deps[CONDA_TO_PIP.get(name, name).lower()] = str(
            Requirement("x" + spec.replace(" ", "")).specifier
        )
    return deps


def test_environment_yml_and_pyproject_declare_the_same_packages():
    assert conda_deps() == pyproject_deps()
    assert {"jupyterlab", "torch", "nbgrader", "matplotlib"} <= set(pyproject_deps())
    assert not {"pytest", "nbval", "playwright"} & set(pyproject_deps())  # test tools: extra
    assert "copydetect" not in pyproject_deps()  # the copy report's: an instructor's extra


def test_ci_runs_the_readme_commands_verbatim():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_command("test-setup") in ci
    assert readme_command("test") in ci
    assert any(line.startswith(readme_command("test-zh")) for line in ci)
    assert any(line.startswith(readme_command("test-browser")) for line in ci)
    assert any(line.startswith(readme_command("test-classroom")) for line in ci)
    assert any(line.startswith(readme_command("test-wheel")) for line in ci)
    assert readme_command("test-setup").endswith('python -m pip install -e ".[test]"')


def test_the_learners_set_up_is_clone_then_install_without_test_tools():
    setup = readme_command("setup")
    repo = website_build().repository(ROOT)
    assert setup.startswith(f"git clone https://github.com/{repo} && cd {repo.split('/')[1]} &&")
    assert setup.endswith("python -m pip install -e .")  # no extra: what a learner needs
    assert readme_command("open") == "gather-course start"


# every address of the course's own repository; others (the MAE code, bubblewrap) are cited
_REPO_LINK = re.compile(
    r"(?:github\.com/|mybinder\.org/v2/gh/|colab\.research\.google\.com/github/)"
    r"([\w.-]+/[\w.-]+)"
)
_CITED = {"facebookresearch/mae", "containers/bubblewrap", "jupyter/nbgrader"}


def test_every_link_to_the_repository_comes_from_the_one_setting():
    repo = website_build().repository(ROOT)  # pyproject.toml's [project.urls]; no placeholder
    texts = [ROOT / "README.md", ROOT / "zh" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = 0
    for path in texts:
        for slug in _REPO_LINK.findall(path.read_text(encoding="utf-8")):
            slug = slug.removesuffix(".git")
            if slug not in _CITED:
                assert slug == repo, f"{path.relative_to(ROOT)}: {slug} (the setting says {repo})"
                found += 1
    assert found >= 13  # the clone line, Binder, twelve Colab links
    assert "OWNER/REPO" not in "".join(p.read_text(encoding="utf-8") for p in texts)


def _minutes(path: Path) -> int:
    """The README's estimate: 120 words a minute of text, a minute a code cell, ten minutes a
    graded question; rounded to five minutes. An exercise's "practise more" section (its
    heading and its practice cells, at the end) is extra and not counted."""
    nb = nbformat.read(path, as_version=4)
    first = next((i for i, c in enumerate(nb.cells) if practice_cell(c)), None)
    if first is not None:
        assert nb.cells[first - 1].source.startswith("## Practise more"), path
        nb.cells = nb.cells[: first - 1]
    words = sum(len(re.findall(r"\w+", c.source)) for c in nb.cells if c.cell_type == "markdown")
    code = sum(c.cell_type == "code" for c in nb.cells)
    questions = len(graded_cells(nb)) if "exercises" in path.parts else 0
    minutes = words / 120 + (code if not questions else 0) + 10 * questions
    return max(5, 5 * round(minutes / 5))


def test_the_readme_lists_every_lecture_with_its_exercise_colab_links_and_times():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("<!-- lectures -->", 1)[1].split("\n\n", 1)[0].strip().splitlines()[2:]
    build = website_build()
    colab = build.colab_url(build.repository(ROOT), build.release_tag(ROOT), "")
    lectures = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert len(table) == len(lectures) == 6
    for row, name in zip(table, lectures):
        cells = [c.strip() for c in row.strip("|").split("|")]
        lecture, exercise = (
            f"notebooks/{name}",
            re.search(r"\((exercises/[\w/]+\.ipynb)\)", cells[4])[1],
        )
        assert f"]({lecture}) ([Colab]({colab}{lecture}))" in cells[1], row
        assert f"]({exercise}) ([Colab]({colab}{exercise}))" in cells[4], row
        assert exercise in (ROOT / "notebooks" / name).read_text(encoding="utf-8"), (name, exercise)
        assert cells[3] == f"{_minutes(ROOT / lecture)} min", (name, cells[3])
        assert cells[5] == f"{_minutes(ROOT / exercise)} min", (exercise, cells[5])


def test_the_chinese_readme_starts_with_the_learner_and_lists_the_chinese_lectures():
    """zh/README.md: what you need, the two commands, then every Chinese lecture and exercise
    with its Colab link (the zh/ files) and the English table's times."""
    text = (ROOT / "zh" / "README.md").read_text(encoding="utf-8")
    assert text.index("**你需要：**") < text.index(readme_command("setup")) < text.index("## 讲义")
    assert "gather-course start --lang zh" in text
    build = website_build()
    colab = build.colab_url(build.repository(ROOT), build.release_tag(ROOT), "zh/")
    rows = [line for line in text.splitlines() if re.match(r"\| 0\d \|", line)]
    english = (ROOT / "README.md").read_text(encoding="utf-8").split("<!-- lectures -->", 1)[1]
    minutes = re.findall(r"\| (\d+) min \|", english.split("\n\n", 1)[0])
    lectures = sorted(p.name for p in (ROOT / "zh" / "notebooks").glob("*.ipynb"))
    assert len(rows) == len(lectures) == 6
    for row, name, (lecture_min, exercise_min) in zip(rows, lectures, zip(*[iter(minutes)] * 2)):
        cells = [c.strip() for c in row.strip("|").split("|")]
        exercise = re.search(r"\((exercises/[\w/]+\.ipynb)\)", cells[4])[1]
        assert f"](notebooks/{name})（[Colab]({colab}notebooks/{name})）" in cells[1], row
        assert f"]({exercise})（[Colab]({colab}{exercise})）" in cells[4], row
        assert (ROOT / "zh" / exercise).is_file(), exercise
        assert (cells[3], cells[5]) == (f"{lecture_min} 分钟", f"{exercise_min} 分钟"), row


def test_notebooks_use_public_names_only():
    """Lectures, solutions and exercises (every edition) import the package's public names."""
    private = re.compile(r"\bgather_course(?:\.\w+)*\._\w|\bfrom \.|\b_check\b|\b_grading\b")
    offenders = []
    paths = [
        p
        for top in ("notebooks", "solutions", "exercises", "zh")
        for p in sorted((ROOT / top).glob("**/*.ipynb"))
        if ".ipynb_checkpoints" not in p.parts
    ]
    assert len(paths) >= 18
    for path in paths:
        for i, cell in enumerate(nbformat.read(path, 4).cells):
            if cell.cell_type == "code" and private.search(cell.source):
                offenders.append(
                    f"{path.relative_to(ROOT)} cell {i}: {private.search(cell.source)[0]}"
                )
    assert not offenders, offenders


def test_public_api_is_small_and_explicit():
    assert 5 <= len(gather_course.__all__) <= 12
    assert all(hasattr(gather_course, name) for name in gather_course.__all__)
    errors = [n for n in gather_course.__all__ if n.endswith("Error")]
    assert errors == ["GatherCourseError"]


def test_library_never_prints_results_or_shows_plots():
    package = ROOT / "gather_course"
    for path in package.rglob("*.py"):
        room = path.relative_to(package).parts[0]
        if room == "cli":
            continue  # the command line talks to a terminal
        # the class report's business is a file: its pictures are saved into its page
        banned = ("print", "show") if room == "report" else ("print", "show", "savefig")
        tree = ast.parse(path.read_text())
        asked = {  # a figure drawn into bytes when a notebook asks for its picture
            id(n)
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and f.name == "_repr_png_"
            for n in ast.walk(f)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and id(node) not in asked:
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
                assert name not in banned, f"{path.name}:{node.lineno}"


def notebooks():
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_lecture_notebooks_are_stored_executed_and_clean():
    assert notebooks(), "no lecture notebooks"
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        counts = [c.execution_count for c in code]
        assert counts == list(range(1, len(code) + 1)), f"{path.name}: not executed in order"
        for cell in code:
            assert "execution" not in cell.metadata, f"{path.name}: timing metadata stored"
            for out in cell.outputs:
                assert out.output_type != "error" or "raises-exception" in cell.metadata.get(
                    "tags", []
                )
        text = path.read_text()
        assert "device='cuda" not in text, f"{path.name}: stored from a GPU run"
        assert not re.search(r"0x[0-9a-f]{8,}", text), f"{path.name}: memory address in outputs"


def test_notebooks_import_the_package_rather_than_copying_it():
    for path in notebooks():
        src = "\n".join(
            c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
        )
        assert "from gather_course import" in src
        assert "def gather_reference" not in src and "def diagnose" not in src
        assert "import *" not in src and "!wget" not in src


LECTURES = {
    "01_basic_formula": "basics",
    "02_nlp_label_scores": "nlp",
    "03_pixel_indexing": "vision",
    "04_topk_patch_selection": "topk",
    "05_mae_random_masking": "mae",
    "06_gather_and_friends": "friends",
}


def test_six_lectures_each_with_your_turn_cells_a_summary_and_its_graded_exercise():
    assert [p.stem for p in notebooks()] == list(LECTURES)
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert "torch.manual_seed(0)" in code and "default_device()" in code
        assert "**After this lecture you can**" in prose and "## Summary" in prose
        assert re.search(r'exercise\("[\w.]+"\)\.check\(', code), path.name
        assert f"exercises/{LECTURES[path.stem]}/" in prose, path.name
        assert "draw_gather(" in code, path.name


def test_only_timing_cells_are_left_out_of_the_output_comparison():
    for path in notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            ignored = "nbval-ignore-output" in cell.metadata.get("tags", [])
            times = bool(
                re.search(
                    r"benchmark\.Timer|time\.(time|perf_counter)\(|"
                    r"\b(compare|measure|run_suite)\(",
                    cell.source,
                )
            )
            assert ignored == times, f"{path.name}: {cell.source[:60]!r}"
            assert ignored == cell.source.startswith("# timing"), path.name


def test_every_lecture_names_its_source_articles_in_a_table():
    """The Sources cell lists every article the lecture cites, with its Chinese title."""
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = nbformat.read(path, 4).cells
        sources = next((c.source for c in cells[:3] if c.source.startswith("**Sources.**")), None)
        assert sources, f"{path.name}: no **Sources.** cell near the top"
        rows = {
            line.split("|")[1].strip(): line.split("|")[2]
            for line in sources.splitlines()
            if re.match(r"\| 00\d", line)
        }
        cited = set()
        for cell in cells:
            if cell.cell_type == "markdown" and cell.source != sources:
                cited |= set(re.findall(r"\b(00[0-24]|003-[ABC])\b", cell.source))
        assert cited <= set(rows), (
            f"{path.name}: cites {sorted(cited - set(rows))} not in the table"
        )
        for article, title in rows.items():
            assert article == "003-C" or article == "000" or cjk.search(title), (path.name, article)


SEEDS = ROOT.parent / "shared" / "seeds"  # the source articles, next to a maintainer's checkout


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the source articles are not in ../shared/seeds")
def test_every_quote_of_an_article_is_copied_exactly_from_it():
    """A correction quotes the article's own sentence (`> 原文（001 §4）：「…」`), so a reader
    can find it: every quoted sentence or code span is a verbatim piece of an article."""
    articles = "".join(p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.txt")))
    quotes, wrong = 0, []
    for path in sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("zh/notebooks/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            lines = [x for x in cell.source.splitlines() if x.lstrip().startswith("> 原文")]
            for line in lines if cell.cell_type == "markdown" else []:
                for quote in re.findall(r"「(.+?)」", line) + re.findall(r"`([^`]+)`", line):
                    quotes += 1
                    if quote not in articles:
                        wrong.append(f"{path.relative_to(ROOT)}: {quote[:60]}")
    assert quotes >= 30 and not wrong, wrong


def test_every_stub_is_written_the_way_the_exercise_cells_write_it():
    """Lectures' "your turn" cells, their Markdown and the exercises: one stub, nbgrader's."""
    found = 0
    for path in sorted(ROOT.glob("**/*.ipynb")):
        if ".venv" in path.parts or "build" in path.parts or ".ipynb_checkpoints" in path.parts:
            continue
        for cell in nbformat.read(path, as_version=4).cells:
            for stub in re.findall(r"raise NotImplementedError\W{0,2}", cell.source):
                assert stub.startswith("raise NotImplementedError()"), (path, cell.source[:80])
                found += 1
    assert found >= 70


# The stored lectures' size budget (both editions): their figures are stored at twice the size
# they are shown at, and the wheel carries them (docs/maintainers.md).
LECTURES_BUDGET = 4 * 2**20


def test_lecture_figures_are_stored_at_twice_their_shown_size_within_the_budget():
    """Sharp on a phone and on a high-density screen: every PNG a lecture stores is twice the
    width its metadata shows it at (``gather-course execute`` runs the kernel with retina
    figures); together the lectures of both editions stay within the budget."""
    import base64
    import struct

    total = 0
    for path in sorted(
        [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "zh" / "notebooks").glob("*.ipynb")]
    ):
        total += path.stat().st_size
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for out in cell.get("outputs", []):
                png = out.get("data", {}).get("image/png")
                if png is None:
                    continue
                width = struct.unpack(">I", base64.b64decode(png)[16:20])[0]  # the IHDR chunk
                shown = out.get("metadata", {}).get("image/png", {}).get("width")
                assert shown and width >= 2 * shown - 1, (path.name, width, shown)
    assert total <= LECTURES_BUDGET, f"{total / 2**20:.1f} MiB"


def test_the_nbgrader_we_mirror_is_the_one_the_package_accepts():
    """The *Once preprocessors re-use nbgrader 0.9's internals: the requirement's range holds
    the installed nbgrader, stops before 0.10, and the internals they call are there."""
    from importlib.metadata import requires, version

    from nbgrader.preprocessors import AssignLatePenalties, OverwriteCells, SaveAutoGrades
    from packaging.requirements import Requirement

    (pin,) = [Requirement(r) for r in requires("gather-course") if r.startswith("nbgrader")]
    assert version("nbgrader") in pin.specifier
    assert "0.10.0" not in pin.specifier and "0.9.5" not in pin.specifier
    for cls, names in (
        (OverwriteCells, ("add_missing_grade_cells", "add_missing_task_cells")),
        (AssignLatePenalties, ("_check_late_penalty", "init_plugin")),
        (SaveAutoGrades, ("preprocess_cell",)),
    ):
        assert all(hasattr(cls, name) for name in names), (cls, names)


# The bank's counts, wherever a guide states them: written in words or digits, and checked
# against the bank itself (a question added or given variants makes this fail until the
# guides say so).
_NUMBERS = "zero one two three four five six seven eight nine ten eleven twelve thirteen "
_NUMBERS += "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
_N = r"(\d+|" + "|".join(_NUMBERS.split()) + ")"
_COUNTED = re.compile(
    rf"(?:\b(?P<some>{_N}) of the (?P<all1>{_N}) questions)"
    rf"|(?:\ball (?P<all2>{_N}) questions)"
    rf"|(?:\((?P<all3>{_N}) questions\))"
    rf"|(?:\bThe (?P<all4>{_N}) questions)",
    re.IGNORECASE,
)


def _count(word: str) -> int:
    words = _NUMBERS.split()
    return int(word) if word.isdigit() else words.index(word.lower())


def test_every_count_of_the_bank_a_guide_states_is_the_banks():
    from gather_course import exercise, exercise_ids

    total = len(exercise_ids())
    with_variants = sum(exercise(qid).family is not None for qid in exercise_ids())
    found = 0
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for m in _COUNTED.finditer(path.read_text(encoding="utf-8")):
            said = next(m[g] for g in ("all1", "all2", "all3", "all4") if m[g])
            assert _count(said) == total, (path.name, m[0], total)
            if m["some"]:
                assert _count(m["some"]) == with_variants, (path.name, m[0], with_variants)
            found += 1
    assert found >= 4  # README's two, the instructor guide's three
    assert _count("eleven") == 11 and _count("15") == 15
