"""Credit concentration: the smallest share of a response's tokens that holds a given fraction of a reward's distance.

The paper's "where the credit goes" figures: 80% of a reward's JS distance ``q_{k,t}`` lies on 26–29% of the tokens
for SQL, 13–15% for tool calling, and an end-phrase constraint puts 40% of its distance on 4% of the tokens
(spec "Reported results"). A block that informs about a few tokens gives a small share; a block that moves every
token a little (or nothing at all) gives a share near 1.

Credit precision asks whether that distance lies on the tokens that decide the reward (those a verifier's
``deciding=`` function locates): :func:`deciding_share` is the share of a reward's distance on them, and
:func:`credit_lift` divides it by their share of the tokens. Uniform credit gives a lift of 1; a lift of 3 puts
three times the distance on the deciding tokens that their number alone would.

Pure tensor functions, no model: used by ``mrtpo-sdk explain`` and logged during training as
``concentration/<reward>`` in ``metrics.jsonl`` (both through :mod:`mrtpo_sdk.credit_page`).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["credit_lift", "deciding_share", "mean_concentration", "token_share_for_mass"]


def token_share_for_mass(q: Tensor, mask: Tensor, replayed: Tensor | None = None, mass: float = 0.8) -> Tensor:
    """Smallest share of a response's valid tokens whose distances sum to at least ``mass`` of the total.

    For each response–reward pair ``(i, k)``: sort ``q_{k,t}`` over the valid tokens in decreasing order, take the
    fewest tokens ``n`` whose sum reaches ``mass * sum_t q_{k,t}``, and return ``n / T_i``.

    Example: ``q = [0.5, 0.1, 0.3, 0.1]`` (total 1.0): the two largest tokens hold 0.8, so the share is 2/4 = 0.5.

    Args:
        q: ``(B, K, T)`` non-negative JS distances (:class:`~mrtpo_sdk.replay.ReplayOutput` ``.q``).
        mask: ``(B, T)`` bool or 0/1, valid completion tokens.
        replayed: optional ``(B, K)`` bool; pairs that were not replayed give NaN.
        mass: the fraction of the distance to hold, in ``(0, 1]`` (default 0.8, as in the paper).

    Returns:
        ``(B, K)`` float64 shares in ``(0, 1]``; NaN where the pair was not replayed, the response has no valid
        token, or its total distance is 0 (no credit to place).

    Raises:
        ValueError: wrong shapes, or ``mass`` outside ``(0, 1]``.
    """
    b, k, _ = _check_shapes(q, mask, replayed)
    if not (0.0 < mass <= 1.0):
        raise ValueError(f"mass must be in (0, 1], got {mass}")
    valid, qv = _valid_q(q, mask)
    total = qv.sum(dim=-1)  # (B, K)
    ordered = qv.sort(dim=-1, descending=True).values
    cum = ordered.cumsum(dim=-1)
    # tolerance for float sums: the last needed token may reach the target only up to rounding
    target = (mass * total - 1e-12 * total.clamp(min=1.0))[..., None]
    n = (cum < target).sum(dim=-1) + 1  # fewest tokens reaching the target
    count = mask.bool().sum(dim=-1).to(torch.float64)[:, None].expand(b, k)
    share = n.to(torch.float64) / count.clamp(min=1)
    bad = (total <= 0) | (count == 0)
    if replayed is not None:
        bad = bad | ~replayed.bool().to(q.device)
    return torch.where(bad, torch.full_like(share, math.nan), share.clamp(max=1.0))


def _check_shapes(q: Tensor, mask: Tensor, replayed: Tensor | None, deciding: Tensor | None = None) -> tuple:
    """``(B, K, T)`` of ``q``, after checking the other arguments' shapes against it."""
    if q.dim() != 3:
        raise ValueError(f"q must be (B, K, T), got shape {tuple(q.shape)}")
    b, k, t = q.shape
    if tuple(mask.shape) != (b, t):
        raise ValueError(f"mask must be (B, T) = ({b}, {t}), got {tuple(mask.shape)}")
    if replayed is not None and tuple(replayed.shape) != (b, k):
        raise ValueError(f"replayed must be (B, K) = ({b}, {k}), got {tuple(replayed.shape)}")
    if deciding is not None and tuple(deciding.shape) != (b, k, t):
        raise ValueError(f"deciding must be (B, K, T) = ({b}, {k}, {t}), got {tuple(deciding.shape)}")
    return b, k, t


