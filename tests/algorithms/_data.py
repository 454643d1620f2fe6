"""Random test inputs shared by the algorithm tests (torch tensors + the same data as Python lists)."""

from __future__ import annotations

import torch


def random_rewards(seed: int, num_groups: int, group_size: int, k: int, nan_frac: float = 0.15,
                   dtype=torch.float64) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    r = torch.rand(num_groups * group_size, k, generator=g, dtype=torch.float64)
    # binary-ish rewards too (typical verifiers), and a constant column in some groups
    r = torch.where(torch.rand(r.shape, generator=g, dtype=torch.float64) < 0.3, (r > 0.5).double(), r)
    if k > 1:
        r[:group_size, 1] = 0.2  # zero-variance group for reward 1
    nan = torch.rand(r.shape, generator=g, dtype=torch.float64) < nan_frac
    r[nan] = float("nan")
    if r.shape[0] > 2:
        r[2, :] = float("nan")  # an unscorable row
    return r.to(dtype)


def random_mask(seed: int, b: int, t: int) -> torch.Tensor:
    """Right-padded mask with varying lengths, including an empty row and a single-token row when b >= 3."""
    g = torch.Generator().manual_seed(seed + 1000)
    lengths = torch.randint(1, t + 1, (b,), generator=g)
    if b >= 3:
        lengths[0] = t
        lengths[1] = 0
        lengths[2] = 1
    return torch.arange(t)[None, :] < lengths[:, None]


def random_token_inputs(seed: int, b: int = 6, k: int = 3, t: int = 9, dtype=torch.float64):
    """(advantages (B,K), q (B,K,T), mask (B,T) bool, replayed (B,K) bool)."""
    g = torch.Generator().manual_seed(seed)
    adv = torch.randn(b, k, generator=g, dtype=torch.float64)
    q = torch.rand(b, k, t, generator=g, dtype=torch.float64)
    q = torch.where(torch.rand(q.shape, generator=g, dtype=torch.float64) < 0.2, torch.zeros_like(q), q)
    mask = random_mask(seed, b, t)
    replayed = torch.rand(b, k, generator=g) < 0.6
    if b >= 4:
        q[3, 0] = 0.0  # qbar == 0 for a replayed pair
        replayed[3, 0] = True
    q = torch.where(mask[:, None, :], q, torch.full_like(q, 7.0))  # garbage at padding must be ignored
    return adv.to(dtype), q.to(dtype), mask, replayed


def to_list(x: torch.Tensor):
    return x.tolist()
