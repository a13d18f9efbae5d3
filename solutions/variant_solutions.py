"""A vectorized answer to every class variant: the proof that each can be solved.

This lives beside the instructor's source notebooks (solutions/, which never ships), not in
the package: nothing a student installs holds an answer to a class variant (issue 26). ``solution_code(qid, params)`` writes the variant's answer as the
code of a function, the way a learner would (an answer cell); ``solve`` runs it. A class
release made from a checkout puts this code in the instructor's source notebooks, and the
copy report matches submissions against it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

IMPORTS = "import torch\nimport torch.nn.functional as F\n"


def _counted(name: str, counting: str, n: str) -> str:
    """The code of the 0-based positions an index ``name`` counting ``counting`` stands for."""
    return {
        "zero": name,
        "one": f"{name} - 1",
        "end": f"{n} - 1 - {name}",
        "end1": f"{n} - {name}",
    }[counting]


def _pick(p):
    if p["axis"] == "columns":
        index = _counted("rows", p["counting"], "x.shape[0]")
        return f"def pick_per_row(x, rows):\n    return x.gather(0, {index})\n"
    index = _counted("cols", p["counting"], "x.shape[1]")
    return f"def pick_per_row(x, cols):\n    return x.gather(1, {index})\n"


def _dim(layout: str) -> int:
    return next(i for i, ch in enumerate(layout) if ch not in "BL")  # where V (or T) sits


def _finish(p, first: str = "") -> str:
    """The lines that lay the result out: ``[B, L]`` first if asked, then a size-1 dim."""
    lines = f"    out = out.T{first}\n" if first else ""
    if p["keepdim"] == "yes":
        lines += "    return out.unsqueeze(-1)\n"
    else:
        lines += "    return out\n"
    return lines


def _labels(p):
    dim, labels = _dim(p["layout"]), _counted("labels", p["counting"], "")
    return (
        "def label_scores(logits, labels):\n"
        f"    out = logits.gather({dim}, ({labels}).unsqueeze({dim})).squeeze({dim})\n"
        + _finish(p, "  # [L, B] -> [B, L]" if p["layout"].startswith("L") else "")
    )


def _norm(p, dim: int, what: str = "logits") -> str:
    fn = "F.softmax" if p["what"] == "prob" else "F.log_softmax"
    return f"{fn}({what}, dim={dim})"


def _tokens(p):
    dim = _dim(p["layout"])
    return (
        "def token_log_probs(logits, input_ids):\n"
        f"    out = {_norm(p, dim)}.gather({dim}, input_ids.unsqueeze({dim})).squeeze({dim})\n"
        + _finish(p, "  # [L, B] -> [B, L]" if p["layout"].startswith("L") else "")
    )


def _causal(p):
    dim = _dim(p["layout"])
    logits, ids = {
        "BLV": ("logits[:, :-1]", "input_ids[:, 1:]"),
        "BVL": ("logits[:, :, :-1]", "input_ids[:, 1:]"),
        "LBV": ("logits[:-1]", "input_ids[1:]"),
    }[p["layout"]]
    return (
        "def causal_lm_log_probs(logits, input_ids):\n"
        f"    probs = {_norm(p, dim, logits)}\n"
        f"    out = probs.gather({dim}, {ids}.unsqueeze({dim})).squeeze({dim})\n" + _finish(p)
    )


def _nll(p):
    dim = _dim(p["layout"])
    reduce = {
        "mean": "    return nll.sum() / keep.sum()\n",
        "sum": "    return nll.sum()\n",
        "none": "    return nll\n",
    }[p["reduction"]]
    return (
        "def masked_nll(logits, labels, ignore_index=-100):\n"
        "    keep = labels != ignore_index\n"
        f"    safe = torch.where(keep, {_counted('labels', p['counting'], '')}, 0)\n"
        f"    log_probs = F.log_softmax(logits, dim={dim})\n"
        f"    nll = -log_probs.gather({dim}, safe.unsqueeze({dim})).squeeze({dim}) * keep\n"
        + reduce
    )


def _pixels(p):
    y, x = (
        ("coords[..., 1]", "coords[..., 0]")
        if p["point"] == "xy"
        else ("coords[..., 0]", "coords[..., 1]")
    )
    if p["channels"] == "last":
        body = (
            "    B, H, W, C = features.shape\n"
            f"    lin = ({y} * W + {x}).unsqueeze(-1).expand(-1, -1, C)  # [B, P, C]\n"
            "    out = features.flatten(1, 2).gather(1, lin)\n"
        )
        last = "out" if p["out"] == "BPC" else "out.transpose(1, 2)"
    else:
        body = (
            "    B, C, H, W = features.shape\n"
            f"    lin = ({y} * W + {x}).unsqueeze(1).expand(-1, C, -1)  # [B, C, P]\n"
            "    out = features.flatten(2).gather(2, lin)\n"
        )
        last = "out.transpose(1, 2)" if p["out"] == "BPC" else "out"
    return f"def gather_pixels(features, coords):\n{body}    return {last}\n"


def _heads(p):
    dim = {"BHLD": 1, "BLHD": 2, "BLDH": 3}[p["layout"]]
    heads = _counted("heads", p["counting"], f"x.shape[{dim}]")
    index = {
        "BHLD": "[:, None, :, None].expand(-1, 1, -1, x.shape[3])",
        "BLHD": "[:, :, None, None].expand(-1, -1, 1, x.shape[3])",
        "BLDH": "[:, :, None, None].expand(-1, -1, x.shape[2], 1)",
    }[p["layout"]]
    return (
        "def select_heads(x, heads):\n"
        f"    index = ({heads}){index}\n"
        f"    return x.gather({dim}, index).squeeze({dim})\n"
    )


def _select(p):
    largest = p["keep"] == "highest"
    code = (
        "def select_patches(patches, scores, k):\n"
        f"    idx = torch.topk(scores, k, dim=1, largest={largest}).indices\n"
    )
    if p["order"] == "position":
        code += "    idx = idx.sort(dim=1).values  # back in the order of the patches\n"
    if p["layout"] == "NBD":
        return code + (
            "    index = idx.T.unsqueeze(-1).expand(-1, -1, patches.shape[2])  # [k, B, D]\n"
            "    return patches.gather(0, index)\n"
        )
    return (
        code + "    return patches.gather(1, idx.unsqueeze(-1).expand(-1, -1, patches.shape[2]))\n"
    )


def _back(p):
    fill = "-1" if p["fill"] == "minus_one" else "0"
    indices = _counted("indices", p["counting"], "")
    if p["layout"] == "KBD":
        return (
            "def scatter_back(selected, indices, n):\n"
            "    K, B, D = selected.shape\n"
            f"    out = selected.new_full((n, B, D), {fill})\n"
            f"    return out.scatter(0, ({indices}).unsqueeze(-1).expand(-1, -1, D), selected)\n"
        )
    return (
        "def scatter_back(selected, indices, n):\n"
        "    B, K, D = selected.shape\n"
        f"    out = selected.new_full((B, n, D), {fill})\n"
        f"    return out.scatter(1, ({indices}).unsqueeze(-1).expand(-1, -1, D), selected)\n"
    )


def _masking(p):
    descending = p["keep"] == "largest"
    mask = "removed" if p["mask"] == "removed" else "~removed"
    mask = mask if p["dtype"] == "bool" else f"({mask}).float()"
    return (
        "def random_masking(x, mask_ratio, noise):\n"
        "    N, L, D = x.shape\n"
        "    len_keep = int(L * (1 - mask_ratio))\n"
        f"    ids_shuffle = torch.argsort(noise, dim=1, descending={descending})\n"
        "    ids_restore = torch.argsort(ids_shuffle, dim=1)\n"
        "    index = ids_shuffle[:, :len_keep].unsqueeze(-1).expand(-1, -1, D)\n"
        "    removed = ids_restore >= len_keep  # in the original order\n"
        f"    return x.gather(1, index), {mask}, ids_restore\n"
    )


def _restore(p):
    keep_dim = {"NLD": 1, "LND": 0, "NDL": 2}[p["layout"]]  # where the tokens run
    code = "def restore_sequence(x_visible, mask_token, ids_restore):\n"
    if p["layout"] == "NDL":
        code += (
            "    N, D, keep = x_visible.shape\n"
            "    L = ids_restore.shape[1]\n"
            "    tokens = mask_token.view(1, D, 1).expand(N, D, L - keep).to(x_visible.dtype)\n"
            "    index = ids_restore.unsqueeze(1).expand(-1, D, -1)  # [N, D, L]\n"
        )
    elif p["layout"] == "LND":
        code += (
            "    keep, N, D = x_visible.shape\n"
            "    L = ids_restore.shape[0]\n"
            "    tokens = mask_token.view(1, 1, D).expand(L - keep, N, D).to(x_visible.dtype)\n"
            "    index = ids_restore.unsqueeze(-1).expand(-1, -1, D)  # [L, N, D]\n"
        )
    else:
        code += (
            "    N, keep, D = x_visible.shape\n"
            "    L = ids_restore.shape[1]\n"
            "    tokens = mask_token.view(1, 1, D).expand(N, L - keep, D).to(x_visible.dtype)\n"
            "    index = ids_restore.unsqueeze(-1).expand(-1, -1, D)  # [N, L, D]\n"
        )
    parts = "[tokens, x_visible]" if p["kept"] == "last" else "[x_visible, tokens]"
    return code + (
        f"    full = torch.cat({parts}, dim={keep_dim})\n"
        f"    return full.gather({keep_dim}, index)\n"
    )


_WRITERS: dict[str, Callable[[dict[str, str]], str]] = {
    "basics.pick_per_row": _pick,
    "nlp.label_scores": _labels,
    "nlp.token_log_probs": _tokens,
    "nlp.causal_lm_log_probs": _causal,
    "nlp.masked_nll": _nll,
    "vision.gather_pixels": _pixels,
    "vision.select_heads": _heads,
    "topk.select_patches": _select,
    "topk.scatter_back": _back,
    "mae.random_masking": _masking,
    "mae.restore_sequence": _restore,
}


def solution_code(qid: str, params: dict[str, str]) -> str:
    """The code of the vectorized answer to the variant ``params`` of ``qid``."""
    return _WRITERS[qid](params)


def solve(qid: str, params: dict[str, str]) -> Callable[..., Any]:
    """The variant's answer, run from :func:`solution_code`."""
    space: dict[str, Any] = {}
    exec(compile(IMPORTS + solution_code(qid, params), f"<{qid} {params}>", "exec"), space)  # noqa: S102
    return space[qid.rsplit(".", 1)[-1]]


# the lines of an answer that do the work (a gather, a scatter, a sort, a top-k)
WORK = re.compile(r"\b(gather|scatter|argsort|topk|take_along_dim|new_full|softmax)\b")


def squeeze(text: str) -> str:
    """``text`` without any whitespace: code compared whatever its layout."""
    return re.sub(r"\s+", "", text)


def answer_lines() -> Iterator[tuple[str, dict[str, str], str, str]]:
    """(qid, the variant's params, a line, that line squeezed) for every line of every
    variant's answer that does the work and that no public solution (the lectures teach
    them) shares: what nothing a student is given may hold."""
    from gather_course import exercise, exercise_ids

    taught = squeeze("\n".join(exercise(q).solution_code for q in exercise_ids()))
    for qid in exercise_ids():
        public = exercise(qid)
        for params in public.family.every()[1:] if public.family else []:
            for line in solution_code(qid, params).splitlines():
                code = squeeze(line.split("#")[0])
                if WORK.search(line) and code not in taught and len(code) > 12:
                    yield qid, params, line, code
