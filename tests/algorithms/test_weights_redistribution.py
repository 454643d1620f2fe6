"""beta warm-up, token weights, redistribution, cap and normalization (spec §5, seed 003 Appendix D)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.algorithms import (
    normalize_token_advantages,
    redistribute,
    second_moment_cap,
    smoothstep_beta,
    token_weights,
)

from ._data import random_token_inputs


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.to(x.dtype)
    while m.dim() < x.dim():
        m = m.unsqueeze(1)
    return (x * m).sum(-1) / m.sum(-1)


# ---------------------------------------------------------------- beta warm-up

def test_smoothstep_beta_values():
    assert smoothstep_beta(0, 0.5, 10) == 0.0
    assert smoothstep_beta(5, 0.5, 10) == pytest.approx(0.25, abs=1e-15)
    assert smoothstep_beta(10, 0.5, 10) == 0.5
    assert smoothstep_beta(1000, 0.5, 10) == 0.5
    assert smoothstep_beta(-3, 0.5, 10) == 0.0
    assert smoothstep_beta(0, 0.4, 0) == 0.4
    assert smoothstep_beta(2, 1.0, 10) == pytest.approx(3 * 0.04 - 2 * 0.008, abs=1e-15)
    vals = [smoothstep_beta(n, 0.5, 20) for n in range(21)]
    assert all(a < b for a, b in zip(vals, vals[1:]))


@pytest.mark.parametrize("kwargs, match", [
    (dict(step=0, beta=1.5, warmup_steps=1), "beta"),
    (dict(step=0, beta=-0.1, warmup_steps=1), "beta"),
    (dict(step=0, beta=0.5, warmup_steps=-1), "warmup_steps"),
    (dict(step=0.5, beta=0.5, warmup_steps=4), "int"),
])
def test_smoothstep_beta_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        smoothstep_beta(**kwargs)


# ---------------------------------------------------------------- token weights

@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("beta_n", [0.0, 0.25, 0.5, 1.0])
def test_weight_mean_is_one(seed, beta_n):
    _, q, mask, rep = random_token_inputs(seed)
    w = token_weights(q, mask, rep, beta_n)
    has_tokens = mask.any(-1)
    mean = _masked_mean(w, mask)[has_tokens]
    assert (mean - 1).abs().max() <= 1e-12
    assert (w >= 1 - beta_n - 1e-15).all()
    assert torch.equal(w[~mask[:, None, :].expand_as(w)], torch.ones(int((~mask).sum()) * w.shape[1],
                                                                     dtype=w.dtype))
    if beta_n > 0:
        assert (w != 1).any()  # something is actually redistributed


def test_weight_exactly_one_for_not_replayed_identical_and_beta_zero():
    _, q, mask, rep = random_token_inputs(7)
    w = token_weights(q, mask, rep, 0.7)
    assert torch.equal(w[~rep], torch.ones_like(w[~rep]))  # empty block / not replayed
    assert torch.equal(w[3, 0], torch.ones_like(w[3, 0]))  # replayed but qbar == 0 (identical distributions)
    assert torch.equal(token_weights(q, mask, rep, 0.0), torch.ones_like(w))
    # identical distributions on every token: q from JS is exactly 0 -> weight exactly 1
    w0 = token_weights(torch.zeros_like(q), mask, torch.ones_like(rep), 1.0)
    assert torch.equal(w0, torch.ones_like(w0))


def test_weight_known_values():
    q = torch.tensor([[[0.1, 0.3, 0.0, 0.9]]], dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 0]])
    w = token_weights(q, mask, torch.tensor([[True]]), 0.5)
    qbar = 0.4 / 3
    exp = [0.5 + 0.5 * 0.1 / qbar, 0.5 + 0.5 * 0.3 / qbar, 0.5, 1.0]
    assert w[0, 0].tolist() == pytest.approx(exp, abs=1e-15)


def test_weight_dtypes_and_half_input():
    _, q, mask, rep = random_token_inputs(1)
    assert token_weights(q.float(), mask, rep, 0.5).dtype == torch.float32
    w16 = token_weights(q.half(), mask, rep, 0.5)
    assert w16.dtype == torch.float32 and torch.isfinite(w16).all()


def test_weight_validation():
    _, q, mask, rep = random_token_inputs(2)
    with pytest.raises(ValueError, match="beta_n"):
        token_weights(q, mask, rep, 1.2)
    with pytest.raises(ValueError, match=">= 0"):
        token_weights(-q - 0.1, mask, rep, 0.5)
    bad = q.clone()
    bad[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="finite"):
        token_weights(bad, mask, rep, 0.5)
    with pytest.raises(ValueError, match="replayed"):
        token_weights(q, mask, rep[:, :1], 0.5)
    with pytest.raises(ValueError, match="mask"):
        token_weights(q, mask[:, :-1], rep, 0.5)
    with pytest.raises(ValueError, match=r"\(B, K, T\)"):
        token_weights(q[0], mask, rep, 0.5)


# ---------------------------------------------------------------- redistribution

@pytest.mark.parametrize("seed", range(4))
def test_redistribution_preserves_response_credit(seed):
    adv, q, mask, rep = random_token_inputs(seed)
    w = token_weights(q, mask, rep, 0.9)
    s, u, d = redistribute(adv, w, mask)
    assert torch.equal(u, adv.sum(1))
    has = mask.any(-1)
    assert (_masked_mean(s, mask)[has] - u[has]).abs().max() <= 1e-12
    assert (_masked_mean(d, mask)[has]).abs().max() <= 1e-12
    assert torch.equal(s[~mask], torch.zeros(int((~mask).sum()), dtype=s.dtype))
    assert torch.equal(d[~mask], torch.zeros(int((~mask).sum()), dtype=d.dtype))
    assert (d.abs().sum() > 0)


def test_redistribution_no_replay_is_exact_broadcast():
    adv, q, mask, rep = random_token_inputs(3)
    w = token_weights(q, mask, torch.zeros_like(rep), 0.9)
    s, u, d = redistribute(adv, w, mask)
    assert torch.equal(d, torch.zeros_like(d))
    assert torch.equal(s, torch.where(mask, u[:, None].expand_as(s), torch.zeros_like(s)))


def test_redistribution_validation():
    adv, q, mask, rep = random_token_inputs(4)
    w = token_weights(q, mask, rep, 0.5)
    with pytest.raises(ValueError, match=r"\(B, K\)"):
        redistribute(adv[:, :1], w, mask)
    bad = adv.clone()
    bad[0, 0] = float("inf")
    with pytest.raises(ValueError, match="advantages"):
        redistribute(bad, w, mask)


# ---------------------------------------------------------------- cap

def test_cap_known_value_and_not_a_clamp():
    u = torch.tensor([0.5, -0.5], dtype=torch.float64)
    d = torch.tensor([[2.0, -2.0], [1.0, -1.0]], dtype=torch.float64)
    mask = torch.ones(2, 2, dtype=torch.bool)
    s = second_moment_cap(u, d, mask)
    assert s.dim() == 0
    assert float(s) == pytest.approx(math.sqrt((2 * 0.25 + 2 * 0.25) / 10), abs=1e-15)
    # one scalar for the whole batch: relative shape of D is kept
    sd = s * d
    assert torch.allclose(sd[0] / sd[1], d[0] / d[1])
    # small redistribution: no cap
    assert float(second_moment_cap(u, d / 100, mask)) == 1.0


def test_cap_edge_cases():
    mask = torch.tensor([[1, 1, 0], [0, 0, 0]])
    u = torch.tensor([0.3, 5.0])
    assert float(second_moment_cap(u, torch.zeros(2, 3), mask)) == 1.0  # sum D^2 == 0
    assert float(second_moment_cap(u, torch.zeros(2, 3), torch.zeros(2, 3))) == 1.0  # all padding
    d = torch.tensor([[1.0, -1.0, 99.0], [7.0, 7.0, 7.0]])  # padding values ignored
    assert float(second_moment_cap(u, d, mask)) == pytest.approx(math.sqrt(2 * 0.09 / 2), rel=1e-6)
    assert float(second_moment_cap(torch.zeros(2), d, mask)) == 0.0  # no credit at all -> no redistribution


@pytest.mark.parametrize("seed", range(6))
def test_cap_never_increases_second_moment(seed):
    adv, q, mask, rep = random_token_inputs(seed)
    adv[:, 2] = -adv[:, :2].sum(1) + 0.1 * adv[:, 2] * (seed % 2)  # cancel U on odd/even seeds differently
    w = token_weights(q, mask, torch.ones_like(rep), 1.0)
    _, u, d = redistribute(adv, w, mask)
    s = second_moment_cap(u, d, mask)
    sd2 = float(((s * d) ** 2).sum())
    tu2 = float((mask.sum(1) * u ** 2).sum())
    assert sd2 <= float((d ** 2).sum()) * (1 + 1e-12)
    assert sd2 <= tu2 * (1 + 1e-12)
    assert 0.0 <= float(s) <= 1.0


def test_cap_all_reduce_called_once_and_used():
    calls = []

    def fake_reduce(t):
        calls.append(t.clone())
        return t * torch.tensor([4.0, 1.0], dtype=t.dtype)  # pretend other ranks add credit

    u = torch.tensor([0.5, -0.5], dtype=torch.float64)
    d = torch.tensor([[2.0, -2.0], [1.0, -1.0]], dtype=torch.float64)
    s = second_moment_cap(u, d, torch.ones(2, 2), all_reduce=fake_reduce)
    assert len(calls) == 1 and calls[0].tolist() == [1.0, 10.0]
    assert float(s) == pytest.approx(math.sqrt(4.0 / 10.0), abs=1e-15)
    with pytest.raises(ValueError, match="all_reduce"):
        second_moment_cap(u, d, torch.ones(2, 2), all_reduce=lambda t: t[:1])


# ---------------------------------------------------------------- normalization

def test_normalization_known_values_not_mean_subtracted():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]], dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]])
    out = normalize_token_advantages(x, mask, eps=1e-4)
    std = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64).std()
    exp = torch.tensor([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]], dtype=torch.float64) / (std + 1e-4)
    exp[1, 1:] = 0
    assert (out - exp).abs().max() <= 1e-15
    assert (out[mask.bool()] > 0).all()  # positive stays positive: no mean subtraction


def test_normalization_single_token_and_empty():
    x = torch.tensor([[0.7, 9.0]])
    out = normalize_token_advantages(x, torch.tensor([[1, 0]]), eps=1e-4)
    assert out[0].tolist() == pytest.approx([0.7 / 1e-4, 0.0], rel=1e-6)
    out = normalize_token_advantages(x, torch.zeros(1, 2), eps=1e-4)
    assert torch.equal(out, torch.zeros(1, 2))
    with pytest.raises(ValueError, match="eps"):
        normalize_token_advantages(x, torch.ones(1, 2), eps=0.0)


def test_normalization_two_pass_all_reduce_protocol():
    calls = []

    def ident(t):
        calls.append(tuple(t.shape))
        return t

    x = torch.randn(3, 4, dtype=torch.float64)
    mask = torch.ones(3, 4)
    assert torch.equal(normalize_token_advantages(x, mask, all_reduce=ident), normalize_token_advantages(x, mask))
    assert calls == [(2,), (1,)]

    def inplace(t):  # torch.distributed.all_reduce style: in place, returns None
        t.mul_(1.0)
        return None

    assert torch.equal(normalize_token_advantages(x, mask, all_reduce=inplace), normalize_token_advantages(x, mask))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 6), st.integers(0, 2**31 - 1),
       st.floats(0.0, 1.0), st.sampled_from([torch.float32, torch.float64]))
def test_property_weights_and_redistribution(b, k, t, seed, beta_n, dtype):
    g = torch.Generator().manual_seed(seed)
    q = torch.rand(b, k, t, generator=g, dtype=torch.float64)
    q = torch.where(torch.rand(q.shape, generator=g, dtype=torch.float64) < 0.3, torch.zeros_like(q), q).to(dtype)
    lengths = torch.randint(0, t + 1, (b,), generator=g)
    mask = torch.arange(t)[None] < lengths[:, None]
    rep = torch.rand(b, k, generator=g) < 0.5
    adv = torch.randn(b, k, generator=g, dtype=torch.float64).to(dtype)
    w = token_weights(q, mask, rep, beta_n)
    s, u, d = redistribute(adv, w, mask)
    cap = second_moment_cap(u, d, mask)
    st_ = torch.where(mask, u[:, None] + cap * d, torch.zeros_like(d))
    out = normalize_token_advantages(st_, mask)
    for x in (w, s, u, d, cap, out):
        assert torch.isfinite(x).all()
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    has = mask.any(-1)
    if has.any():
        assert (_masked_mean(w, mask)[has] - 1).abs().max() <= tol
        assert (_masked_mean(s, mask)[has] - u[has]).abs().max() <= tol * (1 + adv.abs().sum())
    assert torch.equal(w[~rep], torch.ones_like(w[~rep]))
    assert float(((cap * d) ** 2).sum()) <= float((mask.sum(1) * u ** 2).sum()) * (1 + tol) + 1e-30
    assert (out[~mask] == 0).all()
