"""The replay itself: per-token relevance ``q_{k,t}`` of every replayed response–reward pair (spec §3–§4).

* **Memory.** Only the final hidden states at completion positions are kept, ``(n, T, H)``
  (:mod:`~mrtpo_sdk.replay.prefix`); logits are produced from them chunk by chunk inside
  :func:`~mrtpo_sdk.algorithms.chunked_js_distance`, whose chunk size is chosen from a memory budget by default, so
  no ``contexts × T × V`` tensor is ever built.
* **Precision.** The head gives float32 logits (:mod:`~mrtpo_sdk.replay.decoder_head`); log-softmax and JS are
  computed in float32 (float64 for float64 models) from them, chunk by chunk; ``q`` is returned as float32.
  Temperature divides the logits before the softmax, as in sampling.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..algorithms import chunked_js_distance
from ..algorithms.js import js_chunk_size_for_budget
from ..task import Prompt, Task
from .decoder_head import model_head
from .prefix import DEFAULT_REPLAY_MAX_TOKENS, completion_hidden_states

__all__ = ["ReplayOutput", "replay_relevance"]


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


def _default_js_memory(device: torch.device) -> int:
    """Default JS chunk budget: 1 GiB on accelerators (large chunks amortize kernel launches), 256 MiB on CPU."""
    return 256 * 2**20 if device.type == "cpu" else 1 << 30


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
            head and the JS distance always run with autocast off, in float32 (the precision contract of
            :mod:`~mrtpo_sdk.replay.decoder_head`).
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
