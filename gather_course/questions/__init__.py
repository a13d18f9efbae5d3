"""The question bank: ``exercise(qid)`` returns a self-checking question."""

from ._classroom import my_class
from ._question import Question, exercise, exercise_ids
from ._result import CheckResult, Tier

# isort: off
# Importing a topic module registers its questions: this order is the course's order, and the
# variants come last because they extend registered questions.
from . import basics, nlp, vision, topk, mae, friends  # noqa: F401 - imported to register
from . import _variants  # noqa: F401 - imported to add each question's class variants
from ._practice import PRACTICE_SEED_ENV  # (and Question.practice() gets its draw)
# isort: on

__all__ = [
    "PRACTICE_SEED_ENV",
    "CheckResult",
    "Question",
    "Tier",
    "exercise",
    "exercise_ids",
    "my_class",
]
