"""The question bank: ``exercise(qid)`` returns a self-checking question."""

from ._check import CheckResult, Tier
from ._question import Question, exercise, exercise_ids
from . import basics, nlp, vision, topk, mae, friends  # noqa: F401  (registers, in course order)
from . import _variants  # noqa: F401  (adds each question's class variants)

__all__ = ["CheckResult", "Question", "Tier", "exercise", "exercise_ids"]
