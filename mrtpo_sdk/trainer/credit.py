"""Training-time view of where the credit goes: concentration statistics and an HTML sample.

Called from :meth:`MRTPOTrainer._mrtpo_advantages` after the replay (MRTPO only):

* ``concentration/<reward>`` in ``metrics.jsonl``: the smallest share of a response's tokens holding 80% of that
  reward's JS distance, averaged over this step's replayed pairs of the reward (on this process); ``null`` in a step
  where the reward had no replayed pair. The paper reports 0.26–0.29 for SQL and 0.13–0.15 for tool calling.
* every ``log_samples_steps`` steps, ``credit-step<N>.html`` in the run directory: the first replayed completion of
  the step, one row per reward (tokens shaded by ``q_{k,t}``, the block, the reward, ``w_{k,t}``), the same page as
  ``mrtpo-sdk explain`` writes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from ..authoring.concentration import mean_concentration, token_share_for_mass

__all__ = ["log_credit"]


def log_credit(
    trainer: Any,
    completion_ids: torch.Tensor,
    q: torch.Tensor,
    mask: torch.Tensor,
    replayed: torch.Tensor,
    rewards: torch.Tensor,
    beta_n: float,
    mode: str,
) -> None:
    """Append ``concentration/<reward>`` to the trainer's metrics and, on sample steps, write the HTML sample.

    Args:
        trainer: the :class:`~mrtpo_sdk.trainer.MRTPOTrainer` (reads ``task``, ``args``, ``state``, ``_pending``).
        completion_ids: ``(B, T)`` the sampled token ids (this process's completions).
        q: ``(B, K, T)`` replay distances; ``mask``: ``(B, T)`` valid tokens; ``replayed``: ``(B, K)`` bool.
        rewards: ``(B, K)`` this process's rewards (NaN = not applicable).
        beta_n: the step's redistribution strength (for the sample's ``w``).
        mode: ``"train"`` or ``"eval"``.
    """
    share = token_share_for_mass(q, mask, replayed)
    for name, value in zip(trainer.task.verifier_names, mean_concentration(share)):
        trainer._metrics[mode][f"concentration/{name}"].append(math.nan if value is None else value)
    args = trainer.args
    if mode != "train" or not args.log_samples_steps or not trainer.accelerator.is_main_process:
        return
    step = trainer.state.global_step + 1  # the step these completions train (metrics.jsonl numbering)
    if step % args.log_samples_steps != 0 or not bool(replayed.any()):
        return
    row = int(replayed.any(dim=1).nonzero()[0, 0])
    _write_sample(trainer, row, completion_ids, q, mask, replayed, rewards, beta_n, share)


def _write_sample(trainer, row, completion_ids, q, mask, replayed, rewards, beta_n, share) -> Path:
    from ..algorithms import token_weights
    from ..authoring.explain import Explanation, RewardRow, render_html
    from ..task import example_id

    n = int(mask[row].sum())
    ids = completion_ids[row, :n].tolist()
    w = token_weights(q[row : row + 1], mask[row : row + 1], replayed[row : row + 1], beta_n)[0]
    tokenizer = trainer.processing_class
    tokenizer = getattr(tokenizer, "tokenizer", tokenizer)
    task = trainer.task
    exp = Explanation(
        task=task.name,
        example_id=example_id(trainer._pending["examples"][row]),
        completion=trainer._pending["completions"][row],
        tokens=[tokenizer.decode([i]) for i in ids],
        beta=round(float(beta_n), 4),
        temperature=float(trainer.temperature),
        policy=f"behavior policy at step {trainer.state.global_step}",
        note="Training replays a reward only where it varies within the group and its block is non-empty (spec §2); "
        "the other rewards keep w = 1.",
    )
    for k, v in enumerate(task.verifiers):
        r = float(rewards[row, k])
        s = float(share[row, k])
        exp.rows.append(
            RewardRow(
                name=v.name,
                kind=v.kind,
                weight=float(v.weight),
                reward=None if math.isnan(r) else r,
                block=trainer._pending["blocks"][row][k],
                replayed=bool(replayed[row, k]),
                q=[float(x) for x in q[row, k, :n]],
                w=[float(x) for x in w[k, :n]],
                share=None if math.isnan(s) else s,
            )
        )
    path = Path(trainer.args.output_dir) / f"credit-step{trainer.state.global_step + 1}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(exp), encoding="utf-8")
    return path
