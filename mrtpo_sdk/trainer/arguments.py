"""The arguments of ``mrtpo-sdk train``: :class:`TrainScriptArguments` (the flags that are not trainer settings),
the parser (TRL's ``TrlParser`` over it, :class:`~mrtpo_sdk.trainer.MRTPOConfig` and TRL's ``ModelConfig``), and
what must be read from the flags before that parser runs: the task file, the ``-T`` options, the settings the user
gave (for the presets), a flag's dashed spelling. ``compare`` reads a matrix's train flags with the same functions.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._argparse import one_spelling, task_and_flags
from ..errors import MRTPOError
from ..policy.gguf import MODEL_NAMES_HELP
from .config_yaml import load_config_file
from .runs import jsonable

__all__ = [
    "TrainScriptArguments",
    "apply_model_config",
    "config_file_values",
    "config_task_options",
    "explain_parse_error",
    "given_settings",
    "held_out_presets",
    "model_args_record",
    "name_config_key",
    "require_extras",
    "snake_case_flags",
    "split_task_options",
    "task_and_flags",
    "task_presets",
    "train_flag_value",
    "train_parser",
    "train_setting",
    "train_task_options",
]


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
    chat_template: str | None = field(
        default=None,
        metadata={
            "metavar": "FILE",
            "help": "A Jinja chat template file for --model: its prompts are rendered with it (and the saved policy "
            "keeps it). Default: the model's own; a model without one (a base model) gets its prompts as plain "
            "text, the messages' contents joined by blank lines, and a note says so.",
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
        metadata={"help": "Size of the embedded policy: 'small' or 'tiny' (seconds to build; smoke tests)."},
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
    policy_seed: int | None = field(
        default=None,
        metadata={
            "help": "Seed of the embedded policy's build (default: --seed). Runs of several --seed values with one "
            "--policy_seed start from the same policy, as runs from one pretrained --model do; --seed still sets "
            "the sampling and the prompt order. Recorded in run.json."
        },
    )

    def __post_init__(self) -> None:
        """Raises ``ValueError`` (the CLI's one ``error:`` line) for a negative ``--warm_start_steps`` or
        ``--policy_seed``."""
        if self.warm_start_steps < 0:
            raise ValueError(f"--warm_start_steps must be >= 0 (0: no warm start), got {self.warm_start_steps}")
        if self.policy_seed is not None and self.policy_seed < 0:
            raise ValueError(f"--policy_seed must be >= 0, got {self.policy_seed}")


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


def config_file_values(flags: list[str]) -> dict[str, Any]:
    """The keys of ``--config FILE.yaml``, read as YAML 1.2 (:func:`~.config_yaml.load_config_file`); empty when
    absent or unreadable: the train parser then reports the problem."""
    path = _flag_values(flags).get("config")
    if not isinstance(path, str) or not path:
        return {}
    try:
        return load_config_file(path)
    except MRTPOError:  # the parser below gives the one-line error
        return {}


def train_setting(flags: list[str], name: str) -> Any:
    """A train setting as these train flags give it: ``--name V``, else the key ``name`` of their ``--config`` file,
    else ``None`` (e.g. ``compare`` asking which ``--data``/``--model``/``--policy_preset`` a run will use)."""
    return given_settings(flags).get(name)


_TASK_OPTION_FLAGS = ("-T", "--task_option")


def split_task_options(rest: list[str]) -> tuple[list[str], list[str]]:
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


def config_task_options(file_values: dict[str, Any]) -> dict[str, Any]:
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

    _, items = split_task_options(list(flags))
    return {**config_task_options(config_file_values(list(flags))), **parse_assignments(items)}


def task_presets(task: Any) -> dict[str, Any]:
    """The training defaults a task file sets (``Task(max_completion_length=N)``): they replace the presets'; a flag
    or a ``--config`` key still wins."""
    return {} if task.max_completion_length is None else {"max_completion_length": task.max_completion_length}


def snake_case_flags(rest: list[str], parser) -> list[str]:
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


def train_parser(config_class):
    """TRL's parser over (TrainScriptArguments, MRTPOConfig); a bad flag value is one ``error:`` line, not the
    1,000-line usage, and flags must be spelled out (no silent abbreviations). A bad value of a ``--config`` key
    names the file and the key (``--config c.yaml: num_generations: invalid int value: 'abc'``, ``...: expected an
    integer, got 4.5``, ``...: invalid choice 'foo' (choose from ...)``); a ``config:`` key is refused. The file is
    read as YAML 1.2, refusing a repeated key or a value YAML 1.1 reads otherwise (:mod:`.config_yaml`)."""
    import re
    import sys

    from trl import TrlParser

    class TrainParser(TrlParser):
        config_path: str | None = None  # the --config file of the arguments being parsed
        config_keys: frozenset[str] = frozenset()  # its keys that are settings
        config_unknown: tuple[str, ...] = ()  # its keys that are not
        config_values: dict = {}  # the file's values, read as YAML 1.2 (config_yaml.load_config_file)
        command_line: tuple[str, ...] = ()

        def parse_args_and_config(self, args=None, *rest, **kwargs):
            args = _one_config_flag(list(sys.argv[1:] if args is None else args))
            self.command_line = tuple(args)
            self.config_path = args[args.index("--config") + 1] if "--config" in args else None
            self.config_keys, self.config_unknown = frozenset(), ()
            self.config_values = load_config_file(self.config_path) if self.config_path is not None else {}
            odd = [key for key in self.config_values if not isinstance(key, str)]
            if odd:  # TRL passes the keys as keyword arguments: a TypeError otherwise
                raise MRTPOError(
                    f"--config {self.config_path}: key {_json_value(odd[0])} is not a setting's name; keys are the "
                    f"flags' names without the dashes (max_steps: 10)"
                )
            return super().parse_args_and_config(args, *rest, **kwargs)

        def set_defaults_with_config(self, **kwargs):
            # TRL read the file as YAML 1.1; the values are YAML 1.2's, which differ only where 1.1 keeps text
            kwargs = {key: self.config_values.get(key, value) for key, value in kwargs.items()}
            if "config" in kwargs:  # --config is read from the command line only
                raise MRTPOError(
                    f"--config {self.config_path}: config: a --config file cannot name another one (copy the "
                    f"settings of {kwargs['config']} into this file)"
                )
            _check_debug_key(kwargs.get("debug"), self.config_path)
            types = _field_types(self.dataclass_types)
            for key, value in kwargs.items():
                action = self._option_string_actions.get(f"--{key}")
                if (
                    action is not None and action.dest == key and key in types and key not in _OWN_CHECKS
                    and not self.on_command_line(key)
                ):  # a flag given on the command line replaces the key, whose value is then not read
                    _check_config_value(self.config_path, key, value, types[key], action)
            remaining = super().set_defaults_with_config(**kwargs)
            self.config_keys = frozenset(kwargs)
            self.config_unknown = tuple(key[2:] for key in remaining[::2])
            return remaining

        def on_command_line(self, dest: str) -> bool:
            """Whether a flag of the arguments being parsed sets ``dest`` (``--bf16``, ``--no_bf16``, ...)."""
            return _flag_sets(self, self.command_line, dest)

        def error(self, message: str):  # argparse: invalid value, missing argument, ...
            message = one_spelling(message)
            given = re.match(r"argument (--\w+): (.*)", message, re.S)
            action = self._option_string_actions.get(given.group(1)) if given else None
            if (
                action is not None and self.config_path is not None and action.dest in self.config_keys
                and not self.on_command_line(action.dest)
            ):  # argparse converts a --config value (a string default) when no flag gave the setting
                raise MRTPOError(f"--config {self.config_path}: {action.dest}: {given.group(2)}")
            raise MRTPOError(f"{message} (all options: mrtpo-sdk train TASK --help)")

    from trl import ModelConfig

    parser = TrainParser(
        (TrainScriptArguments, config_class, ModelConfig),
        prog="mrtpo-sdk train TASK_FILE[@name]",
        description="Train a policy on a task with MRTPO (or --algo gdpo|grpo). Every MRTPOConfig / TRL GRPOConfig "
        "field is a flag, and a key of a --config file. Flags are spelled with underscores (--max_steps), the "
        "canonical form; the dashed spelling (--max-steps) is accepted but deprecated (a note on stderr).",
        allow_abbrev=False,
    )
    config = parser.add_argument("--config", action=_ConfigFlag, metavar="FILE", default=argparse.SUPPRESS,
                                 help=_CONFIG_HELP)
    for actions in (parser._actions, parser._optionals._group_actions):  # listed first, after --help
        actions.insert(1, actions.pop(actions.index(config)))
    # One KEY=VALUE per -T, as the other commands take it (train_command takes them out before this parser runs)
    parser._option_string_actions["--task_option"].nargs = None
    _boolean_help(parser)
    for flag, text in _HELD_OUT_HELP.items():
        action = parser._option_string_actions[flag]
        action.help = f"{action.help or ''} {text}".strip()
    debug = parser._option_string_actions["--debug"]
    debug.help = f"{debug.help or ''} {_DEBUG_HELP}".strip()
    debug.metavar = "FEATURE"  # TRL's is the field's name: --debug DEBUG [DEBUG ...]
    return parser


_CONFIG_HELP = (
    "Read settings from a YAML (or JSON) file whose keys are the flags' names without the dashes (max_steps: 10); "
    "a flag given on the command line overrides the file's key. The file is read as YAML 1.2; a value YAML 1.1 "
    "reads otherwise (010, no, 1:30) or a key given twice is refused."
)

#: Added to TRL's help of ``--debug`` (TrainingArguments.debug): ``mrtpo-sdk`` takes a bare ``--debug`` itself.
_DEBUG_HELP = (
    "mrtpo-sdk train: a bare --debug is mrtpo-sdk's own flag (on an error, the full Python traceback instead of one "
    "line; also MRTPO_DEBUG=1), not this setting; set TRL's debug features with --debug=underflow_overflow or the "
    "--config key debug: [underflow_overflow]."
)


def _one_config_flag(args: list[str]) -> list[str]:
    """``args`` with its ``--config=FILE`` spelled ``--config FILE``, as TRL's parser reads it.

    Raises:
        MRTPOError: ``--config`` without a file, or given twice.
    """
    at = [i for i, a in enumerate(args) if a == "--config" or a.startswith("--config=")]
    if not at:
        return args
    if len(at) > 1:
        raise MRTPOError("--config is given more than once; give one file")
    i = at[0]
    if args[i] == "--config":
        path = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else ""
    else:
        path = args[i].partition("=")[2]
    if not path:
        raise MRTPOError("--config needs a FILE, e.g. --config run.yaml (YAML or JSON)")
    if Path(path).is_dir():
        raise MRTPOError(f"--config {path}: is a folder; give a YAML or JSON file, e.g. --config {path}/run.yaml")
    rest = args[:i] + args[i + (2 if args[i] == "--config" else 1) :]
    return rest[:i] + ["--config", path] + rest[i:]


class _ConfigFlag(argparse.Action):
    """``--config FILE`` in ``train --help``: TRL's ``parse_args_and_config`` reads it and takes it out of the
    arguments before argparse parses them, so argparse itself never takes it."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error("--config is read by parse_args_and_config, which takes it out of the arguments")


def _check_debug_key(value: Any, path: str | None) -> None:
    """The ``debug`` key of a ``--config`` file is TRL's ``TrainingArguments.debug``: a string (argparse checks it
    as it checks ``--debug=...``) or a list of its features; ``true``/``false`` and the like would reach the Trainer,
    which fails on them (TypeError) when training starts.

    Raises:
        MRTPOError: any other value; the line says that mrtpo-sdk's ``--debug`` is a command-line flag.
    """
    import json

    features = _trl_debug_features()
    if value is None or isinstance(value, str):
        return
    if isinstance(value, list) and all(v in features for v in value):
        return
    raise MRTPOError(
        f"--config {path}: debug: invalid value: {json.dumps(value, default=str)} (TRL's debug features: a list of "
        f"{', '.join(features)}); mrtpo-sdk's --debug (the full traceback of an error) is a command-line flag or "
        f"MRTPO_DEBUG=1, not a --config key"
    )


#: ``--config`` keys with their own checks (:func:`config_task_options`, :func:`_check_debug_key`): they take values
#: their fields' types do not describe (``task_option: {semantics: official}``, ``debug: [underflow_overflow]``).
_OWN_CHECKS = frozenset({"task_option", "debug"})


def _field_types(dataclass_types) -> dict[str, Any]:
    """Each field of the parser's dataclasses by name: its type, as ``typing.get_type_hints`` resolves it."""
    import dataclasses
    import typing

    types: dict[str, Any] = {}
    for dataclass_type in dataclass_types:
        try:
            hints = typing.get_type_hints(dataclass_type)
        except Exception:  # noqa: BLE001 - an unresolvable annotation: that field goes unchecked
            hints = {}
        for f in dataclasses.fields(dataclass_type):
            if f.init and f.name in hints:
                types[f.name] = hints[f.name]
    return types


def _check_config_value(path: str | None, key: str, value: Any, field_type: Any, action: argparse.Action) -> None:
    """A ``--config`` value against its field's type and its flag's choices. argparse converts a string value as it
    converts the flag's (``num_generations: "8"``; its error names the file and key, :func:`train_parser`), but keeps
    any other value as it is and checks no choices: ``num_generations: 4.5``, ``max_steps: true`` or
    ``lr_scheduler_type: foo`` would otherwise reach TRL, whose failure names neither the file nor the key.

    An integer field takes a YAML integer (not true/false), a number field an integer or a float, a true/false field
    true or false, a string field a string (or what TRL and transformers read for some string fields: true/false,
    ``resume_from_checkpoint: true``, ``fsdp: true``, or a list of strings, ``fsdp: [full_shard]``), a list field a
    list of those, an optional field null; a field with choices one of them.

    Raises:
        MRTPOError: ``--config c.yaml: num_generations: expected an integer, got 4.5``.
    """
    where = f"--config {path}: {key}"
    if action.choices:
        choice = action.type(value) if isinstance(value, str) and callable(action.type) else value
        if choice in action.choices or (not isinstance(value, str) and _fits(value, field_type, loose_str=False)):
            return  # a choice, or null for an optional field
        shown = repr(value) if isinstance(value, str) else _json_value(value)
        listed = ", ".join(repr(getattr(c, "value", c)) for c in action.choices)
        raise MRTPOError(f"{where}: invalid choice {shown} (choose from {listed})")
    if isinstance(value, str):
        return  # argparse converts it as it converts the flag's value
    if not _fits(value, field_type):
        raise MRTPOError(f"{where}: expected {_describe(field_type)}, got {_json_value(value)}")


def _fits(value: Any, field_type: Any, loose_str: bool = True) -> bool:
    """Whether a YAML value (``None``, bool, int, float, str, list, dict) is one of ``field_type``; a type this does
    not know (a class such as ``ParallelismConfig``) takes any value. ``loose_str``: a string field takes true/false
    and a list of strings too (:func:`_check_config_value`)."""
    import enum
    import types
    import typing

    origin, args = typing.get_origin(field_type), typing.get_args(field_type)
    if field_type is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a, loose_str) for a in args)
    if field_type is type(None):
        return value is None
    if origin is typing.Literal:
        return any(value is a or (type(value) is type(a) and value == a) for a in args)
    if origin in (list, tuple, set, frozenset) or field_type in (list, tuple):
        return isinstance(value, list) and (not args or all(_fits(v, args[0], loose_str=False) for v in value))
    if origin is dict or field_type is dict:
        return isinstance(value, dict)
    if field_type is bool:
        return isinstance(value, bool)
    if field_type is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if field_type is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if field_type is str:
        loose = isinstance(value, bool) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        return isinstance(value, str) or (loose_str and loose)
    if isinstance(field_type, type) and issubclass(field_type, enum.Enum):
        return isinstance(value, str) and value in {str(m.value) for m in field_type}
    return True


