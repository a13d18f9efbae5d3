"""Each question's knobs: the families of class variants (see :mod:`._knobs`).

A family's ``build`` turns one choice per knob into the variant: its inputs (from the public
case's), the way back to the public loop spec, and its task, made from one template whose
slots are code and whose words are bank texts. No variant's vectorized answer is here:
solutions/variant_solutions.py holds the code that shows each can be solved.

Long on purpose: one idea, the table of every question's knobs, declared one after another
like the topic modules, each family a short ``build``; split by topic it would scatter one
table (and the instructor guide's copy of it, which a test keeps in step).
"""

from __future__ import annotations

from typing import Any

import torch

from .._i18n import N_
from . import nlp, topk
from ._knobs import (
    COUNTING,
    Family,
    Inputs,
    Knob,
    Variant,
    counted,
    counting_notes,
    like,
    permuted,
    shape,
    unpermuted,
)
from ._question import add_variants

# What a knob's choice asks of the answer (a variant's third hint), for the knobs that
# several questions share; every other knob's are beside it, in its question's _add.
_COUNTING_STEP = N_(
    "`{idx}` does not count from 0: one whole-tensor arithmetic step on it gives the "
    "0-based positions (an entry `i` stands for element `{expr}` of an axis of size `n`)."
)
_LAYOUT_STEP = N_(
    "The axes come in another order (`{choice}`, not `{public}`): find each axis in your "
    "shapes, gather along the one the index replaces, and lay the result out as the task "
    "asks."
)
_KEEPDIM_STEP = N_(
    "The result keeps a size-1 last dim: do not drop the dim you gathered along, or add "
    "it back at the end."
)
_WHAT_STEP = N_(
    "Probabilities, not log-probabilities: normalise with softmax instead of log_softmax, "
    "over the vocabulary."
)


def _add(
    qid: str,
    knobs: dict[str, Knob] | None = None,
    build=None,
    why: str = "",
    few: str = "",
):
    """A question's knobs (each with its choices and what they ask of the answer) and the
    ``build`` that makes a variant from one choice per knob; or why it has none."""
    add_variants(qid, Family(knobs, build, few) if knobs is not None else None, why)


_CANONICAL = (
    "its answer is fixed by its inputs (the input, the dim and the index are given), "
    "so a variant would be the same question"
)
for _qid in (
    "basics.gather_loop",
    "basics.reverse_index",
    "friends.gather_backward",
    "friends.gather_via_take",
):
    _add(_qid, why=_CANONICAL)


# -- basics.pick_per_row: which axis keeps its number, and how the index counts ---------------
def _pick(p: dict[str, str]) -> Variant:
    columns, c = p["axis"] == "columns", p["counting"]
    to_v, to_pub = COUNTING[c]

    def inputs(pub: Inputs) -> Inputs:
        x, cols = pub["x"], to_v(pub["cols"], pub["x"].shape[1])
        return (
            {"x": like(x, x.T), "rows": cols.T.contiguous()} if columns else {"x": x, "cols": cols}
        )

    def to_public(v: Inputs) -> Inputs:
        x, cols = (v["x"].T, v["rows"].T) if columns else (v["x"], v["cols"])
        return {"x": x, "cols": to_pub(cols, x.shape[1])}

    idx = "rows" if columns else "cols"
    formula = (
        f"out[k, c] = x[{counted(c, 'rows[k, c]', 'R')}, c]"
        if columns
        else f"out[r, k] = x[r, {counted(c, 'cols[r, k]', 'C')}]"
    )
    return Variant(
        args=("x", idx),
        inputs=inputs,
        to_public=to_public,
        from_public=(lambda out: out.T.contiguous()) if columns else (lambda out: out),
        template="`x` is `{x_shape}` and `{idx}` is `{idx_shape}`. Return the `{idx_shape}` "
        "tensor with `{formula}`, without a Python loop.",
        slots=dict(
            x_shape="[R, C]", idx=idx, idx_shape="[K, C]" if columns else "[R, K]", formula=formula
        ),
        notes=counting_notes(c),
        title="One pick per column" if columns else "",
    )


