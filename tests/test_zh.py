"""The Chinese edition (zh/): every lecture and exercise has a Chinese twin that differs from
the English only in its translated text, its translations are not older than the English, and
the Chinese exercises are released, checked and graded like the English ones."""

from __future__ import annotations

import copy
import csv
import filecmp
import json
import re
import shutil

import nbformat
import pytest
import torch

from gather_course import GatherCourseError, exercise, exercise_ids
from gather_course.course._course import course_root, release
from gather_course.course._twins import (
    code_without_comments,
    read_sources,
    stale_cells,
    sync_twins,
    twin_problems,
    twins,
)
from gather_course.course._workcopy import make_working_copy
from gather_course.questions._question import IMPORTS_CONSTRAINT
from tests.helpers import ROOT, cli

ZH = ROOT / "zh"
CJK = re.compile(r"[\u4e00-\u9fff]")
PAIRS = twins(ROOT)
ENGLISH = [
    *sorted((ROOT / "notebooks").glob("*.ipynb")),
    *sorted((ROOT / "solutions").glob("**/*.ipynb")),
]


def _english_words(markdown: str) -> bool:
    """Whether Markdown has English prose outside code spans, code blocks, math and links."""
    text = re.sub(r"```.*?```|`[^`]*`|\$[^$]*\$|\]\([^)]*\)|<[^>]+>", " ", markdown, flags=re.S)
    return bool(re.search(r"[A-Za-z]{3,} [A-Za-z]{2,} [A-Za-z]{2,}", text))


def test_every_english_notebook_has_a_chinese_twin():
    twinned = {en for en, _zh in PAIRS}
    missing = [p.relative_to(ROOT).as_posix() for p in ENGLISH if p not in twinned]
    assert not missing, f"no Chinese twin in zh/ for: {missing}"


@pytest.mark.parametrize("en, zh", PAIRS, ids=[p.relative_to(ROOT).as_posix() for p, _ in PAIRS])
def test_a_chinese_notebook_is_its_english_twin_with_the_text_translated(en, zh):
    name = en.relative_to(ROOT).as_posix()
    english, chinese = nbformat.read(en, as_version=4), nbformat.read(zh, as_version=4)
    assert not twin_problems(english, chinese, name)
    untranslated = [
        c.get("id")
        for c in chinese.cells
        if c.cell_type == "markdown" and _english_words(c.source) and not CJK.search(c.source)
    ]
    assert not untranslated, (
        f"{zh.relative_to(ROOT)}: Markdown cells still in English: {untranslated}"
    )


def test_no_translation_is_older_than_its_english():
    recorded = read_sources(ROOT)
    stale = []
    for en, _zh in PAIRS:
        name = en.relative_to(ROOT).as_posix()
        stale += stale_cells(nbformat.read(en, as_version=4), recorded.get(name, {}), name)
    assert not stale, (
        "translate these cells in zh/ again, then run `gather-course twins --accept`: "
        + "; ".join(stale)
    )


def test_the_twin_checks_find_drift():
    en, zh = PAIRS[0]
    english = nbformat.read(en, as_version=4)
    code = next(i for i, c in enumerate(english.cells) if c.cell_type == "code" and c.outputs)
    tampered = copy.deepcopy(english)
    tampered.metadata["gather_course"] = {"lang": "zh"}
    assert twin_problems(english, tampered, "x") == []
    tampered.cells[code].outputs = copy.deepcopy(tampered.cells[code].outputs)
    for out in tampered.cells[code].outputs:  # its own Chinese run: other words, same kinds
        out["text" if "text" in out else "data"] = out.get("text", out.get("data"))
    assert twin_problems(english, tampered, "x") == []
    tampered.cells[code].source += "\nx = 1  # 注释"
    tampered.cells[code].outputs = []
    problems = twin_problems(english, tampered, "x")
    assert len(problems) == 2 and "code differs" in problems[0] and "outputs" in problems[1]
    del tampered.cells[0]
    assert "ids, order" in twin_problems(english, tampered, "x")[0]
    assert stale_cells(english, {}, "x"), "a cell never translated counts as stale"
    assert code_without_comments("a = '# kept'  # dropped\n\n# gone\nb = 2") == [
        "a = '# kept'",
        "b = 2",
    ]


