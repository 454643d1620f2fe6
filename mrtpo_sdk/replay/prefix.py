"""The shared-prefix planner: final hidden states of many contexts, each shared prefix computed once.

* **Prefix sharing.** Every context is a token sequence ``context ⊕ completion``. The sequences are sorted and
  grouped by their longest common token prefix (``P_0`` for the G responses of a group; ``P_0 ⊕ Z_1 … Z_{k-1}``
  for ``P_all`` and ``P_\\k`` of one response; for in-prompt tasks whatever the contexts share). The key/value cache
  of a shared prefix is computed once with transformers' own :class:`~transformers.DynamicCache`, copied and
  expanded (``batch_repeat_interleave``) per batch, and only the differing suffix (blocks + completion) is run,
  with an attention mask of ones over the prefix (position ids: the model's own continuation ``P, P+1, …``).
  The grouping is hierarchical (a prefix shared by a whole group, then a longer one shared by the contexts of one
  response) and chosen by a small cost model (tokens computed + a per-pass overhead). Where a model's cache cannot
  be reused that way (recurrent / linear-attention / hybrid caches, stateful models, no ``cache`` argument, or a
  one-time check against the plain forward that fails) every context runs from token 0, with a logged reason.
* **Batching.** Contexts are sorted by length and batched by a token budget (``max_tokens``: rows x (prefix +
  longest suffix) of the batch, padding included), right-padded within a batch only.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .decoder_head import cache_kwarg, final_hidden_states, find_decoder, output_cache
from .sync import dummy_pass_count, run_dummy_passes

__all__ = ["DEFAULT_REPLAY_MAX_TOKENS", "completion_hidden_states", "prefix_cache_support"]

logger = logging.getLogger(__name__)

DEFAULT_REPLAY_MAX_TOKENS = 16384
"""Default token budget of one replay forward pass (rows × (prefix + longest suffix), padding included)."""

# Cost model of the prefix grouping, in "tokens": a separate forward pass (kernel launches, cache copy) costs about
# this many tokens of work. Large on accelerators (launch-bound small batches), small on CPU (compute-bound).
_PASS_OVERHEAD_TOKENS = {"cpu": 32}
_PASS_OVERHEAD_TOKENS_ACCEL = 768

_CACHE_OK_ATTR = "_mrtpo_prefix_cache_ok"


def prefix_cache_support(model: Any) -> str | None:
    """``None`` if the model's key/value cache can be reused for a shared prefix, else the reason it cannot.

    Static checks only: a separate decoder taking ``cache``/``past_key_values``; not stateful
    (Mamba/RWKV-style); a :class:`~transformers.DynamicCache` built from the config whose layers are all plain or
    sliding-window attention layers (no linear-attention / SSM state, which cannot be copied per context and
    continued exactly here). :func:`completion_hidden_states` additionally compares one cached context with its plain
    forward the first time it sees a model.
    """
    decoder = find_decoder(model)
    if decoder is None:
        return "the model has no separate decoder (get_decoder)"
    if getattr(model, "_is_stateful", False) or getattr(decoder, "_is_stateful", False):
        return f"{type(model).__name__} is stateful (recurrent state, no per-token key/value cache)"
    if cache_kwarg(decoder) is None:
        return f"{type(decoder).__name__}.forward takes no cache argument"
    config = getattr(model, "config", None)
    if config is not None and getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder model"
    try:
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

        cache = DynamicCache(config=config)
    except Exception as exc:  # noqa: BLE001
        return f"DynamicCache(config=...) failed: {type(exc).__name__}: {exc}".splitlines()[0][:200]
    plain = (DynamicLayer, DynamicSlidingWindowLayer)
    bad = sorted({type(layer).__name__ for layer in cache.layers if type(layer) not in plain})
    if bad:
        return f"its cache has {', '.join(bad)} layers (not plain key/value attention)"
    return None


def _fork_cache(cache: Any, rows: int) -> Any:
    """A cache for ``rows`` rows that continues ``cache``, which stays as it is (transformers'
    ``batch_repeat_interleave`` on a copy).

    Plain and sliding-window ``DynamicCache`` layers (the only kinds the prefix-shared path accepts) never write
    into their tensors: ``update`` and ``batch_repeat_interleave`` assign new ones (``torch.cat``,
    ``repeat_interleave``). So the copy is of the cache and layer objects only, sharing the key/value tensors (no
    clone of the prefix per batch); anything else is ``copy.deepcopy``'d."""
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    layers = getattr(cache, "layers", None)
    if isinstance(layers, list) and all(type(layer) in (DynamicLayer, DynamicSlidingWindowLayer) for layer in layers):
        new = copy.copy(cache)
        new.layers = [copy.copy(layer) for layer in layers]
    else:
        new = copy.deepcopy(cache)
    if rows > 1:
        new.batch_repeat_interleave(rows)
    return new


