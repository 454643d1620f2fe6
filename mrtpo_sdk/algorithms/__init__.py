"""MRTPO as pure tensor functions (spec §1-§5: the sections of docs/algorithm.md, after arXiv:2610.21439).

Pipeline per training step::

    A, varies = group_reward_advantages(rewards, group_size, weights)          # (N, K), spec §1
    replayed  = replay_pairs(varies, block_nonempty, weights)                  # (N, K), spec §2
    q[:, k]   = chunked_js_distance(h_all, h_minus_k, mask, lm_head)           # (N, T) per reward, spec §4
    beta_n    = smoothstep_beta(step, beta, warmup_steps)                      # spec §5
    A_tok, stats = mrtpo_token_advantages(A, q, mask, replayed, beta_n)        # (N, T), spec §5

Credit concentration (where the credit goes, for ``explain`` and ``concentration/<reward>``) is in
:mod:`.concentration`.

Baselines: :func:`grpo_advantages` and :func:`gdpo_advantages` return ``(N,)`` response-level advantages.
"""

from .advantages import gdpo_advantages, group_reward_advantages, grpo_advantages
from .js import chunked_js_distance, js_distance_from_logits
from .mrtpo import MRTPOStats, mrtpo_token_advantages
from .redistribution import normalize_token_advantages, redistribute, second_moment_cap
from .replay_selection import replay_pairs
from .weights import smoothstep_beta, token_weights

__all__ = [
    "MRTPOStats",
    "chunked_js_distance",
    "gdpo_advantages",
    "group_reward_advantages",
    "grpo_advantages",
    "js_distance_from_logits",
    "mrtpo_token_advantages",
    "normalize_token_advantages",
    "redistribute",
    "replay_pairs",
    "second_moment_cap",
    "smoothstep_beta",
    "token_weights",
]
