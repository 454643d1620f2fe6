"""Every causal architecture transformers' GGUF loader reads, as a tiny base-model GGUF written in the test (no chat
template, tests/policy/gguf_fixture.py): dequantized back to the model written, then one training step and one
evaluation with plain-text prompts. A base GGUF end to end through train, eval, explain and ``lint --replay``;
``--chat_template FILE`` on each command; and one line for each ``--model`` that cannot be loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from mrtpo_sdk.cli import main
from mrtpo_sdk.errors import MRTPOError
from mrtpo_sdk.policy.gguf import gguf_architectures, materialize
from mrtpo_sdk.policy.pretrained import quiet_loading

from .gguf_fixture import ARCHITECTURES, NOT_WRITTEN, write_tiny_gguf, write_tiny_llama_gguf

pytest.importorskip("gguf")

LETTERS = str(Path(__file__).parents[1] / "fixtures" / "letters_task.py")
TEMPLATE = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")
TRAIN_STEP = ["--max_steps", "1", "--per_device_train_batch_size", "4", "--num_generations", "2",
              "--max_completion_length", "4", "--eval_strategy", "no"]


def _note(model) -> str:
    return (f"note: --model {model} has no chat template; its prompts are plain text, the messages' contents joined "
            f"by blank lines (--chat_template FILE sets one)")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(root))
    return root


@pytest.fixture
def base_gguf(tmp_path):
    """A tiny Llama GGUF without a chat template: a base model."""
    path, _, _ = write_tiny_llama_gguf(tmp_path / "gguf" / "tiny-base.F32.gguf", chat_template=None)
    return path


def test_every_architecture_the_loader_reads_is_written_or_says_why():
    listed = set(gguf_architectures())
    assert {"llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "mistral"} <= listed
    assert sorted(listed - set(ARCHITECTURES) - set(NOT_WRITTEN)) == []
    assert not set(ARCHITECTURES) & set(NOT_WRITTEN)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_a_tiny_gguf_dequantizes_to_the_model_written(architecture, cache, tmp_path):
    from transformers import AutoModelForCausalLM

    path, written, _ = write_tiny_gguf(tmp_path / f"{architecture}.gguf", architecture, chat_template=None)
    with quiet_loading():
        loaded = AutoModelForCausalLM.from_pretrained(materialize(str(path), log=lambda line: None)).eval()
    ids = torch.tensor([[1, 5, 9, 17, 42, 7]])
    with torch.no_grad():
        assert torch.allclose(loaded(ids).logits, written(ids).logits, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_a_base_gguf_of_each_architecture_trains_a_step_and_evaluates(architecture, cache, tmp_path, capsys):
    """About 2 s per architecture on one CPU core."""
    path, _, _ = write_tiny_gguf(tmp_path / f"{architecture}.gguf", architecture, chat_template=None)
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model", str(path), *TRAIN_STEP, "--output_dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count(_note(path)) == 1
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "finished" and run["global_step"] == 1 and run["prompts"] == "text"
    assert main(["eval", LETTERS, "--model", str(path), "--split", "train", "--max_examples", "2",
                 "--max_completion_length", "4", "--output_dir", str(tmp_path / "eval")]) == 0
    assert capsys.readouterr().err.count(_note(path)) == 1
    assert json.loads((tmp_path / "eval" / "eval.json").read_text())["num_examples"] == 2


@pytest.mark.slow
def test_a_base_gguf_through_train_eval_explain_and_lint_replay(cache, base_gguf, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model", str(base_gguf), *TRAIN_STEP, "--output_dir", str(out)]) == 0
    captured = capsys.readouterr()
    assert (captured.out + captured.err).count("has no chat template") == 1
    assert _note(base_gguf) in captured.out
    assert json.loads((out / "run.json").read_text())["prompts"] == "text"
    # the saved policy has no chat template either: eval of the run folder reads plain text too
    assert main(["eval", LETTERS, "--model", str(out), "--split", "train", "--max_examples", "2",
                 "--max_completion_length", "4", "--output_dir", str(tmp_path / "eval")]) == 0
    assert _note(out) in capsys.readouterr().err
    assert main(["explain", LETTERS, "--model", str(base_gguf), "--output_dir", str(tmp_path / "explain")]) == 0
    captured = capsys.readouterr()
    assert captured.err.count(_note(base_gguf)) == 1 and "html:" in captured.out
    page = json.loads(next((tmp_path / "explain").glob("*.json")).read_text())
    assert [page["rewards"][name]["replayed"] for name in ("has_a", "has_e", "length")] == [True, True, False]
    assert main(["lint", LETTERS, "--isolated", "--replay", "--model", str(base_gguf), "--examples", "2",
                 "--select", "MRT015,MRT016,MRT017"]) in (0, 1)
    err = capsys.readouterr().err
    assert err.count(_note(base_gguf)) == 1 and "2 completions replayed in" in err


def test_the_replay_contexts_of_a_base_model_are_plain_text_differing_by_the_blocks(cache, base_gguf):
    """What explain and the trainer's replay encode for a base model: P_all and P_\\k are the plain-text prompt with
    the blocks appended, and their token ids share the prompt's."""
    from mrtpo_sdk import load_task
    from mrtpo_sdk.policy.pretrained import load_pretrained
    from mrtpo_sdk.prompting import encode_prompt, use_model_prompts

    with quiet_loading():
        _, tok, _ = load_pretrained(str(base_gguf))
    task = use_model_prompts(load_task(LETTERS), tok, model=str(base_gguf), log=lambda line: None)
    ex = task.load_examples()[0]
    blocks = [r.block if r is not None else "" for r in task.score(ex, task.reference_completion(ex))]
    p_all, p_without = task.replay_prompts(ex, blocks, 0)
    p0 = task.rollout_prompt(ex)
    assert p0 == "Spell the word apple." and p_all.startswith(p0) and p_without.startswith(p0)
    assert p_all.replace("\n\n" + blocks[0], "", 1) == p_without
    ids0 = encode_prompt(tok, p0)
    assert encode_prompt(tok, p_all)[: len(ids0) - 1] == ids0[:-1]


