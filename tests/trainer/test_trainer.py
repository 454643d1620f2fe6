"""The trainer end to end on tiny models: all three algorithms, metrics, samples, plots, errors, 2 processes."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from mrtpo_sdk import MRTPOError, Result, Task, VerifierError, load_task, verifier
from mrtpo_sdk.trainer import MRTPOConfig, MRTPOTrainer
from mrtpo_sdk.trainer.callbacks import read_metrics

from ..helpers import FIXTURES, config, tiny_policy


@pytest.mark.parametrize("algo", ["mrtpo", "gdpo", "grpo"])
def test_train_writes_metrics_samples_and_plot(tmp_path, algo):
    task = load_task(FIXTURES / "letters_task.py")
    model, tok = tiny_policy(task)
    before = [p.detach().clone() for p in model.parameters()]
    args = config(tmp_path, algo)
    trainer = MRTPOTrainer(task, model, args, processing_class=tok)
    trainer.train()
    out = Path(args.output_dir)
    rows = read_metrics(out / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2, 3]
    for r in rows:
        for name in ("has_a", "has_e", "length"):
            assert 0.0 <= r[f"rewards/{name}/mean"] <= 1.0
        for phase in ("generation", "scoring", "replay", "update"):
            assert r[f"time/{phase}"] >= 0.0
    assert rows[0]["time/generation"] > 0 and rows[0]["time/update"] > 0
    if algo == "mrtpo":
        fractions = [r["mrtpo/replayed_fraction"] for r in rows]
        assert all(0.0 <= f <= 2 / 3 for f in fractions)  # the weight-0 reward is never replayed
        assert max(fractions) > 0  # a random policy gives varied letter rewards
        assert [round(r["mrtpo/beta_n"], 6) for r in rows] == [0.0, 0.25, 0.5]  # smoothstep over 2 steps
        assert all(0.0 < r["mrtpo/cap_factor"] <= 1.0 for r in rows)
    else:
        assert "mrtpo/replayed_fraction" not in rows[0]
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 3 * 2
    assert set(samples[0]["rewards"]) == {"has_a", "has_e", "length"}
    assert samples[0]["blocks"]["has_a"].startswith("The word ")
    png = (out / "rewards.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))  # the policy was updated


def test_mrtpo_passes_token_level_advantages(tmp_path, monkeypatch):
    task = load_task(FIXTURES / "letters_task.py")
    model, tok = tiny_policy(task)
    trainer = MRTPOTrainer(task, model, config(tmp_path, max_steps=1, beta_warmup_steps=0), processing_class=tok)
    seen = {}
    original = MRTPOTrainer._generate_and_score_completions

    def spy(self, inputs):
        out = original(self, inputs)
        seen.update(out)
        return out

    monkeypatch.setattr(MRTPOTrainer, "_generate_and_score_completions", spy)
    trainer.train()
    adv, mask = seen["advantages"], seen["completion_mask"]
    assert adv.shape == mask.shape  # (B, T)
    assert torch.all(adv[mask == 0] == 0)
    assert torch.isfinite(adv).all()
    valid = adv[mask.bool()]
    assert abs(valid.std().item() - 1.0) < 0.05  # normalized by the token std of the batch


def test_raising_verifier_stops_training_with_its_name(tmp_path):
    @verifier
    def fragile(example, completion):
        raise ZeroDivisionError("division by zero")

    base = load_task(FIXTURES / "letters_task.py")
    task = Task(name="fragile-task", examples=base.examples, prompt=base.prompt, verifiers=[fragile])
    model, tok = tiny_policy(base)
    trainer = MRTPOTrainer(task, model, config(tmp_path, max_steps=1), processing_class=tok)
    with pytest.raises(VerifierError) as info:
        trainer.train()
    msg = str(info.value)
    assert "'fragile-task'" in msg and "'fragile'" in msg and "example 'letters-" in msg and "ZeroDivisionError" in msg


def test_all_abstaining_rows_are_reported_not_scored(tmp_path, caplog):
    @verifier
    def never(example, completion):
        return None

    @verifier
    def sometimes(example, completion):
        return None if example["id"].endswith(("0", "1", "2", "3")) else Result(float("e" in completion), "e")

    base = load_task(FIXTURES / "letters_task.py")
    task = Task(name="abstain", examples=base.examples, prompt=base.prompt, verifiers=[never, sometimes])
    model, tok = tiny_policy(base)
    trainer = MRTPOTrainer(task, model, config(tmp_path, max_steps=2), processing_class=tok)
    with caplog.at_level("WARNING"):
        trainer.train()
    rows = read_metrics(Path(trainer.args.output_dir) / "metrics.jsonl")
    assert sum(r["unscorable_completions"] for r in rows) > 0
    assert "every verifier abstained" in caplog.text


def test_config_validation():
    with pytest.raises(ValueError, match="algo must be one of"):
        MRTPOConfig(output_dir="/tmp/x", algo="ppo", report_to="none", bf16=False)
    with pytest.raises(ValueError, match="mrtpo_beta"):
        MRTPOConfig(output_dir="/tmp/x", mrtpo_beta=1.5, report_to="none", bf16=False)
    assert MRTPOConfig(output_dir="/tmp/x", algo="grpo", report_to="none", bf16=False).multi_objective_aggregation == (
        "sum_then_normalize"
    )
    with pytest.raises(MRTPOError):
        MRTPOTrainer(load_task(FIXTURES / "letters_task.py"), "unused", args=object())


@pytest.mark.slow
def test_two_process_accelerate_launch(tmp_path):
    """2 CPU processes over gloo; group statistics global, replay per rank, token std reduced across ranks."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    with socket.socket() as s:  # a free port, so concurrent runs do not collide
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    cmd = [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
        "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", port,
        str(FIXTURES / "distributed_train.py"), str(tmp_path / "run"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads((tmp_path / "run" / "world.json").read_text()) == {"num_processes": 2}
    rows = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2]
    assert all("mrtpo/replayed_fraction" in r for r in rows)
    info = json.loads((tmp_path / "run" / "run.json").read_text())  # written once, by the main process
    assert (info["status"], info["global_step"]) == ("finished", 2)
    assert (tmp_path / "run" / "policy" / "config.json").is_file()  # saved with every process taking part


def test_a_new_run_clears_the_previous_runs_logs(tmp_path):
    from types import SimpleNamespace

    from mrtpo_sdk.trainer.callbacks import MetricsJSONLCallback

    for name in ("metrics.jsonl", "samples.jsonl", "credit-step5.html", "credit-step10.html", "keep.txt"):
        (tmp_path / name).write_text("old run")
    MetricsJSONLCallback(tmp_path).on_train_begin(None, SimpleNamespace(is_world_process_zero=True, global_step=0), None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "metrics.jsonl"]
    assert (tmp_path / "metrics.jsonl").read_text() == ""
