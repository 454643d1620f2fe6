"""Score a policy on a task's held-out split: generation, the task's verifiers, and the metrics of the report.

:func:`evaluate_policy` generates ``num_generations`` completions per example (greedy when 1, sampled otherwise),
scores each with the task's verifiers (the same :meth:`Task.score` as training) and reduces them to:

* ``<reward>``: the mean of each reward over the completions it applies to (``None`` when it never applies);
* ``all_rewards``: the share of completions that earn every applicable reward in full (reward >= 1);
* the task's own headline metrics (``Task.metrics``, e.g. SQL ``execution_accuracy``), over all completions;
* with ``num_generations = k > 1``: ``pass@k/<name>`` (the share of examples where at least one of the k completions
  earns it in full) and ``mean@k/<name>`` (the mean over all completions), for ``all_rewards`` and each reward.

The prompt ids come from ``encode_prompts`` — by default :func:`mrtpo_sdk.prompting.encode_prompts`, which gives
the ids TRL samples after in training; the trainer passes its own ``_tokenize_prompts``.
"""

from __future__ import annotations

import contextlib

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MRTPOError
from ..task import Task, example_id

__all__ = ["EvalRecord", "EvalReport", "evaluate_policy", "generate_completions", "summarize"]

FULL_REWARD = 1.0 - 1e-9


@dataclass
class EvalRecord:
    """One scored completion.

    Attributes:
        example_id: the example's id; ``sample``: 0..k-1 among its completions.
        completion: the decoded completion (special tokens skipped, as TRL decodes).
        rewards: each verifier's reward by name (``None`` = not applicable).
        num_tokens: completion length in tokens (up to the first EOS).
        example: the example itself (not written to JSON).
    """

    example_id: str
    sample: int
    completion: str
    rewards: dict[str, float | None]
    num_tokens: int
    example: Any = field(default=None, repr=False, compare=False)

    def earned(self, name: str) -> bool | None:
        """Whether reward ``name`` was earned in full (``None``: not applicable)."""
        r = self.rewards.get(name)
        return None if r is None else r >= FULL_REWARD

    def earned_all(self) -> bool:
        """Every applicable reward earned in full (a completion no verifier applies to earns nothing)."""
        flags = [f for f in (self.earned(n) for n in self.rewards) if f is not None]
        return bool(flags) and all(flags)


