"""``docs/cli.md``: the command-line reference, generated from the argparse parsers.

``python -m mrtpo_sdk.authoring.docs`` rewrites the page; ``--check`` exits 1 when it is stale (a test runs that).
The tables are built from each parser's actions (flags, default, help), not from argparse's formatted help, so the
page does not depend on the terminal width or the Python version.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["DEFAULT_PATH", "cli_markdown", "main"]

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _text(text: object) -> str:
    """Prose for a table cell: one line, ``|`` and ``<`` escaped (GitHub would take ``<tag>`` for HTML)."""
    return _cell(text).replace("<", "&lt;")


def _flag(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    names = [o for o in action.option_strings if o not in _dash_aliases(action.option_strings)]
    shown = ", ".join(f"`{o}`" for o in names)
    if action.nargs == 0:
        return shown
    if action.choices:
        return f"{shown} `{{{','.join(str(c) for c in action.choices)}}}`"
    if action.metavar:
        return f"{shown} `{_cell(action.metavar)}`"  # `true\|false`: a pipe would end the table cell
    return shown


def _dash_aliases(options: list[str]) -> set[str]:
    """``--max-steps`` when ``--max_steps`` is also accepted (HfArgumentParser adds both; docs show one)."""
    return {o for o in options if o.startswith("--") and "-" in o[2:] and "--" + o[2:].replace("-", "_") in options}


def _default(action: argparse.Action) -> str:
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS) or not action.option_strings:
        return ""
    value = action.default
    if isinstance(value, str) and not value:
        return '`""`'
    return f"`{_cell(getattr(value, 'value', value))}`"


def _table(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | default | meaning |", "|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        help_text = (action.help or "").replace("%%", "%")
        if "%(default)" in help_text:
            help_text = help_text.replace("%(default)s", str(action.default))
        rows.append(f"| {_flag(action)} | {_default(action)} | {_text(help_text)} |")
    return rows


def _section(title: str, parser: argparse.ArgumentParser, usage: str, extra: str = "") -> list[str]:
    out = [f"## `{title}`", "", "```text", usage, "```", ""]
    if parser.description:
        out += [_text(parser.description), ""]
    if extra:
        out += [extra, ""]
    out += _table(parser)
    if parser.epilog:
        out += ["", _text(parser.epilog)]
    return out + [""]


def _train_parser() -> argparse.ArgumentParser:
    from ..policy.presets import EMBEDDED_POLICY_DEFAULTS
    from ..trainer import MRTPOConfig
    from ..trainer.arguments import train_parser

    parser = train_parser(MRTPOConfig)
    parser.set_defaults(**EMBEDDED_POLICY_DEFAULTS)
    parser.set_defaults(output_dir="runs/<task>-<algo>")
    return parser


def cli_markdown() -> str:
    """The whole ``docs/cli.md`` page as Markdown."""
    from ..lint.cli import lint_parser
    from ..compare.cli import compare_parser
    from ..evaluation.cli import eval_parser
    from .cli import check_parser, explain_parser, new_parser

    out = [
        "# Command-line reference",
        "",
        "<!-- Generated from the argparse parsers by `python -m mrtpo_sdk.authoring.docs`; "
        "tests/authoring/test_cli_docs.py fails when it is stale. Do not edit by hand. -->",
        "",
        "`mrtpo-sdk COMMAND ...` (or `python -m mrtpo_sdk.cli COMMAND ...`). Exit status: 0 success, 1 findings "
        "(`lint`, `check`), 2 a user mistake (one `error:` line naming what to fix).",
        "",
        "`mrtpo-sdk --debug COMMAND ...` (or `--debug` among a command's flags, or `MRTPO_DEBUG=1`): a user mistake "
        "re-raises with its full Python traceback instead of the one line. A verifier that raises in `train`, `eval` "
        "or `explain` also writes `OUTPUT_DIR/errors/<step>-<verifier>.txt` (traceback, the verifier's file:line, "
        "example id, completion), named at the end of the line.",
        "",
        "Every subcommand spells its flags in snake_case, as TRL does (`--max_steps`, `--output_dir`, "
        "`--extend_select`). The dashed spelling of any flag (`--output-dir`) is accepted and prints a one-line "
        "deprecation note on stderr; `lint` and `rule` take ruff's dashed names (`--extend-select`, `--output-format`, "
        "`--force-exclude`, ...) silently, so pre-commit hooks and scripts written for ruff keep working as they are. "
        "`explain` spells MRTPO's redistribution strength `--mrtpo_beta`, as train does (where `--beta` is TRL's KL "
        "coefficient). A mistyped flag is one `error:` line naming the closest one (did you mean ...?).",
        "",
        "| command | what it does |",
        "|---|---|",
        "| [`new`](#mrtpo-sdk-new) | write a task file, a tiny data file and a test from a template |",
        "| [`lint`](#mrtpo-sdk-lint) | check task files against the block-writing rules ([lint.md](lint.md)) |",
        "| [`rule`](#mrtpo-sdk-rule) | explain a lint rule |",
        "| [`check`](#mrtpo-sdk-check) | do the reference completions earn full reward? a table per verifier |",
        "| [`explain`](#mrtpo-sdk-explain) | where each reward's credit lands on one completion (HTML, PNG, JSON) |",
        "| [`train`](#mrtpo-sdk-train) | train a policy on a task with MRTPO, GDPO or GRPO |",
        "| [`eval`](#mrtpo-sdk-eval) | score a policy on a task's held-out split (table, `eval.json`) |",
        "| [`compare`](#mrtpo-sdk-compare) | run or compare algorithms side by side over seeds ([compare.md](compare.md)) |",
        "",
    ]
    out += _section("mrtpo-sdk new", new_parser(), "mrtpo-sdk new NAME [--template TEMPLATE] [--dir DIR]")
    out += _section("mrtpo-sdk lint", lint_parser(), "mrtpo-sdk lint [PATH ...] [options]")
    out += [
        "## `mrtpo-sdk rule`",
        "",
        "```text",
        "mrtpo-sdk rule CODE|NAME [--format text|json]",
        "mrtpo-sdk rule --all",
        "```",
        "",
        "Prints a lint rule's documentation (what it does, why it is bad, examples); the same pages are in "
        "[rules/](rules/index.md).",
        "",
    ]
    out += _section("mrtpo-sdk check", check_parser(), "mrtpo-sdk check TASK_FILE [options]")
    out += _section(
        "mrtpo-sdk explain",
        explain_parser(),
        "mrtpo-sdk explain TASK_FILE [--model ID] [--example ID] [--completion TEXT|@FILE] [options]",
    )
    out += _section(
        "mrtpo-sdk train",
        _train_parser(),
        "mrtpo-sdk train TASK_FILE[@name] [--algo mrtpo|gdpo|grpo] [--model ID] [--config run.yaml] [--FIELD VALUE ...]",
        extra="Every field of TRL's `GRPOConfig` and of `MRTPOConfig` is a flag; `--config run.yaml` reads the same "
        "fields from YAML (flags override it). The defaults below are those of the embedded default policy (no "
        "`--model`); with `--model` TRL's own defaults apply, except `logging_steps=1`, `save_strategy=no`, "
        "`report_to=none`. TRL's `--beta` is the KL coefficient; MRTPO's redistribution strength is "
        "`--mrtpo_beta`. When the task has a held-out split (`Task(eval_split=...)`), training evaluates on it "
        "greedily before the first step, every quarter of the run (`eval_steps=0.25`) and after the last step, "
        "logging `eval/<metric>` rows to `metrics.jsonl`; `--eval_strategy no` turns that off, `--eval_steps N` "
        "sets the interval. The final policy is saved to `OUTPUT_DIR/policy` (`--save_policy false` to skip).",
    )
    out += _section(
        "mrtpo-sdk eval",
        eval_parser(),
        "mrtpo-sdk eval TASK_FILE [--model RUN_DIR|PATH|ID] [--split SPLIT] [--num_generations N] [options]",
    )
    out += _section(
        "mrtpo-sdk compare",
        compare_parser(),
        "mrtpo-sdk compare TASK_FILE [--algos mrtpo,gdpo,grpo] [--seeds 1,2,3] [options] [--TRAIN_FLAG VALUE ...]\n"
        "mrtpo-sdk compare RUN_DIR RUN_DIR ... [options]",
    )
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description="Write or check docs/cli.md.")
    args.add_argument("--check", action="store_true", help="exit 1 if the page is stale instead of writing it")
    args.add_argument("--path", type=Path, default=DEFAULT_PATH)
    ns = args.parse_args(argv)
    text = cli_markdown()
    if ns.check:
        current = ns.path.read_text(encoding="utf-8") if ns.path.exists() else ""
        if current != text:
            print(f"{ns.path} is stale; run `python -m mrtpo_sdk.authoring.docs`", file=sys.stderr)
            return 1
        return 0
    ns.path.write_text(text, encoding="utf-8")
    print(f"wrote {ns.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
