"""Measuring one operation honestly: ``torch.utils.benchmark`` with warm-up, blocks sized by
``Timer.blocked_autorange``, medians, the GPU waited for; each way checked against gather's
result before it is timed, and reported as a ratio to gather and a fraction of a copy.

The public face is :mod:`gather_course.benchmark` (``compare``, ``measure``, ``machine``).
"""

from __future__ import annotations

import os
import platform
import statistics
import timeit
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import torch
import torch.utils.benchmark as benchmark

from ._errors import GatherCourseError
from .device import default_device, parse_device


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
    return default_device() if device is None else parse_device(str(device), "device")


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
