"""A student's own variants: the same notebook for the whole class, a task for each student.

A class release (``gather-course release --class-seed S --roster R``) puts one line in the
notebook's setup cell: ``mine = my_class(KEY, roster=TAGS)``. ``KEY`` is made from the
class seed (the seed itself stays with the instructor); ``TAGS`` are short keyed hashes of
the roster's ids (the ids themselves are not in the notebook). The student's id comes from
``JUPYTERHUB_USER`` (on a hub) or ``GATHER_COURSE_STUDENT``; ``mine.exercise(qid)`` is the
question as that student's variant, drawn from the key, the id and the question. The
referee draws the same variant from the seed and the folder ``submitted/<student>/``.

>>> key = class_key(2026)
>>> variant_for(key, "ada", "basics.pick_per_row") == variant_for(key, "ada", "basics.pick_per_row")
True
"""

from __future__ import annotations

import hashlib
import hmac
import os

from .._errors import GatherCourseError
from .._i18n import _
from ._question import Question, exercise

STUDENT_ENVS = ("JUPYTERHUB_USER", "GATHER_COURSE_STUDENT")


def class_key(seed: int) -> str:
    """The key a class's notebooks carry, made from its secret seed (which they don't)."""
    return hmac.new(str(seed).encode(), b"gather-course class key", hashlib.sha256).hexdigest()[:32]


def roster_tag(key: str, student: str) -> str:
    """A student's id as the notebook lists it: a short keyed hash, not the id."""
    return hashlib.sha256(f"{key}:{student}".encode()).hexdigest()[:12]


def variant_for(key: str, student: str, qid: str) -> str:
    """The name of ``student``'s variant of ``qid`` in the class of ``key``."""
    return exercise(qid).pick_variant(key, student)


def student_id() -> str:
    """The student's id: ``JUPYTERHUB_USER`` on a hub, else ``GATHER_COURSE_STUDENT``; ''."""
    for env in STUDENT_ENVS:
        if os.environ.get(env, "").strip():
            return os.environ[env].strip()
    return ""


class MyClass:
    """The questions of a class release, each as this student's own variant."""

    def __init__(self, key: str, roster: str = "") -> None:
        if not isinstance(key, str) or not key.isalnum():
            raise GatherCourseError(
                _("my_class() takes the key of a class release, got {got}.").format(got=repr(key))
            )
        self.key, self.tags = key, set(roster.split())

    @property
    def student(self) -> str:
        return student_id()

    def problem(self) -> str:
        """Why this student has no variants here ('' when they do)."""
        student = self.student
        if not student:
            return _(
                "Each student of this class has their own variant of each question, drawn "
                "from their student id, and no id is set. On your class's JupyterHub it is "
                "your user name; elsewhere set GATHER_COURSE_STUDENT to the id your "
                "instructor gave you, then restart the kernel."
            )
        if roster_tag(self.key, student) not in self.tags:
            return _(
                "{student} is not on this class's roster, so this notebook has no variants "
                "for that id. Check the id (JUPYTERHUB_USER or GATHER_COURSE_STUDENT), or "
                "ask your instructor to add you and release the notebook again."
            ).format(student=student)
        return ""

    def exercise(self, qid: str) -> Question:
        """``qid`` as this student's own variant (a clear error when the id is missing or
        not on the roster)."""
        problem = self.problem()
        if problem:
            raise GatherCourseError(problem)
        return exercise(qid, variant_for(self.key, self.student, qid))

    def _repr_markdown_(self) -> str:
        return self.problem() or _(
            "Your own variant of each question, for student **{student}**."
        ).format(student=self.student)


def my_class(key: str, roster: str = "") -> MyClass:
    """This student's own variants of a class release's questions (its setup cell calls it).

    >>> mine = my_class(class_key(1), roster=roster_tag(class_key(1), "ada"))
    >>> mine.key == class_key(1)
    True
    """
    return MyClass(key, roster)
