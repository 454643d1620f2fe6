"""Training-time credit statistics (mrtpo_sdk.trainer.credit) on a hand-made replay, without a model."""

import math
import re
from collections import defaultdict

import pytest
import torch

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.trainer.credit import log_credit


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
