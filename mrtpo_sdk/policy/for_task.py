"""The embedded default policy of a task: its corpus, its size presets, and one call used by `train` and `explain`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import MRTPOError

__all__ = [
    "POLICY_PRESETS",
    "check_policy_preset",
    "policy_corpus",
    "task_policy",
    "task_policy_dir",
    "warm_start_extras",
]

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


def check_policy_preset(preset: str) -> dict[str, Any]:
    """The settings of the ``--policy_preset`` named ``preset`` (the one place it is validated: ``train``,
    ``explain`` and ``eval`` all come here).

    Raises:
        MRTPOError: an unknown ``preset`` (the line names the known ones).
    """
    if preset not in POLICY_PRESETS:
        raise MRTPOError(f"--policy_preset must be one of {', '.join(POLICY_PRESETS)}, got {preset!r}")
    return POLICY_PRESETS[preset]


def policy_corpus(
    task: Any, examples: Sequence[Any], *, block_contexts: bool = False
) -> tuple[list[str], list[tuple[list[dict] | str, str]]]:
    """Text the embedded tokenizer must cover (prompts, references, their blocks) and the (prompt, reference)
    pairs of the warm start. Each prompt is taught as sampling sees it: chat messages through the chat template, a
    text prompt as raw text (TRL samples a text prompt without the template). With ``block_contexts`` (``sft_block_contexts``), each
    reference is also taught after ``P_all``, its prompt with its own non-empty blocks appended (tasks with
    ``block_placement="append"``).

    The pairs are the training examples', then those of the task's ``warm_start_examples(examples)`` when it declares
    that hook (e.g. synthetic questions): extra examples rendered with the task's own ``prompt`` and ``reference``,
    each once after its bare prompt (no block contexts: those teach reading a training reference's blocks). Their
    text is in the corpus too, so the tokenizer and the cache key (:func:`~mrtpo_sdk.policy.default.cache_key`) follow
    the extras.

    Raises:
        MRTPOError: the task declares no ``reference`` (or a verifier breaks its contract on a reference).
    """
    texts: list[str] = []
    pairs: list[tuple[list[dict] | str, str]] = []
    for ex in examples:
        messages = task.rollout_prompt(ex)
        ref = task.reference_completion(ex)
        texts.extend(_prompt_texts(messages))
        texts.append(ref)
        blocks = ["" if r is None else r.block for r in task.score(ex, ref)]
        texts.extend(b for b in blocks if b)
        pairs.append((messages, ref))
        if block_contexts and task.block_placement == "append" and any(blocks):
            pairs.append((task.with_blocks(messages, blocks), ref))
    for ex in warm_start_extras(task, examples):
        messages = task.rollout_prompt(ex)
        ref = task.reference_completion(ex)
        texts.extend(_prompt_texts(messages))
        texts.append(ref)
        pairs.append((messages, ref))
    return texts, pairs


def _prompt_texts(prompt: list[dict] | str) -> list[str]:
    return [prompt] if isinstance(prompt, str) else [m["content"] for m in prompt]


def warm_start_extras(task: Any, examples: Sequence[Any]) -> list[Any]:
    """The task's extra warm-start examples: ``task.warm_start_examples(list(examples))``, or ``[]`` without the hook.

    Raises:
        MRTPOError: the hook is not a function, or it raised (one line naming the task and the exception).
    """
    hook = getattr(task, "warm_start_examples", None)
    if hook is None:
        return []
    if not callable(hook):
        raise MRTPOError(f"task {task.name!r}: warm_start_examples must be a function train_examples -> examples")
    try:
        return list(hook(list(examples)))
    except MRTPOError:
        raise
    except Exception as exc:  # noqa: BLE001 - user code: one line naming the hook
        raise MRTPOError(f"task {task.name!r}: warm_start_examples raised {exc!r}") from exc


def task_policy(
    task: Any,
    examples: Sequence[Any],
    *,
    seed: int,
    preset: str = "small",
    rebuild: bool = False,
    log: Callable[[str], None] = print,
):
    """Build (or load from the cache) the embedded default policy of ``task``: :class:`DefaultPolicyConfig` with the
    task's ``warm_start_steps`` (when set) as ``sft_max_steps``, then the ``preset``'s settings.

    Returns:
        ``(model, tokenizer, cache_path)`` as :func:`~mrtpo_sdk.policy.default_policy`.

    Raises:
        MRTPOError: an unknown ``preset``, or a task without references.
    """
    from .default import default_policy

    config = _policy_config(task, seed, preset)
    asked = getattr(task, "warm_start_steps", None)
    if asked is not None and config.sft_max_steps != asked:
        log(f"[policy] --policy_preset {preset}: {config.sft_max_steps} warm-start steps (the preset's), not the task's "
            f"warm_start_steps={asked}")
    texts, pairs = policy_corpus(task, examples, block_contexts=config.sft_block_contexts)
    return default_policy(task.name, texts, pairs, config=config, rebuild=rebuild, log=log)


def task_policy_dir(task: Any, examples: Sequence[Any], *, seed: int, preset: str = "small") -> Path:
    """The cache folder :func:`task_policy` would load or build for ``task`` and ``seed``, without building it: its
    name carries the cache key of everything the build reads (tokenizer corpus, warm-start pairs, settings), so two
    runs started from the same folder started from the same weights (``compare`` reuses a run only then).

    Raises:
        MRTPOError: as :func:`task_policy`.
    """
    from .default import policy_cache_path

    config = _policy_config(task, seed, preset)
    texts, pairs = policy_corpus(task, examples, block_contexts=config.sft_block_contexts)
    return policy_cache_path(task.name, texts, pairs, config)


def _policy_config(task: Any, seed: int, preset: str):
    """:class:`DefaultPolicyConfig` of ``task``: the task's ``warm_start_steps`` (when set) as ``sft_max_steps``,
    then the ``preset``'s settings (a preset's own sizes win; tiny: smoke tests)."""
    from .default import DefaultPolicyConfig

    settings: dict[str, Any] = {}
    if getattr(task, "warm_start_steps", None) is not None:
        settings["sft_max_steps"] = task.warm_start_steps  # Task(warm_start_steps=N)
    settings.update(check_policy_preset(preset))
    return DefaultPolicyConfig(seed=seed, **settings)
