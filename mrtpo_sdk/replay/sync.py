"""Equal decoder pass counts across the ranks of sharded (FSDP) training.

The trainer hands the replay whole parameters (TRL's ``unwrap_model_for_generation`` / ``summon_full_params``, see
``mrtpo_sdk.trainer.trainer._replay_model``); under FSDP, where each layer's forward is a collective, every rank must
run the same number of decoder passes. The replay counts its own passes first, asks ``sync_passes`` for the largest
count over the ranks, and the less busy ranks make up the difference with one-token dummy passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .decoder_head import final_hidden_states

__all__ = ["dummy_pass_count", "run_dummy_passes"]


def dummy_pass_count(sync_passes: Callable[[int], int] | None, passes: int) -> int:
    """How many dummy passes this rank runs so that every rank runs as many as the busiest one."""
    if sync_passes is None:
        return 0
    most = int(sync_passes(passes))
    if most < passes:
        raise RuntimeError(f"sync_passes returned {most} < this rank's {passes} passes")
    return most - passes


def run_dummy_passes(model: Any, n: int, device: torch.device) -> None:
    """``n`` one-token decoder passes whose outputs are discarded: they only take part in the collectives (the
    all-gather of every sharded layer) that the busiest rank's real passes need."""
    ids = torch.zeros((1, 1), dtype=torch.long, device=device)
    for _ in range(n):
        final_hidden_states(model, ids, None)
