"""TRL's ModelConfig flags on `mrtpo-sdk train`: LoRA (--use_peft, --lora_*), --dtype, --model_name_or_path."""

import json
from pathlib import Path

import pytest
from safetensors.torch import load_file

from mrtpo_sdk import load_task
from mrtpo_sdk.cli import main

from ..helpers import LETTERS, config, error_line, tiny_policy

SMALL = ["--per_device_train_batch_size", "8", "--max_completion_length", "8", "--max_steps", "2",
         "--report_to", "none", "--learning_rate", "0.05"]


@pytest.fixture(autouse=True)
def isolated_cache(shared_cache):
    """The run's shared cache (tests/conftest.py): each embedded policy is built once per run."""


def test_use_peft_trains_lora_adapters(tmp_path, local_model, capsys):
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--use_peft", "--lora_r", "4",
                 "--lora_target_modules", "q_proj", "v_proj", "--output_dir", str(out)]) == 0
    assert "adapter: " in capsys.readouterr().out
    config = json.loads((out / "adapter" / "adapter_config.json").read_text())
    assert config["r"] == 4 and sorted(config["target_modules"]) == ["q_proj", "v_proj"]
    adapter = load_file(out / "adapter" / "adapter_model.safetensors")
    lora_b = [v for k, v in adapter.items() if "lora_B" in k]
    assert lora_b and any(float(v.abs().max()) > 0 for v in lora_b)  # lora_B starts at 0: it was trained
    assert not any("lora" in k for k in load_file(out / "policy" / "model.safetensors"))  # policy/ is merged
    base, merged = load_file(local_model / "model.safetensors"), load_file(out / "policy" / "model.safetensors")
    changed = {k for k in base if not (base[k] == merged[k]).all()}
    assert changed and all(("q_proj" in k or "v_proj" in k) for k in changed)  # only the adapted projections


def test_save_merged_policy_false_keeps_the_adapter_alone_and_model_loads_it(tmp_path, local_model, capsys,
                                                                               monkeypatch):
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    lora = ["--use_peft", "--lora_r", "4", "--lora_target_modules", "q_proj", "v_proj"]
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, *lora, "--save_merged_policy", "false",
                 "--output_dir", str(out)]) == 0
    assert not (out / "policy").exists()
    assert (out / "adapter" / "adapter_model.safetensors").is_file()
    assert json.loads((out / "run.json").read_text())["policy_dir"] == str(out / "adapter")
    capsys.readouterr()
    # eval --model RUN loads the adapter on its base model: the same greedy completions as the merged model
    from peft import AutoPeftModelForCausalLM

    from mrtpo_sdk.policy.pretrained import load_pretrained

    loaded, _, resolved = load_pretrained(str(out))
    assert resolved == str(out / "adapter")
    assert not any("lora" in name for name, _ in loaded.named_parameters())  # merged
    reference = AutoPeftModelForCausalLM.from_pretrained(str(out / "adapter")).merge_and_unload()
    base = load_file(local_model / "model.safetensors")
    state = loaded.state_dict()
    changed = [k for k in base if k in state and not (base[k] == state[k]).all()]
    assert changed and all(("q_proj" in k or "v_proj" in k) for k in changed)
    assert all((reference.state_dict()[k] == state[k]).all() for k in changed)
    assert main(["eval", LETTERS, "--model", str(out), "--split", "train", "--max_examples", "2"]) == 0
    # train --model RUN continues from the adapter merged into its base, made once in the cache
    out2 = tmp_path / "run2"
    assert main(["train", LETTERS, "--model", str(out), *SMALL, "--max_steps", "1", "--output_dir", str(out2)]) == 0
    info = json.loads((out2 / "run.json").read_text())
    assert "merged into its base model" in info["policy"]
    merged = list((tmp_path / "cache" / "models").glob("merged-*"))
    assert len(merged) == 1 and (merged[0] / "model.safetensors").is_file()
    merged_state = load_file(merged[0] / "model.safetensors")
    assert all((merged_state[k] == state[k]).all() for k in changed)


def test_an_adapter_whose_base_folder_is_gone_loads_on_the_runs_own_model(tmp_path, local_model, monkeypatch):
    import shutil

    from mrtpo_sdk.errors import MRTPOError
    from mrtpo_sdk.policy.pretrained import adapter_base, load_pretrained

    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))
    base = tmp_path / "cached-base"  # stands for a dequantized GGUF in a cache that is later cleared
    shutil.copytree(local_model, base)
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model", str(base), *SMALL, "--use_peft", "--lora_r", "4",
                 "--lora_target_modules", "q_proj", "v_proj", "--save_merged_policy", "false",
                 "--output_dir", str(out)]) == 0
    before = load_pretrained(str(out))[0].state_dict()
    shutil.rmtree(base)
    info = json.loads((out / "run.json").read_text())
    with pytest.raises(MRTPOError, match="the base model of its LoRA adapter"):
        adapter_base(out / "adapter")  # run.json's initial_policy is that same folder: nothing to fall back on
    info["initial_policy"] = str(local_model)  # as `smollm2` would be: a name that makes its folder again
    (out / "run.json").write_text(json.dumps(info))
    assert adapter_base(out / "adapter") == str(local_model)
    after = load_pretrained(str(out))[0].state_dict()
    assert all((before[k] == after[k]).all() for k in before)


