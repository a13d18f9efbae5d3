"""Partial copies: answers that share long runs of code, found by winnowing.

copydetect (the winnowing of MOSS: k-grams of the code with its names, comments and layout
set aside, a few kept per window) fingerprints each answer; two answers that share most of
their fingerprints are reported with the lines they share side by side. Fingerprints of the
released stub and the public solution are boilerplate: the lectures teach that code, so
sharing it says nothing. Answers of a few tokens are left out: everyone writes
``x.gather(1, cols)`` the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

K = 12  # characters of filtered code per k-gram (copydetect's default, 25, misses a line)
WINDOW = 4
SHARE = 0.5  # of both answers' fingerprinted code (honest answers share under 0.2 here)
MIN_CHARS = 50  # of filtered code: shorter answers are too short to tell anything


@dataclass
class Match:
    """Two students whose answers to one question share most of their code."""

    question: str
    students: tuple[str, str]
    share: float  # the smaller of the two answers' shares
    lines: list[tuple[str, str]] = field(default_factory=list)  # shared lines, side by side


@dataclass
class _Print:
    """What copydetect's ``compare_files`` reads of a fingerprint."""

    filtered_code: str
    offsets: Any
    hashes: set
    hash_idx: dict
    k: int
    token_coverage: int


def _fingerprint(code: str, boilerplate: frozenset = frozenset()) -> _Print:
    """copydetect's fingerprint of ``code`` (its filtering and winnowing), with k-grams hashed
    by CRC-32 (copydetect's ``hash()`` changes from one process to the next, and with it the
    report), less the ``boilerplate`` fingerprints."""
    import zlib

    import numpy as np
    from copydetect.utils import filter_code, get_token_coverage, winnow

    filtered, offsets = filter_code(code, "answer.py", "python")
    grams = [filtered[i : i + K] for i in range(len(filtered) - K + 1)]
    hashes = np.array([zlib.crc32(g.encode()) for g in grams], dtype=np.int64)
    if len(hashes):
        picked, idx = winnow(hashes, WINDOW, remove_duplicates=False)
    else:
        picked, idx = hashes, np.array([], dtype=np.int64)
    where: dict[int, list[int]] = {}
    for h, i in zip(picked.tolist(), idx.tolist()):
        if h not in boilerplate:
            where.setdefault(h, []).append(i)
    return _Print(
        filtered, offsets, set(where), where, K, get_token_coverage(where, K, len(filtered))
    )


def _lines(code: str, slices: Any) -> list[str]:
    """The lines of ``code`` that the copied character slices touch, in order."""
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    rows = code.splitlines()
    found: list[int] = []
    for start, end in zip(*slices):
        first = max(i for i, s in enumerate(starts[:-1]) if s <= start)
        last = max(i for i, s in enumerate(starts[:-1]) if s < end)
        found += [i for i in range(first, last + 1) if i not in found]
    return [rows[i].rstrip() for i in sorted(found) if rows[i].strip()]


def _side_by_side(left: list[str], right: list[str]) -> list[tuple[str, str]]:
    """The two answers' shared lines paired where their filtered code lines up (difflib on
    the lines with names set aside), the others against a blank."""
    import difflib

    from copydetect.utils import filter_code

    def shape(line: str) -> str:
        return filter_code(line.strip(), "answer.py", "python")[0]

    pairs: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, [shape(x) for x in left], [shape(x) for x in right])
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        a, b = left[i1:i2], right[j1:j2]
        width = max(len(a), len(b))
        pairs += list(zip(a + [""] * (width - len(a)), b + [""] * (width - len(b))))
    return pairs


def partial_copies(question: str, answers: dict[str, str], boilerplate: list[str]) -> list[Match]:
    """Pairs of ``answers`` (student: code) that share most of their fingerprints, beyond
    those of ``boilerplate`` (the stub, the public solution)."""
    from copydetect import compare_files

    common = frozenset(h for code in boilerplate for h in _fingerprint(code).hashes)
    prints = {
        student: _fingerprint(code, common)
        for student, code in sorted(answers.items())
        if code.strip()
    }
    prints = {s: fp for s, fp in prints.items() if len(fp.filtered_code) >= MIN_CHARS}
    found = []
    names = sorted(prints)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            _overlap, (share_a, share_b), (slices_a, slices_b) = compare_files(prints[a], prints[b])
            share = float(min(share_a, share_b))
            if share >= SHARE:
                left, right = _lines(answers[a], slices_a), _lines(answers[b], slices_b)
                found.append(Match(question, (a, b), share, _side_by_side(left, right)))
    return found
