"""Policies for MRTPO training: the embedded, offline-buildable default policy."""

from .default import (
    CHAT_TEMPLATE,
    EOS_TOKEN,
    IM_END,
    IM_START,
    PAD_TOKEN,
    DefaultPolicyConfig,
    build_model,
    build_tokenizer,
    cache_key,
    completion_nll,
    default_cache_dir,
    default_policy,
    load_policy,
    read_manifest,
    warm_start,
)

__all__ = [
    "CHAT_TEMPLATE",
    "EOS_TOKEN",
    "IM_END",
    "IM_START",
    "PAD_TOKEN",
    "DefaultPolicyConfig",
    "build_model",
    "build_tokenizer",
    "cache_key",
    "completion_nll",
    "default_cache_dir",
    "default_policy",
    "load_policy",
    "read_manifest",
    "warm_start",
]
