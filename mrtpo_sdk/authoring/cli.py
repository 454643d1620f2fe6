"""Parsers and commands of ``mrtpo-sdk new``, ``check`` and ``explain`` (dispatched from :mod:`mrtpo_sdk.cli`).

Exit status: 0 on success, 1 when ``check`` finds a failure, 2 on a user mistake (one ``error:`` line; an
unknown option names the closest one: ``did you mean --limit?``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .._argparse import ArgumentParser, add_data_flags
from ..errors import MRTPOError, VerifierError
from ..policy.gguf import MODEL_NAMES_HELP
from ..task_help import print_task_options_after_help, wants_help

__all__ = ["check_command", "check_parser", "explain_command", "explain_parser", "new_command", "new_parser"]


def new_parser() -> ArgumentParser:
    from .new import TEMPLATES

    p = ArgumentParser(
        prog="mrtpo-sdk new",
        description="Write a new task file NAME.py, a tiny data file and a test (test_NAME.py) from a template. "
        "The result lints clean and passes `mrtpo-sdk check` as written; edit it from there. Never overwrites.",
        epilog="templates: " + "; ".join(f"{k}: {v}" for k, v in TEMPLATES.items()),
    )
    p.add_argument("name", metavar="NAME", help="the task's name and file stem, e.g. my_task (lower case, _ allowed)")
    p.add_argument(
        "--template",
        "-t",
        choices=list(TEMPLATES),
        default="blank",
        help="which template to start from (default: blank)",
    )
    p.add_argument("--dir", default=".", help="folder to write into (default: the current folder)")
    return p


def check_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="mrtpo-sdk check",
        description="Run every verifier over the examples' reference completions and a few corrupted ones "
        "(empty, markup stripped, truncated, another example's reference, and those the task file declares in "
        "lint_probes(example) or PROBES). Prints a table per verifier: reward "
        "distribution, share at full reward, not-applicable count, empty-block rate, errors with example ids. "
        "It also builds every prompt training builds (prompt(), and prompt_without for in-prompt tasks). "
        "Exits 1 if a reference completion does not earn full reward, or a verifier raises or changes its example; "
        "a verifier whose reward is the same on every completion is a warning (WARN, exit 0).",
    )
    p.add_argument("task", metavar="TASK_FILE", help="the task file (FILE.py, or FILE.py@name with several tasks)")
    add_data_flags(p, split_default="train", split_help="which split to check (default: train)")
    p.add_argument("--limit", type=int, default=None, help="check only the first N examples (default: all)")
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")
    return p


def explain_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="mrtpo-sdk explain",
        description="Show where each reward's credit lands on one completion: replay it with the policy under "
        "all blocks vs all but block k, and write an HTML page (one row per reward: tokens shaded by q_k,t, the "
        "block, the reward, w_k,t), a PNG heatmap and a JSON file with the concentration statistics (the smallest "
        "share of tokens holding 80% of each reward's distance). Every reward with a non-empty block is "
        "replayed, whatever its group variance would be in training.",
    )
    p.add_argument("task", metavar="TASK_FILE", help="the task file (FILE.py, or FILE.py@name)")
    p.add_argument(
        "--model",
        default=None,
        help=f"the policy: a run folder of `mrtpo-sdk train` (its policy/), a local model folder, a .gguf file, "
        f"{MODEL_NAMES_HELP}, or a model id "
        "(default: the embedded bootstrap policy, as for train)",
    )
    p.add_argument(
        "--chat_template",
        default=None,
        metavar="FILE",
        help="a Jinja chat template file for --model (default: the model's own; a model without one gets its prompts "
        "as plain text, the messages' contents joined by blank lines, and a note says so)",
    )
    p.add_argument("--example", default=None, metavar="ID", help="id of the example (default: the first one)")
    p.add_argument(
        "--completion",
        default=None,
        metavar="TEXT|@FILE",
        help="the completion to explain, as text or @path to a file (default: the example's reference completion)",
    )
    add_data_flags(p, split_default="train", split_help="split the example comes from (default: train)")
    p.add_argument(
        "--mrtpo_beta", type=float, default=0.5, help="MRTPO's redistribution strength for w_k,t, as train's "
        "--mrtpo_beta (default: 0.5)"
    )
    p.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="sampling temperature the policy is trained with (default: train's: that of the embedded policy without "
        "--model, 1.0 with --model)",
    )
    p.add_argument(
        "--policy_preset",
        default="small",
        help="size of the embedded policy: 'small' (default, as train) or 'tiny' (seconds to build; smoke tests)",
    )
    p.add_argument("--seed", type=int, default=42, help="seed of the embedded policy (default: 42, as train)")
    p.add_argument(
        "--device",
        default="auto",
        help="where the policy runs: auto (cuda when available, else cpu), cpu, cuda, cuda:1",
    )
    p.add_argument("--output_dir", default=None, help="where to write the files (default: runs/<task>-explain)")
    return p


def _parse(parser: ArgumentParser, argv: list[str]) -> argparse.Namespace | int:
    """The parsed arguments, or 0 after ``--help``; a mistake raises UsageError (one ``error:`` line, exit 2)."""
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:  # --help printed the help
        if not exc.code and wants_help(argv):
            print_task_options_after_help(parser, argv)  # check/explain TASK --help: the task's -T options
        return int(exc.code or 0)


def new_command(argv: list[str]) -> int:
    args = _parse(new_parser(), argv)
    if isinstance(args, int):
        return args
    from .new import scaffold

    written = scaffold(args.name, args.template, args.dir)
    task_file = next(p for p in written if p.name == f"{args.name}.py")
    print(f"wrote {len(written)} files from the {args.template!r} template:")
    for p in written:
        print(f"  {p}")
    print("next:")
    print(f"  mrtpo-sdk lint {task_file}")
    print(f"  mrtpo-sdk check {task_file}")
    print(f"  pytest {task_file.with_name('test_' + task_file.name)}")
    print(f"  mrtpo-sdk train {task_file} --max_steps 10")
    return 0


def check_command(argv: list[str]) -> int:
    args = _parse(check_parser(), argv)
    if isinstance(args, int):
        return args
    from ..loader import import_task_module, load_task, split_task_spec
    from ..task_options import parse_assignments
    from .check import render_report, replay_hint, report_json, run_check

    if args.limit is not None and args.limit <= 0:
        raise MRTPOError(f"--limit must be a positive number of examples, got {args.limit}")
    task = load_task(args.task, options=parse_assignments(args.task_option))
    examples = task.load_examples(args.split, args.data)
    module = import_task_module(split_task_spec(args.task)[0])  # already imported by load_task: for declared probes
    report = run_check(task, examples, args.limit, module=module)
    if args.format == "json":
        print(json.dumps(report_json(report), indent=1))
    else:
        render_report(report)
        hint = replay_hint(report, args.task)
        if hint:
            print(hint)
    return 0 if report.ok else 1


def _read_completion(value: str | None) -> str | None:
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MRTPOError(f"--completion {value}: cannot read {path} ({exc.strerror}); give a readable file") from None


def explain_command(argv: list[str]) -> int:
    args = _parse(explain_parser(), argv)
    if isinstance(args, int):
        return args
    from ..policy.presets import EMBEDDED_POLICY_DEFAULTS
    from ..policy.for_task import check_policy_preset, task_policy
    from ..loader import load_task
    from ..prompting import check_chat_template
    from ..task_options import parse_assignments
    from .explain import explain, select_example, summary_lines, write_outputs

    import math

    # Before anything loads (the task, the policy): one line, as eval and train say it
    if args.temperature is not None and not (math.isfinite(args.temperature) and args.temperature > 0):
        raise MRTPOError(f"--temperature must be a finite number > 0, got {args.temperature:g}")
    if not (math.isfinite(args.mrtpo_beta) and 0.0 <= args.mrtpo_beta <= 1.0):
        raise MRTPOError(f"--mrtpo_beta must be in [0, 1] (as train's), got {args.mrtpo_beta:g}")
    check_policy_preset(args.policy_preset)  # before the task loads
    check_chat_template(args.chat_template, args.model)
    task = load_task(args.task, options=parse_assignments(args.task_option))
    examples = task.load_examples(args.split, args.data)
    example = select_example(examples, args.example, f"task {task.name!r} ({args.split} split)")
    completion = _read_completion(args.completion)
    if completion is None:
        if task.reference is None:
            raise MRTPOError(f"task {task.name!r} has no reference=...; pass the completion with --completion")
        completion = task.reference_completion(example)
    from ..policy.pretrained import load_pretrained, quiet_loading

    with quiet_loading():  # no "Loading weights" bar between our lines
        if args.model is None:
            model, tokenizer, path = task_policy(
                task,
                examples,
                seed=args.seed,
                preset=args.policy_preset,
                log=lambda msg: print(msg, file=sys.stderr, flush=True),
            )
            label = f"embedded bootstrap policy ({args.policy_preset}) from {path}"
        else:
            model, tokenizer, label = load_pretrained(args.model)  # a run folder of train, a model folder or an id
    if args.model is not None:
        from ..prompting import use_model_prompts

        task = use_model_prompts(task, tokenizer, model=args.model, chat_template=args.chat_template)
    import torch

    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    from ..policy.pretrained import to_device

    model = to_device(model, device)
    temperature = args.temperature
    if temperature is None:
        temperature = float(EMBEDDED_POLICY_DEFAULTS.get("temperature", 1.0)) if args.model is None else 1.0
    out_dir = Path(args.output_dir or Path("runs") / f"{task.name}-explain")
    try:
        exp = explain(task, example, completion, model, tokenizer, beta=args.mrtpo_beta, temperature=temperature,
                      policy=label)
    except VerifierError as exc:  # the one line names OUTPUT_DIR/errors/explain-<verifier>.txt
        if exc.details_path is None:
            exc.write_details(out_dir, step="explain", example=example)
        raise
    paths = write_outputs(exp, out_dir)
    for line in summary_lines(exp):
        print(line)
    print(f"html: {paths['html']}")
    print(f"png:  {paths['png']}")
    print(f"json: {paths['json']}")
    return 0
