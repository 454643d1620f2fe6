"""Check calls against BFCL possible answers (function names, required parameters, types, acceptable values).

The semantics follow the BFCL AST checker for Python (``bfcl_eval.eval_checker.ast_eval.ast_checker``), read,
not copied, and restated here:

* a possible answer is a list of expected calls ``{function_name: {parameter: [acceptable values]}}``; an
  acceptable value ``""`` means the parameter may be left out; an empty list means "no call is right";
* the calls must match the expected calls one to one, in any order (a bipartite matching; the official checker
  matches greedily, which can miss a matching that exists — see ``docs/bfcl.md``);
* a call matches when: the name is the expected one; every parameter the function doc lists as required is
  given; every given parameter is in the doc and in the possible answer; the values have the doc's types
  (``int`` for ``integer``, ``int`` or ``float`` for ``float``, no ``bool`` for numbers), or the type the possible
  answer itself uses (BFCL's "variable" rule); the values are acceptable — strings compared after removing spaces
  and ``,./-_*^`` and lower-casing, lists element-wise the same way, dicts key by key; and every parameter of the
  possible answer that is not optional is given.

Types (and the structure of nested arrays and objects) are checked with :mod:`jsonschema` against a JSON Schema
built from the function doc (:func:`arguments_schema`); BFCL's own type names (``dict``, ``float``, ``tuple``,
``any``) are mapped to JSON Schema's. ``enum`` is not enforced, because BFCL compares strings case-insensitively.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator

from mrtpo_sdk.toolcall.parse import ToolCall

__all__ = ["CallCheck", "arguments_schema", "check_call", "check_calls", "standardize_string"]

_JSON_TYPE = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
    "object": "object",
    "any": "string",  # BFCL maps "any" to str (its "variable" rule widens it to the answer's type)
}
_PY_TYPE: dict[str, type] = {
    "string": str, "integer": int, "float": float, "number": float, "boolean": bool,
    "array": list, "tuple": list, "dict": dict, "object": dict, "any": str,
}


def _is_int(_checker: Any, x: Any) -> bool:
    return type(x) is int


def _is_number(_checker: Any, x: Any) -> bool:
    return type(x) in (int, float)


_TYPES = Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _is_int, "number": _is_number})
_Validator = jsonschema.validators.extend(Draft202012Validator, type_checker=_TYPES)


@dataclass(frozen=True)
class CallCheck:
    """The verdict on a response's calls.

    Attributes:
        correct: the calls match the possible answer (names and arguments), as the BFCL AST checker decides.
        functions_correct: the called function names equal the expected ones as a multiset (order ignored).
        error: ``""`` when correct; otherwise a noun phrase on the first mismatch found, e.g.
            ``"a call to 'f' whose parameter 'x' is 3, not one of [5]"``.
    """

    correct: bool
    functions_correct: bool
    error: str = ""


def standardize_string(s: str) -> str:
    """BFCL's string normal form: spaces and ``,./-_*^`` removed, lower case, ``'`` turned into ``"``."""
    return re.sub(r"[ ,./\-_*^]", "", s).lower().replace("'", '"')


def arguments_schema(function: Mapping[str, Any], answer: Mapping[str, Sequence[Any]] | None = None) -> dict:
    """A JSON Schema (draft 2020-12) for a function's ``arguments`` object, built from its BFCL doc.

    Args:
        function: the BFCL function doc ``{"name", "description", "parameters": {"type": "dict", ...}}``.
        answer: the possible answer for this function (``{parameter: [acceptable values]}``); a top-level
            parameter's type is widened to the type its acceptable values use (BFCL's "variable" rule).

    Returns:
        a schema with ``type``/``properties``/``items``/``required`` only (descriptions, defaults, enums dropped).
    """
    params = function.get("parameters") or {}
    schema = _convert(params, top=True)
    if answer:
        for name, sub in schema.get("properties", {}).items():
            acceptable = list(answer.get(name, ()))
            _widen(sub, [_answer_type(acceptable)])
            if isinstance(sub.get("items"), dict):  # array items: also the item types the answer uses
                _widen(sub["items"], [type(v) for a in acceptable if isinstance(a, list) for v in a])
    return schema


def _widen(sub: dict, types: list) -> None:
    if "type" not in sub:
        return
    have = sub["type"] if isinstance(sub["type"], list) else [sub["type"]]
    for t in types:
        extra = _JSON_TYPE_OF_PY.get(t)
        if extra and extra not in have:
            have.append(extra)
    sub["type"] = have[0] if len(have) == 1 else have


