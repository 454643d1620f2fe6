"""Training-time credit statistics (mrtpo_sdk.trainer.credit_logging) on a hand-made replay, without a model."""

import html
import math
import re
from collections import defaultdict

import pytest
import torch

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.trainer.credit_logging import log_credit


@verifier(kind="format")
def shape(example, completion):
    return Result(1.0, "The answer is one word.")


@verifier(kind="reference")
def word(example, completion):
    return Result(1.0, example["word"])


class _Tok:
    def decode(self, ids):
        return "".join(chr(ord("a") + i) for i in ids)


def _log(tmp_path, step, every, ids, q, mask, replayed, rewards):
    """log_credit on plain data; returns the metrics it appended to."""
    task = Task(name="t", examples=[{"id": "e0", "word": "x"}], prompt=lambda ex: "p", verifiers=[shape, word])
    metrics = defaultdict(list)
    log_credit(
        metrics,
        task,
        ids,
        q,
        mask,
        replayed,
        rewards,
        0.5,
        examples=[{"id": "e0", "word": "x"}, {"id": "e1", "word": "y"}],
        completions=["abcd", "ab"],
        blocks=[["The answer is one word.", "x"], ["The answer is one word.", "y"]],
        tokenizer=_Tok(),
        temperature=1.0,
        global_step=step,
        sample_every=every,
        output_dir=str(tmp_path),
    )
    return metrics


