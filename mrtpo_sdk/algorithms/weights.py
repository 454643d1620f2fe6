"""Replay weights: the smoothstep warm-up of ``beta_n`` and the per-token weights ``w_{k,t}``.
Source: spec §5, the paper ("beta_n warms up with smoothstep", "Weight averages stay at 1 within each response").

    qbar_k  = mean over the response's valid tokens of q_{k,t}
    w_{k,t} = (1 - beta_n) + beta_n * q_{k,t} / qbar_k
    w_{k,t} = 1  if the pair is not replayed (empty block, reward does not vary, w_k = 0) or qbar_k == 0
"""

from __future__ import annotations

import operator

import torch
from torch import Tensor

from ._checks import as_bool_mask, compute_dtype, require_float, require_float_scalar, require_ndim

__all__ = ["smoothstep_beta", "token_weights"]


def smoothstep_beta(step: int, beta: float = 0.5, warmup_steps: int = 0) -> float:
    """Warm-up of the redistribution strength. Source: spec §5.

    ``beta_n = beta * (3 u^2 - 2 u^3)`` with ``u = clip(step / warmup_steps, 0, 1)``; ``warmup_steps == 0``
    returns ``beta`` for every step. So ``beta_0 = 0``, ``beta_{N/2} = beta / 2``, ``beta_n = beta`` for
    ``n >= N``; negative steps give 0.

    Args:
        step: optimizer step ``n`` (int, unitless).
        beta: final strength in ``[0, 1]`` (default 0.5; ``beta > 1`` would allow negative token weights).
        warmup_steps: warm-up length ``N >= 0`` in optimizer steps.

    Returns:
        ``beta_n`` as a Python float in ``[0, beta]``.

    Raises:
        ValueError: non-integer ``step`` / ``warmup_steps``, ``warmup_steps < 0``, ``beta`` outside ``[0, 1]``.
    """
    try:
        step = operator.index(step)
        warmup_steps = operator.index(warmup_steps)
    except TypeError as exc:
        raise ValueError(f"step and warmup_steps must be ints, got {step!r}, {warmup_steps!r}") from exc
    beta = require_float_scalar("beta", beta, lo=0.0, hi=1.0)
    if warmup_steps < 0:
        raise ValueError(f"warmup_steps must be >= 0, got {warmup_steps}")
    if warmup_steps == 0:
        return beta
    u = min(max(step / warmup_steps, 0.0), 1.0)
    return beta * (3.0 * u * u - 2.0 * u * u * u)


def token_weights(q: Tensor, mask: Tensor, replayed: Tensor, beta_n: float) -> Tensor:
    """Per-token weights ``w_{k,t}`` of every response-reward pair. Source: spec §5.

    Args:
        q: ``(B, K, T)`` floating JS distances (from :func:`~mrtpo_sdk.algorithms.js_distance_from_logits`),
            non-negative and finite at valid positions; values at padding are ignored (may be anything).
        mask: ``(B, T)`` bool or 0/1 tensor, True at valid completion tokens (``T_i`` = number of them).
        replayed: ``(B, K)`` bool or 0/1 tensor from :func:`~mrtpo_sdk.algorithms.replay_pairs`.
        beta_n: current strength in ``[0, 1]`` (see :func:`smoothstep_beta`).

    Returns:
        ``(B, K, T)`` weights (dimensionless), dtype float64 if ``q`` is float64 else float32. Exactly 1 where the
        pair is not replayed, where ``qbar == 0`` (identical distributions on every token, or no valid token),
        for ``beta_n == 0``, and **at padding positions** (w is 1 there; downstream functions mask padding out).
        For replayed pairs the mean of ``w`` over the response's valid tokens is 1 up to rounding, and
        ``w >= 1 - beta_n >= 0``.

    Raises:
        ValueError: wrong shapes, non-float ``q``, negative / non-finite ``q`` at valid positions, mask values
            other than 0/1, ``beta_n`` outside ``[0, 1]``.
    """
    require_float("q", q)
    require_ndim("q", q, 3, "(B, K, T)")
    b, k, t = q.shape
    valid = as_bool_mask("mask", mask, (b, t), "(B, T)").to(q.device)
    rep = as_bool_mask("replayed", replayed, (b, k), "(B, K)").to(q.device)
    beta_n = require_float_scalar("beta_n", beta_n, lo=0.0, hi=1.0)
    cdt = compute_dtype(q)
    v3 = valid[:, None, :]
    zero = torch.zeros((), dtype=cdt, device=q.device)
    qv = torch.where(v3, q.to(cdt), zero)
    if qv.numel() and not bool((torch.isfinite(qv) & (qv >= 0)).all()):
        raise ValueError("q must be finite and >= 0 at valid positions")
    cnt = valid.sum(dim=-1).to(cdt)[:, None, None]
    qbar = qv.sum(dim=-1, keepdim=True) / cnt.clamp(min=1)
    pos = qbar > 0
    qbar_safe = torch.where(pos, qbar, torch.ones_like(qbar))
    active = rep[:, :, None] & pos & v3
    w = (1.0 - beta_n) + beta_n * (qv / qbar_safe)
    return torch.where(active, w, torch.ones_like(w))
