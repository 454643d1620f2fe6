"""MRTPO per-token advantages: weights -> redistribution -> second-moment cap -> batch normalization.
Source: spec §5, the paper's core equations and Appendix D (docs/algorithm.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
from torch import Tensor

from ._checks import as_bool_mask, require_float, require_ndim
from .redistribution import normalize_with_std, redistribute, second_moment_cap_terms
from .weights import token_weights

__all__ = ["MRTPOStats", "mrtpo_token_advantages"]


@dataclass(frozen=True)
class MRTPOStats:
    """Diagnostics of one :func:`mrtpo_token_advantages` call (Python scalars, ready for logging).

    Attributes:
        replayed_fraction: ``num_replayed / num_pairs`` (local to this rank; 0 if there are no pairs).
        cap_factor: the cap ``s`` in ``[0, 1]`` (global when ``all_reduce`` is given); 1 = no capping.
        token_std: unbiased std of ``Stilde`` over the valid tokens (global when ``all_reduce`` is given).
        num_replayed: number of replayed pairs ``(i, k)`` on this rank.
        num_pairs: ``B * K``, all response-reward pairs on this rank (including pairs of responses or rewards that
            could never be replayed).
        beta_n: the redistribution strength used.
        num_tokens: valid tokens on this rank.
        credit_second_moment: ``sum_j T_j U_j^2`` (global when ``all_reduce`` is given).
        redistribution_second_moment: ``sum_{j,t} D_{j,t}^2`` before the cap (global when ``all_reduce`` is given).
    """

    replayed_fraction: float
    cap_factor: float
    token_std: float
    num_replayed: int
    num_pairs: int
    beta_n: float = 0.0
    num_tokens: int = 0
    credit_second_moment: float = 0.0
    redistribution_second_moment: float = 0.0

    def to_dict(self) -> dict[str, float]:
        """All fields as a ``{name: value}`` dict (for loggers)."""
        return asdict(self)


def mrtpo_token_advantages(advantages: Tensor, q: Tensor, mask: Tensor, replayed: Tensor, beta_n: float,
                           eps: float = 1e-4,
                           all_reduce: Callable[[Tensor], Tensor] | None = None) -> tuple[Tensor, MRTPOStats]:
    """Per-token MRTPO advantages ``A_{i,t}``. Source: spec §5, the paper's Appendix D (docs/algorithm.md).

    Steps: ``w = token_weights(q, mask, replayed, beta_n)``; ``S, U, D = redistribute(advantages, w, mask)``;
    ``s = second_moment_cap(U, D, mask)``; ``Stilde = U + s D``; ``A = Stilde / (std_batch(Stilde) + eps)``.
    With ``beta_n == 0`` (or nothing replayed) this is exactly ``U`` broadcast over the valid tokens divided by
    its token std + eps.

    Args:
        advantages: ``(B, K)`` floating per-reward advantages (from
            :func:`~mrtpo_sdk.algorithms.group_reward_advantages`), finite.
        q: ``(B, K, T)`` floating JS distances in ``[0, 1]``; values at padding and of non-replayed pairs are ignored.
        mask: ``(B, T)`` bool or 0/1 tensor of valid completion tokens.
        replayed: ``(B, K)`` bool or 0/1 replay mask (from :func:`~mrtpo_sdk.algorithms.replay_pairs`).
        beta_n: strength in ``[0, 1]`` (from :func:`~mrtpo_sdk.algorithms.smoothstep_beta`).
        eps: positive constant added to the token std.
        all_reduce: optional cross-rank sum, used by the cap (1 call) and the normalization (2 calls).

    Returns:
        ``(A, stats)``: ``A`` ``(B, T)`` per-token advantages, 0 at padding, float64 if any input is float64 else
        float32; ``stats`` an :class:`MRTPOStats`.

    Raises:
        ValueError: any shape / value error of the composed functions (B, K, T must agree across inputs).
    """
    require_float("advantages", advantages)
    require_ndim("advantages", advantages, 2, "(B, K)")
    require_float("q", q)
    require_ndim("q", q, 3, "(B, K, T)")
    if q.shape[:2] != advantages.shape:
        raise ValueError(f"q (B, K, T) and advantages (B, K) disagree: {tuple(q.shape)} vs "
                         f"{tuple(advantages.shape)}")
    b, k, t = q.shape
    valid = as_bool_mask("mask", mask, (b, t), "(B, T)").to(q.device)
    rep = as_bool_mask("replayed", replayed, (b, k), "(B, K)").to(q.device)
    w = token_weights(q, valid, rep, beta_n)
    _, u, d = redistribute(advantages, w, valid)
    s, num, den = second_moment_cap_terms(u, d, valid, all_reduce)
    zero = torch.zeros((), dtype=d.dtype, device=d.device)
    s_tilde = torch.where(valid, u[:, None] + s * d, zero)
    out, std = normalize_with_std(s_tilde, valid, eps, all_reduce)
    num_replayed = int(rep.sum())
    num_pairs = b * k
    stats = MRTPOStats(
        replayed_fraction=num_replayed / num_pairs if num_pairs else 0.0,
        cap_factor=float(s),
        token_std=float(std),
        num_replayed=num_replayed,
        num_pairs=num_pairs,
        beta_n=float(beta_n),
        num_tokens=int(valid.sum()),
        credit_second_moment=float(num),
        redistribution_second_moment=float(den),
    )
    return out, stats
