"""The Chinese edition's notebooks and their English twins, kept in step.

A Chinese notebook (``zh/notebooks/NN_x.ipynb``, ``zh/solutions/<a>/<a>.ipynb``) is its
English twin with the same cells, ids, metadata and code, where only Markdown text, ``#``
comments and the words of strings (a figure's title, a printed label) are translated; its outputs are its own run, in Chinese (``gather-course execute``
runs a notebook in its edition's language, and nbval checks them like the English ones). ``zh/sources.json`` records, for every cell, a hash of the
English text its translation was made from, so a change to the English shows up as a cell to
translate again rather than as a silent drift.

``gather-course twins`` (maintainers) rebuilds every Chinese notebook from its twin: code and
metadata from the English, the translations and the Chinese outputs of unchanged code kept
(a cell whose code changed gets the English outputs until ``gather-course execute`` re-runs
the notebook), and it lists the cells whose English is new or changed. ``--accept`` records the current English as translated.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tokenize
from pathlib import Path
from typing import Any

EDITION = "zh"
SOURCES = "sources.json"


def twins(root: Path) -> list[tuple[Path, Path]]:
    """``(english, chinese)`` paths of every notebook of the Chinese edition under ``root``."""
    zh = root / EDITION
    pairs = [
        *((p, zh / "notebooks" / p.name) for p in sorted((root / "notebooks").glob("*.ipynb"))),
        *(
            (p, zh / "solutions" / p.relative_to(root / "solutions"))
            for p in sorted((root / "solutions").glob("**/*.ipynb"))
        ),
    ]
    return [(en, cn) for en, cn in pairs if cn.exists()]


def code_without_comments(source: str) -> list[str]:
    """The lines of ``source`` without ``#`` comments and blank lines (strings are kept)."""
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type != tokenize.COMMENT
        ]
        text = tokenize.untokenize(tokens)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        text = source
    return [line.rstrip() for line in text.splitlines() if line.strip()]


_WORDS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _blank(string: str) -> str:
    """A string token with its words blanked; an f-string keeps its ``{expressions}``."""
    prefix = string[: len(string) - len(string.lstrip("rRbBuUfF"))]
    fields = re.findall(r"\{[^{}]*\}", string) if "f" in prefix.lower() else []
    return "''" + "".join(fields)


def code_shape(source: str) -> list[str]:
    """The code of ``source`` with comments dropped and every string's words blanked: what a
    translation must keep. Comments, and the words of strings (a figure's title, a printed
    label), may be translated; names, numbers and operators may not."""
    try:
        return [
            _blank(t.string) if t.type in _WORDS else t.string
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE) and t.string.strip()
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return code_without_comments(source)


def _has_text(cell: Any) -> bool:
    """Whether a cell has words to translate: Markdown, or code with comments."""
    if cell.cell_type == "markdown":
        return any(ch.isalpha() for ch in cell.source)
    lines = [line.rstrip() for line in cell.source.splitlines() if line.strip()]
    return cell.cell_type == "code" and code_without_comments(cell.source) != lines


def _digest(cell: Any) -> str:
    return hashlib.sha256(cell["source"].encode("utf-8")).hexdigest()[:16]


def twin_problems(en: Any, zh: Any, name: str) -> list[str]:
    """How the Chinese notebook ``zh`` differs from its English twin beyond its translation."""
    problems = []
    if zh.metadata.get("gather_course", {}).get("lang") != EDITION:
        problems.append(f"{name}: its metadata lacks gather_course.lang = 'zh'")
    if [c.get("id") for c in en.cells] != [c.get("id") for c in zh.cells]:
        return problems + [f"{name}: its cells (ids, order) are not its English twin's"]
    for a, b in zip(en.cells, zh.cells):
        where = f"{name}, cell {a.get('id')}"
        if (a.cell_type, a.metadata) != (b.cell_type, b.metadata):
            problems.append(f"{where}: cell type or metadata differ from the English")
        elif a.cell_type == "code":
            if code_shape(a.source) != code_shape(b.source):
                problems.append(
                    f"{where}: the code differs from the English (not only comments and words)"
                )
            if [o.output_type for o in a.outputs] != [o.output_type for o in b.outputs]:
                problems.append(f"{where}: its outputs are not of the English run's kinds")
    return problems


def stale_cells(en: Any, recorded: dict[str, str], name: str) -> list[str]:
    """Cells of ``en`` whose text changed since their translation was recorded."""
    return [
        f"{name}, cell {c.get('id')}: the English changed since it was translated"
        for c in en.cells
        if _has_text(c) and recorded.get(c.get("id")) != _digest(c)
    ]


def read_sources(root: Path) -> dict[str, dict[str, str]]:
    path = root / EDITION / SOURCES
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def sync_twins(root: Path, accept: bool = False) -> list[str]:
    """Rebuild each Chinese notebook from its twin, keeping the translations; return the cells
    still to translate. ``accept`` records every cell's current English as translated."""
    import nbformat

    recorded = read_sources(root)
    todo: list[str] = []
    for en_path, zh_path in twins(root):
        name = en_path.relative_to(root).as_posix()
        en = nbformat.read(en_path, as_version=4)
        zh = nbformat.read(zh_path, as_version=4)
        translated = {c.get("id"): c for c in zh.cells}
        done = recorded.get(name, {})
        cells = []
        for cell in en.cells:
            old = translated.get(cell.get("id"))
            new = nbformat.from_dict(json.loads(json.dumps(cell)))  # a copy of the English
            if old is not None and old.cell_type == cell.cell_type:
                same_code = cell.cell_type != "code" or (
                    code_shape(old.source) == code_shape(cell.source)
                )
                if same_code:
                    new.source = old.source
                    if cell.cell_type == "code":
                        new.outputs = old.outputs  # the Chinese run's
                        new.execution_count = old.execution_count
            changed = old is None or done.get(cell.get("id")) != _digest(cell)
            if _has_text(cell) and changed and not accept:
                todo.append(f"{name}, cell {cell.get('id')} ({cell.cell_type})")
            cells.append(new)
        zh.cells = cells
        zh.metadata = {
            **en.metadata,
            "gather_course": {
                **en.metadata.get("gather_course", {}),
                "lang": EDITION,
                "twin": name,
            },
        }
        nbformat.write(zh, zh_path)
        if accept:
            recorded[name] = {c.get("id"): _digest(c) for c in en.cells}
    if accept:
        path = root / EDITION / SOURCES
        path.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return todo
