"""Structural parser for the tool-calling output format (no regex over the whole text, no ``eval``).

The format, as real tool-calling models (Qwen, Hermes) write it::

    <think>
    free-form reasoning, any number of lines
    </think>
    <tool_call>
    {"name": "math.factorial", "arguments": {"number": 5}}
    </tool_call>
    <tool_call>
    ...
    </tool_call>

* exactly one ``<think>`` … ``</think>`` block, first (leading whitespace allowed); its text may span lines but
  contains none of the four tags;
* then only whitespace and ``<tool_call>`` … ``</tool_call>`` blocks, one per call, zero when no function fits;
* each call block holds one JSON object with exactly the keys ``"name"`` (a non-empty string) and
  ``"arguments"`` (an object), strict JSON (no ``NaN``/``Infinity``, no number too large for a float such as
  ``1e400``, no duplicate keys).

Model output is untrusted: :func:`parse_tool_response` never raises on any ``str``, runs in time linear in the
text, refuses texts over :data:`MAX_RESPONSE_CHARS` and JSON nested deeper than :data:`MAX_JSON_DEPTH` with an
error instead of recursing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CALL_CLOSE",
    "CALL_OPEN",
    "MAX_JSON_DEPTH",
    "MAX_RESPONSE_CHARS",
    "THINK_CLOSE",
    "THINK_OPEN",
    "ParsedResponse",
    "ToolCall",
    "declines_to_call",
    "parse_tool_response",
    "render_call",
    "render_calls",
    "response_calls",
]

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
MAX_RESPONSE_CHARS = 100_000
"""Longer responses are refused (``error`` says so) rather than parsed."""
MAX_JSON_DEPTH = 32
"""Deeper JSON nesting in a call block is refused before ``json`` ever recurses into it."""


@dataclass(frozen=True)
class ToolCall:
    """One call: the function's name and its arguments (JSON values: str, int, float, bool, None, list, dict)."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ParsedResponse:
    """What :func:`parse_tool_response` found.

    Attributes:
        think: the text inside the leading think block (``None`` if there is no well-formed one).
        calls: the calls, in order, when the call part (after the think block's ``</think>``, or the whole text
            when the response opens with a call or has no ``</think>``) is only well-formed call blocks; ``None``
            when it is not. ``()`` means "no call".
        error: ``""`` when the whole response follows the format; otherwise a noun phrase naming the first flaw,
            written to follow "This response has ..." (e.g. ``"no <think> block at the start"``).
    """

    think: str | None
    calls: tuple[ToolCall, ...] | None
    error: str = ""

    @property
    def ok(self) -> bool:
        """Whether the response follows the format exactly."""
        return not self.error


def parse_tool_response(text: Any) -> ParsedResponse:
    """Parse a completion in the think + tool-call format (module docstring).

    Args:
        text: the completion (untrusted). Non-``str`` input gives an error result, never an exception.

    Returns:
        a :class:`ParsedResponse`; ``calls`` is filled whenever the call part is well formed even if the think
        block is not (so correctness can be scored apart from format).
    """
    if not isinstance(text, str):
        return ParsedResponse(None, None, f"a {type(text).__name__} instead of text")
    if len(text) > MAX_RESPONSE_CHARS:
        return ParsedResponse(None, None, f"{len(text)} characters, more than the {MAX_RESPONSE_CHARS} allowed")
    if not text.strip():
        return ParsedResponse(None, None, "no text at all")

    think, tail, think_error = _split_think(text)
    calls, call_error = _parse_calls(tail)
    error = think_error or call_error
    return ParsedResponse(None if error else think, calls, error)