def _describe(field_type: Any, plural: bool = False) -> str:
    """What a YAML value of ``field_type`` is, for an error line: "an integer", "a string or a list of strings"."""
    import enum
    import types
    import typing

    origin, args = typing.get_origin(field_type), typing.get_args(field_type)
    if origin in (typing.Union, types.UnionType):
        described = [_describe(a, plural) for a in args if a is not type(None)]
        return " or ".join(dict.fromkeys(described))
    if origin is typing.Literal:
        return "one of " + ", ".join(_json_value(a) for a in args)
    if origin in (list, tuple, set, frozenset) or field_type in (list, tuple):
        return ("lists of " if plural else "a list of ") + _describe(args[0], plural=True) if args else "a list"
    if origin is dict or field_type is dict:
        return "mappings" if plural else "a mapping"
    if isinstance(field_type, type) and issubclass(field_type, enum.Enum):
        return "one of " + ", ".join(repr(m.value) for m in field_type)
    names = {bool: ("true or false", "true/false values"), int: ("an integer", "integers"),
             float: ("a number", "numbers"), str: ("a string", "strings")}
    singular, many = names.get(field_type, (f"a {getattr(field_type, '__name__', field_type)}", "values"))
    return many if plural else singular


def _json_value(value: Any) -> str:
    """``value`` as YAML and JSON write it: ``4.5``, ``true``, ``null``, ``"abc"``, ``[1, 2]``."""
    import json

    return json.dumps(value, default=str)


