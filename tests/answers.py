"""Learner answers for the question-bank tests: different correct ones and typical wrong ones.

RIGHT[qid]: implementations that must pass (different from the bank's own solution).
WRONG[qid]: (implementation, tier the check must report) for typical mistakes.
"""

from __future__ import annotations

import itertools
import textwrap

import torch
import torch.nn.functional as F

from gather_course import Tier as T

RIGHT: dict[str, list] = {}
WRONG: dict[str, list] = {}


def right(qid):
    def deco(fn):
        RIGHT.setdefault(qid, []).append(fn)
        return fn

    return deco


def wrong(qid, tier):
    def deco(fn):
        WRONG.setdefault(qid, []).append((fn, tier))
        return fn

    return deco


# ---------------------------------------------------------------- basics.gather_loop
@right("basics.gather_loop")
def gather_loop_flat(input, dim, index):
    d = dim % input.dim()
    out = []
    for pos in itertools.product(*map(range, index.shape)):
        src = pos[:d] + (index[pos].item(),) + pos[d + 1 :]
        out.append(input[src])
    return torch.stack(out).reshape(index.shape) if out else input.new_empty(index.shape)


@right("basics.gather_loop")
def gather_loop_advanced_indexing(input, dim, index):
    d = dim % input.dim()
    coords = torch.meshgrid(
        *[torch.arange(s, device=index.device) for s in index.shape], indexing="ij"
    )
    coords = list(coords)
    coords[d] = index.long()
    return input[tuple(coords)]


@wrong("basics.gather_loop", T.CONSTRAINTS)
def gather_loop_uses_gather(input, dim, index):
    return torch.gather(input, dim, index)


@wrong("basics.gather_loop", T.WRONG_SHAPE)  # it broadcasts: not gather!
def gather_loop_uses_take_along_dim(input, dim, index):
    return torch.take_along_dim(input, index.long(), dim)


def _fill_by_formula(out, input, dim, index):
    """The right loop; the two answers below go wrong only in how they allocate `out`."""
    d = dim % input.dim()
    for pos in itertools.product(*map(range, index.shape)):
        src = list(pos)
        src[d] = int(index[pos])
        out[pos] = input[tuple(src)]
    return out


@wrong("basics.gather_loop", T.WRONG_SHAPE)
def gather_loop_input_shape(input, dim, index):  # "output has input's shape"
    return _fill_by_formula(input.clone(), input, dim, index)


@wrong("basics.gather_loop", T.WRONG_DTYPE)
def gather_loop_float_output(input, dim, index):
    return _fill_by_formula(torch.zeros(index.shape), input, dim, index)


@wrong("basics.gather_loop", T.EXCEPTION)
def gather_loop_replaces_wrong_coordinate(input, dim, index):
    out = torch.empty(index.shape, dtype=input.dtype)
    for pos in itertools.product(*map(range, index.shape)):
        src = list(pos)
        src[0] = int(index[pos])  # always dim 0
        out[pos] = input[tuple(src)]
    return out


@wrong("basics.gather_loop", T.WRONG_VALUES)
def gather_loop_reads_flattened_input(input, dim, index):
    out = torch.empty(index.shape, dtype=input.dtype)
    for pos in itertools.product(*map(range, index.shape)):
        out[pos] = input.flatten()[int(index[pos])]  # index as a flat position
    return out


@wrong("basics.gather_loop", T.NOT_ATTEMPTED)
def gather_loop_stub(input, dim, index):
    raise NotImplementedError()


# ---------------------------------------------------------------- basics.pick_per_row
@right("basics.pick_per_row")
def pick_take_along_dim(x, cols):
    return torch.take_along_dim(x, cols, dim=1)


@right("basics.pick_per_row")
def pick_advanced_indexing(x, cols):
    return x[torch.arange(x.size(0), device=x.device).unsqueeze(1), cols]


@right("basics.pick_per_row")
def pick_one_hot(x, cols):  # in float64: CUDA has no integer matmul (NotImplementedError)
    one_hot = F.one_hot(cols.long(), x.size(1)).double()  # [R, K, C]
    return torch.einsum("rkc,rc->rk", one_hot, x.double()).to(x.dtype)


@wrong("basics.pick_per_row", T.EXCEPTION)
def pick_one_hot_uint32(x, cols):  # torch has no uint32 matmul: its NotImplementedError
    one_hot = F.one_hot(cols.long(), x.size(1)).to(torch.uint32)
    return (one_hot @ x.to(torch.uint32).unsqueeze(-1)).squeeze(-1).to(x.dtype)


