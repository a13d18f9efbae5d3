"""Where a class's submissions are judged: the embedded pool, or a Dask cluster.

Both take :class:`~._classjob.StudentJob` objects and give back plain results as they
finish (``judge_student``'s dicts). The embedded pool is a few referees with warm workers
in the instructor's own process, one thread each: a laptop needs nothing more. A Dask pool
(:mod:`._dask`) sends the same jobs to a ``dask.distributed`` cluster whose workers keep
their own warm referees. Neither writes anything: the gradebook is the instructor's
process's alone (:mod:`._grade`).
"""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any

from .._errors import GatherCourseError
from ._sandbox import SANDBOX, Worker, isolation

if TYPE_CHECKING:
    from ._classjob import StudentJob
    from ._referee import Referee


def _started_first(worker: Worker) -> Callable[[], Worker]:
    """A referee's worker factory: ``worker``, started already, then fresh ones."""
    given = [worker]
    return lambda: given.pop() if given else Worker()


class EmbeddedPool:
    """``jobs`` referees in this process, each with a warm worker.

    Opened before this process imports torch and the question bank (this module imports
    neither until its workers have started): the workers warm up meanwhile. The workers
    past one core less than the machine's start with the first verdict (:meth:`run`): a
    worker's start-up is a core's second, and on few cores the first submission would wait
    for it as well as for the first worker and this process.
    """

    def __init__(
        self, jobs: int | None = None, timeout: float | None = None, require_sandbox: bool = False
    ) -> None:
        level = isolation()
        if require_sandbox and level.level != SANDBOX:
            raise GatherCourseError(f"--require-sandbox: no sandbox here ({level.detail}).")
        count = max(1, jobs or os.cpu_count() or 1)
        now = max(1, min(count, (os.cpu_count() or 1) - 1))
        started: list[Worker | None] = [Worker() for _ in range(now)]  # import torch meanwhile
        from ._referee import CALL_LIMIT, Referee

        self.referees = [
            Referee(_started_first(w) if w else Worker, call_limit=timeout or CALL_LIMIT)
            for w in started + [None] * (count - now)
        ]
        self._serving = now  # the referees that take submissions now (the rest: see run)

    def describe(self) -> str:
        return f"isolation: {isolation()}"

    def __len__(self) -> int:
        return len(self.referees)

    def run(
        self, jobs: list[StudentJob], released: dict[str, Any], secret: int
    ) -> Iterator[dict[str, Any]]:
        """Each job's result, as it finishes (the solutions are timed first)."""
        from ._classjob import baselines, judge_student
        from ._submission import NotGraded

        try:
            baselines(self.referees[0], released, secret)
        except NotGraded as exc:
            raise GatherCourseError(f"grading cannot start: {exc}") from None
        free: queue.Queue[Referee] = queue.Queue()
        for referee in self.referees[: self._serving]:
            free.put(referee)

        def one(job: StudentJob) -> dict[str, Any]:
            referee = free.get()
            try:
                return judge_student(referee, job, released, secret)
            finally:
                free.put(referee)

        threads = ThreadPoolExecutor(max_workers=len(self.referees))
        try:
            for n, future in enumerate(as_completed([threads.submit(one, job) for job in jobs])):
                if n + 1 < len(jobs):
                    self._start_the_rest(free)
                yield future.result()
        finally:  # stopped early (Ctrl+C): what has not started never will
            threads.shutdown(wait=True, cancel_futures=True)

    def _start_the_rest(self, free: queue.Queue[Referee]) -> None:
        """The referees held back: their workers start now, and they take submissions."""
        for referee in self.referees[self._serving :]:
            referee.worker  # noqa: B018 - starts it now
            free.put(referee)
        self._serving = len(self.referees)

    def close(self) -> None:
        for referee in self.referees:
            referee.close()


def open_pool(
    scheduler: str | None,
    jobs: int | None = None,
    timeout: float | None = None,
    require_sandbox: bool = False,
    certificates: str | None = None,
    insecure: bool = False,
) -> Any:
    """The embedded pool, or with ``scheduler`` (``local:N`` or a scheduler's address) a
    Dask pool (``certificates``: the class's folder, for ``tls://``). Close it when the class
    is graded."""
    if not scheduler:
        return EmbeddedPool(jobs, timeout, require_sandbox)
    try:
        from ._dask import DaskPool
    except ImportError:
        raise GatherCourseError(
            "--scheduler needs dask.distributed: pip install 'dask[distributed]'"
        ) from None
    return DaskPool(scheduler, timeout, require_sandbox, certificates, insecure)
