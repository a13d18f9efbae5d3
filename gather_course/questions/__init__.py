"""The question bank: ``exercise(qid)`` returns a self-checking question.

Its front door (``__all__``) is also what the other rooms (grading, course tooling, the
command line, the reports) may use of the bank; they never import one of its modules.
"""

from ._cases import Case
from ._classroom import class_key, installed_bank, my_class, roster_tag, setup_call, variant_for
from ._evidence import (
    Constraints,
    Evidence,
    Growth,
    Large,
    LargeInputTiming,
    Measurement,
    Seen,
    Stop,
    Summary,
    Timed,
    Unfinished,
)
from ._mastery import mastery, mastery_summary, read_record, weakest
from ._misconceptions import is_misconception, variant_mistakes
from ._outcome import Opaque, Outcome
from ._question import Question, exercise, exercise_ids
from ._result import HIDDEN_CASE, CheckResult, FailureKind, Tier

# isort: off
# Importing a topic module registers its questions: this order is the course's order, and the
# variants come last because they extend registered questions.
from . import basics, nlp, vision, topk, mae, friends  # noqa: F401 - imported to register
from . import _variants  # noqa: F401 - imported to add each question's class variants
from ._practice import PRACTICE_SEED_ENV  # (and Question.practice() gets its draw)
# isort: on

__all__ = [
    "HIDDEN_CASE",
    "PRACTICE_SEED_ENV",
    "Case",
    "CheckResult",
    "Constraints",
    "Evidence",
    "FailureKind",
    "Growth",
    "Large",
    "LargeInputTiming",
    "Measurement",
    "Opaque",
    "Outcome",
    "Question",
    "Seen",
    "Stop",
    "Summary",
    "Tier",
    "Timed",
    "Unfinished",
    "class_key",
    "exercise",
    "exercise_ids",
    "installed_bank",
    "is_misconception",
    "mastery",
    "mastery_summary",
    "my_class",
    "read_record",
    "roster_tag",
    "setup_call",
    "variant_for",
    "variant_mistakes",
    "weakest",
]
