"""Training-time view of where the credit goes: concentration statistics and an HTML sample.

Called from :meth:`MRTPOTrainer._mrtpo_advantages` after the replay (MRTPO only):

* ``concentration/<reward>`` in ``metrics.jsonl``: the smallest share of a response's tokens holding 80% of that
  reward's JS distance, averaged over this step's replayed pairs of the reward (on this process); ``null`` in a step
  where the reward had no replayed pair. The paper reports 0.26–0.29 for SQL and 0.13–0.15 for tool calling.
* every ``log_samples_steps`` steps, ``credit-step<N>.html`` in the run directory: the first replayed completion of
  the step, one row per reward (tokens shaded by ``q_{k,t}``, the block, the reward, ``w_{k,t}``), the same page as
  ``mrtpo-sdk explain`` writes (:mod:`mrtpo_sdk.credit_page`).

Takes plain tensors and rows (the metrics dict, the step's examples, completions and blocks), not the trainer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..algorithms import token_weights
from ..algorithms.concentration import mean_concentration, token_share_for_mass
from ..credit_page import Explanation, render_html, reward_rows
from ..task import Task, example_id

__all__ = ["credit_pages", "credit_pages_line", "log_credit"]

_PAGE = re.compile(r"credit-step(\d+)\.html$")


def log_credit(
    metrics: dict[str, list[float]],
    task: Task,
    completion_ids: torch.Tensor,
    q: torch.Tensor,
    mask: torch.Tensor,
    replayed: torch.Tensor,
    rewards: torch.Tensor,
    beta_n: float,
    *,
    examples: Sequence[Any],
    completions: Sequence[str],
    blocks: Sequence[Sequence[str]],
    tokenizer: Any,
    temperature: float,
    global_step: int,
    sample_every: int,
    output_dir: str | Path,
) -> None:
    """Append ``concentration/<reward>`` to ``metrics`` and, on sample steps, write the HTML sample.

    Args:
        metrics: the step's metrics by name (lists; the trainer's ``_metrics[mode]``).
        task: the task (its verifiers name the rows).
        completion_ids: ``(B, T)`` the sampled token ids (this process's completions).
        q: ``(B, K, T)`` replay distances; ``mask``: ``(B, T)`` valid tokens; ``replayed``: ``(B, K)`` bool.
        rewards: ``(B, K)`` this process's rewards (NaN = not applicable).
        beta_n: the step's redistribution strength (for the sample's ``w``).
        examples, completions, blocks: per completion its example, text and blocks (one per reward).
        tokenizer: decodes the tokens of the page (a processor's ``.tokenizer`` is used when present).
        temperature: the sampling temperature (shown on the page).
        global_step: updates done so far; these completions train step ``global_step + 1``.
        sample_every: write ``credit-step<N>.html`` every this many steps (0 = never; the trainer passes 0 outside
            training and on processes other than the main one).
        output_dir: the run directory.
    """
    share = token_share_for_mass(q, mask, replayed)
    for name, value in zip(task.verifier_names, mean_concentration(share)):
        metrics[f"concentration/{name}"].append(math.nan if value is None else value)
    if not sample_every:
        return
    step = global_step + 1  # the step these completions train (metrics.jsonl numbering)
    if step % sample_every != 0 or not bool(replayed.any()):
        return
    row = int(replayed.any(dim=1).nonzero()[0, 0])
    n = int(mask[row].sum())
    ids = completion_ids[row, :n].tolist()
    w = token_weights(q[row : row + 1], mask[row : row + 1], replayed[row : row + 1], beta_n)[0]
    tokenizer = getattr(tokenizer, "tokenizer", tokenizer)
    exp = Explanation(
        task=task.name,
        example_id=example_id(examples[row]),
        completion=completions[row],
        tokens=[tokenizer.decode([i]) for i in ids],
        beta=round(float(beta_n), 4),
        temperature=float(temperature),
        policy=behavior_policy_text(step),
        step=step,
        note="Training replays a reward only where it varies within the group and its block is non-empty (spec §2); "
        "the other rewards keep w = 1.",
    )
    exp.rows = reward_rows(
        task.verifiers,
        rewards=[None if math.isnan(r) else r for r in (float(x) for x in rewards[row])],
        blocks=blocks[row],
        replayed=replayed[row].tolist(),
        q=[[float(x) for x in q[row, k, :n]] for k in range(len(task.verifiers))],
        w=[[float(x) for x in w[k, :n]] for k in range(len(task.verifiers))],
        share=share[row].tolist(),
    )
    path = Path(output_dir) / f"credit-step{step}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(exp), encoding="utf-8")


def behavior_policy_text(step: int) -> str:
    """Which policy sampled (and replays) step ``step``'s completions: the state after step ``step - 1``'s
    update, the behavior policy of step ``step``."""
    if step <= 1:
        return f"the behavior policy that sampled step {step}'s completions (the initial policy, before any update)"
    return f"the behavior policy that sampled step {step}'s completions (the policy after step {step - 1}'s update)"


def credit_pages(output_dir: str | Path) -> list[Path]:
    """The ``credit-step<N>.html`` pages of a run folder, by step number (step 100 after step 95)."""
    pages = [(int(m.group(1)), p) for p in Path(output_dir).glob("credit-step*.html") if (m := _PAGE.match(p.name))]
    return [p for _, p in sorted(pages)]


def credit_pages_line(output_dir: str | Path) -> str | None:
    """The training summary's line about the credit pages (``None`` when there are none): how many, and the
    latest by step."""
    pages = credit_pages(output_dir)
    if not pages:
        return None
    last = pages[-1]
    step = _PAGE.match(last.name).group(1)  # type: ignore[union-attr]
    if len(pages) == 1:
        return f"credit:  1 page (step {step}): {last}"
    return f"credit:  {len(pages)} pages, the latest (step {step}): {last}"