#: What ``train`` does with the evaluation settings when the task declares a held-out split (:func:`held_out_presets`),
#: added to TRL's help of those flags (whose defaults, shown without a task, are TrainingArguments').
_HELD_OUT_HELP = {
    "--eval_strategy": "mrtpo-sdk train: 'steps' (with --eval_steps 0.25 and --eval_on_start true) when the task "
    "declares a held-out split (Task(eval_split=...)): a greedy evaluation before the first step, every quarter of "
    "the run and after the last step; 'no' turns it off (`mrtpo-sdk train TASK --help` shows the task's defaults).",
    "--eval_steps": "mrtpo-sdk train: 0.25 (every quarter of the run) when the task declares a held-out split; "
    "--eval_steps alone also sets --eval_strategy steps.",
    "--eval_on_start": "mrtpo-sdk train: true when the task declares a held-out split, unless --eval_strategy no.",
}


def held_out_presets(given: dict[str, Any]) -> dict[str, Any]:
    """``train``'s evaluation settings for a task with a held-out split: greedy evaluation before training, every
    quarter of the run and after the last step (TrainingArguments reads ``eval_steps < 1`` as a fraction of
    ``max_steps``); ``--eval_strategy no`` turns it off, the one at step 0 too (unless ``--eval_on_start`` says
    otherwise). ``given``: the settings the user gave (:func:`given_settings`)."""
    return {"eval_strategy": "steps", "eval_steps": 0.25,
            "eval_on_start": str(given.get("eval_strategy", "steps")) != "no"}


