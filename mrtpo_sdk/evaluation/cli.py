"""``mrtpo-sdk eval``: score a policy on a task's held-out split; a table on the terminal and ``eval.json``.

Exit status: 0 on success, 2 on a user mistake (one ``error:`` line).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

from .._argparse import ArgumentParser, add_data_flags
from ..errors import MRTPOError, VerifierError
from ..policy.gguf import MODEL_NAMES_HELP
from ..task_help import print_task_options_after_help, wants_help
from ..task_options import format_value

__all__ = ["eval_command", "eval_parser", "render_report"]


def eval_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="mrtpo-sdk eval",
        description="Score a policy on a task's held-out split: each reward's mean, the share of completions that "
        "earn every reward, and the task's headline metrics (SQL: execution accuracy; instruction following: "
        "prompt- and instruction-level strict accuracy; BFCL: AST accuracy per category). Greedy by default; with "
        "--num_generations k, sampled, with pass@k and mean@k. Prompts are encoded exactly as in training.",
        allow_abbrev=False,
    )
    p.add_argument("task", metavar="TASK_FILE", help="the task file (FILE.py, or FILE.py@name)")
    p.add_argument(
        "--model",
        default=None,
        help=f"the policy: a run folder of `mrtpo-sdk train` (its policy/), a local model folder, a .gguf file, "
        f"{MODEL_NAMES_HELP}, or a model id "
        "(default: the embedded bootstrap policy before training, as train builds it). A run folder is scored with "
        "the run's task options (-T) and --data unless given (run.json)",
    )
    p.add_argument(
        "--chat_template",
        default=None,
        metavar="FILE",
        help="a Jinja chat template file for --model (default: the model's own; a model without one gets its prompts "
        "as plain text, the messages' contents joined by blank lines, and a note says so)",
    )
    add_data_flags(p, split_default=None, split_help="the split to score (default: the task's eval_split, e.g. dev)")
    p.add_argument("--num_generations", type=int, default=1, help="completions per example (1 = greedy; default 1)")
    p.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="sampling temperature with --num_generations > 1 (default: train's: the run's own for a run folder, 0.8 "
        "for the embedded policy, 1.0 for another --model)",
    )
    p.add_argument(
        "--top_p", type=float, default=1.0, help="nucleus sampling with --num_generations > 1, in (0, 1] (default 1)"
    )
    p.add_argument("--max_examples", type=int, default=None, help="score only the first N examples (default: all)")
    p.add_argument(
        "--max_completion_length",
        type=int,
        default=None,
        help="new tokens at most (default: train's: the run's own for a run folder, else the task's "
        "max_completion_length if it sets one, else 64 for the embedded policy and train's for another --model: 128 on "
        "a CPU, 256 on a GPU)",
    )
    p.add_argument(
        "--batch_size",
        type=int,
        default=None,
        help="sequences per generate call (default: train's per_device_eval_batch_size: the run's own for a run "
        "folder, else 8). Greedy decoding of a small policy can change with the batch's padding, so the default "
        "reproduces the dev numbers training printed",
    )
    p.add_argument("--seed", type=int, default=42, help="seed of the embedded policy and of sampling (default 42, "
                   "as train)")
    p.add_argument(
        "--policy_preset", default="small", help="size of the embedded policy, as for train (default: small)"
    )
    p.add_argument("--device", default="auto", help="auto (default: cuda when available), cpu, cuda, cuda:1, ...")
    p.add_argument(
        "--output_dir",
        default=None,
        help="where eval.json goes (default: the run folder given as --model, i.e. one with run.json; else "
        "runs/<task>-eval)",
    )
    return p


def eval_command(argv: list[str]) -> int:
    try:
        args = eval_parser().parse_args(argv)
    except SystemExit as exc:  # --help printed the help (a mistake raises UsageError: one error: line, exit 2)
        if not exc.code and wants_help(argv):
            print_task_options_after_help(eval_parser(), argv)  # eval TASK --help: the task's -T options
        return int(exc.code or 0)
    import torch

    from ..policy.presets import EMBEDDED_POLICY_DEFAULTS
    from ..loader import load_task
    from ..task_options import parse_assignments
    from ..policy.for_task import check_policy_preset, task_policy
    from ..policy.pretrained import load_pretrained, quiet_loading, to_device
    from .core import evaluate_policy

    for name in ("num_generations", "max_examples", "max_completion_length", "batch_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise MRTPOError(f"--{name} must be >= 1, got {value}")
    if args.temperature is not None and not (math.isfinite(args.temperature) and args.temperature > 0):
        raise MRTPOError(f"--temperature must be > 0, got {args.temperature}")
    if not (math.isfinite(args.top_p) and 0.0 < args.top_p <= 1.0):  # nucleus mass: a probability
        raise MRTPOError(f"--top_p must be in (0, 1] (the probability mass sampled from; 1 = all), got {args.top_p:g}")
    check_policy_preset(args.policy_preset)  # before the task loads
    from ..prompting import check_chat_template

    check_chat_template(args.chat_template, args.model)
    given_options = parse_assignments(args.task_option)
    task = load_task(args.task)
    run = _run_record(args.model) if args.model is not None else {}
    options, data = _with_run_settings(task, run, given_options, args.data, args.model)
    task = task.with_options(options) if options else task
    _note_changed_settings(task, run, given_options, args.data, args.model)
    split = task.eval_split if args.split is None else args.split
    if split is None:
        raise MRTPOError(f"task {task.name!r} declares no eval_split; pass --split NAME")
    examples = task.load_examples(split, data)
    if args.max_examples is not None:
        examples = examples[: args.max_examples]
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    embedded = args.model is None
    with quiet_loading():  # no "Loading weights" bar beside the table
        if embedded:
            model, tokenizer, path = task_policy(
                task,
                task.load_examples("train", data),
                seed=args.seed,
                preset=args.policy_preset,
                log=lambda msg: print(msg, file=sys.stderr, flush=True),
            )
            label = f"embedded bootstrap policy ({args.policy_preset}, seed {args.seed}) from {path}"
            model = to_device(model, device)
        else:
            model, tokenizer, label = load_pretrained(args.model, device=device)
            from ..prompting import use_model_prompts

            task = use_model_prompts(task, tokenizer, model=args.model, chat_template=args.chat_template)
    if embedded:
        defaults: dict[str, Any] = EMBEDDED_POLICY_DEFAULTS
    else:  # train's defaults for a --model on this machine (a CPU: 128 tokens; else TRL's budget, 256 here)
        from ..policy.presets import model_machine_defaults

        machine = model_machine_defaults() if not str(device).startswith("cuda") else {}
        defaults = {"temperature": 1.0, "max_completion_length": machine.get("max_completion_length", 256)}
        from ..policy.gguf import describe_origin, model_origin

        origin = model_origin(label)
        if origin is not None:
            label = f"{describe_origin(origin)} (cached in {label})"
    run_args = dict(run.get("args") or {})
    if run_args:  # a run folder of train: score it as it was trained (its sampling settings)
        defaults = {k: run_args.get(k, v) for k, v in defaults.items()}
    temperature = args.temperature if args.temperature is not None else float(defaults["temperature"])
    if task.max_completion_length is not None and not run_args:  # a run folder keeps the length it trained with
        defaults = {**defaults, "max_completion_length": task.max_completion_length}
    max_len = args.max_completion_length or int(defaults["max_completion_length"])
    batch_size = args.batch_size or int(run_args.get("per_device_eval_batch_size") or _train_eval_batch_size())
    autocast_dtype = _autocast_dtype(run_args, embedded=embedded, device=device)
    if args.output_dir is not None:
        out_dir = Path(args.output_dir)
    elif not embedded and (Path(args.model) / "run.json").is_file():  # a run folder: beside its run.json
        out_dir = Path(args.model)
    else:
        out_dir = Path("runs") / f"{task.name}-eval"
    torch.manual_seed(args.seed)
    try:
        report = evaluate_policy(
            task,
            model,
            tokenizer,
            examples,
            split=split,
            policy=label,
            num_generations=args.num_generations,
            temperature=temperature,
            top_p=args.top_p,
            max_completion_length=max_len,
            batch_size=batch_size,
            progress=True,
            autocast_dtype=autocast_dtype,
        )
    except VerifierError as exc:  # the one line names OUTPUT_DIR/errors/eval-<verifier>.txt (traceback, completion)
        if exc.details_path is None:
            exc.write_details(out_dir, step="eval")
        raise
    target = out_dir / "eval.json"
    replaced = target.exists()
    report.write(target)
    render_report(report)
    print(f"eval:    {target}" + (" (replaced the previous eval.json there)" if replaced else ""))
    return 0


def _autocast_dtype(run_args: dict[str, Any], *, embedded: bool, device: str) -> Any:
    """The precision training sampled and evaluated in, so that ``eval`` reproduces its dev numbers: a run folder's
    own ``bf16`` / ``fp16``; another ``--model``: train's default for a ``--model`` on this machine (on a CPU, bf16
    autocast where the CPU has bf16 instructions); the embedded policy: float32 (``None``)."""
    import torch

    if run_args:
        flags = run_args
    elif embedded:
        return None
    else:
        from ..policy.presets import model_machine_defaults

        flags = model_machine_defaults() if not str(device).startswith("cuda") else {"bf16": True}
    if flags.get("bf16"):
        return torch.bfloat16
    if flags.get("fp16"):
        return torch.float16
    return None


def _train_eval_batch_size() -> int:
    """``train``'s default ``per_device_eval_batch_size`` (its config's dataclass default, TrainingArguments')."""
    import dataclasses

    from ..trainer.config import MRTPOConfig

    return int({f.name: f.default for f in dataclasses.fields(MRTPOConfig)}["per_device_eval_batch_size"])


