"""The replay under sharded training.

Under DeepSpeed ZeRO-3 or FSDP the replay's forward passes must see whole parameters, as TRL's own generation does.
The trainer runs the replay inside ``mrtpo_sdk.trainer.trainer._replay_model``: TRL's
``unwrap_model_for_generation(model_wrapped, accelerator, gather_deepspeed3_params=True)`` and TRL's
``summon_full_params(model_wrapped, recurse=False)``; under FSDP every layer's forward is a collective, so the
replay also synchronizes its number of decoder passes across ranks (``sync_passes``).

* ``test_replay_goes_through_trls_gathering``: a real (1-process) training step, TRL's helpers replaced by
  recording wrappers: the replay runs inside both, with the arguments above.
* ``test_fsdp_two_process_cpu_replay_matches_unsharded``: a real 2-process torch FSDP (v1 and v2) run on CPU over gloo
  (this file, launched with ``torch.distributed.run``): parameters really sharded, ranks replaying different numbers
  of pairs (one none at all), q equal to the unsharded replay's. accelerate 1.15 cannot build this on CPU (an FSDP
  plugin with ``cpu=True`` gives ``DistributedType.MULTI_CPU``, i.e. plain DDP, and ``state.fsdp_plugin`` unset), so
  the model is wrapped with torch's FSDP / ``fully_shard`` directly and the accelerator is a stand-in that says
  "FSDP v1" / "v2".
* ``test_accelerate_fsdp_training_on_gpus``: the whole ``MRTPOTrainer`` under ``accelerate launch --use_fsdp``;
  needs 2 CUDA devices (skipped otherwise, with the reason).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]  # on the path of the workers this file launches as a script
FIXTURES = HERE.parents[1] / "fixtures"


# ---------------------------------------------------------------------------------------------------------------
# 1. the trainer's replay goes through TRL's gathering context
# ---------------------------------------------------------------------------------------------------------------


def test_replay_goes_through_trls_gathering(tmp_path, monkeypatch):
    import trl.models
    from trl.distributed import DistributedBackend

    import mrtpo_sdk.trainer.trainer as trainer_module
    from mrtpo_sdk import load_task
    from mrtpo_sdk.trainer import MRTPOTrainer

    from ..helpers import config, tiny_policy

    events: list[tuple] = []
    real_unwrap = trl.models.unwrap_model_for_generation
    real_summon = DistributedBackend.summon_full_params

    @contextlib.contextmanager
    def unwrap(model, accelerator, **kwargs):
        events.append(("unwrap-enter", model, kwargs.get("gather_deepspeed3_params")))
        with real_unwrap(model, accelerator, **kwargs) as unwrapped:
            yield unwrapped
        events.append(("unwrap-exit",))

    @contextlib.contextmanager
    def summon(self, module, **kwargs):
        events.append(("summon-enter", module, kwargs.get("recurse")))
        with real_summon(self, module, **kwargs):
            yield
        events.append(("summon-exit",))

    real_replay = trainer_module.replay_relevance

    def replay(model, *args, **kwargs):
        events.append(("replay", model, kwargs.get("sync_passes")))
        return real_replay(model, *args, **kwargs)

    monkeypatch.setattr(trl.models, "unwrap_model_for_generation", unwrap)
    monkeypatch.setattr(DistributedBackend, "summon_full_params", summon)
    monkeypatch.setattr(trainer_module, "replay_relevance", replay)

    task = load_task(FIXTURES / "letters_task.py")
    model, tok = tiny_policy(task)
    trainer = MRTPOTrainer(task, model, config(tmp_path, max_steps=1, beta_warmup_steps=0), processing_class=tok)
    trainer.train()

    replays = [i for i, e in enumerate(events) if e[0] == "replay"]
    assert replays, events
    for i in replays:
        # the nearest enclosing contexts of the replay: TRL's unwrap (on model_wrapped, gathering) and TRL's summon
        before = [e for e in events[:i] if e[0] in ("unwrap-enter", "unwrap-exit", "summon-enter", "summon-exit")]
        assert [e[0] for e in before[-2:]] == ["unwrap-enter", "summon-enter"]
        unwrap_enter, summon_enter = before[-2], before[-1]
        assert unwrap_enter[1] is trainer.model_wrapped and unwrap_enter[2] is True
        assert summon_enter[1] is trainer.model_wrapped and summon_enter[2] is False
        assert events[i][1] is trainer.accelerator.unwrap_model(trainer.model)
        assert events[i][2] is None  # one process, no FSDP: no pass synchronization
        after = [e[0] for e in events[i + 1 :] if e[0] in ("unwrap-exit", "summon-exit")]
        assert after[:2] == ["summon-exit", "unwrap-exit"]


def test_sync_passes_pads_every_rank_to_the_busiest():
    """Single process: the replay asks for the synchronized count once per replay, before its passes, also with no
    replayed pair, and runs the difference as dummy passes; q is unchanged."""
    from mrtpo_sdk.replay import replay_relevance

    model, task, examples, ids, mask, blocks = _tiny_setup()
    counted = {"n": 0}
    decoder = model.get_decoder()
    handle = decoder.register_forward_pre_hook(lambda *a: counted.__setitem__("n", counted["n"] + 1))
    try:
        for replayed in (_replayed(ids.size(0), task, rank=0), torch.zeros((ids.size(0), 3), dtype=torch.bool)):
            asked: list[int] = []

            def sync(n):
                asked.append(n)
                return n + 5

            ref = replay_relevance(model, task, examples, ids, mask, blocks, replayed, encode_prompts=_encode,
                                   pad_token_id=0)
            counted["n"] = 0
            got = replay_relevance(model, task, examples, ids, mask, blocks, replayed, encode_prompts=_encode,
                                   pad_token_id=0, sync_passes=sync)
            assert len(asked) == 1
            assert torch.equal(got.q, ref.q)
            if not bool(replayed.any()):
                assert asked == [0]
            # real passes + 5 dummies + the head check's 2 (decoder hooks also see the stubbed head calls)
            assert counted["n"] >= asked[0] + 5 + 2
    finally:
        handle.remove()


# ---------------------------------------------------------------------------------------------------------------
# 2. a real FSDP run on CPU, 2 processes over gloo
# ---------------------------------------------------------------------------------------------------------------


def _tiny_setup():
    from transformers import AutoModelForCausalLM, Qwen2Config

    from mrtpo_sdk import Result, Task, verifier

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         num_key_value_heads=1, intermediate_size=64, max_position_embeddings=512,
                         tie_word_embeddings=False)
    model = AutoModelForCausalLM.from_config(config).eval()

    def make(name):
        @verifier(name=name)
        def v(example, completion):
            return Result(1.0, "")
        return v

    task = Task(name="sharded", examples=[{"id": 0}], prompt=lambda ex: ex["prompt"],
                verifiers=[make(f"r{k}") for k in range(3)], block_separator=" ")
    g = torch.Generator().manual_seed(1)

    def rand_ids(n):
        return " ".join(str(t) for t in torch.randint(1, 96, (n,), generator=g).tolist())

    examples, blocks, comps = [], [], []
    for i in range(2):
        example = {"id": i, "prompt": rand_ids(10 + 3 * i)}
        for _ in range(4):
            examples.append(example)
            blocks.append([rand_ids(int(torch.randint(3, 7, (1,), generator=g))) for _ in range(3)])
            comps.append(torch.randint(1, 96, (int(torch.randint(3, 9, (1,), generator=g)),), generator=g))
    T = max(c.numel() for c in comps)
    ids = torch.zeros((len(comps), T), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, c in enumerate(comps):
        ids[i, : c.numel()] = c
        mask[i, : c.numel()] = 1
    return model, task, examples, ids, mask, blocks


def _encode(prompts):
    return [[int(t) for t in p.split()] for p in prompts]


def _replayed(B, task, rank, step=0):
    """Rank-dependent replayed pairs: rank 0 replays many, rank 1 a few; at step 1, rank 1 none."""
    K = len(task.verifiers)
    r = torch.zeros((B, K), dtype=torch.bool)
    if rank == 0:
        r[::2, :] = True
        r[1, 1] = True
    elif step == 0:
        r[3, 2] = True
    return r


class _StandInAccelerator:
    """What TRL's helpers and the trainer read from an Accelerator, for a torch-FSDP model on CPU."""

    def __init__(self, fsdp_version: int):
        from types import SimpleNamespace

        self.state = SimpleNamespace(deepspeed_plugin=None, fsdp_plugin=SimpleNamespace(fsdp_version=fsdp_version))
        self.num_processes = torch.distributed.get_world_size()
        self.device = torch.device("cpu")

    def unwrap_model(self, model):
        from accelerate.utils import extract_model_from_parallel

        return extract_model_from_parallel(model)

    def gather(self, tensor):
        out = [torch.zeros_like(tensor) for _ in range(self.num_processes)]
        torch.distributed.all_gather(out, tensor)
        return torch.cat(out)


