"""Tests for the embedded default policy (tokenizer, model, SFT warm start, cache)."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
import torch

from mrtpo_sdk.policy import (
    CHAT_TEMPLATE,
    DefaultPolicyConfig,
    build_model,
    build_tokenizer,
    cache_key,
    completion_nll,
    default_policy,
    load_policy,
    read_manifest,
    warm_start,
)
from mrtpo_sdk import MRTPOError
from mrtpo_sdk.policy.default import MANIFEST_NAME

SYSTEM = "You translate questions into SQLite queries."
TABLES = {
    "student": ("major", ["physics", "history", "art", "biology"]),
    "course": ("department", ["math", "music", "law"]),
    "airport": ("country", ["France", "Japan", "Peru"]),
    "doctor": ("specialty", ["cardiology", "neurology"]),
}


def fake_pairs(n: int = 40, seed: int = 0) -> list[tuple[list[dict], str]]:
    rng = random.Random(seed)
    pairs = []
    names = sorted(TABLES)
    for i in range(n):
        table = names[i % len(names)]
        col, vals = TABLES[table]
        val = rng.choice(vals)
        schema = "\n".join(
            f"CREATE TABLE {t} (id INTEGER PRIMARY KEY, name TEXT, {c} TEXT);" for t, (c, _) in TABLES.items()
        )
        user = (
            f"Database schema:\n{schema}\n\nQuestion: How many rows of {table} have {col} {val}?\n\n"
            "Write your reasoning briefly, then give exactly one SQLite query in a ```sql code block."
        )
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
        pairs.append((messages, f"```sql\nSELECT count(*) FROM {table} WHERE {col} = '{val}'\n```"))
    return pairs


def texts_of(pairs) -> list[str]:
    return [m["content"] for msgs, _ in pairs for m in msgs] + [c for _, c in pairs]


# A tiny configuration so that a full build (tokenizer + model + SFT) takes a few seconds.
TINY = DefaultPolicyConfig(
    vocab_size=400,
    hidden_size=32,
    num_hidden_layers=1,
    num_attention_heads=2,
    num_key_value_heads=1,
    intermediate_size=64,
    max_position_embeddings=512,
    sft_epochs=1.0,
    sft_max_steps=4,
    sft_batch_size=4,
    sft_learning_rate=3e-3,
    seed=0,
)

PAIRS = fake_pairs()
TEXTS = texts_of(PAIRS)


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer(TEXTS, 400)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One tiny build in a private cache dir: (model, tokenizer, path, log lines, cache_dir)."""
    cache = tmp_path_factory.mktemp("policy-cache")
    logs: list[str] = []
    model, tok, path = default_policy("fake-sql", TEXTS, PAIRS, TINY, cache_dir=cache, log=logs.append)
    return model, tok, path, logs, cache


# ----------------------------------------------------------------------------- tokenizer


def test_tokenizer_special_tokens(tokenizer):
    assert tokenizer.eos_token == "<|im_end|>"
    assert tokenizer.pad_token == "<|endoftext|>"
    assert tokenizer.bos_token is None
    assert tokenizer.pad_token_id != tokenizer.eos_token_id
    for special in ("<|im_start|>", "<|im_end|>", "<|endoftext|>"):
        ids = tokenizer.encode(special, add_special_tokens=False)
        assert len(ids) == 1, special
    assert len(tokenizer) <= 400
    # no BOS/EOS added implicitly
    assert tokenizer.encode("SELECT", add_special_tokens=True) == tokenizer.encode("SELECT", add_special_tokens=False)


@pytest.mark.parametrize(
    "text",
    [
        "```sql\nSELECT count(*) FROM student WHERE major = 'physics'\n```",
        "  leading and trailing spaces  \n\n\ttabs\r\nCRLF",
        "unseen words: Zürich, naïve café, 日本語, emoji 🚀, NUL-free \x7f",
        "",
        "x" * 500,
    ],
)
def test_tokenizer_round_trips_exactly(tokenizer, text):
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.decode(ids) == text
    assert tokenizer.unk_token_id is None or tokenizer.unk_token_id not in ids


