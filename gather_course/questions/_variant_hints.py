"""A class variant's hints, made from its knobs: nothing written twice, no answer line.

Hint 1 names what differs from the public question (the knobs' choices, and the notes of the
task); hint 2 points at the variant's formula (its loop spec, which is public); hint 3 says,
knob by knob, what the change asks of the answer. None holds a line of a vectorized answer:
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

# What a knob's choice asks of the answer: (knob, choice) -> text, formatted with the
# variant's slots and ``{choice}``, ``{public}`` and ``{expr}`` (where an index entry points).
_STEP: dict[tuple[str, str], str] = {
    ("axis", "columns"): N_(
        "The index `{idx}` is `{idx_shape}`: it runs down each column, so it replaces the row "
        "coordinate, not the column."
    ),
    ("counting", "*"): N_(
        "`{idx}` does not count from 0: one whole-tensor arithmetic step on it gives the "
        "0-based positions (an entry `i` stands for element `{expr}` of an axis of size `n`)."
    ),
    ("layout", "*"): N_(
        "The axes come in another order (`{choice}`, not `{public}`): find each axis in your "
        "shapes, gather along the one the index replaces, and lay the result out as the task "
        "asks."
    ),
    ("channels", "last"): N_(
        "The channels come last (`[B, H, W, C]`): the pixel positions are no longer the last "
        "dims, so flatten and index the right ones."
    ),
    ("out", "BPC"): N_(
        "The result is `[B, P, C]`: points before channels, the other way round from the "
        "public question."
    ),
    ("point", "xy"): N_(
        "`coords` holds `(x, y)`: x is the column and y the row, the reverse of the public "
        "`(y, x)`."
    ),
    ("keepdim", "yes"): N_(
        "The result keeps a size-1 last dim: do not drop the dim you gathered along, or add "
        "it back at the end."
    ),
    ("what", "prob"): N_(
        "Probabilities, not log-probabilities: normalise with softmax instead of log_softmax, "
        "over the vocabulary."
    ),
    ("reduction", "sum"): N_("Sum the losses of the positions that count: no division."),
    ("reduction", "none"): N_(
        "No reduction: return each position's loss, shaped like `labels`, and 0 where a label "
        "is ignored."
    ),
    ("keep", "lowest"): N_(
        "The lowest scores win: rank the scores the other way round (topk can take the smallest)."
    ),
    ("order", "position"): N_(
        "The chosen patches keep the order they have in `patches`: put the chosen indices in "
        "increasing order before you gather."
    ),
    ("fill", "minus_one"): N_(
        "The positions that receive no row hold -1: start from a tensor full of -1, not zeros."
    ),
    ("keep", "largest"): N_(
        "The largest noise is kept: rank the noise in decreasing order, not increasing."
    ),
    ("mask", "kept"): N_("The mask marks the kept positions with 1 (or `True`): MAE's inverted."),
    ("dtype", "bool"): N_(
        "The mask is boolean: a comparison gives one, or convert the float mask at the end."
    ),
    ("kept", "last"): N_(
        "The kept tokens are the last `len_keep` of the shuffled order: a token's place in "
        "`x_visible` is its shuffled position minus the `L - len_keep` removed ones before it."
    ),
}


def step_text(knob: str, choice: str) -> str | None:
    """The bank text of what ``knob = choice`` asks of the answer (None: no text for it)."""
    return _STEP.get((knob, choice)) or _STEP.get((knob, "*"))


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
        text = step_text(k, c)
        expr = COUNTING_EXPR.get(c, "").format(i="i", n="n")
        steps.append(tr(text).format(**values, choice=c, public=p, expr=expr))
    third = tr(_STEPS).format(steps=sentences(steps))
    return (first, second, third)
