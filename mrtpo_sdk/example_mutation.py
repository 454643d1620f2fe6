"""Example mutation: a verifier must only read its example. Shared by ``lint``, ``check`` (through
:mod:`mrtpo_sdk.authoring.verifier_checks`) and the trainer, which scores every completion of a group against the
same example object: :func:`snapshot` before scoring, :func:`changed` after, :class:`ExampleMutatedError` when they
differ. Nothing here imports torch.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from .errors import VerifierContractError
from .verifier import Result

__all__ = ["ExampleMutatedError", "changed", "mutation_message", "snapshot"]

_NOT_COPYABLE = object()


class ExampleMutatedError(VerifierContractError):
    """A verifier changed the example it scored (found by comparing a deep copy taken before the call).

    Attributes:
        result: what the verifier returned on that call (its contract is otherwise kept).
        change: the first difference, e.g. ``"example['seen'] was missing, now True"``.
    """

    result: Result | None = None
    change: str = ""


def snapshot(example: Any) -> Any:
    """A deep copy of ``example`` to compare with after scoring; a sentinel when it cannot be copied (e.g. it
    holds an open connection), in which case :func:`changed` finds nothing."""
    try:
        return copy.deepcopy(example)
    except Exception:
        return _NOT_COPYABLE


def _short(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text[:60] + "..." if len(text) > 60 else text


def _fields(obj: Any) -> dict[str, Any] | None:
    """The attributes of a plain object or dataclass (``None`` for values compared with ``==``)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if hasattr(obj, f.name)}
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        cached = {n for n, a in vars(type(obj)).items() if isinstance(a, functools.cached_property)}
        out = {n: v for n, v in vars(obj).items() if n not in cached}  # a cached property is not a change
        for name in getattr(type(obj), "__slots__", ()):
            if hasattr(obj, name):
                out[name] = getattr(obj, name)
        return out
    slots = getattr(type(obj), "__slots__", None)
    if slots and type(obj).__eq__ is object.__eq__:
        return {name: getattr(obj, name) for name in slots if hasattr(obj, name)}
    return None


def changed(before: Any, after: Any, path: str = "example", _depth: int = 0) -> str | None:
    """Where ``after`` differs from ``before`` (a :func:`snapshot`): e.g. ``"example['seen'] was missing, now
    True"``; ``None`` when they are the same (or ``before`` could not be copied)."""
    if before is _NOT_COPYABLE or _depth > 40:
        return None
    if type(before) is not type(after):
        return f"{path} was {_short(before)}, now {_short(after)}"
    if isinstance(before, Mapping):
        for key in before:
            if key not in after:
                return f"{path}[{key!r}] was {_short(before[key])}, now missing"
        for key in after:
            if key not in before:
                return f"{path}[{key!r}] was missing, now {_short(after[key])}"
        for key in before:
            found = changed(before[key], after[key], f"{path}[{key!r}]", _depth + 1)
            if found:
                return found
        return None
    if isinstance(before, (list, tuple)):
        if len(before) != len(after):
            return f"len({path}) was {len(before)}, now {len(after)}"
        for i, (b, a) in enumerate(zip(before, after)):
            found = changed(b, a, f"{path}[{i}]", _depth + 1)
            if found:
                return found
        return None
    fields_before = _fields(before)
    if fields_before is not None:
        fields_after = _fields(after) or {}
        for name in sorted(set(fields_before) | set(fields_after)):
            if name not in fields_after:
                return f"{path}.{name} was {_short(fields_before[name])}, now missing"
            if name not in fields_before:
                return f"{path}.{name} was missing, now {_short(fields_after[name])}"
            found = changed(fields_before[name], fields_after[name], f"{path}.{name}", _depth + 1)
            if found:
                return found
        return None
    try:
        same = bool(before == after)
    except Exception:  # e.g. an array: compare the text
        same = repr(before) == repr(after)
    if same or (before != before and after != after):  # nan == nan
        return None
    return f"{path} was {_short(before)}, now {_short(after)}"


def mutation_message(where: str, diff: str, location: str | None = None) -> str:
    """The one line for a verifier that changed its example (the same in lint, check and train)."""
    return (
        f"{where}: changed its example ({diff}); a verifier must only read the example: every completion "
        f"of a group is scored against the same example, so copy what you need to change"
        + (f" (verifier at {location})" if location else "")
    )