_add(
    "basics.pick_per_row",
    {
        "axis": Knob(
            ("rows", "columns"),
            {
                "columns": N_(
                    "The index `{idx}` is `{idx_shape}`: it runs down each column, so it replaces "
                    "the row coordinate, not the column."
                )
            },
        ),
        "counting": Knob(("zero", "one", "end", "end1"), {"*": _COUNTING_STEP}),
    },
    _pick,
)


# -- nlp: the layout of the logits, and what is returned ----------------------------------------
class _Seq:
    """The logits' layout (``BLV``, ``BVL``, ``LBV``, or with ``T``): shapes, index texts, and
    the transforms of the logits and of the ids (``[L, B]`` when the sequence comes first)."""

    def __init__(self, layout: str, ids: str, out_batch_first: bool = False):
        self.layout, self.ids, self.out_batch_first = layout, ids, out_batch_first
        self.last = next(ch for ch in layout if ch not in "BL")  # V or T
        self.order = tuple(("B", "L", self.last).index(ch) for ch in layout)
        self.seq_first = layout.startswith("L")

    def logits_shape(self) -> str:
        return shape(("B", "L", self.last), self.order)

    def ids_shape(self, extra: str = "") -> str:
        return ("[L, B" if self.seq_first else "[B, L") + extra + "]"

    def at(self, b: str, l: str, v: str) -> str:
        """The logits' element ``[b, l, v]`` of the public layout, written in this one."""
        return "[" + ", ".join((b, l, v)[i] for i in self.order) + "]"

    def pos(self, b: str, l: str) -> str:
        return f"[{l}, {b}]" if self.seq_first else f"[{b}, {l}]"

    def inputs(self, pub: Inputs) -> Inputs:
        out = permuted(pub, "logits", self.order)
        if self.seq_first:
            out[self.ids] = pub[self.ids].T.contiguous()
        return out

    def to_public(self, v: Inputs) -> Inputs:
        out = unpermuted(v, "logits", self.order)
        if self.seq_first:
            out[self.ids] = v[self.ids].T
        return out

    def out_pos(self, b: str, l: str, extra: str = "") -> str:
        """The output's element: ``[l, b]`` when it comes sequence first, like the ids."""
        flip = self.seq_first and not self.out_batch_first
        return (f"[{l}, {b}" if flip else f"[{b}, {l}") + extra + "]"

    def out(self, out: torch.Tensor, keepdim: bool = False) -> torch.Tensor:
        out = out.T.contiguous() if self.seq_first and not self.out_batch_first else out
        return out.unsqueeze(-1) if keepdim else out


def _layouts(last: str) -> tuple[str, ...]:
    return (f"BL{last}", f"B{last}L", f"LB{last}")


_LAYOUT_NOTE = "Here `logits` is `{logits_shape}` and `{ids}` is `{ids_shape}`."


def _labels(p: dict[str, str]) -> Variant:
    s, c, keep = _Seq(p["layout"], "labels", True), p["counting"], p["keepdim"] == "yes"
    to_v, to_pub = COUNTING[c]
    label = counted(c, "labels" + s.pos("b", "l"), "T")

    def to_public(v: Inputs) -> Inputs:
        pub = s.to_public(v)
        return {**pub, "labels": to_pub(pub["labels"], 0)}

    return Variant(
        args=("logits", "labels"),
        inputs=lambda pub: s.inputs({**pub, "labels": to_v(pub["labels"], 0)}),
        to_public=to_public,
        from_public=lambda o: s.out(o, keep),
        template="`logits` is `{logits_shape}` (a score per tag at each position), `labels` is "
        "`{ids_shape}` (the gold tag of each position). Return the `{out_shape}` scores of "
        "the gold tags: `{formula}`.",
        slots=dict(
            logits_shape=s.logits_shape(),
            ids_shape=s.ids_shape(),
            idx="labels",
            out_shape=s.out_pos("B", "L", ", 1" if keep else ""),
            formula=f"out{s.out_pos('b', 'l', ', 0' if keep else '')} = logits{s.at('b', 'l', label)}",
        ),
        notes=counting_notes(c),
    )


