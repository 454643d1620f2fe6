"""Mean-preserving redistribution of response credit over tokens, its second-moment cap, and the final batch
token normalization. Source: spec §5, the paper's Appendix D (docs/algorithm.md).

    U_i          = sum_k A_{i,k}
    S_{i,t}      = sum_k A_{i,k} w_{k,t}
    D_{i,t}      = S_{i,t} - U_i                  (sums to 0 over the valid tokens of i)
    s            = min(1, sqrt(sum_j T_j U_j^2 / sum_{j,t} D_{j,t}^2))
    Stilde_{i,t} = U_i + s * D_{i,t}
    A_{i,t}      = Stilde_{i,t} / (std over all valid tokens of the batch of Stilde + eps)

Distributed training: the batch sums (the two second moments, and the count / sum / squared deviations of the
normalization) are passed to ``all_reduce``, a callable that returns the element-wise sum of its tensor argument
over all ranks (``lambda t: accelerator.reduce(t, "sum")``; an in-place reducer that returns ``None``, like
``torch.distributed.all_reduce``, is accepted too). Every rank must call these functions the same number of times.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ._checks import as_bool_mask, compute_dtype, require_float, require_float_scalar, require_ndim

__all__ = [
    "normalize_token_advantages",
    "normalize_with_std",
    "redistribute",
    "second_moment_cap",
    "second_moment_cap_terms",
]

AllReduce = Callable[[Tensor], Tensor]


def _reduce(stats: Tensor, all_reduce: AllReduce | None) -> Tensor:
    if all_reduce is None:
        return stats
    if not callable(all_reduce):
        raise ValueError("all_reduce must be callable or None")
    out = all_reduce(stats)
    if out is None:  # in-place reducer (torch.distributed.all_reduce)
        out = stats
    if not isinstance(out, Tensor) or out.shape != stats.shape:
        raise ValueError(f"all_reduce must return a tensor of shape {tuple(stats.shape)}")
    return out.to(stats.dtype)


def redistribute(advantages: Tensor, w: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Spread each response's per-reward advantages over its tokens with the weights ``w``. Source: spec §5.

    Args:
        advantages: ``(B, K)`` floating per-reward advantages ``A_{i,k}`` (advantage units), finite.
        w: ``(B, K, T)`` floating token weights from :func:`~mrtpo_sdk.algorithms.token_weights`, finite at
            valid positions.
        mask: ``(B, T)`` bool or 0/1 tensor of valid completion tokens.

    Returns:
        ``(S, U, D)``: ``S`` ``(B, T)`` token credit ``sum_k A_k w_{k,t}``, ``U`` ``(B,)`` response credit
        ``sum_k A_k``, ``D`` ``(B, T)`` redistribution ``S - U``. ``S`` and ``D`` are 0 at padding.
        ``D`` is computed as ``sum_k A_k (w_{k,t} - 1)`` (mathematically ``S - U``), so pairs with weight exactly 1
        contribute exactly 0 and ``S == U`` exactly when nothing is redistributed. dtype float64 if any input is
        float64, else float32. The mean of ``S`` over a response's valid tokens is ``U`` up to rounding.

    Raises:
        ValueError: shape mismatches, non-float inputs, non-finite values, bad mask values.
    """
    require_float("advantages", advantages)
    require_float("w", w)
    require_ndim("advantages", advantages, 2, "(B, K)")
    require_ndim("w", w, 3, "(B, K, T)")
    b, k = advantages.shape
    if w.shape[:2] != (b, k):
        raise ValueError(f"w must have shape (B, K, T) with (B, K)={(b, k)}, got {tuple(w.shape)}")
    t = w.shape[2]
    valid = as_bool_mask("mask", mask, (b, t), "(B, T)").to(w.device)
    cdt = compute_dtype(advantages, w)
    a = advantages.to(device=w.device, dtype=cdt)
    if a.numel() and not bool(torch.isfinite(a).all()):
        raise ValueError("advantages contains NaN or inf")
    zero = torch.zeros((), dtype=cdt, device=w.device)
    wm = torch.where(valid[:, None, :], w.to(cdt), torch.ones((), dtype=cdt, device=w.device))
    if wm.numel() and not bool(torch.isfinite(wm).all()):
        raise ValueError("w contains NaN or inf at valid positions")
    u = a.sum(dim=1)
    d = (a[:, :, None] * (wm - 1.0)).sum(dim=1)
    d = torch.where(valid, d, zero)
    s = torch.where(valid, u[:, None] + d, zero)
    return s, u, d


