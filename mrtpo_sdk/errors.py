"""Errors raised for user mistakes.

Every error a user can cause (a bad task file, a verifier that breaks its contract, a bad data path) is an
:class:`MRTPOError` whose message is one line naming the file, line or field and what to do. The CLI prints that
line and exits with status 2 instead of a traceback (``mrtpo-sdk --debug ...`` or ``MRTPO_DEBUG=1``: the full
traceback instead). A :class:`VerifierError` during ``train`` or ``eval`` also writes
``OUTPUT_DIR/errors/<step>-<verifier>.txt`` (traceback, the verifier's file:line, example id, completion).
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path
from typing import Any

__all__ = [
    "DecidingError",
    "MRTPOError",
    "TaskLoadError",
    "TrainingInterrupted",
    "VerifierError",
    "VerifierContractError",
    "VerifierTimeout",
    "display_path",
]


def display_path(path: str) -> str:
    """``path`` relative to the working folder when it is under it, else as it is (file:line in error messages)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith("..") else rel


class MRTPOError(Exception):
    """Base class of the errors a user can cause; ``str(error)`` is one actionable line."""


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped by Ctrl-C (a ``KeyboardInterrupt``, so ``except KeyboardInterrupt`` still catches it).

    ``str(error)`` is one line: the step reached and how to continue (the latest complete checkpoint, or that none
    was saved); ``run.json`` records ``status: "interrupted"`` at that step.

    Attributes:
        step: the optimizer steps done when it stopped (``global_step``).
    """

    def __init__(self, message: str, *, step: int) -> None:
        super().__init__(message)
        self.step = step


class TaskLoadError(MRTPOError):
    """A task file could not be found, imported, or holds no (or several) tasks."""


class VerifierError(MRTPOError):
    """A verifier raised while scoring a completion.

    ``str(error)`` is one line; the full story (traceback, the verifier's file:line, the example id and the
    completion) goes to a file with :meth:`write_details`, which then ends the line with ``(details: PATH)``.

    Attributes:
        task: name of the task.
        verifier: name of the verifier that raised.
        example_id: id of the example being scored.
        completion: the completion text being scored (``None`` when not known).
        source: ``"FILE:LINE"`` where the verifier function is defined (``None`` when not known).
        raised_at: ``"FILE:LINE"`` of the innermost frame of the verifier's own file in the traceback (else the
            innermost frame), ``None`` for a broken contract (the verifier returned; nothing raised).
        details_path: the file written by :meth:`write_details` (``None`` before).
    """

    def __init__(
        self,
        message: str,
        *,
        task: str,
        verifier: str,
        example_id: str,
        completion: str | None = None,
        source: str | None = None,
        raised_at: str | None = None,
    ) -> None:
        super().__init__(message)
        self.task = task
        self.verifier = verifier
        self.example_id = example_id
        self.completion = completion
        self.source = source
        self.raised_at = raised_at
        self.details_path: Path | None = None

    def details(self, *, step: int | str | None = None, example: Any = None) -> str:
        """The text of the details file: what failed, where, on which completion, and the full traceback."""
        lines = [
            f"error: {self.args[0] if self.args else ''}",
            "",
            f"task:      {self.task}",
            f"verifier:  {self.verifier}" + (f" (defined at {self.source})" if self.source else ""),
        ]
        if self.raised_at:
            lines.append(f"raised at: {self.raised_at}")
        if step is not None:
            lines.append(f"step:      {step}")
        lines.append(f"example:   {self.example_id}")
        if example is not None:
            text = repr(example)
            lines.append(f"example value: {text[:2000]}" + (" ..." if len(text) > 2000 else ""))
        lines += ["", f"completion ({len(self.completion or '')} characters, between the lines):", "-" * 72]
        lines += [self.completion if self.completion is not None else "(not known)", "-" * 72, "", "traceback:"]
        lines.append("".join(traceback.format_exception(type(self), self, self.__traceback__)).rstrip())
        return "\n".join(lines) + "\n"

    def write_details(self, folder: str | Path, *, step: int | str, example: Any = None) -> Path | None:
        """Write :meth:`details` to ``folder/errors/<step>-<verifier>.txt`` and end the message with
        ``(details: PATH)``. Never raises: a folder that cannot be written leaves the message as it is and
        returns ``None``."""
        try:
            errors = Path(folder) / "errors"
            errors.mkdir(parents=True, exist_ok=True)
            path = errors / f"{step}-{self.verifier}.txt"
            n = 2
            while path.exists():  # e.g. a resumed run failing again at the same step: keep both
                path = errors / f"{step}-{self.verifier}-{n}.txt"
                n += 1
            path.write_text(self.details(step=step, example=example), encoding="utf-8")
        except Exception:  # the one line must survive whatever happens here
            return None
        self.details_path = path
        self.args = (f"{self.args[0] if self.args else ''} (details: {path})",)
        return path


class VerifierTimeout(VerifierError):
    """A verifier ran past its time limit (``Verifier(time_limit=...)``) on one completion.

    ``train`` scores such a completion with the verifier's ``failure_reward`` and a block saying what happened
    (the run goes on); ``check``, ``lint`` and ``eval`` report it as this one line.

    Attributes:
        seconds: the limit that was passed.
    """

    def __init__(self, message: str, *, seconds: float, **ids: Any) -> None:
        super().__init__(message, **ids)
        self.seconds = seconds


class VerifierContractError(VerifierError):
    """A verifier returned something other than one finite reward and one block (or ``None``)."""


class DecidingError(VerifierError):
    """A verifier's ``deciding`` function (:class:`~mrtpo_sdk.Verifier`) raised, ran past the verifier's time limit,
    or returned something other than character spans of the completion.

    Only the credit diagnostics call ``deciding`` (``mrtpo-sdk explain``, ``benchmarks/credit_concentration.py``);
    they report the pair as "not located" with this one line, and go on.
    """
