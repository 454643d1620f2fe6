"""MRTPO composition (spec §5): reduces to GDPO-style broadcast at beta_n = 0, edge cases, distributed sums."""

from __future__ import annotations

import threading

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import mrtpo_sdk.algorithms as alg
from mrtpo_sdk.algorithms import (
    MRTPOStats,
    group_reward_advantages,
    mrtpo_token_advantages,
    normalize_token_advantages,
    redistribute,
    replay_pairs,
    second_moment_cap,
    token_weights,
)

from ._data import random_token_inputs


def test_public_api_exports():
    expected = {"smoothstep_beta", "group_reward_advantages", "grpo_advantages", "gdpo_advantages", "replay_pairs",
                "js_distance_from_logits", "chunked_js_distance", "token_weights", "redistribute",
                "second_moment_cap", "normalize_token_advantages", "MRTPOStats", "mrtpo_token_advantages"}
    assert set(alg.__all__) == expected
    for name in expected:
        assert getattr(alg, name).__doc__ and "spec" in getattr(alg, name).__doc__ or name == "MRTPOStats"


@pytest.mark.parametrize("seed", range(3))
def test_beta_zero_is_broadcast_over_token_std(seed):
    adv, q, mask, rep = random_token_inputs(seed)
    out, stats = mrtpo_token_advantages(adv, q, mask, rep, 0.0)
    u = adv.sum(1)
    ub = torch.where(mask, u[:, None].expand_as(out), torch.zeros_like(out))
    std = u[:, None].expand_as(out)[mask].std()
    assert (out - ub / (std + 1e-4)).abs().max() <= 1e-12
    assert stats.cap_factor == 1.0 and stats.redistribution_second_moment == 0.0
    # exactly a constant per response
    for i in range(out.shape[0]):
        vals = out[i][mask[i]]
        assert vals.numel() == 0 or torch.equal(vals, vals[:1].expand_as(vals))


@pytest.mark.parametrize("seed", range(3))
def test_composition_equals_public_steps(seed):
    adv, q, mask, rep = random_token_inputs(seed)
    out, stats = mrtpo_token_advantages(adv, q, mask, rep, 0.6, eps=1e-3)
    w = token_weights(q, mask, rep, 0.6)
    _, u, d = redistribute(adv, w, mask)
    s = second_moment_cap(u, d, mask)
    exp = normalize_token_advantages(torch.where(mask, u[:, None] + s * d, torch.zeros_like(d)), mask, eps=1e-3)
    assert torch.equal(out, exp)
    assert isinstance(stats, MRTPOStats)
    assert stats.num_pairs == adv.numel() and stats.num_replayed == int(rep.sum())
    assert stats.replayed_fraction == pytest.approx(int(rep.sum()) / adv.numel())
    assert stats.num_tokens == int(mask.sum()) and stats.beta_n == 0.6
    assert set(stats.to_dict()) >= {"replayed_fraction", "cap_factor", "token_std", "num_replayed", "num_pairs"}


def test_single_reward_keeps_sign_on_every_token():
    adv, q, mask, rep = random_token_inputs(11, k=1)
    out, _ = mrtpo_token_advantages(adv, q, mask, torch.ones_like(rep), 1.0)
    sign = torch.sign(adv[:, 0])[:, None].expand_as(out)
    assert ((torch.sign(out) == sign) | (out == 0))[mask].all()


def test_zero_variance_groups_give_zero_and_no_nan():
    r = torch.full((8, 2), 0.2)
    adv, varies = group_reward_advantages(r, 4)
    rep = replay_pairs(varies, torch.ones(8, 2, dtype=torch.bool))
    mask = torch.ones(8, 5, dtype=torch.bool)
    q = torch.rand(8, 2, 5)
    out, stats = mrtpo_token_advantages(adv, q, mask, rep, 0.5)
    assert torch.equal(out, torch.zeros(8, 5))
    assert stats.num_replayed == 0 and stats.token_std == 0.0 and stats.cap_factor == 1.0


@pytest.mark.parametrize("t", [1, 4])
def test_degenerate_shapes_finite(t):
    g = torch.Generator().manual_seed(0)
    adv = torch.randn(4, 2, generator=g)
    q = torch.rand(4, 2, t, generator=g)
    rep = torch.ones(4, 2, dtype=torch.bool)
    masks = [torch.zeros(4, t, dtype=torch.bool),  # all padding
             torch.ones(4, t, dtype=torch.bool)]  # T=1 and full
    single = torch.zeros(4, t, dtype=torch.bool)
    single[:, 0] = True  # single-token responses
    masks.append(single)
    one = torch.zeros(4, t, dtype=torch.bool)
    one[2, 0] = True  # a single valid token in the whole batch
    masks.append(one)
    for mask in masks:
        out, stats = mrtpo_token_advantages(adv, q, mask, rep, 0.5)
        assert torch.isfinite(out).all() and (out[~mask] == 0).all()
        assert stats.num_tokens == int(mask.sum())
    # with single-token responses nothing can be redistributed: w == 1 exactly
    w = token_weights(q, single, rep, 0.5)
    assert torch.equal(w[:, :, 0], torch.ones(4, 2))