def response_calls(text: Any) -> tuple[ToolCall, ...] | None:
    """The calls a response makes, for scoring correctness apart from format.

    Returns:
        the parsed calls when the call part is well formed (think-block flaws ignored); ``()`` when the text holds
        no ``<tool_call>`` tag at all (a plain-text answer makes no call); ``None`` when it attempts calls that do
        not parse.
    """
    parsed = parse_tool_response(text)
    if parsed.calls is not None:
        return parsed.calls
    if isinstance(text, str) and CALL_OPEN not in text and CALL_CLOSE not in text and len(text) <= MAX_RESPONSE_CHARS:
        return ()
    return None


def _split_think(text: str) -> tuple[str | None, str, str]:
    """``(think, call part, error)``: the think block ends at the first ``</think>`` after the leading ``<think>``."""
    body = text.lstrip()
    offset = len(text) - len(body)
    if body.startswith(THINK_OPEN):
        close = text.find(THINK_CLOSE, offset)
        if close < 0:
            return None, text[offset + len(THINK_OPEN) :], f"a {THINK_OPEN} block that is never closed with {THINK_CLOSE}"
        inner, tail = text[offset + len(THINK_OPEN) : close], text[close + len(THINK_CLOSE) :]
        for tag in (THINK_OPEN, CALL_OPEN, CALL_CLOSE):
            if tag in inner:
                what = f"2 {THINK_OPEN} blocks instead of one" if tag == THINK_OPEN else f"a {tag} tag inside the {THINK_OPEN} block"
                return None, tail, what
        return inner, tail, ""
    if body.startswith(CALL_OPEN) or THINK_CLOSE not in text:
        return None, text, f"no {THINK_OPEN} block at the start"
    close = text.find(THINK_CLOSE)
    head, tail = text[:close], text[close + len(THINK_CLOSE) :]
    if THINK_OPEN in head:
        return None, tail, f"text before the {THINK_OPEN} block: {body[: body.find(THINK_OPEN)][:40]!r}"
    return None, tail, f"a {THINK_CLOSE} tag with no {THINK_OPEN} block at the start"


def _parse_calls(tail: str) -> tuple[tuple[ToolCall, ...] | None, str]:
    """Parse the call part. A further think block or a stray ``</think>`` between calls is a format flaw (the
    error is set) but does not hide the calls; anything else that is not a call block makes ``calls`` ``None``."""
    calls: list[ToolCall] = []
    flaw = ""
    i, n = 0, len(tail)
    while True:
        j = _skip_ws(tail, i)
        if j == n:
            return tuple(calls), flaw
        if tail.startswith(CALL_OPEN, j):
            body_start = _skip_ws(tail, j + len(CALL_OPEN))
            value, end, err = _json_value(tail, body_start)
            if err:
                return None, f"a {CALL_OPEN} block {err}"
            k = _skip_ws(tail, end)
            if not tail.startswith(CALL_CLOSE, k):
                close = tail.find(CALL_CLOSE, k)
                if close < 0:
                    return None, f"a {CALL_OPEN} block that is never closed with {CALL_CLOSE}"
                return None, f"text after the JSON inside a {CALL_OPEN} block: {tail[k:close][:40]!r}"
            call, err = _to_call(value)
            if err:
                return None, f"a {CALL_OPEN} block whose JSON {err}"
            calls.append(call)
            i = k + len(CALL_CLOSE)
            continue
        if tail.startswith(THINK_OPEN, j):
            close = tail.find(THINK_CLOSE, j)
            if close < 0:
                return None, f"a second {THINK_OPEN} block that is never closed"
            flaw = flaw or f"2 {THINK_OPEN} blocks instead of one"
            i = close + len(THINK_CLOSE)
            continue
        if tail.startswith(THINK_CLOSE, j):
            flaw = flaw or f"2 {THINK_CLOSE} tags instead of one"
            i = j + len(THINK_CLOSE)
            continue
        if tail.startswith(CALL_CLOSE, j):
            return None, f"a stray {CALL_CLOSE} tag"
        where = "after the last call" if calls else f"after the {THINK_CLOSE} tag"
        return None, f"text {where} that is not a {CALL_OPEN} block: {tail[j : j + 40]!r}"


