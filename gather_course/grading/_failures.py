"""How a grader fails on its own, apart from any submission: the errors, and what to say.

A worker that never became ready (:class:`WorkerStartFailed`) is the grader's problem; so is
a course solution that fails its own check. Either stops a class with :class:`GraderBroken`,
worded by :func:`start_problem` with the cause seen and what to do, and blames no student.
"""

from __future__ import annotations

from .._errors import GatherCourseError


class WorkerDied(Exception):
    """The worker process ended or stopped answering; the job it had is lost."""


class WorkerStartFailed(WorkerDied):
    """The worker never became ready: the grader's problem, before any job was sent."""


class GraderBroken(GatherCourseError):
    """The grader cannot grade here: no submission is to blame, and none is judged."""


def start_problem(why: str) -> str:
    """What a worker that did not start says, with its likely cause and what to do."""
    if "ModuleNotFoundError" in why or "ImportError" in why:
        return (
            f"the grading worker cannot import what it needs ({why}). Install the course "
            "into the environment that runs gather-course (pip install -e .), and do not "
            "point PYTHONPATH at another copy of it."
        )
    if "bwrap" in why:
        return (
            f"the sandbox refused to start the grading worker ({why}). On Ubuntu 24.04, "
            "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` (docs/grading.md); "
            "or grade without it: GATHER_COURSE_NO_SANDBOX=1."
        )
    if "MemoryError" in why or "Cannot allocate memory" in why:
        return (
            f"the grading worker ran out of memory while starting ({why}); free memory or "
            "grade with fewer --jobs."
        )
    if "SIGKILL" in why:  # nothing said, nothing caught: what the out-of-memory killer does
        return (
            f"the grading worker was killed as it started ({why}), most often by the "
            "kernel's out-of-memory killer: `dmesg | grep -i -e oom -e killed` (or "
            "`journalctl -k | grep -i oom`) says so. Give the machine more memory, or grade "
            "with fewer --jobs (or fewer Dask workers): each worker holds its own torch."
        )
    return f"the grading worker did not start ({why})."
