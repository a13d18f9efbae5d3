"""What a check or a grade found: :class:`CheckResult`, and the failure that makes one.

A result renders itself (``_repr_markdown_`` in Jupyter, ``str`` elsewhere); its details are
kept in English and shown in the learner's language. The grader builds the same results
from the worker's data, so what ``check`` says is what grading gives.

>>> r = CheckResult("basics.pick_per_row", True, Tier.PASSED, "All 5 test cases pass.")
>>> bool(r), r.tier.value
(True, 'passed')
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from .._errors import GatherCourseError
from .._i18n import N_, _
from .._text import plain, sentences, wrap
from .._tier import Tier

CLASS_ENV = "GATHER_COURSE_CLASS"  # set by a class's JupyterHub: no hints or solutions


def class_without_help() -> bool:
    """Whether the class's hub turned hints and solutions off (:data:`CLASS_ENV`)."""
    return os.environ.get(CLASS_ENV, "") not in ("", "0")


# The labels of a result's details, kept in English in the result and shown translated.
_LABELS = (
    N_("case"),
    N_("inputs"),
    N_("where"),
    N_("error"),
    N_("your call"),
    N_("broken rule"),
    N_("fix"),
    N_("first wrong element"),
    N_("expected"),
    N_("got"),
    N_("formula"),
    N_("traced"),
    N_("small input"),
    N_("larger input"),
    N_("shift"),
    N_("grading"),
    N_("likely mistake"),
)

# How a result is laid out; each language has its own punctuation (Chinese: （）：).
_VERDICT_LINE = N_("{mark} {verdict} ({qid}): {headline}")
# The advice under a verdict, set apart: in italics, which Chinese fonts lack (bold is too loud:
# the zh catalog shows it plain)
_ADVICE_MD = N_("*{advice}*")
_VERDICT_MD = N_("{mark} **{verdict}** (`{qid}`): {headline}")
_DETAIL_LINE = N_("{key}: {value}")
_DETAIL_MD = N_("- **{key}:** {value}")

HIDDEN_CASE = N_("hidden case: {label}")  # a grading case's label; shown translated


@dataclass(frozen=True)
class FailureKind:
    """What went wrong, short and countable: a bank text (``template``, translated when shown)
    and the values it is formatted with. The class report groups verdicts by it; a learner
    reads the headline and details instead.

    >>> FailureKind("dtype {got}", {"got": "float32"}).text()
    'dtype float32'
    """

    template: str
    args: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        return _(self.template).format(**self.args)

    def plain(self) -> list[Any]:
        """As JSON holds it: ``[template, args]``."""
        return [self.template, dict(self.args)]


@dataclass
class CheckResult:
    """What ``Question.check`` found. ``passed`` is the verdict; ``bool(result)`` too.

    Renders itself as Markdown in Jupyter; ``str(result)`` is the plain-text version.
    """

    qid: str
    passed: bool
    tier: Tier
    headline: str
    details: list[tuple[str, str]] = field(default_factory=list)
    advice_sentences: tuple[str, ...] = ()  # what to try next, a sentence each
    _pair: tuple[str, Any, Any] | None = field(default=None, repr=False, compare=False)
    diagnosis: FailureKind | None = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.passed

    @property
    def message(self) -> str:
        return str(self)

    @property
    def advice(self) -> str:
        """What to try next, its sentences joined as the language joins them."""
        return sentences(self.advice_sentences)

    @property
    def _verdict(self) -> str:
        return (
            _("Correct")
            if self.passed
            else _("Not attempted yet")
            if self.tier == Tier.NOT_ATTEMPTED
            else _("Incorrect")
        )

    def __str__(self) -> str:
        """The verdict as plain text (an error's box, Validate, nbgrader's feedback, a
        terminal): code as it is, without Markdown's marks; a sentence of advice a line,
        wrapped only where one sentence is longer than a line (they do not wrap it)."""
        mark = "✅" if self.passed else "❌"
        lines = [
            _(_VERDICT_LINE).format(
                mark=mark, verdict=self._verdict, qid=self.qid, headline=plain(self.headline)
            )
        ]
        lines += [
            "  " + _(_DETAIL_LINE).format(key=_(k), value=plain(_detail(k, v)))
            for k, v in self.details
        ]
        for sentence in self.advice_sentences:
            lines += wrap(plain(sentence), 92, indent="  ")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        icon = "✅" if self.passed else "❌"
        lines = [
            _(_VERDICT_MD).format(
                mark=icon, verdict=self._verdict, qid=self.qid, headline=self.headline
            )
        ]
        if self.details:
            lines.append("")
            lines += [
                _(_DETAIL_MD).format(key=_(k), value=_md_value(_detail(k, v)))
                for k, v in self.details
            ]
        if self.advice_sentences:
            lines += ["", _(_ADVICE_MD).format(advice=self.advice)]
        return "\n".join(lines)

    def draw(self, ax: Any = None) -> Any:
        """Draw the expected values next to yours for the failing case (small cases only).

        Returns the matplotlib Figure; wrong cells are marked. ``ax``: two Axes to draw on.
        """
        from .._draw_result import draw_expected_vs_got

        if self._pair is None:
            raise GatherCourseError(
                _("nothing to draw: draw() shows wrong values, and this result is a pass.")
                if self.passed
                else _(
                    "nothing to draw: draw() shows wrong values, and this result is about "
                    "something else ({tier})."
                ).format(tier=_(self.tier.value))
            )
        name, expected, got = self._pair
        return draw_expected_vs_got(name, expected, got, ax=ax)

    def assert_passed(self) -> CheckResult:
        """Raise ``AssertionError`` with the full feedback unless the check passed.

        Returns the result itself, so a test cell ending with it shows the verdict. In
        Jupyter the failure shows the verdict alone, without the course's frames.
        """
        if not self.passed:
            raise _CheckFailed(self)
        return self


class _CheckFailed(AssertionError):
    """A failed check: an ``AssertionError`` (nbgrader and pytest see a failure) that IPython
    shows as the verdict alone, not as a traceback through the course's code."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__("\n" + str(result))
        self.result = result

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom tracebacks
        first, *rest = str(self.result).splitlines()
        return [f"\x1b[1;31m{first}\x1b[0m", *rest]


_HIDDEN_LABEL = re.compile(re.escape(HIDDEN_CASE).replace(re.escape("{label}"), "(.*)"))


def _detail(key: str, value: str) -> str:
    """A detail's value as shown: a case's label is the bank's text, so it is translated."""
    if key == "case" and (hidden := _HIDDEN_LABEL.fullmatch(value)):
        return _(HIDDEN_CASE).format(label=_(hidden.group(1)))
    return _(value) if key in ("case", "values") else value


def _md_value(v: str) -> str:
    code = "\n" not in v and len(v) < 120 and ("[" in v or "=" in v)
    return f"`{v}`" if code and not v.rstrip().endswith((".", "?", "。", "？")) else v
