"""`MRTPOConfig`: TRL's `GRPOConfig` plus the MRTPO fields.

TRL's ``beta`` is the KL coefficient; the MRTPO mixing coefficient of spec §5 is ``mrtpo_beta``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch

from trl import GRPOConfig

__all__ = ["MRTPOConfig", "ALGORITHMS"]

ALGORITHMS = ("mrtpo", "gdpo", "grpo")


@dataclass
class MRTPOConfig(GRPOConfig):
    r"""Configuration of :class:`~mrtpo_sdk.trainer.MRTPOTrainer`: every field of ``trl.GRPOConfig`` plus:

    Algorithm:
        algo (`str`, defaults to ``"mrtpo"``): ``"mrtpo"`` (per-token advantages, spec §1–§5), ``"gdpo"`` (per-reward
            group normalization, response-level advantage, spec §1) or ``"grpo"`` (sum of rewards, group-normalized).
            All three run through the same trainer, so comparisons are like for like.
        mrtpo_beta (`float`, defaults to 0.5): the mixing coefficient :math:`\beta` of spec §5 (not TRL's KL ``beta``).
        beta_warmup_steps (`int`, defaults to 10): smoothstep warm-up of :math:`\beta_n` from 0 to ``mrtpo_beta``.
        reward_std_floor (`float`, defaults to 1e-6): a reward "varies within the group" only if its group std
            exceeds this; otherwise its advantage is exactly 0 and it is never replayed (spec §2).
        advantage_eps (`float`, defaults to 1e-4): :math:`\epsilon` in the group and batch normalizations.

    Replay:
        js_chunk_size (`int`, defaults to 256): tokens per Jensen–Shannon chunk (memory ``O(chunk × V)``).
        replay_batch_size (`int`, defaults to 8): contexts per replay forward pass.

    Logging:
        log_samples_steps (`int`, defaults to 5): every N steps, write a few sampled completions with their rewards
            and blocks to ``samples.jsonl`` in ``output_dir`` and, for MRTPO, ``credit-step<N>.html`` (the first
            replayed completion's tokens shaded by ``q_{k,t}``, see :mod:`mrtpo_sdk.trainer.credit`) (0 = never).
        num_samples_to_log (`int`, defaults to 2): completions written each time.
        plot_rewards (`bool`, defaults to True): write ``rewards.png`` (each reward vs step) at the end.

    Evaluation (TRL's ``eval_strategy`` / ``eval_steps`` / ``eval_on_start`` decide when; the task's ``eval_split``
    is the data):
        eval_max_examples (`int`, defaults to 100): score at most this many held-out examples per evaluation
            (the first ones), so an evaluation costs a bounded time.
        ``num_generations_eval`` (TRL's field) is the number of completions per example: ``None`` or 1 = greedy
            (MRTPO's default; TRL's would be ``num_generations``), k > 1 = sampled at ``temperature`` with pass@k.
        ``per_device_eval_batch_size`` is the number of sequences per ``generate`` call of an evaluation.
    """

    algo: str = field(default="mrtpo", metadata={"help": "Advantage estimator: 'mrtpo', 'gdpo' or 'grpo'."})
    mrtpo_beta: float = field(
        default=0.5, metadata={"help": "MRTPO mixing coefficient beta (spec §5); not TRL's KL `beta`."}
    )
    beta_warmup_steps: int = field(
        default=10, metadata={"help": "Steps of smoothstep warm-up of beta_n from 0 to mrtpo_beta (0 = none)."}
    )
    reward_std_floor: float = field(
        default=1e-6, metadata={"help": "Group std at or below which a reward does not vary (advantage exactly 0)."}
    )
    advantage_eps: float = field(default=1e-4, metadata={"help": "Epsilon in the group and batch normalizations."})
    js_chunk_size: int = field(default=256, metadata={"help": "Tokens per Jensen-Shannon chunk in the replay."})
    replay_batch_size: int = field(default=8, metadata={"help": "Contexts per replay forward pass."})
    log_samples_steps: int = field(
        default=5,
        metadata={
            "help": "Every N steps, write sampled completions with rewards and blocks to samples.jsonl and, for "
            "MRTPO, a credit-step<N>.html page (tokens shaded by q_k,t) (0 = never)."
        },
    )
    num_samples_to_log: int = field(default=2, metadata={"help": "Completions written to samples.jsonl each time."})
    plot_rewards: bool = field(default=True, metadata={"help": "Write rewards.png (each reward vs step) at the end."})
    eval_max_examples: int = field(
        default=100,
        metadata={"help": "Held-out examples scored per evaluation at most (the first ones of the task's eval_split)."},
    )

    def __post_init__(self) -> None:
        if self.algo not in ALGORITHMS:
            raise ValueError(f"algo must be one of {ALGORITHMS}, got {self.algo!r}")
        if not 0.0 <= self.mrtpo_beta <= 1.0:
            raise ValueError(f"mrtpo_beta must be in [0, 1] (spec §5 mixes (1-beta) + beta*q/qbar); got {self.mrtpo_beta}")
        if self.beta_warmup_steps < 0:
            raise ValueError(f"beta_warmup_steps must be >= 0, got {self.beta_warmup_steps}")
        if self.reward_std_floor < 0 or self.advantage_eps <= 0:
            raise ValueError("reward_std_floor must be >= 0 and advantage_eps > 0")
        if self.js_chunk_size < 1 or self.replay_batch_size < 1:
            raise ValueError("js_chunk_size and replay_batch_size must be >= 1")
        if self.eval_max_examples < 1:
            raise ValueError(f"eval_max_examples must be >= 1, got {self.eval_max_examples}")
        # Evaluation is greedy unless asked otherwise (TRL's None would mean num_generations samples per prompt).
        if self.num_generations_eval is None:
            self.num_generations_eval = 1
        # A multi-process launch (torchrun / `accelerate launch --multi_gpu`) on a machine without CUDA: run the
        # processes on the CPU with the gloo backend (accelerate's MULTI_CPU) instead of one unconnected process each.
        if not self.use_cpu and int(os.environ.get("WORLD_SIZE", "1")) > 1 and not torch.cuda.is_available():
            self.use_cpu = True
        # GRPO sums then normalizes; GDPO/MRTPO normalize each reward then sum. TRL logs its own statistics with this.
        self.multi_objective_aggregation = "sum_then_normalize" if self.algo == "grpo" else "normalize_then_sum"
        super().__post_init__()