def _run_record(model: str) -> dict[str, Any]:
    """``RUN_DIR/run.json`` (``{}`` when ``model`` is not a run folder, or its ``run.json`` cannot be read)."""
    import json

    path = Path(model) / "run.json"
    if not path.is_file():
        return {}
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _run_data(run: dict[str, Any]) -> str | None:
    """The ``--data`` a run trained on (``run.json``'s ``data``; ``None``: the task's bundled data)."""
    data = run.get("data", (run.get("script_args") or {}).get("data"))
    return None if data is None else str(data)


def _run_options(task, run: dict[str, Any]) -> dict[str, Any]:
    """The task options a run of ``task`` trained with (``run.json``'s ``task_options``, those ``task`` declares;
    ``{}`` for a run of another task)."""
    saved = run.get("task_options")
    if run.get("task") != task.name or not isinstance(saved, dict):
        return {}
    return {k: v for k, v in saved.items() if k in task.options}


def _with_run_settings(task, run: dict[str, Any], given_options: dict[str, Any], given_data: str | None,
                       model: str | None) -> tuple[dict[str, Any], str | None]:
    """``(task options, --data)`` of an evaluation of ``--model RUN_DIR``: the run's (``run.json``), with the ``-T``
    options and the ``--data`` given over them; a note on stderr names what the run set and this reuses. Not a run
    folder of ``task``: what was given."""
    if run.get("task") != task.name:
        return given_options, given_data
    saved = _run_options(task, run)
    data = given_data if given_data is not None else _run_data(run)
    defaults = {name: option.default for name, option in task.options.items()}
    reused = [f"-T {k}={format_value(v)}" for k, v in saved.items() if k not in given_options and v != defaults.get(k)]
    if given_data is None and data is not None:
        reused.append(f"--data {data}")
    if reused:
        print(f"note: evaluating with the run's {', '.join(reused)} (from {Path(model) / 'run.json'}; -T KEY=VALUE "
              f"or --data PATH overrides)", file=sys.stderr, flush=True)
    return {**saved, **given_options}, data


