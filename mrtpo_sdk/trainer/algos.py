"""The algorithms ``--algo`` names and how each turns several rewards into one group-normalized advantage.

Torch-free, so that ``mrtpo-sdk compare`` can name and check algorithms without loading the trainer. Source: spec §1
(GRPO normalizes the summed reward within the group; GDPO and MRTPO normalize each reward, then sum) and TRL's
``GRPOConfig.multi_objective_aggregation`` values of the same two modes.
"""

from __future__ import annotations

__all__ = ["ALGORITHMS", "MRTPO_ONLY_SETTINGS", "aggregation_of", "unused_settings"]

#: The algorithms ``mrtpo-sdk train --algo`` accepts, the default first.
ALGORITHMS: tuple[str, ...] = ("mrtpo", "gdpo", "grpo")

#: The ``MRTPOConfig`` fields only the ``mrtpo`` algo reads: the token weights' mixing (spec §5) and the replay's
#: budgets (spec §3–4). GDPO and GRPO neither replay nor weight tokens, so these take no effect with them.
MRTPO_ONLY_SETTINGS: tuple[str, ...] = (
    "mrtpo_beta", "beta_warmup_steps", "replay_max_tokens", "js_chunk_size", "replay_batch_size",
)

_AGGREGATION = {"mrtpo": "normalize_then_sum", "gdpo": "normalize_then_sum", "grpo": "sum_then_normalize"}


def aggregation_of(algo: str) -> str:
    """TRL's ``multi_objective_aggregation`` value that ``algo`` implies: ``"sum_then_normalize"`` for GRPO,
    ``"normalize_then_sum"`` for GDPO and MRTPO (spec §1).

    Raises:
        ValueError: ``algo`` is not one of :data:`ALGORITHMS`.
    """
    try:
        return _AGGREGATION[algo]
    except (KeyError, TypeError):
        raise ValueError(f"algo must be one of {ALGORITHMS}, got {algo!r}") from None


def unused_settings(algo: str) -> tuple[str, ...]:
    """The ``MRTPOConfig`` fields ``algo`` does not read: :data:`MRTPO_ONLY_SETTINGS` for GDPO and GRPO, none for
    MRTPO.

    Raises:
        ValueError: ``algo`` is not one of :data:`ALGORITHMS`.
    """
    aggregation_of(algo)  # the same check and message
    return () if algo == "mrtpo" else MRTPO_ONLY_SETTINGS
