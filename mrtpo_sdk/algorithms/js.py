"""Token relevance: Jensen-Shannon distance between two next-token distributions. Source: spec §4,
the paper ("JS compares full vocabulary distributions, not just the sampled token probability").

For each completion position t, ``p = p_t^{all}`` (behavior policy under ``P_all``) and ``m = p_t^{\\k}``
(under ``P_\\k``) are full-vocabulary distributions and

    JS(p || m) = 1/2 KL(p || M) + 1/2 KL(m || M),   M = (p + m) / 2     (natural log)
    q_{k,t}    = sqrt(JS / ln 2)  in [0, 1]

Numerics. With ``x_v = log p_v - log m_v`` and ``a_v = |x_v| / 2`` the JS divergence equals
``1/2 * sum_v M_v h(a_v)`` where ``h(a) = 2 a tanh(a) - 2 log cosh(a) >= 0`` is the per-entry contribution
``(1+d) log(1+d) + (1-d) log(1-d)``, ``d = tanh(a) = (p-m)/(p+m)``. Every summand is non-negative, so the
vocabulary sum has no cancellation, and ``h`` is evaluated without catastrophic cancellation
(``log cosh a = log1p(2 sinh(a/2)^2)`` for ``a <= 1``; ``h = 2 ln2 - 2 log1p(e^{-2a}) - 4a e^{-2a}/(1+e^{-2a})``
for ``a > 1``). Nearly identical distributions therefore get an accurate small q instead of a
``sqrt(rounding noise)`` floor (≈3e-4 in float32 with the textbook formula). ``M`` is formed in log space
(``logaddexp``); entries with ``p_v = m_v = 0`` (both logits ``-inf``, a masked vocabulary entry) contribute 0;
entries with exactly one of them zero contribute ``M_v * 2 ln 2``. JS is clamped to ``[0, ln 2]`` before the
square root, and rows with identical logits (or identical log-probabilities) return exactly 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ._checks import as_bool_mask, compute_dtype, require_float, require_float_scalar, require_tensor

__all__ = ["js_distance_from_logits", "chunked_js_distance", "js_chunk_size_for_budget", "DEFAULT_JS_MEMORY_BYTES"]

_LN2 = math.log(2.0)

DEFAULT_JS_MEMORY_BYTES = 1 << 30
"""Default memory budget of one JS chunk (1 GiB): the chunk size is chosen so that its temporaries fit."""

# Live (chunk, V) tensors at the peak of one chunk: the two projected logit rows, the two log-softmaxes and the
# temporaries of _js_from_logprobs (M, a, h, the large-a branch, masks). Measured with benchmarks/bench_js.py and
# benchmarks/bench_replay.py (peak extra / (chunk * V * 4 bytes) ~ 11-13); 14 leaves a margin.
_JS_TEMPORARIES = 14


def js_chunk_size_for_budget(vocab_size: int, memory_bytes: int = DEFAULT_JS_MEMORY_BYTES,
                             dtype: torch.dtype = torch.float32, max_chunk: int = 8192) -> int:
    """Tokens per JS chunk whose temporaries fit ``memory_bytes``: ``memory_bytes // (14 * V * itemsize)``,
    clamped to ``[1, max_chunk]``. Source: spec §4 (full-vocabulary JS), memory-bounded.

    Args:
        vocab_size: V, the vocabulary size (>= 1).
        memory_bytes: budget for one chunk's ``(chunk, V)`` temporaries (> 0).
        dtype: compute dtype of the JS (float32, or float64 for float64 models).
        max_chunk: upper clamp (very small vocabularies).

    Raises:
        ValueError: non-positive ``vocab_size`` or ``memory_bytes``.
    """
    if vocab_size < 1 or memory_bytes < 1:
        raise ValueError(f"vocab_size and memory_bytes must be >= 1, got {vocab_size} and {memory_bytes}")
    itemsize = torch.finfo(dtype).bits // 8
    return int(max(1, min(max_chunk, memory_bytes // (_JS_TEMPORARIES * vocab_size * itemsize))))


def _js_from_logprobs(logp: Tensor, logm: Tensor) -> Tensor:
    """JS divergence (nats) over the last dim of two log-probability tensors of the same shape/dtype.

    Written with in-place ops to keep the number of live ``(n, V)`` temporaries small (about six).
    """
    big_m = torch.logaddexp(logp, logm).sub_(_LN2).exp_()  # M = (p + m) / 2
    a = torch.sub(logp, logm).abs_().mul_(0.5)  # |x| / 2; NaN where both -inf, inf where exactly one is
    small = a <= 1.0  # False for NaN / inf
    # a <= 1:  h = 2 a tanh(a) - 2 log1p(2 sinh(a/2)^2)
    a_s = torch.where(small, a, 0.0)
    h = torch.tanh(a_s).mul_(a_s).mul_(2.0)
    h.sub_(a_s.mul_(0.5).sinh_().square_().mul_(2.0).log1p_().mul_(2.0))
    del a_s
    # a > 1 (and inf / NaN), evaluated only on those entries (usually a small fraction of the vocabulary):
    #          h = 2 ln2 - 2 log1p(e) - 4 a e / (1 + e),  e = exp(-2a)
    sel = (~small).nonzero(as_tuple=True)
    if sel[0].numel():
        a_l = a[sel]
        inf = torch.isinf(a_l)  # exactly one of p, m is 0: d = +-1
        a_l = torch.where(torch.isfinite(a_l), a_l, 2.0)
        e = a_l.mul(-2.0).exp_()
        h_l = a_l.mul_(e).mul_(4.0).div_(e.add(1.0))
        h_l.add_(e.log1p_().mul_(2.0)).neg_().add_(2.0 * _LN2)
        h_l.masked_fill_(inf, 2.0 * _LN2)
        h.index_put_(sel, h_l)
        del e, h_l, a_l
    del a
    h.mul_(big_m).masked_fill_(~(big_m > 0), 0.0)  # p = m = 0 (and underflow) contribute nothing
    return h.sum(dim=-1).mul_(0.5)


def _q_from_logits(logits_p: Tensor, logits_m: Tensor, temperature: float, cdt: torch.dtype) -> Tensor:
    same = (logits_p == logits_m).all(dim=-1)
    if temperature != 1.0:
        logits_p = logits_p.to(cdt) / temperature
        logits_m = logits_m.to(cdt) / temperature
    lp = torch.log_softmax(logits_p.to(cdt), dim=-1)
    lm = torch.log_softmax(logits_m.to(cdt), dim=-1)
    if lp.numel() and bool(torch.isnan(lp).any() | torch.isnan(lm).any()):
        raise ValueError("logits contain NaN/+inf, or a row is entirely -inf (no valid distribution)")
    same = same | (lp == lm).all(dim=-1)
    js = _js_from_logprobs(lp, lm)
    q = torch.sqrt(js.clamp(0.0, _LN2) / _LN2).clamp(0.0, 1.0)
    return torch.where(same, torch.zeros_like(q), q)


def js_distance_from_logits(logits_p: Tensor, logits_m: Tensor, temperature: float = 1.0) -> Tensor:
    """Jensen-Shannon distance ``q = sqrt(JS(p || m) / ln 2)`` between ``softmax(logits_p / temperature)`` and
    ``softmax(logits_m / temperature)`` over the full last dimension. Source: spec §4.

    Args:
        logits_p: ``(..., V)`` floating logits under ``P_all`` (any float dtype). ``-inf`` entries are allowed
            (masked vocabulary) as long as each row keeps at least one finite entry.
        logits_m: ``(..., V)`` floating logits under ``P_\\k``, same shape as ``logits_p``.
        temperature: positive sampling temperature; logits are divided by it before ``log_softmax``.

    Returns:
        ``(...)`` tensor of q in ``[0, 1]`` (dimensionless; 1 = disjoint supports). dtype float64 if either input
        is float64, else float32 (log-softmax is always computed in at least float32). Exactly 0.0 for rows whose
        logits (or log-probabilities) are identical. Computed under ``torch.no_grad()`` (the behavior policy is
        frozen; the kernel works in place), so the result never carries a gradient.

    Raises:
        ValueError: shapes differ, rank 0, empty vocabulary, non-float input, non-positive temperature, NaN/+inf
            logits or an all ``-inf`` row.

    Memory: several ``(..., V)`` temporaries in the compute dtype; use :func:`chunked_js_distance` for long
    sequences with large vocabularies.
    """
    require_float("logits_p", logits_p)
    require_float("logits_m", logits_m)
    if logits_p.shape != logits_m.shape:
        raise ValueError(f"logits_p and logits_m must have the same shape, got {tuple(logits_p.shape)} "
                         f"and {tuple(logits_m.shape)}")
    if logits_p.dim() < 1 or logits_p.shape[-1] < 1:
        raise ValueError(f"logits must have shape (..., V) with V >= 1, got {tuple(logits_p.shape)}")
    temperature = require_float_scalar("temperature", temperature, lo=0.0, lo_open=True)
    cdt = compute_dtype(logits_p, logits_m)
    with torch.no_grad():
        return _q_from_logits(logits_p, logits_m.to(logits_p.device), temperature, cdt)


def chunked_js_distance(hidden_p: Tensor, hidden_m: Tensor, mask: Tensor,
                        project: Callable[[Tensor], Tensor] | None,
                        chunk_size: int | None = 256, temperature: float = 1.0,
                        memory_bytes: int = DEFAULT_JS_MEMORY_BYTES) -> Tensor:
    """Per-token JS distance from final hidden states, projecting to logits ``chunk_size`` tokens at a time.
    Source: spec §4 (full-vocabulary JS), memory-bounded.

    Only the valid positions (``mask`` True) are gathered; each chunk of at most ``chunk_size`` of them is
    projected with ``project`` under ``torch.no_grad()`` and reduced to q immediately, so peak extra memory is
    ``O(chunk_size * V)``, never ``O(B * T * V)``: about a dozen ``(chunk_size, V)`` temporaries in the compute
    dtype (measured ≈ 0.47 GiB for chunk_size 256, V 32000, float32 on CPU; ``benchmarks/bench_js.py``).

    Args:
        hidden_p: ``(B, T, H)`` final hidden states of the frozen behavior policy under ``P_all``, at the positions
            that predict completion token t (i.e. already shifted by one relative to the completion tokens).
        hidden_m: ``(B, T, H)`` the same under ``P_\\k``.
        mask: ``(B, T)`` bool or 0/1 integer tensor, True at valid completion tokens.
        project: maps ``(n, H) -> (n, V)`` logits (the LM head, including any logit scaling / soft-capping the
            model applies). ``None`` means identity: then ``hidden_p`` / ``hidden_m`` are already logits
            ``(B, T, V)`` and only the chunked reduction is performed.
        chunk_size: positive number of tokens per projection; ``None`` chooses it from ``memory_bytes`` with
            :func:`js_chunk_size_for_budget` (V read from the first projected row).
        temperature: positive sampling temperature applied to the logits.
        memory_bytes: the budget used when ``chunk_size`` is None.

    Precision contract: the logits are upcast to float32 (float64 if any input is float64) *before* any
    temperature division or log-softmax; log-softmax and JS run in that dtype, chunk by chunk. ``project`` should
    itself return float32 logits for half-precision models (the replay's head does: see
    :func:`mrtpo_sdk.replay.model_head`), since rounding logits to bf16 quantizes small differences away.

    Returns:
        ``(B, T)`` q in ``[0, 1]``, 0 at padding positions; float64 iff the hidden inputs are float64, else
        float32. No autograd graph is kept. Equal to :func:`js_distance_from_logits` on the full logits, and
        independent of ``chunk_size``.

    Raises:
        ValueError: shape mismatches, bad mask values, non-positive ``chunk_size`` / ``temperature``, a
            ``project`` output that is not ``(n, V)``, or invalid logits (see :func:`js_distance_from_logits`).
    """
    require_float("hidden_p", hidden_p)
    require_float("hidden_m", hidden_m)
    if hidden_p.dim() != 3 or hidden_p.shape != hidden_m.shape:
        raise ValueError(f"hidden_p and hidden_m must both have shape (B, T, H), got {tuple(hidden_p.shape)} "
                         f"and {tuple(hidden_m.shape)}")
    b, t, hdim = hidden_p.shape
    valid = as_bool_mask("mask", mask, (b, t), "(B, T)").to(hidden_p.device)
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"chunk_size must be a positive int or None, got {chunk_size!r}")
    temperature = require_float_scalar("temperature", temperature, lo=0.0, lo_open=True)
    if project is not None and not callable(project):
        raise ValueError("project must be callable or None")
    cdt = compute_dtype(hidden_p, hidden_m)
    out = torch.zeros(b * t, dtype=cdt, device=hidden_p.device)
    idx = valid.reshape(-1).nonzero(as_tuple=True)[0]
    if idx.numel() == 0:
        return out.reshape(b, t)
    flat_p = hidden_p.reshape(b * t, hdim)
    flat_m = hidden_m.to(hidden_p.device).reshape(b * t, hdim)
    if chunk_size is None:
        if project is None:
            vocab = hdim
        else:
            with torch.no_grad():
                vocab = project(flat_p.index_select(0, idx[:1])).shape[-1]
        chunk_size = js_chunk_size_for_budget(vocab, memory_bytes,
                                              torch.float64 if cdt == torch.float64 else torch.float32)
    with torch.no_grad():
        for start in range(0, idx.numel(), chunk_size):
            sel = idx[start:start + chunk_size]
            hp = flat_p.index_select(0, sel)
            hm = flat_m.index_select(0, sel)
            if project is None:
                lp, lm = hp, hm
            else:
                lp, lm = project(hp), project(hm)
                require_tensor("project(hidden)", lp)
                require_tensor("project(hidden)", lm)
                if lp.dim() != 2 or lp.shape[0] != sel.numel() or lp.shape != lm.shape:
                    raise ValueError(f"project must map (n, H) -> (n, V); got {tuple(lp.shape)} and "
                                     f"{tuple(lm.shape)} for n={sel.numel()}")
                require_float("project(hidden)", lp)
                require_float("project(hidden)", lm)
            if lp.shape[-1] < 1:
                raise ValueError("project produced an empty vocabulary (V = 0)")
            q = _q_from_logits(lp, lm, temperature, compute_dtype(lp, lm))
            out.index_copy_(0, sel, q.to(cdt))
    return out.reshape(b, t)