def test_metrics_and_html_sample(tmp_path):
    # response 0: reward 0 replayed, q = [0.5, 0.1, 0.3, 0.1] -> 2 of 4 tokens hold 80%: 0.5
    # response 1: reward 0 replayed, q = [0.9, 0.1] (+ padding) -> 1 of 2 tokens: 0.5 ... mean 0.5
    #             reward 1 replayed, q = [0.1, 0.1] -> 2 of 2: 1.0 (the only defined pair of reward 1)
    q = torch.tensor([[[0.5, 0.1, 0.3, 0.1], [0.0] * 4], [[0.9, 0.1, 0.0, 0.0], [0.1, 0.1, 0.0, 0.0]]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    replayed = torch.tensor([[True, False], [True, True]])
    ids = torch.tensor([[0, 1, 2, 3], [0, 1, 9, 9]])
    # generating for step 4 (3 updates done)
    m = _log(tmp_path, 3, 2, ids, q, mask, replayed, torch.tensor([[1.0, 0.0], [1.0, 1.0]]))
    assert m["concentration/shape"] == [pytest.approx(0.5)]
    assert m["concentration/word"] == [pytest.approx(1.0)]
    page = (tmp_path / "credit-step4.html").read_text()
    assert len(re.findall(r'<tr class="reward-row">', page)) == 2
    assert "e0" in page and "not replayed" in page  # response 0, reward 1 kept w = 1
    # training does not locate deciding tokens: no outline, no legend, no "not located" line on its pages
    body = page.split("</style>", 1)[1]
    assert "legend-dec" not in body and "tok dec" not in body and "deciding" not in body


def test_no_replayed_pair_logs_nan_and_writes_nothing(tmp_path):
    q = torch.zeros(2, 2, 4)
    m = _log(
        tmp_path,
        3,
        2,
        torch.zeros(2, 4, dtype=torch.long),
        q,
        torch.ones(2, 4),
        torch.zeros(2, 2, dtype=torch.bool),
        torch.zeros(2, 2),
    )
    assert all(math.isnan(v[0]) for v in m.values())  # TRL logs these as null
    assert list(tmp_path.iterdir()) == []


def test_page_says_which_policy_sampled_the_step(tmp_path):
    q = torch.tensor([[[0.5, 0.1, 0.3, 0.1], [0.0] * 4], [[0.9, 0.1, 0.0, 0.0], [0.1, 0.1, 0.0, 0.0]]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    replayed = torch.tensor([[True, False], [True, True]])
    ids = torch.tensor([[0, 1, 2, 3], [0, 1, 9, 9]])
    _log(tmp_path, 49, 50, ids, q, mask, replayed, torch.tensor([[1.0, 0.0], [1.0, 1.0]]))  # 49 updates done
    page = html.unescape((tmp_path / "credit-step50.html").read_text())
    assert (
        "Policy: the behavior policy that sampled step 50's completions (the policy after step 49's update)." in page
    )
    assert "<title>mrtpo-sdk train: t / e0, step 50</title>" in page
    assert "behavior policy at step 49" not in page
    _log(tmp_path, 0, 1, ids, q, mask, replayed, torch.tensor([[1.0, 0.0], [1.0, 1.0]]))
    first = html.unescape((tmp_path / "credit-step1.html").read_text())
    assert "sampled step 1's completions (the initial policy, before any update)" in first


def test_credit_pages_sort_by_step_and_the_summary_line_counts_them(tmp_path):
    from mrtpo_sdk.trainer.credit_logging import credit_pages, credit_pages_line

    assert credit_pages_line(tmp_path) is None
    (tmp_path / "credit-step5.html").write_text("page")
    assert credit_pages_line(tmp_path) == f"credit:  1 page (step 5): {tmp_path / 'credit-step5.html'}"
    for step in (10, 95, 100, 20):
        (tmp_path / f"credit-step{step}.html").write_text("page")
    assert [p.name for p in credit_pages(tmp_path)] == [f"credit-step{s}.html" for s in (5, 10, 20, 95, 100)]
    assert credit_pages_line(tmp_path) == f"credit:  5 pages, the latest (step 100): {tmp_path / 'credit-step100.html'}"


def _contrast(text: str, rgb, alpha: float) -> float:
    """WCAG 2 contrast ratio of ``text`` (#rrggbb) on ``rgba(*rgb, alpha)`` over white."""

    def lum(channels):
        lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    a = lum([alpha * c + (1 - alpha) * 255 for c in rgb])
    b = lum([int(text[i : i + 2], 16) for i in (1, 3, 5)])
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def test_token_text_reads_on_its_shade_and_weights_are_separated(tmp_path):
    from mrtpo_sdk.credit_page import HUES, text_colour

    assert text_colour((33, 102, 172), 1.0) == "#ffffff"  # the darkest blue cell: white text
    assert text_colour((33, 102, 172), 0.1) == "#000000"  # a pale cell: black text
    assert text_colour((191, 129, 45), 1.0) == "#000000"  # the ochre hue is light even at full shade
    worst = min(_contrast(text_colour(h, a / 100), h, a / 100) for h in HUES for a in range(101))
    assert worst >= 4.5  # WCAG AA for small text, on every shade of every row
    q = torch.tensor([[[0.5, 0.5, 0.05, 0.5], [0.0] * 4], [[0.9, 0.1, 0.0, 0.0], [0.1, 0.1, 0.0, 0.0]]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    replayed = torch.tensor([[True, False], [True, True]])
    ids = torch.tensor([[0, 1, 2, 3], [0, 1, 9, 9]])
    _log(tmp_path, 3, 2, ids, q, mask, replayed, torch.tensor([[1.0, 0.0], [1.0, 1.0]]))
    page = (tmp_path / "credit-step4.html").read_text()
    first_row = page.split('<tr class="reward-row">')[1]
    colours = re.findall(r'rgba\(33,102,172,([0-9.]+)\); color: (#[0-9a-f]{6})"', first_row)
    assert colours == [("1.000", "#ffffff"), ("1.000", "#ffffff"), ("0.100", "#000000"), ("1.000", "#ffffff")]
    assert ".tok .w { display: block; font-size: 0.7em; color: inherit; }" in page  # no opacity fading the weight
    weights = re.findall(r'<span class="w">([0-9.]+)</span></span>( ?)', first_row)
    assert len(weights) == 4 and all(sep == " " for _, sep in weights[:-1])  # "1.20 1.20 0.39", not "1.201.200.39"
    text = re.sub(r"<[^>]+>", "", first_row.split("<td>")[1])
    assert re.search(r"\d\.\d\d\d\.\d\d", text) is None  # no two weights back to back in the page's text
