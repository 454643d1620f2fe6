"""Embedded default policy: a tiny Qwen2-architecture causal LM built offline.

``mrtpo-sdk train`` without ``--model`` must work on a laptop CPU with no network.
The default policy is therefore built locally from the task itself:

1. :func:`build_tokenizer` trains a byte-level BPE tokenizer on the task's own text
   (prompts, reference answers, ...) and wraps it in a
   :class:`transformers.PreTrainedTokenizerFast` with a ChatML chat template.
2. :func:`build_model` creates a small, randomly initialised
   :class:`transformers.Qwen2ForCausalLM` (seeded).
3. :func:`warm_start` runs a short supervised pass with TRL's ``SFTTrainer`` on the
   task's reference completions (completion-only loss), so that RL starts from a policy
   that already answers in roughly the right shape (e.g. a fenced ```sql block).
4. :func:`default_policy` ties it together and caches the result under
   ``platformdirs.user_cache_dir("mrtpo-sdk")/policies/<task>-seed<seed>-<hash>``.

Everything is deterministic given the seed and the inputs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import re
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cache import cache_root
from ..errors import MRTPOError
from ..prompting import encode_prompt

__all__ = [
    "BOS_TOKEN",
    "CHAT_TEMPLATE",
    "EOS_TOKEN",
    "IM_END",
    "IM_START",
    "PAD_TOKEN",
    "DefaultPolicyConfig",
    "build_model",
    "build_tokenizer",
    "cache_key",
    "completion_nll",
    "default_cache_dir",
    "default_policy",
    "load_policy",
    "policy_cache_path",
    "read_manifest",
    "warm_start",
]

#: Bump when the build recipe changes in a way that changes the produced weights.
BUILD_FORMAT_VERSION = 1

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"
EOS_TOKEN = IM_END
BOS_TOKEN = None
SPECIAL_TOKENS = (PAD_TOKEN, IM_START, IM_END)

#: ChatML: ``<|im_start|>{role}\n{content}<|im_end|>\n`` per message, generation prompt
#: ``<|im_start|>assistant\n``. Assistant content is wrapped in ``{% generation %}`` so that
#: ``return_assistant_tokens_mask=True`` (TRL ``assistant_only_loss``) works too.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['role'] == 'assistant' %}"
    "{%- generation %}{{- message['content'] + '<|im_end|>' }}{%- endgeneration %}"
    "{{- '\\n' }}"
    "{%- else %}"
    "{{- message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

#: Marker file written last into a finished build; a cache entry without it is ignored.
MANIFEST_NAME = "mrtpo_policy.json"


@dataclass
class DefaultPolicyConfig:
    """Settings of the embedded default policy (all part of the cache key)."""

    # Tokenizer
    vocab_size: int = 4096
    """BPE vocabulary size including the 256 byte symbols and the 3 special tokens (an upper bound: BPE stops when
    no pair repeats, e.g. at ~1,700 on the bundled SQL task, so most schema and SQL words are one token each)."""

    # Model (Qwen2 architecture)
    hidden_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    intermediate_size: int = 256
    max_position_embeddings: int = 1024
    rope_theta: float = 10000.0
    tie_word_embeddings: bool = True
    initializer_range: float = 0.02

    # Supervised warm start (TRL SFTTrainer)
    sft_epochs: float = 40.0
    """Passes over the SFT pairs; the number of optimizer steps is capped by ``sft_max_steps``.
    (A task's ``Task(warm_start_steps=N)`` replaces ``sft_max_steps``: the bundled SQL task sets 1,000 for its 909
    training examples, each also taught after its replay context.)"""
    sft_max_steps: int = 700
    """Hard cap on optimizer steps (bounds build time for large tasks: ~0.13 s/step at batch 8
    and ~250-token prompts on 2 CPU cores). 0 disables warm start."""
    sft_learning_rate: float = 3e-3
    sft_batch_size: int = 8
    sft_warmup_ratio: float = 0.05
    sft_weight_decay: float = 0.0
    sft_lr_scheduler: str = "cosine"
    sft_max_length: int | None = 1024
    """Truncate SFT sequences (prompt + completion) to this many tokens."""
    sft_max_pairs: int | None = None
    """Use at most this many SFT pairs (the first ones); ``None`` uses all."""
    sft_block_contexts: bool = True
    """Also teach each reference after its replay context ``P_all`` (the prompt with the reference's own blocks
    appended, spec §3), so that the bootstrap policy, like a pretrained LLM, reads blocks in its context: the
    replay's JS distance then reflects what a block says. Sampling prompts never carry blocks."""
    full_determinism: bool = False
    """Also enable ``torch.use_deterministic_algorithms`` during SFT (needed on GPU only;
    has process-wide side effects)."""

    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DefaultPolicyConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def sft_num_steps(self, num_pairs: int) -> int:
        """Number of optimizer steps the warm start runs for ``num_pairs`` examples."""
        if num_pairs <= 0 or self.sft_max_steps <= 0 or self.sft_epochs <= 0:
            return 0
        if self.sft_max_pairs is not None:
            num_pairs = min(num_pairs, self.sft_max_pairs)
        steps_per_epoch = math.ceil(num_pairs / max(1, self.sft_batch_size))
        return max(1, min(self.sft_max_steps, math.ceil(self.sft_epochs * steps_per_epoch)))


