"""diagnose: its verdict agrees with torch, and each broken rule is named with a fix."""

import random
import re

import pytest
import torch

from gather_course import diagnose
from gather_course.diagnose import rule_label
from tests.helpers import outcome, random_call


def test_verdict_agrees_with_torch_on_randomized_battery():
    rng = random.Random(99)
    for _ in range(1500):
        input, dim, index = random_call(rng)
        ok, _ = outcome(torch.gather, input, dim, index)
        assert diagnose(input, dim, index).ok == ok, (list(input.shape), dim, list(index.shape))


def test_valid_call_says_so():
    report = diagnose(torch.zeros(2, 3), 1, torch.zeros(2, 2, dtype=torch.long))
    assert report.ok and "valid" in str(report) and "valid" in report._repr_markdown_()


def rules(report):
    return [p.rule for p in report.problems]


def test_article_001_shape_mismatch_fix_is_concrete():
    report = diagnose(torch.randn(3, 4, 5), 1, torch.randint(0, 3, (3, 4)))
    assert rules(report) == ["ndim"]
    assert "index has 2 dims but input has 3" in report.problems[0].message
    assert "index.unsqueeze(-1).expand(-1, -1, 5)" in report.problems[0].fix


def test_missing_last_dim_when_gathering_last_dim_suggests_unsqueeze():
    report = diagnose(torch.randn(2, 3, 5), -1, torch.randint(0, 5, (2, 3)))
    assert "index.unsqueeze(-1) " in report.problems[0].fix
    assert "squeeze(-1)" in report.problems[0].fix


def test_dim_minus_2_with_token_ids_raises_and_suggests_last_dim():
    ids = torch.tensor([[0, 2, 1], [1, 3, 4]])
    report = diagnose(torch.randn(2, 3, 5), -2, ids.unsqueeze(-1))
    assert rules(report) == ["range"]
    msg, fix = report.problems[0].message, report.problems[0].fix
    assert "index[1][1][0] = 3" in msg and "[0, 2]" in msg and "2 of 6" in msg
    assert "dim=-1" in fix


def test_dim_minus_2_silently_wrong_is_valid_but_noted():
    ids = torch.tensor([[0, 2, 1], [1, 2, 0]])  # all < 3: runs, reads the wrong thing
    report = diagnose(torch.randn(2, 3, 5), -2, ids.unsqueeze(-1))
    assert report.ok
    assert any("smaller than input in dim 2" in n for n in report.notes)


@pytest.mark.parametrize(
    "index, rule, words",
    [
        (torch.zeros(2, 2), "dtype", "index.long()"),
        (torch.zeros(2, 2, dtype=torch.bool), "dtype", "mask.nonzero()"),
        (torch.zeros(2, 2, dtype=torch.int16), "dtype", "int16"),
        (torch.full((2, 2), -100), "range", "-100"),
        (torch.full((2, 2), 3), "range", "1-based"),
        (torch.zeros(3, 2, dtype=torch.long), "size", "index.size(0) is 3 but input.size(0) is 2"),
        (torch.zeros(2, 2, 1, dtype=torch.long), "ndim", "remove the extra dims"),
    ],
)
def test_each_rule_named(index, rule, words):
    report = diagnose(torch.zeros(2, 3), 1, index)
    assert not report.ok and rule in rules(report)
    text = str(report)
    label = rule_label(rule)  # as lecture 01 numbers it: "rule 4, an integer dtype"
    assert words in text and f"[{label}]" in text and label.startswith("rule ")
    assert f"**{label}**" in report._repr_markdown_()


def test_the_rules_are_numbered_as_lecture_01_numbers_them():
    """diagnose says "rule 5, values in range" where lecture 01's section 7 lists the rules
    1 to 6 (issue 47: it said [range], [ndim], [size]); both editions."""
    import json

    from gather_course._i18n import speaking
    from gather_course.diagnose import _RULES
    from tests.helpers import ROOT

    words = {  # a phrase of each rule's line in section 7, per edition
        "en": {"dim": "`dim` is in", "ndim": "as many dims", "size": "index.size(d) <=",
               "dtype": "integer tensor", "range": "Every value is in", "device": "same device"},
        "zh": {"dim": "`dim` 在", "ndim": "维度个数", "size": "index.size(d) <=",
               "dtype": "整数张量", "range": "每个值都在", "device": "同一个设备"},
    }  # fmt: skip
    for lang, folder in (("en", ROOT / "notebooks"), ("zh", ROOT / "zh" / "notebooks")):
        nb = json.loads((folder / "01_basic_formula.ipynb").read_text(encoding="utf-8"))
        section = next(
            "".join(c["source"]) for c in nb["cells"]
            if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## 7.")
        )  # fmt: skip
        numbered = dict(re.findall(r"(?m)^(\d)\. (.*)$", section))
        for rule, phrase in words[lang].items():
            (number,) = [int(n) for n, line in numbered.items() if phrase in line]
            assert _RULES[rule][0] == number, (lang, rule)
            with speaking(lang):
                assert rule_label(rule).startswith("rule " if lang == "en" else "规则 ")
                assert str(number) in rule_label(rule)


def test_several_problems_are_all_reported():
    report = diagnose(torch.zeros(2, 3), 1, torch.full((3, 2), 7.0))
    assert set(rules(report)) == {"dtype", "size"}


def test_dim_out_of_range_and_types():
    assert rules(diagnose(torch.zeros(2, 3), 2, torch.zeros(2, 3, dtype=torch.long))) == ["dim"]
    assert rules(diagnose(torch.zeros(2, 3), 1, [[0]])) == ["type"]
    assert rules(diagnose("x", "y", None)) == ["type", "type", "type"]


def test_size_rule_suggests_the_dim_that_fits():
    report = diagnose(torch.zeros(2, 5), 1, torch.zeros(4, 2, dtype=torch.long))
    assert "dim=0" in report.problems[0].fix


def test_empty_index_is_valid_with_a_note():
    report = diagnose(torch.zeros(2, 3), 1, torch.zeros(0, 7))
    assert report.ok and "empty" in report.notes[0]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_device_mismatch():
    report = diagnose(torch.zeros(2, 3, device="cuda"), 1, torch.zeros(2, 2, dtype=torch.long))
    assert "device" in rules(report) and "index.to(input.device)" in str(report)