_add(
    "nlp.label_scores",
    {
        "layout": Knob(_layouts("T"), {"*": _LAYOUT_STEP}),
        "counting": Knob(("zero", "one"), {"*": _COUNTING_STEP}),
        "keepdim": Knob(("no", "yes"), {"yes": _KEEPDIM_STEP}),
    },
    _labels,
)


_WHAT = {"log": ("log-probabilities", "log_softmax"), "prob": ("probabilities", "softmax")}


def _probs(s: _Seq, what: str, keep: bool):
    return lambda o: s.out(o.exp() if what == "prob" else o, keep)


def _tokens(p: dict[str, str]) -> Variant:
    s, keep = _Seq(p["layout"], "input_ids", True), p["keepdim"] == "yes"
    word, fn = _WHAT[p["what"]]
    row = s.at("b", "l", ":").replace(", :]", "]")  # logits[b, l] or logits[b, :, l]
    return Variant(
        args=("logits", "input_ids"),
        inputs=s.inputs,
        to_public=s.to_public,
        from_public=_probs(s, p["what"], keep),
        template="`logits` is `{logits_shape}`, `input_ids` is `{ids_shape}`. Return the "
        "`{out_shape}` {what} `{formula}` (the id at its own position), as in a "
        "`compute_log_probs` method.",
        slots=dict(
            logits_shape=s.logits_shape(),
            ids_shape=s.ids_shape(),
            out_shape=s.out_pos("B", "L", ", 1" if keep else ""),
            formula=("out[b, l] = " if s.seq_first else "")
            + f"{fn}(logits{row})[input_ids{s.pos('b', 'l')}]",
        ),
        words=dict(what=word),
    )


_add(
    "nlp.token_log_probs",
    {
        "layout": Knob(_layouts("V"), {"*": _LAYOUT_STEP}),
        "what": Knob(("log", "prob"), {"prob": _WHAT_STEP}),
        "keepdim": Knob(("no", "yes"), {"yes": _KEEPDIM_STEP}),
    },
    _tokens,
)


def _causal(p: dict[str, str]) -> Variant:
    s, keep = _Seq(p["layout"], "input_ids"), p["keepdim"] == "yes"
    _word, fn = _WHAT[p["what"]]
    row = s.at("b", "t", ":").replace(", :]", "]")
    out = s.pos("b", "t")[:-1] + (", 0]" if keep else "]")
    slots = dict(
        logits_shape=s.logits_shape(),
        ids_shape=s.ids_shape(),
        ids="input_ids",
        out_shape=("[L-1, B" if s.seq_first else "[B, L-1") + (", 1]" if keep else "]"),
        formula=f"out{out} = {fn}(logits{row})[input_ids{s.pos('b', 't+1')}]",
    )
    return Variant(
        args=("logits", "input_ids"),
        inputs=s.inputs,
        to_public=s.to_public,
        from_public=_probs(s, p["what"], keep),
        template="In a causal language model the logits at position `t` predict token `t + 1`. "
        "Return the `{out_shape}` tensor `{formula}`.",
        slots=slots,
        notes=(_LAYOUT_NOTE,) if s.layout != "BLV" else (),
    )


_add(
    "nlp.causal_lm_log_probs",
    {
        "layout": Knob(_layouts("V"), {"*": _LAYOUT_STEP}),
        "what": Knob(("log", "prob"), {"prob": _WHAT_STEP}),
        "keepdim": Knob(("no", "yes"), {"yes": _KEEPDIM_STEP}),
    },
    _causal,
)


def _nll_positions(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int = -100):
    """The loop spec of each position's negative log-likelihood, 0 where it is ignored."""
    B, L, _V = logits.shape
    out = torch.zeros(B, L, dtype=logits.dtype)
    for b in range(B):
        for l in range(L):
            if int(labels[b, l]) != ignore_index:
                out[b, l] = -nlp._log_prob(logits[b, l], int(labels[b, l]))
    return out


