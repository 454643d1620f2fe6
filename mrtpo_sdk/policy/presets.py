"""Training presets of the policies: what ``mrtpo-sdk train`` (and ``eval`` / ``explain``) default to.

They live with the policy, below the command line, so that the subcommand parsers (``mrtpo_sdk.trainer.arguments``,
``mrtpo_sdk.authoring.cli``, ``mrtpo_sdk.evaluation.cli``) and the generated docs read them without importing
each other. ``mrtpo_sdk.cli`` re-exports both names.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EMBEDDED_POLICY_DEFAULTS", "MODEL_DEFAULTS", "CPU_MODEL_BATCH", "cpu_supports_bf16", "model_machine_defaults"]

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




def cpu_supports_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX), where bf16 autocast is faster than float32.
    Without them torch emulates bf16 and it is slower, so a pretrained ``--model`` then trains in float32."""
    import torch

    try:
        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except (AttributeError, RuntimeError):  # pragma: no cover - an older torch without the probes
        return False


def model_machine_defaults() -> dict[str, Any]:
    """Defaults for a pretrained ``--model`` that depend on the machine (a flag or ``--config`` key still wins):

    * CUDA: TRL's own (``bf16`` true).
    * CPU only: ``use_cpu`` true and ``bf16`` true where :func:`cpu_supports_bf16` (accelerate's bf16 autocast for
      the update, and in this trainer for sampling and the replay's decoder; the replay's head and JS stay float32),
      else float32; the batch of :data:`CPU_MODEL_BATCH`. TRL's ``gradient_checkpointing`` (true) stays: off, it
      saved 20 % of the float32 update and nothing under bf16, and it raised a SmolLM2 process's peak memory to
      12 GB at 16 completions. docs/performance.md has the side-by-side measurements.
    """
    import torch

    if torch.cuda.is_available():
        return {"bf16": True}
    return {"use_cpu": True, "bf16": cpu_supports_bf16(), **CPU_MODEL_BATCH}


#: The batch of a pretrained ``--model`` on a CPU: 8 prompts x 4 completions of at most 128 tokens per step
#: (TRL's defaults, 1 prompt x 8 completions of up to 512 tokens, cost ~4x a step on 2 cores and learn from one
#: prompt's group). A task's own ``max_completion_length`` and any flag still win.
CPU_MODEL_BATCH: dict[str, Any] = {"per_device_train_batch_size": 32, "num_generations": 4,
                                   "max_completion_length": 128}