def test_save_merged_policy_false_without_lora_is_an_error(tmp_path, local_model, capsys):
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--save_merged_policy", "false",
                 "--output_dir", str(tmp_path / "run")]) == 2
    assert "--save_merged_policy false keeps a LoRA run's adapter" in error_line(capsys)


def test_model_name_or_path_is_an_alias_of_model(tmp_path, local_model):
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model_name_or_path", str(local_model), *SMALL, "--output_dir", str(out)]) == 0
    assert json.loads((out / "run.json").read_text())["policy"] == str(local_model)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--dtype", "bfloat16"], "--dtype loads a model given by --model; the embedded policy is built here"),
        (["--lora_r", "4"], "--lora_r configures LoRA adapters; add --use_peft true to train them"),
        (["--model", "a", "--model_name_or_path", "b"], "--model a and --model_name_or_path b disagree"),
    ],
)
def test_model_flags_that_cannot_take_effect_are_one_line(tmp_path, capsys, args, fragment):
    assert main(["train", LETTERS, *args, *SMALL, "--output_dir", str(tmp_path / "o")]) == 2
    assert fragment in error_line(capsys)


def test_dtype_reaches_the_model(tmp_path, local_model, monkeypatch):
    import torch

    import mrtpo_sdk.trainer.trainer as trainer_module

    seen = {}
    real = trainer_module.GRPOTrainer.__init__

    def spy(self, *a, **kw):
        seen["model_init_kwargs"] = dict(kw["args"].model_init_kwargs)  # as the model is created
        return real(self, *a, **kw)

    monkeypatch.setattr(trainer_module.GRPOTrainer, "__init__", spy)
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--dtype", "float32",
                 "--output_dir", str(tmp_path / "o")]) == 0
    assert seen["model_init_kwargs"] == {"dtype": torch.float32}


def test_with_model_no_hf_dict_is_printed(tmp_path, local_model, capsys):
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--output_dir", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "'loss':" not in out and "'grad_norm':" not in out  # HF's printer / tqdm log dicts
    assert "step 2/2 has_a=" in out  # our own progress line


@pytest.mark.parametrize("algo, name, paper", [("mrtpo", "MRTPO", "2610.21439"), ("gdpo", "GDPO", "2601.05242"),
                                               ("grpo", "GRPO", "2402.03300")])
def test_model_card_names_the_algorithm_and_trackers_never_see_none(tmp_path, algo, name, paper):
    from transformers import TrainerCallback

    from mrtpo_sdk.trainer import MRTPOTrainer

    seen = []

    class Tracker(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            seen.append(dict(logs))

    task = load_task(LETTERS)
    model, tok = tiny_policy(task)
    trainer = MRTPOTrainer(task, model, config(tmp_path, algo, max_steps=2), processing_class=tok, callbacks=[Tracker()])
    trainer.train()
    assert seen and all(v is not None for row in seen for v in row.values())
    assert any(v is None for row in trainer.state.log_history for v in row.values()) or algo != "mrtpo"
    trainer.create_model_card()
    card = (Path(trainer.args.output_dir) / "README.md").read_text()
    assert f"trained with {name}" in card and paper in card
    assert "mrtpo-sdk" in card


def test_log_completions_puts_the_blocks_in_trls_completions_table(tmp_path):
    from mrtpo_sdk.trainer import MRTPOTrainer

    task = load_task(LETTERS)
    model, tok = tiny_policy(task)
    trainer = MRTPOTrainer(task, model, config(tmp_path, max_steps=1, log_completions=True), processing_class=tok)
    trainer.train()
    extra = trainer._logs["extra"]
    assert len(extra["block/has_a"]) == len(trainer._logs["completion"]) == 8
    assert all(b.startswith("The word ") for b in extra["block/has_a"])
    assert set(extra["block/length"]) == {""}  # the length verifier's block is empty


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--use_vllm", "true"], "--use_vllm needs the vllm package: pip install 'mrtpo-sdk[vllm]'"),
        (["--report_to", "wandb"], "--report_to wandb needs the wandb package: pip install 'mrtpo-sdk[wandb]'"),
    ],
)
def test_a_missing_optional_package_names_the_extra(tmp_path, capsys, args, fragment):
    import importlib.util

    module = "vllm" if "--use_vllm" in args else "wandb"
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    assert main(["train", LETTERS, *SMALL, *args, "--output_dir", str(tmp_path / "o")]) == 2
    assert fragment in error_line(capsys)


