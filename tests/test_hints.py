"""Hints climb to the answer without giving it: no hint holds a line of the solution.

The solution stays in ``.solution()``. A hint may name the functions, the dims, the shapes
and the order of the steps, or show the pattern on another, smaller example; it must not
contain a line of the solution code, nor code that can be pasted in as the answer.
"""

from __future__ import annotations

import itertools
import re

import pytest
import torch
import torch.nn.functional as F

from gather_course import GatherCourseError, exercise, exercise_ids
from tests.helpers import variant_solutions

IMPORTS, solution_code = variant_solutions.IMPORTS, variant_solutions.solution_code

# every question, and every class variant (its hints are made from its knobs); a variant's
# answer is the published one of solutions/variant_solutions.py, which no hint may quote
ALL = [(qid, "public") for qid in exercise_ids()] + [
    (qid, exercise(qid).family.name(p))
    for qid in exercise_ids()
    if exercise(qid).family
    for p in exercise(qid).family.every()[1:]
]


def answer_of(q) -> str:
    """The question's answer: the course's solution, or the published answer of a variant."""
    return (
        q.solution_code if q.variant_name == "public" else IMPORTS + solution_code(q.qid, q.params)
    )


MIN_CHARS = 12  # code shorter than this (no spaces) is too small to give anything away
SIZES = re.compile(r"([\w,]+=)?\w+\.(shape|size\(-?\w*\)|dim\(\))(\[-?\d+\])?")  # D = x.size(-1)


def squeeze(text: str) -> str:
    """Code or hint text with no whitespace and no Markdown backticks."""
    return re.sub(r"\s+", "", text.replace("`", ""))


def solution_fragments(code: str) -> list[str]:
    """The non-trivial lines of a solution, each also as its right-hand side and its
    returned expression, and without its receiver (``log_probs.gather(...)`` ->
    ``.gather(...)``): the pieces no hint may quote. Whitespace is squeezed out."""
    found = []
    for line in code.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith(("def ", "import ", "from ")):
            continue
        pieces = [line]
        if line.startswith("return "):
            pieces.append(line[len("return ") :])
        parts = re.split(r"(?<![=!<>+\-*/%])=(?!=)", line, maxsplit=1)
        if len(parts) == 2:
            pieces.append(parts[1])
        for piece in list(pieces):
            receiver = re.match(r"[A-Za-z_]\w*(?=\.)", piece.strip())
            if receiver:
                pieces.append(piece.strip()[receiver.end() :])
        found += [p for p in map(squeeze, pieces) if len(p) >= MIN_CHARS and not SIZES.fullmatch(p)]
    return sorted(set(found))


def quoted_lines(hint: str, code: str) -> list[str]:
    text = squeeze(hint)
    return [piece for piece in solution_fragments(code) if piece in text]


def runs_of_code(hint: str) -> list[list[str]]:
    """The hint's code spans, alone and as runs of consecutive spans (read as statements)."""
    spans = [s.strip() for s in re.findall(r"`([^`]+)`", hint)]
    return [spans[i:j] for i in range(len(spans)) for j in range(i + 1, len(spans) + 1)]


def same(got, want) -> bool:
    if isinstance(want, (tuple, list)):
        return (
            isinstance(got, (tuple, list))
            and len(got) == len(want)
            and all(same(g, w) for g, w in zip(got, want))
        )
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        return False
    return torch.allclose(got.double(), want.double(), rtol=1e-4, atol=1e-5)


def pasted_answer(q, run: list[str]):
    """A function whose body is the run of code (its last span returned), or None."""
    *statements, last = run
    body = [*statements, f"return ({last})"]
    source = f"def answer({', '.join(q.args)}):\n" + "".join(f"    {s}\n" for s in body)
    namespace = {"torch": torch, "F": F, "itertools": itertools}
    try:
        exec(source, namespace)  # noqa: S102 - a hint's code is run to show it does not answer
    except SyntaxError:
        return None
    return namespace["answer"]


