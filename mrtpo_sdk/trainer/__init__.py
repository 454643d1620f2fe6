"""The trainer: `MRTPOConfig` + `MRTPOTrainer` over TRL's GRPO.

The names below import on first use (PEP 562), so ``mrtpo-sdk train`` can check its task file before torch, TRL
and peft load.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ALGORITHMS", "MRTPOConfig", "MRTPOTrainer", "task_dataset"]

_HOME = {"ALGORITHMS": ".algos", "MRTPOConfig": ".config", "MRTPOTrainer": ".trainer", "task_dataset": ".trainer"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name], __name__), name)
    globals()[name] = value
    return value
