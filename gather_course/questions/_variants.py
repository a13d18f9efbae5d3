"""Class variants: for each question, the knobs that change its answer but keep its lesson.

A class seed (``gather-course release --class-seed``) picks one variant per question that has
any; the public variant stays the default for self-study and the lectures. A variant is the
public question seen through a change of its inputs (``inputs`` / ``to_public``) and of its
answer (``from_public``): the spec, the battery, the checks and the hidden cases all come
from the public ones. Its text is the public text with a few ``edits``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from ._cases import noncontig
from ._question import _REGISTRY, Variant


def _like(source: torch.Tensor, made: torch.Tensor) -> torch.Tensor:
    """``made``, contiguous, or non-contiguous again when ``source`` was (the strided cases)."""
    made = made.contiguous()
    return made if source.is_contiguous() else noncontig(made)


def _with(inp: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**inp, **changes}


def _add(qid: str, *variants: Variant, why: str = "") -> None:
    _REGISTRY[qid] = replace(_REGISTRY[qid], variants=variants, no_variant_why=why)


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


# -- basics.pick_per_row: one pick per column ---------------------------------------------------
_add(
    "basics.pick_per_row",
    Variant(
        "columns",
        "one pick per column: out[k, c] = x[rows[k, c], c]",
        args=("x", "rows"),
        inputs=lambda p: {"x": _like(p["x"], p["x"].T), "rows": p["cols"].T.contiguous()},
        to_public=lambda v: {"x": v["x"].T, "cols": v["rows"].T},
        from_public=lambda out: out.T.contiguous(),
        edits=(
            ("One pick per row", "One pick per column"),
            (
                "`x` is `[R, C]` and `cols` is `[R, K]`. Return the `[R, K]` tensor with "
                "`out[r, k] = x[r, cols[r, k]]`",
                "`x` is `[R, C]` and `rows` is `[K, C]`. Return the `[K, C]` tensor with "
                "`out[k, c] = x[rows[k, c], c]`",
            ),
            (
                "Each row keeps its row number; only the column changes.",
                "Each column keeps its column number; only the row changes.",
            ),
            (
                "Changing the column means gathering along dim 1 of `x`. `cols` already has the "
                "output's shape `[R, K]`",
                "Changing the row means gathering along dim 0 of `x`. `rows` already has the "
                "output's shape `[K, C]`",
            ),
            (
                "for `t` of shape `[2, 4]` and `j = torch.tensor([[3], [0]])`, "
                "`torch.gather(t, 1, j)` is `[[t[0, 3]], [t[1, 0]]]`",
                "for `t` of shape `[4, 2]` and `j = torch.tensor([[3, 0]])`, "
                "`torch.gather(t, 0, j)` is `[[t[3, 0], t[0, 1]]]`",
            ),
            (
                "def pick_per_row(x, cols):\n    return torch.gather(x, 1, cols)      "
                "# out[r, k] = x[r, cols[r, k]]",
                "def pick_per_row(x, rows):\n    return torch.gather(x, 0, rows)      "
                "# out[k, c] = x[rows[k, c], c]",
            ),
        ),
    ),
)


# -- nlp: the vocabulary (or the tags) in dim 1, the layout F.cross_entropy takes ----------------
_VOCAB_FIRST = dict(
    inputs=lambda p: _with(p, logits=_like(p["logits"], p["logits"].transpose(1, 2))),
    to_public=lambda v: _with(v, logits=v["logits"].transpose(1, 2)),
)


_add(
    "nlp.label_scores",
    Variant(
        "tags_first",
        "logits laid out [B, T, L] (tags in dim 1)",
        **_VOCAB_FIRST,
        edits=(
            (
                "`logits` is `[B, L, T]` (a score per tag at each position)",
                "`logits` is `[B, T, L]` (a score per tag at each position, tags in dim 1 as "
                "`F.cross_entropy` takes them)",
            ),
            (
                "`out[b, l] = logits[b, l, labels[b, l]]`",
                "`out[b, l] = logits[b, labels[b, l], l]`",
            ),
            (
                "The tag is chosen along the last dim (`dim=-1`), not along the sequence.",
                "The tag is chosen along dim 1, not along the sequence (the last dim).",
            ),
            (
                "`labels.unsqueeze(-1)` is `[B, L, 1]`, and the result is `[B, L, 1]` too.",
                "`labels.unsqueeze(1)` is `[B, 1, L]`, and the result is `[B, 1, L]` too.",
            ),
            (
                "Gather along `dim=-1` with that index, then drop the size-1 dim with `squeeze(-1)`",
                "Gather along dim 1 with that index, then drop the size-1 dim with `squeeze(1)`",
            ),
            (
                "logits.gather(-1, labels.unsqueeze(-1)).squeeze(-1)",
                "logits.gather(1, labels.unsqueeze(1)).squeeze(1)",
            ),
            ("# [B, L, 1] -> [B, L]", "# [B, 1, L] -> [B, L]"),
        ),
    ),
)

_add(
    "nlp.token_log_probs",
    Variant(
        "vocab_first",
        "logits laid out [B, V, L] (vocabulary in dim 1)",
        **_VOCAB_FIRST,
        edits=(
            (
                "`logits` is `[B, L, V]`",
                "`logits` is `[B, V, L]` (vocabulary in dim 1, as `F.cross_entropy` takes it)",
            ),
            (
                "`log_softmax(logits[b, l])[input_ids[b, l]]`",
                "`log_softmax(logits[b, :, l])[input_ids[b, l]]`",
            ),
            ("(the last dim, `V`)", "(dim 1, `V`)"),
            (
                "Applied over the last dim, `F.log_softmax` keeps the shape `[B, L, V]`. The index "
                "must be `[B, L, 1]`: unsqueeze `input_ids` at the end, gather along the last dim, "
                "and the result is `[B, L, 1]`.",
                "Applied over dim 1, `F.log_softmax` keeps the shape `[B, V, L]`. The index must be "
                "`[B, 1, L]`: unsqueeze `input_ids` at dim 1, gather along dim 1, and the result is "
                "`[B, 1, L]`.",
            ),
            (
                "`F.log_softmax(..., dim=-1)`, then `.gather(-1, index)`, then `.squeeze(-1)` to go "
                "from `[B, L, 1]` to `[B, L]`",
                "`F.log_softmax(..., dim=1)`, then `.gather(1, index)`, then `.squeeze(1)` to go "
                "from `[B, 1, L]` to `[B, L]`",
            ),
            (
                "    log_probs = F.log_softmax(logits, dim=-1)                     # [B, L, V]\n"
                "    return log_probs.gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)",
                "    log_probs = F.log_softmax(logits, dim=1)                      # [B, V, L]\n"
                "    return log_probs.gather(1, input_ids.unsqueeze(1)).squeeze(1)",
            ),
        ),
    ),
)

_add(
    "nlp.causal_lm_log_probs",
    Variant(
        "seq_first",
        "logits [L, B, V] and ids [L, B] (sequence first), out [L-1, B]",
        inputs=lambda p: {
            "logits": _like(p["logits"], p["logits"].transpose(0, 1)),
            "input_ids": p["input_ids"].transpose(0, 1).contiguous(),
        },
        to_public=lambda v: {
            "logits": v["logits"].transpose(0, 1),
            "input_ids": v["input_ids"].transpose(0, 1),
        },
        from_public=lambda out: out.transpose(0, 1).contiguous(),
        edits=(
            (
                "Return the `[B, L-1]` tensor `out[b, t] = log_softmax(logits[b, t])"
                "[input_ids[b, t+1]]`.",
                "Here `logits` is `[L, B, V]` and `input_ids` is `[L, B]` (sequence first). Return "
                "the `[L-1, B]` tensor `out[t, b] = log_softmax(logits[t, b])[input_ids[t+1, b]]`.",
            ),
            ("`logits[:, :-1]` and `input_ids[:, 1:]`", "`logits[:-1]` and `input_ids[1:]`"),
            (
                "the sliced logits are `[B, 3, V]` and the sliced ids `[B, 3]`",
                "the sliced logits are `[3, B, V]` and the sliced ids `[3, B]`",
            ),
            ("unsqueezed to `[B, 3, 1]`", "unsqueezed to `[3, B, 1]`"),
            (
                "    log_probs = F.log_softmax(logits[:, :-1], dim=-1)   # predictions for tokens "
                "1..L-1\n    targets = input_ids[:, 1:].unsqueeze(-1)            # the tokens they "
                "predict",
                "    log_probs = F.log_softmax(logits[:-1], dim=-1)      # predictions for tokens "
                "1..L-1\n    targets = input_ids[1:].unsqueeze(-1)               # the tokens they "
                "predict",
            ),
        ),
    ),
    Variant(
        "vocab_first",
        "logits laid out [B, V, L] (vocabulary in dim 1)",
        **_VOCAB_FIRST,
        edits=(
            (
                "`out[b, t] = log_softmax(logits[b, t])[input_ids[b, t+1]]`.",
                "`out[b, t] = log_softmax(logits[b, :, t])[input_ids[b, t+1]]`, where `logits` "
                "is `[B, V, L]` (vocabulary in dim 1).",
            ),
            (
                "`logits[:, :-1]` and `input_ids[:, 1:]`",
                "`logits[:, :, :-1]` and `input_ids[:, 1:]`",
            ),
            ("the sliced logits are `[B, 3, V]`", "the sliced logits are `[B, V, 3]`"),
            (
                "log-softmax over the vocabulary (`dim=-1`), gather along `dim=-1` with the ids "
                "unsqueezed to `[B, 3, 1]`, and squeeze that last dim away",
                "log-softmax over the vocabulary (`dim=1`), gather along `dim=1` with the ids "
                "unsqueezed to `[B, 1, 3]`, and squeeze dim 1 away",
            ),
            (
                "    log_probs = F.log_softmax(logits[:, :-1], dim=-1)   # predictions for tokens "
                "1..L-1\n    targets = input_ids[:, 1:].unsqueeze(-1)            # the tokens they "
                "predict\n    return log_probs.gather(-1, targets).squeeze(-1)",
                "    log_probs = F.log_softmax(logits[:, :, :-1], dim=1)  # predictions for tokens "
                "1..L-1\n    targets = input_ids[:, 1:].unsqueeze(1)             # the tokens they "
                "predict\n    return log_probs.gather(1, targets).squeeze(1)",
            ),
        ),
    ),
)

_add(
    "nlp.masked_nll",
    Variant(
        "vocab_first",
        "logits laid out [B, V, L] (vocabulary in dim 1)",
        **_VOCAB_FIRST,
        edits=(
            ("`logits` is `[B, L, V]`", "`logits` is `[B, V, L]` (vocabulary in dim 1)"),
            (
                "`F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=ignore_index)`",
                "`F.cross_entropy(logits, labels, ignore_index=ignore_index)`",
            ),
            ("unsqueezed to `[B, L, 1]`", "unsqueezed to `[B, 1, L]`"),
            (
                "    log_probs = F.log_softmax(logits, dim=-1)\n"
                "    nll = -log_probs.gather(-1, safe.unsqueeze(-1)).squeeze(-1)",
                "    log_probs = F.log_softmax(logits, dim=1)\n"
                "    nll = -log_probs.gather(1, safe.unsqueeze(1)).squeeze(1)",
            ),
        ),
    ),
)


# -- vision -------------------------------------------------------------------------------------
_add(
    "vision.gather_pixels",
    Variant(
        "xy",
        "coordinates given as (x, y)",
        inputs=lambda p: _with(p, coords=p["coords"].flip(-1)),
        to_public=lambda v: _with(v, coords=v["coords"].flip(-1)),
        edits=(
            ("holding `(y, x)` points", "holding `(x, y)` points"),
            ("where `(y, x) = coords[b, p]`", "where `(x, y) = coords[b, p]`"),
            (
                "In a row-major `[H, W]` grid, point `(y, x)`",
                "In a row-major `[H, W]` grid, point `(y, x)` (stored as `(x, y)` in `coords`)",
            ),
            ("coords[..., 0] * W + coords[..., 1]", "coords[..., 1] * W + coords[..., 0]"),
        ),
    ),
    Variant(
        "channels_last",
        "features laid out [B, H, W, C] (channels last)",
        inputs=lambda p: _with(p, features=_like(p["features"], p["features"].permute(0, 2, 3, 1))),
        to_public=lambda v: _with(v, features=v["features"].permute(0, 3, 1, 2)),
        edits=(
            ("`features` is `[B, C, H, W]`", "`features` is `[B, H, W, C]` (channels last)"),
            ("`out[b, c, p] = features[b, c, y, x]`", "`out[b, c, p] = features[b, y, x, c]`"),
            ("Flatten `H` and `W` into one dim", "Flatten `H` and `W` (dims 1 and 2) into one dim"),
            (
                "The index must be `[B, C, P]`: the same point for every channel, so add a channel "
                "dim and expand it to `C`.",
                "The index must be `[B, P, C]`: the same point for every channel, so add a channel "
                "dim at the end and expand it to `C`.",
            ),
            (
                "`features.flatten(2)` is `[B, C, H*W]`; the linear positions, unsqueezed at dim 1 "
                "and expanded with `expand(-1, C, -1)`, are `[B, C, P]`; gather along dim 2 gives "
                "`[B, C, P]`.",
                "`features.flatten(1, 2)` is `[B, H*W, C]`; the linear positions, unsqueezed at the "
                "end and expanded with `expand(-1, -1, C)`, are `[B, P, C]`; gather along dim 1 "
                "gives `[B, P, C]`, and swapping dims 1 and 2 gives `[B, C, P]`.",
            ),
            ("    B, C, H, W = features.shape", "    B, H, W, C = features.shape"),
            (
                "    index = lin.unsqueeze(1).expand(-1, C, -1)             # [B, C, P]: same point, "
                "every channel\n    return features.flatten(2).gather(2, index)            "
                "# [B, C, H*W] -> [B, C, P]",
                "    index = lin.unsqueeze(-1).expand(-1, -1, C)            # [B, P, C]: same point, "
                "every channel\n    return features.flatten(1, 2).gather(1, index).transpose(1, 2)"
                "  # -> [B, C, P]",
            ),
        ),
    ),
)

_add(
    "vision.select_heads",
    Variant(
        "positions_first",
        "x laid out [B, L, H, Dh] (positions before heads)",
        inputs=lambda p: _with(p, x=_like(p["x"], p["x"].transpose(1, 2))),
        to_public=lambda v: _with(v, x=v["x"].transpose(1, 2)),
        edits=(
            (
                "`x` is `[B, H, L, Dh]` (per-head outputs)",
                "`x` is `[B, L, H, Dh]` (per-head outputs, positions before heads)",
            ),
            ("`out[b, l] = x[b, heads[b, l], l]`", "`out[b, l] = x[b, l, heads[b, l]]`"),
            ("The head is chosen along dim 1;", "The head is chosen along dim 2;"),
            (
                "Make the index `[B, 1, L, Dh]`: give `heads` (`[B, L]`) a size-1 head dim and a "
                "feature dim, expand the feature dim to `Dh`, gather along dim 1,",
                "Make the index `[B, L, 1, Dh]`: give `heads` (`[B, L]`) a size-1 head dim after "
                "`L` and a feature dim, expand the feature dim to `Dh`, gather along dim 2,",
            ),
            (
                "The gather gives `[B, 1, L, Dh]`, and `squeeze(1)` makes it `[B, L, Dh]`.",
                "The gather gives `[B, L, 1, Dh]`, and `squeeze(2)` makes it `[B, L, Dh]`.",
            ),
            (
                "`t[:, None, :, None]` is `[5, 1, 7, 1]`, and `.expand(-1, 1, -1, 3)` makes it "
                "`[5, 1, 7, 3]`",
                "`t[:, :, None, None]` is `[5, 7, 1, 1]`, and `.expand(-1, -1, 1, 3)` makes it "
                "`[5, 7, 1, 3]`",
            ),
            (
                "    B, H, L, Dh = x.shape\n    index = heads[:, None, :, None].expand(B, 1, L, Dh)"
                "    # [B, 1, L, Dh]\n    return x.gather(1, index).squeeze(1)                    "
                "# [B, 1, L, Dh] -> [B, L, Dh]",
                "    B, L, H, Dh = x.shape\n    index = heads[:, :, None, None].expand(B, L, 1, Dh)"
                "    # [B, L, 1, Dh]\n    return x.gather(2, index).squeeze(2)                    "
                "# [B, L, 1, Dh] -> [B, L, Dh]",
            ),
        ),
    ),
    Variant(
        "heads_last",
        "x laid out [B, L, Dh, H] (heads last)",
        inputs=lambda p: _with(p, x=_like(p["x"], p["x"].permute(0, 2, 3, 1))),
        to_public=lambda v: _with(v, x=v["x"].permute(0, 3, 1, 2)),
        edits=(
            (
                "`x` is `[B, H, L, Dh]` (per-head outputs)",
                "`x` is `[B, L, Dh, H]` (per-head outputs, heads last)",
            ),
            ("`out[b, l] = x[b, heads[b, l], l]`", "`out[b, l] = x[b, l, :, heads[b, l]]`"),
            ("The head is chosen along dim 1;", "The head is chosen along the last dim;"),
            (
                "Make the index `[B, 1, L, Dh]`: give `heads` (`[B, L]`) a size-1 head dim and a "
                "feature dim, expand the feature dim to `Dh`, gather along dim 1,",
                "Make the index `[B, L, Dh, 1]`: give `heads` (`[B, L]`) a feature dim and a size-1 "
                "head dim at the end, expand the feature dim to `Dh`, gather along dim 3,",
            ),
            (
                "The gather gives `[B, 1, L, Dh]`, and `squeeze(1)` makes it `[B, L, Dh]`.",
                "The gather gives `[B, L, Dh, 1]`, and `squeeze(3)` makes it `[B, L, Dh]`.",
            ),
            (
                "`t[:, None, :, None]` is `[5, 1, 7, 1]`, and `.expand(-1, 1, -1, 3)` makes it "
                "`[5, 1, 7, 3]`",
                "`t[:, :, None, None]` is `[5, 7, 1, 1]`, and `.expand(-1, -1, 3, 1)` makes it "
                "`[5, 7, 3, 1]`",
            ),
            (
                "    B, H, L, Dh = x.shape\n    index = heads[:, None, :, None].expand(B, 1, L, Dh)"
                "    # [B, 1, L, Dh]\n    return x.gather(1, index).squeeze(1)                    "
                "# [B, 1, L, Dh] -> [B, L, Dh]",
                "    B, L, Dh, H = x.shape\n    index = heads[:, :, None, None].expand(B, L, Dh, 1)"
                "    # [B, L, Dh, 1]\n    return x.gather(3, index).squeeze(3)                    "
                "# [B, L, Dh, 1] -> [B, L, Dh]",
            ),
        ),
    ),
)


# -- topk -----------------------------------------------------------------------------------------
_add(
    "topk.select_patches",
    Variant(
        "lowest",
        "keep the k lowest-scoring patches, lowest first",
        inputs=lambda p: p,
        to_public=lambda v: _with(v, scores=-v["scores"]),
        edits=(
            ("Keep the k best patches", "Keep the k lowest-scoring patches"),
            (
                "the `k` patches with the highest scores, highest first",
                "the `k` patches with the lowest scores, lowest first",
            ),
            (
                "the `[B, k]` indices of the best patches with `torch.topk` along dim 1 "
                "(highest first)",
                "the `[B, k]` indices of the lowest-scoring patches with `torch.topk` along dim 1 "
                "and `largest=False` (lowest first)",
            ),
            (
                "give the indices `[[1, 2]]`, so the answer is patches 1 then 2",
                "give the lowest-scoring indices `[[0, 2]]`, so the answer is patches 0 then 2",
            ),
            (
                "    idx = torch.topk(scores, k, dim=1).indices               # [B, k], highest first",
                "    idx = torch.topk(scores, k, dim=1, largest=False).indices   # [B, k], lowest "
                "first",
            ),
        ),
    ),
)

_add(
    "topk.scatter_back",
    Variant(
        "minus_one",
        "-1 (not 0) at the positions nothing is put back to",
        inputs=lambda p: p,
        to_public=lambda v: _with(v, selected=v["selected"] + 1),
        from_public=lambda out: out - 1,
        edits=(
            (
                "and zeros elsewhere (dtype of `selected`)",
                "and -1 everywhere else (dtype of `selected`)",
            ),
            ("Start from zeros of shape `[B, n, D]`", "Start from a `[B, n, D]` tensor full of -1"),
            (
                "The method `new_zeros` makes zeros with a tensor's dtype and device",
                "The method `new_full` makes a tensor full of one value (here -1) with a tensor's "
                "dtype and device",
            ),
            (
                "`torch.zeros(4).scatter(0, torch.tensor([2, 0]), torch.tensor([7., 8.]))` is "
                "`[8, 0, 7, 0]`",
                "`torch.full((4,), -1.0).scatter(0, torch.tensor([2, 0]), torch.tensor([7., 8.]))` "
                "is `[8, -1, 7, -1]`",
            ),
            (
                "    out = selected.new_zeros(B, n, D)                       # same dtype and device",
                "    out = selected.new_full((B, n, D), -1.0)                # same dtype and "
                "device",
            ),
        ),
    ),
)


# -- mae: keep the largest noise instead of the smallest ----------------------------------------
_add(
    "mae.random_masking",
    Variant(
        "keep_largest",
        "keep the positions with the largest noise",
        inputs=lambda p: p,
        to_public=lambda v: _with(v, noise=-v["noise"]),
        edits=(
            (
                "positions with the smallest noise, in order of increasing noise",
                "positions with the largest noise, in order of decreasing noise",
            ),
            (
                "(`torch.argsort` along dim 1, smallest noise first)",
                "(`torch.argsort` along dim 1 with `descending=True`, largest noise first)",
            ),
            (
                "    ids_shuffle = torch.argsort(noise, dim=1)          # ascend: small is keep",
                "    ids_shuffle = torch.argsort(noise, dim=1, descending=True)   # large is keep",
            ),
        ),
    ),
)

_add(
    "mae.restore_sequence",
    Variant(
        "kept_last",
        "the kept tokens are the last len_keep of the shuffled order",
        inputs=lambda p: p,
        to_public=lambda v: _with(
            v, ids_restore=(v["ids_restore"] + v["x_visible"].shape[1]) % v["ids_restore"].shape[1]
        ),
        edits=(
            (
                "(the kept tokens, in shuffled order)",
                "(the kept tokens: the last `len_keep` of the shuffled order)",
            ),
            (
                "First append `L - len_keep` copies of `mask_token` after the visible tokens",
                "First put `L - len_keep` copies of `mask_token` before the visible tokens",
            ),
            (
                "the shuffled sequence is `[a, b, m]`; with `ids_restore = [2, 0, 1]` the gather "
                "reads positions 2, 0, 1 and gives `[m, a, b]`",
                "the shuffled sequence is `[m, a, b]`; with `ids_restore = [2, 0, 1]` the gather "
                "reads positions 2, 0, 1 and gives `[b, m, a]`",
            ),
            (
                "    full = torch.cat([x_visible, mask_tokens], dim=1)        # shuffled order",
                "    full = torch.cat([mask_tokens, x_visible], dim=1)        # shuffled order",
            ),
        ),
    ),
)