def _note_changed_settings(task, run: dict[str, Any], given_options: dict[str, Any], given_data: str | None,
                           model: str | None) -> None:
    """One note on stderr when a ``-T`` or ``--data`` given makes this evaluation differ from the run's settings."""
    if run.get("task") != task.name:
        return
    saved = _run_options(task, run)
    changed = [f"-T {k}={format_value(task.option_values[k])} here, {format_value(saved[k])} in the run"
               for k in given_options if k in saved and task.option_values[k] != saved[k]]
    run_data = _run_data(run)
    if given_data is not None and (run_data is None or Path(given_data).resolve() != Path(run_data).resolve()):
        changed.append(f"--data {given_data} here, {run_data or 'the bundled data'} in the run")
    if changed:
        print(f"note: this evaluation differs from the run's settings ({'; '.join(changed)}; "
              f"{Path(model) / 'run.json'})", file=sys.stderr, flush=True)


def render_report(report) -> None:
    """Print an :class:`~mrtpo_sdk.evaluation.EvalReport` as a table (rich)."""
    from rich.console import Console
    from rich.table import Table

    from .core import format_value

    mode = "greedy" if report.greedy else f"{report.num_generations} samples at T={report.temperature:g}"
    table = Table(
        title=f"{report.task} / {report.split}: {report.num_examples} examples, {mode}, {report.seconds:.0f} s",
        title_justify="left",
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    m = report.metrics
    for name in report.headline_names:
        table.add_row(f"[bold]{name}[/bold]", f"[bold]{format_value(m.get(name))}[/bold]")
    for name in report.reward_names:
        table.add_row(f"reward {name}", format_value(m.get(name)))
    table.add_row("all rewards earned", format_value(m.get("all_rewards")))
    for key, value in m.items():
        if key.startswith(("pass@", "mean@")):
            table.add_row(key, format_value(value))
    if m.get("completion_length") is not None:
        table.add_row("completion length (tokens)", f"{m['completion_length']:.1f}")
    Console(soft_wrap=True).print(table)
    print(f"policy:  {report.policy}")
