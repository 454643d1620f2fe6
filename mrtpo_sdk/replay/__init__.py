"""Replay: the behavior policy reads each sampled completion under ``P_all`` and ``P_\\k`` (spec §3–§4).

No generation happens here: for every replayed response–reward pair ``(i, k)`` the frozen behavior policy (the
model state that sampled the group, run under ``torch.no_grad``) scores the **sampled completion token ids**
(never re-tokenized text) after both contexts, and the per-token Jensen–Shannon distance between the two
next-token distributions over the full vocabulary gives ``q_{k,t}``. This is the only cost MRTPO adds over GDPO;
docs/performance.md measures it.

One module per job:

* :mod:`~mrtpo_sdk.replay.relevance`: :func:`replay_relevance`, the replay itself (contexts, hidden states, head,
  JS distance), and its result :class:`ReplayOutput`.
* :mod:`~mrtpo_sdk.replay.prefix`: the shared-prefix planner (:func:`completion_hidden_states`: each shared
  prefix's key/value cache computed once, token-budgeted batches; :func:`prefix_cache_support`).
* :mod:`~mrtpo_sdk.replay.decoder_head`: the model's decoder and LM head (:func:`final_hidden_states`,
  :func:`model_head`: logits by the model's own forward with its decoder patched, in float32;
  :func:`lm_head_projection`: the head formula).
* :mod:`~mrtpo_sdk.replay.sync`: equal decoder pass counts across the ranks of sharded (FSDP) training.
"""

from __future__ import annotations

from .decoder_head import final_hidden_states, lm_head_projection, model_head
from .prefix import DEFAULT_REPLAY_MAX_TOKENS, completion_hidden_states, prefix_cache_support
from .relevance import ReplayOutput, replay_relevance

__all__ = [
    "DEFAULT_REPLAY_MAX_TOKENS",
    "ReplayOutput",
    "completion_hidden_states",
    "final_hidden_states",
    "lm_head_projection",
    "model_head",
    "prefix_cache_support",
    "replay_relevance",
]