_REDUCTIONS = {
    "mean": ("the scalar mean negative log-likelihood over the other positions", ""),
    "sum": (
        "the scalar sum of the negative log-likelihoods over the other positions",
        ", reduction='sum'",
    ),
    "none": (
        "the `{ids_shape}` negative log-likelihoods, 0 at the ignored positions",
        ", reduction='none'",
    ),
}


def _nll(p: dict[str, str]) -> Variant:
    s, reduction, one = _Seq(p["layout"], "labels"), p["reduction"], p["counting"] == "one"
    word, arg = _REDUCTIONS[reduction]
    labels = "labels.where(labels == ignore_index, labels - 1)" if one else "labels"
    if s.layout == "BVL":
        reference = f"F.cross_entropy(logits, {labels}, ignore_index=ignore_index{arg})"
    else:
        flat = f"({labels}).flatten()" if one else "labels.flatten()"
        reference = f"F.cross_entropy(logits.flatten(0, 1), {flat}, ignore_index=ignore_index{arg})"
        reference += ".view(B, L)" if reduction == "none" else ""

    def shifted(inp: Inputs, by: int) -> Inputs:
        lab = inp["labels"]
        return {**inp, "labels": lab.where(lab == inp["ignore_index"], lab + by)} if one else inp

    spec = {"mean": None, "sum": lambda *a: _nll_positions(*a).sum(), "none": _nll_positions}
    return Variant(
        args=("logits", "labels", "ignore_index"),
        inputs=lambda pub: s.inputs(shifted(pub, 1)),
        to_public=lambda v: shifted(s.to_public(v), -1),
        from_public=lambda o: o,
        template="`logits` is `{logits_shape}`, `labels` is `{ids_shape}` where some labels "
        "equal `ignore_index` (padding, default -100). Return {result}, equal to "
        "`{reference}`, but built with gather.",
        slots=dict(
            logits_shape=s.logits_shape(),
            ids_shape=s.ids_shape(),
            reference=reference,
            idx="labels",
        ),
        words=dict(result=word),
        notes=counting_notes(p["counting"]),
        spec=spec[reduction],
    )


_add(
    "nlp.masked_nll",
    {
        "layout": Knob(("BLV", "BVL"), {"*": _LAYOUT_STEP}),
        "counting": Knob(("zero", "one"), {"*": _COUNTING_STEP}),
        "reduction": Knob(
            ("mean", "sum", "none"),
            {
                "sum": N_("Sum the losses of the positions that count: no division."),
                "none": N_(
                    "No reduction: return each position's loss, shaped like `labels`, and 0 where "
                    "a label is ignored."
                ),
            },
        ),
    },
    _nll,
)


# -- vision -------------------------------------------------------------------------------------
_CHANNELS_LAST = (0, 2, 3, 1)


def _pixels(p: dict[str, str]) -> Variant:
    xy, last, bpc = p["point"] == "xy", p["channels"] == "last", p["out"] == "BPC"

    def inputs(pub: Inputs) -> Inputs:
        v = permuted(pub, "features", _CHANNELS_LAST) if last else dict(pub)
        return {**v, "coords": v["coords"].flip(-1)} if xy else v

    def to_public(v: Inputs) -> Inputs:
        pub = unpermuted(v, "features", _CHANNELS_LAST) if last else dict(v)
        return {**pub, "coords": pub["coords"].flip(-1)} if xy else pub

    feat = "features[b, y, x, c]" if last else "features[b, c, y, x]"
    return Variant(
        args=("features", "coords"),
        inputs=inputs,
        to_public=to_public,
        from_public=(lambda o: o.transpose(1, 2).contiguous()) if bpc else (lambda o: o),
        template="`features` is `{feat_shape}`, `coords` is `[B, P, 2]` holding `{point}` "
        "points. Return the `{out_shape}` tensor `{formula}` where `{point} = coords[b, p]`: "
        "every channel at every point.",
        slots=dict(
            feat_shape="[B, H, W, C]" if last else "[B, C, H, W]",
            point="(x, y)" if xy else "(y, x)",
            out_shape="[B, P, C]" if bpc else "[B, C, P]",
            formula=f"out[b, {'p, c' if bpc else 'c, p'}] = {feat}",
        ),
    )