# --------------------------------------------------------------------------------------
# Quiet helpers
# --------------------------------------------------------------------------------------


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence transformers/datasets/TRL logging, progress bars and warnings."""
    import datasets
    import transformers

    tf_verbosity = transformers.logging.get_verbosity()
    ds_verbosity = datasets.logging.get_verbosity()
    ds_bars = datasets.utils.logging.is_progress_bar_enabled()
    tf_bars = transformers.utils.logging.is_progress_bar_enabled()
    trl_logger = logging.getLogger("trl")
    trl_level = trl_logger.level
    transformers.logging.set_verbosity_error()
    datasets.logging.set_verbosity_error()
    datasets.utils.logging.disable_progress_bar()
    transformers.utils.logging.disable_progress_bar()
    trl_logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        transformers.logging.set_verbosity(tf_verbosity)
        datasets.logging.set_verbosity(ds_verbosity)
        if ds_bars:
            datasets.utils.logging.enable_progress_bar()
        if tf_bars:
            transformers.utils.logging.enable_progress_bar()
        trl_logger.setLevel(trl_level)


# --------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------


def build_tokenizer(texts: Iterable[str], vocab_size: int = 1024):
    """Train a byte-level BPE tokenizer on ``texts`` and wrap it for transformers.

    * Every byte is in the base alphabet, so any text round-trips exactly
      (``decode(encode(t)) == t``) and there is no unknown token.
    * Newlines are always their own pre-token, so a prompt ending in ``"...assistant\\n"`` is
      always a token-level prefix of prompt + completion.
    * Special tokens: ``<|endoftext|>`` (pad, id 0), ``<|im_start|>`` (id 1),
      ``<|im_end|>`` (eos, id 2). No BOS token is added.
    * Chat template: ChatML (see :data:`CHAT_TEMPLATE`).
    * ``padding_side="left"`` so that ``tokenizer(prompts, padding=True)`` feeds ``generate``.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    min_vocab = 256 + len(SPECIAL_TOKENS)
    if vocab_size < min_vocab:
        raise ValueError(f"vocab_size must be >= {min_vocab} (256 bytes + special tokens), got {vocab_size}")

    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.normalizer = None
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"\n"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    # Materialise + sort-stable order: the trainer's result only depends on word counts,
    # but a list keeps us independent of generator re-iteration semantics.
    corpus = [t for t in texts if t]
    tok.train_from_iterator(corpus, trainer=trainer, length=len(corpus))

    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        unk_token=None,
        bos_token=None,
        additional_special_tokens=[IM_START],
        clean_up_tokenization_spaces=False,
        model_max_length=10**6,
        padding_side="left",  # batched prompts for generate(); TRL's collators pad explicitly
    )
    hf_tok.chat_template = CHAT_TEMPLATE
    return hf_tok


# --------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------


