"""Which response-reward pairs are replayed. Source: spec §2.

A pair (i, k) is replayed only if reward k varies within i's group and the information block ``Z_k(i)`` is
non-empty; every other pair keeps uniform token weight 1. Pairs of a reward with weight ``w_k == 0`` are not
replayed either (their advantage is 0, so a replay could not change anything).
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import as_bool_mask, require_ndim, require_tensor

__all__ = ["replay_pairs"]


def replay_pairs(varies: Tensor, block_nonempty: Tensor, weights: Tensor | None = None) -> Tensor:
    """Replay mask: ``varies & block_nonempty & (w_k != 0)``. Source: spec §2.

    Args:
        varies: ``(N, K)`` bool (or 0/1 integer) tensor, the second output of
            :func:`~mrtpo_sdk.algorithms.group_reward_advantages` (reward k varies in i's group, r_ik not NaN).
        block_nonempty: ``(N, K)`` bool (or 0/1) tensor, True iff block ``Z_k(i)`` is non-empty.
        weights: optional ``(K,)`` reward weights (tensor or sequence of floats); pairs of a reward with
            ``w_k == 0`` are not replayed. Default: all rewards count.

    Returns:
        ``(N, K)`` bool tensor on the device of ``varies``.

    Raises:
        ValueError: wrong ranks/shapes, masks with values other than 0/1, non-finite or mis-shaped weights.
    """
    require_tensor("varies", varies)
    require_ndim("varies", varies, 2, "(N, K)")
    v = as_bool_mask("varies", varies, tuple(varies.shape), "(N, K)")
    b = as_bool_mask("block_nonempty", block_nonempty, tuple(varies.shape), "(N, K)").to(v.device)
    out = v & b
    if weights is not None:
        w = torch.as_tensor(weights, device=v.device)
        if w.dim() != 1 or w.shape[0] != v.shape[1]:
            raise ValueError(f"weights must have shape (K,)=({v.shape[1]},), got {tuple(w.shape)}")
        if torch.is_floating_point(w) and not bool(torch.isfinite(w).all()):
            raise ValueError("weights contains NaN or inf")
        out = out & (w != 0)[None, :]
    return out
