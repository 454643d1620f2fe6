"""``mrtpo-sdk lint``: check task files against the block-writing rules (spec "Rules for writing a block").

.. code-block:: python

    from mrtpo_sdk.lint import lint_paths
    report = lint_paths(["tasks/"])
    report.exit_code          # 0 clean, 1 findings, 2 a file could not be linted
    for f in report.findings: # Finding(code, message, path, line, col, verifier, examples, probe)
        ...

See ``docs/lint.md`` and ``mrtpo-sdk rule --all``.
"""

from .codes import CODES, all_rules, get_rule
from .config import Layer
from .model import Finding, Probe, Rule, TaskContext
from .runner import LintReport, lint_paths, lint_task

__all__ = [
    "CODES",
    "Finding",
    "Layer",
    "LintReport",
    "Probe",
    "Rule",
    "TaskContext",
    "all_rules",
    "get_rule",
    "lint_paths",
    "lint_task",
]
