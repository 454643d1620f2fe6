"""The trainer: `MRTPOConfig` + `MRTPOTrainer` over TRL's GRPO."""

from .config import ALGORITHMS, MRTPOConfig
from .trainer import MRTPOTrainer, task_dataset

__all__ = ["ALGORITHMS", "MRTPOConfig", "MRTPOTrainer", "task_dataset"]
