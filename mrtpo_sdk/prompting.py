"""Prompt encoding: the one place that turns a rollout prompt into the token ids the policy samples after.

It mirrors what TRL 1.16's ``GRPOTrainer._tokenize_prompts`` does for text-only prompts without tools: chat
messages go through the tokenizer's chat template with ``add_generation_prompt=True``; plain text through the
tokenizer itself. ``eval``, ``explain`` and the replay outside training use it; inside training the trainer uses
TRL's own method, and ``tests/evaluation/test_evaluation.py`` checks that both give the same ids on every bundled task.

A model whose tokenizer has no chat template (a base model: many GGUF files, most pretrained checkpoints) gets its
prompts as plain text, TRL's "standard" format: :func:`plain_text_prompt` renders a task's chat messages, and
:meth:`mrtpo_sdk.Task.with_plain_text_prompts` applies it to every prompt the task gives (the rollout prompt and the
replay's contexts), so ``train``, ``eval``, ``explain`` and ``lint --replay`` all read the same text.
:func:`use_model_prompts` makes that choice for a command, and reads ``--chat_template FILE``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import MRTPOError

__all__ = [
    "PLAIN_TEXT_SEPARATOR",
    "check_chat_template",
    "completion_text",
    "encode_prompt",
    "encode_prompts",
    "has_chat_template",
    "plain_text_note",
    "plain_text_prompt",
    "read_chat_template",
    "set_chat_template",
    "use_model_prompts",
]

#: What separates two messages' contents in a plain-text prompt (:func:`plain_text_prompt`).
PLAIN_TEXT_SEPARATOR = "\n\n"


def completion_text(completion: Any) -> str:
    """The text of a completion as TRL passes it: a string, or chat messages ``[{"role": "assistant", "content":
    ...}]`` (their contents joined); verifiers score this text."""
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


def has_chat_template(tokenizer: Any) -> bool:
    """Whether ``tokenizer`` (or a processor) has a chat template to render chat messages with."""
    return bool(getattr(tokenizer, "chat_template", None))


def plain_text_prompt(prompt: Any) -> str:
    """A prompt as plain text, for a model without a chat template (TRL's standard format).

    Text stays as it is. Chat messages become their contents in order (system, user, and any assistant turn of a
    few-shot prompt), joined by :data:`PLAIN_TEXT_SEPARATOR` (a blank line); roles are not written. The replay's
    blocks are appended after this text, so its contexts differ from each other only by their blocks.

    Example: ``[{"role": "system", "content": "Answer in SQL."}, {"role": "user", "content": "How many rows?"}]``
    -> ``"Answer in SQL.\\n\\nHow many rows?"``.
    """
    if isinstance(prompt, str):
        return prompt
    return PLAIN_TEXT_SEPARATOR.join(str(m.get("content", "")) for m in prompt if isinstance(m, Mapping))


def plain_text_note(model: str, how: str = "--chat_template FILE sets one") -> str:
    """The one line said when a model's prompts are plain text (:func:`use_model_prompts`), e.g. ``note: --model
    base.gguf has no chat template; its prompts are plain text, the messages' contents joined by blank lines
    (--chat_template FILE sets one)``; ``model`` names the model, ``how`` says how to give it a template."""
    return (f"note: {model} has no chat template; its prompts are plain text, the messages' contents joined by "
            f"blank lines ({how})")


def read_chat_template(path: str | Path) -> str:
    """The Jinja chat template in the file ``path``, checked: it reads, and it compiles as transformers compiles
    chat templates.

    Raises:
        MRTPOError: one line naming the file: it does not exist, cannot be read, is empty, or is not a valid
            Jinja template (with the line and the parser's reason).
    """
    shown = str(path)
    where = f"--chat_template {shown}"
    file = Path(path).expanduser()
    if not file.is_file():
        what = "a folder" if file.is_dir() else "no such file"
        raise MRTPOError(f"{where}: {what}; pass a Jinja chat template file (e.g. one saved as chat_template.jinja "
                         f"beside a model)")
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise MRTPOError(f"{where}: not UTF-8 text; pass a Jinja chat template (a text file)") from None
    except OSError as exc:
        raise MRTPOError(f"{where}: cannot be read ({exc.strerror or type(exc).__name__}); pass a readable "
                         f"Jinja file") from None
    if not text.strip():
        raise MRTPOError(f"{where}: the file is empty; pass a Jinja chat template")
    try:
        from transformers.utils.chat_template_utils import _compile_jinja_template as compile_template
    except ImportError:  # pragma: no cover - another transformers: jinja2 itself
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        compile_template = ImmutableSandboxedEnvironment().from_string
    try:
        compile_template(text)
    except Exception as exc:  # noqa: BLE001 - jinja2's TemplateSyntaxError, or an ImportError for jinja2 itself
        line = getattr(exc, "lineno", None)
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise MRTPOError(f"{where}: not a valid Jinja template ({f'line {line}: ' if line else ''}{reason}); fix "
                         f"the file") from None
    try:
        from transformers.utils.chat_template_utils import render_jinja_template
    except ImportError:  # pragma: no cover - another transformers: the tokenizer renders it later
        return text
    _render_check(where, lambda: render_jinja_template([_PROBE], chat_template=text, add_generation_prompt=True,
                                                       **_PROBE_TOKENS))
    return text


#: The conversation a chat template must render (with the generation prompt) to be used.
_PROBE = [{"role": "user", "content": "Hi"}]
#: Special tokens templates read (``{{ bos_token }}``), for rendering :data:`_PROBE` before a tokenizer is loaded.
_PROBE_TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}


def _render_check(where: str, render: Callable[[], Any]) -> None:
    """``render()``, its failure (``raise_exception(...)`` in the template, an undefined name) as one line."""
    try:
        render()
    except Exception as exc:  # noqa: BLE001 - whatever the template raises
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise MRTPOError(f"{where}: the template fails on a user message ({reason[:200]}); fix the file") from None


def check_chat_template(path: str | Path | None, model: str | None) -> None:
    """``--chat_template FILE`` checked before anything loads: the file is a template (:func:`read_chat_template`)
    and there is a ``--model`` to give it to.

    Raises:
        MRTPOError: one line: a bad file, or no ``--model`` (the embedded policy has its own template).
    """
    if path is None:
        return
    if model is None:
        raise MRTPOError("--chat_template sets the chat template of a --model; the embedded policy has its own "
                         "(pass --model, or drop --chat_template)")
    read_chat_template(path)


def set_chat_template(tokenizer: Any, path: str | Path) -> None:
    """Give ``tokenizer`` the chat template in the file ``path`` (:func:`read_chat_template`), after checking that
    it renders a user message with the generation prompt.

    Raises:
        MRTPOError: as :func:`read_chat_template`, or the template fails on a user message (one line with its
            reason).
    """
    text = read_chat_template(path)
    _render_check(f"--chat_template {path}", lambda: tokenizer.apply_chat_template(
        _PROBE, chat_template=text, tokenize=False, add_generation_prompt=True))
    tokenizer.chat_template = text


def use_model_prompts(task: Any, tokenizer: Any, *, model: str, chat_template: str | Path | None = None,
                      log: Callable[[str], None] | None = None) -> Any:
    """The task as ``model`` reads its prompts: ``--chat_template FILE`` first given to ``tokenizer``
    (:func:`set_chat_template`); then, when the tokenizer has a chat template, ``task`` itself, else
    ``task.with_plain_text_prompts()`` and one note line (:func:`plain_text_note`) through ``log``.

    Args:
        task: a :class:`~mrtpo_sdk.Task`.
        tokenizer: the model's tokenizer (changed in place by ``chat_template``).
        model: ``--model`` as the user gave it, for the note.
        chat_template: a Jinja file, or ``None``.
        log: where the note goes (default: stderr).

    Raises:
        MRTPOError: a bad ``chat_template`` file (:func:`set_chat_template`).
    """
    import sys

    if chat_template is not None:
        set_chat_template(tokenizer, chat_template)
    if has_chat_template(tokenizer):
        return task
    (log or (lambda line: print(line, file=sys.stderr, flush=True)))(plain_text_note(f"--model {model}"))
    return task.with_plain_text_prompts()