@wrong("basics.pick_per_row", T.WRONG_SHAPE)
def pick_all_rows(x, cols):
    return x[:, cols]


@wrong("basics.pick_per_row", T.EXCEPTION)
def pick_dim0(x, cols):
    return torch.gather(x, 0, cols)


@wrong("basics.pick_per_row", T.NOT_VECTORIZED)
def pick_python_loop(x, cols):
    return torch.stack([x[r, cols[r]] for r in range(x.size(0))])


@wrong("basics.pick_per_row", T.WRONG_TYPE)
def pick_no_return(x, cols):
    torch.gather(x, 1, cols)


# ---------------------------------------------------------------- basics.reverse_index
@right("basics.reverse_index")
def reverse_loops(input, output, dim):
    d = dim % input.dim()
    index = torch.zeros(output.shape, dtype=torch.int64, device=input.device)
    for pos in itertools.product(*map(range, output.shape)):
        line = [p if k != d else slice(None) for k, p in enumerate(pos)]
        index[pos] = (input[tuple(line)] == output[pos]).nonzero()[0, 0]
    return index


@right("basics.reverse_index")
def reverse_broadcast_int32(input, output, dim):
    d = dim % input.dim()
    size = [min(o, i) if k != d else i for k, (o, i) in enumerate(zip(output.shape, input.shape))]
    cand = input[tuple(slice(0, s) for s in size)]  # the part gather can read
    hits = cand.unsqueeze(d + 1) == output.unsqueeze(d)  # compare along dim
    return hits.int().argmax(dim=d).to(torch.int32)


@wrong("basics.reverse_index", T.WRONG_VALUES)
def reverse_zeros(input, output, dim):
    return torch.zeros(output.shape, dtype=torch.long)


@wrong("basics.reverse_index", T.WRONG_DTYPE)
def reverse_float(input, output, dim):
    return reverse_loops(input, output, dim).float()


@wrong("basics.reverse_index", T.WRONG_VALUES)
def reverse_flat_position(input, output, dim):
    match = output.reshape(-1, 1) == input.reshape(1, -1)
    return match.int().argmax(dim=1).reshape(output.shape)


@wrong("basics.reverse_index", T.WRONG_SHAPE)
def reverse_input_shape(input, output, dim):
    return torch.zeros(input.shape, dtype=torch.long)


# ---------------------------------------------------------------- nlp.label_scores
@right("nlp.label_scores")
def labels_take_along_dim(logits, labels):
    return torch.take_along_dim(logits, labels.unsqueeze(-1), dim=-1).squeeze(-1)


@right("nlp.label_scores")
def labels_advanced(logits, labels):
    B, L = labels.shape
    return logits[torch.arange(B)[:, None], torch.arange(L)[None, :], labels]


@right("nlp.label_scores")
def labels_one_hot(logits, labels):
    return (logits * F.one_hot(labels, logits.size(-1)).to(logits.dtype)).sum(-1)


@wrong("nlp.label_scores", T.WRONG_SHAPE)
def labels_no_squeeze(logits, labels):
    return logits.gather(2, labels.unsqueeze(-1))


@wrong("nlp.label_scores", T.EXCEPTION)
def labels_dim_minus_2(logits, labels):  # 003's dim=-2
    return logits.gather(-2, labels.unsqueeze(-1)).squeeze(-1)


@wrong("nlp.label_scores", T.EXCEPTION)
def labels_no_unsqueeze(logits, labels):
    return logits.gather(-1, labels)


# ---------------------------------------------------------------- nlp.token_log_probs
@right("nlp.token_log_probs")
def tokens_minus_logsumexp(logits, input_ids):
    picked = logits.gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)


@right("nlp.token_log_probs")
def tokens_log_of_softmax(logits, input_ids):
    probs = torch.softmax(logits, dim=-1)
    return torch.log(torch.take_along_dim(probs, input_ids[..., None], -1)[..., 0])


@right("nlp.token_log_probs")
def tokens_one_hot(logits, input_ids):  # V times the work of a gather, still whole-tensor
    log_probs = torch.log_softmax(logits, dim=-1)
    return (log_probs * F.one_hot(input_ids, logits.shape[-1])).sum(-1)


@wrong("nlp.token_log_probs", T.WRONG_VALUES)
def tokens_raw_logits(logits, input_ids):
    return logits.gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)