def build_model(tokenizer, config: DefaultPolicyConfig | None = None):
    """Create a randomly initialised, seeded ``Qwen2ForCausalLM`` sized for ``tokenizer``."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM, set_seed

    config = config or DefaultPolicyConfig()
    model_config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        num_key_value_heads=config.num_key_value_heads,
        max_position_embeddings=config.max_position_embeddings,
        rope_theta=config.rope_theta,
        tie_word_embeddings=config.tie_word_embeddings,
        initializer_range=config.initializer_range,
        use_sliding_window=False,
        attention_dropout=0.0,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        use_cache=True,
    )
    set_seed(config.seed)
    with _quiet():
        model = Qwen2ForCausalLM(model_config)
    model.to(torch.float32)
    model.generation_config = GenerationConfig(
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return model


# --------------------------------------------------------------------------------------
# Supervised warm start
# --------------------------------------------------------------------------------------


def _sft_dataset(sft_pairs: Sequence[tuple[list[dict] | str, str]]):
    """TRL prompt-completion rows: conversational for chat-message prompts, plain text for text prompts (as TRL
    samples each kind). One warm start holds one kind.

    Raises:
        MRTPOError: the pairs mix text and chat prompts.
    """
    from datasets import Dataset

    kinds = {isinstance(messages, str) for messages, _ in sft_pairs}
    if len(kinds) > 1:
        raise MRTPOError(
            "the warm start got both text prompts and chat-message prompts; a task's prompt (and prompt_without) "
            "must return one kind"
        )
    rows = [
        {"prompt": messages, "completion": str(completion)}
        if isinstance(messages, str)
        else {
            "prompt": [{"role": str(m["role"]), "content": str(m["content"])} for m in messages],
            "completion": [{"role": "assistant", "content": str(completion)}],
        }
        for messages, completion in sft_pairs
    ]
    return Dataset.from_list(rows)


def warm_start(
    model,
    tokenizer,
    sft_pairs: Sequence[tuple[list[dict] | str, str]],
    config: DefaultPolicyConfig | None = None,
    output_dir: str | os.PathLike | None = None,
    log: Callable[[str], None] | None = None,
):
    """Supervised warm start with TRL's ``SFTTrainer`` (completion-only loss).

    ``sft_pairs`` are ``(prompt, reference completion)``; a chat-message prompt becomes a conversational
    prompt-completion example whose completion is the assistant message, a text prompt a plain-text one (the
    completion follows the raw prompt, as TRL samples text prompts).
    Trains in place and returns ``model`` (in eval mode). The trainer's log history is
    attached as ``model._mrtpo_sft_log_history`` for reporting.
    ``output_dir`` defaults to a temporary directory (nothing is written to the CWD). ``log``, when given, receives
    a progress line every tenth of the steps (``step 100/1000, loss 1.234, ETA ~4:10``): a warm start of a
    pretrained model can take an hour on a busy 2-core CPU.
    """
    from transformers import set_seed
    from trl import SFTConfig, SFTTrainer

    config = config or DefaultPolicyConfig()
    pairs = list(sft_pairs)
    if config.sft_max_pairs is not None:
        pairs = pairs[: config.sft_max_pairs]
    steps = config.sft_num_steps(len(pairs))
    model._mrtpo_sft_log_history = []
    if steps == 0:
        model.eval()
        return model

    tmp_ctx = (
        tempfile.TemporaryDirectory(prefix="mrtpo-sft-") if output_dir is None else contextlib.nullcontext(output_dir)
    )
    with tmp_ctx as out, _quiet():
        set_seed(config.seed)
        args = SFTConfig(
            output_dir=str(out),
            max_steps=steps,
            per_device_train_batch_size=config.sft_batch_size,
            gradient_accumulation_steps=1,
            learning_rate=config.sft_learning_rate,
            lr_scheduler_type=config.sft_lr_scheduler,
            warmup_steps=round(config.sft_warmup_ratio * steps),
            weight_decay=config.sft_weight_decay,
            max_grad_norm=1.0,
            max_length=config.sft_max_length,
            completion_only_loss=True,
            packing=False,
            bf16=False,
            fp16=False,
            gradient_checkpointing=False,
            report_to="none",
            disable_tqdm=True,
            logging_steps=max(1, steps // 20),
            logging_first_step=True,
            save_strategy="no",
            eval_strategy="no",
            seed=config.seed,
            data_seed=config.seed,
            full_determinism=config.full_determinism,
            dataloader_num_workers=0,
            dataset_num_proc=None,
            remove_unused_columns=True,
            use_cpu=not _accelerator_available(),
        )
        trainer = SFTTrainer(
            model=model,
            args=args,
            train_dataset=_sft_dataset(pairs),
            processing_class=tokenizer,
        )
        trainer.remove_callback(_printer_callback_cls())
        if log is not None:
            trainer.add_callback(_progress_callback(steps, log))
        trainer.train()
        model._mrtpo_sft_log_history = list(trainer.state.log_history)
        del trainer
    model.eval()
    # The trainer may have touched the generation config; make sure it stays usable.
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def _progress_callback(steps: int, log: Callable[[str], None]):
    """A ``TrainerCallback`` that logs ``step s/steps, loss L, ETA ~m:ss`` once per tenth of ``steps``, at the first
    loss the trainer logs in it (``L`` is that step's loss: the trainer logs after ``on_step_end``, so a line
    written there would show the previous logging's loss); the ETA is :class:`~mrtpo_sdk.progress.StepClock`'s,
    none before two steps."""
    from transformers import TrainerCallback

    from ..progress import StepClock, eta_text

    class WarmStartProgress(TrainerCallback):
        def __init__(self) -> None:
            self.clock = StepClock()
            self.tenths_logged = 0

        def on_step_end(self, args, state, control, **kwargs):
            self.clock.first_step_done(state.global_step)

        def on_log(self, args, state, control, logs=None, **kwargs):
            step = state.global_step
            if not (logs and isinstance(logs.get("loss"), (int, float))) or step >= steps:
                return
            tenth = step * 10 // steps
            if tenth > self.tenths_logged:  # a tenth of the steps passed since the last line
                self.tenths_logged = tenth
                eta = eta_text(self.clock.remaining(step, steps))
                log(", ".join([f"step {step}/{steps}", f"loss {float(logs['loss']):.3f}"] + ([eta] if eta else [])))

    return WarmStartProgress()


def _printer_callback_cls():
    from transformers.trainer_callback import PrinterCallback

    return PrinterCallback


def _accelerator_available() -> bool:
    import torch

    return torch.cuda.is_available()


def completion_nll(model, tokenizer, sft_pairs: Sequence[tuple[list[dict] | str, str]], batch_size: int = 8) -> float:
    """Mean per-token negative log-likelihood of the reference completions (incl. ``<|im_end|>``)
    given the prompts as sampling encodes them, i.e. the quantity the warm start minimises."""
    import torch

    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(sft_pairs), batch_size):
            seqs, masks = [], []
            for messages, completion in sft_pairs[start : start + batch_size]:
                prompt_ids = encode_prompt(tokenizer, messages)  # as sampling sees the prompt (one encoder)
                completion_ids = tokenizer.encode(completion + EOS_TOKEN, add_special_tokens=False)
                seqs.append(prompt_ids + completion_ids)
                masks.append([0] * len(prompt_ids) + [1] * len(completion_ids))
            width = max(len(s) for s in seqs)
            ids = torch.full((len(seqs), width), tokenizer.pad_token_id, dtype=torch.long)
            attn = torch.zeros((len(seqs), width), dtype=torch.long)
            loss_mask = torch.zeros((len(seqs), width), dtype=torch.bool)
            for i, (s, m) in enumerate(zip(seqs, masks)):
                ids[i, : len(s)] = torch.tensor(s)
                attn[i, : len(s)] = 1
                loss_mask[i, : len(m)] = torch.tensor(m, dtype=torch.bool)
            ids, attn, loss_mask = ids.to(device), attn.to(device), loss_mask.to(device)
            logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()
            targets = ids[:, 1:]
            nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
            mask = loss_mask[:, 1:]
            total += float(nll[mask].sum())
            count += int(mask.sum())
    model.train(was_training)
    return total / max(1, count)


# --------------------------------------------------------------------------------------
# Cache + orchestration
# --------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """``<user cache dir>/policies`` (``$MRTPO_SDK_CACHE_DIR/policies`` if that is set)."""
    return cache_root() / "policies"


def _library_versions() -> dict[str, str]:
    import tokenizers
    import torch
    import transformers
    import trl

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "trl": trl.__version__,
        "tokenizers": tokenizers.__version__,
    }


def cache_key(
    texts: Sequence[str],
    sft_pairs: Sequence[tuple[list[dict] | str, str]],
    config: DefaultPolicyConfig,
) -> str:
    """Hex digest identifying a build: inputs, settings, library versions, recipe version."""
    h = hashlib.sha256()

    def feed(obj: Any) -> None:
        data = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)

    feed({"format": BUILD_FORMAT_VERSION, "config": config.to_dict(), "versions": _library_versions()})
    feed({"accelerator": _accelerator_available()})
    h.update(b"texts")
    for t in texts:
        feed(t)
    h.update(b"pairs")
    for messages, completion in sft_pairs:
        if isinstance(messages, str):
            feed([messages, completion])  # a text prompt (taught raw): the string itself; chat prompts: role and content
        else:
            feed([[{"role": m["role"], "content": m["content"]} for m in messages], completion])
    return h.hexdigest()


def _safe_name(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "task"
    return name[:64]


def load_policy(path: str | os.PathLike):
    """Load a policy saved by :func:`default_policy` (model in eval mode, tokenizer)."""
    from transformers import PreTrainedTokenizerFast, Qwen2ForCausalLM

    path = Path(path)
    with _quiet():
        tokenizer = PreTrainedTokenizerFast.from_pretrained(str(path))
        model = Qwen2ForCausalLM.from_pretrained(str(path))
    model.eval()
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    if tokenizer.chat_template is None:
        tokenizer.chat_template = CHAT_TEMPLATE
    return model, tokenizer


def read_manifest(path: str | os.PathLike) -> dict[str, Any]:
    """Build metadata of a cached policy (config, cache key, SFT losses, timings, versions)."""
    return json.loads((Path(path) / MANIFEST_NAME).read_text(encoding="utf-8"))


def policy_cache_path(
    task_name: str,
    texts: Sequence[str],
    sft_pairs: Sequence[tuple[list[dict] | str, str]],
    config: DefaultPolicyConfig,
    cache_dir: Path | None = None,
    *,
    key: str | None = None,
) -> Path:
    """The cache folder :func:`default_policy` loads or builds for these inputs (``<task>-seed<seed>-<key[:16]>``),
    without building anything. ``key``: :func:`cache_key` of the inputs when already computed."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if key is None:
        key = cache_key([str(t) for t in texts], [(list(m), str(c)) for m, c in sft_pairs], config)
    return root / f"{_safe_name(task_name)}-seed{config.seed}-{key[:16]}"


def default_policy(
    task_name: str,
    texts: Sequence[str],
    sft_pairs: Sequence[tuple[list[dict] | str, str]],
    config: DefaultPolicyConfig | None = None,
    cache_dir: Path | None = None,
    rebuild: bool = False,
    log: Callable[[str], None] = print,
):
    """Build (or load from cache) the embedded default policy for a task.

    Args:
        task_name: used in the cache directory name.
        texts: all text the tokenizer should cover (prompts, references, ...). The chat
            renderings of ``sft_pairs`` are added automatically.
        sft_pairs: ``(prompt chat messages, reference completion)`` for the warm start.
        config: model/tokenizer/SFT settings; ``None`` uses :class:`DefaultPolicyConfig`.
        cache_dir: directory holding cached policies; defaults to :func:`default_cache_dir`.
        rebuild: ignore (and replace) an existing cache entry.
        log: receives one-line progress messages.

    Returns:
        ``(model, tokenizer, path)`` where ``path`` is the cache directory of this build
        (loadable with :func:`load_policy` or ``from_pretrained``).
    """
    config = config or DefaultPolicyConfig()
    texts = [str(t) for t in texts]
    sft_pairs = [(list(messages), str(completion)) for messages, completion in sft_pairs]
    cache_root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = cache_key(texts, sft_pairs, config)
    final = policy_cache_path(task_name, texts, sft_pairs, config, cache_root, key=key)

    replace_existing = rebuild
    if not rebuild and (final / MANIFEST_NAME).is_file():
        try:
            model, tokenizer = load_policy(final)
        except Exception as exc:  # noqa: BLE001 - a corrupted entry of any kind is rebuilt
            log(f"[policy] cached default policy at {final} is unreadable ({exc!r}); rebuilding")
            replace_existing = True
        else:
            log(f"[policy] loaded default policy from cache: {final}")
            return model, tokenizer, final

    cache_root.mkdir(parents=True, exist_ok=True)
    log(f"[policy] building default policy for task {task_name!r} (seed {config.seed}) -> {final}")
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=cache_root))
    try:
        model, tokenizer, manifest = _build(task_name, texts, sft_pairs, config, key, tmp, log)
        with _quiet():
            model.save_pretrained(str(tmp))
            tokenizer.save_pretrained(str(tmp))
        (tmp / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
        if final.exists() and (replace_existing or not (final / MANIFEST_NAME).is_file()):
            # rebuild=True or a corrupted/incomplete entry: move it out of the way. (An entry that
            # a concurrent identical build finished meanwhile is kept; see below.)
            old = cache_root / f".old-{final.name}-{os.getpid()}-{time.time_ns()}"
            try:
                os.replace(final, old)
            except OSError:
                old = None
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        try:
            os.replace(tmp, final)
        except OSError:
            # A concurrent identical build finished first: keep theirs (same weights).
            if not (final / MANIFEST_NAME).is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"[policy] saved default policy to {final}")
    return model, tokenizer, final


