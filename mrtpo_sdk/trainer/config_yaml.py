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
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
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
            _check_node(root, "", where)
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
    return values


def _yaml_error(where: str, exc: yaml.YAMLError) -> str:
    """``--config c.yaml:2:1: not valid YAML: expected ... (while parsing a flow node)``."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None or not getattr(exc, "problem", None):
        return f"{where}: not valid YAML ({' '.join(str(exc).split())})"
    context = f" ({exc.context})" if getattr(exc, "context", None) else ""
    return f"{where}:{mark.line + 1}:{mark.column + 1}: not valid YAML: {exc.problem}{context}"


def _check_node(node: yaml.Node, key_path: str, where: str) -> None:
    """Refuse a repeated key or a plain scalar whose YAML 1.1 reading differs, anywhere under ``node``."""
    if isinstance(node, yaml.ScalarNode):
        _check_scalar(node, key_path, where)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_node(item, f"{key_path}[{i}]", where)
    elif isinstance(node, yaml.MappingNode):
        first_line: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                _check_node(value_node, key_path, where)
                continue
            key = None
            if isinstance(key_node, yaml.ScalarNode):
                _check_scalar(key_node, key_path, where, is_key=True)
                key = _core_value(key_node)
            name = f"{key_path}.{key}" if key_path else str(key)
            line = key_node.start_mark.line + 1
            if key is not None and _hashable(key) and key in first_line:
                raise MRTPOError(f"{where}:{line}: {name} is given twice (lines {first_line[key]} and {line}); "
                                 f"keep one")
            if key is not None and _hashable(key):
                first_line[key] = line
            _check_node(value_node, name, where)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _core_value(node: yaml.ScalarNode) -> Any:
    return _CoreSchemaLoader("").construct_object(node, deep=True)


def _yaml11_value(node: yaml.ScalarNode) -> Any:
    """How PyYAML (YAML 1.1) reads the plain scalar ``node``; its text where it has no constructor (``=``)."""
    tag = yaml.SafeLoader("").resolve(yaml.ScalarNode, node.value, (True, False))
    constructor = yaml.SafeLoader.yaml_constructors.get(tag)
    try:
        return constructor(yaml.SafeLoader(""), yaml.ScalarNode(tag, node.value)) if constructor else node.value
    except (ValueError, yaml.YAMLError):
        return node.value


def _check_scalar(node: yaml.ScalarNode, key_path: str, where: str, is_key: bool = False) -> None:
    if node.style is not None or node.tag not in {_BOOL, _INT, _FLOAT, _NULL, "tag:yaml.org,2002:str"}:
        return  # quoted, or an explicit tag: read alike by both
    old, new = _yaml11_value(node), _core_value(node)
    if isinstance(old, (str, datetime.date)) or _same(old, new):
        return  # text (or a date, no setting's value) in YAML 1.1: YAML 1.2's reading is the one meant
    text = node.value
    shown_old, shown_new = _shown(old), _shown(new)
    if isinstance(new, str):
        kind = "boolean" if isinstance(old, bool) else "number"
        fix = f'{shown_old} for the {kind}, or "{text}" for the text'
    else:
        fix = f"{shown_old} or {shown_new}"
    line = node.start_mark.line + 1
    subject = f"key {text}" if is_key else (f"{key_path}: {text}" if key_path else text)
    raise MRTPOError(f"{where}:{line}: {subject} is {shown_old} in YAML 1.1 but {shown_new} in YAML 1.2; write {fix}")


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
