"""JS distance over the full vocabulary (spec §4): range, exact zeros, stability, chunking."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.algorithms import chunked_js_distance, js_distance_from_logits

from . import reference as ref

INF = math.inf


def _textbook_q(lp: torch.Tensor, lm: torch.Tensor) -> torch.Tensor:
    """The straightforward sum p log(p/M) formula, for comparison only."""
    lp, lm = torch.log_softmax(lp, -1), torch.log_softmax(lm, -1)
    lmid = torch.logaddexp(lp, lm) - math.log(2)
    js = 0.5 * (lp.exp() * (lp - lmid)).sum(-1) + 0.5 * (lm.exp() * (lm - lmid)).sum(-1)
    return torch.sqrt(js.clamp(0, math.log(2)) / math.log(2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_identical_rows_exactly_zero(dtype):
    g = torch.Generator().manual_seed(0)
    lp = (torch.randn(3, 4, 50, generator=g) * 5).to(dtype)
    lp[0, 0, :10] = -INF
    q = js_distance_from_logits(lp, lp.clone())
    assert q.shape == (3, 4)
    assert q.dtype == (torch.float64 if dtype == torch.float64 else torch.float32)
    assert torch.equal(q, torch.zeros_like(q))
    assert torch.equal(js_distance_from_logits(lp, lp, temperature=0.3), torch.zeros_like(q))


def test_disjoint_supports_give_one_and_range():
    lp = torch.tensor([[0.0, -INF, -INF], [0.0, 0.0, -INF]], dtype=torch.float64)
    lm = torch.tensor([[-INF, 0.0, 0.0], [-INF, -INF, 5.0]], dtype=torch.float64)
    q = js_distance_from_logits(lp, lm)
    assert q.tolist() == pytest.approx([1.0, 1.0], abs=1e-15)
    assert (q <= 1.0).all()
    # p = (1, 0), m = (1/2, 1/2): JS = 1/2 [ln(4/3)] + 1/2 [1/2 ln(2/3) + 1/2 ln 2]
    js = 0.5 * math.log(4 / 3) + 0.25 * math.log(2 / 3) + 0.25 * math.log(2)
    q1 = js_distance_from_logits(torch.tensor([0.0, -INF], dtype=torch.float64),
                                 torch.tensor([0.0, 0.0], dtype=torch.float64))
    assert abs(float(q1) - math.sqrt(js / math.log(2))) <= 1e-15


def test_symmetric_shift_invariant_and_temperature():
    g = torch.Generator().manual_seed(1)
    lp = torch.randn(8, 100, generator=g, dtype=torch.float64)
    lm = torch.randn(8, 100, generator=g, dtype=torch.float64)
    q = js_distance_from_logits(lp, lm)
    assert torch.equal(q, js_distance_from_logits(lm, lp)) or (q - js_distance_from_logits(lm, lp)).abs().max() < 1e-15
    assert (js_distance_from_logits(lp + 3.0, lm - 2.0) - q).abs().max() < 1e-13
    assert (js_distance_from_logits(2 * lp, 2 * lm, temperature=2.0) - q).abs().max() < 1e-13
    assert (js_distance_from_logits(lp, lm, temperature=0.5) - q).abs().max() > 1e-3


def test_near_identical_distributions_are_accurate():
    """Small q is computed without cancellation: matches the second-order expansion in float64, and float32 stays
    close to float64 where the textbook formula is dominated by rounding noise."""
    g = torch.Generator().manual_seed(2)
    for delta, rtol32 in [(1e-3, 1e-3), (1e-4, 1e-2)]:
        lp = torch.randn(32, 1000, generator=g) * 2
        lm = lp + delta * torch.randn(32, 1000, generator=g)
        q64 = js_distance_from_logits(lp.double(), lm.double())
        x = torch.log_softmax(lp.double(), -1) - torch.log_softmax(lm.double(), -1)
        p = torch.softmax(lp.double(), -1)
        approx = torch.sqrt(((p * x * x).sum(-1) - (p * x).sum(-1) ** 2) / (8 * math.log(2)))
        assert ((q64 - approx) / approx).abs().max() < 20 * delta
        q32 = js_distance_from_logits(lp, lm)
        assert ((q32 - q64) / q64).abs().max() < rtol32
        assert ((_textbook_q(lp, lm) - q64) / q64).abs().max() > 10 * rtol32  # what the stable form avoids


def test_float32_matches_float64_on_random_logits():
    g = torch.Generator().manual_seed(3)
    lp = torch.randn(64, 500, generator=g) * 3
    lm = torch.randn(64, 500, generator=g) * 3
    q32 = js_distance_from_logits(lp, lm)
    q64 = js_distance_from_logits(lp.double(), lm.double())
    assert (q32.double() - q64).abs().max() < 1e-6


def test_no_gradient_and_inputs_untouched():
    lp = torch.randn(3, 10, requires_grad=True)
    lm = torch.randn(3, 10)
    lp0, lm0 = lp.detach().clone(), lm.clone()
    q = js_distance_from_logits(lp, lm, temperature=0.7)
    assert not q.requires_grad
    assert torch.equal(lp.detach(), lp0) and torch.equal(lm, lm0)


def test_masked_vocab_no_nan():
    lp = torch.full((4, 6), -INF)
    lm = torch.full((4, 6), -INF)
    lp[:, :3] = torch.tensor([1.0, 2.0, 3.0])
    lm[:, 2:5] = torch.tensor([1.0, 2.0, 3.0])
    q = js_distance_from_logits(lp, lm)
    assert torch.isfinite(q).all() and (q > 0).all() and (q <= 1).all()
    exp = ref.js_distance(lp[0].tolist(), lm[0].tolist())
    assert abs(float(q[0]) - exp) < 1e-6


@pytest.mark.parametrize("bad", ["nan", "posinf", "allneginf"])
def test_invalid_logits_raise(bad):
    lp = torch.zeros(2, 4)
    lm = torch.zeros(2, 4)
    if bad == "nan":
        lp[1, 2] = float("nan")
    elif bad == "posinf":
        lm[0, 1] = INF
    else:
        lm[0] = -INF
    with pytest.raises(ValueError, match="NaN|-inf"):
        js_distance_from_logits(lp, lm)


def test_argument_validation():
    with pytest.raises(ValueError, match="same shape"):
        js_distance_from_logits(torch.zeros(2, 4), torch.zeros(2, 5))
    with pytest.raises(ValueError, match="temperature"):
        js_distance_from_logits(torch.zeros(2, 4), torch.zeros(2, 4), temperature=0.0)
    with pytest.raises(ValueError, match="floating"):
        js_distance_from_logits(torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="V >= 1"):
        js_distance_from_logits(torch.zeros(2, 0), torch.zeros(2, 0))


class _CountingHead(torch.nn.Module):
    def __init__(self, h: int, v: int, dtype=torch.float64):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(h, v, bias=False, dtype=dtype)
        self.max_rows = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.max_rows = max(self.max_rows, x.shape[0])
        return self.lin(x)


def _hidden(seed, b=3, t=7, h=8, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    hp = torch.randn(b, t, h, generator=g, dtype=dtype)
    hm = hp + 0.3 * torch.randn(b, t, h, generator=g, dtype=dtype)
    hm[0, 1] = hp[0, 1]  # identical state -> q exactly 0
    mask = torch.ones(b, t, dtype=torch.bool)
    mask[1, 4:] = False
    mask[2, :] = False
    return hp, hm, mask


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_chunked_equals_full_and_is_chunk_size_independent(dtype):
    hp, hm, mask = _hidden(4, dtype=dtype)
    head = _CountingHead(8, 50, dtype=dtype)
    with torch.no_grad():
        full = js_distance_from_logits(head(hp), head(hm))
    full = torch.where(mask, full, torch.zeros_like(full))
    outs = []
    for cs in (1, 3, 1000):
        head.max_rows = 0
        q = chunked_js_distance(hp, hm, mask, head, chunk_size=cs)
        assert head.max_rows <= cs
        assert q.shape == (3, 7) and q.dtype == dtype and not q.requires_grad
        outs.append(q)
    # the JS reduction is bitwise chunk-independent (see the logits test below); a matmul head may round
    # differently for different row counts (BLAS blocking), hence the ulp-level tolerance here
    tol = 1e-14 if dtype == torch.float64 else 1e-6
    assert (outs[0] - outs[1]).abs().max() <= tol and (outs[1] - outs[2]).abs().max() <= tol
    assert (outs[0] - full).abs().max() <= tol
    assert torch.equal(outs[0][~mask], torch.zeros(int((~mask).sum()), dtype=dtype))
    assert outs[0][0, 1] == 0.0 and (outs[0][0, 2:] > 0).all()


def test_chunked_with_logits_and_identity_project_and_padding():
    g = torch.Generator().manual_seed(5)
    lp = torch.randn(2, 5, 30, generator=g, dtype=torch.float64)
    lm = torch.randn(2, 5, 30, generator=g, dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]])
    full = js_distance_from_logits(lp, lm, temperature=0.9) * mask
    for project in (None, lambda x: x):
        for cs in (1, 2, 3, 1000):
            q = chunked_js_distance(lp, lm, mask, project, chunk_size=cs, temperature=0.9)
            assert torch.equal(q, full)  # bitwise identical for every chunk size
    assert torch.equal(chunked_js_distance(lp, lm, torch.zeros(2, 5), None), torch.zeros(2, 5, dtype=torch.float64))


def test_chunked_validation():
    hp, hm, mask = _hidden(6)
    head = _CountingHead(8, 10)
    with pytest.raises(ValueError, match="chunk_size"):
        chunked_js_distance(hp, hm, mask, head, chunk_size=0)
    with pytest.raises(ValueError, match="mask"):
        chunked_js_distance(hp, hm, mask[:, :3], head)
    with pytest.raises(ValueError, match=r"\(B, T, H\)"):
        chunked_js_distance(hp, hm[:, :3], mask, head)
    with pytest.raises(ValueError, match=r"\(n, V\)"):
        chunked_js_distance(hp, hm, mask, lambda x: x[:1])


logit = st.one_of(st.floats(-20, 20), st.just(-INF))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 6), st.data())
def test_property_js_vs_reference(v, data):
    lp = data.draw(st.lists(logit, min_size=v, max_size=v).filter(lambda xs: any(x > -INF for x in xs)))
    lm = data.draw(st.lists(logit, min_size=v, max_size=v).filter(lambda xs: any(x > -INF for x in xs)))
    tp = torch.tensor(lp, dtype=torch.float64)
    tm = torch.tensor(lm, dtype=torch.float64)
    q = js_distance_from_logits(tp, tm)
    assert 0.0 <= float(q) <= 1.0
    assert abs(float(q) - ref.js_distance(lp, lm)) <= 1e-7  # textbook reference is itself only ~sqrt(eps)-exact
    assert abs(float(q) - float(js_distance_from_logits(tm, tp))) <= 1e-12
    assert float(js_distance_from_logits(tp, tp)) == 0.0
    q32 = js_distance_from_logits(tp.float(), tm.float())
    assert 0.0 <= float(q32) <= 1.0


def test_chunk_size_from_memory_budget_and_sparse_large_branch():
    """chunk_size=None picks the chunk from the memory budget (same q as any explicit chunk); the large-|x| branch,
    evaluated only where needed, matches the float64 reference where many or no entries take it."""
    from mrtpo_sdk.algorithms.js import js_chunk_size_for_budget

    assert js_chunk_size_for_budget(1000, memory_bytes=14 * 1000 * 4 * 37) == 37
    assert js_chunk_size_for_budget(10**6, memory_bytes=1) == 1
    assert js_chunk_size_for_budget(8192) == (1 << 30) // (14 * 8192 * 4)
    with pytest.raises(ValueError):
        js_chunk_size_for_budget(0)
    g = torch.Generator().manual_seed(7)
    hp = torch.randn(3, 9, 8, generator=g, dtype=torch.float64)
    hm = hp + 0.3 * torch.randn(3, 9, 8, generator=g, dtype=torch.float64)
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[2, 5:] = False
    head = torch.nn.Linear(8, 50, bias=False).double()
    ref = chunked_js_distance(hp, hm, mask, head, chunk_size=4)
    auto = chunked_js_distance(hp, hm, mask, head, chunk_size=None, memory_bytes=14 * 50 * 8 * 5)
    assert (ref - auto).abs().max() < 1e-12  # chunking changes only the rounding of the projection
    for scale in (0.01, 30.0):  # no entry / most entries with |log p - log m| / 2 > 1
        lp = torch.randn(4, 60, generator=g, dtype=torch.float64) * scale
        lm = torch.randn(4, 60, generator=g, dtype=torch.float64) * scale
        got = js_distance_from_logits(lp, lm)
        want = torch.tensor([ref_q for ref_q in _textbook_q(lp, lm).tolist()], dtype=torch.float64)
        assert (got - want).abs().max() < 1e-7
