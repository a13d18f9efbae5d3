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
>>> report                                               # a Markdown table in Jupyter
"""

from __future__ import annotations

import os
import platform
import statistics
import timeit
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
import torch.utils.benchmark as benchmark

from ._errors import GatherCourseError
from .device import _parse_device, default_device

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


@dataclass(frozen=True)
class Timing:
    """Seconds per call: the median over ``repeats`` blocks of ``number`` calls each."""

    median: float
    q1: float
    q3: float
    repeats: int
    number: int


def _device(device: torch.device | str | None) -> torch.device:
    """The device asked for (checked: it exists here), or the course's default device."""
    return default_device() if device is None else _parse_device(str(device), "device")


def _clock(device: torch.device) -> Callable[[], float]:
    """A clock for ``torch.utils.benchmark.Timer`` that waits for ``device``'s work first."""
    if device.type != "cuda":
        return timeit.default_timer

    def clock() -> float:
        torch.cuda.synchronize(device)  # a GPU runs asynchronously: wait for the work
        return timeit.default_timer()

    return clock


def measure(
    fn: Callable[[], object],
    device: torch.device | str | None = None,
    *,
    warmup: int = 2,
    repeats: int = 15,
    min_block: float = 1e-3,
) -> Timing:
    """Median seconds per call of ``fn()``, timed by ``torch.utils.benchmark.Timer``.

    After ``warmup`` calls, ``Timer.blocked_autorange`` picks a block size that makes the
    timer's own cost negligible and times whole blocks for at least ``repeats * min_block``
    seconds; it runs again until there are at least ``repeats`` blocks. The clock waits
    for the device at each reading, so GPU work is timed, not its launch.

    >>> x = torch.arange(1000.0)
    >>> measure(lambda: x * 2, "cpu").median < 1.0
    True
    """
    device = torch.device(device) if device is not None else default_device()  # (for sync)
    if repeats < 3 or warmup < 1:
        raise GatherCourseError(
            f"measure needs warmup >= 1 and repeats >= 3, got warmup={warmup}, repeats={repeats}."
        )
    timer = benchmark.Timer(
        stmt="fn()", globals={"fn": fn}, timer=_clock(device), num_threads=torch.get_num_threads()
    )
    for _ in range(warmup):
        fn()
    runs = []
    while sum(len(m.times) for m in runs) < repeats:
        runs.append(timer.blocked_autorange(min_run_time=repeats * min_block))
    (merged,) = benchmark.Measurement.merge(runs)
    times = sorted(merged.times)
    q1, _, q3 = statistics.quantiles(times, n=4)
    number = max(m.number_per_run for m in runs)
    return Timing(statistics.median(times), q1, q3, len(times), number)


def _fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _fmt_ratio(r: float) -> str:
    return (
        f"{r:,.0f}"
        if r >= 100
        else f"{r:.1f}"
        if r >= 10
        else f"{r:.2f}"
        if r >= 0.1
        else f"{r:.2g}"
    )


def machine(device: torch.device | str | None = None) -> str:
    """One line naming the device, the torch build and the CPU: where numbers came from."""
    device = _device(device)
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    line = (
        f"torch {torch.__version__}, Python {platform.python_version()}, {cpu} "
        f"({os.cpu_count()} cores, torch uses {torch.get_num_threads()} threads)"
    )
    if device.type == "cuda":
        line = f"{torch.cuda.get_device_name(device)} (CUDA {torch.version.cuda}), " + line
    return f"{device.type}: {line}"