def _fsdp_worker(out_dir: str, version: int) -> None:
    import functools
    from types import SimpleNamespace

    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
    from transformers.models.qwen2.modeling_qwen2 import Qwen2DecoderLayer
    from trl.distributed import DistributedBackend

    from mrtpo_sdk.replay import replay_relevance
    from mrtpo_sdk.trainer.trainer import _replay_model

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    reference, task, examples, ids, mask, blocks = _tiny_setup()
    model, *_ = _tiny_setup()  # the same weights (same seed), to be sharded
    full_numel = sum(p.numel() for p in model.parameters())
    B = ids.size(0)
    refs = [replay_relevance(reference, task, examples, ids, mask, blocks, _replayed(B, task, rank, step),
                             encode_prompts=_encode, pad_token_id=0) for step in range(2)]
    if version == 1:
        wrapped = FSDP(model, auto_wrap_policy=functools.partial(transformer_auto_wrap_policy,
                                                                 transformer_layer_cls={Qwen2DecoderLayer}),
                       device_id=torch.device("cpu"), use_orig_params=True)
        local_numel = sum(p.numel() for p in wrapped.parameters())  # this rank's shards only
    else:  # FSDP2, as accelerate applies it: every decoder layer, then the root
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh("cpu", (world,))
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh)
        wrapped = fully_shard(model, mesh=mesh)
        local_numel = sum(p.to_local().numel() for p in wrapped.parameters())
    accelerator = _StandInAccelerator(version)
    trainer = SimpleNamespace(model_wrapped=wrapped, accelerator=accelerator, _dist=DistributedBackend(accelerator),
                              args=SimpleNamespace(gradient_checkpointing_kwargs=None))
    results = []
    for step in range(2):
        replayed = _replayed(B, task, rank, step)
        with _replay_model(trainer) as (unwrapped, sync_passes):
            assert sync_passes is not None
            # chunk_size 2: the number of head calls differs between ranks too (they must not be collectives)
            out = replay_relevance(unwrapped, task, examples, ids, mask, blocks, replayed, encode_prompts=_encode,
                                   pad_token_id=0, sync_passes=sync_passes, chunk_size=2)
        results.append({
            "pairs": int(replayed.sum()), "max_abs_q_diff": float((out.q - refs[step].q).abs().max()),
            "max_q": float(out.q.max()), "prefix_shared": out.prefix_shared, "fallback": out.fallback,
        })
    dist.barrier()
    (Path(out_dir) / f"rank{rank}.json").write_text(json.dumps({
        "world": world, "full_numel": full_numel, "local_numel": local_numel, "steps": results,
    }))
    dist.destroy_process_group()


