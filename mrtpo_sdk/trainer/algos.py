"""The algorithms ``--algo`` names and how each turns several rewards into one group-normalized advantage.

Torch-free, so that ``mrtpo-sdk compare`` can name and check algorithms without loading the trainer. Source: spec §1
(GRPO normalizes the summed reward within the group; GDPO and MRTPO normalize each reward, then sum) and TRL's
``GRPOConfig.multi_objective_aggregation`` values of the same two modes.
"""

from __future__ import annotations

__all__ = ["ALGORITHMS", "aggregation_of"]

#: The algorithms ``mrtpo-sdk train --algo`` accepts, the default first.
ALGORITHMS: tuple[str, ...] = ("mrtpo", "gdpo", "grpo")

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