@pytest.mark.slow
def test_the_trainer_gives_trl_plain_text_prompts_for_a_model_folder_without_a_chat_template(cache, base_gguf,
                                                                                                tmp_path, capsys):
    """The Python API: MRTPOTrainer(task, FOLDER) with a tokenizer TRL loads itself; TRL's standard-format
    tokenization of the prompts is the one eval uses."""
    from mrtpo_sdk import MRTPOConfig, MRTPOTrainer, load_task
    from mrtpo_sdk.prompting import encode_prompt

    folder = materialize(str(base_gguf), log=lambda line: None)
    config = MRTPOConfig(output_dir=str(tmp_path / "run"), max_steps=1, per_device_train_batch_size=4,
                         num_generations=2, max_completion_length=4, report_to="none", use_cpu=True)
    with quiet_loading():
        trainer = MRTPOTrainer(load_task(LETTERS), folder, config)
    assert trainer.task.plain_text_prompts and trainer.run_info["prompts"] == "text"
    prompt = trainer.train_dataset[0]["prompt"]
    assert prompt == "Spell the word apple."
    assert list(trainer._tokenize_prompts([prompt])[0][0]) == encode_prompt(trainer.processing_class, prompt)
    assert capsys.readouterr().out.count("has no chat template; its prompts are plain text") == 1