@pytest.mark.parametrize("version", [1, 2])
def test_fsdp_two_process_cpu_replay_matches_unsharded(tmp_path, version):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
           "--master_port", port, str(HERE), "fsdp-worker", str(tmp_path), str(version)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    for r in ranks:
        assert r["world"] == 2
        assert r["local_numel"] < r["full_numel"]  # really sharded
        for step in r["steps"]:
            assert step["max_abs_q_diff"] <= 1e-5, step
            if step["pairs"]:
                assert step["prefix_shared"] and step["fallback"] is None
    assert ranks[0]["steps"][0]["pairs"] > ranks[1]["steps"][0]["pairs"] > 0  # uneven work
    assert ranks[1]["steps"][1]["pairs"] == 0 and ranks[0]["steps"][1]["pairs"] > 0  # one rank with nothing
    assert ranks[0]["steps"][0]["max_q"] > 0


# ---------------------------------------------------------------------------------------------------------------
# 3. accelerate's own FSDP plugin: GPUs only
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.skipif(torch.cuda.device_count() < 2,
                    reason="accelerate's FSDP plugin needs CUDA: with --cpu (cpu=True) accelerate 1.15 sets "
                           "DistributedType.MULTI_CPU and ignores the plugin; needs 2 CUDA devices")
def test_accelerate_fsdp_training_on_gpus(tmp_path):
    from mrtpo_sdk.trainer.callbacks import read_metrics

    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--use_fsdp", "--fsdp_version", "1",
           "--fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP", "--fsdp_transformer_layer_cls_to_wrap",
           "Qwen2DecoderLayer", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
           "--dynamo_backend", "no", "--main_process_port", port, str(HERE), "accelerate-worker",
           str(tmp_path / "run")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2]
    assert all("mrtpo/replayed_fraction" in r for r in rows)


def _accelerate_worker(out: str) -> None:
    """2 MRTPO steps of the letters task under accelerate's FSDP plugin (launched by the GPU test)."""
    from mrtpo_sdk import load_task
    from mrtpo_sdk.policy import DefaultPolicyConfig, build_model, build_tokenizer
    from mrtpo_sdk.trainer import MRTPOConfig, MRTPOTrainer

    task = load_task(FIXTURES / "letters_task.py")
    examples = task.load_examples()
    texts = [task.rollout_prompt(e)[0]["content"] for e in examples] + [task.reference_completion(e) for e in examples]
    tokenizer = build_tokenizer(texts * 4, vocab_size=300)
    model = build_model(tokenizer, DefaultPolicyConfig(vocab_size=300, hidden_size=32, num_hidden_layers=2,
                                                       intermediate_size=64, num_attention_heads=2,
                                                       num_key_value_heads=1, seed=0))
    args = MRTPOConfig(output_dir=out, algo="mrtpo", max_steps=2, per_device_train_batch_size=8, num_generations=4,
                       max_completion_length=12, logging_steps=1, report_to="none", save_strategy="no", bf16=False,
                       disable_tqdm=True, beta_warmup_steps=0, seed=0)
    trainer = MRTPOTrainer(task, model, args, examples=examples, processing_class=tokenizer)
    trainer.train()
    trainer.accelerator.wait_for_everyone()
    trainer.accelerator.end_training()  # leaves the process group before exit, as `mrtpo-sdk train` does


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    if sys.argv[1] == "fsdp-worker":
        _fsdp_worker(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "accelerate-worker":
        _accelerate_worker(sys.argv[2])