def _boolean_help(parser) -> None:
    """HfArgumentParser's boolean flags read ``--save_policy [true|false]``: a bare ``--save_policy`` means true,
    ``--save_policy false`` false. The ``--no_save_policy`` it adds for a field that defaults to true (the same as
    ``--save_policy false``) is named in that help instead of repeating it under its own (with "default: False")."""

    def boolean(action) -> bool:  # HfArgumentParser's string_to_bool (TRL and transformers each have one)
        return getattr(action.type, "__name__", "") == "string_to_bool" and action.nargs == "?"

    for action in list(parser._actions):
        negative = [o for o in action.option_strings if o.startswith("--no_")]
        if isinstance(action, argparse._StoreFalseAction) and negative:
            positive = parser._option_string_actions.get("--" + negative[0][len("--no_"):])
            if positive is not None and boolean(positive):
                action.help = argparse.SUPPRESS
                positive.help = (f"{positive.help or ''} (`{positive.option_strings[0]} false`, or "
                                 f"`{negative[0]}`, turns it off.)").strip()
        elif boolean(action):
            action.metavar = "true|false"


def _flag_sets(parser, flags: Sequence[str], dest: str) -> bool:
    """Whether a flag among ``flags`` sets the parser's setting ``dest`` (``--bf16``, ``--no_bf16``, ``--bf16=x``)."""
    for arg in flags:
        action = parser._option_string_actions.get(arg.split("=", 1)[0]) if arg.startswith("--") else None
        if action is not None and action.dest == dest:
            return True
    return False