def test_tokenizer_compresses_task_text(tokenizer):
    user = PAIRS[0][0][1]["content"]
    assert len(tokenizer.encode(user, add_special_tokens=False)) < len(user.encode("utf-8")) / 2


def test_tokenizer_is_deterministic():
    a = build_tokenizer(TEXTS, 400)
    b = build_tokenizer(list(TEXTS), 400)
    assert a.get_vocab() == b.get_vocab()
    assert a.backend_tokenizer.to_str() == b.backend_tokenizer.to_str()


def test_tokenizer_rejects_tiny_vocab():
    with pytest.raises(ValueError):
        build_tokenizer(TEXTS, 100)


# ----------------------------------------------------------------------------- chat template


def test_chat_template_format(tokenizer):
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q?"}]
    assert tokenizer.chat_template == CHAT_TEMPLATE
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert prompt == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n"
    no_gen = tokenizer.apply_chat_template(messages, tokenize=False)
    assert no_gen == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ?<|im_end|>\n"
    full = tokenizer.apply_chat_template(messages + [{"role": "assistant", "content": "A"}], tokenize=False)
    assert full == prompt + "A<|im_end|>\n"


def test_chat_template_tokens_and_prefix_property(tokenizer):
    messages, completion = PAIRS[0]
    out = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=True)
    ids = out["input_ids"]
    im_start = tokenizer.convert_tokens_to_ids("<|im_start|>")
    assert ids[0] == im_start
    assert tokenizer.decode(ids) == tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    # The prompt (with generation prompt) tokenizes to a prefix of prompt + completion, for any
    # completion start (newlines are always separate tokens), so SFT/RL see consistent contexts.
    for comp in (completion, "\n\nSELECT 1", " SELECT 1", "\tx"):
        full = tokenizer.apply_chat_template(
            messages + [{"role": "assistant", "content": comp}], tokenize=True, return_dict=True
        )["input_ids"]
        assert full[: len(ids)] == ids, comp
        assert tokenizer.decode(full[len(ids) :]) == comp + "<|im_end|>\n"


def test_assistant_mask(tokenizer):
    messages, completion = PAIRS[0]
    out = tokenizer.apply_chat_template(
        messages + [{"role": "assistant", "content": completion}],
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    masked = [t for t, m in zip(out["input_ids"], out["assistant_masks"]) if m]
    assert tokenizer.decode(masked) == completion + "<|im_end|>"


# ----------------------------------------------------------------------------- model


def test_build_model_is_seeded_and_configured(tokenizer):
    a = build_model(tokenizer, TINY)
    b = build_model(tokenizer, TINY)
    c = build_model(tokenizer, dataclasses.replace(TINY, seed=1))
    assert a.config.model_type == "qwen2"
    assert a.config.vocab_size == len(tokenizer)
    assert a.generation_config.eos_token_id == tokenizer.eos_token_id
    assert a.generation_config.pad_token_id == tokenizer.pad_token_id
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)


def test_warm_start_lowers_completion_nll(tokenizer, tmp_path):
    cfg = dataclasses.replace(TINY, sft_max_steps=40, sft_epochs=10.0, sft_learning_rate=1e-2)
    model = build_model(tokenizer, cfg)
    eval_pairs = PAIRS[:8]
    before = completion_nll(model, tokenizer, eval_pairs)
    warm_start(model, tokenizer, PAIRS, cfg, output_dir=tmp_path / "sft")
    after = completion_nll(model, tokenizer, eval_pairs)
    assert before > 4.0  # ~ln(vocab) for a random init
    assert after < 0.5 * before, (before, after)
    print(f"completion NLL before {before:.3f} after {after:.3f}")
    losses = [e["loss"] for e in model._mrtpo_sft_log_history if "loss" in e]
    assert losses and losses[-1] < losses[0]
    assert not model.training