@wrong("nlp.token_log_probs", T.WRONG_VALUES)
def tokens_softmax_not_log(logits, input_ids):
    return logits.softmax(-1).gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)


@wrong("nlp.token_log_probs", T.WRONG_VALUES)
def tokens_log_softmax_wrong_dim(logits, input_ids):
    return F.log_softmax(logits, dim=1).gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)


# ---------------------------------------------------------------- nlp.causal_lm_log_probs
@right("nlp.causal_lm_log_probs")
def causal_shift_after(logits, input_ids):
    lp = F.log_softmax(logits, dim=-1).gather(-1, input_ids.roll(-1, dims=1).unsqueeze(-1))
    return lp.squeeze(-1)[:, :-1]


@right("nlp.causal_lm_log_probs")
def causal_one_hot(logits, input_ids):  # V times the work of a gather, still whole-tensor
    log_probs = F.log_softmax(logits[:, :-1], dim=-1)
    return (log_probs * F.one_hot(input_ids[:, 1:], logits.shape[-1])).sum(-1)


@right("nlp.causal_lm_log_probs")
def causal_advanced(logits, input_ids):
    B, L, V = logits.shape
    lp = torch.log_softmax(logits[:, :-1], -1)
    return lp[torch.arange(B)[:, None], torch.arange(L - 1)[None], input_ids[:, 1:]]


@wrong("nlp.causal_lm_log_probs", T.WRONG_SHAPE)
def causal_no_shift(logits, input_ids):
    return F.log_softmax(logits, -1).gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)


@wrong("nlp.causal_lm_log_probs", T.WRONG_VALUES)
def causal_shift_wrong_way(logits, input_ids):
    lp = F.log_softmax(logits[:, 1:], -1)
    return lp.gather(-1, input_ids[:, :-1].unsqueeze(-1)).squeeze(-1)


@wrong("nlp.causal_lm_log_probs", T.WRONG_VALUES)
def causal_no_log_softmax(logits, input_ids):
    return logits[:, :-1].gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)


# ---------------------------------------------------------------- nlp.masked_nll
@right("nlp.masked_nll")
def nll_boolean_select(logits, labels, ignore_index=-100):
    keep = labels != ignore_index
    lp = F.log_softmax(logits[keep], dim=-1)  # [kept, V]
    return -lp.gather(1, labels[keep].unsqueeze(1)).mean()


@right("nlp.masked_nll")
def nll_one_hot(logits, labels, ignore_index=-100):  # V times the work of a gather
    keep = labels != ignore_index
    safe = torch.where(keep, labels, 0)
    picked = (F.log_softmax(logits, dim=-1) * F.one_hot(safe, logits.shape[-1])).sum(-1)
    return -(picked * keep).sum() / keep.sum()


@right("nlp.masked_nll")
def nll_clamp_and_mean(logits, labels, ignore_index=-100):
    keep = (labels != ignore_index).to(logits.dtype)
    safe = labels.masked_fill(labels == ignore_index, 0)
    picked = torch.take_along_dim(logits.log_softmax(-1), safe[..., None], -1)[..., 0]
    return -(picked * keep).sum() / keep.sum()


@wrong("nlp.masked_nll", T.CONSTRAINTS)
def nll_uses_cross_entropy(logits, labels, ignore_index=-100):
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=ignore_index)


@wrong("nlp.masked_nll", T.EXCEPTION)
def nll_gathers_padding(logits, labels, ignore_index=-100):
    return -F.log_softmax(logits, -1).gather(-1, labels.unsqueeze(-1)).mean()


@wrong("nlp.masked_nll", T.WRONG_VALUES)
def nll_mean_over_everything(logits, labels, ignore_index=-100):
    keep = labels != ignore_index
    safe = torch.where(keep, labels, 0)
    nll = -F.log_softmax(logits, -1).gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    return (nll * keep).mean()


@wrong("nlp.masked_nll", T.WRONG_VALUES)
def nll_forgets_minus(logits, labels, ignore_index=-100):
    keep = labels != ignore_index
    safe = torch.where(keep, labels, 0)
    lp = F.log_softmax(logits, -1).gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    return (lp * keep).sum() / keep.sum()


@wrong("nlp.masked_nll", T.WRONG_SHAPE)
def nll_per_position(logits, labels, ignore_index=-100):
    keep = labels != ignore_index
    safe = torch.where(keep, labels, 0)
    return -F.log_softmax(logits, -1).gather(-1, safe.unsqueeze(-1)).squeeze(-1) * keep


