"""A tiny Llama-architecture GGUF file written in the test with ``gguf``'s writer, from a tiny config and a
byte-level BPE tokenizer built in the test (no download): what ``--model PATH.gguf`` reads.

The tensors are written as llama.cpp's converter writes them (F32, ``attn_q``/``attn_k`` rows permuted for its
rotary layout), so transformers' GGUF loader, which undoes that permutation, must give back the model written.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from mrtpo_sdk.policy import CHAT_TEMPLATE, build_tokenizer

CORPUS = [
    "Write a haiku about the sea. End your answer with 'Any other questions?'",
    "The sea is calm tonight. Any other questions?",
    "SELECT name FROM students WHERE gpa > 3.5;",
    "Answer in lowercase letters only, with no commas.",
] * 8


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's q/k row permutation (``convert_hf_to_gguf.py``'s ``LlamaModel.permute``)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def tiny_llama(vocab_size: int, seed: int = 0, tied: bool = True):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=tied)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():  # norms away from 1, so that a lost norm weight shows
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    return model


def write_tiny_llama_gguf(path: Path, seed: int = 0, architecture: str = "llama", tied: bool = True):
    """Write a tiny Llama GGUF (F32) to ``path``; returns ``(path, the transformers model written, tokenizer)``.

    ``architecture`` other than ``llama`` writes the same tensors under another ``general.architecture`` (to test
    an architecture the loader does not read)."""
    import gguf

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(CORPUS, vocab_size=300)
    tokenizer.chat_template = CHAT_TEMPLATE
    model = tiny_llama(len(tokenizer), seed=seed, tied=tied)
    cfg = model.config
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    vocab = spec["model"]["vocab"]
    tokens = [None] * len(tokenizer)
    for tok, idx in vocab.items():
        tokens[idx] = tok
    for added in spec.get("added_tokens", []):
        tokens[added["id"]] = added["content"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    special = {a["id"] for a in spec.get("added_tokens", []) if a.get("special")}

    w = gguf.GGUFWriter(str(path), architecture)
    w.add_name("tiny-llama-test")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_rope_freq_base(cfg.rope_theta if hasattr(cfg, "rope_theta") else 10000.0)
    w.add_rope_dimension_count(cfg.hidden_size // cfg.num_attention_heads)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_token_list(tokens)
    w.add_token_merges(merges)
    w.add_token_types([3 if i in special else 1 for i in range(len(tokens))])
    w.add_eos_token_id(tokenizer.eos_token_id)
    w.add_pad_token_id(tokenizer.pad_token_id)
    w.add_chat_template(CHAT_TEMPLATE)

    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        w.add_tensor(f"blk.{i}.attn_norm.weight", sd[p + "input_layernorm.weight"])
        w.add_tensor(f"blk.{i}.attn_q.weight", _permute(sd[p + "self_attn.q_proj.weight"], cfg.num_attention_heads))
        w.add_tensor(f"blk.{i}.attn_k.weight", _permute(sd[p + "self_attn.k_proj.weight"], cfg.num_key_value_heads))
        w.add_tensor(f"blk.{i}.attn_v.weight", sd[p + "self_attn.v_proj.weight"])
        w.add_tensor(f"blk.{i}.attn_output.weight", sd[p + "self_attn.o_proj.weight"])
        w.add_tensor(f"blk.{i}.ffn_norm.weight", sd[p + "post_attention_layernorm.weight"])
        w.add_tensor(f"blk.{i}.ffn_gate.weight", sd[p + "mlp.gate_proj.weight"])
        w.add_tensor(f"blk.{i}.ffn_up.weight", sd[p + "mlp.up_proj.weight"])
        w.add_tensor(f"blk.{i}.ffn_down.weight", sd[p + "mlp.down_proj.weight"])
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    if not tied:
        w.add_tensor("output.weight", sd["lm_head.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path, model, tokenizer
