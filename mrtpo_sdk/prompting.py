"""Prompt encoding: the one place that turns a rollout prompt into the token ids the policy samples after.

It mirrors what TRL 1.16's ``GRPOTrainer._tokenize_prompts`` does for text-only prompts without tools: chat
messages go through the tokenizer's chat template with ``add_generation_prompt=True``; plain text through the
tokenizer itself. ``eval``, ``explain`` and the replay outside training use it; inside training the trainer uses
TRL's own method, and ``tests/evaluation/test_evaluation.py`` checks that both give the same ids on every bundled task.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["completion_text", "encode_prompt", "encode_prompts"]


def completion_text(completion: Any) -> str:
    """The text of a completion as TRL passes it: a string, or chat messages ``[{"role": "assistant", "content":
    ...}]`` (their contents joined); verifiers score this text."""
    from collections.abc import Mapping

    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], Mapping):
        return "".join(str(m.get("content", "")) for m in completion)
    return str(completion)


def encode_prompt(tokenizer: Any, prompt: Any, *, chat_template: str | None = None) -> list[int]:
    """Token ids of one prompt (``str`` or a list of ``{"role", "content"}`` messages), as sampling sees it.

    Returns:
        ``list[int]``: the prompt's ids, ending with the assistant generation prompt for chat messages.
    """
    if isinstance(prompt, str):
        return list(tokenizer(text=prompt)["input_ids"])
    out = tokenizer.apply_chat_template(
        conversation=prompt, chat_template=chat_template, add_generation_prompt=True, tokenize=True
    )
    if isinstance(out, dict) or hasattr(out, "keys"):
        out = out["input_ids"]
    return list(out)


def encode_prompts(tokenizer: Any, prompts: Sequence[Any], *, chat_template: str | None = None) -> list[list[int]]:
    """:func:`encode_prompt` of each prompt."""
    return [encode_prompt(tokenizer, p, chat_template=chat_template) for p in prompts]
