"""Training-time credit statistics (mrtpo_sdk.trainer.credit) on a hand-made replay, without a model."""

import math
import re
from collections import defaultdict
from types import SimpleNamespace

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


def _trainer(tmp_path, step, every):
    task = Task(name="t", examples=[{"id": "e0", "word": "x"}], prompt=lambda ex: "p", verifiers=[shape, word])
    return SimpleNamespace(
        task=task,
        args=SimpleNamespace(log_samples_steps=every, output_dir=str(tmp_path)),
        state=SimpleNamespace(global_step=step),
        accelerator=SimpleNamespace(is_main_process=True),
        processing_class=_Tok(),
        temperature=1.0,
        _metrics={"train": defaultdict(list)},
        _pending={
            "examples": [{"id": "e0", "word": "x"}, {"id": "e1", "word": "y"}],
            "completions": ["abcd", "ab"],
            "blocks": [["The answer is one word.", "x"], ["The answer is one word.", "y"]],
        },
    )


def test_metrics_and_html_sample(tmp_path):
    # response 0: reward 0 replayed, q = [0.5, 0.1, 0.3, 0.1] -> 2 of 4 tokens hold 80%: 0.5
    # response 1: reward 0 replayed, q = [0.9, 0.1] (+ padding) -> 1 of 2 tokens: 0.5 ... mean 0.5
    #             reward 1 replayed, q = [0.1, 0.1] -> 2 of 2: 1.0 (the only defined pair of reward 1)
    q = torch.tensor([[[0.5, 0.1, 0.3, 0.1], [0.0] * 4], [[0.9, 0.1, 0.0, 0.0], [0.1, 0.1, 0.0, 0.0]]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    replayed = torch.tensor([[True, False], [True, True]])
    ids = torch.tensor([[0, 1, 2, 3], [0, 1, 9, 9]])
    trainer = _trainer(tmp_path, step=3, every=2)  # generating for step 4 (3 updates done)
    log_credit(trainer, ids, q, mask, replayed, torch.tensor([[1.0, 0.0], [1.0, 1.0]]), 0.5, "train")
    m = trainer._metrics["train"]
    assert m["concentration/shape"] == [pytest.approx(0.5)]
    assert m["concentration/word"] == [pytest.approx(1.0)]
    page = (tmp_path / "credit-step4.html").read_text()
    assert len(re.findall(r'<tr class="reward-row">', page)) == 2
    assert "e0" in page and "not replayed" in page  # response 0, reward 1 kept w = 1


def test_no_replayed_pair_logs_nan_and_writes_nothing(tmp_path):
    trainer = _trainer(tmp_path, step=3, every=2)
    q = torch.zeros(2, 2, 4)
    log_credit(
        trainer,
        torch.zeros(2, 4, dtype=torch.long),
        q,
        torch.ones(2, 4),
        torch.zeros(2, 2, dtype=torch.bool),
        torch.zeros(2, 2),
        0.5,
        "train",
    )
    assert all(math.isnan(v[0]) for v in trainer._metrics["train"].values())  # TRL logs these as null
    assert list(tmp_path.iterdir()) == []
