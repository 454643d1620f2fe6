"""The causal LM's decoder and LM head, as the replay uses them.

The replay runs the decoder stack alone (:func:`find_decoder`, :func:`final_hidden_states`), keeps final hidden
states, and turns them into logits later, chunk by chunk, with :func:`model_head`.

Exactness and precision contract of the head:

* The LM head is the **model's own forward tail**: the causal LM's ``forward`` is called with its decoder replaced,
  for that call, by one that returns the given hidden states, so every multiplier the architecture applies after
  the decoder (Granite's ``logits_scaling``, Falcon-H1's ``lm_head_multiplier``, Cohere's ``logit_scale``, Gemma's
  final soft-capping, …) is applied by the model's code itself. Inside that call the output embedding is computed
  in float32 (hidden states and head weight upcast, vocabulary slice by slice), so for bf16/fp16 models the logits
  are float32 from the start and everything after the head runs in float32 as well.
* Where the model's forward cannot be run that way, :func:`lm_head_projection` applies the known head formula.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

import torch

__all__ = [
    "cache_kwarg",
    "final_hidden_states",
    "find_decoder",
    "lm_head_projection",
    "model_head",
    "output_cache",
]

logger = logging.getLogger(__name__)

_HEAD_SLICE_BYTES = 64 * 2**20  # upcast the output embedding to float32 at most this many bytes at a time


def find_decoder(model: Any) -> Any | None:
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


def cache_kwarg(module: Any) -> str | None:
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


def output_cache(out: Any) -> Any:
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
    decoder = find_decoder(model)
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
    decoder, head = find_decoder(model), model.get_output_embeddings()
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
