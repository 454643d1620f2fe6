"""A supervised warm start for a pretrained ``--model`` (``mrtpo-sdk train --model M --warm_start_steps N``).

A pretrained policy that never answers in a task's format (SmolLM2 writes no tool calls and no runnable SQL) gives
RL no reward variance to learn from. The warm start teaches it the task's reference completions first: ``N``
optimizer steps of TRL's ``SFTTrainer`` (completion-only loss) on the (bare prompt, reference) pairs of the training
examples and the task's ``warm_start_examples`` extras (:func:`mrtpo_sdk.policy.for_task.policy_corpus`), in float32.
The result is cached under the cache root (``policies/warm-<task>-<model>-...``), keyed by the base model's weights,
the pairs, the steps, the learning rate and the seed, so every algorithm of a seed starts from the same policy and a
second run loads it in seconds. ``warm_start.json`` in the folder records what was done (base, steps, learning rate,
seed, pairs, first and last training loss, wall-clock seconds of the warm start).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..cache import cache_root
from ..errors import MRTPOError

__all__ = ["WARM_START_FILE", "model_fingerprint", "warm_start_info", "warm_started_model"]

#: The file in a warm-started folder that says how it was made.
WARM_START_FILE = "warm_start.json"

_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt")


def model_fingerprint(folder: str | Path) -> str:
    """A content hash of a model folder: its config and weight files (a dequantized GGUF folder: the GGUF's hash)."""
    folder = Path(folder)
    h = hashlib.sha256()
    source = folder / "gguf_source.json"
    if source.is_file():
        info = json.loads(source.read_text(encoding="utf-8"))
        h.update(f"gguf:{info.get('sha256')}:{info.get('dtype')}".encode())
        return h.hexdigest()
    for path in sorted(folder.iterdir()):
        if path.name == "config.json" or path.suffix in _WEIGHT_SUFFIXES:
            h.update(path.name.encode())
            with path.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 22), b""):
                    h.update(chunk)
    return h.hexdigest()


def warm_start_info(folder: str | Path) -> dict[str, Any] | None:
    """``warm_start.json`` of a warm-started folder, else ``None``."""
    path = Path(folder) / WARM_START_FILE
    if not path.is_file():
        return None
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def warm_started_model(
    task: Any,
    examples: Sequence[Any],
    model_folder: str | Path,
    *,
    steps: int,
    learning_rate: float = 1e-5,
    seed: int = 42,
    batch_size: int = 8,
    tokenizer: Any = None,
    log: Callable[[str], None] = print,
) -> Path:
    """The folder of ``model_folder``'s policy after ``steps`` supervised steps on ``task``'s references (made once,
    cached).

    Args:
        task: the task (its ``reference`` and optional ``warm_start_examples``).
        examples: the training examples.
        model_folder: a local model folder (what ``check_model`` resolved ``--model`` to).
        steps: optimizer steps, >= 1.
        learning_rate: the SFT learning rate (cosine schedule, 5 % warm-up).
        seed: the run's seed (the SFT data order and any dropout).
        batch_size: pairs per optimizer step.
        tokenizer: the model's tokenizer as the run uses it (e.g. with a ``--chat_template`` set: a template other
            than the folder's is part of the cache key); ``None``: the one saved in ``model_folder``.
        log: one line when the warm start runs and when it is loaded from the cache, and a progress line
            (step, loss, ETA) every tenth of the steps while it runs.

    Returns:
        The warm-started model folder (loadable by ``from_pretrained``).

    Raises:
        MRTPOError: ``steps`` < 1, a task without references, a folder that is not a local model.
    """
    from .for_task import policy_corpus

    if steps < 1:
        raise MRTPOError(f"--warm_start_steps must be >= 1 (0: no warm start), got {steps}")
    if not (learning_rate > 0):
        raise MRTPOError(f"--warm_start_learning_rate must be > 0, got {learning_rate}")
    folder = Path(model_folder)
    if not (folder / "config.json").is_file():
        raise MRTPOError(f"--warm_start_steps needs a local model; {folder} has no config.json")
    _, pairs = policy_corpus(task, examples, block_contexts=False)
    key = hashlib.sha256()
    key.update(model_fingerprint(folder).encode())
    key.update(json.dumps([steps, learning_rate, seed, batch_size], sort_keys=True).encode())
    key.update(json.dumps(pairs, sort_keys=True, ensure_ascii=False, default=str).encode())
    if tokenizer is not None:  # a chat template other than the folder's (--chat_template) teaches other tokens
        from .pretrained import load_tokenizer

        if getattr(tokenizer, "chat_template", None) != load_tokenizer(folder).chat_template:
            key.update(f"chat_template:{tokenizer.chat_template}".encode())
    digest = key.hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in folder.name)[:48]
    target = cache_root() / "policies" / f"warm-{task.name}-{name}-{steps}steps-seed{seed}-{digest}"
    if warm_start_info(target) is not None and (target / "config.json").is_file():
        log(f"[warm start] {steps} supervised steps on {len(pairs)} references, from the cache: {target}")
        return target
    log(f"[warm start] {steps} supervised steps on {len(pairs)} reference completions of task {task.name!r} "
        f"(TRL's SFTTrainer, learning rate {learning_rate:g}); cached in {target}")
    from transformers import AutoModelForCausalLM

    from .default import DefaultPolicyConfig, warm_start
    from .pretrained import load_tokenizer, quiet_loading

    started = time.perf_counter()
    with quiet_loading():
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="float32")
        if tokenizer is None:
            tokenizer = load_tokenizer(folder)
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
        tokenizer.pad_token = tokenizer.eos_token
    config = DefaultPolicyConfig(
        seed=seed, sft_max_steps=steps, sft_epochs=float(10**9), sft_learning_rate=learning_rate,
        sft_batch_size=batch_size, sft_block_contexts=False,
    )
    try:
        model = warm_start(model, tokenizer, pairs, config=config, log=lambda line: log(f"[warm start] {line}"))
    finally:
        _reset_accelerate_state()
    losses = [row["loss"] for row in getattr(model, "_mrtpo_sft_log_history", []) if "loss" in row]
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        with quiet_loading():
            model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        info = {
            "base": str(folder),
            "steps": steps,
            "learning_rate": learning_rate,
            "batch_size": batch_size,
            "seed": seed,
            "pairs": len(pairs),
            "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None,
            "seconds": round(time.perf_counter() - started, 1),
        }
        (tmp / WARM_START_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        tmp.replace(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if losses:
        log(f"[warm start] loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    return target


def _reset_accelerate_state() -> None:
    """accelerate keeps one process-wide state, fixed by the first ``Accelerator``: the SFT trainer's (float32) would
    refuse the RL trainer's mixed precision (``--bf16``) in the same process. Reset it, as accelerate's own tests do
    between accelerators."""
    try:
        from accelerate.state import AcceleratorState

        AcceleratorState._reset_state(reset_partial_state=False)  # the process layout stays
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - another accelerate: nothing to reset
        pass
