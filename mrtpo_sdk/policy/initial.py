"""The policy a training run starts from: the task's embedded bootstrap policy, or ``--model`` (a model folder, a run
folder, a LoRA adapter merged into its base, a GGUF file dequantized, a Hub id), warm-started on the task's references
when asked. ``mrtpo-sdk train`` calls :func:`initial_policy`; ``run.json`` records what it returns."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["InitialPolicy", "initial_policy"]


@dataclass
class InitialPolicy:
    """What :func:`initial_policy` chose.

    Attributes:
        model: the embedded policy (a ``PreTrainedModel``), or the folder or Hub id TRL loads the model from (``str``).
        tokenizer: the embedded policy's tokenizer, the tokenizer saved in a model folder, or ``None`` (TRL loads
            the Hub id's).
        label: the policy in words, as ``train`` prints it (``policy: ...``) and ``run.json`` records it.
        source: ``run.json``'s ``initial_policy``: the embedded policy's cache folder, the warm-started folder, or
            ``--model`` as given; ``compare`` checks that every run of a seed starts from the same one.
        warm_start: ``run.json``'s ``warm_start`` (the warm-started folder and its ``warm_start.json``), or ``None``.
    """

    model: Any
    tokenizer: Any
    label: str
    source: str
    warm_start: dict[str, Any] | None = None


def initial_policy(
    task: Any,
    examples: Sequence[Any],
    *,
    model: str | None,
    given_model: str | None = None,
    seed: int = 42,
    preset: str = "small",
    rebuild: bool = False,
    warm_start_steps: int = 0,
    warm_start_learning_rate: float = 1e-5,
    tokenizer: Any = None,
    log: Callable[[str], None] | None = None,
) -> InitialPolicy:
    """The initial policy of a run on ``task``.

    Args:
        task, examples: the task and its training examples (the embedded policy and the warm start learn from their
            references).
        model: ``None`` for the embedded bootstrap policy (built or loaded from the cache with ``seed``, ``preset``,
            ``rebuild``); else the checked ``--model`` (:func:`~mrtpo_sdk.policy.pretrained.check_model`'s result):
            an adapter folder is merged into its base model once (cached), a GGUF's dequantized folder is named by
            its origin.
        given_model: ``--model`` as the user gave it (the ``source`` without a warm start; default ``model``).
        warm_start_steps, warm_start_learning_rate: supervised steps on the task's references before RL (with a
            ``model`` only; 0: none), cached (:func:`~mrtpo_sdk.policy.warm_start.warm_started_model`).
        tokenizer: ``model``'s tokenizer as the caller prepared it (e.g. a ``--chat_template`` set on it): the warm
            start and the run use it. ``None``: the one saved in the model folder.
        log: where progress lines go (default: stdout).

    Raises:
        MRTPOError: as :func:`~mrtpo_sdk.policy.for_task.task_policy` and
            :func:`~mrtpo_sdk.policy.pretrained.merged_adapter_folder`.
    """
    from .pretrained import quiet_loading

    log = log or (lambda msg: print(msg, flush=True))
    if model is None:
        from .for_task import task_policy

        with quiet_loading():  # the cached embedded policy: no "Loading weights" bar
            built, tokenizer, path = task_policy(task, examples, seed=seed, preset=preset, rebuild=rebuild, log=log)
        label = (f"embedded bootstrap policy ({sum(p.numel() for p in built.parameters()) / 1e6:.2f}M parameters) "
                 f"from {path}")
        return InitialPolicy(built, tokenizer, label, str(path))
    folder = model
    label = str(folder)
    from .pretrained import is_adapter_folder, merged_adapter_folder

    if is_adapter_folder(folder):  # a LoRA run saved without its merged policy: merged once into the cache
        with quiet_loading():
            folder = str(merged_adapter_folder(folder, log=log))
        label = f"{model} merged into its base model (cached in {folder})"
    from .gguf import describe_origin, model_origin

    origin = model_origin(folder)
    if origin is not None:  # a GGUF --model: its dequantized folder in the cache
        label = f"{describe_origin(origin)} (cached in {folder})"
    warm_start = None
    if warm_start_steps:
        from .warm_start import warm_start_info, warm_started_model

        with quiet_loading():
            folder = str(warm_started_model(
                task, examples, folder, steps=warm_start_steps, learning_rate=warm_start_learning_rate, seed=seed,
                tokenizer=tokenizer, log=log,
            ))
        label = (f"{label}, warm-started with {warm_start_steps} supervised steps on the task's references "
                 f"({folder})")
        info = warm_start_info(folder)
        warm_start = None if info is None else {"folder": folder, **info}
    if tokenizer is None and Path(folder).is_dir():
        from .pretrained import model_tokenizer

        tokenizer = model_tokenizer(str(given_model or model), folder)  # as saved (AutoTokenizer may rebuild it)
    source = folder if warm_start_steps else str(given_model if given_model is not None else model)
    return InitialPolicy(folder, tokenizer, label, source, warm_start)
