"""Errors raised for user mistakes.

Every error a user can cause (a bad task file, a verifier that breaks its contract, a bad data path) is an
:class:`MRTPOError` whose message is one line naming the file, line or field and what to do. The CLI prints that
line and exits with status 2 instead of a traceback.
"""

from __future__ import annotations

__all__ = ["MRTPOError", "TaskLoadError", "VerifierError", "VerifierContractError"]


class MRTPOError(Exception):
    """Base class of the errors a user can cause; ``str(error)`` is one actionable line."""


class TaskLoadError(MRTPOError):
    """A task file could not be found, imported, or holds no (or several) tasks."""


class VerifierError(MRTPOError):
    """A verifier raised while scoring a completion.

    Attributes:
        task: name of the task.
        verifier: name of the verifier that raised.
        example_id: id of the example being scored.
    """

    def __init__(self, message: str, *, task: str, verifier: str, example_id: str) -> None:
        super().__init__(message)
        self.task = task
        self.verifier = verifier
        self.example_id = example_id


class VerifierContractError(VerifierError):
    """A verifier returned something other than one finite reward and one block (or ``None``)."""