# ---------------------------------------------------------------- vision.gather_pixels
@right("vision.gather_pixels")
def pixels_advanced(features, coords):
    B = features.size(0)
    picked = features[torch.arange(B)[:, None], :, coords[..., 0], coords[..., 1]]  # [B, P, C]
    return picked.permute(0, 2, 1)


@right("vision.gather_pixels")
def pixels_two_gathers(features, coords):
    B, C, H, W = features.shape
    P = coords.size(1)
    y = coords[..., 0][:, None, :, None].expand(B, C, P, W)
    rows = features.gather(2, y)  # [B, C, P, W]
    x = coords[..., 1][:, None, :, None].expand(B, C, P, 1)
    return rows.gather(3, x).squeeze(-1)


@wrong("vision.gather_pixels", T.EXCEPTION)
def pixels_article(features, coords):  # 001 section 3, as written
    C = features.size(1)
    y, x = coords[:, :, 0], coords[:, :, 1]
    h = torch.gather(features, 2, y.unsqueeze(1).expand(-1, C, -1).unsqueeze(-1))
    return torch.gather(h.squeeze(-1), 3, x.unsqueeze(1).expand(-1, C, -1).unsqueeze(-1))


@wrong("vision.gather_pixels", T.WRONG_VALUES)
def pixels_stride_h(features, coords):
    B, C, H, W = features.shape
    lin = coords[..., 0] * H + coords[..., 1]  # H instead of W
    return features.flatten(2).gather(2, lin.unsqueeze(1).expand(-1, C, -1))


@wrong("vision.gather_pixels", T.WRONG_VALUES)
def pixels_swapped(features, coords):
    B, C, H, W = features.shape
    lin = (coords[..., 1] * W + coords[..., 0]).clamp(max=H * W - 1)  # (x, y) mixed up
    return features.flatten(2).gather(2, lin.unsqueeze(1).expand(-1, C, -1))


@wrong("vision.gather_pixels", T.WRONG_SHAPE)
def pixels_advanced_no_permute(features, coords):
    B = features.size(0)
    return features[torch.arange(B)[:, None], :, coords[..., 0], coords[..., 1]]


# ---------------------------------------------------------------- vision.select_heads
@right("vision.select_heads")
def heads_advanced(x, heads):
    B, H, L, Dh = x.shape
    return x[torch.arange(B)[:, None], heads, torch.arange(L)[None, :]]


@right("vision.select_heads")
def heads_transpose_gather(x, heads):
    xt = x.transpose(1, 2)  # [B, L, H, Dh]
    idx = heads[..., None, None].expand(-1, -1, 1, x.size(-1))
    return xt.gather(2, idx).squeeze(2)


@wrong("vision.select_heads", T.WRONG_SHAPE)
def heads_article(x, heads):  # 001 section 5.1, as written
    idx = heads.unsqueeze(-1).unsqueeze(-1).expand(-1, -1, -1, x.size(-1))
    return torch.gather(x, 1, idx)


@wrong("vision.select_heads", T.WRONG_VALUES)
def heads_article_squeezed(x, heads):  # runs, reads position 0 only
    idx = heads.unsqueeze(-1).unsqueeze(-1).expand(-1, -1, -1, x.size(-1))
    return torch.gather(x, 1, idx).squeeze(2)


@wrong("vision.select_heads", T.WRONG_SHAPE)
def heads_all_positions(x, heads):
    B = x.size(0)
    return x[torch.arange(B)[:, None], heads]  # [B, L, L, Dh]


# ---------------------------------------------------------------- topk.select_patches
@right("topk.select_patches")
def patches_argsort(patches, scores, k):
    idx = scores.argsort(dim=1, descending=True)[:, :k]
    return patches[torch.arange(patches.size(0))[:, None], idx]


@right("topk.select_patches")
def patches_repeat(patches, scores, k):  # MAE's repeat instead of expand
    idx = torch.topk(scores, k).indices
    return torch.gather(patches, 1, idx.unsqueeze(-1).repeat(1, 1, patches.size(-1)))


@wrong("topk.select_patches", T.WRONG_SHAPE)
def patches_no_expand(patches, scores, k):
    return torch.gather(patches, 1, scores.topk(k).indices.unsqueeze(-1))


