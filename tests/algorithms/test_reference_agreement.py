"""Every public function against the independent float64 scalar reference (max abs error <= 1e-12)."""

from __future__ import annotations

import math

import pytest
import torch

import mrtpo_sdk.algorithms as alg

from . import reference as ref
from ._data import random_mask, random_rewards, random_token_inputs

TOL = 1e-12
SEEDS = [0, 1, 2, 3, 4]


def _maxerr(a: torch.Tensor, b) -> float:
    bt = torch.tensor(b, dtype=torch.float64)
    assert a.shape == bt.shape
    return float((a.double() - bt).abs().max()) if a.numel() else 0.0


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("group_size", [1, 2, 4, 7])
def test_group_advantages_match_reference(seed, group_size):
    r = random_rewards(seed, num_groups=3, group_size=group_size, k=3)
    w = torch.tensor([1.0, 0.5, 2.0], dtype=torch.float64)
    for weights in (None, w):
        adv, varies = alg.group_reward_advantages(r, group_size, weights)
        radv, rvaries = ref.group_reward_advantages(r.tolist(), group_size, None if weights is None else w.tolist())
        assert adv.dtype == torch.float64
        assert _maxerr(adv, radv) <= TOL
        assert varies.tolist() == rvaries
    if group_size > 1:
        assert varies.any()  # the test data really exercises the non-trivial path


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("fn", ["grpo_advantages", "gdpo_advantages"])
def test_grpo_gdpo_match_reference(seed, fn):
    r = random_rewards(seed, num_groups=4, group_size=4, k=3)
    w = [1.0, 0.0, 0.7]
    for weights in (None, w):
        got = getattr(alg, fn)(r, 4, None if weights is None else torch.tensor(weights, dtype=torch.float64))
        exp = getattr(ref, fn)(r.tolist(), 4, weights)
        assert got.shape == (16,)
        assert _maxerr(got, exp) <= TOL
        assert got[2] == 0.0  # unscorable row
        assert got.abs().max() > 0.1


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_js_matches_reference(seed, temperature):
    g = torch.Generator().manual_seed(seed)
    v = 37
    lp = torch.randn(5, v, generator=g, dtype=torch.float64) * 3
    lm = lp + torch.randn(5, v, generator=g, dtype=torch.float64) * torch.tensor([0.0, 1e-3, 0.3, 3.0, 30.0],
                                                                                  dtype=torch.float64)[:, None]
    lp[2, :5] = -math.inf  # masked vocabulary entries, in one or both
    lm[2, 3:8] = -math.inf
    got = alg.js_distance_from_logits(lp, lm, temperature)
    exp = [ref.js_distance(lp[i].tolist(), lm[i].tolist(), temperature) for i in range(5)]
    assert got.dtype == torch.float64
    assert _maxerr(got, exp) <= TOL
    assert got[0] == 0.0 and got[4] > 0.5


@pytest.mark.parametrize("seed", SEEDS)
def test_token_weights_match_reference(seed):
    _, q, mask, rep = random_token_inputs(seed)
    for beta_n in (0.0, 0.3, 1.0):
        got = alg.token_weights(q, mask, rep, beta_n)
        exp = ref.token_weights(q.tolist(), mask.tolist(), rep.tolist(), beta_n)
        assert _maxerr(got, exp) <= TOL


@pytest.mark.parametrize("seed", SEEDS)
def test_redistribution_cap_normalization_match_reference(seed):
    adv, q, mask, rep = random_token_inputs(seed)
    w = alg.token_weights(q, mask, rep, 0.5)
    s, u, d = alg.redistribute(adv, w, mask)
    rs, ru, rd = ref.redistribute(adv.tolist(), w.tolist(), mask.tolist())
    assert max(_maxerr(s, rs), _maxerr(u, ru), _maxerr(d, rd)) <= TOL
    cap = alg.second_moment_cap(u, d, mask)
    assert cap.dim() == 0
    assert abs(float(cap) - ref.second_moment_cap(ru, rd, mask.tolist())) <= TOL
    st = u[:, None] + cap * d
    got = alg.normalize_token_advantages(st, mask)
    exp = ref.normalize_token_advantages(st.tolist(), mask.tolist())
    assert _maxerr(got, exp) <= TOL


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("cancel", [False, True])
def test_mrtpo_matches_reference(seed, cancel):
    adv, q, mask, rep = random_token_inputs(seed, b=7, k=3, t=11)
    if cancel:  # rewards pulling in opposite directions: small U, large D, so the cap is active
        adv[:, 2] = -adv[:, :2].sum(dim=1) + 0.05 * adv[:, 2]
        rep[:] = True
    got, stats = alg.mrtpo_token_advantages(adv, q, mask, rep, 0.8)
    exp, s, std = ref.mrtpo_token_advantages(adv.tolist(), q.tolist(), mask.tolist(), rep.tolist(), 0.8)
    assert _maxerr(got, exp) <= TOL
    assert abs(stats.cap_factor - s) <= TOL and abs(stats.token_std - std) <= TOL
    assert stats.num_replayed == int(rep.sum()) and stats.num_pairs == 21
    if cancel:
        assert s < 1.0


@pytest.mark.parametrize("seed", SEEDS)
def test_pipeline_end_to_end_reference(seed):
    """rewards -> group advantages -> replay -> JS from logits -> MRTPO tokens, all against the reference."""
    g = torch.Generator().manual_seed(seed)
    group_size, k, t, v = 4, 2, 6, 11
    r = random_rewards(seed, 2, group_size, k, nan_frac=0.1)
    n = r.shape[0]
    mask = random_mask(seed, n, t)
    blocks = torch.rand(n, k, generator=g) < 0.7
    lp = torch.randn(n, k, t, v, generator=g, dtype=torch.float64)
    lm = lp + 0.5 * torch.randn(n, k, t, v, generator=g, dtype=torch.float64)
    adv, varies = alg.group_reward_advantages(r, group_size)
    rep = alg.replay_pairs(varies, blocks)
    q = torch.where(mask[:, None, :], alg.js_distance_from_logits(lp, lm), torch.zeros(()))
    got, _ = alg.mrtpo_token_advantages(adv, q, mask, rep, alg.smoothstep_beta(3, 0.5, 10))

    radv, rvar = ref.group_reward_advantages(r.tolist(), group_size)
    rrep = [[rvar[i][j] and bool(blocks[i, j]) for j in range(k)] for i in range(n)]
    rq = [[[ref.js_distance(lp[i, j, s].tolist(), lm[i, j, s].tolist()) if mask[i, s] else 0.0 for s in range(t)]
           for j in range(k)] for i in range(n)]
    exp, _, _ = ref.mrtpo_token_advantages(radv, rq, mask.tolist(), rrep, ref.smoothstep_beta(3, 0.5, 10))
    assert _maxerr(got, exp) <= TOL
