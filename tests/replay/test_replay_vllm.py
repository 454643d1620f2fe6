"""The replay reads the weights that sampled.

MRTPO's replay runs inside ``_generate_and_score_completions``, right after TRL's generation and before any optimizer
step on those rollouts; with ``--use_vllm`` (colocate) TRL copies the training model's weights into vLLM
(``sync_weights``) whenever ``global_step`` moved since its last copy, just before generating. So at replay time the
HF model's weights are exactly those vLLM sampled with (docs/performance.md, "vLLM").

* ``test_replay_sees_the_weights_that_generated`` (CPU, HF generation): the parameters at every replay equal those at
  the generation it scores, also when one generation serves two optimizer steps (``steps_per_generation=2``: the
  advantages, replay included, are computed once, at generation).
* ``test_vllm_colocate_replay_uses_the_synced_weights``: the same check with TRL's vLLM colocate generation: the
  parameters at every replay equal those last copied into vLLM. Needs CUDA and vllm (skipped otherwise).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _snapshot(model):
    return [p.detach().clone() for p in model.parameters()]


def _same(a, b) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def _spy_replay(monkeypatch, trainer_getter, record):
    import mrtpo_sdk.trainer.trainer as trainer_module

    real = trainer_module.replay_relevance

    def replay(model, *args, **kwargs):
        trainer = trainer_getter()
        record.append(("replay", trainer.state.global_step, _snapshot(trainer.model)))
        return real(model, *args, **kwargs)

    monkeypatch.setattr(trainer_module, "replay_relevance", replay)


@pytest.mark.parametrize("steps_per_generation", [1, 2])
def test_replay_sees_the_weights_that_generated(tmp_path, monkeypatch, steps_per_generation):
    from mrtpo_sdk import load_task
    from mrtpo_sdk.trainer import MRTPOTrainer

    from ..helpers import config, tiny_policy

    task = load_task(FIXTURES / "letters_task.py")
    model, tok = tiny_policy(task)
    args = config(tmp_path, max_steps=2, beta_warmup_steps=0, steps_per_generation=steps_per_generation,
                  per_device_train_batch_size=4)
    trainer = MRTPOTrainer(task, model, args, processing_class=tok)
    record: list[tuple] = []
    real_generate = MRTPOTrainer._generate

    def generate(self, prompts):
        record.append(("generate", self.state.global_step, _snapshot(self.model)))
        return real_generate(self, prompts)

    monkeypatch.setattr(MRTPOTrainer, "_generate", generate)
    _spy_replay(monkeypatch, lambda: trainer, record)
    trainer.train()

    kinds = [r[0] for r in record]
    assert kinds.count("replay") >= 1
    assert kinds == ["generate", "replay"] * (len(kinds) // 2)  # one replay per generation, right after it
    assert kinds.count("generate") == 2 // steps_per_generation  # a generation serves steps_per_generation steps
    for gen, rep in zip(record[::2], record[1::2]):
        assert gen[1] == rep[1]  # no optimizer step in between
        assert _same(gen[2], rep[2])  # the very weights that sampled
    assert not _same(record[0][2], _snapshot(trainer.model))  # training did change the weights afterwards


@pytest.mark.skipif(not torch.cuda.is_available() or importlib.util.find_spec("vllm") is None,
                    reason="TRL's vLLM colocate generation needs CUDA and the vllm package "
                           f"(cuda: {torch.cuda.is_available()}, vllm installed: "
                           f"{importlib.util.find_spec('vllm') is not None})")
def test_vllm_colocate_replay_uses_the_synced_weights(tmp_path, monkeypatch):
    from mrtpo_sdk import load_task
    from mrtpo_sdk.trainer import MRTPOTrainer

    from ..helpers import config, tiny_policy

    task = load_task(FIXTURES / "letters_task.py")
    model, tok = tiny_policy(task)
    folder = tmp_path / "policy"  # vLLM loads the model from a folder
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    args = config(tmp_path, max_steps=3, beta_warmup_steps=0, use_cpu=False, use_vllm=True, vllm_mode="colocate",
                  vllm_gpu_memory_utilization=0.2, vllm_enable_sleep_mode=False)
    trainer = MRTPOTrainer(task, str(folder), args, processing_class=tok)
    record: list[tuple] = []
    real_sync = type(trainer.vllm_generation).sync_weights

    def sync_weights(self):
        record.append(("sync", trainer.state.global_step, _snapshot(trainer.model)))
        return real_sync(self)

    monkeypatch.setattr(type(trainer.vllm_generation), "sync_weights", sync_weights)
    _spy_replay(monkeypatch, lambda: trainer, record)
    trainer.train()

    syncs = [r for r in record if r[0] == "sync"]
    replays = [r for r in record if r[0] == "replay"]
    assert syncs and replays
    for i, r in enumerate(record):
        if r[0] != "replay":
            continue
        last_sync = next(s for s in reversed(record[:i]) if s[0] == "sync")
        assert last_sync[1] == r[1]  # synced at this step, no optimizer step since
        assert _same(last_sync[2], r[2])  # the replay reads exactly the weights vLLM sampled with