@dataclass
class _Seq:
    ids: list[int]  # context + completion
    start: int  # position whose output predicts completion token 0
    n: int  # completion length


def _lcp(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    n = min(len(a), len(b), limit)
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class _Runner:
    """Runs the decoder over prefix-shared, token-budgeted batches; collects hidden states per sequence."""

    def __init__(self, model: Any, seqs: list[_Seq], pad_token_id: int, max_tokens: int, max_rows: int | None,
                 device: torch.device, overhead: int, dry: bool = False):
        from transformers import DynamicCache

        self.model, self.seqs, self.pad, self.device = model, seqs, pad_token_id, device
        self.dry = dry  # count the plan's forward passes (``passes``) without running any
        self.max_tokens, self.max_rows, self.overhead = max_tokens, max_rows, overhead
        self.decoder = find_decoder(model)
        self.cache_kw = cache_kwarg(self.decoder)
        self.new_cache = lambda: DynamicCache(config=model.config)
        self.out: list[torch.Tensor | None] = [None] * len(seqs)
        self.tokens = 0
        self.passes = 0

    # -- forward helpers --
    def _forward(self, ids: torch.Tensor, mask: torch.Tensor | None, offset: int, cache: Any) -> Any:
        # Position ids are left to the model: after a cache of `offset` tokens its default is offset, offset+1, ...
        # (what its own forward uses on the whole unpadded sequence; right padding does not shift real tokens).
        # Passing them explicitly would be wrong for models with their own convention (RoBERTa-style offsets).
        n, length = ids.shape
        kwargs = {self.cache_kw: cache} if cache is not None else {}
        self.tokens += n * length
        self.passes += 1
        if self.dry:
            return None
        return self.decoder(input_ids=ids, attention_mask=mask, use_cache=cache is not None, **kwargs)

    def _extend(self, cache: Any, ids: Sequence[int], start: int, stop: int) -> Any:
        """A new cache holding tokens ``[0, stop)``, from ``cache`` holding ``[0, start)`` (None: empty)."""
        if self.dry:
            self._forward(torch.empty((1, stop - start)), None, start, None)
            return None
        new = self.new_cache() if cache is None else _fork_cache(cache, 1)
        x = torch.tensor([list(ids[start:stop])], dtype=torch.long, device=self.device)
        out = self._forward(x, None, start, new)
        got = output_cache(out)
        return got if got is not None else new

    def _run_leaf(self, members: list[int], cache: Any, plen: int) -> None:
        """Suffixes ``[plen:]`` of ``members`` in length-sorted, token-budgeted batches, over the shared ``cache``."""
        members = sorted(members, key=lambda j: len(self.seqs[j].ids), reverse=True)
        for batch in self._batches([len(self.seqs[j].ids) - plen for j in members], plen):
            batch = [members[r] for r in batch]
            longest = len(self.seqs[batch[0]].ids) - plen
            if self.dry:
                self._forward(torch.empty((len(batch), longest)), None, plen, None)
                continue
            ids = torch.full((len(batch), longest), self.pad, dtype=torch.long, device=self.device)
            mask = torch.zeros((len(batch), plen + longest), dtype=torch.long, device=self.device)
            mask[:, :plen] = 1
            for r, j in enumerate(batch):
                suffix = self.seqs[j].ids[plen:]
                ids[r, : len(suffix)] = torch.tensor(suffix, dtype=torch.long, device=self.device)
                mask[r, plen : plen + len(suffix)] = 1
            if cache is None:
                batch_cache, attn = None, (None if bool(mask.all()) else mask)
            else:
                batch_cache = _fork_cache(cache, len(batch))
                attn = mask
            hidden = self._forward(ids, attn, plen, batch_cache).last_hidden_state
            for r, j in enumerate(batch):
                s = self.seqs[j]
                self.out[j] = hidden[r, s.start - plen : s.start - plen + s.n]

    def _batches(self, lengths: list[int], plen: int) -> list[list[int]]:
        """Split rows of descending ``lengths`` into contiguous batches: each within the token budget (rows x
        (plen + longest) <= max_tokens, at least one row) and the row cap, minimizing padded tokens + a per-pass
        overhead (dynamic programming)."""
        m = len(lengths)
        best = [0.0] + [float("inf")] * m
        cut = [0] * (m + 1)
        for b in range(1, m + 1):
            for a in range(b - 1, -1, -1):
                rows = b - a
                if rows > 1 and (rows * (plen + lengths[a]) > self.max_tokens
                                 or (self.max_rows is not None and rows > self.max_rows)):
                    break
                cost = best[a] + rows * lengths[a] + self.overhead
                if cost < best[b]:
                    best[b], cut[b] = cost, a
        out, b = [], m
        while b > 0:
            out.append(list(range(cut[b], b)))
            b = cut[b]
        return out[::-1]

    # -- grouping --
    def solve(self, members: list[int], cache: Any, plen: int) -> None:
        """``members`` share tokens ``[0, plen)`` (held by ``cache``). Group them by longer shared prefixes (a
        contiguous split of the sorted list, chosen by dynamic programming on tokens computed + a per-pass overhead),
        extend the cache for each group and recurse; the rest run as one leaf over ``cache``."""
        seqs = self.seqs
        members = sorted(members, key=lambda j: seqs[j].ids)
        m = len(members)
        if m == 1:
            self._run_leaf(members, cache, plen)
            return
        # lcp[a] = shared tokens of members[a] and members[a+1], capped so that every suffix still contains the
        # position that predicts completion token 0
        lcp = [_lcp(seqs[members[a]].ids, seqs[members[a + 1]].ids,
                    min(seqs[members[a]].start, seqs[members[a + 1]].start)) for a in range(m - 1)]
        rest = [len(seqs[j].ids) - plen for j in members]
        # best[b]: cost of members[:b]; choice[b] = (a, shared) meaning members[a:b] is one group sharing `shared`
        # tokens (shared == plen: they stay in this leaf)
        inf = float("inf")
        best = [0.0] + [inf] * m
        choice: list[tuple[int, int]] = [(0, plen)] * (m + 1)
        for b in range(1, m + 1):
            # members[b-1] alone in this leaf
            cand = best[b - 1] + rest[b - 1]
            if cand < best[b]:
                best[b], choice[b] = cand, (b - 1, plen)
            shared, total = None, rest[b - 1]
            for a in range(b - 2, -1, -1):
                shared = lcp[a] if shared is None else min(shared, lcp[a])
                if shared <= plen:
                    break
                total += rest[a]
                gain = shared - plen
                cost = best[a] + gain + (total - (b - a) * gain) + self.overhead * (1 + max(0, math.ceil(
                    (b - a) * (plen + max(rest[a:b])) / self.max_tokens) - 1))
                if cost < best[b]:
                    best[b], choice[b] = cost, (a, shared)
        groups: list[tuple[list[int], int]] = []
        b = m
        while b > 0:
            a, shared = choice[b]
            groups.append((members[a:b], shared))
            b = a
        leaf = [j for g, shared in groups if shared == plen for j in g]
        for g, shared in groups:
            if shared > plen:
                anchor = seqs[g[0]].ids
                self.solve(g, self._extend(cache, anchor, plen, shared), shared)
        if leaf:
            self._run_leaf(leaf, cache, plen)


def _naive_hidden(model: Any, seqs: list[_Seq], pad_token_id: int, batch_size: int,
                  device: torch.device) -> tuple[list[torch.Tensor], int]:
    """Every context from token 0, in arrival order, ``batch_size`` at a time, padded to the batch's longest."""
    out: list[torch.Tensor] = []
    tokens = 0
    for start in range(0, len(seqs), batch_size):
        batch = seqs[start : start + batch_size]
        length = max(len(s.ids) for s in batch)
        ids = torch.full((len(batch), length), pad_token_id, dtype=torch.long, device=device)
        mask = torch.zeros((len(batch), length), dtype=torch.long, device=device)
        for j, s in enumerate(batch):
            ids[j, : len(s.ids)] = torch.tensor(s.ids, dtype=torch.long, device=device)
            mask[j, : len(s.ids)] = 1
        tokens += ids.numel()
        hidden = final_hidden_states(model, ids, mask)
        for j, s in enumerate(batch):
            out.append(hidden[j, s.start : s.start + s.n])
    return out, tokens


def _default_overhead(device: torch.device) -> int:
    return _PASS_OVERHEAD_TOKENS.get(device.type, _PASS_OVERHEAD_TOKENS_ACCEL)


def _synthetic_pair(model: Any) -> list[_Seq]:
    """Two token sequences sharing a 4-token prefix, the same on every rank (the synced one-time check)."""
    config = getattr(model, "config", None)
    if config is not None and hasattr(config, "get_text_config"):
        config = config.get_text_config()
    vocab = int(getattr(config, "vocab_size", 0) or 0) or 16
    a = [t % vocab for t in (1, 2, 3, 4, 5, 6, 7, 8)]
    b = [t % vocab for t in (1, 2, 3, 4, 8, 7, 6, 5)]
    return [_Seq(ids=a, start=5, n=3), _Seq(ids=b, start=5, n=3)]


def _check_cache_once(model: Any, seqs: list[_Seq], pad_token_id: int, device: torch.device,
                      synced: bool = False) -> str | None:
    """Compare the prefix-shared hidden states of two contexts with their plain forward (once per model).

    ``synced``: the pair is a fixed synthetic one, so every rank of a sharded run runs the same forward passes at
    the same call (the first), whatever its own contexts are."""
    cached = getattr(model, _CACHE_OK_ATTR, None)
    if cached is not None:
        return None if cached is True else cached
    pair = _synthetic_pair(model) if synced else None
    ordered = sorted(seqs, key=lambda s: s.ids)
    for a, b in zip(ordered, ordered[1:]):
        if pair is not None:
            break
        if _lcp(a.ids, b.ids, min(a.start, b.start)) >= 2:
            pair = [a, b]
    if pair is None:
        return None  # nothing shared: nothing to check yet
    runner = _Runner(model, pair, pad_token_id, 1 << 30, None, device, overhead=0)
    try:
        runner.solve([0, 1], None, 0)
        plain, _ = _naive_hidden(model, pair, pad_token_id, 1, device)
    except Exception as exc:  # noqa: BLE001
        reason = f"the cached forward failed: {type(exc).__name__}: {exc}".splitlines()[0][:200]
    else:
        reason = None
        # the precision the decoder computed in: its output dtype, or a half dtype autocast ran it in
        half = torch.is_autocast_enabled(device.type) and torch.get_autocast_dtype(device.type) in (
            torch.bfloat16, torch.float16)
        for got, ref in zip(runner.out, plain):
            scale = float(ref.float().abs().max()) or 1.0
            diff = float((got.float() - ref.float()).abs().max()) / scale
            tol = 1e-4 if ref.dtype in (torch.float32, torch.float64) and not half else 5e-2
            if not diff <= tol:
                reason = f"cached and plain hidden states differ (max relative {diff:.2e} > {tol:g})"
                break
    try:
        setattr(model, _CACHE_OK_ATTR, True if reason is None else reason)
    except Exception:  # noqa: BLE001
        pass
    return reason


def completion_hidden_states(
    model: Any,
    contexts: Sequence[Sequence[int]],
    completions: Sequence[torch.Tensor],
    pad_token_id: int,
    max_tokens: int = DEFAULT_REPLAY_MAX_TOKENS,
    max_rows: int | None = None,
    prefix_sharing: bool = True,
    sync_passes: Callable[[int], int] | None = None,
    device: torch.device | None = None,
) -> tuple[list[torch.Tensor], dict[str, Any]]:
    """Final hidden states at the positions that predict each completion token, ``(T_i, H)`` per context.

    Args:
        model: a causal LM (eval mode, under ``no_grad`` is the caller's business).
        contexts: token ids of each context (non-empty).
        completions: the completion token ids, one 1-D tensor per context.
        pad_token_id: used to pad within a batch (masked out).
        max_tokens: token budget of a forward pass, rows x (prefix + longest suffix), padding included.
        max_rows: optional cap on rows per forward pass.
        prefix_sharing: False runs every context from token 0 in arrival order (the naive replay: ``max_rows``
            contexts per pass, 8 if unset), as the benchmark's baseline.
        sync_passes: sharded training (FSDP), where every decoder forward pass is a collective: called once, before
            the first pass of the plan, with this rank's number of passes; returns the largest over the ranks, and
            this rank then runs the difference as one-token dummy passes, so all ranks run the same number of
            passes. The one-time cached-vs-plain check then uses a fixed synthetic pair (same passes everywhere).
            ``contexts`` may be empty then. None (default): no synchronization.
        device: where the inputs go when ``completions`` is empty (default: the model's device).

    Returns:
        ``(hidden, info)`` with ``info = {"tokens", "prefix_shared", "fallback", "passes"}`` (``passes``: this
        rank's real passes, dummies excluded; 0 unless ``sync_passes`` is given).
    """
    if device is None:
        device = completions[0].device if completions else _model_device(model)
    synced = sync_passes is not None
    seqs = []
    for ctx, comp in zip(contexts, completions):
        if len(ctx) < 1:
            raise ValueError("every replay context must have at least one token")
        # the whole completion, its last token included, although that token's output predicts nothing: a model
        # whose attention is not causal (BERT-style heads built without is_decoder) would see every position change
        seqs.append(_Seq(ids=list(ctx) + comp.tolist(), start=len(ctx) - 1, n=int(comp.numel())))
    if not prefix_sharing:
        passes = math.ceil(len(seqs) / (max_rows or 8))
        extra = dummy_pass_count(sync_passes, passes)
        hidden, tokens = _naive_hidden(model, seqs, pad_token_id, max_rows or 8, device)
        run_dummy_passes(model, extra, device)
        return hidden, {"tokens": tokens, "prefix_shared": False, "fallback": None, "passes": passes}
    reason = prefix_cache_support(model)
    if reason is None:
        reason = _check_cache_once(model, seqs, pad_token_id, device, synced=synced)
    if reason is not None:
        if getattr(model, "_mrtpo_prefix_logged", None) != reason:
            logger.warning("replay: prefix sharing off for %s: %s; every context runs from token 0",
                           type(model).__name__, reason)
            try:
                model._mrtpo_prefix_logged = reason
            except Exception:  # noqa: BLE001
                pass
        # still length-sorted and token-budgeted, just without a shared prefix
        order = sorted(range(len(seqs)), key=lambda j: len(seqs[j].ids), reverse=True)
        batches, i = [], 0
        while i < len(order):
            longest = len(seqs[order[i]].ids)
            rows = max(1, max_tokens // longest)
            if max_rows is not None:
                rows = min(rows, max_rows)
            batches.append(order[i : i + rows])
            i += len(batches[-1])
        extra = dummy_pass_count(sync_passes, len(batches))
        out: list[torch.Tensor | None] = [None] * len(seqs)
        tokens = 0
        for batch in batches:
            hidden, t = _naive_hidden(model, [seqs[j] for j in batch], pad_token_id, len(batch), device)
            tokens += t
            for j, h in zip(batch, hidden):
                out[j] = h
        run_dummy_passes(model, extra, device)
        return out, {"tokens": tokens, "prefix_shared": False, "fallback": reason,  # type: ignore[return-value]
                     "passes": len(batches)}
    overhead = _default_overhead(device)
    passes = 0
    if synced:  # the plan depends only on the token ids: count its passes first
        plan = _Runner(model, seqs, pad_token_id, max_tokens, max_rows, device, overhead, dry=True)
        plan.solve(list(range(len(seqs))), None, 0)
        passes = plan.passes
    extra = dummy_pass_count(sync_passes, passes)
    runner = _Runner(model, seqs, pad_token_id, max_tokens, max_rows, device, overhead)
    if seqs:
        runner.solve(list(range(len(seqs))), None, 0)
    if synced and runner.passes != passes:
        raise RuntimeError(f"replay plan ran {runner.passes} passes, {passes} planned")  # would desynchronize ranks
    run_dummy_passes(model, extra, device)
    return runner.out, {"tokens": runner.tokens, "prefix_shared": True,  # type: ignore[return-value]
                        "fallback": None, "passes": runner.passes}


def _model_device(model: Any) -> torch.device:
    try:
        return next(model.parameters()).device
    except (StopIteration, AttributeError, TypeError):
        return torch.device("cpu")
