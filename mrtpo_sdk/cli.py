"""The ``mrtpo-sdk`` command line: it only dispatches; each subsystem owns its subcommands' parsers and code.

``mrtpo-sdk train TASK_FILE[@name] [--algo mrtpo|gdpo|grpo] [--model ID_OR_PATH] [--data PATH] [--config YAML]
[--<any MRTPOConfig / GRPOConfig field> VALUE]``: :mod:`mrtpo_sdk.trainer.cli`.

``mrtpo-sdk lint [PATH ...] [--select/--ignore CODES] [--format text|json|github|sarif] [--statistics]`` and
``mrtpo-sdk rule CODE|--all``: :mod:`mrtpo_sdk.lint.cli`, see ``docs/lint.md``.

``mrtpo-sdk new NAME [--template ...]``, ``mrtpo-sdk check TASK_FILE`` and ``mrtpo-sdk explain TASK_FILE``: see
``docs/cli.md`` (the authoring tools, :mod:`mrtpo_sdk.authoring.cli`); ``mrtpo-sdk compare``
(:mod:`mrtpo_sdk.compare.cli`), ``mrtpo-sdk eval`` (:mod:`mrtpo_sdk.evaluation.cli`).

Exit status: 0 on success, 2 on a user mistake (one ``error:`` line naming what to fix), 1 on an internal error.
``mrtpo-sdk --debug COMMAND ...`` (or ``COMMAND ... --debug``, or ``MRTPO_DEBUG=1``) re-raises a user mistake with
its full traceback instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from . import __version__
from .errors import MRTPOError
from .policy.presets import EMBEDDED_POLICY_DEFAULTS, MODEL_DEFAULTS  # noqa: F401 - re-exported: the presets live with the policy

__all__ = ["main", "EMBEDDED_POLICY_DEFAULTS"]


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _debug_requested(argv: list[str]) -> tuple[list[str], bool]:
    """Strip ``--debug`` (before the command or among its flags, never after ``--``) from ``argv``; ``MRTPO_DEBUG=1``
    in the environment asks for it too."""
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]
    if debug:
        argv = [a for a in argv[:end] if a != "--debug"] + argv[end:]
    env = os.environ.get("MRTPO_DEBUG", "").strip().lower()
    return argv, debug or env not in ("", "0", "false", "no", "off")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # --debug (a flag of mrtpo-sdk itself, accepted anywhere among a command's flags) or MRTPO_DEBUG=1: a user
    # mistake re-raises with its full traceback instead of the one `error:` line. Stripped here, so that train's
    # TRL parser never sees it.
    argv, debug = _debug_requested(argv)
    parser = argparse.ArgumentParser(
        prog="mrtpo-sdk",
        description="Train language models with RL against several verifiable rewards, with MRTPO.",
    )
    parser.add_argument("--version", action="version", version=f"mrtpo-sdk {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an error, show the full Python traceback instead of one line (also MRTPO_DEBUG=1; may also "
        "follow the command, e.g. `mrtpo-sdk train TASK --debug`)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser(
        "train",
        help="train a policy on a task file",
        add_help=False,
        description="Train a policy on a task file with MRTPO (or GDPO/GRPO). Every MRTPOConfig/GRPOConfig field "
        "is a flag; `mrtpo-sdk train TASK --help` lists them.",
    )
    sub.add_parser("lint", help="check task files against the block-writing rules", add_help=False)
    sub.add_parser("rule", help="explain a lint rule (`mrtpo-sdk rule MRT003`, `--all`)", add_help=False)
    sub.add_parser("new", help="scaffold a task file, data and test from a template", add_help=False)
    sub.add_parser("check", help="do the reference completions earn full reward? (verifier table)", add_help=False)
    sub.add_parser("explain", help="where each reward's credit lands on one completion (HTML, PNG)", add_help=False)
    sub.add_parser("compare", help="compare algos over seeds (runs, or train the matrix of a task)", add_help=False)
    sub.add_parser("eval", help="score a policy on a task's held-out split (table, eval.json)", add_help=False)
    if not argv or argv[0] in ("-h", "--help", "--version"):
        parser.parse_args(argv or ["--help"])
        return 0
    command, rest = argv[0], argv[1:]
    try:
        if command == "train":  # looked up at call time: tests replace trainer.cli.train_command
            from .trainer import cli as trainer_cli

            return trainer_cli.train_command(rest)
        if command in ("lint", "rule"):  # lazy: lint never imports torch/trl
            from .lint.cli import lint_command, rule_command

            return lint_command(rest) if command == "lint" else rule_command(rest)
        if command in ("new", "check", "explain"):  # lazy: only explain imports torch
            from .authoring import cli as authoring

            return getattr(authoring, f"{command}_command")(rest)
        if command == "compare":  # lazy: comparing run folders never imports torch
            from .compare.cli import compare_command

            return compare_command(rest)
        if command == "eval":
            from .evaluation.cli import eval_command

            return eval_command(rest)
        from ._argparse import did_you_mean

        commands = list(sub.choices)
        return _error(
            f"unknown command {command!r}{did_you_mean(command, commands)}; commands: {', '.join(commands)} "
            f"(mrtpo-sdk --help)"
        )
    except MRTPOError as exc:
        if debug:
            raise
        return _error(str(exc))
    except KeyboardInterrupt as exc:  # a training run's says at which step, and how to continue it
        print(str(exc) or "interrupted", file=sys.stderr, flush=True)
        return 130


def entrypoint() -> None:  # pragma: no cover - console script
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", category=FutureWarning)  # deprecation notices inside transformers/TRL
    warnings.filterwarnings("ignore", message=".*pin_memory.*")
    sys.exit(main())


if __name__ == "__main__":  # `python -m mrtpo_sdk.cli` / `accelerate launch -m mrtpo_sdk.cli`
    entrypoint()
