"""The TRL seam: every TRL internal (private method, attribute, config field, behaviour) the SDK relies on.

:class:`~mrtpo_sdk.trainer.MRTPOTrainer` subclasses ``trl.GRPOTrainer`` and overrides or calls some of its private
methods; nothing in TRL's versioning promises that these stay put. :data:`SEAM` lists them once, declaratively, with
the parameters we rely on and the return shape we expect; :func:`check_trl_seam` compares the list with the installed
TRL (``inspect.signature`` / ``inspect.getsource`` on the installed classes: no model is built, nothing touches the
network) and returns one line per mismatch, naming the method and the TRL version::

    python -c "from mrtpo_sdk.trainer.trl_seam import check_trl_seam; print(check_trl_seam())"

The return shapes are checked by behaviour in ``tests/trainer/test_trl_seam.py`` on a tiny model. This module imports
nothing heavy at import time (TRL is imported inside :func:`check_trl_seam`). See ``docs/trl.md``.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass

__all__ = ["SEAM", "Attribute", "ConfigField", "Method", "SourceMarker", "check_trl_seam", "trl_version"]


@dataclass(frozen=True)
class Method:
    """A TRL method we override (``super()`` call) or call.

    ``params`` are the parameter names after ``self``. ``exact``: the installed parameters must be exactly these, in
    this order (an override that forwards them positionally); otherwise each must be accepted by name (a keyword
    call), which ``**kwargs`` satisfies.
    """

    owner: str  # "GRPOTrainer", "TrlParser", ... (an attribute of the ``trl`` package)
    name: str
    params: tuple[str, ...]
    returns: str
    used_by: str
    exact: bool = True


@dataclass(frozen=True)
class Attribute:
    """An instance attribute TRL sets in ``owner.__init__`` (checked in its source: ``self.<name> =``)."""

    owner: str
    name: str
    shape: str
    used_by: str


@dataclass(frozen=True)
class ConfigField:
    """A field of a TRL config dataclass that the SDK reads or sets."""

    owner: str  # "GRPOConfig", "SFTConfig"
    name: str
    used_by: str


@dataclass(frozen=True)
class SourceMarker:
    """A behaviour we rely on, checked by a piece of text in the method's (or module's) source.

    ``where`` is ``"Owner.method"`` or ``"module:trl.some.module"``; the check passes when any of ``texts`` occurs.
    """

    where: str
    texts: tuple[str, ...]
    means: str
    used_by: str


_T = "MRTPOTrainer"

#: Every TRL internal the SDK depends on (mrtpo_sdk/trainer, evaluation, prompting, replay, policy, cli).
SEAM: tuple[Method | Attribute | ConfigField | SourceMarker, ...] = (
    # ---- private methods we override (super() calls with these exact parameters)
    Method(
        "GRPOTrainer", "_generate_and_score_completions", ("inputs",),
        returns='dict with "completion_ids" (B, T) and "completion_mask" (B, T) tensors and "advantages" (B,)',
        used_by=f"{_T}._generate_and_score_completions (replaces output['advantages'] by GRPO/GDPO (B,) or "
        "MRTPO (B, T) advantages)",
    ),
    Method(
        "GRPOTrainer", "_calculate_rewards", ("inputs", "prompts", "completions", "completion_ids_list"),
        returns="float tensor (N_global, K): one column per reward function, NaN where a function returned None, "
        "gathered across processes",
        used_by=f"{_T}._calculate_rewards (keeps the rewards for the advantages and times scoring)",
    ),
    Method(
        "GRPOTrainer", "_generate", ("prompts",),
        returns="a tuple starting (prompt_ids, completion_ids, ...), passed through unchanged",
        used_by=f"{_T}._generate (times generation)",
    ),
    Method(
        "GRPOTrainer", "training_step", ("model", "inputs", "num_items_in_batch"),
        returns="the loss tensor, passed through unchanged",
        used_by=f"{_T}.training_step (times the update)",
    ),
    Method(
        "GRPOTrainer", "_save_checkpoint", ("model", "trial"),
        returns="None (writes OUTPUT_DIR/checkpoint-<step>/; TRL writes its model card first)",
        used_by=f"{_T}._save_checkpoint (no progress bars while saving, no model card in the run folder)",
    ),
    Method(
        "GRPOTrainer", "create_model_card", ("model_name", "dataset_name", "tags"),
        returns="None (writes OUTPUT_DIR/README.md on the main process)",
        used_by=f"{_T}.create_model_card and {_T}._model_card_text (TRL's card text, its base model made true)",
    ),
    # ---- private methods we call
    Method(
        "GRPOTrainer", "_tokenize_prompts", ("prompts",),
        returns="a tuple whose [0] is one list of token ids per prompt (chat template with add_generation_prompt)",
        used_by=f"{_T}.evaluate and {_T}._mrtpo_advantages (prompt ids of evaluation and of the replay)",
    ),
    # ---- public methods called with keyword arguments
    Method(
        "GRPOTrainer", "__init__",
        ("model", "reward_funcs", "args", "train_dataset", "eval_dataset", "processing_class", "callbacks",
         "optimizers", "quantization_config", "peft_config"),
        returns="-", used_by=f"{_T}.__init__ (super().__init__ with these keywords)", exact=False,
    ),
    Method(
        "TrlParser", "__init__", ("dataclass_types",), returns="-",
        used_by="mrtpo_sdk.trainer.arguments.train_parser (TrainParser(TrlParser), prog/description/allow_abbrev as argparse)",
        exact=False,
    ),
    Method(
        "TrlParser", "parse_args_and_config", ("args",), returns="a tuple of the dataclass instances, in order",
        used_by="mrtpo_sdk.trainer.cli (script_args, config = parser.parse_args_and_config(flags)) through "
        "arguments.train_parser's TrainParser.parse_args_and_config (--config=FILE spelled --config FILE)",
        exact=False,
    ),
    Method(
        "TrlParser", "set_defaults_with_config", ("**kwargs",),
        returns="a list of '--key', 'value' strings, one pair per key that is no argument of the parser",
        used_by="mrtpo_sdk.trainer.arguments.train_parser (TrainParser.set_defaults_with_config checks each --config "
        "value against its field's type and choices, refuses a config key, and records the file's keys, which its "
        "error() and explain_parse_error name)",
    ),
    # ---- instance attributes set by GRPOTrainer.__init__
    Attribute("GRPOTrainer", "_metrics", 'dict {"train": defaultdict(list), "eval": defaultdict(list)}; log() '
              "averages each list (NaN skipped) and clears it",
              f"{_T} (unscorable_completions, time/*, mrtpo/*) and trainer.credit_logging (concentration/*)"),
    Attribute("GRPOTrainer", "_tokenizer", "the tokenizer (processing_class, or processing_class.tokenizer)",
              f"{_T}._mrtpo_advantages (pad_token_id for the replay)"),
    Attribute("GRPOTrainer", "reward_weights", "float tensor (K,) used by TRL's `reward` statistic",
              f"{_T}.__init__ (set to the task's weights)"),
    Attribute("GRPOTrainer", "num_generations", "int, completions per prompt in training", f"{_T} (group size)"),
    Attribute("GRPOTrainer", "num_generations_eval", "int, completions per prompt in TRL's evaluation",
              f"{_T}._generate_and_score_completions (group size in eval mode)"),
    Attribute("GRPOTrainer", "temperature", "float", f"{_T} (evaluation, replay) and trainer.credit_logging"),
    Attribute("GRPOTrainer", "top_p", "float", f"{_T}.evaluate"),
    Attribute("GRPOTrainer", "max_completion_length", "int", f"{_T}.evaluate"),
    # ---- config fields
    *(
        ConfigField("GRPOConfig", name, used_by)
        for name, used_by in (
            ("num_generations", "prompts_per_step, group size"),
            ("num_generations_eval", "MRTPOConfig.__post_init__ (None -> 1), evaluate"),
            ("generation_batch_size", "prompts_per_step / require_enough_examples (computed by __post_init__)"),
            ("steps_per_generation", "require_enough_examples (message)"),
            ("reward_weights", "reward_weights()"),
            ("multi_objective_aggregation", "MRTPOConfig (redeclared; follows algo)"),
            ("scale_rewards", "MRTPOConfig.__post_init__ (only 'group')"),
            ("temperature", "evaluation, replay"),
            ("top_p", "evaluation"),
            ("max_completion_length", "evaluation, cli defaults"),
        )
    ),
    *(
        ConfigField("SFTConfig", name, "mrtpo_sdk.policy.default.warm_start")
        for name in ("max_length", "completion_only_loss", "packing", "dataset_num_proc")
    ),
    # ---- behaviour, by source text
    SourceMarker(
        "GRPOTrainer._generate_and_score_completions",
        ("self._generate(prompts)",),
        "calls self._generate(prompts)",
        f"{_T}._generate (generation timing)",
    ),
    SourceMarker(
        "GRPOTrainer._generate_and_score_completions",
        ("self._calculate_rewards(inputs, prompts, completions, completion_ids_list)",),
        "calls self._calculate_rewards(inputs, prompts, completions, completion_ids_list)",
        f"{_T}._calculate_rewards (without it _pending['rewards'] is never set)",
    ),
    SourceMarker(
        "GRPOTrainer._prepare_inputs",
        ("self._generate_and_score_completions(",),
        "calls self._generate_and_score_completions (inside training_step)",
        f"{_T}.training_step (update time = step time - generation/scoring/replay time)",
    ),
    SourceMarker(
        "GRPOTrainer._compute_loss",
        ("advantages.dim() == 1",),
        "accepts (B, T) advantages (unsqueezes only (B,))",
        f"{_T} with algo='mrtpo' (per-token advantages)",
    ),
    SourceMarker(
        "GRPOTrainer.log",
        ("self._metrics[mode]",),
        "merges self._metrics[mode] into the logs",
        f"{_T} metrics (metrics.jsonl rows)",
    ),
    SourceMarker(
        "GRPOTrainer._calculate_rewards",
        ("torch.nan",),
        "turns a reward function's None into NaN",
        f"{_T} (a verifier's None = not applicable)",
    ),
    SourceMarker(
        "TrlParser.parse_args_and_config",
        ('"--config" in args',),
        "reads --config FILE as two arguments and takes them out before parsing",
        "mrtpo_sdk.trainer.arguments.train_parser (TrainParser respells --config=FILE; --config is listed in --help)",
    ),
    SourceMarker(
        "TrlParser.parse_args_and_config",
        ("self.set_defaults_with_config(**config)",),
        "sets the --config file's values as the parser's defaults with set_defaults_with_config",
        "mrtpo_sdk.trainer.arguments.train_parser (a --config value's error names the file and the key)",
    ),
    SourceMarker(
        "module:trl.scripts.utils",
        ("Unknown arguments from config file",),
        "TrlParser's message for unknown --config keys",
        "mrtpo_sdk.trainer.arguments.explain_parse_error",
    ),
)


def trl_version() -> str:
    import trl

    return str(getattr(trl, "__version__", "unknown"))


def _resolve(owner: str):
    import trl

    return getattr(trl, owner, None)


def _format(params) -> str:
    return ", ".join(params)


def _signature_params(func) -> list[str]:
    out = []
    for p in inspect.signature(func).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            out.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            out.append(f"**{p.name}")
        else:
            out.append(p.name)
    if out and out[0] == "self":
        out = out[1:]
    return out


def _source(where: str) -> str | None:
    """Source text of ``"Owner.method"`` or ``"module:dotted.name"``; None when it cannot be found."""
    import importlib

    try:
        if where.startswith("module:"):
            return inspect.getsource(importlib.import_module(where[len("module:"):]))
        owner, name = where.split(".", 1)
        cls = _resolve(owner)
        func = getattr(cls, name, None) if cls is not None else None
        if func is None:
            return None
        return inspect.getsource(inspect.unwrap(func))
    except (ImportError, OSError, TypeError):
        return None


def _check_method(item: Method, prefix: str) -> str | None:
    cls = _resolve(item.owner)
    label = f"{item.owner}.{item.name}({_format(item.params)})"
    if cls is None:
        return f"{prefix}: {item.owner} is gone from trl (used by {item.used_by})"
    func = getattr(cls, item.name, None)
    if func is None:
        return f"{prefix}: {label} is gone (used by {item.used_by})"
    try:
        now = _signature_params(func)
    except (TypeError, ValueError):
        return f"{prefix}: {label}: signature cannot be read (used by {item.used_by})"
    if item.exact:
        if now != list(item.params):
            return f"{prefix}: {label} changed: parameters are now ({_format(now)}) (used by {item.used_by})"
        return None
    if any(p.startswith("**") for p in now):
        return None
    missing = [p for p in item.params if p not in now]
    if missing:
        return (
            f"{prefix}: {label} changed: no longer accepts {_format(missing)}; parameters are now ({_format(now)}) "
            f"(used by {item.used_by})"
        )
    return None


def _check_attribute(item: Attribute, prefix: str) -> str | None:
    source = _source(f"{item.owner}.__init__")
    if source is None:
        return f"{prefix}: {item.owner}.__init__ source cannot be read to find {item.owner}.{item.name}"
    if f"self.{item.name} =" not in source and f"self.{item.name}: " not in source:
        return (
            f"{prefix}: {item.owner}.{item.name} is no longer set in {item.owner}.__init__ "
            f"(expected: {item.shape}; used by {item.used_by})"
        )
    return None


def _check_field(item: ConfigField, prefix: str) -> str | None:
    cls = _resolve(item.owner)
    if cls is None:
        return f"{prefix}: {item.owner} is gone from trl (used by {item.used_by})"
    if item.name not in {f.name for f in dataclasses.fields(cls)}:
        return f"{prefix}: {item.owner}.{item.name} is gone (used by {item.used_by})"
    return None


def _check_marker(item: SourceMarker, prefix: str) -> str | None:
    source = _source(item.where)
    name = item.where[len("module:"):] if item.where.startswith("module:") else item.where
    if source is None:
        return f"{prefix}: {name} is gone or its source cannot be read (expected: {item.means}; used by {item.used_by})"
    if not any(text in source for text in item.texts):
        return f"{prefix}: {name} changed: it no longer {item.means} (used by {item.used_by})"
    return None


def check_trl_seam(seam=SEAM) -> list[str]:
    """Compare :data:`SEAM` with the installed TRL.

    Returns:
        ``list[str]``: one line per mismatch, each starting ``trl <version>: `` and naming the method, attribute or
        field and what uses it; empty when the installed TRL matches.
    """
    try:
        import trl  # noqa: F401
    except ImportError as exc:
        return [f"trl is not installed ({exc})"]
    prefix = f"trl {trl_version()}"
    for owner in sorted({item.owner for item in seam if hasattr(item, "owner")}):
        try:
            _resolve(owner)
        except Exception as exc:  # noqa: BLE001 - TRL's lazy module wraps a failed import in RuntimeError
            first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            return [f"{prefix}: trl.{owner} cannot be imported ({type(exc).__name__}: {first})"]
    checks = {Method: _check_method, Attribute: _check_attribute, ConfigField: _check_field,
              SourceMarker: _check_marker}
    problems = []
    for item in seam:
        problem = checks[type(item)](item, prefix)
        if problem:
            problems.append(problem)
    return problems


if __name__ == "__main__":  # python -m mrtpo_sdk.trainer.trl_seam
    import sys

    lines = check_trl_seam()
    print("\n".join(lines) if lines else f"trl {trl_version()}: the seam matches ({len(SEAM)} items)")
    sys.exit(1 if lines else 0)
