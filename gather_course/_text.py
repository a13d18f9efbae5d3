"""Small formatting helpers shared by the modules (positions, values, shapes)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

import torch


def fmt_pos(pos: Sequence[Any]) -> str:
    """``(1, 0)`` -> ``[1][0]`` (the docs' formula style); ``()`` -> ``""``."""
    return "".join(f"[{p}]" for p in pos)


def fmt_shape(t: Any) -> str:
    """A tensor's shape and dtype as ``[2, 3] float32``; other objects by type name."""
    if isinstance(t, torch.Tensor):
        dtype = str(t.dtype).replace("torch.", "")
        return f"[{', '.join(str(s) for s in t.shape)}] {dtype}"
    return type(t).__name__


def fmt_value(v: Any) -> str:
    """One element as a short string: ``50``, ``2.2``, ``-0.1235``, ``True``."""
    if isinstance(v, torch.Tensor):
        v = v.item()
    if isinstance(v, bool) or isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return str(v)
        r = round(v, 4)
        return str(int(r)) + ".0" if r == int(r) and abs(r) < 1e15 else str(r)
    return str(v)


def type_name(obj: Any) -> str:
    """What a learner passed, for error messages: ``list [1, 2]``, ``float 1.0``."""
    if isinstance(obj, torch.Tensor):
        return f"tensor {fmt_shape(obj)}"
    text = repr(obj)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(obj).__name__} {text}"


_NO_LINE_START = "，。、；：？！）」』》"


def _wide(ch: str) -> bool:
    """Whether ``ch`` takes two terminal columns (East Asian wide or full-width)."""
    return unicodedata.east_asian_width(ch) in "WF"


def _columns(text: str) -> int:
    """How many terminal columns ``text`` takes: East Asian wide characters take two."""
    return sum(2 if _wide(ch) else 1 for ch in text)


def pad(text: str, columns: int) -> str:
    """``text`` followed by spaces up to ``columns`` terminal columns (a Chinese character
    takes two), so that a column of mixed-language words lines up.

    >>> pad("通过", 6) + "|", pad("FAILED", 6) + "|"
    ('通过  |', 'FAILED|')
    """
    return text + " " * max(0, columns - _columns(text))


def sentences(texts: Iterable[str]) -> str:
    """Sentences one after another: after a Chinese full stop (。？！) nothing, else a space.

    >>> sentences(["Stuck?", "Ask."]), sentences(["卡住了？", "问一下。", "Then run."])
    ('Stuck? Ask.', '卡住了？问一下。Then run.')
    """
    joined = ""
    for text in texts:
        joined += ("" if not joined or joined.endswith(("。", "？", "！")) else " ") + text
    return joined


_CODE_MARKS = re.compile(r"`([^`\n]+)`")


def plain(text: str) -> str:
    """Markdown's code marks dropped, for text that is not rendered as Markdown (an error's
    box, a terminal): the code shows as it is.

    >>> plain("5 of the 6 values of `out` are wrong."), plain("「`out` 的 6 个值」")
    ('5 of the 6 values of out are wrong.', '「out 的 6 个值」')
    """
    return _CODE_MARKS.sub(r"\1", text)


def wrap(text: str, width: int, indent: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` columns, each starting with ``indent``.

    Breaks at spaces, and also between two Chinese characters (Chinese has no spaces); a
    word longer than a line (a long code span) stays whole.

    >>> wrap("a bb ccc", 6)
    ['a bb', 'ccc']
    """
    # pieces: runs of narrow non-space characters, single wide characters, and spaces
    pieces = re.findall(r"\s+|[^\s]", text)
    tokens: list[str] = []
    for piece in pieces:
        if piece.isspace():
            tokens.append(" ")
        elif piece in _NO_LINE_START and tokens and tokens[-1] != " ":
            tokens[-1] += piece  # a line never starts with a closing mark
        elif _wide(piece) or not tokens or tokens[-1] == " " or _wide(tokens[-1][-1]):
            tokens.append(piece)
        else:
            tokens[-1] += piece
    lines, line = [], ""
    for token in tokens:
        if token == " ":
            line += " " if line else ""
            continue
        if line and _columns(indent + line + token) > width:
            lines.append(indent + line.rstrip())
            line = ""
        line += token
    if line.strip():
        lines.append(indent + line.rstrip())
    return lines
