"""The concentration statistic against hand-computed examples."""

import math

import pytest
import torch

from mrtpo_sdk.algorithms.concentration import mean_concentration, token_share_for_mass


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
