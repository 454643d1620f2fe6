"""Policies for MRTPO training: the embedded, offline-buildable default policy (:mod:`.default`), and any
causal LM from a run folder, a model folder or the Hub (:func:`load_pretrained`, :mod:`.pretrained`)."""

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
from .pretrained import load_pretrained

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
    "load_pretrained",
    "read_manifest",
    "warm_start",
]