_add(
    "vision.gather_pixels",
    {
        "point": Knob(
            ("yx", "xy"),
            {
                "xy": N_(
                    "`coords` holds `(x, y)`: x is the column and y the row, the reverse of the "
                    "public `(y, x)`."
                )
            },
        ),
        "channels": Knob(
            ("first", "last"),
            {
                "last": N_(
                    "The channels come last (`[B, H, W, C]`): the pixel positions are no longer "
                    "the last dims, so flatten and index the right ones."
                )
            },
        ),
        "out": Knob(
            ("BCP", "BPC"),
            {
                "BPC": N_(
                    "The result is `[B, P, C]`: points before channels, the other way round from "
                    "the public question."
                )
            },
        ),
    },
    _pixels,
)

_HEADS = {"BHLD": (0, 1, 2, 3), "BLHD": (0, 2, 1, 3), "BLDH": (0, 2, 3, 1)}


def _heads(p: dict[str, str]) -> Variant:
    order, c = _HEADS[p["layout"]], p["counting"]
    to_v, to_pub = COUNTING[c]
    h = counted(c, "heads[b, l]", "H")
    at = {"BHLD": f"x[b, {h}, l]", "BLHD": f"x[b, l, {h}]", "BLDH": f"x[b, l, :, {h}]"}

    def to_public(v: Inputs) -> Inputs:
        pub = unpermuted(v, "x", order)
        return {**pub, "heads": to_pub(pub["heads"], pub["x"].shape[1])}

    return Variant(
        args=("x", "heads"),
        inputs=lambda pub: permuted(
            {**pub, "heads": to_v(pub["heads"], pub["x"].shape[1])}, "x", order
        ),
        to_public=to_public,
        from_public=lambda o: o,
        template="`x` is `{x_shape}` (per-head outputs), `heads` is `[B, L]` (which head to keep "
        "at each position). Return `[B, L, Dh]` with `{formula}`.",
        slots=dict(
            x_shape=shape(("B", "H", "L", "Dh"), order),
            idx="heads",
            formula=f"out[b, l] = {at[p['layout']]}",
        ),
        notes=counting_notes(c),
    )


_add(
    "vision.select_heads",
    {
        "layout": Knob(tuple(_HEADS), {"*": _LAYOUT_STEP}),
        "counting": Knob(("zero", "one", "end"), {"*": _COUNTING_STEP}),
    },
    _heads,
)


# -- topk ---------------------------------------------------------------------------------------
def _select_in_place(patches: torch.Tensor, scores: torch.Tensor, k: int) -> torch.Tensor:
    """The loop spec of the k best patches, kept in the order they have in ``patches``."""
    B, N, D = patches.shape
    out = torch.empty(B, k, D, dtype=patches.dtype)
    for b in range(B):
        for j, n in enumerate(sorted(topk._ranked(scores[b])[:k])):
            out[b, j] = patches[b, n]
    return out


_FIRST = (1, 0, 2)  # [B, N, D] <-> [N, B, D]


def _select(p: dict[str, str]) -> Variant:
    low, in_place, nbd = p["keep"] == "lowest", p["order"] == "position", p["layout"] == "NBD"

    def to_public(v: Inputs) -> Inputs:
        pub = unpermuted(v, "patches", _FIRST) if nbd else dict(v)
        return {**pub, "scores": -pub["scores"]} if low else pub

    end = "lowest" if low else "highest"
    return Variant(
        args=("patches", "scores", "k"),
        inputs=(lambda pub: permuted(pub, "patches", _FIRST)) if nbd else (lambda pub: pub),
        to_public=to_public,
        from_public=(lambda o: o.permute(_FIRST).contiguous()) if nbd else (lambda o: o),
        template="`patches` is `{p_shape}`, `scores` is `[B, N]`. Return `{out_shape}`: for each "
        "sample the `k` patches with the {end} scores, {order}, each with all of its `D` "
        "features.",
        slots=dict(
            p_shape="[N, B, D]" if nbd else "[B, N, D]",
            out_shape="[k, B, D]" if nbd else "[B, k, D]",
        ),
        words=dict(
            end=end, order="in the order they have in `patches`" if in_place else f"{end} first"
        ),
        title="Keep the k lowest-scoring patches" if low else "",
        spec=_select_in_place if in_place else None,
    )