# ---------------------------------------------------------------------------------------------- --chat_template
@pytest.mark.slow
def test_a_chat_template_file_gives_a_base_model_chat_prompts_on_every_command(cache, base_gguf, tmp_path, capsys):
    template = tmp_path / "chat.jinja"
    template.write_text(TEMPLATE)
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model", str(base_gguf), "--chat_template", str(template), *TRAIN_STEP,
                 "--output_dir", str(out)]) == 0
    captured = capsys.readouterr()
    assert "no chat template" not in captured.out + captured.err
    assert json.loads((out / "run.json").read_text())["prompts"] == "chat"
    from mrtpo_sdk.policy.pretrained import load_tokenizer

    assert load_tokenizer(out / "policy").chat_template == TEMPLATE  # the saved policy keeps it
    for argv in (["eval", LETTERS, "--model", str(base_gguf), "--split", "train", "--max_examples", "1",
                  "--max_completion_length", "2", "--output_dir", str(tmp_path / "eval")],
                 ["explain", LETTERS, "--model", str(base_gguf), "--output_dir", str(tmp_path / "explain")],
                 ["lint", LETTERS, "--isolated", "--replay", "--model", str(base_gguf), "--examples", "1",
                  "--select", "MRT015"]):
        assert main([*argv, "--chat_template", str(template)]) in (0, 1)
        captured = capsys.readouterr()
        assert "no chat template" not in captured.out + captured.err, argv[0]


@pytest.mark.parametrize("command", ["train", "eval", "explain", "lint"])
def test_a_missing_chat_template_file_is_one_line_on_every_command(command, cache, base_gguf, tmp_path, capsys):
    missing = tmp_path / "nope.jinja"
    argv = [command, LETTERS, "--model", str(base_gguf), "--chat_template", str(missing)]
    if command == "lint":
        argv.insert(2, "--replay")
    assert main(argv) == 2
    assert capsys.readouterr().err == (f"error: --chat_template {missing}: no such file; pass a Jinja chat template "
                                       f"file (e.g. one saved as chat_template.jinja beside a model)\n")


@pytest.mark.parametrize("command", ["train", "eval", "explain"])
def test_a_chat_template_for_the_embedded_policy_is_refused(command, tmp_path, capsys):
    template = tmp_path / "chat.jinja"
    template.write_text(TEMPLATE)
    assert main([command, LETTERS, "--chat_template", str(template)]) == 2
    assert capsys.readouterr().err == ("error: --chat_template sets the chat template of a --model; the embedded "
                                       "policy has its own (pass --model, or drop --chat_template)\n")


def test_lint_takes_chat_template_only_with_replay(tmp_path, capsys):
    assert main(["lint", LETTERS, "--chat_template", str(tmp_path / "chat.jinja")]) == 2
    assert capsys.readouterr().err == ("error: --chat_template is a --replay option; add --replay (or drop "
                                       "--chat_template)\n")