def test_twins_rebuilds_from_the_english_and_lists_what_to_translate(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "solutions").mkdir()
    (tmp_path / "zh" / "notebooks").mkdir(parents=True)
    english = nbformat.v4.new_notebook()
    english.cells = [
        nbformat.v4.new_markdown_cell("The formula", id="m1"),
        nbformat.v4.new_code_cell("x = 1  # one", id="c1"),
    ]
    english.cells[1].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    nbformat.write(english, tmp_path / "notebooks" / "01.ipynb")
    chinese = copy.deepcopy(english)
    chinese.cells[0].source = "公式"
    chinese.cells[1].source = "x = 1  # 一"
    chinese.cells[1].outputs = [nbformat.v4.new_output("stream", text="一\n")]  # its own run
    nbformat.write(chinese, tmp_path / "zh" / "notebooks" / "01.ipynb")

    assert sync_twins(tmp_path, accept=True) == []
    rebuilt = nbformat.read(tmp_path / "zh" / "notebooks" / "01.ipynb", as_version=4)
    assert [c.source for c in rebuilt.cells] == ["公式", "x = 1  # 一"]
    assert rebuilt.cells[1].outputs[0].text == "一\n"  # the same code: its Chinese outputs stay
    assert sync_twins(tmp_path) == []
    english.cells[1].source = "x = 2  # two"  # new code: the English outputs until re-run
    english.cells[1].outputs = [nbformat.v4.new_output("stream", text="2\n")]
    nbformat.write(english, tmp_path / "notebooks" / "01.ipynb")
    assert sync_twins(tmp_path) == ["notebooks/01.ipynb, cell c1 (code)"]
    rebuilt = nbformat.read(tmp_path / "zh" / "notebooks" / "01.ipynb", as_version=4)
    assert rebuilt.cells[1].source == "x = 2  # two" and rebuilt.cells[1].outputs[0].text == "2\n"
    english.cells[1].source = "x = 1  # one"
    english.cells[1].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    nbformat.write(english, tmp_path / "notebooks" / "01.ipynb")
    chinese.cells[0].source = "公式"
    nbformat.write(chinese, tmp_path / "zh" / "notebooks" / "01.ipynb")
    assert sync_twins(tmp_path, accept=True) == []

    english.cells[0].source = "The formula, again"  # the English changes, and grows a cell
    english.cells.append(nbformat.v4.new_markdown_cell("New text", id="m2"))
    nbformat.write(english, tmp_path / "notebooks" / "01.ipynb")
    todo = sync_twins(tmp_path)
    assert todo == [
        "notebooks/01.ipynb, cell m1 (markdown)",
        "notebooks/01.ipynb, cell m2 (markdown)",
    ]
    rebuilt = nbformat.read(tmp_path / "zh" / "notebooks" / "01.ipynb", as_version=4)
    assert [c.source for c in rebuilt.cells] == ["公式", "x = 1  # 一", "New text"]


def test_the_chinese_course_is_graded_with_the_english_settings():
    assert course_root(ZH) == ZH.resolve()
    assert (ZH / "nbgrader_config.py").read_text() == (ROOT / "nbgrader_config.py").read_text()
    readme = (ZH / "exercises" / "README.md").read_text(encoding="utf-8")
    assert "请勿手改" in readme and "gather-course release --course zh" in readme


def test_release_regenerates_the_chinese_exercises_byte_identically(tmp_path):
    written = release(course_root(ZH), tmp_path)
    stored = sorted(p.relative_to(ZH / "exercises") for p in (ZH / "exercises").glob("*/*.ipynb"))
    assert sorted(p.relative_to(tmp_path) for p in written) == stored and stored
    for rel in stored:
        assert filecmp.cmp(tmp_path / rel, ZH / "exercises" / rel, shallow=False), (
            f"zh/exercises/{rel} is not what `gather-course release --course zh` writes"
        )


