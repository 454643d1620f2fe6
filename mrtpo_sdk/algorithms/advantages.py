"""Response-level advantages from several rewards: per-reward group normalization, GRPO and GDPO.

Source: spec §1 (per-reward group advantages, GDPO), TRL 1.16 ``GRPOTrainer`` aggregation modes
``sum_then_normalize`` (GRPO) and ``normalize_then_sum`` (GDPO) for the NaN / unscorable conventions.

Conventions shared by every function here:

* ``rewards`` has shape ``(N, K)``: ``N = num_groups * group_size`` responses, ``K`` rewards. Consecutive
  rows ``[g*group_size, (g+1)*group_size)`` form one group (the samples of one prompt).
* ``NaN`` means the verifier abstained ("not applicable"); it is excluded from every statistic and its
  advantage is exactly 0. ``+-inf`` is rejected.
* Means and standard deviations are NaN-aware; the std is unbiased (Bessel), like ``torch.std`` and TRL's
  ``nanstd``. A group (or batch) whose std is ``<= std_floor`` or that has fewer than two non-NaN values does
  not vary and gets advantages that are **exactly** 0 (no ``residue / eps`` blow-up).
* Arithmetic runs in the input dtype, upcast to at least float32 (float16/bfloat16 inputs are computed in
  float32); outputs have the input dtype.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from ._checks import compute_dtype, require_float, require_float_scalar, require_ndim

__all__ = ["group_reward_advantages", "grpo_advantages", "gdpo_advantages"]


def _check_rewards(rewards: Tensor, group_size: int) -> tuple[int, int]:
    require_float("rewards", rewards)
    require_ndim("rewards", rewards, 2, "(N, K)")
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
        raise ValueError(f"group_size must be a positive int, got {group_size!r}")
    n, k = rewards.shape
    if n % group_size != 0:
        raise ValueError(f"rewards has N={n} rows, not a multiple of group_size={group_size}")
    if rewards.numel() and bool(torch.isinf(rewards).any()):
        raise ValueError("rewards contains +-inf (use NaN for 'verifier abstained')")
    return n, k


def _check_weights(weights: Tensor | Sequence[float] | None, k: int, device: torch.device,
                   dtype: torch.dtype) -> Tensor | None:
    if weights is None:
        return None
    w = torch.as_tensor(weights, device=device)
    if w.dim() != 1 or w.shape[0] != k:
        raise ValueError(f"weights must have shape (K,)=({k},), got {tuple(w.shape)}")
    w = w.to(dtype)
    if not bool(torch.isfinite(w).all()):
        raise ValueError("weights contains NaN or inf")
    return w


def _check_floor_eps(std_floor: float, eps: float) -> None:
    require_float_scalar("std_floor", std_floor, lo=0.0)
    require_float_scalar("eps", eps, lo=0.0)


def group_reward_advantages(rewards: Tensor, group_size: int, weights: Tensor | None = None,
                            std_floor: float = 1e-6, eps: float = 1e-4) -> tuple[Tensor, Tensor]:
    """Per-reward group-normalized advantages ``A_{i,k}`` (GDPO's first stage). Source: spec §1.

    ``A_{i,k} = w_k * (r_{i,k} - mean_g r_{.,k}) / (std_g r_{.,k} + eps)``, statistics over the non-NaN
    members of response i's group ``g``.

    Args:
        rewards: ``(N, K)`` floating tensor (any float dtype), reward units (usually in [0, 1]).
            ``N = num_groups * group_size``; consecutive rows form a group. NaN = verifier abstained.
        group_size: responses per prompt (``G``), a positive int dividing ``N``.
        weights: optional ``(K,)`` reward weights ``w_k`` (default all 1), finite; any sequence of floats is
            accepted too.
        std_floor: a group whose unbiased std is ``<= std_floor`` (or that has < 2 non-NaN values) does not vary.
        eps: added to the std in the denominator (TRL uses 1e-4).

    Returns:
        ``(A, varies)``: ``A`` is ``(N, K)`` with the dtype of ``rewards``; ``varies`` is ``(N, K)`` bool,
        True iff reward k varies within i's group and ``r_{i,k}`` is not NaN. Where ``varies`` is False,
        ``A`` is exactly 0 (the weight does not affect ``varies``; ``w_k = 0`` gives ``A = 0``).

    Raises:
        ValueError: non-float or non-2-D ``rewards``, ``N % group_size != 0``, ``+-inf`` rewards, weights of the
            wrong shape or non-finite, negative ``std_floor`` / ``eps``.
    """
    n, k = _check_rewards(rewards, group_size)
    _check_floor_eps(std_floor, eps)
    cdt = compute_dtype(rewards)
    w = _check_weights(weights, k, rewards.device, cdt)
    r = rewards.to(cdt).reshape(n // group_size, group_size, k)
    valid = ~torch.isnan(r)
    cnt = valid.sum(dim=1, keepdim=True)
    zero = torch.zeros((), dtype=cdt, device=r.device)
    mean = torch.where(valid, r, zero).sum(dim=1, keepdim=True) / cnt.clamp(min=1).to(cdt)
    dev = torch.where(valid, r - mean, zero)
    var = (dev * dev).sum(dim=1, keepdim=True) / (cnt - 1).clamp(min=1).to(cdt)
    std = var.sqrt()
    varies = valid & (cnt >= 2) & (std > std_floor)
    num = dev if w is None else w * dev
    adv = torch.where(varies, num / (std + eps), zero)
    return adv.reshape(n, k).to(rewards.dtype), varies.reshape(n, k)


def grpo_advantages(rewards: Tensor, group_size: int, weights: Tensor | None = None,
                    std_floor: float = 1e-6, eps: float = 1e-4) -> Tensor:
    """GRPO advantages: weighted sum of the rewards, then group normalization. Source: spec §1, TRL
    ``sum_then_normalize``.

    ``s_i = sum_k w_k r_{i,k}`` over the non-NaN rewards of row i; a row whose rewards are all NaN is
    *unscorable*: it is excluded from its group's statistics and its advantage is 0. Then
    ``A_i = (s_i - mean_g s) / (std_g s + eps)`` with the same floor rule as :func:`group_reward_advantages`.

    Args:
        rewards: ``(N, K)`` floating tensor, NaN = abstained. group_size, weights ``(K,)``, std_floor, eps: as in
            :func:`group_reward_advantages`.

    Returns:
        ``(N,)`` tensor with the dtype of ``rewards``; exactly 0 for unscorable rows and non-varying groups.

    Raises:
        ValueError: as :func:`group_reward_advantages`.
    """
    n, k = _check_rewards(rewards, group_size)
    _check_floor_eps(std_floor, eps)
    cdt = compute_dtype(rewards)
    w = _check_weights(weights, k, rewards.device, cdt)
    r = rewards.to(cdt)
    valid = ~torch.isnan(r)
    scorable = valid.any(dim=1)
    zero = torch.zeros((), dtype=cdt, device=r.device)
    wr = r if w is None else r * w
    s = torch.where(valid, wr, zero).sum(dim=1)
    s = torch.where(scorable, s, torch.full_like(s, float("nan")))
    adv, _ = group_reward_advantages(s[:, None], group_size, None, std_floor, eps)
    return adv[:, 0].to(rewards.dtype)


def gdpo_advantages(rewards: Tensor, group_size: int, weights: Tensor | None = None,
                    std_floor: float = 1e-6, eps: float = 1e-4) -> Tensor:
    """GDPO advantages: per-reward group normalization, sum, then batch normalization. Source: spec §1,
    TRL ``normalize_then_sum``.

    ``U_i = sum_k A_{i,k}`` (``A`` from :func:`group_reward_advantages`, weights included), then
    ``(U_i - mean(U)) / (std(U) + eps)`` over the ``N`` responses of the batch, unbiased std, with unscorable
    rows (all rewards NaN) excluded from mean/std and given 0. If fewer than two rows are scorable or
    ``std(U) <= std_floor`` the result is exactly 0 everywhere.

    Args:
        rewards: ``(N, K)`` floating tensor, NaN = abstained. group_size, weights ``(K,)``, std_floor, eps: as in
            :func:`group_reward_advantages`.

    Returns:
        ``(N,)`` tensor with the dtype of ``rewards`` (the response-level advantage GDPO broadcasts to tokens).

    Raises:
        ValueError: as :func:`group_reward_advantages`.
    """
    a, _ = group_reward_advantages(rewards, group_size, weights, std_floor, eps)
    cdt = compute_dtype(rewards)
    u = a.to(cdt).sum(dim=1)
    scorable = (~torch.isnan(rewards)).any(dim=1)
    zero = torch.zeros((), dtype=cdt, device=u.device)
    cnt = int(scorable.sum())
    if cnt < 2:
        return torch.zeros_like(u).to(rewards.dtype)
    us = torch.where(scorable, u, zero)
    mean = us.sum() / cnt
    dev = torch.where(scorable, u - mean, zero)
    std = ((dev * dev).sum() / (cnt - 1)).sqrt()
    if not bool(std > std_floor):
        return torch.zeros_like(u).to(rewards.dtype)
    return torch.where(scorable, dev / (std + eps), zero).to(rewards.dtype)
