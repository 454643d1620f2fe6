"""The argument parser of every subcommand but ``train`` (whose parser is TRL's, see :mod:`mrtpo_sdk.trainer.arguments`).

``train`` takes :func:`task_and_flags` from here: ``train_command`` finds the task file with it before torch imports.

A mistake on the command line is one line, as ``train`` prints it, never argparse's usage block:

* an unknown option: ``unknown option: --limt (did you mean --limit?) (all options: mrtpo-sdk check --help)``;
* a bad value, a missing argument: ``argument --limit: invalid int value: 'x' (all options: mrtpo-sdk check
  --help)``.

The parser raises :class:`UsageError` (an :class:`~mrtpo_sdk.errors.MRTPOError`); ``mrtpo-sdk``'s ``main`` prints
it as ``error: ...`` and exits 2. ``--help`` still prints the help and exits 0 (``SystemExit(0)``).

One flag style for every subcommand: snake_case, TRL's spelling (``--max_steps``, ``--output_dir``,
``--extend_select``). The kebab spelling of every flag (``--output-dir``) is accepted: it prints a one-line
deprecation note on stderr (:func:`spelling_note`) and acts as the snake_case flag. ``lint`` and ``rule`` take their
ruff spellings (``--extend-select``, ``--output-format``, ``--force-exclude``, ...) silently (``ruff_spellings=True``):
pre-commit configs and scripts written for ruff pass them, and a note on every commit would be noise.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from typing import Any

from .errors import MRTPOError

__all__ = [
    "ArgumentParser",
    "task_and_flags",
    "UsageError",
    "add_data_flags",
    "split_name",
    "canonical_spelling",
    "did_you_mean",
    "spelling_note",
]

DATA_HELP = (
    "the task's dataset, passed to its examples function as data, as for train (e.g. a Spider/BIRD folder for "
    "tasks/sql.py); default: the task's bundled data"
)
TASK_OPTION_HELP = (
    "set one of the task's options, e.g. -T semantics=official (repeatable; the task's options, with their types "
    "and defaults, are listed at the end of this command's --help after a TASK_FILE)"
)


class UsageError(MRTPOError):
    """A command-line mistake: an unknown option, a bad value, a missing argument."""


def one_spelling(message: str) -> str:
    """argparse's ``argument --max_steps/--max-steps: ...`` as ``argument --max_steps: ...``: a flag registered in
    both spellings (TRL's parser registers the kebab alias of every field) is named once, in its snake_case form."""
    head, sep, rest = message.partition(": ")
    if sep and head.startswith("argument "):
        names = head[len("argument ") :].split("/")
        if len(names) > 1 and len({n.replace("-", "_") for n in names}) == 1:
            return f"argument {max(names, key=lambda n: n.count('_'))}: {rest}"
    return message


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """``" (did you mean --limit?)"`` for the closest of ``choices``, or ``""`` when none is close."""
    guess = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {guess[0]}?)" if guess else ""


def spelling_note(given: str, canonical: str, why: str = "") -> None:
    """``note: --output-dir is deprecated; use --output_dir`` on stderr (one line)."""
    print(f"note: {given} is deprecated; use {canonical}{why}", file=sys.stderr, flush=True)


def canonical_spelling(arg: str, known: Sequence[str] | set[str], *, prefixes: bool = False) -> str | None:
    """``--output_dir=x`` for ``--output-dir=x`` when ``--output_dir`` is one of ``known`` (or, with ``prefixes``,
    the start of one, as argparse's abbreviations), else ``None`` (not an option, or already snake_case)."""
    if not arg.startswith("--") or len(arg) < 3:
        return None
    name, eq, value = arg.partition("=")
    if "-" not in name[2:]:
        return None
    snake = "--" + name[2:].replace("-", "_")
    if snake in known:
        return snake + eq + value
    matches = [k for k in known if k.startswith(snake)] if prefixes else []
    if len(matches) == 1:  # an abbreviation argparse would take: named in full
        return matches[0] + eq + value
    return None


class ArgumentParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose errors are one :class:`UsageError` line naming the closest option.

    Options are declared in snake_case; their kebab spelling is accepted with a deprecation note (silently with
    ``ruff_spellings=True``)."""

    def __init__(self, *args: Any, ruff_spellings: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ruff_spellings = ruff_spellings

    def canonical_args(self, args: Sequence[str]) -> list[str]:
        """``args`` with every kebab spelling of an option replaced by its snake_case name (a note on stderr for
        each, unless it is a ruff spelling of lint); nothing after ``--`` is touched."""
        known = {o for o in self._option_string_actions if o.startswith("--")}
        out: list[str] = []
        args = list(args)
        for i, arg in enumerate(args):
            if arg == "--":
                return out + args[i:]
            snake = canonical_spelling(arg, known, prefixes=self.allow_abbrev)
            if snake is not None:
                if not self.ruff_spellings:
                    spelling_note(arg.partition("=")[0], snake.partition("=")[0])
                arg = snake
            out.append(arg)
        return out

    def _hint(self) -> str:
        return f"(all options: {self.prog} --help)"

    def error(self, message: str):  # type: ignore[override]  # argparse: bad value, missing argument, ...
        if message.startswith("unrecognized arguments: "):
            message = self.unknown_message(message[len("unrecognized arguments: ") :].split(" "))
            raise UsageError(message)
        raise UsageError(f"{one_spelling(message)} {self._hint()}")

    def unknown_message(self, extras: Sequence[str]) -> str:
        """``unknown option: --limt (did you mean --limit?)``, and the arguments that are not options."""
        known = [o for o in self._option_string_actions if o.startswith("--")]
        options = [a for a in extras if a.startswith("-") and len(a) > 1]
        if options:  # the words after an unknown option are most likely its value: not named apart
            named = [a + did_you_mean(a.split("=", 1)[0], known) for a in options]
            return f"unknown option{'s' if len(options) > 1 else ''}: {', '.join(named)} {self._hint()}"
        return f"unexpected argument{'s' if len(extras) > 1 else ''}: {' '.join(extras)} {self._hint()}"

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        args = sys.argv[1:] if args is None else args
        return super().parse_known_args(self.canonical_args(args), namespace)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            raise UsageError(self.unknown_message(extras))
        return ns


def split_name(value: str) -> str:
    """``--split``'s type: a split name, refused when empty or blank (which would otherwise mean the default split).

    Raises:
        argparse.ArgumentTypeError: ``value`` is empty or only whitespace.
    """
    if not value.strip():
        raise argparse.ArgumentTypeError("a split name cannot be empty or blank: name one of the task's splits, or "
                                         "drop the flag for its default")
    return value


def add_data_flags(p: argparse.ArgumentParser, *, split_default: str | None, split_help: str) -> None:
    """``--split`` (which split the examples come from), ``--data`` (another dataset) and ``-T KEY=VALUE`` (the
    task's options, as ``args.task_option``: a list), as ``check``, ``explain`` and ``eval`` take them."""
    p.add_argument("--split", type=split_name, default=split_default, help=split_help)
    p.add_argument("--data", default=None, help=DATA_HELP)
    p.add_argument(
        "-T", "--task_option", action="append", default=None, metavar="KEY=VALUE", help=TASK_OPTION_HELP
    )


def task_and_flags(rest: list[str]) -> tuple[str | None, list[str], bool]:
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