def _build(task_name, texts, sft_pairs, config, key, workdir: Path, log):
    import torch

    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    corpus = list(texts)
    for messages, completion in sft_pairs:
        corpus.extend(str(m["content"]) for m in messages)
        corpus.append(completion)
    tokenizer = build_tokenizer(corpus, config.vocab_size)
    timings["tokenizer_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    model = build_model(tokenizer, config)
    timings["model_s"] = time.perf_counter() - t0
    n_params = sum(p.numel() for p in model.parameters())
    log(
        f"[policy] tokenizer: {len(tokenizer)} tokens ({timings['tokenizer_s']:.1f}s); "
        f"model: Qwen2 {config.num_hidden_layers}x{config.hidden_size}, {n_params / 1e6:.2f}M params"
    )

    pairs = sft_pairs if config.sft_max_pairs is None else sft_pairs[: config.sft_max_pairs]
    steps = config.sft_num_steps(len(pairs))
    loss_first = loss_last = None
    if steps:
        log(f"[policy] warm start: SFT on {len(pairs)} (prompt, reference) pairs, {steps} steps")
        t0 = time.perf_counter()
        warm_start(model, tokenizer, pairs, config, output_dir=workdir / "sft",
                   log=lambda line: log(f"[policy] warm start {line}"))
        timings["sft_s"] = time.perf_counter() - t0
        shutil.rmtree(workdir / "sft", ignore_errors=True)
        losses = [e["loss"] for e in getattr(model, "_mrtpo_sft_log_history", []) if "loss" in e]
        if losses:
            loss_first, loss_last = float(losses[0]), float(losses[-1])
        log(f"[policy] warm start done in {timings['sft_s']:.1f}s; SFT loss {_fmt(loss_first)} -> {_fmt(loss_last)}")
    else:
        log("[policy] warm start skipped (no SFT pairs or sft_max_steps=0)")

    manifest = {
        "kind": "mrtpo-sdk default policy",
        "format": BUILD_FORMAT_VERSION,
        "task_name": task_name,
        "cache_key": key,
        "config": config.to_dict(),
        "versions": _library_versions(),
        "num_texts": len(texts),
        "num_sft_pairs": len(pairs),
        "sft_steps": steps,
        "sft_loss_first": loss_first,
        "sft_loss_last": loss_last,
        "vocab_size": len(tokenizer),
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "timings": timings,
        "torch_threads": torch.get_num_threads(),
    }
    return model, tokenizer, manifest


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"
