"""Makes the Chinese font that goes with the package: a subset of Noto Sans CJK SC (OFL 1.1).

Figures with Chinese text must draw it on a machine with no CJK font (Colab, Binder, a bare
Linux): :mod:`gather_course._figure_text` registers ``gather_course/fonts/`` with matplotlib
when no installed font draws Chinese. It holds the characters the course draws (every CJK
character of the Chinese edition's code cells, where figure titles and labels are strings,
and of the message catalog, the package's figure texts), and also the 3,500 common
characters of level one of 《通用规范汉字表》 (``tools/common_characters.txt``) and the
full-width punctuation, so that a learner's own Chinese title (「我的结果」) draws too. Budget:
the font stays under 1.5 MiB (without hinting instructions, which matplotlib's auto-hinter
does not use; with them it is about 0.3 MiB larger). Made again after a translation adds a
character outside level one (``tests/test_cjk_font.py`` fails until then), from the
repository root::

    apt-get install fonts-noto-cjk
    python tools/cjk_font.py /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc

A maintainer's tool, not part of the package (a learner never runs it).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from gather_course._figure_text import BUNDLED_FAMILY, BUNDLED_FONT

# CJK ideographs, CJK punctuation and full-width forms (（）：，。、？！)
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
ROOT = Path(__file__).resolve().parents[1]
COMMON = Path(__file__).with_name("common_characters.txt")
SIZE_BUDGET = 1536 * 1024  # bytes: the wheel grows by less than 1.5 MiB
# full-width punctuation and forms (，。、：；？！（）「」《》…), and the quotes and dashes
# Chinese text uses
PUNCTUATION = {chr(c) for c in range(0x3000, 0x3040)} | {chr(c) for c in range(0xFF01, 0xFF5F)}
PUNCTUATION |= set("“”‘’—…·")


def common_characters(path: Path = COMMON) -> set[str]:
    """The 3,500 characters of level one of 《通用规范汉字表》 (lines starting with # are notes)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {c for line in lines if not line.startswith("#") for c in line.strip()}


def drawn_characters(root: Path = ROOT) -> set[str]:
    """Every CJK character the course may draw: zh code cells and the catalog's msgstrs."""
    chars: set[str] = set()
    for path in sorted((root / "zh").glob("*/**/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                chars |= set(CJK.findall("".join(cell["source"])))
    catalog = root / "gather_course" / "locale" / "zh" / "LC_MESSAGES" / "gather_course.po"
    for block in re.findall(r'msgstr((?:\s*"[^"\n]*")+)', catalog.read_text(encoding="utf-8")):
        chars |= set(CJK.findall(block))
    return chars


def make_subset(source: Path, out: Path = BUNDLED_FONT, root: Path = ROOT) -> int:
    """Write the subset of ``source`` (Noto Sans CJK's collection, or one of its fonts) that
    draws :func:`drawn_characters`, :func:`common_characters` and :data:`PUNCTUATION`, renamed (the OFL keeps a modified font off the original's
    name); return its size in bytes."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    if source.suffix.lower() == ".ttc":
        (font,) = [
            f
            for f in TTCollection(str(source)).fonts
            if f["name"].getDebugName(1) == "Noto Sans CJK SC"
        ]
    else:
        font = TTFont(str(source))
    options = subset.Options()
    options.name_IDs = ["*"]
    options.notdef_outline = True
    options.hinting = False  # matplotlib hints with FreeType's auto-hinter: 0.3 MiB saved
    subsetter = subset.Subsetter(options)
    chars = drawn_characters(root) | common_characters() | PUNCTUATION
    subsetter.populate(unicodes=sorted(ord(c) for c in chars))
    subsetter.subset(font)
    names = font["name"]
    for record in list(names.names):
        if record.nameID in (1, 3, 4, 6, 16, 17):
            names.removeNames(nameID=record.nameID)
    for name_id, text in (
        (1, BUNDLED_FAMILY),
        (3, f"{BUNDLED_FAMILY} Regular; subset of Noto Sans CJK SC for gather-course"),
        (4, f"{BUNDLED_FAMILY} Regular"),
        (6, BUNDLED_FAMILY.replace(" ", "") + "-Regular"),
    ):
        names.setName(text, name_id, 3, 1, 0x409)
    if "CFF " in font:  # the PostScript names inside the CFF table follow the name table
        cff = font["CFF "].cff
        cff.fontNames = [BUNDLED_FAMILY.replace(" ", "") + "-Regular"]
        top = cff.topDictIndex[0]
        top.FamilyName, top.FullName = BUNDLED_FAMILY, f"{BUNDLED_FAMILY} Regular"
    out.parent.mkdir(parents=True, exist_ok=True)
    font.save(str(out))
    return out.stat().st_size


if __name__ == "__main__":
    size = make_subset(Path(sys.argv[1]))
    count = len(drawn_characters() | common_characters() | PUNCTUATION)
    print(f"{BUNDLED_FONT.name}: {count} characters, {size / 1024:.0f} KiB")