@dataclass
class Comparison:
    """Timings of candidates that compute the same tensor, against a baseline.

    Renders itself as a Markdown table in Jupyter; ``to_markdown()`` gives the same text.
    """

    title: str
    baseline: str
    timings: dict[str, Timing]
    skipped: dict[str, str] = field(default_factory=dict)  # name: why it was not timed
    copy: Timing | None = None  # a plain copy of ``nbytes`` bytes, when given
    nbytes: int | None = None  # bytes one call must read and write at least

    def ratio(self, name: str) -> float:
        """How many times as long as the baseline ``name`` takes."""
        return self.timings[name].median / self.timings[self.baseline].median

    def fraction_of_copy(self, name: str) -> float:
        """Effective bandwidth of ``name`` as a fraction of the plain copy's."""
        if self.copy is None:
            raise GatherCourseError(
                "this comparison was made without nbytes, so it has "
                "no copy to compare bandwidth with."
            )
        return self.copy.median / self.timings[name].median

    def to_markdown(self) -> str:
        bw = self.copy is not None
        lines = [
            f"**{self.title}**",
            "",
            f"| way | median | × {self.baseline} |" + (" GB/s | % of copy |" if bw else ""),
            "|---|---:|---:|" + ("---:|---:|" if bw else ""),
        ]
        rows = list(self.timings.items()) + (
            [("*plain copy, same bytes*", self.copy)] if bw else []
        )
        base = self.timings[self.baseline].median
        for name, t in rows:
            row = f"| {name} | {_fmt_time(t.median)} | {_fmt_ratio(t.median / base)} |"
            if bw:
                row += (
                    f" {self.nbytes / t.median / 1e9:.3g} |"
                    f" {_fmt_ratio(100 * self.copy.median / t.median)} |"
                )
            lines.append(row)
        if self.skipped:
            lines += ["", "Not timed:"] + [f"- {name}: {why}" for name, why in self.skipped.items()]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __repr__(self) -> str:
        return self.to_markdown()


def compare(
    candidates: Mapping[str, Callable[[], torch.Tensor]],
    *,
    baseline: str,
    device: torch.device | str | None = None,
    nbytes: int | None = None,
    title: str = "",
    repeats: int = 15,
    skip_mismatches: bool = False,
) -> Comparison:
    """Check that every candidate returns the baseline's tensor, then time each one.

    With ``nbytes`` (bytes a call must move), also times a plain copy of that many bytes.
    A candidate that computes something else raises, or with ``skip_mismatches`` is listed
    as not timed, with the difference.

    >>> x, i = torch.randn(8, 5), torch.randint(0, 5, (8, 3))
    >>> c = compare({"gather": lambda: x.gather(1, i),
    ...              "indexing": lambda: x[torch.arange(8)[:, None], i]},
    ...             baseline="gather", device="cpu")
    >>> c.ratio("gather")
    1.0
    """
    device = _device(device)
    if baseline not in candidates:
        raise GatherCourseError(
            f"baseline must be one of the candidates {list(candidates)}, got {baseline!r}."
        )
    expected = candidates[baseline]()
    skipped = {}
    for name, fn in candidates.items():
        problem = _difference(fn(), expected)
        if problem and not skip_mismatches:
            raise GatherCourseError(
                f"{name!r} does not compute the same tensor as {baseline!r}: "
                f"{problem}. Timing it would compare different work."
            )
        if problem:
            skipped[name] = f"not the same result as {baseline} here ({problem})"
    timings = {
        name: measure(fn, device, repeats=repeats)
        for name, fn in candidates.items()
        if name not in skipped
    }
    copy = None
    if nbytes is not None:
        src = torch.zeros(max(1, nbytes // 8), dtype=torch.float32, device=device)
        dst = torch.empty_like(src)  # reading n/2 bytes and writing n/2 bytes moves n
        copy = measure(lambda: dst.copy_(src), device, repeats=repeats)
    return Comparison(title or f"on {device.type}", baseline, timings, skipped, copy, nbytes)


def _difference(got: object, expected: torch.Tensor) -> str | None:
    if not isinstance(got, torch.Tensor):
        return f"expected a tensor, got {type(got).__name__}"
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return (
            f"expected {list(expected.shape)} {expected.dtype}, got {list(got.shape)} {got.dtype}"
        )
    if not torch.equal(got, expected):
        return "same shape and dtype, different values"
    return None


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
