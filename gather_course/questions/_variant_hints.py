"""A class variant's hints, made from its knobs: nothing written twice, no answer line.

Hint 1 names what differs from the public question (the knobs' choices, and the notes of the
task); hint 2 points at the variant's formula (its loop spec, which is public); hint 3 says,
knob by knob, what the change asks of the answer (each knob's ``Knob.steps``, declared with
its choices in :mod:`._variants`). None holds a line of a vectorized answer:
tests/test_hints.py checks them against solutions/variant_solutions.py.

>>> from gather_course import exercise
>>> print(exercise("basics.pick_per_row", "counting=one").hints[0])
Your variant differs from the public question `basics.pick_per_row` in `counting`: `one` instead of `zero`. `cols` counts from 1: 1 is the first.
"""

from __future__ import annotations

from collections.abc import Callable

from .._i18n import N_
from .._text import sentences
from ._knobs import COUNTING_EXPR, Family, Variant

_CHANGE = N_("`{knob}`: `{choice}` instead of `{public}`")
_DIFFERS = N_("Your variant differs from the public question `{qid}` in {changes}.")
_FORMULA = N_(
    "Element by element, the loop spec of your variant computes `{formula}`. Find the "
    "coordinate that the index entry replaces and the dim of the input where it sits in your "
    "layout: that is the dim to gather along."
)
_REFERENCE = N_(
    "Your answer must equal the task's `F.cross_entropy` call, built without it. Write out "
    "what that call gives at one position (minus the log-probability of its label, or "
    "nothing where it is ignored), then build it for every position at once with gather."
)
_SPEC = N_(
    "Run your variant's loop spec, `exercise({qid}, {variant}).spec`, on a small input of "
    "your own and write down which input elements one element of its answer takes. The "
    "public question's loop spec (`exercise({qid}).spec`: read its code) is the formula it "
    "starts from, in the public layout."
)
_STEPS = N_("What each change asks of your answer: {steps}")


def variant_hints(
    qid: str,
    family: Family,
    params: dict[str, str],
    v: Variant,
    tr: Callable[[str], str],
) -> tuple[str, ...]:
    """The three hints of the variant ``params`` of ``qid``, in the language of ``tr``."""
    values = v.values(tr)
    changed = [(k, c, family.knobs[k][0]) for k, c in params.items() if c != family.knobs[k][0]]
    changes = tr("; ").join(tr(_CHANGE).format(knob=k, choice=c, public=p) for k, c, p in changed)
    first = v.with_notes(tr(_DIFFERS).format(qid=qid, changes=changes), tr)  # as the task says
    if "formula" in v.slots:
        second = tr(_FORMULA).format(formula=v.slots["formula"])
    elif "reference" in v.slots:
        second = tr(_REFERENCE)
    else:
        second = tr(_SPEC).format(qid=repr(qid), variant=repr(family.name(params)))
    steps = []
    for k, c, p in changed:
        text = family.knobs[k].step(c)
        expr = COUNTING_EXPR.get(c, "").format(i="i", n="n")
        steps.append(tr(text).format(**values, choice=c, public=p, expr=expr))
    third = tr(_STEPS).format(steps=sentences(steps))
    return (first, second, third)
