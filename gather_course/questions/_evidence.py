"""What a judge gathers about one answer, as plain data: the evidence the steps of a verdict
(:mod:`.steps`) read, and the statuses the judges make.

Two judges make it: ``run_check`` (:mod:`._check`) in the learner's process, and grading's
referee (:mod:`gather_course.grading._referee`, with :mod:`gather_course.grading._timing`
for :class:`Measurement`) from what its sandboxed job sent back. Their statuses live here,
beside the evidence that carries them: :class:`Stop` (why a job ended early), :class:`Timed`
(how a timing run ended), :class:`Large` (the answer's result on the large input).

>>> Measurement(Timed.OVER_CAP).over(1.0)
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ._cases import Case
from ._outcome import Outcome


class Stop(Enum):
    """Why grading's job ended before every call had a result."""

    TIMEOUT = "timeout"  # past the call limit: the worker stopped it
    TOO_LARGE = "too_large"  # what it returned was past the cap
    KILLED = "killed"  # killed (memory) or it ended its own process
    ENDED = "ended"  # it ended early some other way


class Timed(Enum):
    """How one timing run of an answer on the large input ended."""

    MEASURED = "measured"  # its calls ran to the end: their CPU seconds are known
    OVER_CAP = "over_cap"  # stopped once its CPU time passed the cap: slow, known
    WALL_CLOCK = "wall_clock"  # stopped by the wall clock: it waited, slept or hung
    NEW_TASKS = "new_tasks"  # a thread or process began during the timed calls
    FAILED = "failed"  # the job failed (an error, its process ended)


@dataclass(frozen=True)
class Measurement:
    """What one timing run measured: how it ended, the CPU seconds of the timed calls when
    they ran to the end, and the last call's result as the job sent it (``raw``)."""

    how: Timed
    cpu: float | None = None
    raw: Any = None

    @property
    def seconds(self) -> float | None:
        """CPU seconds to compare with a limit: the measured ones, ``inf`` past the cap,
        None when the run tells nothing about time."""
        if self.how is Timed.OVER_CAP:
            return float("inf")
        return self.cpu if self.how is Timed.MEASURED else None

    def over(self, limit: float) -> bool:
        s = self.seconds
        return s is not None and s > limit


@dataclass(frozen=True)
class Seen:
    """One case and what the answer did on it. ``hidden``: one of grading's hidden cases
    (its values are not shown); ``checked_on``: the device a check also runs on, when this
    case ran on the CPU of a machine that has it (grading runs on the CPU)."""

    case: Case
    outcome: Outcome
    hidden: bool = False
    checked_on: str = ""


@dataclass(frozen=True)
class Unfinished:
    """The job ended on ``case`` before every call had a result (grading only)."""

    case: Case
    stop: Stop
    status: str  # how the worker saw it end, shown as is
    limit: float  # the call limit, seconds
    cap_mb: int  # what a job may send back


@dataclass(frozen=True)
class Constraints:
    """What a judge found about the question's op constraints; empty: every one kept.

    The check sees ops run (its op counter); grading also scans the code the function
    reaches, and refuses code that hides what it calls."""

    forbidden_ran: str = ""  # a forbidden op seen running (the check's words)
    forbidden_in_code: tuple[str, str] | None = None  # (name, where): grading's words
    hidden_call: tuple[str, str] | None = None  # (name, where) of a call the scan cannot read
    never_ran: str = ""  # a required op never seen running


@dataclass(frozen=True)
class Growth:
    """Tensor operations counted on a small and a larger input (shapes as text)."""

    small: str
    n_small: int
    big: str
    n_big: int


class Large(Enum):
    """The answer's last result on the large input, judged once its time was within the
    limit."""

    RIGHT = "right"
    STOPPED = "stopped"  # the job's own alarm stopped the call
    RAISED = "raised"
    WRONG = "wrong"


@dataclass(frozen=True)
class LargeInputTiming:
    """The answer's CPU time on the large input against the course solution's (grading),
    and its result there (``large``; ``error``: (type, message) when it raised)."""

    sizes: str
    measured: Measurement
    solution: float  # the course solution's CPU seconds
    factor: float  # the limit, as a multiple of ``solution``
    calls: int
    call_limit: float
    large: Large = Large.RIGHT
    error: tuple[str, str] = ("", "")  # (type, message) when ``large`` is "raised"


@dataclass(frozen=True)
class Summary:
    """What a pass says: how many cases, their labels, where they ran, how many hidden."""

    n: int
    labels: list[str]
    devices: str
    hidden: int = 0


class Evidence:
    """What one judge can find out about an answer, step by step. Each method is asked
    only when every earlier step has passed; the defaults say "nothing to find"."""

    def reached(self) -> tuple[str, str] | None:
        """(name, where) of the first name reaching into the course itself, or None."""
        return None

    def seen(self) -> Iterable[Seen]:
        """Each case and its outcome, in order (calls may happen as they are asked for)."""
        return ()

    def unfinished(self) -> Unfinished | None:
        return None

    def constraints(self) -> Constraints:
        return Constraints()

    def growth(self) -> Growth | None:
        return None

    def timing(self) -> LargeInputTiming | None:
        return None

    def summary(self) -> Summary:
        raise NotImplementedError
