"""Honest timing: the same selection done by ``torch.gather`` and by each alternative.

The selection is ``out[r][j] = x[r][index[r][j]]`` (``torch.gather(x, 1, index)``) with
``x`` of shape ``[R, C]`` and ``index`` of shape ``[R, K]``. Every way of computing it is
first checked to give exactly gather's result, then timed by ``torch.utils.benchmark``
(warm-up, blocks sized by ``Timer.blocked_autorange``, the median, the GPU waited for at
every clock reading). Each time is reported as a ratio
to gather and as effective bandwidth, a fraction of a plain copy of the same number of
bytes on the same device (the practical ceiling for a memory-bound operation).

Command line: ``gather-course bench`` (``--device cuda``, ``--sizes small,large``).

>>> from gather_course.benchmark import run_suite
>>> report = run_suite(sizes=["small"], device="cpu")   # doctest: +SKIP
>>> report  # a Markdown table in Jupyter                # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ._errors import GatherCourseError
from ._measure import Comparison, Timing, _device, compare, machine, measure

__all__ = [
    "SIZES",
    "WAYS",
    "Comparison",
    "SuiteReport",
    "Timing",
    "compare",
    "machine",
    "measure",
    "parse_patterns",
    "parse_repeats",
    "parse_sizes",
    "run_suite",
]

SIZES: dict[str, tuple[int, int, int]] = {  # name: (R rows, C columns, K picks per row)
    "small": (64, 256, 16),
    "medium": (512, 1024, 64),
    "large": (4096, 4096, 512),
    "xlarge": (16384, 16384, 2048),  # GPU sized: x alone is 1 GiB
}
LOOP_LIMIT = 4096  # the Python loop runs only up to this many output elements
ONE_HOT_LIMIT = 1 << 30  # bytes a one-hot matrix (int64 + float copy) may take


# --- the suite: one selection, seven ways ---------------------------------------------


def _loop(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    out = torch.empty(index.shape, dtype=x.dtype, device=x.device)
    for r in range(index.shape[0]):
        for j in range(index.shape[1]):
            out[r, j] = x[r, index[r, j]]
    return out


def _rows(x: torch.Tensor) -> torch.Tensor:
    return torch.arange(x.shape[0], device=x.device).unsqueeze(1)


WAYS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "gather": lambda x, i: torch.gather(x, 1, i),
    "Python loop": _loop,
    "advanced indexing": lambda x, i: x[_rows(x), i],
    "take_along_dim": lambda x, i: torch.take_along_dim(x, i, dim=1),
    "take (linear index built)": lambda x, i: torch.take(x, _rows(x) * x.shape[1] + i),
    "index_select": lambda x, i: x.index_select(1, i[0]),  # means the same for a shared index
    "one-hot matmul": lambda x, i: torch.bmm(
        F.one_hot(i, x.shape[1]).to(x.dtype), x.unsqueeze(2)
    ).squeeze(2),
}


def _why_skipped(way: str, pattern: str, r: int, c: int, k: int) -> str | None:
    if way == "index_select" and pattern == "per-row":
        return "it picks the same columns in every row, so it cannot make a per-row selection"
    if way == "Python loop" and r * k > LOOP_LIMIT:
        return (
            f"{r * k:,} output elements, one Python step each (the suite stops at {LOOP_LIMIT:,})"
        )
    if way == "one-hot matmul" and r * k * c * 12 > ONE_HOT_LIMIT:
        return f"its one-hot matrix would take {r * k * c * 12 / 2**30:.1f} GiB"
    return None


def _size(size: str | Sequence[int]) -> tuple[int, int, int]:
    if isinstance(size, str):
        if size in SIZES:
            return SIZES[size]
        parts = size.lower().split("x")
        if len(parts) == 3 and all(p.isdigit() and int(p) > 0 for p in parts):
            r, c, k = (int(p) for p in parts)
            return r, c, k
    elif len(size) == 3 and all(isinstance(n, int) and n > 0 for n in size):
        r, c, k = size
        return r, c, k
    raise GatherCourseError(
        f"a size is one of {', '.join(SIZES)} or 'RxCxK' "
        f"(rows x columns x picks per row, e.g. '1000x500x20'), got {size!r}."
    )


def parse_sizes(sizes: str | Sequence[str | Sequence[int]]) -> list[tuple[int, int, int]]:
    """``"small,64x128x8"`` or a list of names and ``(R, C, K)``: the ``(R, C, K)`` sizes.

    >>> parse_sizes("small,4x6x2")
    [(64, 256, 16), (4, 6, 2)]
    """
    items = sizes.split(",") if isinstance(sizes, str) else list(sizes)
    parsed = [_size(s) for s in items if s != ""]
    if not parsed:
        raise GatherCourseError(f"at least one size is needed, got {sizes!r}.")
    return parsed


def parse_patterns(patterns: str | Sequence[str]) -> list[str]:
    """``"per-row,shared"`` or a list of them: the index patterns to time.

    >>> parse_patterns("shared")
    ['shared']
    """
    items = patterns.split(",") if isinstance(patterns, str) else list(patterns)
    if not items or any(p not in ("per-row", "shared") for p in items):
        raise GatherCourseError(f"patterns are per-row, shared or both, got {patterns!r}.")
    return items


def parse_repeats(repeats: int | str) -> int:
    """The number of timed blocks: an int of at least 3 (a median of fewer is noise)."""
    value = int(repeats) if isinstance(repeats, str) and repeats.strip().isdigit() else repeats
    if not isinstance(value, int) or isinstance(value, bool) or value < 3:
        raise GatherCourseError(
            f"repeats must be at least 3 (a median of fewer is noise), got {repeats!r}."
        )
    return value


def run_suite(
    sizes: Sequence[str | Sequence[int]] = ("small", "medium", "large"),
    device: torch.device | str | None = None,
    *,
    patterns: Sequence[str] = ("per-row", "shared"),
    repeats: int = 15,
    seed: int = 0,
) -> SuiteReport:
    """Time ``out[r][j] = x[r][index[r][j]]`` by every way in ``WAYS`` at each size.

    ``per-row``: every row has its own random columns. ``shared``: every row picks the
    same columns (``index`` is one row expanded), where ``index_select`` means the same.
    Inputs are drawn on the CPU from ``seed`` and moved to ``device``.
    """
    device = _device(device)
    patterns, parsed = parse_patterns(patterns), parse_sizes(sizes)
    repeats = parse_repeats(repeats)
    parts = []
    for pattern in patterns:
        for r, c, k in parsed:
            g = torch.Generator().manual_seed(seed)
            x = torch.randn(r, c, generator=g).to(device)
            if pattern == "per-row":
                index = torch.randint(0, c, (r, k), generator=g).to(device)
                nbytes = 2 * r * k * x.element_size() + index.nbytes
            else:
                index = torch.randint(0, c, (1, k), generator=g).to(device).expand(r, k)
                nbytes = 2 * r * k * x.element_size() + k * index.element_size()
            skipped = {w: why for w in WAYS if (why := _why_skipped(w, pattern, r, c, k))}
            ways = {
                w: (lambda f=f, x=x, index=index: f(x, index))
                for w, f in WAYS.items()
                if w not in skipped
            }
            part = compare(
                ways,
                baseline="gather",
                device=device,
                nbytes=nbytes,
                skip_mismatches=True,  # e.g. a matmul with TF32 on rounds values
                repeats=repeats,
                title=f"{pattern} index, x [{r}, {c}], "
                f"index [{r}, {k}]: {r * k:,} picks, {nbytes / 1e6:.3g} MB moved",
            )
            part.skipped = {**skipped, **part.skipped}
            parts.append(part)
    return SuiteReport(machine(device), parts)


@dataclass
class SuiteReport:
    """The suite's tables, one per pattern and size, with the machine they came from."""

    machine: str
    parts: list[Comparison]

    def to_markdown(self) -> str:
        head = (
            f"Measured on {self.machine}. Times are medians; × gather is the ratio of "
            "medians; GB/s counts the bytes the selection must move (index read, picked "
            "values read, output written); % of copy compares that with a plain copy "
            "of the same bytes on the same device."
        )
        return "\n\n".join([head] + [p.to_markdown() for p in self.parts])

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __repr__(self) -> str:
        return self.to_markdown()
