"""Tiny GGUF files written in the test with ``gguf``'s writer, from tiny configs and a byte-level BPE tokenizer built in
the test (no download): what ``--model PATH.gguf`` reads.

* :func:`write_tiny_llama_gguf`: a Llama file whose tensors are written as llama.cpp's converter writes them (F32,
  ``attn_q``/``attn_k`` rows permuted for its rotary layout), so transformers' GGUF loader, which undoes that
  permutation, must give back the model written.
* :func:`write_tiny_gguf`: one architecture of :data:`ARCHITECTURES` (every causal one transformers' loader reads
  that can be written tiny): the metadata from transformers' own GGUF config table, the tensor names from its
  GGUF name map, each tensor stored as its reader expects (the inverse of its tensor processors: Llama's q/k
  permutation, Gemma's and Nemotron's norms plus one, GPT-2's transposes, Bloom's fused q/k/v, MoE experts split
  into gate and up, Mamba's and LFM2's squeezed convolutions). :data:`NOT_WRITTEN` says why the others are not.

``chat_template=None`` writes a file without ``tokenizer.chat_template``: a base model.
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


def write_tiny_llama_gguf(path: Path, seed: int = 0, architecture: str = "llama", tied: bool = True,
                          chat_template: str | None = CHAT_TEMPLATE):
    """Write a tiny Llama GGUF (F32) to ``path``; returns ``(path, the transformers model written, tokenizer)``.

    ``architecture`` other than ``llama`` writes the same tensors under another ``general.architecture`` (to test
    an architecture the loader does not read); ``chat_template=None``: no chat template (a base model)."""
    import gguf

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(CORPUS, vocab_size=300)
    tokenizer.chat_template = chat_template
    model = tiny_llama(len(tokenizer), seed=seed, tied=tied)
    cfg = model.config

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
    w.add_vocab_size(len(tokenizer))
    _add_tokenizer(w, tokenizer)
    w.add_eos_token_id(tokenizer.eos_token_id)
    w.add_pad_token_id(tokenizer.pad_token_id)
    if chat_template is not None:
        w.add_chat_template(chat_template)

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


def _add_tokenizer(w, tokenizer) -> None:
    """The byte-level BPE ``tokenizer`` as GGUF metadata (``tokenizer.ggml.model = gpt2``: tokens, merges, types)."""
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    tokens = [None] * len(tokenizer)
    for tok, idx in spec["model"]["vocab"].items():
        tokens[idx] = tok
    for added in spec.get("added_tokens", []):
        tokens[added["id"]] = added["content"]
    special = {a["id"] for a in spec.get("added_tokens", []) if a.get("special")}
    w.add_tokenizer_model("gpt2")
    w.add_token_list(tokens)
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]])
    w.add_token_types([3 if i in special else 1 for i in range(len(tokens))])


_TINY = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
             max_position_embeddings=256)


def _configs() -> dict[str, tuple[str, str, dict]]:
    """Architecture -> (the file's ``general.architecture``, the transformers config class, its tiny settings).

    Settings a GGUF file does not store keep their defaults (the loader reads them back as defaults): Qwen3's
    ``head_dim`` 128, Qwen2-MoE's expert widths, GPT-2's ``n_positions``."""
    moe = dict(num_experts=4, num_experts_per_tok=2)
    return {
        "llama": ("llama", "LlamaConfig", dict(_TINY, head_dim=8)),
        # llama.cpp writes Mistral models as architecture llama; transformers reads them back as Llama
        "mistral": ("llama", "MistralConfig", dict(_TINY, head_dim=8)),
        "qwen2": ("qwen2", "Qwen2Config", dict(_TINY)),
        "qwen2_moe": ("qwen2moe", "Qwen2MoeConfig", dict(_TINY, **moe)),
        "qwen3": ("qwen3", "Qwen3Config", dict(_TINY, head_dim=128)),
        "qwen3_moe": ("qwen3moe", "Qwen3MoeConfig", dict(_TINY, head_dim=8, norm_topk_prob=True, **moe)),
        "phi3": ("phi3", "Phi3Config", dict(_TINY)),
        "gemma2": ("gemma2", "Gemma2Config", dict(_TINY, head_dim=8)),
        "gemma3": ("gemma3", "Gemma3TextConfig", dict(_TINY, head_dim=8)),
        "starcoder2": ("starcoder2", "Starcoder2Config", dict(_TINY)),
        "stablelm": ("stablelm", "StableLmConfig", dict(_TINY)),
        "nemotron": ("nemotron", "NemotronConfig", dict(_TINY)),
        "falcon": ("falcon", "FalconConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4)),
        "bloom": ("bloom", "BloomConfig", dict(hidden_size=32, n_layer=2, n_head=4)),
        "gpt2": ("gpt2", "GPT2Config", dict(n_embd=32, n_layer=2, n_head=4)),
        "mamba": ("mamba", "MambaConfig", dict(hidden_size=32, num_hidden_layers=2, state_size=4,
                                               intermediate_size=64)),
        "lfm2": ("lfm2", "Lfm2Config", dict(_TINY, layer_types=["conv", "full_attention"],
                                            block_auto_adjust_ff_dim=False)),
        "minimax_m2": ("minimax-m2", "MiniMaxM2Config", dict(_TINY, head_dim=8, rotary_dim=8, num_local_experts=4,
                                                             num_experts_per_tok=2)),
    }


#: The architectures :func:`write_tiny_gguf` writes.
ARCHITECTURES = list(_configs())

#: The architectures transformers' GGUF loader lists that are not written tiny here, and why.
NOT_WRITTEN = {
    "gpt_oss": "gguf-py's name map has no names for its fused expert tensors and their biases (llama.cpp's converter "
               "splits and interleaves them, and ships them as MXFP4)",
    "gemma4": "the loader's metadata table has no key for its per-layer input embeddings, so they keep Gemma 4's "
              "262,144 x 256 per layer: 538 MB for two tiny layers (read back right: the writer handles it)",
    "qwen35": "hybrid linear attention: llama.cpp tiles its value heads and offsets its norms, which transformers' "
              "second GGUF reader undoes with its own renamings, not the name map this writer inverts",
    "qwen35moe": "as qwen35, with experts",
    "deci": "transformers has no built-in model class for it (remote code only): an error line, tested as such",
    "t5": "an encoder-decoder model: an error line, tested as such",
    "umt5": "an encoder-decoder model: an error line, tested as such",
}


def _stored(arch_file: str, name: str, w: np.ndarray, cfg) -> np.ndarray:
    """Tensor ``name`` as the GGUF file stores it: the inverse of what transformers' reader does to it."""
    if arch_file == "llama" and (".attn_q." in name or ".attn_k." in name):
        return _permute(w, cfg.num_attention_heads if ".attn_q." in name else cfg.num_key_value_heads)
    if arch_file in ("gemma2", "gemma3", "nemotron") and "norm.weight" in name:
        return w + 1  # llama.cpp stores these norms as 1 + w
    if arch_file == "gpt2" and any(k in name for k in ("attn_qkv.weight", "ffn_down.weight", "ffn_up.weight",
                                                        "attn_output.weight")):
        return np.ascontiguousarray(w.T)  # GPT-2's Conv1D weights, transposed
    if arch_file == "bloom" and "attn_qkv" in name:  # per-head [q, k, v] -> all q, all k, all v
        heads, width = cfg.n_head, cfg.hidden_size
        if w.ndim == 2:
            return w.reshape(heads, 3, width // heads, width).swapaxes(0, 1).reshape(3 * width, width)
        return w.reshape(heads, 3, width // heads).swapaxes(0, 1).reshape(-1)
    if (arch_file == "mamba" and "ssm_conv1d.weight" in name) or (arch_file == "lfm2" and "shortconv.conv.weight"
                                                                   in name):
        return np.ascontiguousarray(w[:, 0, :])  # (channels, 1, kernel) -> (channels, kernel)
    if arch_file == "mamba" and "ssm_a" in name:
        return -np.exp(w)  # A, not A_log
    if "ffn_gate_inp_shexp" in name:
        return w.reshape(-1)
    return w


def write_tiny_gguf(path: Path, architecture: str, *, chat_template: str | None = CHAT_TEMPLATE, seed: int = 0):
    """Write a tiny F32 GGUF of ``architecture`` (:data:`ARCHITECTURES`) to ``path``; returns ``(path, the
    transformers model written, tokenizer)``. ``chat_template=None``: a base model (no chat template)."""
    import gguf
    import transformers
    from transformers import AutoModelForCausalLM
    from transformers.integrations.ggml import GGUF_CONFIG_MAPPING
    from transformers.modeling_gguf_pytorch_utils import TENSOR_PROCESSORS, TensorProcessor, get_gguf_hf_weights_map

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(CORPUS, vocab_size=300)
    tokenizer.chat_template = chat_template
    arch_file, config_class, settings = _configs()[architecture]
    ids = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
               pad_token_id=tokenizer.pad_token_id)
    cfg = getattr(transformers, config_class)(vocab_size=len(tokenizer), **ids, **settings)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg).eval()
    with torch.no_grad():  # norms away from 1, so that a lost norm weight (or a lost offset) shows
        for name, p in model.named_parameters():
            if "norm" in name or ".ln" in name:
                p.uniform_(0.5, 1.5)

    w = gguf.GGUFWriter(str(path), arch_file)
    w.add_name(f"tiny-{architecture}-test")
    for key, attribute in GGUF_CONFIG_MAPPING.get(architecture, GGUF_CONFIG_MAPPING.get(arch_file, {})).items():
        value = getattr(cfg, attribute, None) if attribute else None
        if value is None or (architecture == "lfm2" and key == "attention.head_count_kv"):
            continue
        if isinstance(value, bool):
            w.add_bool(f"{arch_file}.{key}", value)
        elif isinstance(value, int):
            w.add_uint32(f"{arch_file}.{key}", value)
        elif isinstance(value, float):
            w.add_float32(f"{arch_file}.{key}", value)
    if architecture == "lfm2":  # one key-value head count per layer, 0 on the convolution layers
        w.add_array("lfm2.attention.head_count_kv",
                    [cfg.num_key_value_heads if t == "full_attention" else 0 for t in cfg.layer_types])
        w.add_float32("lfm2.attention.layer_norm_rms_epsilon", cfg.norm_eps)
        w.add_float32("lfm2.rope.freq_base", float(cfg.rope_parameters["rope_theta"]))
    _add_tokenizer(w, tokenizer)
    w.add_bos_token_id(tokenizer.bos_token_id) if tokenizer.bos_token_id is not None else None
    w.add_eos_token_id(tokenizer.eos_token_id)
    w.add_pad_token_id(tokenizer.pad_token_id)
    if arch_file in ("gemma2", "gemma3"):  # transformers reads this vocabulary with GemmaTokenizer, without the
        w.add_unk_token_id(tokenizer.pad_token_id)  # byte mapping: a character it lacks (a newline) is unknown
    if chat_template is not None:
        w.add_chat_template(chat_template)

    processor = TENSOR_PROCESSORS.get(arch_file, TensorProcessor)(config=cfg.to_dict())
    gguf_type = {"mistral": "llama", "gpt_oss": "gpt-oss", "minimax_m2": "minimax-m2"}.get(cfg.model_type)
    names = get_gguf_hf_weights_map(model, processor, model_type=gguf_type)  # GGUF name -> transformers name
    tied = getattr(cfg, "tie_word_embeddings", False)
    for hf_name, tensor in model.state_dict().items():
        if tied and hf_name == "lm_head.weight":
            continue
        values = tensor.detach().float().numpy()
        targets = [g for g, h in names.items() if h == hf_name]
        if hf_name.endswith("experts.gate_up_proj"):  # (experts, 2 x width, hidden): gate half, then up half
            half = values.shape[1] // 2
            w.add_tensor(next(g for g in targets if "_gate_" in g) + ".weight", np.ascontiguousarray(values[:, :half]))
            w.add_tensor(next(g for g in targets if "_up_" in g) + ".weight", np.ascontiguousarray(values[:, half:]))
            continue
        assert len(targets) == 1, f"{architecture}: {hf_name} has GGUF names {targets}"
        target = targets[0] if targets[0].endswith((".weight", ".bias")) else targets[0] + ".weight"
        w.add_tensor(target, _stored(arch_file, target, values, cfg))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path, model, tokenizer
