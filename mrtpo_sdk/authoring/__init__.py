"""Authoring tools: ``mrtpo-sdk new`` (scaffold a task, :mod:`.new`), ``check`` (do the references earn full
reward? :mod:`.check`) and ``explain`` (where does each reward's credit land? :mod:`.explain`), and the verifier
checks that ``lint``, ``check`` and ``train`` share (:mod:`.verifier_checks`). The credit-concentration statistic is
in :mod:`mrtpo_sdk.algorithms.concentration`. The command-line parsers are in :mod:`.cli`.

Public API::

    from mrtpo_sdk.authoring import scaffold, run_check, render_report, preflight
    from mrtpo_sdk.authoring.explain import explain      # imports torch

``new`` and ``check`` never import torch; ``explain`` does.
"""

from .check import CheckReport, ProbeStats, VerifierStats, check_prompts, render_report, report_json, run_check
from .new import TEMPLATES, scaffold
from .verifier_checks import constant_reward_message, preflight, score_unmutated

__all__ = [
    "TEMPLATES",
    "CheckReport",
    "ProbeStats",
    "VerifierStats",
    "check_prompts",
    "constant_reward_message",
    "preflight",
    "render_report",
    "report_json",
    "run_check",
    "scaffold",
    "score_unmutated",
]
