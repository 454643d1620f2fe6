"""The argument parser of every subcommand but ``train`` (whose parser is TRL's, see :mod:`mrtpo_sdk.trainer.cli`).

A mistake on the command line is one line, as ``train`` prints it, never argparse's usage block:

* an unknown option: ``unknown option: --limt (did you mean --limit?) (all options: mrtpo-sdk check --help)``;
* a bad value, a missing argument: ``argument --limit: invalid int value: 'x' (all options: mrtpo-sdk check
  --help)``.

The parser raises :class:`UsageError` (an :class:`~mrtpo_sdk.errors.MRTPOError`); ``mrtpo-sdk``'s ``main`` prints
it as ``error: ...`` and exits 2. ``--help`` still prints the help and exits 0 (``SystemExit(0)``).
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from typing import Any

from .errors import MRTPOError

__all__ = ["ArgumentParser", "UsageError", "add_data_flags", "did_you_mean"]

DATA_HELP = "point the task's loader at another dataset, as for train"


class UsageError(MRTPOError):
    """A command-line mistake: an unknown option, a bad value, a missing argument."""


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """``" (did you mean --limit?)"`` for the closest of ``choices``, or ``""`` when none is close."""
    guess = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {guess[0]}?)" if guess else ""


class ArgumentParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose errors are one :class:`UsageError` line naming the closest option."""

    def _hint(self) -> str:
        return f"(all options: {self.prog} --help)"

    def error(self, message: str):  # type: ignore[override]  # argparse: bad value, missing argument, ...
        if message.startswith("unrecognized arguments: "):
            message = self.unknown_message(message[len("unrecognized arguments: ") :].split(" "))
            raise UsageError(message)
        raise UsageError(f"{message} {self._hint()}")

    def unknown_message(self, extras: Sequence[str]) -> str:
        """``unknown option: --limt (did you mean --limit?)``, and the arguments that are not options."""
        known = [o for o in self._option_string_actions if o.startswith("--")]
        options = [a for a in extras if a.startswith("-") and len(a) > 1]
        if options:  # the words after an unknown option are most likely its value: not named apart
            named = [a + did_you_mean(a.split("=", 1)[0], known) for a in options]
            return f"unknown option{'s' if len(options) > 1 else ''}: {', '.join(named)} {self._hint()}"
        return f"unexpected argument{'s' if len(extras) > 1 else ''}: {' '.join(extras)} {self._hint()}"

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            raise UsageError(self.unknown_message(extras))
        return ns


def add_data_flags(p: argparse.ArgumentParser, *, split_default: str | None, split_help: str) -> None:
    """``--split`` (which split the examples come from) and ``--data`` (another dataset), as ``check``, ``explain``
    and ``eval`` take them."""
    p.add_argument("--split", default=split_default, help=split_help)
    p.add_argument("--data", default=None, help=DATA_HELP)