@wrong("topk.select_patches", T.WRONG_VALUES)
def patches_lowest(patches, scores, k):
    idx = scores.topk(k, largest=False).indices
    return torch.gather(patches, 1, idx.unsqueeze(-1).expand(-1, -1, patches.size(-1)))


@wrong("topk.select_patches", T.WRONG_VALUES)
def patches_first_k(patches, scores, k):
    return patches[:, :k]


# ---------------------------------------------------------------- topk.scatter_back
@right("topk.scatter_back")
def back_index_put(selected, indices, n):
    B, K, D = selected.shape
    out = torch.zeros(B, n, D, dtype=selected.dtype, device=selected.device)
    out[torch.arange(B, device=indices.device)[:, None], indices] = selected
    return out


@right("topk.scatter_back")
def back_scatter_add(selected, indices, n):
    B, K, D = selected.shape
    out = torch.zeros(B, n, D, dtype=selected.dtype, device=selected.device)
    return out.scatter_add_(1, indices[..., None].repeat(1, 1, D), selected)


@wrong("topk.scatter_back", T.WRONG_VALUES)
def back_no_expand(selected, indices, n):  # only feature 0 lands
    B, K, D = selected.shape
    return selected.new_zeros(B, n, D).scatter(1, indices.unsqueeze(-1), selected)


@wrong("topk.scatter_back", T.WRONG_DTYPE)
def back_default_dtype(selected, indices, n):
    B, K, D = selected.shape
    out = torch.zeros(B, n, D)
    return out.scatter(1, indices.unsqueeze(-1).expand(-1, -1, D), selected.float())


@wrong("topk.scatter_back", T.EXCEPTION)
def back_gather(selected, indices, n):
    return selected.gather(1, indices.unsqueeze(-1).expand(-1, -1, selected.size(-1)))


@wrong("topk.scatter_back", T.MUTATED)
def back_writes_into_input(selected, indices, n):
    B, K, D = selected.shape
    selected.mul_(1.0).zero_()  # destroys the caller's data
    return selected.new_zeros(B, n, D)


# ---------------------------------------------------------------- mae.random_masking
@right("mae.random_masking")
def masking_article(x, mask_ratio, noise):  # MAE's own code, with repeat
    N, L, D = x.shape
    len_keep = int(L * (1 - mask_ratio))
    ids_shuffle = torch.argsort(noise, dim=1)
    ids_restore = torch.argsort(ids_shuffle, dim=1)
    ids_keep = ids_shuffle[:, :len_keep]
    x_masked = torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D))
    mask = torch.ones([N, L], device=x.device)
    mask[:, :len_keep] = 0
    mask = torch.gather(mask, dim=1, index=ids_restore)
    return x_masked, mask, ids_restore


@right("mae.random_masking")
def masking_sort_and_scatter(x, mask_ratio, noise):
    N, L, D = x.shape
    len_keep = int(L * (1 - mask_ratio))
    ids_shuffle = noise.sort(dim=1).indices
    ranks = torch.arange(L, device=x.device).expand(N, L)
    ids_restore = torch.empty_like(ids_shuffle).scatter_(1, ids_shuffle, ranks)
    x_masked = x[torch.arange(N, device=x.device)[:, None], ids_shuffle[:, :len_keep]]
    mask = (ids_restore >= len_keep).double()
    return x_masked, mask, ids_restore


@wrong("mae.random_masking", T.WRONG_SHAPE)
def masking_round(x, mask_ratio, noise):
    N, L, D = x.shape
    len_keep = round(L * (1 - mask_ratio))
    out = masking_article(x, 1 - len_keep / L, noise)
    return out


@wrong("mae.random_masking", T.WRONG_VALUES)
def masking_mask_not_unshuffled(x, mask_ratio, noise):
    x_masked, mask, ids_restore = masking_article(x, mask_ratio, noise)
    len_keep = x_masked.size(1)
    shuffled = torch.ones_like(mask)
    shuffled[:, :len_keep] = 0
    return x_masked, shuffled, ids_restore


@wrong("mae.random_masking", T.WRONG_VALUES)
def masking_keeps_largest(x, mask_ratio, noise):
    return masking_article(x, mask_ratio, -noise)


@wrong("mae.random_masking", T.WRONG_TYPE)
def masking_returns_list_of_two(x, mask_ratio, noise):
    x_masked, mask, ids_restore = masking_article(x, mask_ratio, noise)
    return [x_masked, mask]


