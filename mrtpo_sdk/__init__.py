"""mrtpo-sdk: train language models with RL against several verifiable rewards, with MRTPO.

Public API::

    from mrtpo_sdk import Task, Result, Verifier, verifier, load_task
    from mrtpo_sdk import MRTPOConfig, MRTPOTrainer
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import MRTPOError, TaskLoadError, TrainingInterrupted, VerifierContractError, VerifierError
from .loader import load_task
from .task import Task, example_id
from .verifier import Result, Verifier, verifier

__version__ = "0.1.0"

__all__ = [
    "MRTPOConfig",
    "MRTPOError",
    "MRTPOTrainer",
    "Result",
    "Task",
    "TaskLoadError",
    "TrainingInterrupted",
    "Verifier",
    "VerifierContractError",
    "VerifierError",
    "example_id",
    "load_task",
    "verifier",
]

if TYPE_CHECKING:
    from .trainer import MRTPOConfig, MRTPOTrainer


def __getattr__(name: str) -> Any:
    # The trainer pulls in torch/transformers/trl; import it only when asked for (keeps `lint` and task files fast).
    if name in ("MRTPOConfig", "MRTPOTrainer"):
        from . import trainer

        return getattr(trainer, name)
    raise AttributeError(f"module 'mrtpo_sdk' has no attribute {name!r}")
