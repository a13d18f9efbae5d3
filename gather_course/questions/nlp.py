"""NLP questions: gold-label scores, token log-probabilities, causal shift, masked NLL."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch

from .._i18n import _
from .._text import fmt_value
from ._cases import noncontig, randint, randn
from ._question import Question, question

_ARTICLE_LABELS = torch.tensor([[1, 3, 0], [2, 1, 4]])  # 001 section 2


def _make(
    gen: torch.Generator,
    B: int,
    L: int,
    V: int,
    strided: bool = False,
    dtype: torch.dtype = torch.float32,
    article: bool = False,
    ignored: int = 0,
    ignore_index: int | None = None,
    *,
    ids_as: str = "ids",
) -> dict[str, Any]:
    """``logits`` ``[B, L, V]`` and the ids ``[B, L]`` under the name ``ids_as``."""
    logits = randn(gen, B, L, V, dtype=dtype)
    ids = _ARTICLE_LABELS.clone() if article else randint(gen, V, B, L)
    if ignored:
        flat = ids.view(-1)  # ignore a few positions, never all
        flat[torch.randperm(B * L, generator=gen)[:ignored]] = ignore_index
    return {"logits": noncontig(logits) if strided else logits, ids_as: ids}


def _log_prob(row: torch.Tensor, i: int) -> float:
    """log_softmax(row)[i], by hand: row[i] - log(sum(exp(row)))."""
    values = [float(v) for v in row]
    top = max(values)
    return values[i] - (top + math.log(sum(math.exp(v - top) for v in values)))


_SIZES = (
    dict(label="random shapes", B=2, L=3, V=5),
    dict(label="size-1 dims", B=1, L=1, V=1),
    dict(label="vocabulary as long as the sequence", B=3, L=4, V=4),
    dict(label="float64 logits", B=2, L=5, V=7, dtype=torch.float64),
    dict(label="non-contiguous logits", B=3, L=2, V=6, strided=True),
)
_LARGE = (
    dict(label="random shapes", B=8, L=16, V=50),
    dict(label="non-contiguous logits", B=4, L=9, V=33, strided=True),
)
_SCALING = (dict(B=2, L=3, V=5), dict(B=4, L=6, V=10))
_TIMING = dict(B=64, L=1024, V=128)


# -- nlp.label_scores ---------------------------------------------------------------


def _spec_labels(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    B, L, T = logits.shape
    out = torch.empty(B, L, dtype=logits.dtype)
    for b in range(B):
        for l in range(L):
            out[b, l] = logits[b, l, labels[b, l]]
    return out


def _formula_labels(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    b, l = pos
    t = int(inp["labels"][b, l])
    return (
        f"out[{b}, {l}] = logits[{b}, {l}, labels[{b}, {l}]] = logits[{b}, {l}, {t}] = "
        f"{fmt_value(inp['logits'][b, l, t])}"
    )


question(
    "nlp.label_scores",
    title="Scores of the gold labels",
    spec=_spec_labels,
    make=partial(_make, ids_as="labels"),
    sizes=_SIZES[:1]
    + (dict(label="the article's labels", B=2, L=3, V=5, article=True),)
    + _SIZES[1:],
    large_sizes=_LARGE,
    scaling=_SCALING,
    formula=_formula_labels,
    timing=dict(B=512, L=4096, V=2),  # V small: one-hot answers cost V times the gather
    timing_factor=9,  # bench_timing.py: the middle of the measured gap
    hints=(
        "This is one gather. The tag is chosen along the last dim (`dim=-1`), not along "
        "the sequence.",
        "The index needs as many dims as `logits`: `labels.unsqueeze(-1)` is `[B, L, 1]`, "
        "and the result is `[B, L, 1]` too.",
        "Gather along `dim=-1` with that index, then drop the size-1 dim with "
        "`squeeze(-1)` to get `[B, L]`. The same steps on a 2-D example: for `s` of "
        "shape `[3, 5]` and `y` of shape `[3]`, `s.gather(1, y.unsqueeze(1))` is `[3, 1]`, "
        "and `.squeeze(1)` makes it `[3]`.",
    ),
    solution_code="""
def label_scores(logits, labels):
    return logits.gather(-1, labels.unsqueeze(-1)).squeeze(-1)   # [B, L, 1] -> [B, L]
