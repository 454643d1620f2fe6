"""Replay: the behavior policy reads each sampled completion under ``P_all`` and ``P_\\k`` (spec §3–§4).

No generation happens here: for every replayed response–reward pair ``(i, k)`` the frozen behavior policy (the
model state that sampled the group, run under ``torch.no_grad``) scores the **sampled completion token ids**
(never re-tokenized text) after both contexts, and the per-token Jensen–Shannon distance between the two
next-token distributions over the full vocabulary gives ``q_{k,t}``.

Memory: the policy's final hidden states are kept per context, ``(n, T, H)``; logits are produced from them by the
LM head ``chunk_size`` tokens at a time inside :func:`~mrtpo_sdk.algorithms.chunked_js_distance`, so no
``contexts × T × V`` tensor is ever built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .algorithms import chunked_js_distance
from .task import Prompt, Task

__all__ = ["ReplayOutput", "replay_relevance", "final_hidden_states", "lm_head_projection"]


@dataclass
class ReplayOutput:
    """Result of :func:`replay_relevance`.

    Attributes:
        q: ``(B, K, T)`` float32 JS distances ``q_{k,t}`` in [0, 1] for replayed pairs, 0 elsewhere (those pairs get
            weight 1 downstream).
        replayed: ``(B, K)`` bool, the pairs that were replayed (spec §2).
        num_replayed: number of replayed pairs.
        num_forward_contexts: number of contexts run through the policy (``P_all`` once per response with a
            replayed pair, plus one ``P_\\k`` per pair).
    """

    q: torch.Tensor
    replayed: torch.Tensor
    num_replayed: int
    num_forward_contexts: int


def final_hidden_states(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Final (post-norm) hidden states of a causal LM, ``(n, L, H)``, for right-padded ``(n, L)`` inputs.

    Uses the decoder stack (``model.get_decoder()``) so the ``(n, L, V)`` logits are never materialized; position
    ids are ``0..L-1`` (valid for right padding).
    """
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else None
    if decoder is None or decoder is model:
        out = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        return out.hidden_states[-1]
    position_ids = torch.arange(input_ids.size(1), device=input_ids.device).unsqueeze(0).expand_as(input_ids)
    out = decoder(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False)
    return out.last_hidden_state


def lm_head_projection(model: Any) -> Callable[[torch.Tensor], torch.Tensor]:
    """``(n, H) -> (n, V)`` logits as the model computes them from its final hidden states.

    Applies the output embedding, then the text config's ``logit_scale`` and ``final_logit_softcapping`` where the
    architecture has them (as TRL's fused LM head does). Temperature is applied later, by the JS function.
    """
    head = model.get_output_embeddings()
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    scale = getattr(config, "logit_scale", None)
    softcap = getattr(config, "final_logit_softcapping", None)

    def project(h: torch.Tensor) -> torch.Tensor:
        logits = head(h.to(head.weight.dtype))
        if scale is not None:
            logits = logits * scale
        if softcap is not None:
            logits = torch.tanh(logits / softcap) * softcap
        return logits

    return project


def _completion_hidden(
    model: Any,
    prompt_ids: Sequence[Sequence[int]],
    completions: Sequence[torch.Tensor],
    pad_token_id: int,
    batch_size: int,
) -> list[torch.Tensor]:
    """For each (prompt, completion) pair: hidden states at the positions that predict completion token t, (T_i, H)."""
    out: list[torch.Tensor] = []
    for start in range(0, len(prompt_ids), batch_size):
        p_batch = prompt_ids[start : start + batch_size]
        c_batch = completions[start : start + batch_size]
        seqs = [torch.cat([torch.as_tensor(list(p), dtype=torch.long, device=c.device), c]) for p, c in zip(p_batch, c_batch)]
        length = max(s.numel() for s in seqs)
        device = c_batch[0].device
        ids = torch.full((len(seqs), length), pad_token_id, dtype=torch.long, device=device)
        mask = torch.zeros((len(seqs), length), dtype=torch.long, device=device)
        for j, s in enumerate(seqs):
            ids[j, : s.numel()] = s
            mask[j, : s.numel()] = 1
        hidden = final_hidden_states(model, ids, mask)
        for j, (p, c) in enumerate(zip(p_batch, c_batch)):
            first = len(p) - 1  # position whose output predicts completion token 0
            out.append(hidden[j, first : first + c.numel()])
    return out


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
    chunk_size: int = 256,
    batch_size: int = 8,
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
        chunk_size: tokens per JS chunk (memory ``O(chunk_size × V)``).
        batch_size: contexts per forward pass.

    Returns:
        :class:`ReplayOutput` with ``q`` of shape ``(B, K, T)``.

    Raises:
        ValueError: inconsistent shapes.
    """
    B, T = completion_ids.shape
    K = len(task.verifiers)
    if replayed.shape != (B, K):
        raise ValueError(f"replayed must be (B, K) = ({B}, {K}), got {tuple(replayed.shape)}")
    if len(examples) != B or len(blocks) != B:
        raise ValueError(f"expected {B} examples and block lists, got {len(examples)} and {len(blocks)}")
    q = torch.zeros((B, K, T), dtype=torch.float32, device=completion_ids.device)
    pairs = [(i, k) for i in range(B) for k in range(K) if bool(replayed[i, k])]
    if not pairs:
        return ReplayOutput(q=q, replayed=replayed.clone(), num_replayed=0, num_forward_contexts=0)

    lengths = completion_mask.sum(dim=1).tolist()
    completions = [completion_ids[i, : int(lengths[i])] for i in range(B)]
    responses = sorted({i for i, _ in pairs})
    contexts = {(i, k): task.replay_prompts(examples[i], list(blocks[i]), k) for i, k in pairs}

    was_training = getattr(model, "training", False)
    model.eval()
    try:
        # P_all: once per response (it does not depend on k).
        all_prompts = [contexts[next(p for p in pairs if p[0] == i)][0] for i in responses]
        h_all = dict(
            zip(
                responses,
                _completion_hidden(
                    model, encode_prompts(all_prompts), [completions[i] for i in responses], pad_token_id, batch_size
                ),
            )
        )
        # P_\k: one per pair.
        wo_prompts = [contexts[p][1] for p in pairs]
        h_wo = _completion_hidden(
            model, encode_prompts(wo_prompts), [completions[i] for i, _ in pairs], pad_token_id, batch_size
        )
        project = lm_head_projection(model)
        for start in range(0, len(pairs), batch_size):
            chunk = pairs[start : start + batch_size]
            hp = torch.zeros((len(chunk), T, h_wo[0].size(-1)), dtype=h_wo[0].dtype, device=completion_ids.device)
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
        if was_training:
            model.train()
    return ReplayOutput(
        q=q, replayed=replayed.clone(), num_replayed=len(pairs), num_forward_contexts=len(responses) + len(pairs)
    )