def test_start_copies_the_edition_asked_for(tmp_path):
    copied = make_working_copy(tmp_path / "work", course=ROOT, lang="zh")
    assert copied.added and not copied.kept
    for rel in copied.added:
        assert (copied.folder / rel).read_bytes() == (ZH / rel).read_bytes()
    assert {p.parts[0] for p in copied.added} == {"notebooks", "exercises"}


def test_the_chinese_exercises_stubs_are_in_chinese():
    """nbgrader's code stub (``# YOUR CODE HERE``) is set per edition at release."""
    from gather_course.course._course import CODE_STUB

    stubs = [
        cell.source
        for path in sorted((ZH / "exercises").glob("*/*.ipynb"))
        for cell in nbformat.read(path, 4).cells
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code"
    ]
    assert len(stubs) == len(exercise_ids())  # one answer cell a question of the bank
    first = CODE_STUB["zh"].splitlines()[0]  # indented under the def
    assert all(first in s and "YOUR CODE" not in s for s in stubs), stubs


def test_start_speaks_the_edition_it_copies(tmp_path):
    done = cli("start", str(tmp_path / "work"), "--no-lab", "--lang", "zh")
    assert done.returncode == 0, done.stderr
    assert "Copied" not in done.stdout and "12" in done.stdout, done.stdout
    english = cli("start", str(tmp_path / "work-en"), "--no-lab", "--lang", "en")
    assert english.stdout.startswith("Copied 12 notebooks"), english.stdout


def test_the_glossary_lists_the_terms_the_lectures_use():
    glossary = (ZH / "glossary.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|", glossary, flags=re.M)[2:]
    lectures = "".join(p.read_text(encoding="utf-8") for p in (ZH / "notebooks").glob("*.ipynb"))
    terms = [zh.split("（")[0] for zh, _en in rows]
    assert len(terms) >= 25
    unused = [t for t in terms if t not in lectures]
    assert len(unused) <= len(terms) // 4, f"glossary terms no lecture uses: {unused}"


# the words the glossary retired, as patterns (the left column of its "不用的说法" table)
RETIRED = {
    "笔记本": r"笔记本",
    "单元（指 notebook 的单元格时）": r"单元(?!格)",
    "错位（指因果移位时）": r"(?<![出读])错位(?!置)",
    "追踪结果": r"追踪结果",
    "计分练习（exercise）": r"计分练习（exercise）",
    "规则（指题目对答案的约束时）": r"\*\*规则\*\*：|题目?的?规则",
    # gather and scatter keep their API names; a source article quoted in 「」 keeps its words
    "收集（指 gather 时）": r"收集(?![^「」\n]*」)",
    "分散（指 scatter 时）": r"分散(?![在于开])(?![^「」\n]*」)",  # 分散在内存里: not scatter
    "GPU 内核、CUDA 内核": r"(?:GPU|CUDA)\s?内核",  # a GPU kernel is 核函数; 内核 is Jupyter's
    "不声不响": r"不声不响",
}
# retired in the lectures, the exercises (zh/solutions, zh/exercises), the messages, the READMEs
# and the website (issue 52): one word per concept, as the glossary gives it
RETIRED_HERE = {
    "有效（指索引、id 合法时）": r"有效(?!数字|带宽)",  # valid: 合法 (有效数字 are significant digits)
    "恢复、复原（指 restore 时）": r"恢复|复原",  # restore: 还原
    "操作（指运算时）": r"操作",  # operation: 运算; an aten:: operator: 算子
    "扁平位置、展平后的位置": r"扁平位置|展平后的位置",  # a flat position: 线性位置
    "索引差了几位": r"差了几位",  # off-by-one, one place or several: 差一错误
    "数字后的 ×（表示耗时之比，如 0.73×）": r"(?:\d|\})×(?![\d\s]*\d)",  # 3×4 is a shape
}


def _chinese_texts(kinds: tuple[str, ...] = ("markdown", "code")) -> dict[str, str]:
    """Every Chinese text a learner reads: the notebooks' cells of ``kinds`` (Markdown, and
    code for its comments), the messages, the READMEs and the website's pages."""
    from babel.messages.pofile import read_po

    texts = {}
    for path in sorted(ZH.glob("**/*.ipynb")):
        cells = nbformat.read(path, 4).cells
        texts[str(path.relative_to(ROOT))] = "\n".join(
            c.source for c in cells if c.cell_type in kinds
        )
    with open(ROOT / "gather_course/locale/zh/LC_MESSAGES/gather_course.po", "rb") as f:
        texts["gather_course.po"] = "\n".join(str(m.string) for m in read_po(f) if m.id)
    for path in [ZH / "README.md", *sorted((ROOT / "website" / "zh").glob("*.md"))]:
        texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return texts