""",
)


# -- nlp.token_log_probs ------------------------------------------------------------


def _spec_tokens(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    B, L, V = logits.shape
    out = torch.empty(B, L, dtype=logits.dtype)
    for b in range(B):
        for l in range(L):
            out[b, l] = _log_prob(logits[b, l], int(input_ids[b, l]))
    return out


def _formula_tokens(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    b, l = pos
    i = int(inp["input_ids"][b, l])
    value = _log_prob(inp["logits"][b, l].cpu(), i)
    return (
        f"out[{b}, {l}] = log_softmax(logits[{b}, {l}])[input_ids[{b}, {l}]] = "
        f"log_softmax(logits[{b}, {l}])[{i}] = logits[{b}, {l}, {i}] - "
        f"logsumexp(logits[{b}, {l}]) = {fmt_value(value)}"
    )


question(
    "nlp.token_log_probs",
    title="Log-probability of each token",
    spec=_spec_tokens,
    make=partial(_make, ids_as="input_ids"),
    sizes=_SIZES,
    large_sizes=_LARGE,
    timing=_TIMING,
    timing_factor=6.5,  # bench_timing.py: the middle of the measured gap
    scaling=_SCALING,
    formula=_formula_tokens,
    hints=(
        "Two steps: turn the logits into log-probabilities over the vocabulary (the last "
        "dim, `V`), then pick one per position with gather, as in label_scores.",
        "Applied over the last dim, `F.log_softmax` keeps the shape `[B, L, V]`. The "
        "index must be `[B, L, 1]`: unsqueeze `input_ids` at the end, gather along the "
        "last dim, and the result is `[B, L, 1]`.",
        "In order: `F.log_softmax(..., dim=-1)`, then `.gather(-1, index)`, then "
        "`.squeeze(-1)` to go from `[B, L, 1]` to `[B, L]`. Normalise before you gather: "
        "the softmax needs every score of the row, and the log-softmax of a single "
        "gathered score is always 0.",
    ),
    solution_code="""
import torch.nn.functional as F

def token_log_probs(logits, input_ids):
    log_probs = F.log_softmax(logits, dim=-1)                     # [B, L, V]
    return log_probs.gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)
""",
)


# -- nlp.causal_lm_log_probs --------------------------------------------------------


def _spec_causal(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    B, L, V = logits.shape
    out = torch.empty(B, L - 1, dtype=logits.dtype)
    for b in range(B):
        for t in range(L - 1):  # the prediction made at t is for t + 1
            out[b, t] = _log_prob(logits[b, t], int(input_ids[b, t + 1]))
    return out


def _formula_causal(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    b, t = pos
    i = int(inp["input_ids"][b, t + 1])
    value = _log_prob(inp["logits"][b, t].cpu(), i)
    return (
        f"out[{b}, {t}] = log_softmax(logits[{b}, {t}])[input_ids[{b}, {t + 1}]] = "
        f"log_softmax(logits[{b}, {t}])[{i}] = {fmt_value(value)}"
    )


question(
    "nlp.causal_lm_log_probs",
    title="Causal LM: score the next token",
    spec=_spec_causal,
    make=partial(_make, ids_as="input_ids"),
    sizes=(
        dict(label="random shapes", B=2, L=4, V=6),
        dict(label="shortest sequence", B=1, L=2, V=3),
        dict(label="vocabulary as long as the sequence", B=3, L=5, V=5),
        dict(label="float64 logits", B=2, L=3, V=7, dtype=torch.float64),
        dict(label="non-contiguous logits", B=2, L=6, V=4, strided=True),
    ),
    large_sizes=_LARGE,
    scaling=_SCALING,
    formula=_formula_causal,
    timing=_TIMING,
    timing_factor=4.5,  # bench_timing.py: the middle of the measured gap
    hints=(
        "Line the predictions up with what they predict: drop the last position of the "
        "logits and the first of the ids.",
        "Sliced, `logits[:, :-1]` and `input_ids[:, 1:]` are both `L-1` long; then it is "
        "the token_log_probs question on these two.",
        "Check the shapes on a short sequence: with `L = 4`, positions 0, 1, 2 of the "
        "logits predict tokens 1, 2, 3, so the sliced logits are `[B, 3, V]` and the "
        "sliced ids `[B, 3]`. Then, as in token_log_probs: log-softmax over the "
        "vocabulary (`dim=-1`), gather along `dim=-1` with the ids unsqueezed to `[B, 3, 1]`, "
        "and squeeze that last dim away.",
    ),
    solution_code="""
import torch.nn.functional as F

