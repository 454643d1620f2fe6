"""The concentration statistic and the credit lift against hand-computed examples and a plain-Python loop."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.algorithms.concentration import credit_lift, deciding_share, mean_concentration, token_share_for_mass


def test_hand_computed_shares():
    # response 0 (4 valid tokens), reward 0: q = [0.5, 0.1, 0.3, 0.1], total 1.0, sorted 0.5, 0.3 -> 0.8 reached
    #   with 2 tokens: share 2/4 = 0.5.
    # response 0, reward 1: uniform q = 0.2 on 4 tokens: 0.2, 0.4, 0.6, 0.8 -> 4 tokens: share 1.0.
    # response 1 (5 valid tokens, 1 padding with a large q that must be ignored), reward 0:
    #   q = [0, 0.9, 0, 0.1, 0] -> 0.9 >= 0.8 with 1 token: share 1/5 = 0.2.
    # response 1, reward 1: q all zero -> undefined (NaN).
    q = torch.tensor(
        [
            [[0.5, 0.1, 0.3, 0.1, 0.0, 0.0], [0.2, 0.2, 0.2, 0.2, 0.0, 0.0]],
            [[0.0, 0.9, 0.0, 0.1, 0.0, 7.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
        ]
    )
    mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 0]])
    share = token_share_for_mass(q, mask)
    assert share[0, 0].item() == pytest.approx(0.5)
    assert share[0, 1].item() == pytest.approx(1.0)
    assert share[1, 0].item() == pytest.approx(0.2)
    assert math.isnan(share[1, 1].item())
    # per reward mean over defined pairs: reward 0 -> (0.5 + 0.2) / 2, reward 1 -> 1.0 (only one defined)
    assert mean_concentration(share) == [pytest.approx(0.35), pytest.approx(1.0)]


def test_exactly_reaching_the_mass_counts():
    # 0.4 + 0.4 = 0.8 of 1.0 exactly (despite float rounding): 2 of 5 tokens
    q = torch.tensor([[[0.4, 0.4, 0.1, 0.05, 0.05]]], dtype=torch.float32)
    share = token_share_for_mass(q, torch.ones(1, 5))
    assert share.item() == pytest.approx(0.4)


def test_other_mass_and_not_replayed_pairs():
    q = torch.tensor([[[0.6, 0.3, 0.1], [0.6, 0.3, 0.1]]])
    replayed = torch.tensor([[True, False]])
    share = token_share_for_mass(q, torch.ones(1, 3), replayed, mass=0.5)
    assert share[0, 0].item() == pytest.approx(1 / 3)  # 0.6 alone holds half
    assert math.isnan(share[0, 1].item())
    assert mean_concentration(share) == [pytest.approx(1 / 3), None]


def test_bad_arguments():
    with pytest.raises(ValueError, match="mass"):
        token_share_for_mass(torch.zeros(1, 1, 2), torch.ones(1, 2), mass=0.0)
    with pytest.raises(ValueError, match="mask"):
        token_share_for_mass(torch.zeros(1, 1, 2), torch.ones(1, 3))


def test_hand_computed_deciding_share_and_lift():
    # response 0, reward 0: q = [0.5, 0.1, 0.3, 0.1], tokens 0 and 2 deciding: share 0.8 / 1.0, lift 0.8 / (2/4) = 1.6
    # response 0, reward 1: uniform q, token 3 deciding: share 0.25, lift 0.25 / 0.25 = 1 (uniform credit)
    # response 1 (3 valid tokens; the padded 4th is deciding with a large q, ignored), reward 0:
    #   q = [0.1, 0.6, 0.3], token 1 deciding: share 0.6, lift 0.6 / (1/3) = 1.8
    # response 1, reward 1: no deciding token -> NaN
    q = torch.tensor([[[0.5, 0.1, 0.3, 0.1], [0.2, 0.2, 0.2, 0.2]], [[0.1, 0.6, 0.3, 9.0], [0.1, 0.1, 0.1, 0.0]]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])
    deciding = torch.tensor([[[1, 0, 1, 0], [0, 0, 0, 1]], [[0, 1, 0, 1], [0, 0, 0, 0]]], dtype=torch.bool)
    share = deciding_share(q, mask, deciding)
    lift = credit_lift(q, mask, deciding)
    assert share[0].tolist() == pytest.approx([0.8, 0.25])
    assert lift[0].tolist() == pytest.approx([1.6, 1.0])
    assert share[1, 0].item() == pytest.approx(0.6) and lift[1, 0].item() == pytest.approx(1.8)
    assert math.isnan(share[1, 1].item()) and math.isnan(lift[1, 1].item())
    assert share.dtype == lift.dtype == torch.float64


def test_lift_is_undefined_where_it_says_nothing():
    q = torch.tensor([[[0.5, 0.5], [0.0, 0.0], [0.3, 0.7]]])
    mask = torch.ones(1, 2)
    deciding = torch.tensor([[[1, 1], [1, 0], [1, 0]]], dtype=torch.bool)
    replayed = torch.tensor([[True, True, False]])
    share = deciding_share(q, mask, deciding, replayed)
    lift = credit_lift(q, mask, deciding, replayed)
    assert share[0, 0].item() == pytest.approx(1.0) and math.isnan(lift[0, 0].item())  # every token deciding
    assert math.isnan(share[0, 1].item()) and math.isnan(lift[0, 1].item())  # zero distance
    assert math.isnan(share[0, 2].item()) and math.isnan(lift[0, 2].item())  # not replayed
    empty = credit_lift(q, torch.zeros(1, 2), deciding)  # no valid token
    assert torch.isnan(empty).all()


def test_deciding_shapes_are_checked():
    with pytest.raises(ValueError, match=r"deciding must be \(B, K, T\) = \(1, 1, 2\)"):
        credit_lift(torch.zeros(1, 1, 2), torch.ones(1, 2), torch.ones(1, 2))
    with pytest.raises(ValueError, match="mask must be"):
        deciding_share(torch.zeros(1, 1, 2), torch.ones(1, 3), torch.ones(1, 1, 2))


def _by_hand(q, mask, deciding, replayed):
    """Share and lift with plain Python loops (NaN where undefined), the definition read off the docstrings."""
    shares, lifts = [], []
    for i, row in enumerate(q):
        shares.append([])
        lifts.append([])
        for k, qk in enumerate(row):
            valid = [t for t in range(len(qk)) if mask[i][t]]
            dec = [t for t in valid if deciding[i][k][t]]
            total = sum(max(qk[t], 0.0) for t in valid)
            if not replayed[i][k] or not valid or not dec or total <= 0:
                shares[-1].append(math.nan)
                lifts[-1].append(math.nan)
                continue
            share = sum(max(qk[t], 0.0) for t in dec) / total
            shares[-1].append(share)
            lifts[-1].append(math.nan if len(dec) == len(valid) else share / (len(dec) / len(valid)))
    return shares, lifts


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 6), st.data())
def test_share_and_lift_match_a_plain_python_loop(b, k, t, data):
    q = data.draw(st.lists(st.lists(st.lists(st.floats(0, 1, width=32), min_size=t, max_size=t), min_size=k,
                                    max_size=k), min_size=b, max_size=b))
    mask = data.draw(st.lists(st.lists(st.booleans(), min_size=t, max_size=t), min_size=b, max_size=b))
    deciding = data.draw(st.lists(st.lists(st.lists(st.booleans(), min_size=t, max_size=t), min_size=k,
                                           max_size=k), min_size=b, max_size=b))
    replayed = data.draw(st.lists(st.lists(st.booleans(), min_size=k, max_size=k), min_size=b, max_size=b))
    args = (torch.tensor(q), torch.tensor(mask), torch.tensor(deciding))
    share = deciding_share(*args, torch.tensor(replayed))
    lift = credit_lift(*args, torch.tensor(replayed))
    want_share, want_lift = _by_hand(q, mask, deciding, replayed)
    for got, want in ((share, want_share), (lift, want_lift)):
        for g, w in zip(got.flatten().tolist(), [x for row in want for x in row]):
            assert (math.isnan(g) and math.isnan(w)) or g == pytest.approx(w, rel=1e-9, abs=1e-12)