# ---------------------------------------------------------------- mae.restore_sequence
@right("mae.restore_sequence")
def restore_repeat_like_mae(x_visible, mask_token, ids_restore):
    N, K, D = x_visible.shape
    L = ids_restore.size(1)
    tokens = mask_token.reshape(1, 1, D).repeat(N, L - K, 1)
    x_ = torch.cat([x_visible, tokens], dim=1)
    return torch.gather(x_, 1, ids_restore.unsqueeze(-1).repeat(1, 1, D))


@right("mae.restore_sequence")
def restore_where(x_visible, mask_token, ids_restore):
    N, K, D = x_visible.shape
    visible = ids_restore < K
    safe = ids_restore.clamp(max=K - 1)
    picked = x_visible.gather(1, safe.unsqueeze(-1).expand(-1, -1, D))
    return torch.where(visible.unsqueeze(-1), picked, mask_token)


@wrong("mae.restore_sequence", T.WRONG_VALUES)
def restore_with_ids_shuffle(x_visible, mask_token, ids_restore):
    N, K, D = x_visible.shape
    L = ids_restore.size(1)
    full = torch.cat([x_visible, mask_token.expand(N, L - K, D)], dim=1)
    ids_shuffle = ids_restore.argsort(dim=1)  # the inverse, by mistake
    return full.gather(1, ids_shuffle.unsqueeze(-1).expand(-1, -1, D))


@wrong("mae.restore_sequence", T.WRONG_VALUES)
def restore_zeros_for_removed(x_visible, mask_token, ids_restore):
    N, K, D = x_visible.shape
    L = ids_restore.size(1)
    full = torch.cat([x_visible, x_visible.new_zeros(N, L - K, D)], dim=1)
    return full.gather(1, ids_restore.unsqueeze(-1).expand(-1, -1, D))


@wrong("mae.restore_sequence", T.EXCEPTION)
def restore_no_mask_tokens(x_visible, mask_token, ids_restore):
    D = x_visible.size(-1)
    return x_visible.gather(1, ids_restore.unsqueeze(-1).expand(-1, -1, D))


# ---------------------------------------------------------------- friends.gather_backward
@right("friends.gather_backward")
def backward_inplace(grad_out, dim, index, input_shape):
    grad = grad_out.new_zeros(input_shape)
    grad.scatter_add_(dim, index, grad_out)
    return grad


@right("friends.gather_backward")
def backward_autograd(grad_out, dim, index, input_shape):  # let autograd do it
    x = torch.zeros(input_shape, dtype=grad_out.dtype, device=grad_out.device, requires_grad=True)
    torch.gather(x, dim, index).backward(grad_out)
    return x.grad


@wrong("friends.gather_backward", T.WRONG_VALUES)
def backward_scatter_loses_duplicates(grad_out, dim, index, input_shape):
    return grad_out.new_zeros(input_shape).scatter(dim, index, grad_out)


@wrong("friends.gather_backward", T.WRONG_DTYPE)
def backward_default_dtype(grad_out, dim, index, input_shape):
    return torch.zeros(input_shape).scatter_add(dim, index, grad_out.float())


@wrong("friends.gather_backward", T.CONSTRAINTS)
def backward_index_put(grad_out, dim, index, input_shape):
    d = dim % index.dim()
    coords = list(torch.meshgrid(*[torch.arange(s) for s in index.shape], indexing="ij"))
    coords[d] = index
    grad = grad_out.new_zeros(input_shape)
    return grad.index_put_(tuple(coords), grad_out, accumulate=True)


@wrong("friends.gather_backward", T.EXCEPTION)
def backward_gather(grad_out, dim, index, input_shape):
    return torch.gather(grad_out, dim, index).reshape(input_shape)


# ---------------------------------------------------------------- friends.gather_via_take
@right("friends.gather_via_take")
def take_contiguous_strides(input, dim, index):
    d = dim % input.dim()
    flat_input = input.contiguous()  # then stride() is row-major
    coords = torch.meshgrid(
        *[torch.arange(s, device=index.device) for s in index.shape], indexing="ij"
    )
    linear = sum((index if k == d else c) * flat_input.stride(k) for k, c in enumerate(coords))
    return torch.take(flat_input, linear)


@right("friends.gather_via_take")
def take_ravel_multi_index(input, dim, index):
    d = dim % input.dim()
    linear = torch.zeros(index.shape, dtype=torch.long, device=index.device)
    for k, size in enumerate(input.shape):
        shape = [1] * index.dim()
        shape[k] = index.size(k)
        c = index if k == d else torch.arange(index.size(k), device=index.device).reshape(shape)
        linear = linear * size + c
    return torch.take(input, linear)