def causal_lm_log_probs(logits, input_ids):
    log_probs = F.log_softmax(logits[:, :-1], dim=-1)   # predictions for tokens 1..L-1
    targets = input_ids[:, 1:].unsqueeze(-1)            # the tokens they predict
    return log_probs.gather(-1, targets).squeeze(-1)
""",
)


# -- nlp.masked_nll -----------------------------------------------------------------


def _make_nll(gen: torch.Generator, ignore_index: int = -100, **sizes: Any) -> dict[str, Any]:
    return {
        **_make(gen, ignore_index=ignore_index, ids_as="labels", **sizes),
        "ignore_index": ignore_index,
    }


def _spec_nll(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    B, L, V = logits.shape
    total, count = 0.0, 0
    for b in range(B):
        for l in range(L):
            if int(labels[b, l]) != ignore_index:
                total += -_log_prob(logits[b, l], int(labels[b, l]))
                count += 1
    return torch.tensor(total / count, dtype=logits.dtype)


def _formula_nll(inp: dict[str, Any], which: int, pos: tuple[int, ...]) -> str:
    labels = inp["labels"]
    kept = int((labels != inp["ignore_index"]).sum())
    return _(
        "loss = -mean of log_softmax(logits[b, l])[labels[b, l]] over the {kept} of "
        "{total} positions whose label is not ignore_index={ignore}"
    ).format(kept=kept, total=labels.numel(), ignore=inp["ignore_index"])


# Built here, registered by friends.py: the friends assignment grades it, as a review
# question (a gather plus a padding mask), so it comes last in the course order.
MASKED_NLL = Question(
    "nlp.masked_nll",
    title="Masked negative log-likelihood",
    spec=_spec_nll,
    make=_make_nll,
    sizes=(
        dict(label="random shapes", B=2, L=3, V=5, ignored=2),
        dict(label="nothing ignored", B=2, L=2, V=4),
        dict(label="ignore_index=-1", B=3, L=4, V=6, ignored=5, ignore_index=-1),
        dict(label="size-1 dims", B=1, L=1, V=1),
        dict(label="float64 logits", B=2, L=5, V=7, ignored=3, dtype=torch.float64),
        dict(label="non-contiguous logits", B=3, L=2, V=6, ignored=1, strided=True),
    ),
    large_sizes=(
        dict(label="random shapes", B=8, L=16, V=50, ignored=40),
        dict(label="ignore_index=0", B=4, L=9, V=33, ignored=10, ignore_index=0),
    ),
    timing=dict(B=32, L=1024, V=128, ignored=4096),
    timing_factor=5.6,  # bench_timing.py: the middle of the measured gap
    scaling=(dict(B=2, L=3, V=5, ignored=2), dict(B=4, L=6, V=10, ignored=8)),
    formula=_formula_nll,
    hints=(
        "It is token_log_probs plus a mask. Gather cannot read at position "
        "`ignore_index` (-100 is out of range), so the ignored labels must become a "
        "valid id before the gather, and must not count in the mean.",
        "Make a boolean `[B, L]` mask of the kept positions, and a copy of the labels "
        "with any valid id (say 0) at the ignored ones (`torch.where` does it). Gather "
        "the log-probabilities (`F.log_softmax` over the vocabulary) with that copy, "
        "unsqueezed to `[B, L, 1]`, squeeze, and negate.",
        "Average over the kept positions only: multiply the `[B, L]` negative "
        "log-likelihoods by the mask (`True` counts as 1, `False` as 0), sum, and divide "
        "by the number of kept positions, which is the sum of the mask (`.mean()` would "
        "divide by all of them). On a small example, losses `[[0.5, 2.0], [1.0, 4.0]]` "
        "with mask `[[True, False], [True, True]]` give (0.5 + 1.0 + 4.0) / 3.",
    ),
    solution_code="""
import torch.nn.functional as F

def masked_nll(logits, labels, ignore_index=-100):
    keep = labels != ignore_index                         # [B, L] bool
    safe = torch.where(keep, labels, 0)                   # any valid id at ignored places
    log_probs = F.log_softmax(logits, dim=-1)
    nll = -log_probs.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    return (nll * keep).sum() / keep.sum()
""",
    forbid=dict.fromkeys(
        ("nll_loss_forward", "nll_loss", "nll_loss2d_forward", "nll_loss_nd"),
        "F.cross_entropy or F.nll_loss (that is what the answer is compared with)",
    ),
)
