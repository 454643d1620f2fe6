"""Evaluation of a policy on a task's held-out split (``mrtpo-sdk eval``, and evaluation during training)."""

from .core import EvalRecord, EvalReport, evaluate_policy, generate_completions, summarize
from .metrics import execution_accuracy, ifeval_accuracy, bfcl_ast_accuracy

__all__ = [
    "EvalRecord",
    "EvalReport",
    "bfcl_ast_accuracy",
    "evaluate_policy",
    "execution_accuracy",
    "generate_completions",
    "ifeval_accuracy",
    "summarize",
]