def test_policy_has_a_model_card_and_run_json_records_the_model_settings(tmp_path, local_model):
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--use_peft", "--lora_r", "4",
                 "--lora_target_modules", "q_proj", "v_proj", "--output_dir", str(out), "--save_strategy", "steps",
                 "--save_steps", "2"]) == 0
    card = (out / "policy" / "README.md").read_text()
    assert "MRTPO" in card and "2610.21439" in card
    assert not (out / "README.md").exists()  # the checkpoints (--save_strategy steps) add no card of their own
    info = json.loads((out / "run.json").read_text())
    assert info["model_args"]["use_peft"] is True and info["model_args"]["lora_r"] == 4


def test_resume_refuses_other_lora_settings(tmp_path, local_model, capsys):
    out = tmp_path / "run"
    lora = ["--use_peft", "--lora_r", "4", "--lora_target_modules", "q_proj", "v_proj"]
    base = ["train", LETTERS, "--model", str(local_model), *SMALL, "--output_dir", str(out), "--save_strategy",
            "steps", "--save_steps", "2"]
    assert main([*base, *lora]) == 0
    capsys.readouterr()
    assert main([*base, "--max_steps", "3", "--resume_from_checkpoint", "true"]) == 2
    assert "that run trained with --use_peft True, this command has False" in error_line(capsys)


def test_task_form_examples_without_ids_get_generated_ids(tmp_path):
    from datasets import Dataset

    from mrtpo_sdk import Result, Task, verifier
    from mrtpo_sdk.trainer import MRTPOTrainer

    @verifier
    def has_a(example, completion):
        return Result(float("a" in completion), "")

    task = Task(name="rows", examples=[{"id": "unused", "w": "x"}], prompt=lambda ex: f"Say {ex['w']}.",
                verifiers=[has_a])
    model, tok = tiny_policy(load_task(LETTERS))
    rows = Dataset.from_list([{"w": w} for w in "abcdefgh"])
    trainer = MRTPOTrainer(task, model, config(tmp_path, max_steps=1), examples=rows, processing_class=tok)
    assert sorted(trainer._examples_by_id)[0].startswith("0-") and len(trainer._examples_by_id) == 8


def test_the_model_card_names_the_base_policy_and_the_task_file_without_dead_hub_links(tmp_path, local_model):
    out = tmp_path / "run"
    (out).mkdir()
    (out / "README.md").write_text("my notes\n")  # a README.md of the user's in the run folder stays as it was
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--output_dir", str(out)]) == 0
    card = (out / "policy" / "README.md").read_text()
    assert "huggingface.co/None" not in card and "huggingface.co/datasets/" not in card and "[None]" not in card
    line = next(x for x in card.splitlines() if x.startswith("This model is a fine-tuned version of"))
    assert line == (f"This model is a fine-tuned version of the local model `{local_model}`, trained with mrtpo-sdk "
                    f"on the task `letters` (task file `{LETTERS}`).")
    assert "# Model Card for letters (mrtpo) policy" in card
    assert f'pipeline("text-generation", model="{out / "policy"}"' in card
    assert "trained with MRTPO" in card and "2610.21439" in card
    assert (out / "README.md").read_text() == "my notes\n"


def test_the_embedded_policy_card_names_the_bootstrap_policy(tmp_path):
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--policy_preset", "tiny", *SMALL, "--output_dir", str(out)]) == 0
    card = (out / "policy" / "README.md").read_text()
    line = next(x for x in card.splitlines() if x.startswith("This model is a fine-tuned version of"))
    assert line.startswith("This model is a fine-tuned version of the embedded bootstrap policy (")
    assert line.endswith(f"trained with mrtpo-sdk on the task `letters` (task file `{LETTERS}`).")
    assert "huggingface.co/None" not in card
    assert not (out / "README.md").exists()  # the card lives in policy/ only


@pytest.mark.parametrize("has_bf16", [True, False])
def test_a_model_on_a_cpu_trains_under_bf16_autocast_where_the_cpu_has_it(tmp_path, local_model, capsys,
                                                                           monkeypatch, has_bf16):
    """CPU defaults for --model (policy.presets.model_machine_defaults): use_cpu, bf16 where the CPU computes it
    natively (else float32 and one note), TRL's gradient checkpointing, 4 completions per prompt; a flag wins."""
    import torch

    from mrtpo_sdk.policy import presets

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(presets, "cpu_supports_bf16", lambda: has_bf16)
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--output_dir", str(out)]) == 0
    args = json.loads((out / "run.json").read_text())["args"]
    assert args["use_cpu"] is True and args["bf16"] is has_bf16 and args["gradient_checkpointing"] is True
    assert args["num_generations"] == 4 and args["per_device_train_batch_size"] == 8  # SMALL sets the batch
    note = "note: this CPU has no bf16 instructions"
    assert (note in capsys.readouterr().out) is (not has_bf16)
    out2 = tmp_path / "run2"
    assert main(["train", LETTERS, "--model", str(local_model), *SMALL, "--output_dir", str(out2),
                 "--bf16", "false", "--gradient_checkpointing", "false"]) == 0
    args = json.loads((out2 / "run.json").read_text())["args"]
    assert args["bf16"] is False and args["gradient_checkpointing"] is False
    assert note not in capsys.readouterr().out  # the user chose float32: nothing to say
