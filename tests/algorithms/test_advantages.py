"""Group / GRPO / GDPO advantages: edge cases, exact zeros, validation (spec §1-§2)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.algorithms import gdpo_advantages, group_reward_advantages, grpo_advantages, replay_pairs

from . import reference as ref

NAN = float("nan")


def test_seven_equal_rewards_float32_exactly_zero():
    r = torch.full((7, 1), 0.2, dtype=torch.float32)
    adv, varies = group_reward_advantages(r, 7)
    assert adv.dtype == torch.float32
    assert torch.equal(adv, torch.zeros(7, 1))
    assert not varies.any()
    assert torch.equal(grpo_advantages(r, 7), torch.zeros(7))
    assert torch.equal(gdpo_advantages(r, 7), torch.zeros(7))
    # the naive formula leaves a residue here (float32 mean of seven 0.2 is not 0.2), the floor removes it
    naive = (r - r.mean()) / (r.std() + 1e-4)
    assert naive.abs().max() > 0


def test_known_values_and_bessel():
    r = torch.tensor([[1.0], [0.0], [0.0], [NAN]], dtype=torch.float64)
    adv, varies = group_reward_advantages(r, 4, eps=0.0)
    std = math.sqrt(((2 / 3) ** 2 + 2 * (1 / 3) ** 2) / 2)  # unbiased over the 3 non-NaN values
    assert adv[:, 0].tolist()[:3] == pytest.approx([(2 / 3) / std, -(1 / 3) / std, -(1 / 3) / std], abs=1e-15)
    assert adv[3, 0] == 0.0
    assert varies[:, 0].tolist() == [True, True, True, False]
    torch.testing.assert_close(adv[:3, 0], (r[:3, 0] - r[:3, 0].mean()) / r[:3, 0].std(), rtol=0, atol=1e-15)


def test_groups_are_consecutive_rows_and_independent():
    r = torch.tensor([[0.0], [1.0], [5.0], [5.0]], dtype=torch.float64)
    adv, varies = group_reward_advantages(r, 2)
    assert varies[:, 0].tolist() == [True, True, False, False]
    assert adv[2:, 0].tolist() == [0.0, 0.0]
    assert adv[0, 0] == -adv[1, 0] and adv[1, 0] > 0.7


def test_weights_scale_advantages_and_zero_weight_gives_zero():
    r = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)
    a1, _ = group_reward_advantages(r, 2)
    a2, v2 = group_reward_advantages(r, 2, torch.tensor([2.0, 0.0], dtype=torch.float64))
    assert torch.equal(a2[:, 0], 2 * a1[:, 0])
    assert torch.equal(a2[:, 1], torch.zeros(2, dtype=torch.float64))
    assert v2.all()  # varies is independent of the weight
    assert replay_pairs(v2, torch.ones(2, 2, dtype=torch.bool), [2.0, 0.0]).tolist() == [[True, False]] * 2


def test_nan_handling_no_nan_out():
    r = torch.tensor([[NAN, 1.0], [NAN, 0.0], [NAN, NAN], [NAN, 1.0]])
    adv, varies = group_reward_advantages(r, 4)
    assert torch.isfinite(adv).all()
    assert not varies[:, 0].any() and (adv[:, 0] == 0).all()
    assert varies[:, 1].tolist() == [True, True, False, True]
    g = grpo_advantages(r, 4)
    assert g[2] == 0.0 and torch.isfinite(g).all()
    d = gdpo_advantages(r, 4)
    assert d[2] == 0.0 and torch.isfinite(d).all()


def test_single_member_group_and_single_non_nan():
    adv, varies = group_reward_advantages(torch.tensor([[0.3], [0.9]]), 1)
    assert torch.equal(adv, torch.zeros(2, 1)) and not varies.any()
    adv, varies = group_reward_advantages(torch.tensor([[0.3], [NAN]]), 2)
    assert torch.equal(adv, torch.zeros(2, 1)) and not varies.any()


def test_gdpo_batch_normalization_and_zero_when_flat():
    r = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]], dtype=torch.float64)
    a, _ = group_reward_advantages(r, 4)
    u = a.sum(1)
    exp = (u - u.mean()) / (u.std() + 1e-4)
    torch.testing.assert_close(gdpo_advantages(r, 4), exp, rtol=0, atol=1e-15)
    # U identical for every row (anti-correlated rewards) -> exactly 0
    r2 = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    assert torch.equal(gdpo_advantages(r2, 2), torch.zeros(2, dtype=torch.float64))
    # GRPO on the same: summed reward is flat -> 0
    assert torch.equal(grpo_advantages(r2, 2), torch.zeros(2, dtype=torch.float64))


def test_half_precision_inputs_keep_dtype():
    r = torch.tensor([[0.0], [1.0], [0.5], [0.25]], dtype=torch.bfloat16)
    adv, _ = group_reward_advantages(r, 4)
    assert adv.dtype == torch.bfloat16 and torch.isfinite(adv.float()).all()
    assert grpo_advantages(r, 4).dtype == torch.bfloat16


@pytest.mark.parametrize(
    "rewards, group_size, weights, match",
    [
        (torch.zeros(4), 2, None, "shape"),
        (torch.zeros(4, 2, dtype=torch.long), 2, None, "floating"),
        (torch.zeros(5, 2), 2, None, "multiple"),
        (torch.zeros(4, 2), 0, None, "group_size"),
        (torch.tensor([[math.inf], [0.0]]), 2, None, "inf"),
        (torch.zeros(4, 2), 2, torch.ones(3), "weights"),
        (torch.zeros(4, 2), 2, torch.tensor([1.0, NAN]), "weights"),
        ([[0.0]], 1, None, "Tensor"),
    ],
)
def test_validation_errors(rewards, group_size, weights, match):
    for fn in (group_reward_advantages, grpo_advantages, gdpo_advantages):
        with pytest.raises(ValueError, match=match):
            fn(rewards, group_size, weights)


def test_bad_floor_and_eps():
    with pytest.raises(ValueError, match="std_floor"):
        group_reward_advantages(torch.zeros(2, 1), 2, std_floor=-1.0)
    with pytest.raises(ValueError, match="eps"):
        group_reward_advantages(torch.zeros(2, 1), 2, eps=float("nan"))


def test_replay_pairs_rule_and_validation():
    varies = torch.tensor([[True, True, False], [True, False, True]])
    blocks = torch.tensor([[1, 0, 1], [1, 1, 1]])
    assert replay_pairs(varies, blocks).tolist() == [[True, False, False], [True, False, True]]
    assert replay_pairs(varies, blocks, torch.tensor([1.0, 1.0, 0.0])).tolist() == [[True, False, False],
                                                                                   [True, False, False]]
    with pytest.raises(ValueError, match="shape"):
        replay_pairs(varies, blocks[:, :2])
    with pytest.raises(ValueError, match="0/1"):
        replay_pairs(varies, blocks * 2)
    with pytest.raises(ValueError, match="weights"):
        replay_pairs(varies, blocks, [1.0, 2.0])


reward_values = st.one_of(st.just(NAN), st.sampled_from([0.0, 0.2, 1.0]), st.floats(0, 1, width=32))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 3), st.integers(1, 5), st.integers(1, 3), st.data(), st.sampled_from([torch.float32,
                                                                                           torch.float64]))
def test_property_group_advantages(num_groups, group_size, k, data, dtype):
    vals = data.draw(st.lists(reward_values, min_size=num_groups * group_size * k,
                              max_size=num_groups * group_size * k))
    r = torch.tensor(vals, dtype=dtype).reshape(num_groups * group_size, k)
    adv, varies = group_reward_advantages(r, group_size)
    assert adv.dtype == dtype and torch.isfinite(adv).all()
    assert (adv[~varies] == 0).all()
    assert not (varies & torch.isnan(r)).any()
    # within a varying group the (NaN-free) advantages sum to ~0
    g = adv.reshape(num_groups, group_size, k).sum(1)
    assert g.abs().max() <= (1e-4 if dtype == torch.float32 else 1e-10) * group_size
    for fn in (grpo_advantages, gdpo_advantages):
        out = fn(r, group_size)
        assert out.shape == (r.shape[0],) and torch.isfinite(out).all()
        assert (out[torch.isnan(r).all(1)] == 0).all()
    if dtype == torch.float64:
        radv, rvar = ref.group_reward_advantages(r.tolist(), group_size)
        assert varies.tolist() == rvar
        assert (adv - torch.tensor(radv, dtype=dtype)).abs().max() <= 1e-9