@dataclass
class EvalReport:
    """The result of :func:`evaluate_policy`; ``metrics`` maps names to values in [0, 1] (or ``None``)."""

    task: str
    split: str
    policy: str
    num_examples: int
    num_generations: int
    greedy: bool
    temperature: float | None
    max_completion_length: int
    reward_names: list[str]
    headline_names: list[str]
    metrics: dict[str, float | None]
    seconds: float
    records: list[EvalRecord] = field(default_factory=list, repr=False)
    batch_size: int | None = None
    """Sequences per ``generate`` call: greedy decoding of a small policy can change with the batch's padding."""
    autocast: str | None = None
    """The autocast dtype generation ran under (``"bfloat16"``), ``None`` for the weights' own dtype."""

    def to_json(self, with_records: bool = True) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "records"}
        if with_records:
            out["records"] = [
                {k: v for k, v in asdict(r).items() if k != "example"} for r in self.records
            ]
        return out

    def write(self, path: str | Path) -> Path:
        """Write the report (metrics and every scored completion) as JSON to ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return path


def summarize(task: Task, records: Sequence[EvalRecord], num_generations: int) -> tuple[dict[str, float | None], list[str]]:
    """The metrics of a list of scored completions (see the module docstring) and the task's headline names.

    Raises:
        MRTPOError: ``task.metrics`` raised or returned something that is not a mapping of names to numbers.
    """
    names = task.verifier_names
    metrics: dict[str, float | None] = {}
    for name in names:
        vals = [r.rewards[name] for r in records if r.rewards.get(name) is not None]
        metrics[name] = _mean(vals)
    metrics["all_rewards"] = _mean([float(r.earned_all()) for r in records])
    headline: dict[str, Any] = {}
    if task.metrics is not None:
        try:
            headline = dict(task.metrics(list(records)))
        except Exception as exc:  # a user's function: one line naming it
            raise MRTPOError(f"task {task.name!r}: metrics(records) raised {type(exc).__name__}: {exc}") from exc
        for key, value in headline.items():
            if value is not None and not isinstance(value, (int, float)):
                raise MRTPOError(
                    f"task {task.name!r}: metrics(records) returned {key!r}: {type(value).__name__}; values must be "
                    f"numbers or None"
                )
            if key in metrics:
                raise MRTPOError(f"task {task.name!r}: metrics(records) returned {key!r}, which is a reward's name")
            metrics[key] = None if value is None else float(value)
    if num_generations > 1:
        by_example: dict[str, list[EvalRecord]] = {}
        for r in records:
            by_example.setdefault(r.example_id, []).append(r)
        k = num_generations
        for name in ["all_rewards", *names]:
            hits, means = [], []
            for group in by_example.values():
                flags = [r.earned_all() if name == "all_rewards" else r.earned(name) for r in group]
                flags = [f for f in flags if f is not None]
                if flags:
                    hits.append(float(any(flags)))
                    means.append(sum(flags) / len(flags))
            metrics[f"pass@{k}/{name}"] = _mean(hits)
            metrics[f"mean@{k}/{name}"] = _mean(means)
    lengths = [r.num_tokens for r in records]
    metrics["completion_length"] = _mean([float(n) for n in lengths])
    return metrics, list(headline)


def _mean(vals: Sequence[float]) -> float | None:
    return sum(vals) / len(vals) if vals else None


def generate_completions(
    model: Any,
    tokenizer: Any,
    prompt_ids: Sequence[Sequence[int]],
    *,
    num_generations: int = 1,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_new_tokens: int = 256,
    batch_size: int = 16,
    on_batch: Callable[[int], None] | None = None,
    autocast_dtype: Any = None,
) -> list[list[tuple[str, int]]]:
    """Generate ``num_generations`` completions after each prompt: greedy when 1, sampled at ``temperature`` else.

    Prompts are left-padded in batches of ``batch_size`` sequences (prompts are sorted by length first, so a batch
    pads little); generation stops at the tokenizer's EOS or after ``max_new_tokens``.

    ``autocast_dtype`` (e.g. ``torch.bfloat16``): generate under ``torch.autocast`` in that dtype, as training
    sampled (a ``--model`` trained with ``--bf16`` on a CPU); ``None``: in the weights' dtype.

    Returns:
        per prompt, ``num_generations`` pairs ``(text, num_tokens)``: the text decoded with special tokens skipped
        (as TRL decodes completions) and the number of tokens up to and including the first EOS.
    """
    import torch

    if num_generations < 1:
        raise MRTPOError(f"--num_generations must be >= 1, got {num_generations}")
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos = tokenizer.eos_token_id
    greedy = num_generations == 1
    per_batch = max(1, batch_size // num_generations)
    order = sorted(range(len(prompt_ids)), key=lambda i: len(prompt_ids[i]))
    out: list[list[tuple[str, int]]] = [[] for _ in prompt_ids]
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(order), per_batch):
            idx = order[start : start + per_batch]
            rows = [list(prompt_ids[i]) for i in idx]
            width = max(len(r) for r in rows)
            ids = torch.full((len(rows), width), pad, dtype=torch.long)
            attn = torch.zeros((len(rows), width), dtype=torch.long)
            for j, r in enumerate(rows):
                ids[j, width - len(r) :] = torch.tensor(r, dtype=torch.long)
                attn[j, width - len(r) :] = 1
            kwargs: dict[str, Any] = {"do_sample": False} if greedy else {
                "do_sample": True,
                "temperature": temperature,
                "top_p": top_p,
                "top_k": 0,
                "num_return_sequences": num_generations,
            }
            precision = (torch.autocast(device.type, dtype=autocast_dtype) if autocast_dtype is not None
                         else contextlib.nullcontext())
            with torch.no_grad(), precision:
                gen = model.generate(
                    input_ids=ids.to(device),
                    attention_mask=attn.to(device),
                    max_new_tokens=max_new_tokens,
                    pad_token_id=pad,
                    eos_token_id=eos,
                    **kwargs,
                )
            new = gen[:, width:].cpu()
            for j in range(new.shape[0]):
                seq = new[j].tolist()
                n = len(seq)
                if eos is not None and eos in seq:
                    n = seq.index(eos) + 1
                text = tokenizer.decode(seq[:n], skip_special_tokens=True)
                out[idx[j // (1 if greedy else num_generations)]].append((text, n))
            if on_batch is not None:
                on_batch(len(idx))
    finally:
        model.train(was_training)
    return out


def evaluate_policy(
    task: Task,
    model: Any,
    tokenizer: Any,
    examples: Sequence[Any],
    *,
    split: str = "dev",
    policy: str = "",
    num_generations: int = 1,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_completion_length: int = 256,
    batch_size: int = 16,
    encode_prompts: Callable[[list[Any]], list[list[int]]] | None = None,
    progress: bool = False,
    autocast_dtype: Any = None,
) -> EvalReport:
    """Generate completions for ``examples`` with the policy and score them with the task's verifiers.

    Args:
        task: the task (its verifiers and, if set, ``task.metrics``).
        model, tokenizer: the policy (a causal LM on any device) and its tokenizer.
        examples: the held-out examples.
        split, policy: labels for the report.
        num_generations: completions per example; 1 = greedy (``temperature`` unused), k > 1 = sampled, with
            pass@k / mean@k in the metrics.
        max_completion_length: new tokens at most, as TRL's ``max_completion_length``.
        batch_size: sequences per ``generate`` call.
        encode_prompts: prompts -> token ids (default :func:`mrtpo_sdk.prompting.encode_prompts`).
        progress: show a rich progress bar on a terminal.
        autocast_dtype: generate under ``torch.autocast`` in this dtype (training's mixed precision), or ``None``.

    Returns:
        An :class:`EvalReport`.

    Raises:
        MRTPOError: no examples, a bad ``num_generations``, or a bad ``task.metrics``.
        VerifierError: a verifier raised (names the task, verifier and example id).
    """
    from ..prompting import encode_prompts as default_encode

    if not examples:
        raise MRTPOError(f"task {task.name!r}: no examples to evaluate on")
    start = time.perf_counter()
    encode = encode_prompts or (lambda prompts: default_encode(tokenizer, prompts))
    prompt_ids = encode([task.rollout_prompt(ex) for ex in examples])
    bar = _progress(len(examples), f"eval {task.name}/{split}") if progress else None
    try:
        generated = generate_completions(
            model,
            tokenizer,
            prompt_ids,
            num_generations=num_generations,
            temperature=temperature,
            top_p=top_p,
            max_new_tokens=max_completion_length,
            batch_size=batch_size,
            on_batch=(lambda n: bar[0].advance(bar[1], n)) if bar else None,
            autocast_dtype=autocast_dtype,
        )
    finally:
        if bar:
            bar[0].stop()
    records = []
    for ex, outs in zip(examples, generated):
        eid = example_id(ex)
        for s, (text, n) in enumerate(outs):
            results = task.score(ex, text, on_timeout="fail")  # model output past a time limit fails, as in training
            rewards = {v.name: (None if r is None else float(r.reward)) for v, r in zip(task.verifiers, results)}
            records.append(EvalRecord(eid, s, text, rewards, n, example=ex))
    metrics, headline = summarize(task, records, num_generations)
    return EvalReport(
        task=task.name,
        split=split,
        policy=policy,
        num_examples=len(examples),
        num_generations=num_generations,
        greedy=num_generations == 1,
        temperature=None if num_generations == 1 else temperature,
        max_completion_length=max_completion_length,
        reward_names=task.verifier_names,
        headline_names=headline,
        metrics=metrics,
        seconds=time.perf_counter() - start,
        records=records,
        batch_size=batch_size,
        autocast=str(autocast_dtype).replace("torch.", "") if autocast_dtype is not None else None,
    )


def _progress(total: int, label: str):
    import sys

    if not sys.stdout.isatty():
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    bar.start()
    return bar, bar.add_task("", total=total)


def format_value(v: float | None) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"
