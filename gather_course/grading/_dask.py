"""Grading on a ``dask.distributed`` cluster: the same referee, warm on every Dask worker.

``gather-course grade ASSIGNMENT --scheduler ADDRESS`` sends each student's submission, as
text, to the cluster; ``--scheduler local:N`` starts a ``LocalCluster`` of N worker
processes first. Every Dask worker starts its own referees with warm sandboxed workers once
(:class:`RefereePlugin`, one per thread), times the course's solutions on its own machine
before it judges anyone, and sends back plain data only (verdicts, messages, notes). When a
worker dies, Dask runs its submissions elsewhere (judging is idempotent); when the
scheduler goes away, the run stops with a clear error, and the journal
(:mod:`._journal`) lets a rerun grade only what is missing.
"""

from __future__ import annotations

import hashlib
import queue
import threading
from collections.abc import Iterator
from typing import Any

from distributed import Client, LocalCluster, WorkerPlugin, as_completed, get_worker

from .._errors import GatherCourseError
from ._classjob import StudentJob, baselines, judge_student
from ._failures import GraderBroken
from ._referee import CALL_LIMIT, Referee
from ._sandbox import SANDBOX, Worker, isolation
from ._scheduler_address import check_scheduler_address, probe, unparse
from ._tls import security

PLUGIN = "gather-course-referees"
_CONNECT = 20  # seconds to reach a scheduler before saying it is not there


class RefereePlugin(WorkerPlugin):
    """A Dask worker's referees: one per thread, each with a warm sandboxed worker,
    started when the plugin is registered and closed with the Dask worker."""

    idempotent = True  # registering it again (a rerun on the same cluster) is harmless

    def __init__(self, timeout: float, require_sandbox: bool) -> None:
        self.timeout, self.require_sandbox = timeout, require_sandbox

    def setup(self, worker: Any) -> None:
        level = isolation()
        if self.require_sandbox and level.level != SANDBOX:
            raise GatherCourseError(f"--require-sandbox: no sandbox here ({level.detail}).")
        self.isolation = str(level)
        self.free: queue.Queue[Referee] = queue.Queue()
        self.referees = [
            Referee(Worker, call_limit=self.timeout) for _ in range(worker.state.nthreads)
        ]
        for referee in self.referees:
            referee.worker  # noqa: B018 - warm now, not at the first submission
            self.free.put(referee)
        self.lock = threading.Lock()
        self.released: dict[str, dict[str, Any]] = {}
        self.timed: set[tuple[str, int]] = set()

    def teardown(self, worker: Any) -> None:
        for referee in getattr(self, "referees", []):
            referee.close()

    def notebooks(self, texts: dict[str, str]) -> tuple[str, dict[str, Any]]:
        """The released notebooks, read once per Dask worker."""
        import nbformat

        key = hashlib.sha256(repr(sorted(texts.items())).encode()).hexdigest()
        with self.lock:
            if key not in self.released:
                self.released[key] = {
                    name: nbformat.reads(text, as_version=4) for name, text in texts.items()
                }
            return key, self.released[key]

    def time_solutions(
        self, referee: Referee, key: str, released: dict[str, Any], secret: int
    ) -> None:
        """The solutions timed on this machine before its first submission."""
        with self.lock:
            if (key, secret) not in self.timed:
                baselines(referee, released, secret)  # NotGraded: a grader problem
                self.timed.add((key, secret))


def grade_on_worker(job: StudentJob, released_texts: dict[str, str], secret: int) -> dict:
    """The Dask task: one student judged by one of this worker's referees; plain data back."""
    plugin = get_worker().plugins[PLUGIN]
    key, released = plugin.notebooks(released_texts)
    referee = plugin.free.get()
    try:
        plugin.time_solutions(referee, key, released, secret)
        return judge_student(referee, job, released, secret)
    finally:
        plugin.free.put(referee)


