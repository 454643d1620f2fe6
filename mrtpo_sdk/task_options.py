"""A task's options: the parameters of its examples function beyond ``split`` and ``data``.

.. code-block:: python

    def examples(split="train", data=None, semantics: Semantics = "training", synthetic: bool = True):
        \"\"\"...

        Args:
            semantics: how the rewards score answers.
            synthetic: add the templated questions to the training split.
        \"\"\"

A task declares an option by giving its examples function a parameter with a default; the annotation is its type
(else the default's type) and the parameter's entry in the function's docstring (``Args:``, Google style) is its
help. ``mrtpo-sdk train|eval|check|explain|compare TASK -T semantics=official -T synthetic=false`` sets them: the
SDK checks each name against the declared ones and parses each value by its type (:class:`TaskOption`), so a task
file never parses an option string; ``train TASK --help`` lists them and ``run.json`` records their values
(``task_options``). From Python: ``load_task("tasks/sql.py", options={"semantics": "official"})`` or
``task.with_options(semantics="official")``.

Types: ``bool`` (``true``/``false``, ``yes``/``no``, ``on``/``off``, ``1``/``0``, any case), ``int``, ``float``,
``str``, ``Literal["a", "b"]`` (one of the choices, exactly), a tuple or list of one of these (comma-separated:
``-T categories=simple,multiple``), and any of them ``| None`` (the default may be ``None``, e.g. "decided by
``--data``"; a value given on the command line is of the type itself).
"""

from __future__ import annotations

import functools
import inspect
import re
import textwrap
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Any, Literal, Union

from ._argparse import did_you_mean
from .errors import MRTPOError

__all__ = [
    "RESERVED_PARAMETERS",
    "TaskOption",
    "TaskOptionError",
    "declared_options",
    "describe_options",
    "format_value",
    "parse_assignments",
    "resolve_options",
]

RESERVED_PARAMETERS = ("split", "data")
"""The parameters of an examples function that are not options: the split asked for, and ``--data``."""

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
_SCALARS = (bool, int, float, str)


class TaskOptionError(MRTPOError):
    """An option given to a task that it does not declare, or a value not of the option's type (one line)."""


@dataclass(frozen=True)
class TaskOption:
    """One option of a task.

    Attributes:
        name: the parameter's name (``-T name=value``).
        kind: the value type: ``bool``, ``int``, ``float``, ``str``, or a tuple of the allowed strings (a
            ``Literal``).
        default: the parameter's default (``None`` where the task decides, e.g. by ``--data``).
        help: its entry in the examples function's docstring (``""`` when it has none).
        sequence: ``tuple`` or ``list`` when the option is a comma-separated sequence of ``kind``, else ``None``.
        optional: the annotation allows ``None``.
    """

    name: str
    kind: Any
    default: Any
    help: str = ""
    sequence: type | None = None
    optional: bool = False

    @property
    def type_text(self) -> str:
        """``bool``, ``int``, ``training|official``, ``comma-separated str``: the type as help and errors name it."""
        one = "|".join(self.kind) if isinstance(self.kind, tuple) else self.kind.__name__
        return f"comma-separated {one}" if self.sequence is not None else one

    @property
    def default_text(self) -> str:
        """The default as ``-T`` spells it (``true``, ``training``, ``a,b``); ``None`` as ``none``."""
        return format_value(self.default)

    def parse(self, text: str) -> Any:
        """The value of ``-T name=text``.

        Raises:
            ValueError: ``text`` is not of the option's type (the message says what it should be).
        """
        if self.sequence is not None:
            items = [item.strip() for item in text.split(",")]
            if not all(items):
                raise ValueError(f"a comma-separated list of {self._one_text()} without empty items")
            return self.sequence(self._parse_one(item) for item in items)
        return self._parse_one(text.strip())

    def check(self, value: Any) -> Any:
        """A value given from Python: text is parsed as ``-T`` would; anything else must be of the type.

        Raises:
            ValueError: the value is not of the option's type.
        """
        if isinstance(value, str) and not (self.kind is str and self.sequence is None):
            return self.parse(value)
        if value is None:
            if self.optional or self.default is None:
                return None
            raise ValueError(self._expects())
        if self.sequence is not None:
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise ValueError(self._expects())
            return self.sequence(self._check_one(item) for item in value)
        return self._check_one(value)

    def _one_text(self) -> str:
        return "|".join(self.kind) if isinstance(self.kind, tuple) else self.kind.__name__

    def _expects(self) -> str:
        if self.sequence is not None:
            return f"a comma-separated list of {self._one_text()}"
        if self.kind is bool:
            return "a bool (true or false)"
        if isinstance(self.kind, tuple):
            return f"one of {', '.join(self.kind)}"
        return {"int": "a whole number", "float": "a number", "str": "text"}[self.kind.__name__]

    def _parse_one(self, text: str) -> Any:
        if self.kind is bool:
            low = text.lower()
            if low in _TRUE or low in _FALSE:
                return low in _TRUE
            raise ValueError(self._expects())
        if isinstance(self.kind, tuple):
            if text in self.kind:
                return text
            same = [c for c in self.kind if c.lower() == text.lower()]
            hint = f" (did you mean {same[0]}?)" if same else did_you_mean(text, self.kind)
            raise ValueError(self._expects() + hint)
        if self.kind is int:
            if re.fullmatch(r"[+-]?\d+", text):
                return int(text)
            raise ValueError(self._expects())
        if self.kind is float:
            try:
                return float(text)
            except ValueError:
                raise ValueError(self._expects()) from None
        return text

    def _check_one(self, value: Any) -> Any:
        if self.kind is bool:
            ok = isinstance(value, bool)
        elif self.kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif self.kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            value = float(value) if ok else value
        elif isinstance(self.kind, tuple):
            ok = isinstance(value, str) and value in self.kind
        else:
            ok = isinstance(value, str)
        if not ok:
            raise ValueError(self._expects())
        return value


