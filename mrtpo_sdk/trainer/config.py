"""`MRTPOConfig`: TRL's `GRPOConfig` plus the MRTPO fields.

TRL's ``beta`` is the KL coefficient; the MRTPO mixing coefficient of spec §5 is ``mrtpo_beta``.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field

import torch

from trl import GRPOConfig

from .._argparse import did_you_mean
from .algos import ALGORITHMS, aggregation_of

__all__ = ["MRTPOConfig", "ALGORITHMS"]

logger = logging.getLogger(__name__)


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
        replay_max_tokens (`int`, defaults to 16384): token budget of one replay forward pass, rows × (shared prefix
            + longest suffix), padding included; contexts are length-sorted and prefix-shared (docs/performance.md).
        js_chunk_size (`int`, *optional*): tokens per Jensen–Shannon chunk (memory ``O(chunk × V)``); unset = chosen
            from a memory budget, 1 GiB on an accelerator, 256 MiB on CPU
            (:func:`~mrtpo_sdk.algorithms.js.js_chunk_size_for_budget`).
        replay_batch_size (`int`, *optional*): extra cap on contexts per replay forward pass (unset = the token budget
            alone decides).

    Logging:
        log_samples_steps (`int`, defaults to 5): every N steps, write a few sampled completions with their rewards
            and blocks to ``samples.jsonl`` in ``output_dir`` and, for MRTPO, ``credit-step<N>.html`` (the first
            replayed completion's tokens shaded by ``q_{k,t}``, see :mod:`mrtpo_sdk.trainer.credit_logging`)
            (0 = never).
        num_samples_to_log (`int`, defaults to 2): completions written each time.
        plot_rewards (`bool`, defaults to True): write ``rewards.png`` (each reward vs step) at the end.

    Evaluation (TRL's ``eval_strategy`` / ``eval_steps`` / ``eval_on_start`` decide when; the task's ``eval_split``
    is the data):
        eval_max_examples (`int`, defaults to 100): score at most this many held-out examples per evaluation
            (the first ones), so an evaluation costs a bounded time.
        ``num_generations_eval`` (TRL's field) is the number of completions per example: ``None`` or 1 = greedy
            (MRTPO's default; TRL's would be ``num_generations``), k > 1 = sampled at ``temperature`` with pass@k.
        ``per_device_eval_batch_size`` is the number of sequences per ``generate`` call of an evaluation.

    Runs (see :meth:`MRTPOTrainer.train <mrtpo_sdk.trainer.MRTPOTrainer.train>`):
        overwrite_output_dir (`bool`, defaults to False): train into an ``output_dir`` that holds a previous run
            (``run.json``, ``metrics.jsonl``, samples, credit pages, ``checkpoint-*``, ``policy/``), removing those
            files first with a note; without it such a folder raises :class:`~mrtpo_sdk.errors.MRTPOError`.
        ``resume_from_checkpoint`` (TRL's/Trainer's field) takes effect: a checkpoint folder, a run folder (its
            latest complete checkpoint) or ``"true"`` (the latest complete checkpoint of ``output_dir``).
        save_policy (`bool`, defaults to True): at the end of training, save the policy (model + tokenizer, and
            its model card) to ``output_dir/policy``, where ``--model RUN_DIR`` and ``from_pretrained`` load it.
        save_merged_policy (`bool`, defaults to True): with LoRA (``peft_config``), ``policy/`` is the adapter
            merged into the base model, beside ``adapter/``; False: ``adapter/`` alone (a few MB), which
            ``--model RUN_DIR`` loads on its base model. False without LoRA raises
            :class:`~mrtpo_sdk.errors.MRTPOError` in the trainer.

    TRL fields this trainer interprets (each either takes effect or is rejected here with one line):
        reward_weights: one weight per verifier; when set it **replaces** the task's ``Verifier(weight=...)``
            values (length checked by the trainer; >= 0, at least one > 0).
        multi_objective_aggregation: follows ``algo`` (``"sum_then_normalize"`` for GRPO, ``"normalize_then_sum"``
            for GDPO and MRTPO); leave it unset; a contradicting value raises ``ValueError``.
        scale_rewards: only ``"group"`` (TRL's default; the spec's group std) is supported; ``"batch"`` / ``"none"``
            raise ``ValueError``.
        use_cpu: set to True (with a warning) for a multi-process launch on a machine without CUDA.
        num_generations_eval: ``None`` becomes 1 (greedy evaluation; see above).
        max_steps: a positive number of steps, or -1 to train by ``num_train_epochs``; 0 or below -1 raise
            ``ValueError``.
        eval_steps, save_steps, logging_steps: a whole number of steps >= 1 or a fraction of the run in (0, 1);
            anything else raises ``ValueError`` (Trainer would run with -1 or replace 0 by ``logging_steps``,
            silently).

    Raises:
        ValueError: a field out of range or contradicting ``algo`` (the message names the field and what to set).
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
    replay_max_tokens: int = field(
        default=16384,
        metadata={"help": "Token budget of one replay forward pass: rows x (shared prefix + longest suffix), padding "
                  "included."},
    )
    js_chunk_size: int | None = field(
        default=None,
        metadata={"help": "Tokens per Jensen-Shannon chunk in the replay (unset: chosen from a memory budget, 1 GiB on "
                 "an accelerator, 256 MiB on CPU)."},
    )
    replay_batch_size: int | None = field(
        default=None,
        metadata={"help": "Cap on contexts per replay forward pass (unset: --replay_max_tokens alone decides)."},
    )
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
    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "Train into an output_dir that holds a previous run (its metrics, samples, credit pages, plot, "
            "policy and checkpoints are removed first, with a note). Without it such a folder is refused, unless "
            "--resume_from_checkpoint continues that run."
        },
    )
    save_policy: bool = field(
        default=True,
        metadata={
            "help": "Save the final policy (model + tokenizer) to OUTPUT_DIR/policy, loadable by --model and "
            "from_pretrained."
        },
    )
    save_merged_policy: bool = field(
        default=True,
        metadata={
            "help": "With --use_peft: also save OUTPUT_DIR/policy, the LoRA adapter merged into the base model (a "
            "full copy: 540 MB for SmolLM2-135M in float32). false: OUTPUT_DIR/adapter alone (a few MB), which "
            "--model OUTPUT_DIR loads on top of its base model, e.g. for the runs of a compare matrix."
        },
    )
    # TRL's field, redeclared so that "not set" is visible: the aggregation follows `algo` (see __post_init__).
    multi_objective_aggregation: str | None = field(
        default=None,
        metadata={
            "help": "Follows --algo: 'sum_then_normalize' for grpo, 'normalize_then_sum' for gdpo and mrtpo; another "
            "value is an error."
        },
    )

    @classmethod
    def from_grpo_config(cls, config: GRPOConfig, **overrides) -> "MRTPOConfig":
        """An :class:`MRTPOConfig` from a TRL ``GRPOConfig`` (the drop-in path): every TRL field as the user set it
        (TRL's ``__post_init__`` is not run twice), the MRTPO fields at their defaults or ``overrides``
        (e.g. ``algo="gdpo"``). TRL's default ``multi_objective_aggregation="sum_then_normalize"`` becomes the
        chosen algo's.

        Raises:
            ValueError: as :class:`MRTPOConfig` (e.g. ``scale_rewards="none"``).
        """
        import copy
        import dataclasses

        if isinstance(config, cls) and not overrides:
            return config
        new = copy.copy(config)
        new.__class__ = cls
        trl_fields = {f.name for f in dataclasses.fields(GRPOConfig)}
        for f in dataclasses.fields(cls):
            if f.name in overrides:
                setattr(new, f.name, overrides[f.name])
            elif f.name not in trl_fields:
                default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
                setattr(new, f.name, default)
        if not isinstance(config, cls) and config.multi_objective_aggregation == "sum_then_normalize":
            new.multi_objective_aggregation = None  # TRL's default, not a choice: follow algo
        new._check_mrtpo_fields()
        return new

    def __post_init__(self) -> None:
        self._check_mrtpo_fields()
        super().__post_init__()

    def _check_report_to(self) -> None:
        """``report_to`` holds ``none``, ``all`` or trackers transformers knows; anything else (``false``, a typo)
        would fail with a traceback when the Trainer starts."""
        from transformers.integrations.integration_utils import INTEGRATION_TO_CALLBACK

        if self.report_to is None:
            return
        given = self.report_to if isinstance(self.report_to, (list, tuple)) else [self.report_to]
        known = ("none", "all", *INTEGRATION_TO_CALLBACK)
        bad = [v for v in given if not isinstance(v, str) or v not in known]
        if bad:
            off = isinstance(bad[0], bool) or str(bad[0]).lower() in ("false", "no", "off", "0")
            hint = "; write none for no tracker" if off else did_you_mean(str(bad[0]), known)
            shown = str(bad[0]).lower() if isinstance(bad[0], bool) else repr(bad[0])
            raise ValueError(f"report_to must be none, all or trackers among {', '.join(INTEGRATION_TO_CALLBACK)}, "
                             f"got {shown}{hint}")

    def _check_mrtpo_fields(self) -> None:
        """Validate and derive the MRTPO fields and the TRL fields interpreted here (see the class docstring)."""
        if self.algo not in ALGORITHMS:
            raise ValueError(f"algo must be one of {ALGORITHMS}, got {self.algo!r}")
        if not 0.0 <= self.mrtpo_beta <= 1.0:
            raise ValueError(f"mrtpo_beta must be in [0, 1] (spec §5 mixes (1-beta) + beta*q/qbar); got {self.mrtpo_beta}")
        if self.beta_warmup_steps < 0:
            raise ValueError(f"beta_warmup_steps must be >= 0, got {self.beta_warmup_steps}")
        if self.reward_std_floor < 0 or self.advantage_eps <= 0:
            raise ValueError("reward_std_floor must be >= 0 and advantage_eps > 0")
        optional = (self.js_chunk_size, self.replay_batch_size)
        if any(v is not None and v < 1 for v in optional) or self.replay_max_tokens < 1:
            raise ValueError("js_chunk_size, replay_batch_size (when set) and replay_max_tokens must be >= 1")
        if self.max_steps == 0 or self.max_steps < -1:
            raise ValueError(
                f"max_steps must be a positive number of steps (or -1 to train by num_train_epochs), got "
                f"{self.max_steps}"
            )
        for name in ("eval_steps", "save_steps", "logging_steps"):
            # checked as given, before TrainingArguments reads it: it runs with -1 (no evaluation but the first and
            # last) and replaces 0 with logging_steps, silently either way
            value = getattr(self, name, None)
            if value is None:
                continue
            number = float(value)
            if not ((number >= 1 and number.is_integer()) or 0 < number < 1):
                raise ValueError(
                    f"{name} must be a number of steps >= 1 or a fraction of the run in (0, 1) (e.g. 0.25: every "
                    f"quarter), got {number:g}"
                )
        if self.eval_max_examples < 1:
            raise ValueError(f"eval_max_examples must be >= 1, got {self.eval_max_examples}")
        implied = aggregation_of(self.algo)
        if self.multi_objective_aggregation not in (None, implied):
            other = "grpo" if self.multi_objective_aggregation == "sum_then_normalize" else "gdpo or mrtpo"
            raise ValueError(
                f"multi_objective_aggregation={self.multi_objective_aggregation!r} contradicts algo={self.algo!r} "
                f"(which uses {implied!r}); leave it unset, or set algo to {other}"
            )
        # GRPO sums then normalizes; GDPO/MRTPO normalize each reward then sum. TRL logs its own statistics with this.
        self.multi_objective_aggregation = implied
        scale = {True: "group", False: "none"}.get(self.scale_rewards, self.scale_rewards)
        if scale != "group":
            raise ValueError(
                f"scale_rewards={self.scale_rewards!r} is not supported: every algo here divides by the group std "
                f"(spec §1: GRPO on the summed reward, GDPO/MRTPO per reward); leave scale_rewards unset ('group')"
            )
        if self.reward_weights is not None:
            if isinstance(self.reward_weights, (int, float, str)):
                raise ValueError(f"reward_weights must be a list of numbers (one per verifier), got {self.reward_weights!r}")
            weights = list(self.reward_weights)
            if not weights or not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights):
                raise ValueError(f"reward_weights must be a list of numbers (one per verifier), got {self.reward_weights!r}")
            if not all(math.isfinite(w) for w in weights):
                raise ValueError(f"reward_weights must be finite numbers, got {weights}")
            if any(w < 0 for w in weights) or not any(w > 0 for w in weights):
                raise ValueError(f"reward_weights must be >= 0 with at least one > 0, got {weights}")
        self._check_report_to()
        # Trainer/TRL fields that would otherwise fail with a traceback deep inside the first step.
        for name, low in (("per_device_train_batch_size", 1), ("num_generations", 2), ("max_completion_length", 1),
                          ("gradient_accumulation_steps", 1)):
            value = getattr(self, name, None)
            if value is not None and value < low:
                raise ValueError(f"{name} must be >= {low}, got {value}")
        if not (math.isfinite(self.learning_rate) and self.learning_rate >= 0):
            raise ValueError(f"learning_rate must be a finite number >= 0, got {self.learning_rate}")
        if self.temperature is not None and not (math.isfinite(self.temperature) and self.temperature > 0):
            raise ValueError(f"temperature must be > 0, got {self.temperature}")
        # Evaluation is greedy unless asked otherwise (TRL's None would mean num_generations samples per prompt).
        if self.num_generations_eval is None:
            self.num_generations_eval = 1
        # A multi-process launch (torchrun / `accelerate launch --multi_gpu`) on a machine without CUDA: run the
        # processes on the CPU with the gloo backend (accelerate's MULTI_CPU) instead of one unconnected process each.
        if not self.use_cpu and int(os.environ.get("WORLD_SIZE", "1")) > 1 and not torch.cuda.is_available():
            logger.warning(
                "use_cpu set to True: a %s-process launch on a machine without CUDA runs on the CPU (gloo backend)",
                os.environ["WORLD_SIZE"],
            )
            self.use_cpu = True