def _skip_ws(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in " \t\r\n":
        i += 1
    return i


def _json_value(s: str, start: int) -> tuple[Any, int, str]:
    """Decode the JSON object starting at ``s[start]``: returns ``(value, end, error)``.

    A linear scan finds where the object ends (strings and escapes respected) and its depth, so deep nesting is
    refused before :mod:`json` recurses into it; then the slice is decoded strictly.
    """
    if start >= len(s) or s[start] != "{":
        return None, start, "that does not hold a JSON object"
    depth, i, n, in_str = 0, start, len(s), False
    while i < n:
        c = s[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return None, i, f"whose JSON is nested more than {MAX_JSON_DEPTH} levels deep"
        elif c in "}]":
            depth -= 1
            if depth == 0:
                break
        elif c == "<" and s.startswith(CALL_CLOSE, i):
            return None, i, "whose JSON object is not closed before " + CALL_CLOSE
        i += 1
    else:
        return None, n, "whose JSON object is never closed"
    end = i + 1
    try:
        value = json.loads(
            s[start:end], object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant, parse_float=_finite_float
        )
    except (ValueError, RecursionError, TypeError) as exc:
        msg = str(exc).split(":")[0][:80] if not isinstance(exc, RecursionError) else "nesting too deep"
        return None, end, f"that is not valid JSON ({msg})"
    return value, end, ""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k[:40]!r}")
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:20]} is too large for a float")
    return value


def _to_call(value: Any) -> tuple[ToolCall | None, str]:
    if not isinstance(value, dict):
        return None, "is not an object"
    keys = set(value)
    if keys != {"name", "arguments"}:
        missing = sorted({"name", "arguments"} - keys)
        extra = sorted(keys - {"name", "arguments"})
        if missing:
            return None, f"lacks the key {missing[0]!r}"
        return None, f"has the extra key {extra[0][:40]!r} (only \"name\" and \"arguments\")"
    name, args = value["name"], value["arguments"]
    if not isinstance(name, str) or not name.strip():
        return None, "has a \"name\" that is not a non-empty string"
    if not isinstance(args, dict):
        return None, "has \"arguments\" that are not a JSON object"
    return ToolCall(name, args), ""


def render_call(call: ToolCall | tuple[str, dict[str, Any]]) -> str:
    """One call block, exactly as the policy must write it: ``<tool_call>\\n{json}\\n</tool_call>``.

    Args:
        call: a :class:`ToolCall` or a ``(name, arguments)`` pair; argument values must be JSON-serializable
            (finite floats).

    Raises:
        ValueError: a value is not JSON (e.g. NaN).
    """
    name, args = (call.name, call.arguments) if isinstance(call, ToolCall) else call
    body = json.dumps({"name": name, "arguments": args}, ensure_ascii=False, allow_nan=False)
    return f"{CALL_OPEN}\n{body}\n{CALL_CLOSE}"


def render_calls(calls: list[ToolCall] | tuple[ToolCall, ...], think: str | None = None) -> str:
    """A whole response: the think block (when ``think`` is given) and one call block per call, newline-joined."""
    parts = [f"{THINK_OPEN}\n{think.strip()}\n{THINK_CLOSE}"] if think is not None else []
    parts.extend(render_call(c) for c in calls)
    return "\n".join(parts)


def declines_to_call(text: Any) -> bool:
    """Whether a response declines to call any function, in the format: it is well formed (:func:`parse_tool_response`
    finds no flaw), makes no call, and its think block holds some reasoning (a letter or digit).

    The training semantics' "no call" for irrelevance questions: empty text, junk, a plain-text answer, a call written
    in another syntax (``f(x=1)``), a truncated response or an empty ``<think></think>`` do not decline.
    """
    parsed = parse_tool_response(text)
    return parsed.ok and parsed.calls == () and parsed.think is not None and any(c.isalnum() for c in parsed.think)
