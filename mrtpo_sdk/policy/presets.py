"""Training presets of the policies: what ``mrtpo-sdk train`` (and ``eval`` / ``explain``) default to.

They live with the policy, below the command line, so that the subcommand parsers (``mrtpo_sdk.trainer.cli``,
``mrtpo_sdk.authoring.cli``, ``mrtpo_sdk.evaluation.cli``) and the generated docs read them without importing
each other. ``mrtpo_sdk.cli`` re-exports both names.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EMBEDDED_POLICY_DEFAULTS", "MODEL_DEFAULTS"]

# Training defaults when no --model is given: the embedded bootstrap policy on a laptop-class CPU.
EMBEDDED_POLICY_DEFAULTS: dict[str, Any] = {
    "max_steps": 100,
    "per_device_train_batch_size": 32,  # 8 prompts x 4 completions per step
    "num_generations": 4,
    "max_completion_length": 64,
    "learning_rate": 3e-4,
    "temperature": 0.8,
    "logging_steps": 1,
    "save_strategy": "no",
    "report_to": "none",
    "bf16": False,
    "disable_tqdm": True,
    "beta_warmup_steps": 10,
}
# Defaults for a real model (--model): only what differs from TRL's.
MODEL_DEFAULTS: dict[str, Any] = {"logging_steps": 1, "save_strategy": "no", "report_to": "none"}