_JSON_TYPE_OF_PY = {
    str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object", type(None): "null",
}


def _convert(p: Any, top: bool = False) -> dict:
    if not isinstance(p, Mapping):
        return {}
    out: dict[str, Any] = {}
    t = p.get("type")
    if isinstance(t, str) and t in _JSON_TYPE:
        out["type"] = "object" if top else _JSON_TYPE[t]
    props = p.get("properties")
    if isinstance(props, Mapping):
        out["properties"] = {str(k): _convert(v) for k, v in props.items()}
    items = p.get("items")
    if isinstance(items, Mapping):
        out["items"] = _convert(items)
    req = p.get("required")
    if isinstance(req, list) and all(isinstance(r, str) for r in req) and top:
        out["required"] = list(req)
    return out


def _answer_type(acceptable: Sequence[Any]) -> type | None:
    for a in acceptable:
        if a != "":
            return type(a)
    return None


def check_calls(
    functions: Sequence[Mapping[str, Any]],
    calls: Sequence[ToolCall],
    possible_answer: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]],
) -> CallCheck:
    """Check a response's calls against a BFCL possible answer.

    Args:
        functions: the function docs offered in the prompt (BFCL ``"function"`` list).
        calls: the parsed calls (:func:`~mrtpo_sdk.toolcall.parse_tool_response`).
        possible_answer: BFCL ``"ground_truth"``: one ``{name: {parameter: [acceptable, ...]}}`` per expected
            call; empty when the right answer is no call (irrelevance).

    Returns:
        a :class:`CallCheck`. Never raises on any calls (they are untrusted).

    Raises:
        ValueError: the possible answer names a function that ``functions`` does not document (a data error).
    """
    docs = {f.get("name"): f for f in functions}
    expected = [next(iter(a.items())) for a in possible_answer]
    for name, _ in expected:
        if name not in docs:
            raise ValueError(f"the possible answer calls {name!r}, which is not among the documented functions")
    want = sorted(n for n, _ in expected)
    got = sorted(c.name for c in calls)
    names_ok = want == got
    if not expected:
        if calls:
            return CallCheck(False, False, f"{_n(len(calls), 'call')} where no given function fits the request")
        return CallCheck(True, True)
    if len(calls) != len(expected):
        return CallCheck(False, names_ok, f"{_n(len(calls), 'call')} where {len(expected)} are expected")
    errors = [[check_call(docs[name], call, (name, ans)) for name, ans in expected] for call in calls]
    ok = [[not e for e in row] for row in errors]
    if _perfect_matching(ok):
        return CallCheck(True, names_ok)
    return CallCheck(False, names_ok, _first_error(calls, expected, errors))


def check_call(
    function: Mapping[str, Any], call: ToolCall, expected: tuple[str, Mapping[str, Sequence[Any]]]
) -> str:
    """Check one call against one expected call; returns ``""`` if it matches, else a noun phrase on why not."""
    name, answer = expected
    if call.name != name:
        return f"a call to {call.name!r} where {name!r} is expected"
    args = call.arguments
    props = (function.get("parameters") or {}).get("properties") or {}
    for p in args:
        if p not in props or p not in answer:
            return f"a call to {name!r} with the unexpected parameter {p!r}"
    try:
        validator = _validator(name, _freeze(function), _freeze(answer))
        err = jsonschema.exceptions.best_match(validator.iter_errors(args))
    except (jsonschema.exceptions.SchemaError, RecursionError, TypeError, ValueError) as exc:
        return f"a call to {name!r} whose arguments cannot be validated ({type(exc).__name__})"
    if err is not None:
        where = "/".join(str(x) for x in err.absolute_path) or "arguments"
        return f"a call to {name!r} whose {where} {_short(err.message)}"
    for p, value in args.items():
        spec = props[p] if isinstance(props[p], Mapping) else {}
        bad = _value_error(value, list(answer[p]), spec)
        if bad:
            return f"a call to {name!r} whose parameter {p!r} is {_short(repr(value))}, {bad}"
    for p, acceptable in answer.items():
        if p not in args and "" not in acceptable:
            return f"a call to {name!r} without the parameter {p!r}"
    return ""


# --------------------------------------------------------------------------- values