def second_moment_cap_terms(u: Tensor, d: Tensor, mask: Tensor,
                            all_reduce: AllReduce | None) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`second_moment_cap` with its two sums: ``(s, sum_j T_j U_j^2, sum_{j,t} D_{j,t}^2)``, three 0-dim
    tensors (float64 if ``u`` or ``d`` is float64 else float32). Arguments and errors as
    :func:`second_moment_cap`."""
    require_float("U", u)
    require_float("D", d)
    require_ndim("U", u, 1, "(B,)")
    require_ndim("D", d, 2, "(B, T)")
    if d.shape[0] != u.shape[0]:
        raise ValueError(f"U (B,) and D (B, T) disagree on B: {tuple(u.shape)} vs {tuple(d.shape)}")
    valid = as_bool_mask("mask", mask, tuple(d.shape), "(B, T)").to(d.device)
    cdt = compute_dtype(u, d)
    zero = torch.zeros((), dtype=cdt, device=d.device)
    uu = u.to(device=d.device, dtype=cdt)
    dd = torch.where(valid, d.to(cdt), zero)
    if (uu.numel() and not bool(torch.isfinite(uu).all())) or (dd.numel() and not bool(torch.isfinite(dd).all())):
        raise ValueError("U or D contains NaN or inf (at valid positions)")
    tj = valid.sum(dim=1).to(cdt)
    stats = torch.stack([(tj * uu * uu).sum(), (dd * dd).sum()])
    stats = _reduce(stats, all_reduce)
    num, den = stats[0], stats[1]
    ratio = torch.sqrt(num / torch.where(den > 0, den, torch.ones_like(den)))
    s = torch.where(den > 0, ratio.clamp(max=1.0), torch.ones_like(den))
    return s, num, den


def second_moment_cap(U: Tensor, D: Tensor, mask: Tensor,
                      all_reduce: Callable[[Tensor], Tensor] | None = None) -> Tensor:
    """Cap factor of the redistribution. Source: spec §5, the paper's Appendix D (docs/algorithm.md).

    ``s = min(1, sqrt(sum_j T_j U_j^2 / sum_{j,t} D_{j,t}^2))`` with the sums over the valid tokens of the batch
    (``T_j`` = valid tokens of response j). ``s = 1`` if ``sum D^2 == 0``. This is one scalar that rescales the
    whole redistribution, not a clamp of individual values; afterwards
    ``sum (s D)^2 <= min(sum T U^2, sum D^2)`` (up to one rounding).

    Args:
        U: ``(B,)`` floating response credit from :func:`redistribute`.
        D: ``(B, T)`` floating redistribution from :func:`redistribute` (padding values are ignored).
        mask: ``(B, T)`` bool or 0/1 tensor of valid tokens.
        all_reduce: optional cross-rank sum; called exactly once with the 1-D tensor
            ``[sum T U^2, sum D^2]`` (local sums) and must return the global sums.

    Returns:
        0-dim tensor ``s`` in ``[0, 1]``, float64 if ``U`` or ``D`` is float64 else float32.

    Raises:
        ValueError: shape mismatches, non-float inputs, NaN/inf, bad mask values, bad ``all_reduce`` output.
    """
    s, _, _ = second_moment_cap_terms(U, D, mask, all_reduce)
    return s


def normalize_with_std(s_tilde: Tensor, mask: Tensor, eps: float,
                       all_reduce: AllReduce | None) -> tuple[Tensor, Tensor]:
    """:func:`normalize_token_advantages` with the std it divided by: ``((B, T) advantages, 0-dim std)``.
    Arguments and errors as :func:`normalize_token_advantages`."""
    require_float("S_tilde", s_tilde)
    require_ndim("S_tilde", s_tilde, 2, "(B, T)")
    eps = require_float_scalar("eps", eps, lo=0.0, lo_open=True)
    valid = as_bool_mask("mask", mask, tuple(s_tilde.shape), "(B, T)").to(s_tilde.device)
    cdt = compute_dtype(s_tilde)
    zero = torch.zeros((), dtype=cdt, device=s_tilde.device)
    x = torch.where(valid, s_tilde.to(cdt), zero)
    if x.numel() and not bool(torch.isfinite(x).all()):
        raise ValueError("S_tilde contains NaN or inf at valid positions")
    first = _reduce(torch.stack([valid.sum().to(cdt), x.sum()]), all_reduce)
    count, total = first[0], first[1]
    mean = total / count.clamp(min=1)
    dev = torch.where(valid, x - mean, zero)
    ssd = _reduce((dev * dev).sum().reshape(1), all_reduce)[0]
    var = torch.where(count > 1, ssd / (count - 1).clamp(min=1), zero)
    std = var.clamp(min=0).sqrt()
    return torch.where(valid, x / (std + eps), zero), std


def normalize_token_advantages(S_tilde: Tensor, mask: Tensor, eps: float = 1e-4,
                               all_reduce: Callable[[Tensor], Tensor] | None = None) -> Tensor:
    """Final per-token advantages ``A_{i,t} = Stilde_{i,t} / (std + eps)``. Source: spec §5, the paper's Appendix D
    ("Normalize by batch standard deviation over valid tokens after capping").

    ``std`` is the unbiased (Bessel) standard deviation of ``Stilde`` over all valid tokens of the batch (all
    ranks if ``all_reduce`` is given). The numerator is **not** mean-subtracted. With a single valid token the
    std is 0 and the result is ``Stilde / eps``.

    Args:
        S_tilde: ``(B, T)`` floating capped token credit ``U + s D`` (padding values are ignored).
        mask: ``(B, T)`` bool or 0/1 tensor of valid tokens.
        eps: positive constant added to the std.
        all_reduce: optional cross-rank sum. Two-pass for accuracy: called with ``[count, sum]`` (1-D, 2 elements),
            then with ``[sum of squared deviations from the global mean]`` (1-D, 1 element).

    Returns:
        ``(B, T)`` advantages, 0 at padding; float64 if ``S_tilde`` is float64 else float32.

    Raises:
        ValueError: bad shapes, non-float input, NaN/inf at valid positions, ``eps <= 0``, bad mask values.
    """
    out, _ = normalize_with_std(S_tilde, mask, eps, all_reduce)
    return out