@wrong("friends.gather_via_take", T.EXCEPTION)
def take_memory_strides(input, dim, index):  # input.stride() of a strided view
    d = dim % input.dim()
    coords = torch.meshgrid(*[torch.arange(s) for s in index.shape], indexing="ij")
    linear = sum((index if k == d else c) * input.stride(k) for k, c in enumerate(coords))
    return torch.take(input, linear)


@wrong("friends.gather_via_take", T.CONSTRAINTS)
def take_uses_gather(input, dim, index):
    return torch.gather(input, dim, index)


@wrong("friends.gather_via_take", T.WRONG_VALUES)
def take_index_only(input, dim, index):
    return torch.take(input, index)


# The fastest Python loops we know, per question with a timing input: source text defining
# the question's function, as a learner's cell holds it (with `import math` beside torch).
# Only the gather (what the question teaches) is done in Python; the rest is whole-tensor
# code, so the op count does not grow and only the CPU time can catch them: each must lose
# the vectorized constraint (benchmarks/bench_timing.py measures them against the solution).
LOOPS: dict[str, str] = {
    "basics.pick_per_row": """
def pick_per_row(x, cols):
    R, K = cols.shape
    out = []
    ext = out.extend
    for r, cs in zip(x.tolist(), cols.tolist()):
        ext(map(r.__getitem__, cs))
    return torch.tensor(out, dtype=x.dtype).view(R, K)
""",
    "nlp.label_scores": """
from operator import add

def label_scores(logits, labels):
    B, L, V = logits.shape
    f = logits.reshape(-1).tolist()
    picks = map(add, range(0, B * L * V, V), labels.reshape(-1).tolist())
    return torch.tensor(list(map(f.__getitem__, picks)), dtype=logits.dtype).view(B, L)
""",
    "nlp.token_log_probs": """
from operator import add

def token_log_probs(logits, input_ids):
    B, L, V = logits.shape
    f = F.log_softmax(logits, dim=-1).reshape(-1).tolist()
    picks = map(add, range(0, B * L * V, V), input_ids.reshape(-1).tolist())
    return torch.tensor(list(map(f.__getitem__, picks)), dtype=logits.dtype).view(B, L)
""",
    "nlp.causal_lm_log_probs": """
from operator import add

def causal_lm_log_probs(logits, input_ids):
    B, L, V = logits.shape
    n = B * (L - 1)
    f = F.log_softmax(logits[:, :-1], dim=-1).reshape(-1).tolist()
    picks = map(add, range(0, n * V, V), input_ids[:, 1:].reshape(-1).tolist())
    return torch.tensor(list(map(f.__getitem__, picks)), dtype=logits.dtype).view(B, L - 1)
""",
    "nlp.masked_nll": """
def masked_nll(logits, labels, ignore_index=-100):
    B, L, V = logits.shape
    f = F.log_softmax(logits, dim=-1).reshape(-1).tolist()
    picked = [f[k + t] for k, t in zip(range(0, B * L * V, V), labels.reshape(-1).tolist())
              if t != ignore_index]
    return torch.tensor(-sum(picked) / len(picked), dtype=logits.dtype)
""",
    "vision.gather_pixels": """
def gather_pixels(features, coords):
    B, C, H, W = features.shape
    P = coords.size(1)
    HW = H * W
    f = features.reshape(-1).tolist()
    out = []
    ext = out.extend
    for b, pts in enumerate(coords.tolist()):
        lin = [y * W + x for y, x in pts]
        for c in range(b * C, (b + 1) * C):
            ext(map(f[c * HW:(c + 1) * HW].__getitem__, lin))
    return torch.tensor(out, dtype=features.dtype).view(B, C, P)
""",
    "vision.select_heads": """
def select_heads(x, heads):
    B, H, L, Dh = x.shape
    f = x.reshape(-1).tolist()
    out = []
    ext = out.extend
    for b, hs in enumerate(heads.tolist()):
        for l, h in enumerate(hs):
            s = ((b * H + h) * L + l) * Dh
            ext(f[s:s + Dh])
    return torch.tensor(out, dtype=x.dtype).view(B, L, Dh)
""",
    "topk.select_patches": """
def select_patches(patches, scores, k):
    B, N, D = patches.shape
    f = patches.reshape(-1).tolist()
    out = []
    ext = out.extend
    for b, idx in enumerate(torch.topk(scores, k, dim=1).indices.tolist()):
        for i in idx:
            s = (b * N + i) * D
            ext(f[s:s + D])
    return torch.tensor(out, dtype=patches.dtype).view(B, k, D)
""",
    "topk.scatter_back": """
def scatter_back(selected, indices, n):
    B, K, D = selected.shape
    f = selected.reshape(-1).tolist()
    out = [0.0] * (B * n * D)
    t = 0
    for b, idx in enumerate(indices.tolist()):
        for i in idx:
            s = (b * n + i) * D
            out[s:s + D] = f[t:t + D]
            t += D
    return torch.tensor(out, dtype=selected.dtype).view(B, n, D)
""",
    "mae.random_masking": """
def random_masking(x, mask_ratio, noise):
    N, L, D = x.shape
    len_keep = int(L * (1 - mask_ratio))
    ids_shuffle = torch.argsort(noise, dim=1)
    ids_restore = torch.argsort(ids_shuffle, dim=1)
    f = x.reshape(-1).tolist()
    out = []
    ext = out.extend
    for b, ids in enumerate(ids_shuffle[:, :len_keep].tolist()):
        for i in ids:
            s = (b * L + i) * D
            ext(f[s:s + D])
    x_masked = torch.tensor(out, dtype=x.dtype).view(N, len_keep, D)
    mask = (ids_restore >= len_keep).float()
    return x_masked, mask, ids_restore
""",
    "mae.restore_sequence": """
def restore_sequence(x_visible, mask_token, ids_restore):
    N, K, D = x_visible.shape
    L = ids_restore.size(1)
    f = x_visible.reshape(-1).tolist()
    token = mask_token.tolist()
    out = []
    ext = out.extend
    for b, ids in enumerate(ids_restore.tolist()):
        base = b * K
        for i in ids:
            if i < K:
                s = (base + i) * D
                ext(f[s:s + D])
            else:
                ext(token)
    return torch.tensor(out, dtype=x_visible.dtype).view(N, L, D)
""",
    "friends.gather_backward": """
import itertools

def gather_backward(grad_out, dim, index, input_shape):
    d = dim % index.dim()
    shape = list(input_shape)
    moved = shape[:d] + shape[d + 1:] + [shape[d]]           # input's shape, dim last
    size = moved[-1]
    rows = [[0.0] * size for _ in range(math.prod(moved[:-1]))]
    lead = index.shape[:d] + index.shape[d + 1:]
    strides = [math.prod(moved[k + 1:-1]) for k in range(len(lead))]
    idx = index.movedim(d, -1).reshape(-1, index.size(d)).tolist()
    grads = grad_out.movedim(d, -1).reshape(-1, index.size(d)).tolist()
    for pos, ir, gr in zip(itertools.product(*map(range, lead)), idx, grads):
        row = rows[sum(p * s for p, s in zip(pos, strides))]
        for i, g in zip(ir, gr):
            row[i] += g
    flat = torch.tensor(rows, dtype=grad_out.dtype).reshape(-1)
    total = torch.zeros_like(flat).scatter_add_(0, torch.arange(flat.numel()), flat)
    return total.view(moved).movedim(-1, d).contiguous()
""",
    "friends.gather_via_take": """
import itertools

def gather_via_take(input, dim, index):
    d = dim % input.dim()
    shape = list(input.shape)
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    sd = strides[d]
    lead = index.shape[:d] + index.shape[d + 1:]
    lead_strides = strides[:d] + strides[d + 1:]
    idx = index.movedim(d, -1).reshape(-1, index.size(d)).tolist()
    lin = []
    ext = lin.extend
    for pos, ir in zip(itertools.product(*map(range, lead)), idx):
        base = sum(p * s for p, s in zip(pos, lead_strides))
        ext([base + i for i in ir] if sd == 1 else [base + sd * i for i in ir])
    moved = list(lead) + [index.size(d)]
    linear = torch.tensor(lin, dtype=torch.long).view(moved).movedim(-1, d)
    return torch.take(input, linear)
""",
}
LOOPS = {qid: textwrap.dedent(code) for qid, code in LOOPS.items()}
# The loops the tests run (each costs up to 1.5 x its limit of CPU): those closest to it.
LOOPS_TESTED = ["nlp.causal_lm_log_probs", "nlp.masked_nll", "friends.gather_via_take"]
