"""Prompts, reference responses and information blocks for BFCL-style tool calling.

Everything the policy sees or is compared with is written in the one output format of
:mod:`mrtpo_sdk.toolcall.parse`: a ``<think>`` block, then one ``<tool_call>`` block per call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mrtpo_sdk.toolcall.parse import CALL_CLOSE, CALL_OPEN, THINK_CLOSE, THINK_OPEN, ToolCall, render_calls

__all__ = [
    "FORMAT_RULE",
    "INSTRUCTIONS",
    "NO_CALL_THINK",
    "function_choice_block",
    "functions_text",
    "reference_calls",
    "reference_response",
    "rollout_messages",
]

FORMAT_RULE = (
    f"The response is one {THINK_OPEN} … {THINK_CLOSE} block of reasoning followed only by "
    f"{CALL_OPEN} … {CALL_CLOSE} blocks, one per call and none when no function fits, each holding one JSON "
    f'object {{"name": <function name>, "arguments": {{<parameter>: <value>, …}}}}.'
)
"""The output format stated concretely (used as the format verifier's block)."""

INSTRUCTIONS = (
    f"First reason briefly inside one {THINK_OPEN} … {THINK_CLOSE} block. Then write one "
    f"{CALL_OPEN} … {CALL_CLOSE} block per function call, each holding a JSON object "
    f'{{"name": <function name>, "arguments": {{<parameter>: <value>, …}}}} with JSON values of the documented '
    f"types, and nothing else. If none of the functions fits the request, write no {CALL_OPEN} block."
)


def functions_text(functions: Sequence[Mapping[str, Any]]) -> str:
    """The function docs as the prompt shows them: one compact JSON object per line, in the given order."""
    return "\n".join(json.dumps(f, ensure_ascii=False, separators=(", ", ": ")) for f in functions)


def rollout_messages(messages: Sequence[Mapping[str, str]], functions: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The rollout prompt: a system message with the function docs and the output format, then the question.

    A system message inside the question is appended to ours (so the chat has one system message).
    """
    system = f"You can call these functions:\n{functions_text(functions)}\n\n{INSTRUCTIONS}"
    out: list[dict[str, str]] = [{"role": "system", "content": system}]
    for m in messages:
        if m["role"] == "system":
            out[0]["content"] += "\n\n" + m["content"]
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def reference_calls(
    functions: Sequence[Mapping[str, Any]], possible_answer: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]]
) -> list[ToolCall]:
    """The reference calls: for each expected call, the first acceptable value of every parameter.

    A parameter whose first acceptable value is ``""`` (optional) is left out unless the function doc requires it
    (then its first non-empty value is used); a ``dict`` parameter's (or a list of dicts') possible answer is
    resolved key by key the same way.
    """
    docs = {f.get("name"): f for f in functions}
    calls = []
    for expected in possible_answer:
        name, answer = next(iter(expected.items()))
        params = (docs.get(name) or {}).get("parameters") or {}
        props, required = params.get("properties") or {}, params.get("required") or []
        args = {}
        for p, acceptable in answer.items():
            values = [a for a in acceptable if a != ""]
            # optional when "" comes first, or when the doc does not document it (a BFCL data slip); a parameter
            # the doc requires takes its first non-empty acceptable value even where "" is listed first
            if not values or p not in props or (acceptable[0] == "" and p not in required):
                continue
            args[p] = _first(values[0], props.get(p) or {})
        calls.append(ToolCall(name, args))
    return calls


def _first(value: Any, spec: Mapping[str, Any]) -> Any:
    t = spec.get("type")
    items = spec.get("items") if isinstance(spec.get("items"), Mapping) else {}
    if t == "dict" and isinstance(value, Mapping):
        return _first_dict(value)
    if t == "array" and items.get("type") == "dict" and isinstance(value, list):
        return [_first_dict(v) if isinstance(v, Mapping) else v for v in value]
    return value


def _first_dict(possible: Mapping[str, Any]) -> dict:
    out = {}
    for k, acceptable in possible.items():
        if isinstance(acceptable, list):
            if acceptable and acceptable[0] != "":
                out[k] = acceptable[0]
        else:
            out[k] = acceptable
    return out


NO_CALL_THINK = "None of the offered functions fits this request, so no function is called."


def function_choice_block(possible_answer: Sequence[Mapping[str, Any]]) -> str:
    """Which functions the right response calls, written as a response (the function-choice block).

    A think block naming the functions, then one ``<tool_call>`` block per expected call holding only the
    function's name (``"arguments": {}``), in the possible answer's order; for an irrelevance question, the think
    block of a response that calls nothing.
    """
    names = [next(iter(a)) for a in possible_answer]
    if not names:
        return render_calls([], think=NO_CALL_THINK)
    unique = list(dict.fromkeys(names))
    think = (
        f"The function to call is {unique[0]}."
        if len(unique) == 1
        else f"The functions to call are {', '.join(unique[:-1])} and {unique[-1]}."
    )
    return render_calls([ToolCall(n, {}) for n in names], think=think)


def reference_response(
    functions: Sequence[Mapping[str, Any]], possible_answer: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]]
) -> str:
    """A complete reference response: a short think block and the :func:`reference_calls`."""
    calls = reference_calls(functions, possible_answer)
    if not calls:
        think = NO_CALL_THINK
    else:
        names = list(dict.fromkeys(c.name for c in calls))
        think = f"The request needs {len(calls)} call{'s' if len(calls) > 1 else ''} to {', '.join(names)}."
    return render_calls(calls, think=think)
