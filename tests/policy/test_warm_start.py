"""``train --model M --warm_start_steps N``: a supervised warm start on the task's references, cached, recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from mrtpo_sdk import load_task
from mrtpo_sdk.cli import main
from mrtpo_sdk.errors import MRTPOError
from mrtpo_sdk.policy.warm_start import WARM_START_FILE, model_fingerprint, warm_started_model

LETTERS = str(Path(__file__).parents[1] / "fixtures" / "letters_task.py")
SMALL = ["--per_device_train_batch_size", "8", "--num_generations", "4", "--max_completion_length", "8",
         "--max_steps", "1", "--report_to", "none"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_warm_start_lowers_the_reference_loss_and_is_cached(cache, local_model, monkeypatch):
    from mrtpo_sdk.policy import completion_nll
    from mrtpo_sdk.policy.for_task import policy_corpus
    from mrtpo_sdk.policy.pretrained import load_pretrained

    task = load_task(LETTERS)
    examples = task.load_examples("train")
    lines = []
    folder = warm_started_model(task, examples, local_model, steps=6, learning_rate=1e-2, seed=1, log=lines.append)
    # a progress line at every tenth of the steps (each of 6): step, the latest logged loss, then an ETA
    progress = [line for line in lines if line.startswith("[warm start] step ")]
    assert [line.split(",")[0] for line in progress] == [f"[warm start] step {s}/6" for s in range(1, 6)]
    assert "ETA ~" not in progress[0] and all("ETA ~0:" in line for line in progress[1:])
    assert all(", loss " in line for line in progress)
    info = json.loads((folder / WARM_START_FILE).read_text())
    assert info["steps"] == 6 and info["pairs"] == len(examples) and info["base"] == str(local_model)
    assert isinstance(info["seconds"], float) and info["seconds"] > 0  # the warm start's wall-clock cost
    assert progress[0].split(", ")[1] == f"loss {info['first_loss']:.3f}"  # step 1's line shows step 1's loss
    _, pairs = policy_corpus(task, examples)
    base, tok, _ = load_pretrained(str(local_model))
    warm, _, _ = load_pretrained(str(folder))
    assert completion_nll(warm, tok, pairs) < completion_nll(base, tok, pairs) - 0.1  # it learned the references
    # a second call loads the cached folder without training
    monkeypatch.setattr("mrtpo_sdk.policy.default.warm_start", lambda *a, **k: pytest.fail("trained again"))
    again = warm_started_model(task, examples, local_model, steps=6, learning_rate=1e-2, seed=1, log=lines.append)
    assert again == folder and "from the cache" in lines[-1]
    # another seed is another folder (the key covers the base weights, pairs, steps, learning rate and seed)
    monkeypatch.undo()
    assert warm_started_model(task, examples, local_model, steps=6, learning_rate=1e-2, seed=2, log=lines.append) \
        != folder
    assert model_fingerprint(folder) != model_fingerprint(local_model)


def test_train_with_a_warm_start_records_it_and_starts_from_it(cache, local_model, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--warm_start_steps", "3",
                 "--warm_start_learning_rate", "1e-3", "--output_dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "[warm start] 3 supervised steps on" in printed and "warm-started with 3 supervised steps" in printed
    info = json.loads((out / "run.json").read_text())
    warm = info["warm_start"]
    assert warm["steps"] == 3 and warm["learning_rate"] == 1e-3 and Path(warm["folder"]).is_dir()
    assert info["initial_policy"] == warm["folder"]  # compare's "same initial policy" key
    base = load_file(local_model / "model.safetensors")
    started = load_file(Path(warm["folder"]) / "model.safetensors")
    assert any(not torch.equal(base[k], started[k]) for k in base)


def test_warm_start_without_a_model_or_with_bad_values_is_one_line(cache, tmp_path, local_model, capsys):
    assert main(["train", LETTERS, *SMALL, "--warm_start_steps", "3", "--output_dir", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "error: --warm_start_steps warm-starts a --model; the embedded policy has its own warm start" in err
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--warm_start_steps", "-1",
                 "--output_dir", str(tmp_path / "b")]) == 2
    assert "error: --warm_start_steps must be >= 0" in capsys.readouterr().err
    with pytest.raises(MRTPOError, match="--warm_start_learning_rate must be > 0"):
        warm_started_model(load_task(LETTERS), [], local_model, steps=1, learning_rate=0.0)


@pytest.mark.parametrize("steps, expected", [
    (6, [1, 2, 3, 4, 5]),
    (25, [3, 5, 8, 10, 13, 15, 18, 20, 23]),
    (1000, [100, 200, 300, 400, 500, 600, 700, 800, 900]),
])
def test_warm_start_progress_prints_once_per_tenth_of_the_steps(steps, expected):
    from types import SimpleNamespace

    from mrtpo_sdk.policy.default import _progress_callback

    lines: list[str] = []
    callback = _progress_callback(steps, lines.append)
    every = max(1, steps // 20)  # the warm start's logging_steps
    for step in range(1, steps + 1):  # transformers' order: on_step_end, then on_log of that step's loss
        state = SimpleNamespace(global_step=step)
        callback.on_step_end(None, state, None)
        if step == 1 or step % every == 0:
            callback.on_log(None, state, None, logs={"loss": 1.0 / step, "grad_norm": 0.5})
    callback.on_log(None, SimpleNamespace(global_step=steps), None, logs={"train_runtime": 9.0, "train_loss": 0.3})
    assert [line.split(",")[0] for line in lines] == [f"step {s}/{steps}" for s in expected]
    assert [line.split(", ")[1] for line in lines] == [f"loss {1.0 / s:.3f}" for s in expected]  # that step's loss