class DaskPool:
    """Submissions judged on a Dask cluster: ``local:N`` (a LocalCluster started here) or
    the address of a running scheduler (``tls://host:8786`` with the class's
    ``certificates``; ``tcp://`` on the loopback, or anywhere with ``insecure``)."""

    def __init__(
        self,
        scheduler: str,
        timeout: float | None,
        require_sandbox: bool,
        certificates: str | None = None,
        insecure: bool = False,
    ) -> None:
        self.address, self.cluster = scheduler, None
        if scheduler.startswith("local:"):
            self.client = self._local(scheduler)
        else:
            self.client = _connect(scheduler, certificates, insecure)
        plugin = RefereePlugin(timeout or CALL_LIMIT, require_sandbox)
        try:
            self.client.register_plugin(plugin, name=PLUGIN)
        except GatherCourseError:
            self.close()
            raise
        except Exception as exc:  # noqa: BLE001 - a worker's set-up failed: say which and why
            self.close()
            raise GatherCourseError(f"the Dask workers could not start grading: {exc}") from None

    def _local(self, scheduler: str) -> Client:
        """A LocalCluster here: TLS with certificates that live only in this process, on
        the loopback only, and no dashboard."""
        from distributed.security import Security

        count = scheduler.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise GatherCourseError(
                f"--scheduler local:N takes a number of workers (local:2), got {scheduler}"
            )
        self.cluster = LocalCluster(
            n_workers=int(count),
            threads_per_worker=1,
            processes=True,
            protocol="tls",
            host="127.0.0.1",
            security=Security.temporary(),
            dashboard_address=None,
            silence_logs=50,
        )
        return Client(self.cluster)

    def describe(self) -> str:
        found = self.client.run(lambda: str(isolation()))
        kinds = sorted(set(found.values()))
        return f"isolation on {len(found)} Dask workers ({self.address}): {'; '.join(kinds)}"

    def __len__(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def run(
        self, jobs: list[StudentJob], released: dict[str, Any], secret: int
    ) -> Iterator[dict[str, Any]]:
        """Each job's result as it finishes. A worker that dies has its jobs run elsewhere;
        a scheduler that goes away ends the run with :class:`GatherCourseError`."""
        import nbformat

        texts = {name: nbformat.writes(nb) for name, nb in released.items()}
        done = 0
        try:
            [shared] = self.client.scatter([texts], broadcast=True)
            futures = {
                self.client.submit(
                    grade_on_worker, job, shared, secret, pure=False, retries=2
                ): job.student
                for job in jobs
            }
            for future in as_completed(futures):
                student = futures.pop(future)
                try:
                    result = future.result()
                except GraderBroken as exc:  # the grader's own failure: stop, blame no one
                    raise GraderBroken(f"on a Dask worker, {exc}") from None
                except Exception as exc:
                    if _gone(exc):
                        raise
                    result = {
                        "student": student,
                        "verdicts": {},
                        "notes": [],
                        "problem": f"the grader failed on a Dask worker ({type(exc).__name__}: "
                        f"{str(exc)[:200]}); grade it again",
                    }
                done += 1
                yield result
        except Exception as exc:
            if not _gone(exc):
                raise
            raise GatherCourseError(
                f"the Dask scheduler at {self.address} went away after {done} of {len(jobs)} "
                "submissions; the verdicts received are kept in the journal: run the same "
                "command again (with a scheduler) to grade the rest"
            ) from None

    def close(self) -> None:
        for part in (getattr(self, "client", None), self.cluster):
            if part is not None:
                try:
                    part.close()
                except Exception:  # noqa: BLE001 - closing a cluster that is gone
                    pass


def _connect(scheduler: str, certificates: str | None, insecure: bool) -> Client:
    """A client of the scheduler at ``scheduler``, once its address is allowed and a Dask
    scheduler that accepts this class's certificates answers there; else one line."""
    scheme, host, port = check_scheduler_address(
        scheduler, certificates=bool(certificates), insecure=insecure
    )
    sec = security(certificates) if certificates else None
    context = sec.get_connection_args("client")["ssl_context"] if sec else None
    found = probe(scheme, host, port, context)
    if found:
        raise GatherCourseError(f"no Dask scheduler to grade with at {scheduler}: {found}")
    try:  # the address as checked: the port written (8786 when none was given)
        return Client(unparse(scheme, host, port), security=sec, timeout=_CONNECT)
    except Exception as exc:  # noqa: BLE001 - whatever Dask met on the way: one line
        raise GatherCourseError(
            f"could not connect to the Dask scheduler at {scheduler} "
            f"({type(exc).__name__}: {str(exc)[:200]})"
        ) from None


def _gone(exc: BaseException) -> bool:
    """Whether ``exc`` means the scheduler (or our connection to it) is gone."""
    from concurrent.futures import CancelledError

    from distributed.comm.core import CommClosedError

    return isinstance(exc, (CommClosedError, CancelledError, OSError, TimeoutError)) or (
        type(exc).__name__ in ("FutureCancelledError", "CancelledError")
    )
