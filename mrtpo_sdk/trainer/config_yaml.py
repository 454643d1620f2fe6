"""Reading a ``train --config`` file: YAML 1.2 (JSON is a subset), with every value that YAML 1.1 reads otherwise
refused, and every repeated key refused.

TRL's ``TrlParser`` reads the file with PyYAML, which implements YAML 1.1: there ``seed: 010`` is the octal 8,
``top_k: 1:30`` the sexagesimal 90, ``run_name: no`` the boolean false, and ``min_lr: 1e-6`` (no dot) the text
``"1e-6"``; a repeated key keeps its last value. YAML 1.2, the version editors, JSON and most YAML libraries follow,
reads those as 10, the text ``"1:30"``, the text ``"no"`` and the number 1e-6. A file is read here under YAML 1.2's
core schema; a plain value that YAML 1.1 reads as a different boolean or number is refused with both readings and
how to write it so both agree, so no value changes meaning unseen. A value YAML 1.1 keeps as text and YAML 1.2 reads
as a number (``1e-6``) takes the number: the settings parser converts a top-level one to its field's type anyway,
and a nested one (``lr_scheduler_kwargs: {min_lr: 1e-6}``) would otherwise reach the scheduler as text.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import MRTPOError

__all__ = ["load_config_file"]

_BOOL, _INT, _FLOAT, _NULL = (f"tag:yaml.org,2002:{t}" for t in ("bool", "int", "float", "null"))
_REPLACED = {_BOOL, _INT, _FLOAT, "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value"}


class _CoreSchemaLoader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's core schema for plain scalars (YAML 1.2.2, section 10.3.2): booleans
    ``true``/``false`` only; integers in base 10, ``0o`` octal or ``0x`` hex; floats with an optional dot and
    exponent, ``.inf`` and ``.nan``; no sexagesimal, underscore, ``0b``, timestamp or ``=`` forms."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in _REPLACED]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def compose_scalar_node(self, anchor):
        """As PyYAML's, marking a scalar whose tag is written in the file (``!!int 010``): ``node.explicit_tag``."""
        event = self.peek_event()
        node = super().compose_scalar_node(anchor)
        node.explicit_tag = event.tag not in (None, "!")
        return node

    def construct_core_int(self, node: yaml.ScalarNode) -> int:
        text = self.construct_scalar(node)
        if text.startswith(("0o", "0x")):
            return int(text[2:], 8 if text[1] == "o" else 16)
        return int(text, 10)


_CoreSchemaLoader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_CoreSchemaLoader.add_implicit_resolver(
    _INT, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_CoreSchemaLoader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)
_CoreSchemaLoader.add_constructor(_INT, _CoreSchemaLoader.construct_core_int)


def load_config_file(path: str) -> dict[str, Any]:
    """The settings of a ``--config`` file, read as YAML 1.2 (module docstring).

    Args:
        path: the file, as given to ``--config``.

    Returns:
        The file's mapping, keys as written (``env`` included; TRL's parser applies it).

    Raises:
        MRTPOError: one line naming the file (and the line, for a value or a key): the file is missing or not UTF-8;
            not valid YAML; not a mapping; a key repeated in one mapping (``--config c.yaml:3: seed is given twice
            (lines 1 and 3); keep one``); a plain value YAML 1.1 reads otherwise (``--config c.yaml:1: seed: 010 is 8
            in YAML 1.1 but 10 in YAML 1.2; write 8 or 10``); an ``env`` that is not a mapping of names to values.
    """
    where = f"--config {path}"
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise MRTPOError(f"{where}: no such file") from None
    except UnicodeDecodeError as exc:
        raise MRTPOError(f"{where}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
                         f"save it as UTF-8") from None
    except OSError as exc:
        raise MRTPOError(f"{where}: cannot read it ({exc.strerror})") from None
    try:
        root = yaml.compose(text, Loader=_CoreSchemaLoader)
        if root is not None:
            _check_node(root, "", where, set(), set())
        values = yaml.load(text, Loader=_CoreSchemaLoader)
    except yaml.YAMLError as exc:
        raise MRTPOError(_yaml_error(where, exc)) from None
    if not isinstance(values, dict):
        got = "an empty file" if values is None else ("a list" if isinstance(values, list) else _shown(values))
        raise MRTPOError(f"{where}: the file must be a mapping of settings (max_steps: 10), got {got}")
    env = values.get("env", {})
    if not isinstance(env, dict) or any(isinstance(v, (dict, list)) for v in env.values()):
        raise MRTPOError(f"{where}: env: expected a mapping of environment variables to values "
                         f"(env: {{WANDB_MODE: offline}}), got {json.dumps(env, default=str)}")
    for name in env:
        if not isinstance(name, str) or not name or "=" in name or "\0" in name:
            raise MRTPOError(f"{where}: env: {json.dumps(name, default=str)} is not an environment variable's name "
                             f"(a non-empty name without = or NUL, e.g. WANDB_MODE)")
    return values


