"""Replay: the behavior policy reads each sampled completion under ``P_all`` and ``P_\\k`` (spec §3–§4).

No generation happens here: for every replayed response–reward pair ``(i, k)`` the frozen behavior policy (the
model state that sampled the group, run under ``torch.no_grad``) scores the **sampled completion token ids**
(never re-tokenized text) after both contexts, and the per-token Jensen–Shannon distance between the two
next-token distributions over the full vocabulary gives ``q_{k,t}``.

Cost (the only one MRTPO adds over GDPO), see docs/performance.md:

* **Prefix sharing.** Every context is a token sequence ``context ⊕ completion``. The sequences are sorted and
  grouped by their longest common token prefix (``P_0`` for the G responses of a group; ``P_0 ⊕ Z_1 … Z_{k-1}``
  for ``P_all`` and ``P_\\k`` of one response; for in-prompt tasks whatever the contexts share). The key/value cache
  of a shared prefix is computed once with transformers' own :class:`~transformers.DynamicCache`, copied and
  expanded (``batch_repeat_interleave``) per batch, and only the differing suffix (blocks + completion) is run,
  with an attention mask of ones over the prefix (position ids: the model's own continuation ``P, P+1, …``).
  The grouping is hierarchical (a prefix shared by a whole group, then a longer one shared by the contexts of one
  response) and chosen by a small cost model (tokens computed + a per-pass overhead). Where a model's cache cannot
  be reused that way (recurrent / linear-attention / hybrid caches, stateful models, no ``cache`` argument, or a
  one-time check against the plain forward that fails) the replay falls back to running every context from token
  0, with a logged reason.
* **Batching.** Contexts are sorted by length and batched by a token budget (``max_tokens``: rows x (prefix +
  longest suffix) of the batch, padding included), right-padded within a batch only.
* **Memory.** Only the final hidden states at completion positions are kept, ``(n, T, H)``; logits are produced
  from them chunk by chunk inside :func:`~mrtpo_sdk.algorithms.chunked_js_distance`, whose chunk size is chosen
  from a memory budget by default, so no ``contexts × T × V`` tensor is ever built.
* **Sharded training.** The trainer hands the replay whole parameters (TRL's ``unwrap_model_for_generation`` /
  ``summon_full_params``, see ``mrtpo_sdk.trainer.trainer._replay_model``); under FSDP, where each layer's forward
  is a collective, ``sync_passes`` makes every rank run the same number of decoder passes (dummy one-token passes
  on the less busy ranks).

Exactness and precision contract:

* The LM head is the **model's own forward tail**: the causal LM's ``forward`` is called with its decoder replaced,
  for that call, by one that returns the given hidden states, so every multiplier the architecture applies after
  the decoder (Granite's ``logits_scaling``, Falcon-H1's ``lm_head_multiplier``, Cohere's ``logit_scale``, Gemma's
  final soft-capping, …) is applied by the model's code itself. Inside that call the output embedding is computed
  in float32 (hidden states and head weight upcast, vocabulary slice by slice), so for bf16/fp16 models the logits
  are float32 from the start and everything after the head runs in float32 as well.
* Log-softmax and JS are computed in float32 (float64 for float64 models) from those float32 logits, chunk by
  chunk; ``q`` is returned as float32. Temperature divides the logits before the softmax, as in sampling.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .algorithms import chunked_js_distance
from .algorithms.js import js_chunk_size_for_budget
from .task import Prompt, Task

__all__ = [
    "ReplayOutput",
    "replay_relevance",
    "completion_hidden_states",
    "final_hidden_states",
    "lm_head_projection",
    "model_head",
    "prefix_cache_support",
    "DEFAULT_REPLAY_MAX_TOKENS",
]

logger = logging.getLogger(__name__)

DEFAULT_REPLAY_MAX_TOKENS = 16384
"""Default token budget of one replay forward pass (rows × (prefix + longest suffix), padding included)."""

# Cost model of the prefix grouping, in "tokens": a separate forward pass (kernel launches, cache copy) costs about
# this many tokens of work. Large on accelerators (launch-bound small batches), small on CPU (compute-bound).
_PASS_OVERHEAD_TOKENS = {"cpu": 32}
_PASS_OVERHEAD_TOKENS_ACCEL = 768
_HEAD_SLICE_BYTES = 64 * 2**20  # upcast the output embedding to float32 at most this many bytes at a time


@dataclass
class ReplayOutput:
    """Result of :func:`replay_relevance`.

    Attributes:
        q: ``(B, K, T)`` float32 JS distances ``q_{k,t}`` in [0, 1] for replayed pairs, 0 elsewhere (those pairs get
            weight 1 downstream).
        replayed: ``(B, K)`` bool, the pairs that were replayed (spec §2).
        num_replayed: number of replayed pairs.
        num_forward_contexts: number of contexts scored by the policy (``P_all`` once per response with a
            replayed pair, plus one ``P_\\k`` per pair).
        num_forward_tokens: tokens actually run through the decoder (shared prefixes once, padding included).
        prefix_shared: whether the prefix-shared path ran (False: every context from token 0; see ``fallback``).
        fallback: why the prefix-shared path did not run (``None`` when it did, or when it was not asked for).
    """

    q: torch.Tensor
    replayed: torch.Tensor
    num_replayed: int
    num_forward_contexts: int
    num_forward_tokens: int = 0
    prefix_shared: bool = False
    fallback: str | None = None


# ----------------------------------------------------------------------------------------------------------------
# decoder / head access
# ----------------------------------------------------------------------------------------------------------------


def _decoder(model: Any) -> Any | None:
    """The module the causal LM's ``forward`` runs before its head, or None.

    ``get_decoder()`` first, then ``base_model`` / ``model`` / ``transformer``: the first that is a separate module,
    not the output embedding (BERT-style heads are called ``decoder``) and takes ``input_ids``.
    """
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    candidates = []
    get = getattr(model, "get_decoder", None)
    if get is not None:
        try:
            candidates.append(get())
        except Exception:  # noqa: BLE001 - exotic models raise here
            pass
    for name in ("base_model", "model", "transformer"):
        try:
            candidates.append(getattr(model, name, None))
        except Exception:  # noqa: BLE001
            pass
    for decoder in candidates:
        if decoder is None or decoder is model or decoder is head or not isinstance(decoder, torch.nn.Module):
            continue
        if _accepts(decoder, "input_ids"):
            return decoder
    return None


def _cache_kwarg(module: Any) -> str | None:
    """Name of the cache argument of ``module.forward`` (``cache`` in transformers 5, ``past_key_values`` before)."""
    try:
        params = inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        return None
    for name in ("cache", "past_key_values"):
        if name in params:
            return name
    return None


def _accepts(module: Any, name: str) -> bool:
    try:
        params = inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _out_cache(out: Any) -> Any:
    for name in ("cache", "past_key_values"):
        value = getattr(out, name, None)
        if value is not None:
            return value
    return None


def final_hidden_states(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
    """Final (post-norm) hidden states of a causal LM, ``(n, L, H)``, for right-padded ``(n, L)`` inputs.

    Uses the decoder stack (``model.get_decoder()``) so the ``(n, L, V)`` logits are never materialized. Position
    ids are the model's own defaults (``0..L-1`` for most; RoBERTa-style models offset them by the padding index),
    which right padding leaves unchanged for the real tokens.
    """
    decoder = _decoder(model)
    if decoder is None:
        out = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        return out.hidden_states[-1]
    out = decoder(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
    return out.last_hidden_state


_FP32_WEIGHT_CACHE_BYTES = 1 << 30  # keep an upcast copy of a half-precision head weight up to this size
_MM_OUT_DTYPE_OK: dict[str, bool] = {}


class _Fp32Linear:
    """``x @ weight.T + bias`` with float32 output (float64 if either is float64), never rounded to the weight's
    dtype. For a half-precision weight: on CUDA, when ``x`` is exactly representable in that dtype (the decoder's
    own output is), ``torch.mm(..., out_dtype=float32)`` (half inputs, float32 accumulation and output: tensor-core
    speed); otherwise the weight upcast once per replay (kept while it is at most 1 GiB) or slice by slice."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None):
        self.weight, self.bias = weight, bias
        self._upcast: torch.Tensor | None = None

    def _mm_out_dtype(self, x: torch.Tensor) -> torch.Tensor | None:
        w = self.weight
        if w.device.type != "cuda" or w.dtype not in (torch.bfloat16, torch.float16):
            return None
        if _MM_OUT_DTYPE_OK.get(w.device.type) is False:
            return None
        xh = x.to(w.dtype)
        if not bool((xh.to(x.dtype) == x).all()):
            return None
        try:
            out = torch.mm(xh.reshape(-1, xh.size(-1)), w.t(), out_dtype=torch.float32)
        except (TypeError, RuntimeError, NotImplementedError) as exc:
            _MM_OUT_DTYPE_OK[w.device.type] = False
            logger.info("replay: torch.mm(out_dtype=float32) unavailable (%s); the head weight is upcast instead",
                        str(exc).splitlines()[0][:120])
            return None
        _MM_OUT_DTYPE_OK[w.device.type] = True
        return out.reshape(*x.shape[:-1], w.size(0))

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        dtype = torch.float64 if torch.float64 in (x.dtype, w.dtype) else torch.float32
        x = x.to(device=w.device, dtype=dtype)
        out = None
        if w.dtype == dtype:
            out = torch.nn.functional.linear(x, w)
        elif dtype == torch.float32:
            out = self._mm_out_dtype(x)
        size = w.numel() * torch.finfo(dtype).bits // 8
        if out is None and self._upcast is None and size <= _FP32_WEIGHT_CACHE_BYTES:
            self._upcast = w.detach().to(dtype)
        if out is None and self._upcast is not None:
            out = torch.nn.functional.linear(x, self._upcast)
        if out is None:
            v = w.size(0)
            step = max(1, _HEAD_SLICE_BYTES // max(1, w.size(1) * torch.finfo(dtype).bits // 8))
            out = torch.empty((*x.shape[:-1], v), dtype=dtype, device=x.device)
            for start in range(0, v, step):
                out[..., start : start + step] = torch.nn.functional.linear(x, w[start : start + step].to(dtype))
        if self.bias is not None:
            out = out + self.bias.to(dtype)
        return out


def _fp32_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """``x @ weight.T + bias`` in float32 (float64 if either is float64); see :class:`_Fp32Linear`."""
    return _Fp32Linear(weight, bias)(x)


def lm_head_projection(model: Any) -> Callable[[torch.Tensor], torch.Tensor]:
    """``(n, H) -> (n, V)`` float32 logits from final hidden states by the known head formula (the fallback of
    :func:`model_head`).

    The output embedding in float32, then every multiplier transformers' causal LMs apply after it, read from the
    text config: ``logit_scale`` (Cohere: ``*``), ``logits_scaling`` (Granite: ``/``), ``lm_head_multiplier``
    (Falcon-H1: ``*``), ``output_multiplier`` (``*``), ``final_logit_softcapping`` (Gemma 2/3:
    ``tanh(x / c) * c``). Temperature is applied later, by the JS function.
    """
    head = model.get_output_embeddings()
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    mult = 1.0
    for name in ("logit_scale", "lm_head_multiplier", "output_multiplier"):
        value = getattr(config, name, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            mult *= float(value)
    value = getattr(config, "logits_scaling", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value:
        mult /= float(value)
    softcap = getattr(config, "final_logit_softcapping", None)
    weight = getattr(head, "weight", None)
    linear = _Fp32Linear(weight, getattr(head, "bias", None)) if isinstance(weight, torch.Tensor) else None

    def project(h: torch.Tensor) -> torch.Tensor:
        if linear is not None and weight.dim() == 2:
            logits = linear(h)
        else:
            logits = head(h.to(next(head.parameters()).dtype)).float()
        if mult != 1.0:
            logits = logits * mult
        if softcap:
            logits = torch.tanh(logits / softcap) * softcap
        return logits

    return project


_STUB_OUTPUT: list[type] = []


def _stub_output_class() -> type:
    """A decoder output with ``last_hidden_state`` set and every other field (cache, attentions, router logits, ...)
    ``None``, whatever name the causal LM's forward reads."""
    if not _STUB_OUTPUT:
        from transformers.modeling_outputs import BaseModelOutputWithPastAndCrossAttentions

        class _StubDecoderOutput(BaseModelOutputWithPastAndCrossAttentions):
            def __getattr__(self, name: str) -> Any:
                if name.startswith("__"):
                    raise AttributeError(name)
                return None

        _STUB_OUTPUT.append(_StubDecoderOutput)
    return _STUB_OUTPUT[0]


class _Stub:
    """Context manager: ``decoder.forward`` returns fixed hidden states; the output embedding runs in float32."""

    def __init__(self, decoder: Any, head: Any, hidden: torch.Tensor, linear: "_Fp32Linear | None"):
        self.decoder, self.head, self.hidden, self.linear = decoder, head, hidden, linear
        self.decoder_called = self.head_called = False

    def _decoder_forward(self, *args: Any, **kwargs: Any) -> Any:
        self.decoder_called = True
        return _stub_output_class()(last_hidden_state=self.hidden)

    def _head_forward(self, x: torch.Tensor) -> torch.Tensor:
        self.head_called = True
        return self.linear(x)

    def __enter__(self) -> "_Stub":
        # instance-level forwards (e.g. accelerate's hooks) are saved and put back
        self._saved = [(m, m.__dict__.get("forward")) for m in (self.decoder, self.head)]
        self.decoder.forward = self._decoder_forward
        if self.linear is not None:
            self.head.forward = self._head_forward
        return self

    def __exit__(self, *exc: Any) -> None:
        for module, saved in self._saved:
            if saved is None:
                module.__dict__.pop("forward", None)
            else:
                module.forward = saved


def model_head(model: Any) -> tuple[Callable[[torch.Tensor], torch.Tensor], str]:
    """``(n, H) -> (n, V)`` float32 logits computed by **the model's own forward** from given final hidden states.

    The causal LM's ``forward`` runs with ``get_decoder()`` returning the hidden states (so whatever the model does
    between its decoder and its logits is applied by its own code), and the output embedding computed in float32
    (see the module docstring). Checked on a probe row when built: if the model's forward does not go through its
    decoder and head that way, the known formula :func:`lm_head_projection` is used instead.

    Returns:
        ``(project, how)``: the projection, and ``"model forward"`` or ``"formula (<reason>)"``.
    """
    decoder, head = _decoder(model), model.get_output_embeddings()
    if decoder is None or head is None:
        return lm_head_projection(model), "formula (no separate decoder / output embedding)"

    weight = getattr(head, "weight", None)
    linear = (_Fp32Linear(weight, getattr(head, "bias", None))
              if isinstance(weight, torch.Tensor) and weight.dim() == 2 else None)

    def project(h: torch.Tensor) -> torch.Tensor:
        dtype = torch.float64 if h.dtype == torch.float64 else torch.float32
        stub = _Stub(decoder, head, h.to(dtype).unsqueeze(0), linear)
        dummy = torch.zeros((1, h.size(0)), dtype=torch.long, device=h.device)
        with stub:
            out = model(input_ids=dummy, use_cache=False)
        if not stub.decoder_called:
            raise RuntimeError("the model's forward did not call get_decoder()")
        logits = out.logits
        if logits.dim() != 3 or logits.shape[:2] != (1, h.size(0)):
            raise RuntimeError(f"unexpected logits shape {tuple(logits.shape)}")
        return logits[0].to(dtype)

    try:
        with torch.no_grad():
            device = next(model.parameters()).device
            ids = torch.zeros((1, 1), dtype=torch.long, device=device)
            hidden = decoder(input_ids=ids, use_cache=False).last_hidden_state[0]  # the real hidden size
            got = project(hidden)
            ref = model(input_ids=ids, use_cache=False).logits[0].to(got.dtype)
            tol = 2e-2 * (1 + float(ref.abs().max()))
            if got.shape != ref.shape or not torch.allclose(got, ref, rtol=2e-2, atol=tol):
                raise RuntimeError("the stubbed forward does not reproduce the model's logits")
    except Exception as exc:  # noqa: BLE001 - any failure means: use the formula
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        logger.info("replay: LM head by formula (%s)", reason)
        return lm_head_projection(model), f"formula ({reason})"
    return project, "model forward"


# ----------------------------------------------------------------------------------------------------------------
# prefix-shared forward passes
# ----------------------------------------------------------------------------------------------------------------

_CACHE_OK_ATTR = "_mrtpo_prefix_cache_ok"


def prefix_cache_support(model: Any) -> str | None:
    """``None`` if the model's key/value cache can be reused for a shared prefix, else the reason it cannot.

    Static checks only: a separate decoder taking ``cache``/``past_key_values``; not stateful
    (Mamba/RWKV-style); a :class:`~transformers.DynamicCache` built from the config whose layers are all plain or
    sliding-window attention layers (no linear-attention / SSM state, which cannot be copied per context and
    continued exactly here). :func:`replay_relevance` additionally compares one cached context with its plain
    forward the first time it sees a model.
    """
    decoder = _decoder(model)
    if decoder is None:
        return "the model has no separate decoder (get_decoder)"
    if getattr(model, "_is_stateful", False) or getattr(decoder, "_is_stateful", False):
        return f"{type(model).__name__} is stateful (recurrent state, no per-token key/value cache)"
    if _cache_kwarg(decoder) is None:
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
        self.decoder = _decoder(model)
        self.cache_kw = _cache_kwarg(self.decoder)
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
        got = _out_cache(out)
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


def _default_js_memory(device: torch.device) -> int:
    """Default JS chunk budget: 1 GiB on accelerators (large chunks amortize kernel launches), 256 MiB on CPU."""
    return 256 * 2**20 if device.type == "cpu" else 1 << 30


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
        extra = _synced_extra(sync_passes, passes)
        hidden, tokens = _naive_hidden(model, seqs, pad_token_id, max_rows or 8, device)
        _dummy_passes(model, extra, device)
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
        extra = _synced_extra(sync_passes, len(batches))
        out: list[torch.Tensor | None] = [None] * len(seqs)
        tokens = 0
        for batch in batches:
            hidden, t = _naive_hidden(model, [seqs[j] for j in batch], pad_token_id, len(batch), device)
            tokens += t
            for j, h in zip(batch, hidden):
                out[j] = h
        _dummy_passes(model, extra, device)
        return out, {"tokens": tokens, "prefix_shared": False, "fallback": reason,  # type: ignore[return-value]
                     "passes": len(batches)}
    overhead = _default_overhead(device)
    passes = 0
    if synced:  # the plan depends only on the token ids: count its passes first
        plan = _Runner(model, seqs, pad_token_id, max_tokens, max_rows, device, overhead, dry=True)
        plan.solve(list(range(len(seqs))), None, 0)
        passes = plan.passes
    extra = _synced_extra(sync_passes, passes)
    runner = _Runner(model, seqs, pad_token_id, max_tokens, max_rows, device, overhead)
    if seqs:
        runner.solve(list(range(len(seqs))), None, 0)
    if synced and runner.passes != passes:
        raise RuntimeError(f"replay plan ran {runner.passes} passes, {passes} planned")  # would desynchronize ranks
    _dummy_passes(model, extra, device)
    return runner.out, {"tokens": runner.tokens, "prefix_shared": True,  # type: ignore[return-value]
                        "fallback": None, "passes": runner.passes}


def _model_device(model: Any) -> torch.device:
    try:
        return next(model.parameters()).device
    except (StopIteration, AttributeError, TypeError):
        return torch.device("cpu")


def _synced_extra(sync_passes: Callable[[int], int] | None, passes: int) -> int:
    """How many dummy passes this rank runs so that every rank runs as many as the busiest one."""
    if sync_passes is None:
        return 0
    most = int(sync_passes(passes))
    if most < passes:
        raise RuntimeError(f"sync_passes returned {most} < this rank's {passes} passes")
    return most - passes


def _dummy_passes(model: Any, n: int, device: torch.device) -> None:
    """``n`` one-token decoder passes whose outputs are discarded: they only take part in the collectives (the
    all-gather of every sharded layer) that the busiest rank's real passes need."""
    ids = torch.zeros((1, 1), dtype=torch.long, device=device)
    for _ in range(n):
        final_hidden_states(model, ids, None)


@torch.no_grad()
def replay_relevance(
    model: Any,
    task: Task,
    examples: Sequence[Any],
    completion_ids: torch.Tensor,
    completion_mask: torch.Tensor,
    blocks: Sequence[Sequence[str]],
    replayed: torch.Tensor,
    encode_prompts: Callable[[list[Prompt]], list[list[int]]],
    pad_token_id: int,
    temperature: float = 1.0,
    chunk_size: int | None = None,
    batch_size: int | None = None,
    max_tokens: int = DEFAULT_REPLAY_MAX_TOKENS,
    prefix_sharing: bool = True,
    js_memory_bytes: int | None = None,
    sync_passes: Callable[[int], int] | None = None,
    decoder_autocast: Callable[[], Any] | None = None,
) -> ReplayOutput:
    """Per-token relevance ``q_{k,t}`` of every replayed pair (spec §3–§4).

    Args:
        model: the behavior policy (the state that sampled this group); run in eval mode under ``no_grad``.
        task: gives the replay contexts (``Task.replay_prompts``: blocks appended, or in-prompt constraints).
        examples: the B examples, one per completion.
        completion_ids: ``(B, T)`` long, the sampled completion token ids, right-padded.
        completion_mask: ``(B, T)`` 0/1, valid completion tokens.
        blocks: B lists of K blocks (``""`` = no information).
        replayed: ``(B, K)`` bool, the pairs to replay (from :func:`~mrtpo_sdk.algorithms.replay_pairs`).
        encode_prompts: turns prompts into token ids exactly as sampling did (same chat template, generation prompt).
        pad_token_id: id used to pad contexts (masked out).
        temperature: the sampling temperature; logits are divided by it before the softmax, as in sampling.
        chunk_size: tokens per JS chunk; ``None`` (default) chooses it from ``js_memory_bytes``
            (:func:`~mrtpo_sdk.algorithms.js.js_chunk_size_for_budget`).
        batch_size: optional cap on contexts per forward pass (the token budget ``max_tokens`` is the main control).
        max_tokens: token budget of one forward pass: rows x (shared prefix + longest suffix), padding included.
        prefix_sharing: compute shared prefixes once (default); False = every context from token 0 (naive).
        js_memory_bytes: memory budget of one JS chunk when ``chunk_size`` is None; default 1 GiB on an accelerator,
            256 MiB on CPU (there, smaller chunks stay in cache and run faster: docs/performance.md).
        sync_passes: sharded training (FSDP, where each decoder forward pass all-gathers the layers' shards, a
            collective every rank must join): ``n -> max over ranks of n`` (an all-reduce). With it, every rank,
            also one with no replayed pair, runs the same decoder passes: the head check, the one-time cache check
            on a fixed pair, then its own plan padded with one-token dummy passes to the busiest rank's count
            (see :func:`completion_hidden_states`). None (default): single process or unsharded replicas.
        decoder_autocast: a context-manager factory the decoder passes run under, e.g. the trainer's
            ``accelerator.autocast`` (bf16 mixed precision: the decoder in bf16, as the update's forward). The LM
            head and the JS distance always run with autocast off, in float32 (the precision contract above).
            None (default): the decoder in the model's own dtype.

    Returns:
        :class:`ReplayOutput` with ``q`` of shape ``(B, K, T)``.

    Raises:
        ValueError: inconsistent shapes or non-positive budgets.
    """
    B, T = completion_ids.shape
    K = len(task.verifiers)
    if replayed.shape != (B, K):
        raise ValueError(f"replayed must be (B, K) = ({B}, {K}), got {tuple(replayed.shape)}")
    if len(examples) != B or len(blocks) != B:
        raise ValueError(f"expected {B} examples and block lists, got {len(examples)} and {len(blocks)}")
    if max_tokens < 1 or (batch_size is not None and batch_size < 1):
        raise ValueError(f"max_tokens and batch_size must be >= 1, got {max_tokens} and {batch_size}")
    q = torch.zeros((B, K, T), dtype=torch.float32, device=completion_ids.device)
    pairs = [(i, k) for i in range(B) for k in range(K) if bool(replayed[i, k])]
    if not pairs and sync_passes is None:
        return ReplayOutput(q=q, replayed=replayed.clone(), num_replayed=0, num_forward_contexts=0)

    lengths = completion_mask.sum(dim=1).tolist()
    completions = [completion_ids[i, : int(lengths[i])] for i in range(B)]
    responses = sorted({i for i, _ in pairs})
    contexts = {(i, k): task.replay_prompts(examples[i], list(blocks[i]), k) for i, k in pairs}

    was_training = getattr(model, "training", False)
    model.eval()
    float32_tail = contextlib.ExitStack()
    try:
        if sync_passes is not None:
            # the head check's decoder passes first, on every rank (same count everywhere)
            project, _how = model_head(model)
        # P_all once per response (it does not depend on k), then one P_\k per pair; all scored in one pass plan.
        all_prompts = [contexts[next(p for p in pairs if p[0] == i)][0] for i in responses]
        wo_prompts = [contexts[p][1] for p in pairs]
        ids = encode_prompts(all_prompts + wo_prompts) if pairs else []
        comps = [completions[i] for i in responses] + [completions[i] for i, _ in pairs]
        with decoder_autocast() if decoder_autocast is not None else contextlib.nullcontext():
            hidden, info = completion_hidden_states(
                model, ids, comps, pad_token_id, max_tokens=max_tokens, max_rows=batch_size,
                prefix_sharing=prefix_sharing, sync_passes=sync_passes, device=completion_ids.device,
            )
        if not pairs:
            return ReplayOutput(q=q, replayed=replayed.clone(), num_replayed=0, num_forward_contexts=0)
        # the head and JS in float32, also when the caller (or accelerate's wrapped forward) has autocast on
        float32_tail.enter_context(torch.autocast(completion_ids.device.type, enabled=False))
        h_all = dict(zip(responses, hidden[: len(responses)]))
        h_wo = hidden[len(responses) :]
        if sync_passes is None:
            project, _how = model_head(model)
        hdim = h_wo[0].size(-1)
        if chunk_size is None:
            vocab = model.get_output_embeddings().weight.shape[0]
            if js_memory_bytes is None:
                js_memory_bytes = _default_js_memory(completion_ids.device)
            chunk_size = js_chunk_size_for_budget(vocab, js_memory_bytes)
        # pairs in groups whose (n, T, H) hidden tensors stay small; the JS inside is chunked by chunk_size
        per_group = max(1, (64 * 2**20) // max(1, T * hdim * h_wo[0].element_size()))
        for start in range(0, len(pairs), per_group):
            chunk = pairs[start : start + per_group]
            hp = torch.zeros((len(chunk), T, hdim), dtype=h_wo[0].dtype, device=completion_ids.device)
            hm = torch.zeros_like(hp)
            for j, (i, _) in enumerate(chunk):
                n = completions[i].numel()
                hp[j, :n] = h_all[i]
                hm[j, :n] = h_wo[start + j]
            mask = completion_mask[[i for i, _ in chunk]].bool()
            qs = chunked_js_distance(hp, hm, mask, project, chunk_size=chunk_size, temperature=temperature)
            for j, (i, k) in enumerate(chunk):
                q[i, k] = qs[j].float()
    finally:
        float32_tail.close()
        if was_training:
            model.train()
    return ReplayOutput(
        q=q, replayed=replayed.clone(), num_replayed=len(pairs), num_forward_contexts=len(responses) + len(pairs),
        num_forward_tokens=int(info["tokens"]), prefix_shared=bool(info["prefix_shared"]), fallback=info["fallback"],
    )
