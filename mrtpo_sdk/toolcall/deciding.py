"""Where a tool-calling completion's rewards are decided: character spans for ``Verifier(deciding=...)``.

One locator per reward of the bundled BFCL task (``tasks/bfcl.py``); each returns ``[start, end)`` spans of the
completion, or ``None`` when there is nothing to point at:

* :func:`format_spans` (``tool_format``): the four tags (``<think>``, ``</think>``, ``<tool_call>``,
  ``</tool_call>``) wherever they stand, and the JSON wrapper keys ``"name"`` and ``"arguments"`` of each call;
* :func:`name_spans` (``function_choice``): the function name of each call (the text inside its quotes);
* :func:`argument_spans` (``arguments``): the value of each argument of each call (a string's text inside its
  quotes; a number, list or object as written), or a call's ``{}`` when it passes none.

The calls are read by a lenient scan of each ``<tool_call>`` block, not by
:func:`~mrtpo_sdk.toolcall.parse_tool_response`: a block whose JSON breaks still shows the keys and values written
before the break. Model output is untrusted:
the scan never raises and runs in time linear in the text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..verifier import Spans
from .parse import CALL_CLOSE, CALL_OPEN, THINK_CLOSE, THINK_OPEN

__all__ = ["CallSpans", "argument_spans", "call_spans", "format_spans", "name_spans"]

_WS = " \t\r\n"


@dataclass
class CallSpans:
    """The spans of one call block's JSON object (offsets in the completion).

    Attributes:
        keys: the quoted keys ``"name"`` and ``"arguments"`` of the object, as found.
        name: the function name's value (inside its quotes), ``None`` when missing.
        arguments: each argument's value; ``[]`` when there is no ``"arguments"`` object.
        empty_arguments: the ``{}`` of an ``"arguments"`` object with no member, else ``None``.
    """

    keys: Spans = field(default_factory=list)
    name: tuple[int, int] | None = None
    arguments: Spans = field(default_factory=list)
    empty_arguments: tuple[int, int] | None = None


def _skip_ws(s: str, i: int, limit: int) -> int:
    while i < limit and s[i] in _WS:
        i += 1
    return i


def _string_end(s: str, i: int, limit: int) -> int:
    """Index after the JSON string opening at ``s[i]`` (a ``"``), ``-1`` when it is not closed before ``limit``."""
    i += 1
    while i < limit:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    return -1


def _value_end(s: str, i: int, limit: int) -> int:
    """Index after the JSON value starting at ``s[i]``; ``-1`` when it does not end before ``limit``. Lenient: a
    scalar runs to the next ``,``, ``}``, ``]`` or whitespace; an object or array to its matching bracket."""
    if i >= limit:
        return -1
    c = s[i]
    if c == '"':
        return _string_end(s, i, limit)
    if c in "{[":
        depth, j = 0, i
        while j < limit:
            ch = s[j]
            if ch == '"':
                j = _string_end(s, j, limit)
                if j < 0:
                    return -1
                continue
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return -1
    j = i
    while j < limit and s[j] not in ",}]" and s[j] not in _WS:
        j += 1
    return j if j > i else -1


def _members(s: str, i: int, limit: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """``(key span, value span)`` of each member of the object opening at ``s[i]`` (a ``{``), up to the first place
    that is not JSON; an object or array value that is not closed before ``limit`` runs to ``limit``."""
    out = []
    i += 1
    while True:
        i = _skip_ws(s, i, limit)
        if i >= limit or s[i] != '"':
            return out
        key_end = _string_end(s, i, limit)
        if key_end < 0:
            return out
        j = _skip_ws(s, key_end, limit)
        if j >= limit or s[j] != ":":
            return out
        v = _skip_ws(s, j + 1, limit)
        v_end = _value_end(s, v, limit)
        if v_end < 0:
            if v < limit and s[v] in "{[":  # an object or array cut short: it runs to the end of the block
                out.append(((i, key_end), (v, limit)))
            return out
        out.append(((i, key_end), (v, v_end)))
        k = _skip_ws(s, v_end, limit)
        if k >= limit or s[k] != ",":
            return out
        i = k + 1


def _key(s: str, span: tuple[int, int]) -> str | None:
    try:
        value = json.loads(s[span[0] : span[1]])
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _inner(s: str, span: tuple[int, int]) -> tuple[int, int]:
    """A string value's text inside its quotes (the quotes when it is empty); any other value as it is."""
    start, end = span
    if s[start] == '"' and end - start > 2:
        return start + 1, end - 1
    return span


def call_spans(text: str) -> list[CallSpans]:
    """The spans of every ``<tool_call>`` block's JSON object in ``text``, in order (module docstring)."""
    if not isinstance(text, str):
        return []
    out = []
    pos = 0
    while True:
        open_at = text.find(CALL_OPEN, pos)
        if open_at < 0:
            return out
        body = open_at + len(CALL_OPEN)
        close = text.find(CALL_CLOSE, body)
        limit = close if close >= 0 else len(text)
        i = _skip_ws(text, body, limit)
        call = CallSpans()
        if i < limit and text[i] == "{":
            for key_span, value_span in _members(text, i, limit):
                key = _key(text, key_span)
                if key not in ("name", "arguments"):
                    continue
                call.keys.append(key_span)
                if key == "name":
                    call.name = _inner(text, value_span)
                elif text[value_span[0]] == "{":
                    members = _members(text, value_span[0], value_span[1])
                    call.arguments += [_inner(text, v) for _, v in members]
                    if not members and not text[value_span[0] + 1 : value_span[1] - 1].strip(_WS):
                        call.empty_arguments = value_span
        out.append(call)
        pos = limit


def format_spans(text: str) -> Spans | None:
    """The four tags wherever they stand, and the ``"name"`` / ``"arguments"`` keys of each call; ``None`` when
    there are none."""
    if not isinstance(text, str):
        return None
    spans: Spans = []
    for tag in (THINK_OPEN, THINK_CLOSE, CALL_OPEN, CALL_CLOSE):
        i = text.find(tag)
        while i >= 0:
            spans.append((i, i + len(tag)))
            i = text.find(tag, i + len(tag))
    spans += [k for call in call_spans(text) for k in call.keys]
    return sorted(spans) or None


def name_spans(text: str) -> Spans | None:
    """The function name of each call; ``None`` when no call names one."""
    spans = [call.name for call in call_spans(text) if call.name is not None]
    return spans or None


def argument_spans(text: str) -> Spans | None:
    """Each argument value of each call (a call without arguments: its ``{}``); ``None`` when there is none."""
    spans: Spans = []
    for call in call_spans(text):
        spans += call.arguments
        if call.empty_arguments is not None:
            spans.append(call.empty_arguments)
    return spans or None