def name_config_key(message: str, flags: Sequence[str]) -> str:
    """A check's message that names a setting as a flag (``--algo must be one of ...``, ``--model X: no such
    folder``), naming the ``--config`` file and key instead (``--config c.yaml: algo must be one of ...``) when that
    file's key set it and no flag on the command line did; any other message as it is."""
    import re

    named = re.match(r"--([a-z][a-z0-9_]*)\b(?!-)", message)
    if named is None:
        return message
    on_line = _flag_values(list(flags))
    if named.group(1) in on_line or named.group(1) not in config_file_values(list(flags)):
        return message
    return f"--config {on_line['config']}: {named.group(1)}{message[named.end():]}"


def explain_parse_error(message: str, parser, flags: Sequence[str] = ()) -> str:
    """Turn HfArgumentParser's "arguments are not used" into "unknown option --x (did you mean --y?)" (every unknown
    key of the ``--config`` file in one line), and a field's own check ("num_generations must be >= 2, got 1") into
    one naming its flag ("--num_generations must ...", the other settings it names as flags too) when ``flags`` (the
    command line) set it, or naming the file and key (``--config c.yaml: num_generations must ...``) when the
    ``--config`` file did; a Python field keeps the field's name. Any other check (TRL's, transformers') keeps its
    text and says what set the settings it names: ``generation_batch_size (32) must be divisible by num_generations
    (6). (set by --num_generations 6; generation_batch_size left at its default)``."""
    import difflib
    import re

    if "not used by the HfArgumentParser" not in message and "Unknown arguments from config file" not in message:
        # a field's own check ("num_generations must be >= 2, got 1") names the flag the user typed
        field = re.match(r"([a-z][a-z0-9_]*) must ", message)
        action = parser._option_string_actions.get(f"--{field.group(1)}") if field else None
        if action is not None and _flag_sets(parser, flags, action.dest):
            return f"--{field.group(1)}{_as_flags(message[field.end(1):], parser)}"
        if field and field.group(1) in config_file_values(list(flags)):  # the key of --config FILE set it
            return f"--config {_flag_values(list(flags))['config']}: {message}"
        return message + _set_by(message, parser, list(flags))
    known = [o for o in parser._option_string_actions if o.startswith("--")]
    unknown = [u for u in re.findall(r"'(--[^']+)'", message)]
    if "config file" not in message and not unknown:  # no option among them: words outside any flag
        words = re.findall(r"'([^']*)'", message)
        named = ", ".join(repr(w) for w in words) or message
        debug = [w for w in words if w in _trl_debug_features()]
        why = (
            f"a bare --debug is mrtpo-sdk's own flag, for full tracebacks; TRL's debug feature is --debug={debug[0]}"
            if debug else "train takes one TASK_FILE; flags start with --, e.g. --max_steps 10"
        )
        return f"unexpected argument{'s' if len(words) > 1 else ''} {named} ({why}) (all options: mrtpo-sdk train TASK --help)"
    in_config = "config file" in message
    if in_config:  # a YAML key is a field's name: no dashes, no "--"
        known = [o[2:] for o in known if "-" not in o[2:] and o != "--config"]
        # the keys themselves (the parser records them): the message's list also holds their values
        unknown = ["--" + key for key in getattr(parser, "config_unknown", ())] or unknown
    parts = []
    for u in unknown:
        name = u.split("=")[0][2:] if in_config else u.split("=")[0]
        if name == "--split":
            parts.append(f"{u} (train samples the task's train split; --data FILE trains on other data)")
            continue
        guess = difflib.get_close_matches(name, known, n=1)
        parts.append(name if in_config else u)
        if guess:
            parts[-1] += f" (did you mean {guess[0]}?)"
    plural = "s" if len(parts) > 1 else ""
    source = f"key{plural} in --config" if in_config else f"option{plural}"
    return f"unknown {source}: {', '.join(parts) or message} (all options: mrtpo-sdk train TASK --help)"