def test_each_term_is_said_one_way():
    glossary = (ZH / "glossary.md").read_text(encoding="utf-8")
    table = glossary.split("## 不用的说法", 1)[1]
    listed = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", table, flags=re.M)[1:]  # no header
    assert {old for old, _new in listed} == set(RETIRED) | set(RETIRED_HERE), listed
    found = [
        f"{where}: {m.group(0)!r} in {text[max(0, m.start() - 12) : m.end() + 12]!r}"
        for where, text in _chinese_texts().items()
        for pattern in [*RETIRED.values(), *RETIRED_HERE.values()]
        for m in re.finditer(pattern, text)
    ]
    assert not found, "retired words (zh/glossary.md, 不用的说法):\n" + "\n".join(found)


_CJK = re.compile(r"[\u4e00-\u9fff]")
_VERDICT = re.compile(r"^\W{0,3}(✅|❌)")


def _output_lines(path) -> list[str]:
    """Every line of a notebook's stored text outputs (streams, plain text, Markdown)."""
    lines = []
    for cell in nbformat.read(path, 4).cells:
        for out in cell.get("outputs", []):
            texts = [out.get("text", "")] + [
                v if isinstance(v, str) else "".join(v)
                for k, v in out.get("data", {}).items()
                if k in ("text/plain", "text/markdown")
            ]
            lines += [line for t in texts for line in t.splitlines()]
    return lines


def _verdict_lines(path) -> list[str]:
    """The verdict lines (✅, ❌) of a notebook's stored outputs."""
    return [line for line in _output_lines(path) if _VERDICT.match(line)]


ZH_RUN = sorted([*(ZH / "notebooks").glob("*.ipynb"), *(ZH / "solutions").glob("*/*.ipynb")])


@pytest.mark.parametrize("path", ZH_RUN, ids=lambda p: p.relative_to(ZH).as_posix())
def test_the_chinese_editions_stored_verdicts_are_chinese(path):
    """Its outputs are its own run, in Chinese: no verdict line in English alone."""
    english = [line for line in _verdict_lines(path) if not _CJK.search(line)]
    assert not english, f"{path.relative_to(ROOT)}: verdicts in English: {english[:3]}"


def test_the_verdict_scan_is_not_blind():
    assert _verdict_lines(ROOT / "notebooks" / "03_pixel_indexing.ipynb")  # English verdicts
    assert _verdict_lines(ROOT / "solutions" / "topk" / "topk.ipynb")


_ASCII_MARK = re.compile(r"[\u4e00-\u9fff][,;:?!]|[,;?!]\s*[\u4e00-\u9fff]")


def _own_prose(markdown: str) -> str:
    """A cell's own Chinese sentences: without code, quotations (「」, 《》, > blocks) and
    tables, which keep their source's punctuation."""
    text = re.sub(r"```.*?```|`[^`]*`|「[^」]*」|《[^》]*》", "", markdown, flags=re.S)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith((">", "|")))


def test_chinese_prose_uses_chinese_punctuation():
    texts = _chinese_texts(kinds=("markdown",))  # code keeps its ASCII punctuation
    found = [
        f"{where}: {_own_prose(text)[max(0, m.start() - 12) : m.end() + 12]!r}"
        for where, text in texts.items()
        for m in _ASCII_MARK.finditer(_own_prose(text))
    ]
    assert not found, "ASCII punctuation in Chinese prose (，；：？！):\n" + "\n".join(found)
    assert _ASCII_MARK.search(_own_prose("这是一句话,没有用中文逗号。"))
    assert not _ASCII_MARK.search(_own_prose("文章写道：「用法:如下」。`a,b`"))


