"""A run is never lost or silently replaced; every setting takes effect or says why not.

The kill-and-resume test trains a tiny policy in a subprocess, kills it with SIGKILL after a checkpoint, resumes it
from the command line and checks that metrics.jsonl ends with every step exactly once.
"""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mrtpo_sdk import MRTPOError, load_task
from mrtpo_sdk.cli import main
from mrtpo_sdk.trainer import MRTPOConfig, MRTPOTrainer
from mrtpo_sdk.trainer.callbacks import MetricsJSONLCallback, read_metrics
from ..helpers import FIXTURES, config, error_line, tiny_policy
from mrtpo_sdk.trainer.runs import complete_checkpoints, prepare_output_dir, resolve_checkpoint, truncate_logs

LETTERS = str(FIXTURES / "letters_task.py")

# Letters with a held-out split, so resumed runs also carry evaluation rows.
LETTERS_WITH_DEV = '''
from mrtpo_sdk import Result, Task, verifier

WORDS = ["apple", "river", "stone", "cloud", "green", "table", "light", "music"]
DEV = ["plane", "bread", "chair"]

@verifier(kind="reference")
def has_a(example, completion):
    return Result(float("a" in completion), f"The word {example['word']} is spelled with an a: {'a' in example['word']}.")

@verifier(kind="reference")
def has_e(example, completion):
    return Result(float("e" in completion), f"The word {example['word']} is spelled with an e: {'e' in example['word']}.")

def examples(split="train"):
    words = WORDS if split == "train" else DEV
    return [{"id": f"{split}-{i}", "word": w} for i, w in enumerate(words)]

task = Task(
    name="letters_dev",
    examples=examples,
    eval_split="dev",
    prompt=lambda ex: [{"role": "user", "content": f"Spell the word {ex['word']}."}],
    verifiers=[has_a, has_e],
    reference=lambda ex: " ".join(ex["word"]),
)
'''

TINY_RUN = ["--policy_preset", "tiny", "--per_device_train_batch_size", "8", "--max_completion_length", "8"]


@pytest.fixture(autouse=True)
def isolated_cache(shared_cache):
    """The run's shared cache (tests/conftest.py): each embedded policy is built once per run."""


def write_rows(path: Path, steps):
    path.write_text("".join(json.dumps({"step": s, "rewards/a/mean": s / 10}) + "\n" for s in steps))


# ---------------------------------------------------------------- run folder helpers (unit)
def test_truncate_logs_keeps_rows_up_to_the_checkpoint(tmp_path):
    write_rows(tmp_path / "metrics.jsonl", [0, 1, 2, 3, 4, 5, 6])
    (tmp_path / "metrics.jsonl").open("a").write('{"step": 7, "rewa')  # a line cut by the kill
    write_rows(tmp_path / "samples.jsonl", [2, 4, 6])
    for step in (2, 4, 6):
        (tmp_path / f"credit-step{step}.html").write_text("page")
    dropped = truncate_logs(tmp_path, 4)
    assert [r["step"] for r in read_metrics(tmp_path / "metrics.jsonl")] == [0, 1, 2, 3, 4]
    assert [r["step"] for r in read_metrics(tmp_path / "samples.jsonl")] == [2, 4]
    assert sorted(p.name for p in tmp_path.glob("credit-step*.html")) == ["credit-step2.html", "credit-step4.html"]
    assert dropped == {"metrics.jsonl": 3, "samples.jsonl": 1, "credit pages": 1}


def test_resumed_callback_keeps_earlier_rows(tmp_path, capsys):
    from types import SimpleNamespace

    write_rows(tmp_path / "metrics.jsonl", [0, 1, 2, 3])
    MetricsJSONLCallback(tmp_path).on_train_begin(None, SimpleNamespace(is_world_process_zero=True, global_step=2), None)
    assert [r["step"] for r in read_metrics(tmp_path / "metrics.jsonl")] == [0, 1, 2]
    assert "note: resuming at step 2: dropped the killed run's later log rows (1 metrics.jsonl)" in capsys.readouterr().out