_add(
    "topk.select_patches",
    {
        "keep": Knob(
            ("highest", "lowest"),
            {
                "lowest": N_(
                    "The lowest scores win: rank the scores the other way round (topk can take "
                    "the smallest)."
                )
            },
        ),
        "order": Knob(
            ("rank", "position"),
            {
                "position": N_(
                    "The chosen patches keep the order they have in `patches`: put the chosen "
                    "indices in increasing order before you gather."
                )
            },
        ),
        "layout": Knob(("BND", "NBD"), {"*": _LAYOUT_STEP}),
    },
    _select,
)


def _back(p: dict[str, str]) -> Variant:
    minus, c, kbd = p["fill"] == "minus_one", p["counting"], p["layout"] == "KBD"
    to_v, to_pub = COUNTING[c]

    def inputs(pub: Inputs) -> Inputs:
        v = {**pub, "indices": to_v(pub["indices"], 0)}
        if kbd:
            v = {**permuted(v, "selected", _FIRST), "indices": v["indices"].T.contiguous()}
        return v

    def to_public(v: Inputs) -> Inputs:
        pub = {**unpermuted(v, "selected", _FIRST), "indices": v["indices"].T} if kbd else dict(v)
        pub["indices"] = to_pub(pub["indices"], 0)
        return {**pub, "selected": pub["selected"] + 1} if minus else pub

    def from_public(out: torch.Tensor) -> torch.Tensor:
        out = out - 1 if minus else out
        return out.permute(_FIRST).contiguous() if kbd else out

    return Variant(
        args=("selected", "indices", "n"),
        inputs=inputs,
        to_public=to_public,
        from_public=from_public,
        template="`selected` is `{sel_shape}`, taken from positions `indices` (`{idx_shape}`, "
        "{distinct}) of a `{out_shape}` sequence. Return the `{out_shape}` tensor with each "
        "selected row back at its index and {fill} elsewhere (dtype of `selected`).",
        slots=dict(
            sel_shape="[K, B, D]" if kbd else "[B, K, D]",
            idx="indices",
            idx_shape="[K, B]" if kbd else "[B, K]",
            out_shape="[n, B, D]" if kbd else "[B, n, D]",
        ),
        words=dict(
            distinct="distinct in each column" if kbd else "distinct in each row",
            fill="-1" if minus else "zeros",
        ),
        notes=counting_notes(c),
    )


_add(
    "topk.scatter_back",
    {
        "fill": Knob(
            ("zero", "minus_one"),
            {
                "minus_one": N_(
                    "The positions that receive no row hold -1: start from a tensor full of -1, "
                    "not zeros."
                )
            },
        ),
        "counting": Knob(("zero", "one"), {"*": _COUNTING_STEP}),
        "layout": Knob(("BKD", "KBD"), {"*": _LAYOUT_STEP}),
    },
    _back,
)


# -- mae ----------------------------------------------------------------------------------------
_MEANING = {
    ("removed", "float"): "0 = kept and 1 = removed",
    ("kept", "float"): "1 = kept and 0 = removed",
    ("removed", "bool"): "`False` = kept and `True` = removed",
    ("kept", "bool"): "`True` = kept and `False` = removed",
}