def _set_by(message: str, parser, flags: list[str]) -> str:
    """What set the settings a check names (TRL's and transformers' own, ``generation_batch_size (32) must be
    divisible by num_generations (6).``), to append to it: ``" (set by --num_generations 6 and
    --per_device_train_batch_size 16; generation_batch_size left at its default)"``; a ``--config`` key reads
    ``num_generations: 6 in --config c.yaml``. A setting left at its default is named as such, and the settings its
    help says it derives from (generation_batch_size: "per_device_train_batch_size * num_processes *
    steps_per_generation") count as named when the user set them. ``""`` when the message names no setting."""
    named = _settings_named(message, parser)
    if not named:
        return ""
    on_line: dict[str, str] = {}
    for name, value in _flag_values(flags).items():
        action = parser._option_string_actions.get(f"--{name}")
        if action is None or name == "config":
            continue
        shown = " ".join(value) if isinstance(value, list) else ("" if value is True else str(value))
        on_line.setdefault(action.dest, f"--{name} {shown}".strip())
    path, in_file = _flag_values(flags).get("config"), config_file_values(flags)
    given = {**{k: f"{k}: {_json_value(v)} in --config {path}" for k, v in in_file.items()}, **on_line}
    defaults = [name for name in named if name not in given]
    seen, todo = set(named), list(defaults)
    while todo:  # a default derived from other settings: the ones the user set count too
        action = parser._option_string_actions.get(f"--{todo.pop(0)}")
        for name in _settings_named(action.help or "", parser) if action is not None else ():
            if name not in seen:
                seen.add(name)
                named.append(name)
                if name not in given:
                    todo.append(name)
    set_by = [given[name] for name in named if name in given]
    parts = [f"set by {_and(set_by)}"] if set_by else []
    if defaults:
        parts.append(f"{_and(defaults)} left at {'its default' if len(defaults) == 1 else 'their defaults'}")
    return f" ({'; '.join(parts)})"