# ----------------------------------------------------------------------------- default_policy + cache


def test_default_policy_build_and_generate(built):
    model, tok, path, logs, cache = built
    assert path.parent == cache
    assert path.name.startswith("fake-sql-seed0-")
    assert any("building default policy" in line for line in logs)
    manifest = read_manifest(path)
    assert manifest == json.loads((path / MANIFEST_NAME).read_text())
    assert manifest["sft_steps"] == 4 and manifest["sft_loss_first"] is not None
    assert (path / "config.json").is_file() and (path / "tokenizer.json").is_file()
    # no leftover temporary build dirs
    assert [p.name for p in cache.iterdir()] == [path.name]
    # generation works and stops at eos / respects pad
    enc = tok.apply_chat_template(PAIRS[0][0], add_generation_prompt=True, return_tensors="pt", return_dict=True)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=8, do_sample=True, num_return_sequences=2)
    assert out.shape[0] == 2 and out.shape[1] <= enc["input_ids"].shape[1] + 8


def test_batched_left_padded_generation_matches_single(built):
    model, tok, _, _, _ = built
    assert tok.padding_side == "left"
    prompts = [
        tok.apply_chat_template(PAIRS[i][0], tokenize=False, add_generation_prompt=True) + extra
        for i, extra in ((0, ""), (1, "```sql\nSELECT"))
    ]
    batch = tok(prompts, padding=True, return_tensors="pt", add_special_tokens=False)
    assert batch["input_ids"].shape[1] > min(len(tok(p)["input_ids"]) for p in prompts)  # really padded
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=6, min_new_tokens=6, do_sample=False)
        for i, p in enumerate(prompts):
            single = tok(p, return_tensors="pt", add_special_tokens=False)
            ref = model.generate(**single, max_new_tokens=6, min_new_tokens=6, do_sample=False)
            assert out[i, -6:].tolist() == ref[0, -6:].tolist()


def test_default_policy_cache_hit(built):
    model, tok, path, _, cache = built
    weights = path / "model.safetensors"
    mtime = weights.stat().st_mtime_ns
    logs: list[str] = []
    model2, tok2, path2 = default_policy("fake-sql", TEXTS, PAIRS, TINY, cache_dir=cache, log=logs.append)
    assert path2 == path
    assert any("loaded default policy from cache" in line for line in logs)
    assert not any("building" in line or "warm start" in line for line in logs)
    assert weights.stat().st_mtime_ns == mtime
    s1, s2 = model.state_dict(), model2.state_dict()
    assert all(torch.equal(s1[k].cpu(), s2[k].cpu()) for k in s1)
    assert tok2.get_vocab() == tok.get_vocab()
    assert tok2.apply_chat_template(PAIRS[0][0], tokenize=False, add_generation_prompt=True) == tok.apply_chat_template(
        PAIRS[0][0], tokenize=False, add_generation_prompt=True
    )
    assert model2.generation_config.eos_token_id == tok2.eos_token_id
    assert model2.generation_config.pad_token_id == tok2.pad_token_id
    # load_policy gives the same thing
    model3, _ = load_policy(path)
    assert all(torch.equal(s1[k].cpu(), v) for k, v in model3.state_dict().items())


def test_default_policy_is_deterministic(built, tmp_path):
    """An independent build (other cache dir) with the same seed/inputs gives identical weights."""
    model, tok, path, _, _ = built
    logs: list[str] = []
    model2, tok2, path2 = default_policy("fake-sql", TEXTS, PAIRS, TINY, cache_dir=tmp_path, log=logs.append)
    assert any("building" in line for line in logs)
    assert path2.name == path.name
    assert tok2.get_vocab() == tok.get_vocab()
    s1, s2 = model.state_dict(), model2.state_dict()
    assert s1.keys() == s2.keys()
    assert all(torch.equal(s1[k].cpu(), s2[k].cpu()) for k in s1)