def answers_a_case(q, fn) -> bool:
    gen = torch.Generator().manual_seed(0)
    for sizes in q.sizes[:3]:
        case = q.build(gen, sizes)
        want = q.spec(*(case.inputs[a] for a in q.args))
        try:
            got = fn(
                *(
                    case.inputs[a].clone()
                    if isinstance(case.inputs[a], torch.Tensor)
                    else case.inputs[a]
                    for a in q.args
                )
            )
        except Exception:  # noqa: BLE001 - any error means the hint's code is no answer
            return False
        if not same(got, want):
            return False
    return True


def test_the_checks_see_a_quoted_or_pasteable_answer():
    """The two checks below catch what the old hints did: a solution line, or an answer."""
    q = exercise("basics.pick_per_row")
    assert quoted_lines("Use `torch.gather(x, 1, cols)` here.", q.solution_code)
    assert not quoted_lines("Gather along dim 1 with `cols` as the index.", q.solution_code)
    assert quoted_lines(
        "Then `lp.gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)`.",
        exercise("nlp.token_log_probs").solution_code,
    )
    assert quoted_lines(
        "`src = list(pos); src[dim] = int(index[pos])`",
        exercise("basics.gather_loop").solution_code,
    )
    assert not quoted_lines("Return `out`.", exercise("basics.gather_loop").solution_code)
    heads = exercise("vision.select_heads")
    fn = pasted_answer(
        heads, ["x.gather(1, heads[:, None, :, None].expand(-1, 1, -1, x.size(-1))).squeeze(1)"]
    )
    assert answers_a_case(heads, fn)
    assert not answers_a_case(heads, pasted_answer(heads, ["x.gather(1, heads)"]))
    topk = exercise("topk.select_patches")
    fn = pasted_answer(
        topk,
        [
            "i = scores.topk(k, dim=1).indices",
            "patches.gather(1, i[..., None].expand(-1, -1, patches.size(-1)))",
        ],
    )
    assert answers_a_case(topk, fn)


@pytest.mark.parametrize("qid, variant", ALL)
def test_no_hint_quotes_a_line_of_the_solution(qid, variant):
    q = exercise(qid, variant)
    code = answer_of(q)
    assert solution_fragments(code)
    for n, hint in enumerate(q.hints, 1):
        assert not quoted_lines(hint, code), (n, quoted_lines(hint, code))


@pytest.mark.parametrize("qid, variant", ALL)
def test_no_hint_is_code_that_answers_the_question(qid, variant):
    q = exercise(qid, variant)
    for n, hint in enumerate(q.hints, 1):
        for run in runs_of_code(hint):
            fn = pasted_answer(q, run)
            assert fn is None or not answers_a_case(q, fn), (n, run)


@pytest.mark.parametrize("qid, variant", ALL)
def test_the_last_hint_is_not_the_solution(qid, variant):
    q = exercise(qid, variant)
    last = squeeze(q.hints[-1])
    body = [squeeze(line.split("#", 1)[0]) for line in answer_of(q).splitlines()]
    body = [line for line in body if line and not line.startswith(("def", "import"))]
    assert "".join(body) not in last
    returned = [line[len("return") :] for line in body if line.startswith("return")]
    assert returned and all(len(r) < MIN_CHARS or r not in last for r in returned)
    assert len(set(q.hints)) == len(q.hints)  # each hint says something new


@pytest.mark.parametrize("qid, variant", ALL)
def test_hints_are_sentences(qid, variant):
    q = exercise(qid, variant)
    assert len(q.hints) >= 3  # the notebooks say hint(2) and hint(3) say more
    for n, hint in enumerate(q.hints, 1):
        assert hint[:1].isupper(), (n, hint[:40])
        assert hint.rstrip().endswith((".", "?", "!")), (n, hint[-40:])
        assert hint.count("`") % 2 == 0, (n, hint)  # Markdown code spans are closed


@pytest.mark.parametrize("qid, variant", ALL)
def test_hint_n_works_from_1_to_the_last_and_refuses_others(qid, variant):
    q = exercise(qid, variant)
    for n in range(1, len(q.hints) + 1):
        shown = q.hint(n)
        assert shown.startswith(f"**Hint {n}/{len(q.hints)}** (`{qid}`)")
        assert shown.endswith(q.hints[n - 1])
    for bad in (0, len(q.hints) + 1, -1, True, "2"):
        with pytest.raises(GatherCourseError, match="hints 1 to"):
            q.hint(bad)