def format_value(value: Any) -> str:
    """A value as ``-T`` spells it: ``true``/``false``, ``a,b`` for a sequence, ``none`` for ``None``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(format_value(v) for v in value)
    return str(value)


def _docstring_args(fn: Callable[..., Any]) -> dict[str, str]:
    """``{parameter: help}`` from the ``Args:`` section of ``fn``'s docstring (Google style; continuation lines
    indented deeper than the entry)."""
    doc = inspect.getdoc(fn) or ""
    out: dict[str, str] = {}
    lines = doc.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() in ("Args:", "Arguments:", "Parameters:"))
    except StopIteration:
        return out
    base = len(lines[start]) - len(lines[start].lstrip())
    entry_indent, name = None, None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= base:
            break  # the next section
        match = re.match(r"\s*\*{0,2}([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line)
        if match and (entry_indent is None or indent <= entry_indent):
            entry_indent, name = indent, match.group(1)
            out[name] = match.group(2).strip()
        elif name is not None:
            out[name] = f"{out[name]} {line.strip()}".strip()
    return out


def _kind(annotation: Any, default: Any, where: str) -> tuple[Any, type | None, bool]:
    """``(kind, sequence, optional)`` of a parameter's annotation (or, without one, of its default)."""
    if annotation is inspect.Parameter.empty:
        if default is None:
            raise MRTPOError(f"{where} defaults to None and has no annotation; annotate its type (e.g. bool | None)")
        annotation = type(default) if not isinstance(default, list) else list[str]
        if isinstance(default, tuple):
            annotation = tuple[str, ...]
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (Union, UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        if len(args) != 1:
            raise MRTPOError(f"{where}: a task option has one type (or that type | None), got {annotation}")
        annotation = args[0]
        origin = typing.get_origin(annotation)
    sequence = None
    if origin in (tuple, list):
        args = typing.get_args(annotation)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            raise MRTPOError(f"{where}: a tuple option is tuple[X, ...], got {annotation}")
        sequence, annotation = origin, args[0] if args else str
        origin = typing.get_origin(annotation)
    if origin is Literal:
        choices = typing.get_args(annotation)
        if not all(isinstance(c, str) for c in choices):
            raise MRTPOError(f"{where}: a Literal option's choices are strings, got {choices}")
        return tuple(choices), sequence, optional
    if annotation in _SCALARS:
        return annotation, sequence, optional
    raise MRTPOError(
        f"{where} has type {annotation}; a task option is bool, int, float, str, a Literal of strings, a tuple or "
        f"list of one of these, or one of these | None"
    )


def _evaluate(text: str, fn: Callable[..., Any]) -> Any:
    """A postponed annotation, evaluated in ``fn``'s module (with ``typing``'s names); when it names something
    only ``fn``'s enclosing scope knows, the default's type stands in (no annotation)."""
    namespace = {**vars(typing), **getattr(inspect.unwrap(fn), "__globals__", {})}
    try:
        return eval(text, namespace)  # noqa: S307 - the task file's own annotation, as typing.get_type_hints does
    except Exception:  # noqa: BLE001
        return inspect.Parameter.empty


def declared_options(fn: Callable[..., Any] | None, *, task: str = "") -> dict[str, TaskOption]:
    """The options an examples function declares: each parameter beyond ``split`` and ``data`` (no ``*args`` or
    ``**kwargs``, nor the keywords a ``functools.partial`` binds), in order.

    Raises:
        MRTPOError: a parameter has no default, or a type options do not take (the line names the function's file,
            line and parameter).
    """
    if fn is None or not callable(fn):
        return {}
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    target = fn.func if isinstance(fn, functools.partial) else fn
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: each is read on its own below
        hints = {}
    try:
        code = inspect.unwrap(target).__code__
        at = f"{code.co_filename}:{code.co_firstlineno}: "
    except AttributeError:
        at = ""
    helps = _docstring_args(fn)
    bound = set(fn.keywords) if isinstance(fn, functools.partial) else set()  # fixed by the task's author
    out: dict[str, TaskOption] = {}
    for name, param in params.items():
        if name in RESERVED_PARAMETERS or name in bound or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        where = f"{at}task {task!r}: examples parameter {name!r}" if task else f"{at}examples parameter {name!r}"
        if param.default is inspect.Parameter.empty:
            raise MRTPOError(
                f"{where} has no default; the examples function takes split, data and the task's options, each with "
                f"a default (e.g. {name}: bool = False)"
            )
        annotation = hints.get(name, param.annotation)
        if isinstance(annotation, str):  # postponed (from __future__ import annotations) and not resolved above
            annotation = _evaluate(annotation, target)
        kind, sequence, optional = _kind(annotation, param.default, where)
        option = TaskOption(name, kind, param.default, helps.get(name, ""), sequence, optional)
        if param.default is not None:
            try:
                option.check(param.default)
            except ValueError as exc:
                raise MRTPOError(f"{where}: its default {param.default!r} is not {exc}") from None
        out[name] = option
    return out


def parse_assignments(items: Sequence[str] | None, *, flag: str = "-T") -> dict[str, str]:
    """``["semantics=official", "synthetic=false"]`` -> ``{"semantics": "official", "synthetic": "false"}``.

    Raises:
        TaskOptionError: an item without ``=`` or without a name, or one name given twice with different values.
    """
    out: dict[str, str] = {}
    for item in items or ():
        name, eq, value = str(item).partition("=")
        name = name.strip()
        if not eq or not name:
            raise TaskOptionError(f"{flag} {item}: give KEY=VALUE, e.g. {flag} semantics=official")
        if name in out and out[name] != value:
            raise TaskOptionError(
                f"{flag} {name}={out[name]} and {flag} {name}={value} disagree; give the option once"
            )
        out[name] = value
    return out


def resolve_options(
    options: Mapping[str, TaskOption], given: Mapping[str, Any] | None, *, task: str, flag: str = "-T"
) -> dict[str, Any]:
    """Every option's value: its default, or the value given (text parsed by the option's type).

    Raises:
        TaskOptionError: a name the task does not declare (with the closest one and the task's options), or a value
            not of its option's type.
    """
    values = {name: option.default for name, option in options.items()}
    for name, value in (given or {}).items():
        if name not in options:
            if not options:
                raise TaskOptionError(f"{flag} {name}=...: task {task!r} takes no options")
            raise TaskOptionError(
                f"{flag} {name}=...: task {task!r} has no option {name!r}{did_you_mean(name, list(options))}; its "
                f"options: {', '.join(options)}"
            )
        option = options[name]
        try:
            values[name] = option.check(value)
        except ValueError as exc:
            raise TaskOptionError(
                f"{flag} {name}={format_value(value) if not isinstance(value, str) else value}: option {name!r} of "
                f"task {task!r} is {exc}"
            ) from None
    return values


def describe_options(options: Mapping[str, TaskOption], width: int = 100) -> list[str]:
    """Help lines, as argparse lays out a flag: ``  -T semantics=training|official`` and, below it, the help and the
    default wrapped at ``width`` columns."""
    lines = []
    for name, option in options.items():
        lines.append(f"  -T {name}={option.type_text}")
        text = f"{option.help} (default: {option.default_text})".strip()
        lines.extend(textwrap.wrap(text, width=width, initial_indent=" " * 8, subsequent_indent=" " * 8))
    return lines
