"""``mrtpo-sdk explain``: where each reward's credit lands on one completion.

For one example and one completion (the reference by default) this runs the replay of spec §3–§4 with the policy
(the embedded default policy, or ``--model``): the completion is tokenized once and the policy reads exactly those
token ids after ``P_all`` and after each ``P_\\k``. It writes

* an HTML page (self-contained: inline CSS, no scripts, no network assets) with one row per reward: the
  completion's tokens shaded by ``q_{k,t}``, the block, the reward and the token weights ``w_{k,t}`` (spec §5);
* a PNG heatmap of the same ``q`` (matplotlib);
* a JSON file with every number, including the concentration statistic
  (:mod:`mrtpo_sdk.algorithms.concentration`) and, for a verifier with a ``deciding`` function, its deciding tokens,
  the share of the distance on them and the lift over uniform credit
  (:func:`~mrtpo_sdk.algorithms.concentration.credit_lift`).

The page, the PNG and the JSON are the credit page (:mod:`mrtpo_sdk.credit_page`), shared with training's
``credit-step<N>.html`` pages.

Unlike training, every reward with a non-empty block is replayed here, whatever the group variance would have been
(spec §2 replays only rewards that vary within a group); a reward whose verifier does not apply to the example
(it returned ``None``: reward ``None``, no block) or whose block is empty is not replayed (``w = 1``), and its row
says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..algorithms.concentration import credit_lift, deciding_share, token_share_for_mass
from ..credit_page import (
    MASS,
    NO_DECIDING,
    NOT_DECODED,
    NOTHING_LOCATED,
    Explanation,
    RewardRow,
    deciding_token_mask,
    render_html,
    render_png,
    reward_rows,
    summary_lines,
    token_char_spans,
    write_outputs,
)
from ..errors import DecidingError, MRTPOError
from ..prompting import encode_prompt
from ..task import Task, example_id

__all__ = [
    "Explanation",
    "RewardRow",
    "encode_prompt",
    "explain",
    "render_html",
    "render_png",
    "select_example",
    "summary_lines",
    "write_outputs",
]


def explain(
    task: Task,
    example: Any,
    completion: str,
    model: Any,
    tokenizer: Any,
    *,
    beta: float = 0.5,
    temperature: float = 1.0,
    policy: str = "",
) -> Explanation:
    """Replay one completion under every reward's contexts and compute ``q``, ``w`` and the concentration.

    Args:
        task: the task; ``example`` one of its examples; ``completion`` the text to explain.
        model, tokenizer: the policy (a causal LM) and its tokenizer.
        beta: the redistribution strength used for ``w`` (spec §5; training's value after warm-up).
        temperature: the sampling temperature (logits are divided by it, as in sampling).
        policy: a label for the page.

    Returns:
        An :class:`Explanation`. A verifier's ``deciding`` function that raises (or returns no spans of the
        completion) leaves that row's deciding tokens unknown, its one-line error in ``deciding_note``.

    Raises:
        MRTPOError: the completion is empty after tokenization, or ``beta`` is outside [0, 1].
        VerifierError: a verifier raised on the completion.
    """
    import torch

    from ..algorithms import token_weights
    from ..replay import replay_relevance

    if not 0.0 <= beta <= 1.0:
        raise MRTPOError(f"--mrtpo_beta must be in [0, 1], got {beta}")
    eid = example_id(example)
    ids = list(tokenizer(completion, add_special_tokens=False)["input_ids"])  # tokenized once; replayed as is
    if not ids:
        raise MRTPOError(f"the completion for example {eid!r} is empty; pass --completion TEXT or @FILE")
    results = [v.score(example, completion, task=task.name, example_id=eid) for v in task.verifiers]
    blocks = ["" if r is None else r.block for r in results]
    T = len(ids)
    device = next(model.parameters()).device
    completion_ids = torch.tensor([ids], dtype=torch.long, device=device)
    mask = torch.ones((1, T), dtype=torch.long, device=device)
    replayed = torch.tensor([[bool(b) for b in blocks]], dtype=torch.bool, device=device)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    out = replay_relevance(
        model,
        task,
        [example],
        completion_ids,
        mask,
        [blocks],
        replayed,
        encode_prompts=lambda prompts: [encode_prompt(tokenizer, p) for p in prompts],
        pad_token_id=pad,
        temperature=temperature,
    )
    w = token_weights(out.q, mask, out.replayed, beta)
    share = token_share_for_mass(out.q, mask, out.replayed, MASS)
    masks, notes = _deciding_masks(task, example, eid, completion, tokenizer, ids)
    deciding = torch.tensor([[m or [False] * T for m in masks]], dtype=torch.bool, device=device)
    tokens = [tokenizer.decode([i]) for i in ids]
    exp = Explanation(task.name, eid, completion, tokens, beta, temperature, policy)
    q_rows, w_rows = out.q[0].float().cpu(), w[0].float().cpu()
    exp.rows = reward_rows(
        task.verifiers,
        rewards=[None if r is None else float(r.reward) for r in results],
        blocks=blocks,
        replayed=replayed[0].tolist(),
        q=[[round(float(x), 6) for x in row] for row in q_rows],
        w=[[round(float(x), 6) for x in row] for row in w_rows],
        share=share[0].tolist(),
        deciding=masks,
        deciding_share=deciding_share(out.q, mask, deciding, out.replayed)[0].tolist(),
        lift=credit_lift(out.q, mask, deciding, out.replayed)[0].tolist(),
        deciding_notes=notes,
    )
    return exp


def _deciding_masks(
    task: Task, example: Any, eid: str, completion: str, tokenizer: Any, ids: list[int]
) -> tuple[list[list[bool] | None], list[str]]:
    """Per verifier the deciding-token mask of the completion (``None``: not located) and why it is not."""
    token_spans = token_char_spans(tokenizer, ids, completion)
    masks: list[list[bool] | None] = []
    notes: list[str] = []
    for v in task.verifiers:
        try:
            spans = v.locate(example, completion, task=task.name, example_id=eid)
        except DecidingError as exc:
            masks.append(None)
            notes.append(str(exc))
            continue
        if spans is None:
            masks.append(None)
            notes.append(NO_DECIDING if v.deciding is None else NOTHING_LOCATED)
        elif token_spans is None:
            masks.append(None)
            notes.append(NOT_DECODED)
        else:
            masks.append(deciding_token_mask(token_spans, spans))
            notes.append("")
    return masks, notes


def select_example(examples: Sequence[Any], wanted: str | None, where: str) -> Any:
    """The example with id ``wanted`` (the first one when ``None``).

    Raises:
        MRTPOError: no examples, or no example has that id (the message lists a few ids).
    """
    if not examples:
        raise MRTPOError(f"{where} has no examples")
    if wanted is None:
        return examples[0]
    for ex in examples:
        if example_id(ex) == wanted:
            return ex
    some = ", ".join(example_id(e) for e in list(examples)[:5])
    raise MRTPOError(f"{where} has no example with id {wanted!r}; ids look like: {some}")
