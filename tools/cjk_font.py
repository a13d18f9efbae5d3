"""Makes the Chinese font that goes with the package: a subset of Noto Sans CJK SC (OFL 1.1).

Figures with Chinese text must draw it on a machine with no CJK font (Colab, Binder, a bare
Linux): :mod:`gather_course._figure_text` registers ``gather_course/fonts/`` with matplotlib
when no installed font draws Chinese. It holds only the characters the course draws: every
CJK character of the Chinese edition's code cells (figure titles and labels are strings
there) and of the message catalog (the package's figure texts). Made again after a
translation adds a character (``tests/test_cjk_font.py`` fails until then), from the
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
    draws :func:`drawn_characters`, renamed (the OFL keeps a modified font off the original's
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
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(c) for c in drawn_characters(root)))
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
    print(f"{BUNDLED_FONT.name}: {len(drawn_characters())} characters, {size / 1024:.0f} KiB")