def _valid_q(q: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """``(valid, q)``, both ``(B, K, T)``: the valid tokens of every pair, and ``q`` in float64, clamped at 0 and
    zero on the other tokens."""
    b, k, t = q.shape
    valid = mask.bool().to(q.device)[:, None, :].expand(b, k, t)
    qv = torch.where(valid, q.detach().to(torch.float64).clamp(min=0), torch.zeros((), dtype=torch.float64))
    return valid, qv


def _deciding_parts(q: Tensor, mask: Tensor, deciding: Tensor, replayed: Tensor | None):
    """``(share, token_share, undefined)``, each ``(B, K)``: the distance share and the token share of the deciding
    tokens among the valid ones, and where the share is undefined (not replayed, no valid or no deciding token,
    zero distance)."""
    _check_shapes(q, mask, replayed, deciding)
    valid, qv = _valid_q(q, mask)
    dec = deciding.bool().to(q.device) & valid
    total = qv.sum(dim=-1)
    on_deciding = torch.where(dec, qv, torch.zeros((), dtype=torch.float64)).sum(dim=-1)
    count = valid.sum(dim=-1).to(torch.float64)
    n_dec = dec.sum(dim=-1).to(torch.float64)
    undefined = (total <= 0) | (count == 0) | (n_dec == 0)
    if replayed is not None:
        undefined = undefined | ~replayed.bool().to(q.device)
    share = on_deciding / total.clamp(min=torch.finfo(torch.float64).tiny)
    return share.clamp(0.0, 1.0), n_dec / count.clamp(min=1), undefined


def deciding_share(q: Tensor, mask: Tensor, deciding: Tensor, replayed: Tensor | None = None) -> Tensor:
    """Share of a reward's distance on the tokens that decide it: ``sum_{t deciding} q_{k,t} / sum_t q_{k,t}``.

    Example: ``q = [0.5, 0.1, 0.3, 0.1]`` with tokens 0 and 2 deciding: ``0.8 / 1.0 = 0.8``.

    Args:
        q: ``(B, K, T)`` non-negative JS distances (:class:`~mrtpo_sdk.replay.ReplayOutput` ``.q``).
        mask: ``(B, T)`` bool or 0/1, valid completion tokens.
        deciding: ``(B, K, T)`` bool or 0/1, the tokens that decide reward ``k`` of response ``i`` (all false: not
            located); only valid tokens count.
        replayed: optional ``(B, K)`` bool; pairs that were not replayed give NaN.

    Returns:
        ``(B, K)`` float64 shares in ``[0, 1]``; NaN where the pair was not replayed, no valid token is deciding, or
        the total distance is 0.

    Raises:
        ValueError: wrong shapes.
    """
    share, _, undefined = _deciding_parts(q, mask, deciding, replayed)
    return torch.where(undefined, torch.full_like(share, math.nan), share)


def credit_lift(q: Tensor, mask: Tensor, deciding: Tensor, replayed: Tensor | None = None) -> Tensor:
    """:func:`deciding_share` divided by the deciding tokens' share of the valid tokens: 1 for uniform credit.

    Example: ``q = [0.5, 0.1, 0.3, 0.1]`` with tokens 0 and 2 deciding: ``0.8 / (2 / 4) = 1.6``.

    Args:
        q, mask, deciding, replayed: as for :func:`deciding_share`.

    Returns:
        ``(B, K)`` float64 lifts in ``[0, T_i]``; NaN where :func:`deciding_share` is NaN or every valid token is
        deciding (the ratio is 1 whatever the credit: it says nothing).

    Raises:
        ValueError: wrong shapes.
    """
    share, token_share, undefined = _deciding_parts(q, mask, deciding, replayed)
    undefined = undefined | (token_share >= 1.0)
    lift = share / token_share.clamp(min=torch.finfo(torch.float64).tiny)
    return torch.where(undefined, torch.full_like(lift, math.nan), lift)


def mean_concentration(share: Tensor) -> list[float | None]:
    """Per reward ``k``: the mean of ``share[:, k]`` over the pairs where it is defined (not NaN), or ``None``.

    Args:
        share: ``(B, K)`` from :func:`token_share_for_mass`.

    Returns:
        K floats (share of tokens, in (0, 1]) or ``None`` for a reward with no replayed pair.
    """
    out: list[float | None] = []
    for k in range(share.shape[1]):
        col = share[:, k]
        col = col[~torch.isnan(col)]
        out.append(float(col.mean()) if col.numel() else None)
    return out
