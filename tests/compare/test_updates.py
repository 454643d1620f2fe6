"""`update_alignment`: the cosine and distance of two runs' updates, against numpy on the flattened parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from mrtpo_sdk.compare.updates import update_alignment


def _state(gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"w": torch.randn(4, 3, generator=gen), "b": torch.randn(3, generator=gen)}


def test_matches_numpy_on_the_flattened_updates():
    gen = torch.Generator().manual_seed(0)
    init, a, b = _state(gen), _state(gen), _state(gen)
    a["only_in_a"] = torch.ones(2)  # not in all three: left out
    got = update_alignment(init, a, b)
    flat = {n: np.concatenate([s[k].numpy().astype(np.float64).ravel() for k in ("w", "b")])
            for n, s in (("i", init), ("a", a), ("b", b))}
    da, db = flat["a"] - flat["i"], flat["b"] - flat["i"]
    na, nb = np.linalg.norm(da), np.linalg.norm(db)
    assert got["norm_a"] == pytest.approx(na, rel=1e-12) and got["norm_b"] == pytest.approx(nb, rel=1e-12)
    assert got["cos"] == pytest.approx(da @ db / (na * nb), rel=1e-12)
    assert got["rel"] == pytest.approx(np.linalg.norm(da - db) / math.sqrt(na * nb), rel=1e-12)


def test_same_opposite_and_zero_updates():
    init = {"w": torch.zeros(5)}
    step = {"w": torch.tensor([1.0, -2.0, 0.5, 0.0, 3.0])}
    same = update_alignment(init, step, {"w": 2 * step["w"]})
    assert same["cos"] == pytest.approx(1.0) and same["rel"] == pytest.approx(math.sqrt(0.5))
    assert update_alignment(init, step, {"w": -step["w"]})["cos"] == pytest.approx(-1.0)
    zero = update_alignment(init, step, init)
    assert math.isnan(zero["cos"]) and math.isnan(zero["rel"]) and zero["norm_b"] == 0.0


def test_policies_of_other_shapes_or_names_are_an_error():
    with pytest.raises(ValueError, match=r"tensor w: shapes \(2,\), \(2,\), \(3,\)"):
        update_alignment({"w": torch.zeros(2)}, {"w": torch.zeros(2)}, {"w": torch.zeros(3)})
    with pytest.raises(ValueError, match="share no tensor name"):
        update_alignment({"w": torch.zeros(2)}, {"v": torch.zeros(2)}, {"w": torch.zeros(2)})