def _masking(p: dict[str, str]) -> Variant:
    large, kept, boolean = p["keep"] == "largest", p["mask"] == "kept", p["dtype"] == "bool"

    def from_public(out: Any) -> Any:
        x_masked, mask, ids_restore = out
        mask = 1 - mask if kept else mask
        return x_masked, (mask.bool() if boolean else mask), ids_restore

    return Variant(
        args=("x", "mask_ratio", "noise"),
        inputs=lambda pub: pub,
        to_public=(lambda v: {**v, "noise": -v["noise"]}) if large else (lambda v: v),
        from_public=from_public,
        template="Write MAE's `random_masking` with the given `noise` (`[N, L]`) instead of "
        "fresh random numbers: keep the `len_keep = int(L * (1 - mask_ratio))` positions with "
        "the {end} noise, in order of {direction} noise. Return `(x_masked, mask, "
        "ids_restore)`: `x_masked` `[N, len_keep, D]`, a {kind} `mask` `[N, L]` with "
        "{meaning} in the original order, and `ids_restore` `[N, L]`.",
        words=dict(
            end="largest" if large else "smallest",
            direction="decreasing" if large else "increasing",
            kind="boolean" if boolean else "float",
            meaning=_MEANING[p["mask"], p["dtype"]],
        ),
        dtypes={"mask": (torch.bool,)} if boolean else None,
    )


_add(
    "mae.random_masking",
    {
        "keep": Knob(
            ("smallest", "largest"),
            {
                "largest": N_(
                    "The largest noise is kept: rank the noise in decreasing order, not increasing."
                )
            },
        ),
        "mask": Knob(
            ("removed", "kept"),
            {"kept": N_("The mask marks the kept positions with 1 (or `True`): MAE's inverted.")},
        ),
        "dtype": Knob(
            ("float", "bool"),
            {
                "bool": N_(
                    "The mask is boolean: a comparison gives one, or convert the float mask at "
                    "the end."
                )
            },
        ),
    },
    _masking,
)


_TOKENS = {"NLD": (0, 1, 2), "LND": (1, 0, 2), "NDL": (0, 2, 1)}  # x_visible, and the output


def _restore(p: dict[str, str]) -> Variant:
    last, order = p["kept"] == "last", _TOKENS[p["layout"]]
    lnd = p["layout"] == "LND"

    def inputs(pub: Inputs) -> Inputs:
        v = permuted(pub, "x_visible", order)
        return {**v, "ids_restore": v["ids_restore"].T.contiguous()} if lnd else v

    def to_public(v: Inputs) -> Inputs:
        pub = unpermuted(v, "x_visible", order)
        ids = pub["ids_restore"].T if lnd else pub["ids_restore"]
        if last:
            ids = (ids + pub["x_visible"].shape[1]) % ids.shape[1]
        return {**pub, "ids_restore": ids}

    def from_public(out: torch.Tensor) -> torch.Tensor:
        return out.permute(order).contiguous() if p["layout"] != "NLD" else out

    return Variant(
        args=("x_visible", "mask_token", "ids_restore"),
        inputs=inputs,
        to_public=to_public,
        from_public=from_public,
        template="As in MAE's decoder: `x_visible` is `{vis_shape}` ({kept}), `mask_token` is "
        "`[D]`, `{ids}` is `{ids_shape}`. Return `{out_shape}` in the original order, with "
        "`mask_token` at every removed position.",
        slots=dict(
            vis_shape=shape(("N", "len_keep", "D"), order),
            ids="ids_restore",
            ids_shape="[L, N]" if lnd else "[N, L]",
            out_shape=shape(("N", "L", "D"), order),
        ),
        words=dict(
            kept="the kept tokens: the last `len_keep` of the shuffled order"
            if last
            else "the kept tokens, in shuffled order"
        ),
    )


# Six, not eight: the other natural knob, ids_shuffle given instead of ids_restore, makes the
# answer's cost an argsort that outweighs the gather many times on the timing input, and the
# vectorized limit could no longer tell an honest answer from a loop (benchmarks measured it).
_add(
    "mae.restore_sequence",
    {
        "kept": Knob(
            ("first", "last"),
            {
                "last": N_(
                    "The kept tokens are the last `len_keep` of the shuffled order: a token's "
                    "place in `x_visible` is its shuffled position minus the `L - len_keep` "
                    "removed ones before it."
                )
            },
        ),
        "layout": Knob(("NLD", "LND", "NDL"), {"*": _LAYOUT_STEP}),
    },
    _restore,
    few="ids_shuffle instead of ids_restore would make the answer's cost a sort that hides a "
    "loop from the vectorized limit",
)
