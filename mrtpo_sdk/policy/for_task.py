"""The embedded default policy of a task: its corpus, its size presets, and one call used by `train` and `explain`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import MRTPOError

__all__ = ["POLICY_PRESETS", "policy_corpus", "task_policy"]

#: Sizes of the embedded policy (``--policy_preset``): "small" (the default) and "tiny" (smoke tests, CI).
POLICY_PRESETS: dict[str, dict[str, Any]] = {
    "small": {},
    "tiny": {
        "vocab_size": 384,
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "intermediate_size": 64,
        "sft_max_steps": 8,
    },
}


def policy_corpus(task: Any, examples: Sequence[Any]) -> tuple[list[str], list[tuple[list[dict], str]]]:
    """Text the embedded tokenizer must cover (prompts, references, their blocks) and the (prompt, reference)
    pairs of the warm start: the training examples, then the task's ``warm_start(examples)`` extras if it declares
    them. A text prompt is taught as one user message.

    Raises:
        MRTPOError: the task declares no ``reference`` (or a verifier breaks its contract on a reference).
    """
    texts: list[str] = []
    pairs: list[tuple[list[dict], str]] = []
    extra = list(task.warm_start(list(examples))) if getattr(task, "warm_start", None) is not None else []
    for ex in [*examples, *extra]:
        prompt = task.rollout_prompt(ex)
        messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
        ref = task.reference_completion(ex)
        texts.extend(m["content"] for m in messages)
        texts.append(ref)
        for result in task.score(ex, ref):
            if result is not None and result.block:
                texts.append(result.block)
        pairs.append((messages, ref))
    return texts, pairs


def task_policy(
    task: Any,
    examples: Sequence[Any],
    *,
    seed: int,
    preset: str = "small",
    rebuild: bool = False,
    log: Callable[[str], None] = print,
):
    """Build (or load from the cache) the embedded default policy of ``task``.

    Returns:
        ``(model, tokenizer, cache_path)`` as :func:`~mrtpo_sdk.policy.default_policy`.

    Raises:
        MRTPOError: an unknown ``preset``, or a task without references.
    """
    from .default import DefaultPolicyConfig, default_policy

    if preset not in POLICY_PRESETS:
        raise MRTPOError(f"--policy_preset must be one of {', '.join(POLICY_PRESETS)}, got {preset!r}")
    texts, pairs = policy_corpus(task, examples)
    config = DefaultPolicyConfig(seed=seed, **POLICY_PRESETS[preset])
    return default_policy(task.name, texts, pairs, config=config, rebuild=rebuild, log=log)
