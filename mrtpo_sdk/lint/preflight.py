"""The lint rules as ``train``'s preflight warnings: one line per finding on the task about to be trained.

``train`` calls :func:`lint_warnings` before it builds a model, next to the contract checks of
:func:`mrtpo_sdk.authoring.verifier_checks.preflight`; the run goes on whatever it finds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..loader import split_task_spec
from ..task import Task
from .config import ConfigError
from .reporters import display_path
from .runner import lint_task

__all__ = ["LINT_HINT", "lint_warnings"]

SKIPPED = frozenset({"MRT014"})
"""Codes left out: the preflight's own constant-reward line says MRT014."""

LINT_HINT = (
    "lint; silence it with '# noqa: {code}' on line {line}, or ignore = [\"{code}\"] under [tool.mrtpo-sdk.lint] in "
    "pyproject.toml"
)
"""How a warning says where it comes from and how to silence it."""


def lint_warnings(task: Task, examples: Sequence[Any], task_file: str | None) -> list[str]:
    """The lint rules on ``task``, loaded from ``task_file`` (``FILE.py``, ``FILE.py@name`` or a bundled task's
    name), sampled from ``examples`` as ``lint`` samples its split.

    Returns:
        One line per finding, in line order: ``FILE:LINE:COL: CODE message [verifier=..., example=...] (lint;
        silence it with '# noqa: CODE' on line LINE, or ignore = ["CODE"] under [tool.mrtpo-sdk.lint] in
        pyproject.toml)``; a rule that failed is one line with its error. The task file's config and ``# noqa``
        comments apply as in ``lint``; MRT013 (unused noqa) and :data:`SKIPPED` are not run. ``[]`` without a
        task file or examples. A bad ``[tool.mrtpo-sdk.lint]`` section gives one line saying the rules were not
        run.

    No model is built: the verifiers run on the probe completions ``lint`` makes (about as long as ``lint`` on the
    file).
    """
    if task_file is None or not examples:
        return []
    try:
        findings = lint_task(split_task_spec(str(task_file))[0], task, list(examples), skip=SKIPPED)
    except ConfigError as exc:
        return [f"the lint rules were not run: {exc}"]
    return [
        f"{display_path(f.path)}:{f.line}:{f.col}: {f.code} {f.message}{f.context()} "
        f"({LINT_HINT.format(code=f.code, line=f.line)})"
        if f.code
        else f"{display_path(f.path)}:{f.line}:{f.col}: {f.message}"  # a rule that failed: lint says the same
        for f in findings
    ]