def _yaml_error(where: str, exc: yaml.YAMLError) -> str:
    """``--config c.yaml:2:1: not valid YAML: expected ... (while parsing a flow node)``."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None or not getattr(exc, "problem", None):
        return f"{where}: not valid YAML ({' '.join(str(exc).split())})"
    context = f" ({exc.context})" if getattr(exc, "context", None) else ""
    return f"{where}:{mark.line + 1}:{mark.column + 1}: not valid YAML: {exc.problem}{context}"


def _check_node(node: yaml.Node, key_path: str, where: str, open_nodes: set[int], done: set[int]) -> None:
    """Refuse, anywhere under ``node``: a repeated key, a scalar YAML 1.1 reads otherwise, an alias inside the
    collection it names. ``open_nodes``/``done``: the ids of collections being checked / checked (an alias shares
    its anchor's node, which is checked once)."""
    if isinstance(node, yaml.ScalarNode):
        _check_scalar(node, key_path, where)
        return
    if id(node) in open_nodes:
        raise MRTPOError(f"{where}:{node.start_mark.line + 1}: {key_path or 'the file'}: an alias names the "
                         f"mapping or list that holds it; a setting's value cannot contain itself")
    if id(node) in done:
        return
    open_nodes.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_node(item, f"{key_path}[{i}]", where, open_nodes, done)
    elif isinstance(node, yaml.MappingNode):
        first: dict[Any, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                _check_node(value_node, key_path, where, open_nodes, done)
                continue
            key = None
            if isinstance(key_node, yaml.ScalarNode):
                _check_scalar(key_node, key_path, where, is_key=True)
                key = _core_value(key_node, where, key_path)
            name = f"{key_path}.{key}" if key_path else str(key)
            at = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key is not None and _hashable(key) and key in first:
                lines = (f"line {at[0]}, columns {first[key][1]} and {at[1]}" if first[key][0] == at[0]
                         else f"lines {first[key][0]} and {at[0]}")
                raise MRTPOError(f"{where}:{at[0]}: {name} is given twice ({lines}); keep one")
            if key is not None and _hashable(key):
                first[key] = at
            _check_node(value_node, name, where, open_nodes, done)
    open_nodes.discard(id(node))
    done.add(id(node))


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _construct(loader: type, tag: str, text: str) -> Any:
    """The value ``loader``'s constructor for ``tag`` makes of ``text`` (raises ValueError where it cannot)."""
    constructor = loader.yaml_constructors.get(tag)
    if constructor is None:
        return text
    try:
        return constructor(loader(""), yaml.ScalarNode(tag, text))
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _core_value(node: yaml.ScalarNode, where: str = "", key_path: str = "") -> Any:
    """``node``'s value under YAML 1.2's core schema. Raises MRTPOError where its explicit tag does not fit its
    text (``!!int 0b11``, ``!!float abc``)."""
    try:
        return _construct(_CoreSchemaLoader, node.tag, node.value)
    except ValueError:
        raise MRTPOError(f"{where}:{node.start_mark.line + 1}: {_subject(node, key_path)}: {node.value} is not "
                         f"{_KINDS.get(node.tag, 'a value of ' + node.tag)} in YAML 1.2; write {_hint(node)}") from None


_KINDS = {_INT: "an integer", _FLOAT: "a number", _BOOL: "true or false", _NULL: "null"}


def _hint(node: yaml.ScalarNode) -> str:
    try:
        value = _construct(yaml.SafeLoader, node.tag, node.value)
        return f"{_shown(value)} (YAML 1.1's value)"
    except ValueError:
        return "a value of that kind, or drop the tag"


def _subject(node: yaml.ScalarNode, key_path: str, is_key: bool = False) -> str:
    if is_key:
        return f"{key_path}: key {node.value}" if key_path else f"key {node.value}"
    return key_path or node.value


def _yaml11_value(node: yaml.ScalarNode, tag: str | None = None) -> Any:
    """How PyYAML (YAML 1.1, TRL's parser) reads ``node``: by ``tag``, else by the tag it resolves a plain scalar
    to. Raises ValueError (the reason) where it cannot: ``=`` (a tag it has no constructor for), ``2024-13-45``."""
    tag = tag or yaml.SafeLoader("").resolve(yaml.ScalarNode, node.value, (True, False))
    if tag not in yaml.SafeLoader.yaml_constructors:
        raise ValueError(f"it takes it for a {tag.rsplit(':', 1)[1]!r}, which it cannot build")
    return _construct(yaml.SafeLoader, tag, node.value)


def _unreadable(where: str, line: int, subject: str, node: yaml.ScalarNode, reason: ValueError) -> MRTPOError:
    return MRTPOError(f"{where}:{line}: {subject}: {node.value} cannot be read by YAML 1.1, which TRL's parser uses "
                      f'({reason}); write "{node.value}" for the text')


def _check_scalar(node: yaml.ScalarNode, key_path: str, where: str, is_key: bool = False) -> None:
    """Refuse a scalar that YAML 1.1 (PyYAML) reads as another boolean or number than YAML 1.2 does, or cannot read.

    A plain scalar is resolved by each version's own rules; one with an explicit standard tag (``!!int 010``,
    quoted or not) is built by each version's constructor for that tag; a quoted one without a tag is text in both.
    """
    line = node.start_mark.line + 1
    subject = _subject(node, key_path, is_key)
    if getattr(node, "explicit_tag", False):
        if node.tag not in _KINDS:
            return  # !!str, !!binary, a custom tag: read alike by both (a custom tag fails in both)
        new = _core_value(node, where, key_path)
        try:
            old = _yaml11_value(node, node.tag)
        except ValueError as exc:
            raise _unreadable(where, line, subject, node, exc) from None
        if _same(old, new):
            return
        text = f"!!{node.tag.rsplit(':', 1)[1]} {node.value}"
    elif node.style is not None:
        return  # quoted: text in both
    else:
        try:
            old = _yaml11_value(node)
        except ValueError as exc:
            raise _unreadable(where, line, subject, node, exc) from None
        new = _core_value(node, where, key_path)
        if isinstance(old, (str, datetime.date)) or _same(old, new):
            return  # text (or a date, no setting's value) in YAML 1.1: YAML 1.2's reading is the one meant
        text = node.value
    shown_old, shown_new = _shown(old), _shown(new)
    if isinstance(new, str):
        kind = "boolean" if isinstance(old, bool) else "number"
        fix = f'{shown_old} for the {kind}, or "{node.value}" for the text'
    else:
        fix = f"{shown_old} or {shown_new}"
    head = subject if is_key else f"{subject}: {text}"
    raise MRTPOError(f"{where}:{line}: {head} is {shown_old} in YAML 1.1 but {shown_new} in YAML 1.2; write {fix}")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _shown(value: Any) -> str:
    """A value as YAML writes it: true, 8, 90.5, null, or "text"."""
    if isinstance(value, str):
        return f'the text "{value}"'
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
    return json.dumps(value)