# ---------------------------------------------------------------------------------------------- --model errors
def _model_folder(tmp_path: Path, name: str) -> Path:
    from mrtpo_sdk import load_task

    from ..helpers import FIXTURES, tiny_policy

    model, tok = tiny_policy(load_task(FIXTURES / "letters_task.py"))
    folder = tmp_path / name
    with quiet_loading():
        model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _errors(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Each broken --model, and the error line (without ``error: ``) every command prints for it."""
    cases: dict[str, tuple[str, str]] = {}
    missing = tmp_path / "no-such-model"
    cases["missing folder"] = (str(missing), f"--model {missing}: no such folder; pass a run folder of `mrtpo-sdk "
                               f"train`, a local model folder (with config.json), a .gguf file, smollm2 or a Hugging "
                               f"Face model id")
    cases["missing gguf"] = (str(tmp_path / "no.gguf"), f"--model {tmp_path / 'no.gguf'}: no such file")
    empty = tmp_path / "empty-folder"
    empty.mkdir()
    cases["folder without config"] = (str(empty), f"--model {empty}: {empty} has no config.json (nor a policy/ "
                                      f"folder with one); pass the folder of a saved model or a run folder of "
                                      f"`mrtpo-sdk train`")
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"PK\x03\x04 a zip file")
    cases["not a gguf"] = (str(fake), f"--model {fake}: not a GGUF file (it does not start with the bytes 'GGUF'); "
                           f"pass a .gguf model file")
    path, _, _ = write_tiny_llama_gguf(tmp_path / "whole.gguf")
    head = tmp_path / "head.gguf"
    head.write_bytes(path.read_bytes()[:3000])
    cases["corrupt gguf"] = (str(head), f"--model {head}: truncated or damaged: its header cannot be read (3000 "
                             f"bytes); download or copy it again")
    odd, _, _ = write_tiny_llama_gguf(tmp_path / "odd.gguf", architecture="notanarch")
    readable = ", ".join(a for a in gguf_architectures() if a not in ("t5", "t5encoder", "umt5"))
    cases["unsupported architecture"] = (str(odd), f"--model {odd}: transformers' GGUF loader does not read the "
                                         f"architecture notanarch (it reads {readable}); convert the model to a "
                                         f"transformers folder instead")
    t5, _, _ = write_tiny_llama_gguf(tmp_path / "t5.gguf", architecture="t5")
    cases["encoder-decoder"] = (str(t5), f"--model {t5}: the architecture 't5' is not a causal language model (an "
                                f"encoder-decoder such as T5); train, eval and explain need a decoder-only model")
    deci, _, _ = write_tiny_llama_gguf(tmp_path / "deci.gguf", architecture="deci")
    cases["no model class"] = (str(deci), f"--model {deci}: transformers has no model class for the GGUF "
                               f"architecture 'deci'; pass a transformers model folder of it instead")
    tokenizer_redo = ("save the tokenizer the model was trained with into the folder (tokenizer.save_pretrained("
                      "FOLDER)) or pass another --model")
    bad_tok = _model_folder(tmp_path, "bad-tokenizer")
    (bad_tok / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "Nope"}}')
    cases["tokenizer fails to load"] = (str(bad_tok), f"--model {bad_tok}: the tokenizer in {bad_tok} cannot be "
                                        f"loaded (KeyError: 'added_tokens'); {tokenizer_redo}")
    no_tok = _model_folder(tmp_path, "no-tokenizer")
    for f in no_tok.glob("tokenizer*"):
        f.unlink()
    cases["no tokenizer"] = (str(no_tok), f"--model {no_tok}: {no_tok} has no tokenizer files (tokenizer.json, "
                             f"tokenizer_config.json); {tokenizer_redo}")
    bad_weights = _model_folder(tmp_path, "bad-weights")
    (bad_weights / "model.safetensors").write_bytes(b"not safetensors")
    cases["corrupt weights"] = (str(bad_weights), f"--model {bad_weights}: {bad_weights / 'model.safetensors'} is not "
                                f"a whole safetensors file (SafetensorError: Error while deserializing header: header "
                                f"too large); save the model again (save_pretrained) or pass another --model")
    return cases


CASES = ["missing folder", "missing gguf", "folder without config", "not a gguf", "corrupt gguf",
         "unsupported architecture", "encoder-decoder", "no model class", "tokenizer fails to load", "no tokenizer",
         "corrupt weights"]


@pytest.mark.parametrize("command", ["eval", "train", "explain", "lint"])
def test_each_model_that_cannot_be_loaded_is_one_line_on_every_command(command, cache, tmp_path, capsys):
    cases = _errors(tmp_path)
    assert sorted(cases) == sorted(CASES)
    for case, (model, line) in cases.items():
        argv = [command, LETTERS, "--model", model, "--output_dir", str(tmp_path / "out")]
        if command == "eval":
            argv += ["--split", "train"]
        if command == "lint":
            argv = ["lint", LETTERS, "--isolated", "--replay", "--model", model]
            if case == "missing folder":  # lint's own check, before any task is linted: it also takes `embedded`
                line = (f"--model {model}: no such folder; pass a run folder of `mrtpo-sdk train`, a model folder, "
                        f"a .gguf file, smollm2, a model id or embedded")
        assert main(argv) == 2, case
        err = capsys.readouterr().err
        err = "\n".join(x for x in err.splitlines() if not x.startswith(("dequantizing ", "lint --replay: loading")))
        assert err == f"error: {line}", case


def test_the_gguf_errors_are_said_before_dequantizing(cache, tmp_path):
    from mrtpo_sdk.policy.gguf import dequantized_folder

    said = []
    for arch in ("notanarch", "t5", "deci"):
        path, _, _ = write_tiny_llama_gguf(tmp_path / f"{arch}.gguf", architecture=arch)
        with pytest.raises(MRTPOError):
            dequantized_folder(path, log=said.append)
    assert said == [] and not (cache / "models").exists()