def test_identical_dev_curves_stay_distinguishable_in_the_plot(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from mrtpo_sdk.trainer.callbacks import dev_curve_styles, plot_rewards

    rows = [{"step": s, "rewards/r/mean": 0.5} for s in (1, 2, 3, 4)]
    same = [0.1, 0.3, 0.4]
    for s, v in zip((0, 2, 4), same):
        rows.append({"step": s, "eval/r": v, "eval/all_rewards": v, "eval/execution_accuracy": v, "eval/other": 1 - v})
    keys = ["eval/all_rewards", "eval/execution_accuracy", "eval/other", "eval/x"]
    rows[-1]["eval/x"] = 0.4
    styles = dev_curve_styles(rows, keys)
    assert [s["label"] for s in styles] == ["all_rewards", "execution_accuracy (same as all_rewards)", "other", "x"]
    assert len({s["marker"] for s in styles}) == 4 and len({str(s["linestyle"]) for s in styles}) == 4
    assert [s["markersize"] for s in styles] == [3.0, 5.5, 3.0, 3.0]  # the copy's hollow marker rings the first's
    assert [s["markerfacecolor"] for s in styles] == [None, "none", None, None]
    assert [s["zorder"] for s in styles] == [3, 2, 3, 3]  # the copy is drawn beneath the curve it repeats

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure plot_rewards draws
    plot_rewards(rows, ["r"], tmp_path / "rewards.png")
    assert (tmp_path / "rewards.png").read_bytes()[:4] == b"\x89PNG"
    dev = figures[0].axes[-1]
    assert [t.get_text() for t in dev.get_legend().get_texts()] == [
        "all_rewards", "execution_accuracy (same as all_rewards)", "other", "x"  # x: one equal point, not the same
    ]
    first, copy, _, _ = dev.get_lines()
    assert list(first.get_ydata()) == list(copy.get_ydata()) == same
    assert (first.get_marker(), copy.get_marker()) == ("s", "o") and first.get_linestyle() != copy.get_linestyle()
    assert copy.get_markerfacecolor() == "none" and copy.get_markersize() > first.get_markersize()
    assert copy.get_zorder() < first.get_zorder()


def test_resolve_checkpoint(tmp_path, capsys):
    assert resolve_checkpoint(None, tmp_path) is None
    assert resolve_checkpoint("false", tmp_path) is None
    for step in (2, 4):
        (tmp_path / f"checkpoint-{step}").mkdir()
        (tmp_path / f"checkpoint-{step}" / "trainer_state.json").write_text("{}")
    (tmp_path / "checkpoint-6").mkdir()  # killed while saving: no trainer_state.json
    assert resolve_checkpoint("true", tmp_path) == str(tmp_path / "checkpoint-4")
    assert "skipping" in capsys.readouterr().out
    assert resolve_checkpoint(True, tmp_path, log=lambda m: None) == str(tmp_path / "checkpoint-4")
    assert resolve_checkpoint(str(tmp_path), "elsewhere", log=lambda m: None) == str(tmp_path / "checkpoint-4")
    assert resolve_checkpoint(str(tmp_path / "checkpoint-2"), tmp_path) == str(tmp_path / "checkpoint-2")
    assert [p.name for p in complete_checkpoints(tmp_path)] == ["checkpoint-4", "checkpoint-2"]
    with pytest.raises(MRTPOError, match="checkpoint-6: incomplete checkpoint"):
        resolve_checkpoint(str(tmp_path / "checkpoint-6"), tmp_path)
    with pytest.raises(MRTPOError, match="no-such: no such folder"):
        resolve_checkpoint(str(tmp_path / "no-such"), tmp_path)
    with pytest.raises(MRTPOError, match="has no complete checkpoint-<step> folder"):
        resolve_checkpoint("true", tmp_path / "checkpoint-2")


def test_prepare_output_dir_refuses_a_previous_run(tmp_path):
    prepare_output_dir(tmp_path / "new", overwrite=False)  # absent: fine
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine")
    prepare_output_dir(tmp_path / "run", overwrite=False)  # no run files: fine
    write_rows(tmp_path / "run" / "metrics.jsonl", [1, 2])
    (tmp_path / "run" / "checkpoint-2").mkdir()
    with pytest.raises(MRTPOError, match=r"holds a previous run \(metrics.jsonl, checkpoint-2/\); pass "
                                         r"--overwrite_output_dir true"):
        prepare_output_dir(tmp_path / "run", overwrite=False)
    notes = []
    prepare_output_dir(tmp_path / "run", overwrite=True, log=notes.append)
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["notes.txt"]
    assert notes == [f"note: --overwrite_output_dir: removed the previous run in {tmp_path / 'run'} "
                     f"(metrics.jsonl, checkpoint-2/)"]


# ---------------------------------------------------------------- 1. kill -9 and resume from the CLI
def _train_cmd(task_file, out, *extra):
    return [sys.executable, "-m", "mrtpo_sdk", "train", str(task_file), "--output_dir", str(out), *TINY_RUN, *extra]


def test_kill_and_resume_loses_nothing(tmp_path):
    task_file = tmp_path / "letters_dev.py"
    task_file.write_text(LETTERS_WITH_DEV)
    out = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # MRTPO_SDK_CACHE_DIR: the shared cache
    steps = 40
    flags = ["--max_steps", str(steps), "--save_strategy", "steps", "--save_steps", "2", "--eval_steps", "10",
             "--log_samples_steps", "3"]
    log = tmp_path / "killed_run.log"  # a file, not a pipe nobody reads: a full pipe would block the run
    with log.open("w") as sink:
        proc = subprocess.Popen(_train_cmd(task_file, out, *flags), cwd=tmp_path, env=env, stdout=sink,
                                stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 1200  # a guard against a hung run only: a loaded 2-core machine takes minutes
    while not (out / "checkpoint-6" / "trainer_state.json").exists():
        assert proc.poll() is None, log.read_text()[-3000:]
        assert time.time() < deadline, "no checkpoint-6 within 1200 s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    killed_rows = read_metrics(out / "metrics.jsonl")
    last_checkpoint = int(complete_checkpoints(out)[0].name.split("-")[1])
    assert last_checkpoint < steps  # killed before the end
    # a second plain run into the folder is refused, and names the way on
    again = subprocess.run(_train_cmd(task_file, out, *flags), cwd=tmp_path, env=env, capture_output=True, text=True)
    assert again.returncode == 2
    assert f"error: {out} holds a previous run" in again.stderr and "--resume_from_checkpoint true" in again.stderr
    (out / f"checkpoint-{last_checkpoint + 2}").mkdir(exist_ok=True)  # as if the kill came while saving it
    resumed = subprocess.run(_train_cmd(task_file, out, *flags, "--resume_from_checkpoint", "true"), cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert f"skipping {out / f'checkpoint-{last_checkpoint + 2}'}: incomplete checkpoint" in resumed.stdout
    assert f"resuming from {out / f'checkpoint-{last_checkpoint}'}" in resumed.stdout
    rows = read_metrics(out / "metrics.jsonl")
    train_steps = [r["step"] for r in rows if "rewards/has_a/mean" in r]
    eval_steps = [r["step"] for r in rows if "eval/has_a" in r]
    assert train_steps == list(range(1, steps + 1))  # every step exactly once
    assert eval_steps == [0, 10, 20, 30, 40]  # the step-0 evaluation is not repeated on resume
    # the rows of the killed run up to its checkpoint are kept as they were (not re-trained)
    kept = [r for r in killed_rows if r["step"] <= last_checkpoint]
    assert rows[: len(kept)] == kept
    redone = max(r["step"] for r in killed_rows) - last_checkpoint
    assert redone <= 2 + 1  # at most the steps since the last checkpoint (save_steps 2; +1: the step being saved)
    samples = [json.loads(line)["step"] for line in (out / "samples.jsonl").read_text().splitlines()]
    assert sorted(set(samples)) == list(range(3, steps + 1, 3))
    assert all(samples.count(s) == 2 for s in set(samples))
    info = json.loads((out / "run.json").read_text())
    assert info["finished"] is True and info["resumed_from"] == str(out / f"checkpoint-{last_checkpoint}")
    assert f"trained {steps} steps" in resumed.stdout and "(resumed from" in resumed.stdout


# ---------------------------------------------------------------- 2. never replace a run silently (CLI)
def test_second_run_into_a_folder_is_refused_unless_overwrite(tmp_path, capsys):
    out = tmp_path / "run"
    base = ["train", LETTERS, "--output_dir", str(out), *TINY_RUN, "--max_steps", "2", "--log_samples_steps", "1"]
    assert main(base) == 0
    first = (out / "metrics.jsonl").read_text()
    capsys.readouterr()
    assert main(base) == 2
    line = error_line(capsys)
    assert line.startswith(f"error: {out} holds a previous run (run.json, metrics.jsonl, samples.jsonl")
    assert (out / "metrics.jsonl").read_text() == first and (out / "samples.jsonl").exists()
    assert main([*base, "--overwrite_output_dir", "true", "--max_steps", "1"]) == 0
    assert "note: --overwrite_output_dir: removed the previous run" in capsys.readouterr().out
    assert [r["step"] for r in read_metrics(out / "metrics.jsonl")] == [1]


def test_python_api_refuses_a_previous_run(tmp_path):
    task = load_task(LETTERS)
    model, tok = tiny_policy(task)
    args = config(tmp_path, max_steps=1)
    MRTPOTrainer(task, model, args, processing_class=tok).train()
    with pytest.raises(MRTPOError, match="holds a previous run"):
        MRTPOTrainer(task, model, args, processing_class=tok).train()
    args = config(tmp_path, max_steps=1, overwrite_output_dir=True)
    MRTPOTrainer(task, model, args, processing_class=tok).train()
    assert [r["step"] for r in read_metrics(Path(args.output_dir) / "metrics.jsonl")] == [1]


# ---------------------------------------------------------------- 3. no silent overrides
def test_reward_weights_replace_the_task_weights(tmp_path):
    task = load_task(LETTERS)  # verifier weights 1, 1, 0
    model, tok = tiny_policy(task)
    trainer = MRTPOTrainer(task, model, config(tmp_path, reward_weights=[2.0, 0.5, 0.0]), processing_class=tok)
    assert trainer.weights == [2.0, 0.5, 0.0]
    assert trainer.reward_weights.tolist() == [2.0, 0.5, 0.0]  # TRL's own `reward` statistic too
    default = MRTPOTrainer(task, model, config(tmp_path / "d"), processing_class=tok)
    assert default.weights == [1.0, 1.0, 0.0] and default.args.reward_weights is None  # args are not mutated
    with pytest.raises(MRTPOError, match="reward_weights has 2 value.* but task 'letters' has 3 verifiers"):
        MRTPOTrainer(task, model, config(tmp_path, reward_weights=[1.0, 1.0]), processing_class=tok)


def test_reward_weights_take_effect_in_the_advantages(tmp_path, monkeypatch):
    """A weight of 0 on every reward but has_e: the GDPO advantage is has_e's alone."""
    import mrtpo_sdk.trainer.trainer as trainer_module
    seen = []
    real = trainer_module.gdpo_advantages

    def spy(rewards, group, weights, **kw):
        seen.append(weights.tolist())
        return real(rewards, group, weights, **kw)

    monkeypatch.setattr(trainer_module, "gdpo_advantages", spy)
    task = load_task(LETTERS)
    model, tok = tiny_policy(task)
    MRTPOTrainer(task, model, config(tmp_path, "gdpo", max_steps=1, reward_weights=[0, 1, 0]),
                 processing_class=tok).train()
    assert seen == [[0.0, 1.0, 0.0]]


@pytest.mark.parametrize(
    "field, value, fragment",
    [
        ("multi_objective_aggregation", "sum_then_normalize",
         "multi_objective_aggregation='sum_then_normalize' contradicts algo='mrtpo'"),
        ("scale_rewards", "none", "scale_rewards='none' is not supported"),
        ("scale_rewards", "batch", "scale_rewards='batch' is not supported"),
        ("scale_rewards", False, "scale_rewards=False is not supported"),
        ("reward_weights", [-1.0, 1.0], "reward_weights must be >= 0"),
        ("reward_weights", [0.0, 0.0], "at least one > 0"),
    ],
)
def test_trl_fields_that_cannot_take_effect_are_rejected(tmp_path, field, value, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        MRTPOConfig(output_dir=str(tmp_path), report_to="none", bf16=False, **{field: value})


def test_trl_fields_the_trainer_interprets(tmp_path):
    """Every GRPOConfig field MRTPOConfig changes: its effective value, per algo."""
    for algo, agg in (("mrtpo", "normalize_then_sum"), ("gdpo", "normalize_then_sum"), ("grpo", "sum_then_normalize")):
        cfg = MRTPOConfig(output_dir=str(tmp_path), report_to="none", bf16=False, algo=algo)
        assert cfg.multi_objective_aggregation == agg
        assert MRTPOConfig(output_dir=str(tmp_path), report_to="none", bf16=False, algo=algo,
                           multi_objective_aggregation=agg).multi_objective_aggregation == agg
        assert cfg.scale_rewards == "group" and cfg.reward_weights is None and cfg.num_generations_eval == 1
    assert MRTPOConfig(output_dir=str(tmp_path), report_to="none", bf16=False, scale_rewards=True).scale_rewards == "group"
    assert MRTPOConfig(output_dir=str(tmp_path), report_to="none", bf16=False, num_generations_eval=3).num_generations_eval == 3
    with pytest.raises(ValueError, match="contradicts algo='grpo'"):
        MRTPOConfig(output_dir=str(tmp_path), report_to="none", bf16=False, algo="grpo",
                    multi_objective_aggregation="normalize_then_sum")


def test_the_aggregation_each_algorithm_implies_is_the_configs():
    from mrtpo_sdk.trainer.algos import ALGORITHMS, aggregation_of

    assert {a: aggregation_of(a) for a in ALGORITHMS} == {
        "mrtpo": "normalize_then_sum", "gdpo": "normalize_then_sum", "grpo": "sum_then_normalize"}
    for bad in ("ppo", "GRPO", None):
        with pytest.raises(ValueError, match=r"algo must be one of \('mrtpo', 'gdpo', 'grpo'\)"):
            aggregation_of(bad)


def test_mrtpo_only_settings_given_to_another_algo_are_named_as_taking_no_effect(tmp_path, capsys, monkeypatch):
    from mrtpo_sdk.trainer.algos import MRTPO_ONLY_SETTINGS, unused_settings

    assert unused_settings("mrtpo") == () and unused_settings("gdpo") == unused_settings("grpo") == MRTPO_ONLY_SETTINGS
    assert set(MRTPO_ONLY_SETTINGS) <= {f.name for f in dataclasses.fields(MRTPOConfig)}
    with pytest.raises(ValueError, match="algo must be one of"):
        unused_settings("ppo")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text("replay_max_tokens: 64\n")
    flags = [*TINY_RUN, "--max_steps", "1", "--mrtpo-beta", "1", "--beta_warmup_steps", "0", "--config", "run.yaml"]
    assert main(["train", LETTERS, "--algo", "grpo", "--output_dir", "g", *flags]) == 0
    assert ("note: algo 'grpo' neither replays nor weights tokens, so mrtpo_beta=1.0, beta_warmup_steps=0, "
            "replay_max_tokens=64 (MRTPO's own settings) take no effect; they apply with algo 'mrtpo'"
            ) in capsys.readouterr().out
    assert main(["train", LETTERS, "--algo", "mrtpo", "--output_dir", "m", *flags]) == 0
    assert "no effect" not in capsys.readouterr().out
    # at their defaults nothing is set: nothing to say
    assert main(["train", LETTERS, "--algo", "gdpo", "--output_dir", "d", *TINY_RUN, "--max_steps", "1",
                 "--mrtpo_beta", "0.5"]) == 0
    assert "no effect" not in capsys.readouterr().out
    # the Python API says it as well
    task = load_task(LETTERS)
    model, tok = tiny_policy(task)
    args = config(tmp_path / "api", "gdpo", max_steps=1, beta_warmup_steps=10, js_chunk_size=8)
    MRTPOTrainer(task, model, args, processing_class=tok)
    assert ("note: algo 'gdpo' neither replays nor weights tokens, so js_chunk_size=8 (MRTPO's own setting) takes "
            "no effect; it applies with algo 'mrtpo'") in capsys.readouterr().out


def test_cli_reward_weights_flag(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))  # its own, empty: nothing may be built
    assert main(["train", LETTERS, "--output_dir", str(out), *TINY_RUN, "--max_steps", "1",
                 "--reward_weights", "1", "2"]) == 2
    assert "reward_weights has 2 value(s) but task 'letters' has 3 verifiers" in error_line(capsys)
    assert not out.exists()  # refused before anything was built or written
    assert not (tmp_path / "cache").exists()  # no policy was built before the refusal
    monkeypatch.undo()
    assert main(["train", LETTERS, "--output_dir", str(out), *TINY_RUN, "--scale_rewards", "none"]) == 2
    assert "scale_rewards='none' is not supported" in error_line(capsys)


def test_cli_data_error_is_one_line_and_the_eval_note_only_when_training_data_loads(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "letters_dev.py").write_text(LETTERS_WITH_DEV)
    # the training data cannot load (the task takes no --data): the error line only, no eval note before it
    assert main(["train", "letters_dev.py", "--data", str(tmp_path / "nonexist"), *TINY_RUN, "--max_steps", "1",
                 "--output_dir", "a"]) == 2
    captured = capsys.readouterr()
    assert "note: no held-out evaluation" not in captured.out + captured.err
    assert [line for line in captured.err.splitlines() if line.startswith("error: ")] == [
        "error: task 'letters_dev' does not take --data (its examples function has no 'data')"]
    # only the held-out data cannot load: the run trains and says why there is no evaluation
    (tmp_path / "no_dev.py").write_text(LETTERS_WITH_DEV.replace(
        '    words = WORDS if split == "train" else DEV',
        '    from mrtpo_sdk import MRTPOError\n    if split != "train":\n        raise MRTPOError("no dev data")\n'
        '    words = WORDS'))
    assert main(["train", "no_dev.py", *TINY_RUN, "--max_steps", "1", "--output_dir", "b"]) == 0
    assert "note: no held-out evaluation (" in capsys.readouterr().out


def test_yaml_and_flags_agree_on_algo_model_and_output(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text("algo: gdpo\nmax_steps: 1\nper_device_train_batch_size: 8\n"
                                       "max_completion_length: 8\npolicy_preset: tiny\n")
    assert main(["train", LETTERS, "--config", "run.yaml"]) == 0
    info = json.loads((tmp_path / "runs" / "letters-gdpo" / "run.json").read_text())
    assert info["algo"] == "gdpo" and not (tmp_path / "runs" / "letters-mrtpo").exists()
    # `model:` in the YAML switches off the embedded-policy presets exactly as --model does
    (tmp_path / "model.yaml").write_text(f"model: {tmp_path / 'no-such-model'}\n")
    capsys.readouterr()
    assert main(["train", LETTERS, "--config", "model.yaml", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert main(["train", LETTERS, "--model", str(tmp_path / "no-such-model"), "--help"]) == 0
    assert capsys.readouterr().out == help_text  # same presets (learning rate 1e-06, TRL's) either way
    assert "(default: 0.0003)" not in help_text.split("--learning_rate")[1][:400]


def test_yaml_eval_keys_are_seen_by_the_presets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "letters_dev.py").write_text(LETTERS_WITH_DEV)
    (tmp_path / "e.yaml").write_text("eval_strategy: 'no'\nmax_steps: 2\npolicy_preset: tiny\n"
                                     "per_device_train_batch_size: 8\nmax_completion_length: 8\n")
    assert main(["train", "letters_dev.py", "--config", "e.yaml", "--output_dir", "a"]) == 0
    assert not [r for r in read_metrics(tmp_path / "a" / "metrics.jsonl") if "eval/has_a" in r]
    (tmp_path / "s.yaml").write_text("eval_steps: 1\nmax_steps: 2\npolicy_preset: tiny\n"
                                     "per_device_train_batch_size: 8\nmax_completion_length: 8\neval_on_start: false\n")
    assert main(["train", "letters_dev.py", "--config", "s.yaml", "--output_dir", "b"]) == 0
    assert [r["step"] for r in read_metrics(tmp_path / "b" / "metrics.jsonl") if "eval/has_a" in r] == [1, 2]


def test_the_task_max_completion_length_is_the_default_and_the_flag_wins(tmp_path, monkeypatch):
    """Task(max_completion_length=N) replaces the preset's 64 tokens; --max_completion_length (or YAML) still wins."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "letters_len.py").write_text(LETTERS_WITH_DEV.replace('    eval_split="dev",\n',
                                                                      '    eval_split="dev",\n    max_completion_length=5,\n'))
    flags = ["--policy_preset", "tiny", "--per_device_train_batch_size", "8", "--max_steps", "1",
             "--eval_strategy", "no"]
    assert main(["train", "letters_len.py", *flags, "--output_dir", "task"]) == 0
    info = json.loads((tmp_path / "task" / "run.json").read_text())
    assert info["args"]["max_completion_length"] == 5
    assert read_metrics(tmp_path / "task" / "metrics.jsonl")[0]["completions/max_length"] <= 5
    assert main(["train", "letters_len.py", *flags, "--output_dir", "flag", "--max_completion_length", "7"]) == 0
    assert json.loads((tmp_path / "flag" / "run.json").read_text())["args"]["max_completion_length"] == 7
    (tmp_path / "l.yaml").write_text("max_completion_length: 6\n")
    assert main(["train", "letters_len.py", *flags, "--output_dir", "yaml", "--config", "l.yaml"]) == 0
    assert json.loads((tmp_path / "yaml" / "run.json").read_text())["args"]["max_completion_length"] == 6
    with pytest.raises(MRTPOError, match="max_completion_length must be a positive number"):
        load_task(str(tmp_path / "letters_len.py")).__class__(
            name="x", examples=[{"id": "a"}], prompt=lambda ex: "p", verifiers=load_task("letters_len.py").verifiers,
            max_completion_length=0)


# ---------------------------------------------------------------- 4. runs that did not train fail
def test_too_few_examples(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))  # its own, empty: nothing may be built
    p = tmp_path / "small.py"
    p.write_text(textwrap.dedent("""
        from mrtpo_sdk import Result, Task, verifier
        @verifier
        def v(example, completion):
            return Result(float("a" in completion), "The letter a.")
        task = Task(name="small", examples=[{"id": i} for i in range(3)], prompt=lambda ex: "Say a.", verifiers=[v])
    """))
    out = tmp_path / "run"
    assert main(["train", str(p), "--output_dir", str(out), "--policy_preset", "tiny", "--max_steps", "2"]) == 2
    assert error_line(capsys) == (
        "error: task 'small' has 3 training example(s) but one step samples 8 distinct prompts "
        "(per_device_train_batch_size 32 x processes x steps_per_generation 1 / num_generations 4); add examples, "
        "or lower per_device_train_batch_size / raise num_generations so that at most 3 prompts are needed"
    )
    assert not out.exists() and not (tmp_path / "cache").exists()  # before any model was built
    # the same check from Python
    with pytest.raises(MRTPOError, match="has 3 training example"):
        MRTPOTrainer(load_task(p), "unused-model-id", MRTPOConfig(output_dir=str(out), report_to="none", bf16=False,
                                                                  per_device_train_batch_size=32, num_generations=4))


def test_zero_steps_is_an_error(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--output_dir", str(out), *TINY_RUN, "--max_steps", "-1",
                 "--num_train_epochs", "0"]) == 2
    line = error_line(capsys)
    assert "no optimizer step was taken" in line and "nothing was trained" in line


def test_a_verifier_raising_in_the_dev_evaluation_writes_its_details(tmp_path, capsys):
    task_file = tmp_path / "dev_fails.py"
    task_file.write_text(LETTERS_WITH_DEV.replace(
        'return Result(float("e" in completion)',
        'if example["id"].startswith("dev"):\n        raise KeyError("only on dev")\n    return Result(float("e" in completion)'))
    out = tmp_path / "run"
    assert main(["train", str(task_file), "--output_dir", str(out), *TINY_RUN, "--max_steps", "1"]) == 2
    line = error_line(capsys)
    assert "verifier 'has_e'" in line and "KeyError" in line and f"(details: {out / 'errors' / 'eval-0-has_e.txt'})" in line
    details = (out / "errors" / "eval-0-has_e.txt").read_text()
    assert "example:" in details and "dev-0" in details and "Traceback" in details


def test_a_verifier_that_changes_its_example_during_training_stops_it(tmp_path, capsys):
    """Only some sampled completions trigger the mutation: lint/check probes cannot see it, training must."""
    task_file = tmp_path / "mutates.py"
    task_file.write_text(LETTERS_WITH_DEV.replace(
        'return Result(float("e" in completion)',
        'if "e" not in completion and "a" in completion:\n'
        '        example.setdefault("seen", []).append(completion)\n'
        '    return Result(float("e" in completion)'))
    out = tmp_path / "run"
    code = main(["train", str(task_file), "--output_dir", str(out), "--policy_preset", "tiny",
                 "--per_device_train_batch_size", "8", "--max_completion_length", "24", "--max_steps", "8",
                 "--eval_strategy", "no", "--temperature", "1.5"])
    line = error_line(capsys)
    assert code == 2
    assert "verifier 'has_e'" in line and "changed its example (example['seen'] was missing, now [" in line
    assert "a verifier must only read the example" in line


@pytest.mark.parametrize(
    "flags, fragment",
    [
        (["--reward_weights", "nan", "1"], "reward_weights must be finite numbers"),
        (["--per_device_train_batch_size", "0"], "per_device_train_batch_size must be >= 1, got 0"),
        (["--learning_rate", "-1"], "learning_rate must be a finite number >= 0, got -1.0"),
    ],
)
def test_bad_numbers_are_one_line_before_anything_is_written(tmp_path, capsys, flags, fragment):
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--output_dir", str(out), *TINY_RUN, *flags]) == 2
    assert fragment in error_line(capsys)
    assert not out.exists()


def test_a_scalar_reward_weights_in_yaml_is_one_line(tmp_path, capsys):
    (tmp_path / "w.yaml").write_text("reward_weights: 1\n")
    assert main(["train", LETTERS, "--config", str(tmp_path / "w.yaml"), "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == (f"error: --config {tmp_path / 'w.yaml'}: reward_weights: expected a list of "
                                  "numbers, got 1")


def test_a_run_that_stopped_before_its_first_step_does_not_block_the_folder(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"task": "letters", "global_step": 0, "finished": False}))
    (out / "metrics.jsonl").write_text("")
    (out / "errors").mkdir()
    (out / "errors" / "1-has_a.txt").write_text("details of the failure")
    assert main(["train", LETTERS, "--output_dir", str(out), *TINY_RUN, "--max_steps", "1"]) == 0
    assert "held a run that stopped before its first step; starting over" in capsys.readouterr().out
    assert (out / "errors" / "1-has_a.txt").read_text() == "details of the failure"  # kept


def test_resume_refuses_another_algo_or_task(tmp_path, capsys):
    out = tmp_path / "run"
    base = ["train", LETTERS, "--output_dir", str(out), *TINY_RUN, "--max_steps", "2", "--save_strategy", "steps",
            "--save_steps", "2"]
    assert main(base) == 0
    capsys.readouterr()
    assert main([*base, "--max_steps", "3", "--resume_from_checkpoint", "true", "--algo", "gdpo"]) == 2
    assert "that run trained algo 'mrtpo', this command algo 'gdpo'; resume with the same --algo" in error_line(capsys)
    other = tmp_path / "letters_dev.py"
    other.write_text(LETTERS_WITH_DEV)
    assert main(["train", str(other), *base[2:], "--resume_from_checkpoint", "true"]) == 2
    assert "that run trained task 'letters', this command task 'letters_dev'" in error_line(capsys)
    assert json.loads((out / "run.json").read_text())["task"] == "letters"  # untouched
