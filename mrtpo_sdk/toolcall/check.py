"""Check calls against BFCL possible answers (function names, required parameters, types, acceptable values).

The semantics follow the BFCL AST checker for Python (``bfcl_eval.eval_checker.ast_eval.ast_checker``), read,
not copied, and restated here:

* a possible answer is a list of expected calls ``{function_name: {parameter: [acceptable values]}}``; an
  acceptable value ``""`` means the parameter may be left out; an empty list means "no call is right";
* the calls must match the expected calls one to one, in any order (paired greedily in the ``official``
  semantics, as BFCL does, which can miss a pairing that exists; by a bipartite matching in ``training``);
* a call matches when: the name is the expected one; every parameter the function doc lists as required is
  given; every given parameter is in the doc and in the possible answer; the values have the doc's types
  (``int`` for ``integer``, ``int`` or ``float`` for ``float``, no ``bool`` for numbers), or the type the possible
  answer itself uses (BFCL's "variable" rule); the values are acceptable — strings compared after removing spaces
  and ``,./-_*^`` and lower-casing, lists element-wise the same way, dicts key by key; and every parameter of the
  possible answer that is not optional is given.

Types (and the structure of nested arrays and objects) are checked with :mod:`jsonschema` against a JSON Schema
built from the function doc (:func:`arguments_schema`); BFCL's own type names (``dict``, ``float``, ``tuple``,
``any``) are mapped to JSON Schema's. ``enum`` is not enforced, because BFCL compares strings case-insensitively.

Two semantics (``semantics=``; the table of every difference is in ``docs/bfcl.md``):

* ``"official"`` — the BFCL AST checker's verdicts bit for bit, for reporting comparable numbers: parallel calls
  are paired greedily (each expected call, in order, takes the first unused call that fits), as
  ``parallel_function_checker_no_order`` does;
* ``"training"`` (the default, for rewards) — the official rules with their known false negatives and false
  positives fixed: parallel calls paired by a bipartite matching; an integral float (``5.0``) is an ``integer``
  (as in JSON Schema); a parameter given its documented default (the doc's ``"default"`` or a description's
  ``Default is 'cm'.`` / ``defaults to 120``) counts as left out, and an optional parameter left out counts as its
  documented default; strings must also agree on their numbers (sign and decimal point) and powers (``**``/``^``),
  which BFCL's normal form erases (``"1.5"`` = ``"15"``, ``"x**2"`` = ``"x*2"`` officially); and the possible
  answers of :data:`DATA_FIXES` (slips in BFCL's data that pay a wrong set of calls) are corrected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator

from mrtpo_sdk.semantics import SEMANTICS
from mrtpo_sdk.toolcall.parse import ToolCall, declines_to_call, response_calls
from mrtpo_sdk.verifier import cap_block

__all__ = [
    "SEMANTICS",
    "CallCheck",
    "arguments_schema",
    "ast_correct",
    "check_call",
    "check_calls",
    "documented_default",
    "standardize_string",
    "strings_match",
]

_NO_DEFAULT = object()

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


_SLIP_178 = [
    {"get_stock_price": {"company_name": ["Microsoft", "Apple"], "date": ["2022-01-01", "01/01/2022", "Jan.1,2022"],
                         "exchange": ["NASDAQ", ""]}},
    {"get_stock_price": {"company_name": ["Microsoft"], "date": ["2022-02-01", "02/01/2022", "Feb.1,2022"],
                         "exchange": ["NASDAQ", ""]}},
    {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-01-01", "01/01/2022", "Jan.1,2022"],
                         "exchange": ["NASDAQ", ""]}},
    {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-02-01", "02/01/2022", "Feb.1,2022"],
                         "exchange": ["NASDAQ", ""]}},
]  # fmt: skip

#: Slips in BFCL's possible answers that pay a wrong set of calls, corrected under ``training`` semantics only
#: (``official`` checks the data as published): ``id -> (possible answer as published, corrected)``. Matched by the
#: answer's content, so a fix applies to the committed subset and the installed ``bfcl_eval`` data alike, and no
#: longer applies once BFCL corrects its data. One row each in docs/bfcl.md.
DATA_FIXES: dict[str, tuple[list, list]] = {
    # "Microsoft and Apple on 2022-01-01 and 2022-02-01": the first expected call also accepts Apple for 2022-01-01,
    # so Apple/2022-01-01 twice (and no Microsoft/2022-01-01) fills all four expected calls
    "parallel_178": (
        _SLIP_178,
        [{"get_stock_price": {**_SLIP_178[0]["get_stock_price"], "company_name": ["Microsoft"]}}, *_SLIP_178[1:]],
    ),
}
_FIX_NAMES = {next(iter(published[0])) for published, _ in DATA_FIXES.values()}


def _canonical(answer: Any) -> str:
    import json

    return json.dumps(answer, sort_keys=True, default=str)


_FIXED = {_canonical(published): fixed for published, fixed in DATA_FIXES.values()}


def corrected_answer(possible_answer: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """``possible_answer``, or its correction when it is one of :data:`DATA_FIXES` (``training`` semantics)."""
    if not possible_answer or not isinstance(possible_answer[0], Mapping) or not possible_answer[0]:
        return possible_answer
    if next(iter(possible_answer[0])) not in _FIX_NAMES:
        return possible_answer
    return _FIXED.get(_canonical(list(possible_answer)), possible_answer)


def check_calls(
    functions: Sequence[Mapping[str, Any]],
    calls: Sequence[ToolCall],
    possible_answer: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]],
    semantics: str = "training",
) -> CallCheck:
    """Check a response's calls against a BFCL possible answer.

    Args:
        functions: the function docs offered in the prompt (BFCL ``"function"`` list).
        calls: the parsed calls (:func:`~mrtpo_sdk.toolcall.parse_tool_response`).
        possible_answer: BFCL ``"ground_truth"``: one ``{name: {parameter: [acceptable, ...]}}`` per expected
            call; empty when the right answer is no call (irrelevance).
        semantics: ``"training"`` (default) or ``"official"`` (module docstring).

    Returns:
        a :class:`CallCheck`. Never raises on any calls (they are untrusted).

    Raises:
        ValueError: the possible answer names a function that ``functions`` does not document (a data error), or
            ``semantics`` is not one of :data:`SEMANTICS`.
    """
    _check_semantics(semantics)
    if semantics == "training":
        possible_answer = corrected_answer(possible_answer)
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
    errors = [[check_call(docs[name], call, (name, ans), semantics) for name, ans in expected] for call in calls]
    ok = [[not e for e in row] for row in errors]
    if (_perfect_matching if semantics == "training" else _greedy_matching)(ok):
        return CallCheck(True, names_ok)
    return CallCheck(False, names_ok, _first_error(calls, expected, errors))


def ast_correct(
    functions: Sequence[Mapping[str, Any]],
    possible_answer: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]],
    completion: Any,
    semantics: str = "training",
) -> bool:
    """BFCL's AST verdict on a whole completion: its calls match the possible answer, or, when the right answer is
    no call (irrelevance), it calls nothing — in the ``training`` semantics only a well-formed response whose think
    block declines (:func:`~mrtpo_sdk.toolcall.declines_to_call`), in the ``official`` one any text without a
    ``<tool_call>`` tag. Never raises on any completion."""
    _check_semantics(semantics)
    if not possible_answer:
        return declines_to_call(completion) if semantics == "training" else response_calls(completion) == ()
    calls = response_calls(completion)
    return calls is not None and check_calls(functions, calls, possible_answer, semantics).correct


def check_call(
    function: Mapping[str, Any],
    call: ToolCall,
    expected: tuple[str, Mapping[str, Sequence[Any]]],
    semantics: str = "training",
) -> str:
    """Check one call against one expected call; returns ``""`` if it matches, else a noun phrase on why not."""
    _check_semantics(semantics)
    training = semantics == "training"
    name, answer = expected
    if call.name != name:
        return f"a call to {call.name!r} where {name!r} is expected"
    params = function.get("parameters") if isinstance(function.get("parameters"), Mapping) else {}
    props = params.get("properties") if isinstance(params.get("properties"), Mapping) else {}
    required = params.get("required") if isinstance(params.get("required"), list) else []
    args = call.arguments
    if training:
        args = _training_arguments(args, props, required, answer)
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
        acceptable = list(answer[p])
        if training and _empty_is_not_the_default(value, spec, acceptable):
            # BFCL's "" marks "may be left out"; the function receives "", not its documented default
            acceptable = [a for a in acceptable if a != ""]
            if not acceptable:
                return (f"a call to {name!r} whose parameter {p!r} is {_short(repr(value))}, an empty string "
                        f"where leaving it out would give its documented default")
        bad = _value_error(value, acceptable, spec, training)
        if bad:
            return f"a call to {name!r} whose parameter {p!r} is {_short(repr(value))}, {bad}"
    for p, acceptable in answer.items():
        if p not in args and "" not in acceptable:
            if training and p not in required and _default_acceptable(props.get(p), list(acceptable)):
                continue  # left out, it takes its documented default, which is acceptable
            return f"a call to {name!r} without the parameter {p!r}"
    return ""


def _check_semantics(semantics: str) -> None:
    if semantics not in SEMANTICS:
        raise ValueError(f"unknown semantics {semantics!r}; choose from {', '.join(SEMANTICS)}")


# --------------------------------------------------------------------------- training semantics


def _training_arguments(
    args: Mapping[str, Any], props: Mapping[str, Any], required: Sequence[Any], answer: Mapping[str, Any]
) -> dict[str, Any]:
    """The arguments as the training semantics reads them: integral floats of ``integer`` parameters made ints, and
    parameters given their documented default dropped (as if left out) when leaving them out is acceptable."""
    out: dict[str, Any] = {}
    for p, v in args.items():
        spec = props.get(p) if isinstance(props.get(p), Mapping) else {}
        v = _integral(v, spec)
        omissible = p not in required and (p not in answer or "" in list(answer[p]))
        if omissible and p in props:
            default = documented_default(spec)
            if default is not _NO_DEFAULT and _same_value(v, _integral(default, spec), True):
                continue
        out[p] = v
    return out


def _empty_is_not_the_default(value: Any, spec: Mapping[str, Any], acceptable: list) -> bool:
    """An explicit empty string (BFCL's normal form empty) for a parameter whose answer marks it omissible (``""``)
    and whose documented default is something else: passing it is not leaving the parameter out."""
    if not isinstance(value, str) or standardize_string(value) != "" or "" not in acceptable:
        return False
    default = documented_default(spec)
    if default is _NO_DEFAULT:
        return False
    return not (isinstance(default, str) and standardize_string(default) == "")


def _integral(v: Any, spec: Mapping[str, Any]) -> Any:
    t = spec.get("type")
    if t == "integer" and type(v) is float and v.is_integer() and abs(v) <= 2**53:
        return int(v)
    items = spec.get("items") if isinstance(spec.get("items"), Mapping) else {}
    if t in ("array", "tuple") and items.get("type") == "integer" and isinstance(v, list):
        return [int(x) if type(x) is float and x.is_integer() and abs(x) <= 2**53 else x for x in v]
    return v


def _default_acceptable(spec: Any, acceptable: list) -> bool:
    if not isinstance(spec, Mapping):
        return False
    default = documented_default(spec)
    if default is _NO_DEFAULT:
        return False
    default = _integral(default, spec)
    try:
        return not _value_error(default, acceptable, spec, True)
    except (TypeError, ValueError, OverflowError):
        return False


_DEFAULT_RE = re.compile(
    r"\bdefaults?(?:\s+value)?(?:\s+(?:is|to|of))?(?:\s+set\s+to)?\s*[:=]?\s*"
    r"(?:'([^'\n]{0,200})'|\"([^\"\n]{0,200})\"|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?!\w|\.\d)|(true|false)\b)",
    re.IGNORECASE,
)


def documented_default(spec: Any) -> Any:
    """The default a parameter doc documents, or a private "no default" marker.

    The doc's ``"default"`` key (any value, ``None`` included); else the first ``default is 'x'`` / ``defaults to
    120`` / ``Default: true`` in its description whose value has the parameter's type: a quoted string for
    ``string``, a number for ``integer``/``float``, ``true``/``false`` for ``boolean``. Unquoted words (``default is
    for vacuum``, ``Default is none if not provided``) are not read as defaults.
    """
    if not isinstance(spec, Mapping):
        return _NO_DEFAULT
    if "default" in spec:
        return _typed_default(spec["default"], spec.get("type"))
    desc = spec.get("description")
    t = spec.get("type")
    if not isinstance(desc, str) or "default" not in desc.lower():
        return _NO_DEFAULT
    for m in _DEFAULT_RE.finditer(desc[:2000]):
        quoted = m.group(1) if m.group(1) is not None else m.group(2)
        if quoted is not None and t in ("string", "any"):
            return quoted
        if m.group(3) is not None and t in ("integer", "float", "number"):
            text = m.group(3)
            if t == "integer":
                return int(text) if text.lstrip("-").isdigit() and len(text) < 19 else _NO_DEFAULT
            return float(text)
        if m.group(4) is not None and t == "boolean":
            return m.group(4).lower() == "true"
    return _NO_DEFAULT


def _typed_default(d: Any, t: Any) -> Any:
    """A doc's ``"default"`` value in the parameter's type (``"false"`` for a ``boolean`` is ``False``); a value of
    another type is no default (``None``, Python's "no value", is kept)."""
    if d is None or t not in _PY_TYPE or t == "any":
        return d
    if t == "boolean" and isinstance(d, str) and d.strip().lower() in ("true", "false"):
        return d.strip().lower() == "true"
    if t in ("integer", "float", "number") and isinstance(d, str):
        try:
            d = float(d) if t != "integer" else int(d.strip())
        except ValueError:
            return _NO_DEFAULT
    ok = {
        "string": lambda x: isinstance(x, str),
        "integer": lambda x: type(x) is int,
        "float": lambda x: type(x) in (int, float),
        "number": lambda x: type(x) in (int, float),
        "boolean": lambda x: type(x) is bool,
        "array": lambda x: isinstance(x, list),
        "tuple": lambda x: isinstance(x, list),
        "dict": lambda x: isinstance(x, dict),
        "object": lambda x: isinstance(x, dict),
    }[t]
    return d if ok(d) else _NO_DEFAULT


def _same_value(v: Any, d: Any, training: bool) -> bool:
    if isinstance(v, str) and isinstance(d, str):
        return strings_match(v, d, training)
    if isinstance(v, bool) or isinstance(d, bool):
        return type(v) is type(d) and v == d
    if isinstance(v, (int, float)) and isinstance(d, (int, float)):
        return v == d
    return type(v) is type(d) and v == d


_NUMERIC_TOKEN = re.compile(r"\*\*|\^|(?<![0-9A-Za-z_.])-(?=\d)|\d+(?:\.\d+)?")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def _numeric_signature(s: str) -> tuple[str, ...]:
    """The numbers (with sign and decimal point) and powers of a string, which BFCL's normal form erases."""
    out = []
    for tok in _NUMERIC_TOKEN.findall(_THOUSANDS.sub("", s)):
        if tok in ("**", "^"):
            out.append("^")
        elif tok == "-":
            out.append("-")
        else:
            whole, _, frac = tok.partition(".")
            whole, frac = whole.lstrip("0") or "0", frac.rstrip("0")
            out.append(f"{whole}.{frac}" if frac else whole)
    return tuple(out)


def strings_match(value: str, acceptable: str, training: bool = True) -> bool:
    """Whether a string value matches an acceptable one: BFCL's normal form (:func:`standardize_string`) equal, and
    in the training semantics also the same numbers and powers (``"1.5"`` is not ``"15"``, ``"x**2"`` not ``"x*2"``,
    ``"-5"`` not ``"5"``; ``"1,000"`` is ``"1000"``, ``"x^2"`` is ``"x**2"``)."""
    if standardize_string(value) != standardize_string(acceptable):
        return False
    return not training or _numeric_signature(value) == _numeric_signature(acceptable)


# --------------------------------------------------------------------------- values


def _value_error(value: Any, acceptable: list, spec: Mapping[str, Any], training: bool = False) -> str:
    doc_type = spec.get("type") if isinstance(spec.get("type"), str) else "any"
    py = _PY_TYPE.get(doc_type, str)
    if doc_type in ("float", "number") and type(value) is int:
        try:
            value = float(value)
        except OverflowError:  # an integer too large for a float equals no acceptable number
            return f"not one of {_short(repr(acceptable))}"
    answer_type = _answer_type(acceptable)
    variable = (answer_type is not None and answer_type is not py) or type(value) is not py
    if not variable:
        if py is dict:
            return "" if _dict_ok(value, acceptable, training) else f"not one of {_short(repr(acceptable))}"
        items = spec.get("items") if isinstance(spec.get("items"), Mapping) else {}
        if py is list and _PY_TYPE.get(items.get("type")) is dict:
            return "" if _list_of_dicts_ok(value, acceptable, training) else f"not one of {_short(repr(acceptable))}"
        if py is str:
            ok = any(isinstance(a, str) and strings_match(value, a, training) for a in acceptable)
            return "" if ok else f"not one of {_short(repr(acceptable))} (compared ignoring case and spacing)"
        if py is list:
            if doc_type in ("array", "tuple") and items.get("type") and not _items_typed(value, acceptable, items):
                return f"a list whose items are not of type {items.get('type')}"
            std = [_std_item(v, training) for v in value]
            ok = any(std == [_std_item(v, training) for v in (a if isinstance(a, list) else [])] for a in acceptable)
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


def _std_item(v: Any, training: bool = False) -> Any:
    if not isinstance(v, str):
        return v
    return (standardize_string(v), _numeric_signature(v)) if training else standardize_string(v)


def _dict_ok(value: dict, acceptable: list, training: bool = False) -> bool:
    for a in acceptable:
        if not isinstance(a, Mapping):
            continue
        if all(
            k in a and _std_item(v, training) in [_std_item(x, training) for x in _as_list(a[k])]
            for k, v in value.items()
        ) and all(k in value or "" in _as_list(vals) for k, vals in a.items()):
            return True
    return False


def _as_list(x: Any) -> list:
    return x if isinstance(x, list) else [x]


def _list_of_dicts_ok(value: list, acceptable: list, training: bool = False) -> bool:
    for a in acceptable:
        seq = a if isinstance(a, list) else []
        if a == "" and value == []:
            return True
        if len(seq) == len(value) and seq and all(
            isinstance(v, dict) and _dict_ok(v, [d], training) for v, d in zip(value, seq)
        ):
            return True
    return False


# --------------------------------------------------------------------------- helpers


def _greedy_matching(ok: list[list[bool]]) -> bool:
    """The official pairing: each expected call ``j``, in order, takes the first unused call that fits it."""
    used: set[int] = set()
    for j in range(len(ok[0]) if ok else 0):
        i = next((i for i in range(len(ok)) if i not in used and ok[i][j]), None)
        if i is None:
            return False
        used.add(i)
    return True


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


def _short(s: str) -> str:
    """A quoted value or schema message in a block: at most 120 characters."""
    return cap_block(s, 120)


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
