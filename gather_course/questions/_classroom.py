"""A student's own variants: the same notebook for the whole class, a task for each student.

A class release (``gather-course release --class-seed S --roster R``) puts the class into
the notebook's setup cell::

    mine = my_class(KEY, variants={QID: "NAME NAME ..."}, roster="TAG:0.2 TAG:1.0 ...")

``KEY`` is made from the class seed (the seed itself stays with the instructor); each
``TAG`` is a short keyed hash of a roster id (the ids themselves are not in the notebook),
followed by the student's variant of each question, as positions in that question's list
of variant names. The names are the release's: the notebook shows each student the variant
the release stored for them (``class.json``), whatever version of the package runs it. The
student's id comes from ``JUPYTERHUB_USER`` (on a hub) or ``GATHER_COURSE_STUDENT``;
``mine.exercise(qid)`` is the question as that student's variant.

Notebooks released before the variants were stored (``my_class(KEY, roster="TAG TAG")``)
draw each variant again from the key, the id and the question, the way they were released.

>>> table = {"basics.pick_per_row": "layout=BVL"}
>>> mine = MyClass(class_key(1), roster=roster_tag(class_key(1), "ada") + ":0", variants=table)
>>> mine.variants_of("ada")
{'basics.pick_per_row': 'layout=BVL'}
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import replace

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


def installed_bank() -> dict[str, str]:
    """The installed question bank, as a class release records it: the course's version, and
    a digest of every question's knobs and their choices (what a variant's name means)."""
    from importlib.metadata import PackageNotFoundError, version

    from ._question import exercise_ids

    try:
        installed = version("gather-course")
    except PackageNotFoundError:  # a checkout that was never installed
        installed = "unknown"
    knobs = "\n".join(
        f"{qid}: {q.family.describe() if q.family else '-'}"
        for qid in exercise_ids()
        for q in [exercise(qid)]
    )
    return {"version": installed, "knobs": hashlib.sha256(knobs.encode()).hexdigest()[:16]}


def student_id() -> str:
    """The student's id: ``JUPYTERHUB_USER`` on a hub, else ``GATHER_COURSE_STUDENT``; ''."""
    for env in STUDENT_ENVS:
        if os.environ.get(env, "").strip():
            return os.environ[env].strip()
    return ""


class MyClass:
    """The questions of a class release, each as this student's own variant."""

    def __init__(self, key: str, roster: str = "", variants: dict[str, str] | None = None) -> None:
        if not isinstance(key, str) or not key.isalnum():
            raise GatherCourseError(
                _("my_class() takes the key of a class release, got {got}.").format(got=repr(key))
            )
        self.key, self.stored = key, variants is not None
        self.names = {qid: str(names).split() for qid, names in (variants or {}).items()}
        self.table: dict[str, tuple[int, ...]] = {}
        for entry in roster.split():
            tag, _sep, picks = entry.partition(":")
            self.table[tag] = tuple(int(n) for n in picks.split(".") if n.isdigit())
        self.tags = set(self.table)

    def variants_of(self, student: str) -> dict[str, str]:
        """``{qid: variant}`` the release stored for ``student`` ({} if not on the roster)."""
        picks = self.table.get(roster_tag(self.key, student))
        if picks is None:
            return {}
        return {
            qid: names[n]
            for (qid, names), n in zip(self.names.items(), picks)
            if 0 <= n < len(names)
        }

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
        if not self.stored:  # released before the variants were stored: drawn as then
            name = exercise(qid).pick_variant(self.key, self.student, modulo=True)
        else:
            name = self.variants_of(self.student).get(qid, "public")
        try:
            return replace(exercise(qid, name), own=True)
        except GatherCourseError:
            raise GatherCourseError(
                _(
                    "Your class's notebook gives you the variant {name} of {qid}, which "
                    "gather-course {version}, installed here, does not have: the class was "
                    "released with another version of the course. Ask your instructor which "
                    "version to install."
                ).format(name=name, qid=qid, version=installed_bank()["version"])
            ) from None

    def _repr_markdown_(self) -> str:
        return self.problem() or _(
            "Your own variant of each question, for student **{student}**."
        ).format(student=self.student)


def my_class(key: str, roster: str = "", variants: dict[str, str] | None = None) -> MyClass:
    """This student's own variants of a class release's questions (its setup cell calls it).

    >>> mine = my_class(class_key(1), roster=roster_tag(class_key(1), "ada") + ":0")
    >>> mine.key == class_key(1)
    True
    """
    mine = MyClass(key, roster, variants)
    OPENED.append(mine)  # practice never draws this student's graded variants (_practice)
    return mine


OPENED: list[MyClass] = []  # the classes this process's notebook opened with my_class()


def setup_call(source: str) -> MyClass | None:
    """The class a setup cell opens (its ``my_class(...)`` call, read without running it),
    or None where it opens none."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "my_class"
        ):
            try:
                args = [ast.literal_eval(a) for a in node.args]
                kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
                return MyClass(*args, **kwargs)
            except (ValueError, TypeError, SyntaxError, GatherCourseError):
                return None
    return None