# in a line of Chinese output: ASCII punctuation after or before a Chinese character, an
# ASCII bracket opening after one (a shape's numbers excepted), "): ", a space before ，。；：
_ASCII_IN_OUTPUT = re.compile(
    r"[\u4e00-\u9fff][,;:?!]|[,;?!]\s*[\u4e00-\u9fff]|[\u4e00-\u9fff]\**\s?\((?![\d-])|\): | [，。；：]"
)


def _chinese_output_lines(path) -> list[str]:
    """Every line of a notebook's stored outputs with Chinese in it, each code span as C."""
    lines = [re.sub(r"`[^`]*`", "C", line) for line in _output_lines(path)]
    return [line for line in lines if _CJK.search(line)]


@pytest.mark.parametrize("path", ZH_RUN, ids=lambda p: p.relative_to(ZH).as_posix())
def test_the_chinese_editions_outputs_use_chinese_punctuation(path):
    """What check, hints and the lecture's own prints say in Chinese: （）：、 not ( ): ,"""
    found = [line for line in _chinese_output_lines(path) if _ASCII_IN_OUTPUT.search(line)]
    assert not found, f"{path.relative_to(ROOT)}: ASCII punctuation in Chinese output: {found[:3]}"


def test_the_output_punctuation_scan_is_not_blind():
    flagged = [
        "❌ 不正确 (basics.pick_per_row): 期望 `out` 的形状为 [3, 2]",
        "  测试用例: 随机形状",
        "expand：步长 (4, 1, 0) ，存储字节数 32",
        "**提示 1/3** (`basics.pick_per_row`): 每一行保持自己的行号",
        "**每行各取一个** (`basics.pick_per_row`)",
    ]
    fine = [
        "❌ 不正确（basics.pick_per_row）：期望",
        "编码器输入 (1, 4, 192)  解码器输入 (1, 16, 192)",
        "编写 `f(x, i)`：`x` 为 `[B, L]`，返回",
    ]

    def strip(lines):
        return [re.sub(r"`[^`]*`", "C", line) for line in lines]

    assert all(_ASCII_IN_OUTPUT.search(line) for line in strip(flagged))
    assert not any(_ASCII_IN_OUTPUT.search(line) for line in strip(fine))


def test_the_retired_words_check_is_not_blind():
    text = "先写下来，再运行这个单元。这个笔记本里，出错位置和读错位置不算。"
    hits = [m.group(0) for p in RETIRED.values() for m in re.finditer(p, text)]
    assert hits == ["笔记本", "单元"]
    text = (
        "换成任意有效 id，再恢复顺序；原地操作；扁平位置 7；索引差了几位？耗时是 gather 的 0.73×。"
        "float32 有 7 位有效数字，有效带宽，3×4 的例子，16×16 的图块，8 × 128 次，1.95 倍。"
    )
    hits = [m.group(0) for p in RETIRED_HERE.values() for m in re.finditer(p, text)]
    assert hits == ["有效", "恢复", "操作", "扁平位置", "差了几位", "3×"], hits


_CODE_OR_MATH = re.compile(r"```.*?```|`[^`\n]*`|\$[^$\n]*\$", flags=re.S)
_ITALIC = re.compile(
    r"(?<![*\\])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*\\])\*(?!\*)"  # *斜体*, not **粗体**
    r"|(?<![A-Za-z0-9_\\])_(?=\S)([^_\n]+?)(?<=\S)_(?![A-Za-z0-9_])"  # _斜体_
)


def _chinese_italics(markdown: str) -> list[str]:
    """The stretches of Chinese text a Markdown text sets in italics (outside code and math)."""
    text = _CODE_OR_MATH.sub("C", markdown).replace("**", "\0")
    found = [a or b for a, b in _ITALIC.findall(text)]
    return [f for f in found if _CJK.search(f)]


def test_chinese_text_is_emphasised_in_bold_not_italics():
    """Chinese fonts have no italic (a browser slants the glyphs): emphasis is bold (issue 52)."""
    found = [
        f"{where}: {f!r}"
        for where, text in _chinese_texts(kinds=("markdown",)).items()
        for f in _chinese_italics(text)
    ]
    assert not found, "italics on Chinese text (write **粗体**):\n" + "\n".join(found)