def test_empty_batch():
    out, stats = mrtpo_token_advantages(torch.zeros(0, 2), torch.zeros(0, 2, 3), torch.zeros(0, 3, dtype=torch.bool),
                                        torch.zeros(0, 2, dtype=torch.bool), 0.5)
    assert out.shape == (0, 3) and stats.num_pairs == 0 and stats.replayed_fraction == 0.0


def test_float32_close_to_float64():
    adv, q, mask, rep = random_token_inputs(5)
    o64, _ = mrtpo_token_advantages(adv, q, mask, rep, 0.5)
    o32, _ = mrtpo_token_advantages(adv.float(), q.float(), mask, rep, 0.5)
    assert o32.dtype == torch.float32
    assert (o32.double() - o64).abs().max() <= 1e-5 * (1 + o64.abs().max())


def test_validation():
    adv, q, mask, rep = random_token_inputs(6)
    with pytest.raises(ValueError, match="disagree"):
        mrtpo_token_advantages(adv[:, :2], q, mask, rep, 0.5)
    with pytest.raises(ValueError, match="beta_n"):
        mrtpo_token_advantages(adv, q, mask, rep, -0.5)
    with pytest.raises(ValueError, match="eps"):
        mrtpo_token_advantages(adv, q, mask, rep, 0.5, eps=-1.0)
    with pytest.raises(ValueError, match="mask"):
        mrtpo_token_advantages(adv, q, mask.long() * 3, rep, 0.5)


def test_distributed_shards_match_full_batch():
    """Two simulated ranks (threads) with a summing all_reduce give the full-batch result on their shards."""
    adv, q, mask, rep = random_token_inputs(8, b=8, k=3, t=10)
    full, full_stats = mrtpo_token_advantages(adv, q, mask, rep, 0.7)
    barrier = threading.Barrier(2)
    slots: list[torch.Tensor | None] = [None, None]
    results: dict[int, tuple] = {}
    errors: list[BaseException] = []

    def make_reduce(rank):
        def reduce(t):
            slots[rank] = t.clone()
            barrier.wait()
            total = slots[0] + slots[1]
            barrier.wait()
            return total
        return reduce

    def worker(rank, sl):
        try:
            results[rank] = mrtpo_token_advantages(adv[sl], q[sl], mask[sl], rep[sl], 0.7,
                                                   all_reduce=make_reduce(rank))
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(0, slice(0, 3))),
               threading.Thread(target=worker, args=(1, slice(3, 8)))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert not errors, errors
    got = torch.cat([results[0][0], results[1][0]])
    assert (got - full).abs().max() <= 1e-12
    assert results[0][1].cap_factor == pytest.approx(full_stats.cap_factor, abs=1e-14)
    assert results[1][1].token_std == pytest.approx(full_stats.token_std, abs=1e-14)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3), st.integers(1, 6), st.integers(0, 2**31 - 1),
       st.floats(0.0, 1.0))
def test_property_pipeline(num_groups, group_size, k, t, seed, beta_n):
    g = torch.Generator().manual_seed(seed)
    n = num_groups * group_size
    r = torch.rand(n, k, generator=g, dtype=torch.float64).round(decimals=1)
    r[torch.rand(n, k, generator=g) < 0.2] = float("nan")
    adv, varies = group_reward_advantages(r, group_size)
    rep = replay_pairs(varies, torch.rand(n, k, generator=g) < 0.7)
    lengths = torch.randint(0, t + 1, (n,), generator=g)
    mask = torch.arange(t)[None] < lengths[:, None]
    lp = torch.randn(n, k, t, 7, generator=g, dtype=torch.float64)
    lm = torch.where(torch.rand(n, k, t, 1, generator=g) < 0.3, lp, torch.randn(n, k, t, 7, generator=g,
                                                                                   dtype=torch.float64))
    q = alg.js_distance_from_logits(lp, lm)
    assert ((q >= 0) & (q <= 1)).all()
    out, stats = mrtpo_token_advantages(adv, q, mask, rep, beta_n)
    assert torch.isfinite(out).all() and (out[~mask] == 0).all()
    assert 0.0 <= stats.cap_factor <= 1.0 and 0.0 <= stats.replayed_fraction <= 1.0
    # mean over a response's tokens of the capped credit is still U
    w = token_weights(q, mask, rep, beta_n)
    s, u, d = redistribute(adv, w, mask)
    has = mask.any(-1)
    if has.any():
        m = (s * mask).sum(-1)[has] / mask.sum(-1)[has]
        assert (m - u[has]).abs().max() <= 1e-12 * (1 + adv.abs().sum())