def _value_error(value: Any, acceptable: list, spec: Mapping[str, Any]) -> str:
    doc_type = spec.get("type") if isinstance(spec.get("type"), str) else "any"
    py = _PY_TYPE.get(doc_type, str)
    if doc_type in ("float", "number") and type(value) is int:
        value = float(value)
    answer_type = _answer_type(acceptable)
    variable = (answer_type is not None and answer_type is not py) or type(value) is not py
    if not variable:
        if py is dict:
            return "" if _dict_ok(value, acceptable) else f"not one of {_short(repr(acceptable))}"
        items = spec.get("items") if isinstance(spec.get("items"), Mapping) else {}
        if py is list and _PY_TYPE.get(items.get("type")) is dict:
            return "" if _list_of_dicts_ok(value, acceptable) else f"not one of {_short(repr(acceptable))}"
        if py is str:
            ok = standardize_string(value) in [standardize_string(a) for a in acceptable if isinstance(a, str)]
            return "" if ok else f"not one of {_short(repr(acceptable))} (compared ignoring case and spacing)"
        if py is list:
            if doc_type in ("array", "tuple") and items.get("type") and not _items_typed(value, acceptable, items):
                return f"a list whose items are not of type {items.get('type')}"
            std = [_std_item(v) for v in value]
            ok = any(std == [_std_item(v) for v in (a if isinstance(a, list) else [])] for a in acceptable)
            return "" if ok else f"not one of {_short(repr(acceptable))}"
    return "" if value in acceptable else f"not one of {_short(repr(acceptable))}"


def _items_typed(value: list, acceptable: list, items: Mapping[str, Any]) -> bool:
    """BFCL's one-level item type check: every item has the items' doc type or the acceptable list's item type."""
    want = _PY_TYPE.get(items.get("type"), str)
    for a in acceptable:
        if not isinstance(a, list):
            return True  # an optional marker "": BFCL skips the item check
        alt = _answer_type(a)
        if all(type(v) is want or (alt is not None and type(v) is alt) for v in value):
            return True
    return False


def _std_item(v: Any) -> Any:
    return standardize_string(v) if isinstance(v, str) else v


def _dict_ok(value: dict, acceptable: list) -> bool:
    for a in acceptable:
        if not isinstance(a, Mapping):
            continue
        if all(k in a and _std_item(v) in [_std_item(x) for x in a[k]] for k, v in value.items()) and all(
            k in value or "" in vals for k, vals in a.items()
        ):
            return True
    return False


def _list_of_dicts_ok(value: list, acceptable: list) -> bool:
    for a in acceptable:
        seq = a if isinstance(a, list) else []
        if a == "" and value == []:
            return True
        if len(seq) == len(value) and seq and all(
            isinstance(v, dict) and _dict_ok(v, [d]) for v, d in zip(value, seq)
        ):
            return True
    return False


# --------------------------------------------------------------------------- helpers


def _perfect_matching(ok: list[list[bool]]) -> bool:
    """Whether the boolean matrix ``ok[call][expected]`` has a perfect matching (Kuhn's augmenting paths)."""
    n = len(ok)
    owner = [-1] * n  # expected j -> call i

    def augment(i: int, seen: list[bool]) -> bool:
        for j in range(n):
            if ok[i][j] and not seen[j]:
                seen[j] = True
                if owner[j] < 0 or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(augment(i, [False] * n) for i in range(n))


def _first_error(calls: Sequence[ToolCall], expected: list, errors: list[list[str]]) -> str:
    for j, (name, _) in enumerate(expected):
        same = [errors[i][j] for i, c in enumerate(calls) if c.name == name]
        if not same:
            return f"no call to {name!r}"
        if all(same):
            return same[0]
    return "calls that cannot be paired one to one with the expected calls"


def _n(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def _short(s: str, limit: int = 120) -> str:
    return s if len(s) <= limit else s[: limit - 1] + "…"


class _Frozen:
    """A hashable wrapper so compiled validators can be cached per (function doc, possible answer)."""

    __slots__ = ("key", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.key = repr(value)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Frozen) and other.key == self.key


def _freeze(x: Any) -> _Frozen:
    return _Frozen(x)


@lru_cache(maxsize=4096)
def _validator(name: str, function: _Frozen, answer: _Frozen) -> Any:
    return _Validator(arguments_schema(function.value, answer.value))
