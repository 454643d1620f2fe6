"""The task's options at the end of ``mrtpo-sdk COMMAND TASK --help`` (``train``, ``eval``, ``check``, ``explain``,
``compare``): each ``-T KEY=VALUE`` the task declares, with its type, default and help."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import MRTPOError

__all__ = [
    "HELP_FLAGS", "print_task_options", "print_task_options_after_help", "print_task_options_of", "wants_help",
]

HELP_FLAGS = ("-h", "--help")


def wants_help(argv: Sequence[str]) -> bool:
    """Whether ``argv`` asks for ``--help`` (``-h``), before any ``--``."""
    end = list(argv).index("--") if "--" in argv else len(argv)
    return any(a in HELP_FLAGS for a in list(argv)[:end])


def print_task_options(task: Any, spec: str) -> None:
    """Print ``task``'s options (:func:`~mrtpo_sdk.task_options.describe_options`) under a heading naming ``spec``,
    or one line saying it declares none."""
    from .task_options import describe_options

    if not task.options:
        print(f"\ntask options: {spec} declares none")
        return
    print(f"\ntask options of {spec} (task {task.name!r}; set with -T KEY=VALUE):")
    for line in describe_options(task.options):
        print(line)


def print_task_options_of(spec: str, options: Mapping[str, Any] | None = None) -> None:
    """Load the task ``spec`` names (with ``options``) and print its options (:func:`print_task_options`); a task
    that cannot be loaded: one ``note:`` line on stderr saying why."""
    from .loader import load_task

    try:
        task = load_task(spec, options=options)
    except MRTPOError as exc:
        print(f"note: no task options shown ({exc})", file=sys.stderr, flush=True)
        return
    print_task_options(task, spec)


def print_task_options_after_help(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """After ``parser`` printed its ``--help`` for ``argv``: the options of the task ``argv`` names (the parser's
    positional ``task``), with the ``-T`` values given applied (:func:`print_task_options_of`). Nothing when the
    parser takes no task or none is given."""
    from .task_options import parse_assignments

    try:
        args, _ = parser.parse_known_args([a for a in argv if a not in HELP_FLAGS])
        options = parse_assignments(getattr(args, "task_option", None))
    except (MRTPOError, SystemExit):  # no task given (a missing positional), a malformed -T: the help alone
        return
    if getattr(args, "task", None):
        print_task_options_of(args.task, options)
