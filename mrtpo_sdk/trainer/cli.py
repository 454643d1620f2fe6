"""``mrtpo-sdk train``: its parser (TRL's, over :class:`TrainScriptArguments`, ``MRTPOConfig`` and TRL's
``ModelConfig``) and the run (dispatched from :mod:`mrtpo_sdk.cli`).

``mrtpo-sdk train TASK_FILE[@name] [--algo mrtpo|gdpo|grpo] [--model ID_OR_PATH] [--data PATH] [-T KEY=VALUE ...]
[--config YAML] [--<any MRTPOConfig / GRPOConfig field> VALUE]``

This is the command-line layer of the trainer: it sits above the rest of ``trainer/`` (which never imports it) and
runs the authoring tools' preflight checks before training.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MRTPOError
from ..policy.gguf import MODEL_NAMES_HELP
from ..policy.presets import EMBEDDED_POLICY_DEFAULTS, MODEL_DEFAULTS

__all__ = ["TrainScriptArguments", "print_summary", "run_training", "train_command", "train_flag_value",
           "train_task_options"]


@dataclass
class TrainScriptArguments:
    """Arguments of ``mrtpo-sdk train`` that are not trainer settings."""

    model: str | None = field(
        default=None,
        metadata={
            "help": "The policy: a run folder of `mrtpo-sdk train`, a local model folder, a .gguf file (or a "
            "folder holding one; dequantized once into the cache), " + MODEL_NAMES_HELP + ", or a Hugging Face "
            "model id. Default: the embedded bootstrap policy (a small model built and warm-started on this task's "
            "references, cached; for trying the SDK offline)."
        },
    )
    data: str | None = field(
        default=None, metadata={
            "help": "The task's dataset, passed to its examples function as examples(split, data), e.g. a "
            "Spider/BIRD folder for tasks/sql.py. Default: the task's bundled data."
        }
    )
    task_option: list[str] | None = field(
        default=None, metadata={
            "aliases": ["-T"],
            "metavar": "KEY=VALUE",
            "help": "Set one of the task's options, e.g. -T semantics=official (repeatable; the task's options, "
            "with their types and defaults, are listed at the end of `mrtpo-sdk train TASK --help`). In a --config "
            "file: task_option: {semantics: official}. Recorded in run.json (task_options).",
        }
    )
    policy_preset: str = field(
        default="small",
        metadata={"help": "Size of the embedded policy: 'small' (default) or 'tiny' (seconds to build; smoke tests)."},
    )
    warm_start_steps: int = field(
        default=0,
        metadata={
            "help": "With --model: supervised steps on the task's reference completions before RL (TRL's "
            "SFTTrainer, completion-only loss, float32), cached by base weights, task data, steps, learning rate and "
            "seed, so every algorithm of a seed starts from the same policy. 0 (default): none. The embedded policy "
            "has its own warm start (the task's Task(warm_start_steps=N))."
        },
    )
    warm_start_learning_rate: float = field(
        default=1e-5, metadata={"help": "Learning rate of --warm_start_steps (cosine schedule, 5%% warm-up)."}
    )
    rebuild_policy: bool = field(
        default=False, metadata={"help": "Rebuild the embedded policy instead of loading it from the cache."}
    )

    def __post_init__(self) -> None:
        """Raises ``ValueError`` (the CLI's one ``error:`` line) for a negative ``--warm_start_steps``."""
        if self.warm_start_steps < 0:
            raise ValueError(f"--warm_start_steps must be >= 0 (0: no warm start), got {self.warm_start_steps}")


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def given_settings(flags: list[str]) -> dict[str, Any]:
    """The train settings the user gave, by name: the keys of the ``--config`` file, then the command line's flags
    over them (``--name V`` / ``--name=V``; the last one wins; a flag with several values gives a list, a flag
    without one ``True``). Values as given: strings from the command line, YAML's types from the file. ``flags``
    holds no TASK_FILE.

    This is what the presets need before TRL's parser runs (which policy, which algo, which settings the user set
    and the presets must leave alone); the values that train uses are the parser's."""
    return {**config_file_values(flags), **_flag_values(flags)}


def _flag_values(flags: list[str]) -> dict[str, Any]:
    """The command line's ``--name value`` pairs (see :func:`given_settings`)."""
    values: dict[str, Any] = {}
    i = 0
    while i < len(flags):
        arg = flags[i]
        i += 1
        if not arg.startswith("--"):
            continue
        name, eq, value = arg[2:].partition("=")
        if eq:
            values[name] = value
            continue
        given = []
        while i < len(flags) and not flags[i].startswith("--"):
            given.append(flags[i])
            i += 1
        values[name] = given[0] if len(given) == 1 else (given or True)
    return values


def train_flag_value(flags: list[str], name: str) -> str | None:
    """The value of ``--name V`` or ``--name=V`` on the command line (the last one wins; the first of several
    values), else ``None``; the ``--config`` file is not read (:func:`train_setting` reads both)."""
    value = _flag_values(flags).get(name)
    if isinstance(value, list):
        value = value[0]
    return None if value is None else ("true" if value is True else str(value))


_TASK_OPTION_FLAGS = ("-T", "--task_option")


def _split_task_options(rest: list[str]) -> tuple[list[str], list[str]]:
    """``(rest without its -T options, their KEY=VALUE items)``: ``-T K=V``, ``-TK=V``, ``--task_option K=V`` and
    ``--task_option=K=V``.

    Raises:
        MRTPOError: ``-T`` is the last argument (no KEY=VALUE after it).
    """
    out: list[str] = []
    items: list[str] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg in _TASK_OPTION_FLAGS:
            if i + 1 >= len(rest):
                raise MRTPOError(f"{arg} needs KEY=VALUE, e.g. {arg} semantics=official")
            items.append(rest[i + 1])
            i += 2
            continue
        if arg.startswith("--task_option="):
            items.append(arg.partition("=")[2])
        elif arg.startswith("-T") and not arg.startswith("--"):
            items.append(arg[2:])
        else:
            out.append(arg)
        i += 1
    return out, items


def _config_task_options(file_values: dict[str, Any]) -> dict[str, Any]:
    """The ``task_option`` key of a ``--config`` file: a mapping (``{semantics: official}``) or a list of
    ``KEY=VALUE`` items.

    Raises:
        MRTPOError: it is neither.
    """
    from ..task_options import parse_assignments

    given = file_values.get("task_option")
    if given is None:
        return {}
    if isinstance(given, dict):
        return {str(k): v for k, v in given.items()}
    if isinstance(given, list):
        return parse_assignments([str(v) for v in given], flag="task_option:")
    raise MRTPOError(
        f"--config: task_option is a mapping (task_option: {{semantics: official}}) or a list of KEY=VALUE items, "
        f"got {given!r}"
    )


def train_task_options(flags: list[str]) -> dict[str, Any]:
    """The task options these train flags set: the ``task_option`` key of their ``--config`` file, then the ``-T``
    flags (a flag wins), e.g. for ``compare``, which loads the task its runs train on.

    Raises:
        MRTPOError: a ``-T`` item that is not KEY=VALUE, one option given twice with different values.
    """
    from ..task_options import parse_assignments

    _, items = _split_task_options(list(flags))
    return {**_config_task_options(config_file_values(list(flags))), **parse_assignments(items)}


def _print_task_options(task: Any, spec: str) -> None:
    """The end of ``train TASK --help``: the task's options, their types, defaults and help."""
    from ..task_options import describe_options

    if not task.options:
        print(f"\ntask options: {spec} declares none")
        return
    print(f"\ntask options of {spec} (task {task.name!r}; set with -T KEY=VALUE):")
    for line in describe_options(task.options):
        print(line)


def config_file_values(flags: list[str]) -> dict[str, Any]:
    """The keys of ``--config FILE.yaml`` (empty when absent or unreadable: TRL's parser then reports the problem)."""
    path = _flag_values(flags).get("config")
    if not isinstance(path, str) or not path:
        return {}
    try:
        import yaml

        values = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - the parser below gives the one-line error
        return {}
    return values if isinstance(values, dict) else {}


def train_setting(flags: list[str], name: str) -> Any:
    """A train setting as these train flags give it: ``--name V``, else the key ``name`` of their ``--config`` file,
    else ``None`` (e.g. ``compare`` asking which ``--data``/``--model``/``--policy_preset`` a run will use)."""
    return given_settings(flags).get(name)


def _task_presets(task: Any) -> dict[str, Any]:
    """The training defaults a task file sets (``Task(max_completion_length=N)``): they replace the presets'; a flag
    or a ``--config`` key still wins."""
    return {} if task.max_completion_length is None else {"max_completion_length": task.max_completion_length}


def _task_and_flags(rest: list[str]) -> tuple[str | None, list[str], bool]:
    """``(TASK_FILE or None, the other arguments, whether -h/--help was given)``. The task is the first argument
    that is neither a flag nor a flag's value (``mrtpo-sdk train TASK [flags]``, or ``train --algo gdpo TASK``)."""
    wants_help = any(a in ("-h", "--help") for a in rest)
    rest = [a for a in rest if a not in ("-h", "--help")]
    words = [i for i, a in enumerate(rest) if not a.startswith("-")]
    free = [i for i in words if i == 0 or not (rest[i - 1].startswith("--") and "=" not in rest[i - 1])]
    at = (free or [i for i in words if not rest[i].replace(".", "", 1).isdigit()] or [None])[0]  # 3 is a value
    if at is None:
        return None, rest, wants_help
    return rest[at], rest[:at] + rest[at + 1 :], wants_help


def train_command(rest: list[str]) -> int:
    """``mrtpo-sdk train``: load the task, build or load the policy, train, print where the outputs are.

    TRL's parser reads the flags and the ``--config`` file over the presets (a flag wins over a ``--config`` key);
    the presets depend on what the user gave (:func:`given_settings`): ``--model`` (the embedded policy's or a
    model's), the task (its own defaults, a held-out evaluation), ``--algo`` (the output folder). A flag's dashed
    spelling (``--max-steps``) acts as its snake_case name (``--max_steps``), with a deprecation note."""
    from . import ALGORITHMS, MRTPOConfig  # heavy imports only for train

    hf_parser = _train_parser(MRTPOConfig)
    from ..task_options import parse_assignments

    rest, option_items = _split_task_options(_snake_case_flags(rest, hf_parser))  # -T K=V: checked by the task
    task_file, flags, wants_help = _task_and_flags(rest)
    given = given_settings(flags)
    task_options = {**_config_task_options(config_file_values(flags)), **parse_assignments(option_items)}
    model = None if given.get("model") is None else str(given["model"])
    alias = given.get("model_name_or_path")  # TRL's ModelConfig name of --model
    if alias is not None:
        if model is not None and str(alias) != model:
            return _error(f"--model {model} and --model_name_or_path {alias} disagree; give one of them")
        model = str(alias)
    algo = str(given.get("algo") or "mrtpo")
    if algo not in ALGORITHMS:
        return _error(f"--algo must be one of {', '.join(ALGORITHMS)}, got {algo!r}")

    preset = dict(EMBEDDED_POLICY_DEFAULTS if model is None else MODEL_DEFAULTS)
    if model is not None:
        from ..policy.presets import model_machine_defaults

        preset.update(model_machine_defaults())  # CPU: bf16 autocast where the CPU has it (TRL's default fails there)
    if wants_help or not task_file:
        task = None
        if wants_help and task_file:  # `train TASK --help`: the defaults this task trains with
            from ..loader import load_task

            try:
                task = load_task(task_file, options=task_options)
            except MRTPOError as exc:
                task = None
                print(f"note: defaults shown without the task's own ({exc})", file=sys.stderr, flush=True)
            else:
                preset.update(_task_presets(task))
                if task.max_completion_length is not None:
                    action = hf_parser._option_string_actions["--max_completion_length"]
                    action.help = f"{action.help or ''} The task file {task_file} sets it.".strip()
        hf_parser.set_defaults(**preset)
        if not wants_help:
            return _error("mrtpo-sdk train needs a task file, e.g. `mrtpo-sdk train tasks/sql.py`")
        hf_parser.print_help()
        if wants_help and task_file and task is not None:
            _print_task_options(task, task_file)
        return 0

    from ..loader import load_task

    task = load_task(task_file, options=task_options)
    preset.setdefault("output_dir", str(Path("runs") / f"{task.name}-{algo}"))
    preset.update(_task_presets(task))  # the task's answers need this budget; a flag or YAML key still wins
    if task.eval_split is not None:
        data = given.get("data")
        try:
            task.load_examples(task.eval_split, data)
        except MRTPOError as exc:  # e.g. a task file whose loader has no dev data: train, but say why no eval
            try:  # when the training data cannot load either, its error line (run_training) is the one message
                task.load_examples("train", data)
            except MRTPOError:
                pass
            else:
                print(f"note: no held-out evaluation ({exc}); set Task(eval_split=None) to silence this", flush=True)
        else:
            # Held-out evaluation before training, every quarter of the run and after the last step
            # (TrainingArguments reads eval_steps < 1 as a fraction of max_steps); --eval_strategy no turns it off,
            # the one at step 0 too (unless --eval_on_start says otherwise).
            preset.update(eval_strategy="steps", eval_steps=0.25,
                          eval_on_start=str(given.get("eval_strategy", "steps")) != "no")
    if given.get("eval_steps") is not None and given.get("eval_strategy") is None:
        preset["eval_strategy"] = "steps"  # --eval_steps alone would otherwise be ignored (TRL's default is "no")
    hf_parser.set_defaults(**preset)
    import yaml

    try:
        script_args, config, model_args = hf_parser.parse_args_and_config(flags)
    except yaml.YAMLError as exc:
        return _error(f"--config: not valid YAML ({' '.join(str(exc).split())})")
    except FileNotFoundError as exc:
        return _error(f"--config: {exc.strerror}: {exc.filename}")
    except ValueError as exc:
        return _error(_explain_parse_error(str(exc), hf_parser))
    script_args.model = model
    script_args.task_option = [f"{k}={v}" for k, v in task_options.items()] or None  # as given: flags and --config
    if preset.get("use_cpu") and not preset.get("bf16") and given.get("bf16") is None:
        print("note: this CPU has no bf16 instructions (AVX512-BF16 or AMX), so --model trains in float32 "
              "(bf16 autocast would be emulated, slower)", flush=True)
    _require_extras(config)
    peft_config = _apply_model_config(model_args, config, given, embedded=model is None)
    from_task = {}  # the task's settings that took effect: no flag or --config key set them
    if task.max_completion_length is not None and given.get("max_completion_length") is None:
        from_task["max_completion_length"] = config.max_completion_length
    return run_training(task, script_args, config, task_file=task_file, peft_config=peft_config,
                        model_args=model_args, from_task=from_task)


def _snake_case_flags(rest: list[str], parser) -> list[str]:
    """``rest`` with each dashed flag (``--max-steps``, which HfArgumentParser also takes) spelled as its
    snake_case name, a one-line deprecation note on stderr for each: one flag style for every subcommand."""
    from .._argparse import canonical_spelling, spelling_note

    known = {o for o in parser._option_string_actions if o.startswith("--")}
    out = []
    for arg in rest:
        snake = canonical_spelling(arg, known)
        if snake is not None:
            spelling_note(arg.partition("=")[0], snake.partition("=")[0])
            arg = snake
        out.append(arg)
    return out


def _require_extras(config) -> None:
    """A setting whose optional package is missing: one line naming the extra to install (not TRL's traceback).

    Raises:
        MRTPOError: ``--use_vllm`` without vllm, ``--report_to wandb`` without wandb, ``--deepspeed`` without it.
    """
    import importlib.util

    report_to = config.report_to if isinstance(config.report_to, list) else [config.report_to]
    needs = [
        (bool(getattr(config, "use_vllm", False)), "vllm", "--use_vllm", "vllm"),
        ("wandb" in report_to or "all" in report_to, "wandb", "--report_to wandb", "wandb"),
        (bool(getattr(config, "deepspeed", None)), "deepspeed", "--deepspeed", "deepspeed"),
    ]
    for wanted, module, flag, extra in needs:
        if wanted and importlib.util.find_spec(module) is None:
            raise MRTPOError(f"{flag} needs the {module} package: pip install 'mrtpo-sdk[{extra}]'")


#: TRL ModelConfig fields that load a model from --model (they go into GRPOConfig.model_init_kwargs).
_MODEL_LOADING = ("dtype", "attn_implementation", "model_revision", "load_in_4bit", "load_in_8bit")


def _apply_model_config(model_args, config, given: dict[str, Any], *, embedded: bool):
    """TRL's ``ModelConfig`` flags (``--use_peft``, ``--lora_*``, ``--dtype``, ``--attn_implementation``,
    ``--model_revision``, ``--load_in_4bit/8bit``): returns the ``peft_config`` (or ``None``) and puts the loading
    options the user gave into ``config.model_init_kwargs``, as TRL's own scripts do.

    Raises:
        MRTPOError: a loading option with the embedded policy (it is built here, not loaded), a quantization or PEFT
            option whose package is missing (the line names the extra to install).
    """
    loading = [name for name in _MODEL_LOADING if given.get(name) is not None]
    if embedded and loading:
        raise MRTPOError(
            f"--{loading[0]} loads a model given by --model; the embedded policy is built here in float32 (pass "
            f"--model to load one, or drop --{loading[0]})"
        )
    if not embedded and loading:
        import torch

        kwargs = dict(config.model_init_kwargs or {})
        if "dtype" in loading:
            kwargs["dtype"] = model_args.dtype if model_args.dtype in ("auto", None) else getattr(torch, model_args.dtype)
        if "attn_implementation" in loading:
            kwargs["attn_implementation"] = model_args.attn_implementation
        if "model_revision" in loading:
            kwargs["revision"] = model_args.model_revision
        if model_args.load_in_4bit or model_args.load_in_8bit:
            try:
                import bitsandbytes  # noqa: F401
            except ImportError:
                raise MRTPOError(
                    "--load_in_4bit/--load_in_8bit need bitsandbytes and a CUDA GPU: pip install 'mrtpo-sdk[quantization]'"
                ) from None
            from trl import get_quantization_config

            kwargs["quantization_config"] = get_quantization_config(model_args)
        config.model_init_kwargs = kwargs
    if not model_args.use_peft:
        lora = [f for f in ("lora_r", "lora_alpha", "lora_dropout", "lora_target_modules") if given.get(f)]
        if lora:
            raise MRTPOError(f"--{lora[0]} configures LoRA adapters; add --use_peft true to train them")
        return None
    try:
        import peft  # noqa: F401
    except ImportError:
        raise MRTPOError("--use_peft needs the peft package: pip install 'mrtpo-sdk[peft]'") from None
    from trl import get_peft_config

    return get_peft_config(model_args)


def _train_parser(config_class):
    """TRL's parser over (TrainScriptArguments, MRTPOConfig); a bad flag value is one ``error:`` line, not the
    1,000-line usage, and flags must be spelled out (no silent abbreviations)."""
    from trl import TrlParser

    class TrainParser(TrlParser):
        def error(self, message: str):  # argparse: invalid value, missing argument, ...
            raise MRTPOError(f"{message} (all options: mrtpo-sdk train TASK --help)")

    from trl import ModelConfig

    parser = TrainParser(
        (TrainScriptArguments, config_class, ModelConfig),
        prog="mrtpo-sdk train TASK_FILE[@name]",
        description="Train a policy on a task with MRTPO (or --algo gdpo|grpo). Every MRTPOConfig / TRL GRPOConfig "
        "field is a flag. --config FILE.yaml reads option values from a YAML file; flags given on the command "
        "line override it.",
        allow_abbrev=False,
    )
    # One KEY=VALUE per -T, as the other commands take it (train_command takes them out before this parser runs)
    parser._option_string_actions["--task_option"].nargs = None
    return parser


def _explain_parse_error(message: str, parser) -> str:
    """Turn HfArgumentParser's "arguments are not used" into "unknown option --x (did you mean --y?)"."""
    import difflib
    import re

    if "not used by the HfArgumentParser" not in message and "Unknown arguments from config file" not in message:
        return message
    known = [o for o in parser._option_string_actions if o.startswith("--")]
    unknown = [u for u in re.findall(r"'(--[^']+)'", message)]
    if "config file" not in message and not unknown:  # no option among them: words outside any flag
        words = re.findall(r"'([^']*)'", message)
        named = ", ".join(repr(w) for w in words) or message
        return (
            f"unexpected argument{'s' if len(words) > 1 else ''} {named} (train takes one TASK_FILE; flags start "
            f"with --, e.g. --max_steps 10) (all options: mrtpo-sdk train TASK --help)"
        )
    parts = []
    for u in unknown:
        guess = difflib.get_close_matches(u.split("=")[0], known, n=1)
        parts.append(f"{u}" + (f" (did you mean {guess[0]}?)" if guess else ""))
    source = "key in --config" if "config file" in message else "option"
    return f"unknown {source}: {', '.join(parts) or message} (all options: mrtpo-sdk train TASK --help)"


def run_training(
    task, script_args: TrainScriptArguments, config, task_file: str | None = None, peft_config: Any = None,
    model_args: Any = None, from_task: dict[str, Any] | None = None,
) -> int:
    """Train ``task`` and print where the outputs are. ``from_task``: the settings the task file chose (no flag or
    ``--config`` key did), named in the banner, e.g. ``{"max_completion_length": 192}``.

    The run folder (``run.json``, the logs, the policy and its card) is the trainer's
    (:class:`~mrtpo_sdk.trainer.MRTPOTrainer`); this builds or loads the policy, checks what can be checked before
    that, and prints the banner and the summary."""
    from ..policy.pretrained import quiet_loading
    from . import MRTPOTrainer
    from .callbacks import RichProgressCallback
    from .runs import check_resume_matches, prepare_output_dir, resolve_checkpoint
    from .trainer import require_enough_examples, reward_weights

    examples = task.load_examples("train", script_args.data)
    # Before any model is built: a run that could not take a step, a folder holding another run, a bad checkpoint,
    # and the contract checks lint and check make (a verifier that changes its example, a constant reward).
    require_enough_examples(len(examples), config, what=f"task {task.name!r}")
    reward_weights(task, config)  # one weight per verifier: the config checks that need only the task, up front
    from ..authoring.verifier_checks import preflight
    from ..lint.preflight import lint_warnings

    for line in preflight(task, examples, task_file=task_file) + lint_warnings(task, examples, task_file):
        print(f"warning: {line}", flush=True)
    from ..authoring.check import check_prompts

    check_prompts(task, examples)  # every prompt training builds (P_0, and P_\k of an in-prompt task), up front
    if script_args.warm_start_steps and script_args.model is None:
        raise MRTPOError(
            "--warm_start_steps warm-starts a --model; the embedded policy has its own warm start (set "
            "Task(warm_start_steps=N) in the task file, or pass --model)"
        )
    checked_model = None
    if script_args.model is not None:  # a --model that is not there: its one line before any output-folder check
        from ..policy.pretrained import check_model

        checked_model = check_model(script_args.model)  # a run folder -> its saved policy/
    out = Path(config.output_dir)
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    checkpoint = resolve_checkpoint(config.resume_from_checkpoint, out, log=log)
    if checkpoint is not None:  # the trainer checks it too; here before the policy is built
        check_resume_matches(out, checkpoint, task=task.name, algo=config.algo, model_args=_model_args(model_args),
                             task_options=task.option_values)
    else:
        prepare_output_dir(out, overwrite=config.overwrite_output_dir, log=log)

    model, tokenizer, policy_label, initial_policy = _policy(task, examples, script_args, config, checked_model)
    print(f"policy: {policy_label}", flush=True)
    print(
        f"task: {task.name} ({len(examples)} training examples, rewards: {', '.join(task.verifier_names)}); "
        f"algo: {config.algo}; steps: {config.max_steps}; output: {config.output_dir}",
        flush=True,
    )
    if from_task:
        print("; ".join(f"{k} {v} (from the task)" for k, v in from_task.items()), flush=True)
    run_info = {
        "task_file": str(task_file) if task_file else None,
        "policy": policy_label,
        "initial_policy": initial_policy,
        "model_folder": checked_model,
        "warm_start": _warm_start_record(model) if script_args.warm_start_steps else None,
        "script_args": {k: _jsonable(v) for k, v in vars(script_args).items()},
        "model_args": _model_args(model_args),
    }
    with quiet_loading():  # TRL loads --model (and a reference model) here
        trainer = MRTPOTrainer(
            task,
            model,
            config,
            examples=examples,
            data=script_args.data,
            processing_class=tokenizer,
            callbacks=[RichProgressCallback(task.verifier_names)],
            peft_config=peft_config,
            run_info=run_info,
        )
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    # Our progress bar shows the rewards and metrics.jsonl has every log: HF's printer and tqdm bar (which prints
    # each step's 40-key dict with --model) would repeat them.
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    trainer.train(resume_from_checkpoint=checkpoint or False, check_output_dir=False)
    if trainer.accelerator.is_main_process:
        print_summary(trainer, task_file=task_file)
    return 0


def _policy(task, examples, script_args: TrainScriptArguments, config, checked_model: str | None):
    """The initial policy: ``(model, tokenizer or None, label, initial_policy)``, the embedded bootstrap policy or
    ``--model`` (an adapter folder merged, a GGUF file dequantized, warm-started with ``--warm_start_steps``)."""
    from ..policy.pretrained import quiet_loading

    log = lambda msg: print(msg, flush=True)  # noqa: E731
    if checked_model is None:
        from ..policy.for_task import task_policy

        with quiet_loading():  # the cached embedded policy: no "Loading weights" bar
            model, tokenizer, path = task_policy(task, examples, seed=config.seed, preset=script_args.policy_preset,
                                                 rebuild=script_args.rebuild_policy, log=log)
        label = (f"embedded bootstrap policy ({sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters) "
                 f"from {path}")
        return model, tokenizer, label, str(path)
    model: Any = checked_model
    label = str(model)
    from ..policy.pretrained import is_adapter_folder, merged_adapter_folder

    if is_adapter_folder(model):  # a LoRA run saved without its merged policy: merged once into the cache
        with quiet_loading():
            model = str(merged_adapter_folder(model, log=log))
        label = f"{checked_model} merged into its base model (cached in {model})"
    from ..policy.gguf import describe_origin, model_origin

    origin = model_origin(model)
    if origin is not None:  # a GGUF --model: its dequantized folder in the cache
        label = f"{describe_origin(origin)} (cached in {model})"
    if script_args.warm_start_steps:
        from ..policy.warm_start import warm_started_model

        with quiet_loading():
            model = str(warm_started_model(
                task, examples, model, steps=script_args.warm_start_steps,
                learning_rate=script_args.warm_start_learning_rate, seed=config.seed, log=log,
            ))
        label = (f"{label}, warm-started with {script_args.warm_start_steps} supervised steps on the task's "
                 f"references ({model})")
    tokenizer = None
    if Path(model).is_dir():
        from ..policy.pretrained import load_tokenizer

        tokenizer = load_tokenizer(model)  # the tokenizer as saved (AutoTokenizer may rebuild it)
    initial = str(model) if script_args.warm_start_steps else str(script_args.model)
    return model, tokenizer, label, initial


def print_summary(trainer, *, task_file: str | None = None) -> None:
    """What ``train`` prints after a run: steps and time, each reward's mean first -> last steps, the dev metrics
    before -> after, and where the run's files are (from ``run.json`` and ``metrics.jsonl``)."""
    from ..policy.pretrained import ADAPTER_SUBDIR
    from .callbacks import read_metrics
    from .credit_logging import credit_pages_line

    task, config, info = trainer.task, trainer.args, trainer.run_record
    out = Path(config.output_dir)
    rows = read_metrics(out / "metrics.jsonl") if (out / "metrics.jsonl").exists() else []
    train_rows = [r for r in rows if any(k.startswith("rewards/") for k in r)]
    eval_rows = [r for r in rows if any(k.startswith("eval/") for k in r)]
    resumed = f" (resumed from {info['resumed_from']})" if info.get("resumed_from") else ""
    steps = trainer.state.global_step
    print(f"trained {steps} step{'' if steps == 1 else 's'} in {info.get('elapsed_s') or 0:.0f} s{resumed}")
    window = max(1, min(10, len(train_rows) // 2))
    if train_rows:
        print("mean reward, first step -> last step:" if window == 1
              else f"mean reward, first {window} -> last {window} steps:")
    else:
        print(f"no step was logged (logging_steps={config.logging_steps}); see {out / 'metrics.jsonl'}")
    for name in task.verifier_names if train_rows else []:
        key = f"rewards/{name}/mean"
        vals = [r[key] for r in train_rows if r.get(key) is not None]
        if vals:
            first, last = vals[:window], vals[-window:]
            print(f"  {name}: {sum(first) / len(first):.3f} -> {sum(last) / len(last):.3f}")
        else:
            print(f"  {name}: never applied (the verifier returned None for every completion)")
    if len(eval_rows) > 1:
        before, after = eval_rows[0], eval_rows[-1]
        n = len(trainer.eval_examples or [])
        k = config.num_generations_eval or 1
        mode = "greedy" if k == 1 else f"{k} samples each at T={config.temperature:g}"
        print(f"dev ({task.eval_split}, {n} examples, {mode}), step {before['step']} -> step {after['step']}:")
        headline = [k for k in info.get("headline_metrics") or [] if "/" not in k]  # per-category: run.json
        print_eval_change(before, after, headline, [*task.verifier_names, "all_rewards"])
    print(f"metrics: {out / 'metrics.jsonl'}")
    if (out / "rewards.png").exists():
        print(f"curves:  {out / 'rewards.png'}")
    if (out / "samples.jsonl").exists():
        print(f"samples: {out / 'samples.jsonl'}")
    credit_line = credit_pages_line(out)
    if credit_line:
        print(credit_line)
    policy_dir = info.get("policy_dir")
    if policy_dir:
        print(f"policy:  {policy_dir} (mrtpo-sdk eval {task_file or 'TASK'} --model {out})")
        if Path(policy_dir).name == ADAPTER_SUBDIR:
            print(f"         (the LoRA adapter alone, --save_merged_policy false: --model {out} loads it on "
                  f"its base model)")
        elif (out / ADAPTER_SUBDIR).is_dir():
            print(f"adapter: {out / ADAPTER_SUBDIR} (the LoRA adapter; policy/ holds the merged model)")
    else:
        print("policy:  not saved (--save_policy false)")


def print_eval_change(before: dict[str, Any], after: dict[str, Any], headline: list[str], others: list[str]) -> None:
    """The dev metrics before -> after training, one line each: the task's headline metrics first, marked
    ``(headline)`` (and bold on a terminal), then the rewards."""
    from rich.console import Console

    console = Console(soft_wrap=True, highlight=False)  # plain text when stdout is not a terminal
    for key in [*headline, *(k for k in others if k not in headline)]:
        b, a = before.get(f"eval/{key}"), after.get(f"eval/{key}")
        if b is None or a is None:
            continue
        if key in headline:
            console.print(f"  {key}: {b:.3f} -> {a:.3f} (headline)", style="bold", markup=False)
        else:
            console.print(f"  {key}: {b:.3f} -> {a:.3f}", markup=False)


def _warm_start_record(folder: Any) -> dict[str, Any] | None:
    """``run.json``'s ``warm_start``: the warm-started folder and its ``warm_start.json`` (steps, loss, ...)."""
    from ..policy.warm_start import warm_start_info

    info = warm_start_info(str(folder))
    return None if info is None else {"folder": str(folder), **info}


def _model_args(model_args: Any) -> dict[str, Any] | None:
    """TRL's ``ModelConfig`` as ``run.json`` records it (``model_args``)."""
    return None if model_args is None else {k: _jsonable(v) for k, v in vars(model_args).items()}


def _jsonable(v: Any) -> Any:
    from .runs import jsonable

    return jsonable(v)