def test_rebuild_replaces_entry(built, tmp_path):
    logs: list[str] = []
    _, _, p1 = default_policy(
        "fake-sql", TEXTS, PAIRS[:8], dataclasses.replace(TINY, sft_max_steps=1), cache_dir=tmp_path, log=logs.append
    )
    logs.clear()
    _, _, p2 = default_policy(
        "fake-sql",
        TEXTS,
        PAIRS[:8],
        dataclasses.replace(TINY, sft_max_steps=1),
        cache_dir=tmp_path,
        rebuild=True,
        log=logs.append,
    )
    assert p1 == p2 and any("building" in line for line in logs)
    assert [p.name for p in tmp_path.iterdir()] == [p1.name]


def test_cache_key_depends_on_inputs_and_settings():
    base = cache_key(TEXTS, PAIRS, TINY)
    assert base == cache_key(list(TEXTS), list(PAIRS), dataclasses.replace(TINY))
    assert base != cache_key(TEXTS + ["extra"], PAIRS, TINY)
    assert base != cache_key(TEXTS, PAIRS[:-1], TINY)
    assert base != cache_key(TEXTS, PAIRS, dataclasses.replace(TINY, seed=1))
    assert base != cache_key(TEXTS, PAIRS, dataclasses.replace(TINY, sft_learning_rate=1e-3))


def test_no_files_written_to_cwd(tmp_path, monkeypatch):
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    cfg = dataclasses.replace(TINY, sft_max_steps=1)
    default_policy("cwd-check", TEXTS[:20], PAIRS[:4], cfg, cache_dir=tmp_path / "cache", log=lambda _: None)
    assert list(work.iterdir()) == []


def test_default_cache_dir_env(monkeypatch, tmp_path):
    from mrtpo_sdk.policy import default_cache_dir

    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path / "policies"
    monkeypatch.delenv("MRTPO_SDK_CACHE_DIR")
    assert default_cache_dir().name == "policies"
    assert "mrtpo-sdk" in str(default_cache_dir())


def test_text_prompts_are_taught_raw_as_sampling_sees_them(tokenizer, tmp_path):
    """A text prompt is sampled without the chat template (TRL), so the warm start teaches it raw: the references
    become likely after the raw prompt — more than after the same text wrapped as a user message."""
    from mrtpo_sdk.policy.default import _sft_dataset

    text_pairs = [(msgs[-1]["content"], completion) for msgs, completion in PAIRS]
    rows = _sft_dataset(text_pairs[:2])
    assert rows[0]["prompt"] == text_pairs[0][0] and rows[0]["completion"] == text_pairs[0][1]
    with pytest.raises(MRTPOError, match="one kind"):
        _sft_dataset([text_pairs[0], PAIRS[1]])
    cfg = dataclasses.replace(TINY, sft_max_steps=40, sft_epochs=10.0, sft_learning_rate=1e-2)
    as_chat = [([{"role": "user", "content": p}], c) for p, c in text_pairs]
    nll = {}
    for taught, pairs in (("raw", text_pairs), ("chat", as_chat)):
        model = build_model(tokenizer, cfg)
        warm_start(model, tokenizer, pairs, cfg, output_dir=tmp_path / f"sft-{taught}")
        nll[taught] = (completion_nll(model, tokenizer, text_pairs[:8]), completion_nll(model, tokenizer, as_chat[:8]))
    # (NLL after the raw prompt, NLL after the chat-wrapped prompt): each warm start favours what it was taught
    assert nll["raw"][0] < nll["raw"][1] and nll["chat"][1] < nll["chat"][0], nll
    assert cache_key(TEXTS, text_pairs, cfg) != cache_key(TEXTS, as_chat, cfg)
