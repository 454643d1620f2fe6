"""Where the bundled tasks and templates are: the source checkout's ``tasks/`` and ``templates/`` (the source of
truth), or their copies inside an installed wheel (``mrtpo_sdk/_bundled/``, written by ``setup.py``'s ``build_py``).

A bundled task can be named instead of a path: ``mrtpo-sdk train sql``, ``mrtpo-sdk lint bfcl``.
"""

from __future__ import annotations

from pathlib import Path

from .errors import MRTPOError

__all__ = ["BUNDLED_TASKS", "bundled_dir", "bundled_task_file"]

#: Bundled task names -> their file in ``tasks/``.
BUNDLED_TASKS = {
    "sql": "sql.py",
    "instruction_following": "instruction_following.py",
    "bfcl": "bfcl.py",
    "long_form": "long_form.py",
}
_ALIASES = {
    "instruction-following": "instruction_following",
    "ifeval": "instruction_following",
    "if": "instruction_following",
    "long-form": "long_form",
}

_PACKAGE = Path(__file__).resolve().parent


def bundled_dir(kind: str) -> Path:
    """``tasks`` or ``templates``: the checkout's folder when the package runs from a source checkout, else the
    wheel's copy.

    Raises:
        MRTPOError: neither exists (an install from a wheel built without them).
    """
    if kind not in ("tasks", "templates"):
        raise ValueError(f"kind must be 'tasks' or 'templates', got {kind!r}")
    checkout = _PACKAGE.parent / kind
    if (_PACKAGE.parent / "pyproject.toml").is_file() and checkout.is_dir():
        return checkout
    installed = _PACKAGE / "_bundled" / kind
    if installed.is_dir():
        return installed
    raise MRTPOError(
        f"cannot find the bundled {kind}/ of mrtpo-sdk (looked in {checkout} and {installed}); reinstall mrtpo-sdk "
        f"(pip install mrtpo-sdk) or run from a source checkout"
    )


def bundled_task_file(name: str) -> Path | None:
    """The file of bundled task ``name`` (``sql``, ``instruction_following``/``ifeval``, ``bfcl``, ``long_form``), else ``None``."""
    key = _ALIASES.get(name, name)
    if key not in BUNDLED_TASKS:
        return None
    return bundled_dir("tasks") / BUNDLED_TASKS[key]