def test_the_italics_check_is_not_blind():
    flagged = "索引比 `input` *小*是允许的；- *注意*：{note}；_视图_；*4 代表 `D`，即宽度。*"
    assert _chinese_italics(flagged) == ["小", "注意", "视图", "4 代表 C，即宽度。"]
    fine = "**粗体**，`a * b * c`，$x*y$，*emphasis*，mask_token_id，3 * 4 * 5，* 列表项"
    assert _chinese_italics(fine) == []


def test_chinese_sentences_joined_in_code_have_no_space_between_them():
    """A check message made of two Chinese sentences reads as one text: 「。看起来」, not
    「。 看起来」 (issue 52)."""
    from gather_course._i18n import speaking

    with speaking("zh"), pytest.raises(GatherCourseError) as info:
        exercise("basics.pick_per_row").check(torch.zeros(2))  # the result, not the function
    assert "。看起来" in str(info.value) and not re.search(r"[。，：；？！] ", str(info.value))
    with speaking("en"), pytest.raises(GatherCourseError) as info:
        exercise("basics.pick_per_row").check(torch.zeros(2))
    assert "; got tensor [2] float32. It looks like" in str(info.value)


# A Chinese class's typical failures (basics): each student's answer to one question
_ZH_CLASS = {
    "loop": (  # a Python loop over elements: the operation count grows
        "pick_per_row",
        "def pick_per_row(x, cols):\n    out = torch.empty(cols.shape, dtype=x.dtype)\n"
        "    for r in range(cols.shape[0]):\n        for k in range(cols.shape[1]):\n"
        "            out[r, k] = x[r, cols[r, k]]\n    return out\n",
    ),
    "wrong_dim": ("pick_per_row", "def pick_per_row(x, cols):\n    return x.gather(0, cols)\n"),
    "raises": ("pick_per_row", "def pick_per_row(x, cols):\n    return x.reshape(-1, 7)\n"),
    "slow": (  # whole-tensor, but far slower than the solution on the large input
        "pick_per_row",
        "def pick_per_row(x, cols):\n    for _ in range(300):\n        out = x.gather(1, cols)\n"
        "    return out\n",
    ),
    "uses_gather": (  # gather_loop must not use gather
        "gather_loop",
        "def gather_loop(input, dim, index):\n    return torch.gather(input, dim, index)\n",
    ),
}
_TORCH_MESSAGE = re.compile(r"(抛出了 \w+：).*$", flags=re.M)  # torch's own words, untranslated
_NOT_PROSE = re.compile(r"`[^`]*`|\[[^\]]*\]|\b\w+\.\w+\b|\b(?:float|int|uint)\d+\b")


def _english_sentences(text: str) -> list[str]:
    """Three Latin words in a row outside code, shapes, dotted names and torch's messages."""
    text = _NOT_PROSE.sub(" ", _TORCH_MESSAGE.sub(r"\1", text))
    return re.findall(r"[A-Za-z]+ [A-Za-z]+ [A-Za-z]+", text)