def _settings_named(text: str, parser) -> list[str]:
    """The settings ``text`` names, in order: a name with an underscore (``num_generations``), or a one-word one in
    backticks (`` `bf16` ``) or before its value in parentheses (``beta (0.1)``); not one spelled as a flag
    (``--max_steps``), which names itself."""
    import re

    names = []
    pattern = r"`([a-z][a-z0-9_]*)`|(?<![-\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b|(?<![-\w.])([a-z][a-z0-9]*) \("
    for m in re.finditer(pattern, text):  # not --name (a flag already) nor x.name
        name = next(g for g in m.groups() if g)
        action = parser._option_string_actions.get(f"--{name}")
        if action is not None and action.dest == name and name != "config" and name not in names:
            names.append(name)
    return names


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _trl_debug_features() -> list[str]:
    """The values of TRL's ``--debug`` (transformers' ``DebugOption``): ``underflow_overflow``, ..."""
    from transformers.debug_utils import DebugOption

    return [o.value for o in DebugOption]


def _as_flags(text: str, parser) -> str:
    """``text`` with each setting it names (``num_train_epochs``) spelled as its flag (``--num_train_epochs``); a
    quoted value or a Python argument (``Task(eval_split=...)``) is left as it is."""
    import re

    def flag(m: re.Match) -> str:
        return f"--{m.group(0)}" if f"--{m.group(0)}" in parser._option_string_actions else m.group(0)

    return re.sub(r"(?<![\w\-'\"(.=])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w\-'\"=(])", flag, text)


def require_extras(config) -> None:
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


def apply_model_config(model_args, config, given: dict[str, Any], *, embedded: bool):
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


def model_args_record(model_args: Any) -> dict[str, Any] | None:
    """TRL's ``ModelConfig`` as ``run.json`` records it (``model_args``)."""
    return None if model_args is None else {k: jsonable(v) for k, v in vars(model_args).items()}