# nbgrader's gradebook code warns about its own SQLAlchemy session use (not ours).
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
@pytest.mark.classroom  # a class graded end to end (README's classroom command)
def test_a_chinese_class_is_graded_with_chinese_feedback(tmp_path):
    """Graded in a zh class, every failure is worded in Chinese, the gather rule a wrong dim
    breaks and the operation counts of a loop included; the solution gets full marks, a
    blank notebook zero."""
    from gather_course._i18n import _, speaking
    from tests.helpers import fill_cells

    course = tmp_path / "zh"
    for folder in ("solutions", "exercises"):
        shutil.copytree(ZH / folder, course / folder)
    shutil.copy2(ZH / "nbgrader_config.py", course / "nbgrader_config.py")  # the file it links
    solution = nbformat.read(ZH / "solutions" / "basics" / "basics.ipynb", as_version=4)
    blank = nbformat.read(ZH / "exercises" / "basics" / "basics.ipynb", as_version=4)
    students = {"li": solution, "wang": blank}
    students |= {k: fill_cells(solution, {gid: src}) for k, (gid, src) in _ZH_CLASS.items()}
    for student, nb in students.items():
        folder = course / "submitted" / student / "basics"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "basics.ipynb")
    done = cli("grade", "basics", "--course", str(course), "--jobs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["student"]: r for r in csv.DictReader((course / "grades-basics.csv").open())}
    assert {r["status"] for r in rows.values()} == {"graded"}
    assert float(rows["li"]["score"]) == float(rows["li"]["max_score"]) > 0
    assert float(rows["wang"]["score"]) == 0
    for student in _ZH_CLASS:
        assert float(rows[student]["score"]) < float(rows["li"]["score"]), student
        nb = nbformat.read(course / "autograded" / student / "basics" / "basics.ipynb", 4)
        verdicts = "\n".join(
            o.get("evalue", "") + o.get("text", "") for c in nb.cells for o in c.get("outputs", [])
        )
        assert "❌" in verdicts, (student, verdicts)
        assert not _english_sentences(verdicts), (student, _english_sentences(verdicts), verdicts)
        with speaking("zh"):  # each failure's own detail, as the catalog words it
            expected = {
                "loop": _("small input"),
                "wrong_dim": _("broken rule"),
                "slow": _("the course's solution"),
                "uses_gather": _("cell {cell}, line {line}").format(cell=4, line=2),
                "raises": "RuntimeError",
            }[student]
        assert expected in verdicts, (student, expected, verdicts)
        assert student == "raises" or _CJK.search(expected), expected  # the label is translated


def test_the_english_scan_of_chinese_feedback_is_not_blind():
    assert (
        _english_sentences("你的函数抛出了 RuntimeError：shape '[-1, 7]' is invalid for input")
        == []
    )
    assert _english_sentences("违反的规则：index[0][0] = 3 is out of range: input.size(0) is 3")
    assert _english_sentences("较小的输入：`x: [3, 5] float32`：12 次运算") == []


def test_the_chinese_task_cells_say_what_the_bank_says_in_chinese(monkeypatch):
    """A Chinese task cell states the question's title, task and constraints exactly as
    `exercise(qid)` and the check word them in Chinese, so the two never disagree."""
    from gather_course import exercise
    from gather_course._i18n import LANG_ENV, _
    from gather_course.grading._submission import graded_cells

    monkeypatch.setenv(LANG_ENV, "zh")
    checked = 0
    for path in sorted((ZH / "solutions").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
        for _gid, qid, _points in graded_cells(nb):
            q = exercise(qid)
            task = cells[f"task_{q.name}"]
            constraints = (
                _("**Constraints:** {constraints}").format(constraints=q.constraints)
                if q.constraints
                else ""
            )
            for text in (_(q.title), q.task_text(_), constraints, _(IMPORTS_CONSTRAINT)):
                assert text in task, f"{path.relative_to(ROOT)}, {qid}: {text[:60]!r} is missing"
            checked += 1
    assert checked == len(exercise_ids())


def test_a_class_release_of_the_chinese_course_words_its_variants_in_chinese(tmp_path, monkeypatch):
    from gather_course import exercise
    from gather_course._i18n import LANG_ENV, _
    from gather_course.grading._classes import release_class

    info = release_class(course_root(ZH), 7, tmp_path / "class", ["ada", "bob"], execute=False)
    monkeypatch.setenv(LANG_ENV, "zh")
    for name in ("topk", "vision"):
        nb = nbformat.read(tmp_path / "class" / "exercises" / name / f"{name}.ipynb", 4)
        cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
        for qid, variant in info["variants"][name]["bob"].items():
            q, public = exercise(qid, variant), exercise(qid)
            task = cells[f"task_{q.name}"]
            assert _(public.title) in task and "你自己的变体" in task, (qid, variant)
            assert public.task_text(_) not in task and CJK.search(q.task_text(_))
            assert q.task_text(_) != public.task_text(_)
            assert ".hint(" not in task and "是否提供提示和参考解答由老师决定" in task
        assert not any(c.cell_type == "markdown" and "Stuck?" in c.source for c in nb.cells)


def test_a_working_copy_keeps_to_its_edition(tmp_path):
    make_working_copy(tmp_path / "work", course=ROOT, lang="en")
    with pytest.raises(GatherCourseError, match="working copy of the English edition") as info:
        make_working_copy(tmp_path / "work", course=ROOT, lang="zh")
    assert f"gather-course start {tmp_path / 'work'}-zh --lang zh" in str(info.value)
    again = make_working_copy(tmp_path / "work", course=ROOT, lang="en")
    assert not again.added and again.kept  # the same edition again: nothing overwritten
    alone = make_working_copy(tmp_path / "work", course=ROOT)  # no --lang: its own edition
    assert not alone.added and alone.kept


def test_check_and_progress_speak_the_language_of_the_notebook(tmp_path, monkeypatch):
    from gather_course._i18n import LANG_ENV

    monkeypatch.delenv(LANG_ENV, raising=False)
    student = tmp_path / "topk.ipynb"
    shutil.copy2(ZH / "exercises" / "topk" / "topk.ipynb", student)
    assert (
        json.loads(student.read_text(encoding="utf-8"))["metadata"]["gather_course"]["lang"] == "zh"
    )
    done = cli("check", str(student))
    assert done.returncode == 1 and "尚未作答" in done.stdout and "未通过" in done.stdout
    assert "Not attempted" not in done.stdout and "questions fail" not in done.stdout
    # the question names line up on screen, one passing and one failing (a Chinese character
    # takes two columns)
    from gather_course._text import _columns

    nb = nbformat.read(student, 4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "select_patches":
            cell.source = "import torch\n" + exercise("topk.select_patches").solution_code
    nbformat.write(nb, student)
    mixed = cli("check", str(student)).stdout
    rows = [line for line in mixed.splitlines() if re.match(r"(通过|未通过) ", line)]
    names = {_columns(line[: line.index("s")]) for line in rows}  # select_, scatter_
    assert len(rows) == 2 and {r.split()[0] for r in rows} == {"通过", "未通过"}, mixed
    assert len(names) == 1, mixed
    # a command speaks the language of the notebook it is about before the setting (issue 47:
    # the working copy's language first, else GATHER_COURSE_LANG, else the locale)
    monkeypatch.setenv(LANG_ENV, "en")
    assert "尚未作答" in cli("check", str(student)).stdout
    monkeypatch.delenv(LANG_ENV)
    work = make_working_copy(tmp_path / "work", course=ROOT, lang="zh").folder
    for other in (work / "exercises").iterdir():  # one exercise is enough to read the words
        if other.name != "topk":
            shutil.rmtree(other)
    shown = cli("progress", str(work)).stdout
    assert "2 道题中通过 0 道" in shown and "questions pass" not in shown


def test_the_chinese_readme_stands_on_its_own():
    """A Chinese learner needs no English page to start: the zh README has the set-up
    command, start, the CPU build's install line, a start without a browser and the first
    check, each as the English README gives it (issue 47)."""
    from tests.helpers import readme_command

    zh = (ZH / "README.md").read_text(encoding="utf-8")
    en = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_command("setup") in zh
    assert "gather-course start --lang zh" in zh
    cpu = "python -m pip install torch --index-url https://download.pytorch.org/whl/cpu"
    headless = "-- --no-browser"
    check = "gather-course check exercises/basics/basics.ipynb"
    for line in (cpu, headless, check, "gather-course progress"):
        assert line in en and line in zh, line
    assert "../README.md" not in zh.split("## 讲义")[0]  # the start needs no English page


def test_feedback_and_hints_name_a_dim_as_dim_not_as_an_ordinal():
    """「第 1 维」 reads as the first dimension to a Chinese reader (counting from 1), and the
    feedback never says it counts from 0: every message and hint writes dim=1 (issue 47)."""
    from babel.messages.pofile import read_po

    path = ROOT / "gather_course" / "locale" / "zh" / "LC_MESSAGES" / "gather_course.po"
    with open(path, "rb") as f:
        catalog = read_po(f)
    ordinal = re.compile(r"第 ?(\d+|\{\w+\}) ?维")
    found = [m.string for m in catalog if m.id and ordinal.search(str(m.string))]
    assert not found, found
    assert ordinal.search("沿第 {d} 维平移") and not ordinal.search("沿 dim={d} 平移")
