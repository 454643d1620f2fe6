"""Hostile model output for the BFCL tool-calling verifiers (tasks/bfcl.py): the generators of the fuzz.

Each completion is built from a bundled question by one of :data:`KINDS` (huge texts and string arguments, deep
JSON nesting, thousands of ``<tool_call>`` tags, NUL bytes, lone surrogates, mutated references, huge and tiny
numbers, tag soup, random Unicode); :func:`score_one` scores it with the three verifiers and the official verdict.
``tests/toolcall/test_fuzz.py`` draws from these generators with hypothesis in CI; the >=10,000-completion timed run
is ``python benchmarks/bfcl_fuzz.py``, which imports them from here (no test loads a benchmark).
"""

from __future__ import annotations

import math
import random

from mrtpo_sdk.toolcall import ToolCall, reference_calls, render_calls

KINDS = (
    "huge_text", "huge_string_argument", "deep_json", "many_tags", "many_open_tags", "nul_bytes", "lone_surrogates",
    "surrogate_escapes", "mutated_reference", "huge_numbers", "tag_soup", "random_unicode", "reference",
)
_SOUP = ["<think>", "</think>", "<tool_call>", "</tool_call>", "{", "}", "[", "]", '"', "\\", ":", ",", "\n", " ",
         '"name"', '"arguments"', "\x00", "\ud800", "1e999", "-", "0", "NaN", "null", "true", "é"]


def hostile(rng: random.Random, task, example, kind: str) -> str:
    """One hostile completion of ``kind`` for ``example``, drawn with ``rng``."""
    ref = task.reference_completion(example)
    name = next(iter(example.possible_answer[0])) if example.possible_answer else example.functions[0]["name"]
    head = "<think>\nx\n</think>\n"
    if kind == "reference":
        return ref
    if kind == "huge_text":
        return rng.choice(["x", "é", " ", "<", "{"]) * rng.choice([50_000, 99_999, 100_000, 100_001, 150_000])
    if kind == "huge_string_argument":
        s = rng.choice(["a", "1.5 ", "**", "\\u00e9", "\\\""]) * (rng.randint(1, 45_000) // 2)
        return head + f'<tool_call>\n{{"name": "{name}", "arguments": {{"x": "{s}"}}}}\n</tool_call>'
    if kind == "deep_json":
        d = rng.choice([5, 31, 32, 33, 200, 5000, 40_000])
        o, c = rng.choice([("[", "]"), ('{"a": ', "}")])
        return head + f'<tool_call>\n{{"name": "{name}", "arguments": {{"x": {o * d}1{c * d}}}}}\n</tool_call>'
    if kind == "many_tags":
        block = ref.split("</think>", 1)[-1].strip() or f'<tool_call>\n{{"name": "{name}", "arguments": {{}}}}\n</tool_call>'
        return head + "\n".join([block] * rng.choice([2, 10, 100, 1000, 3000]))
    if kind == "many_open_tags":
        return head + rng.choice(["<tool_call>", "<tool_call>\n{", "</tool_call>", "<think>", "<tool_call>{\"name\""]) * rng.choice([10, 1000, 8000])
    if kind == "nul_bytes":
        return _insert(rng, ref, "\x00", rng.randint(1, 20))
    if kind == "lone_surrogates":
        return _insert(rng, ref, rng.choice(["\ud800", "\udfff", "\udc00\ud800"]), rng.randint(1, 20))
    if kind == "surrogate_escapes":
        return ref.replace('": "', '": "\\ud800', rng.randint(1, 3)) if '": "' in ref else ref + "\\udfff"
    if kind == "mutated_reference":
        chars = list(ref)
        for _ in range(rng.randint(1, 8)):
            op, i = rng.random(), rng.randrange(len(chars) + 1)
            if op < 0.4:
                chars.insert(i, rng.choice(_SOUP))
            elif op < 0.7 and chars:
                del chars[min(i, len(chars) - 1)]
            elif chars:
                chars[min(i, len(chars) - 1)] = rng.choice(_SOUP)
        return "".join(chars)
    if kind == "huge_numbers":
        num = rng.choice(["1e400", "-1e400", "1e-400", "9" * 4000, "9" * 4400, "-0", "0.0000000000000000001",
                          "123456789012345678901234567890", "1" + "0" * 300, "1E+308", "4.9e-324"])
        calls = reference_calls(example.functions, example.possible_answer) or [ToolCall(name, {"x": 1})]
        call = rng.choice(calls)
        params = list(call.arguments) or ["x"]
        numeric = [p for p in params if isinstance(call.arguments.get(p), (int, float))]
        p = rng.choice(numeric or params)
        body = render_calls([ToolCall(call.name, {**call.arguments, p: "\x01NUM\x01"})], think="x")
        return body.replace('"\\u0001NUM\\u0001"', num)
    if kind == "tag_soup":
        return "".join(rng.choice(_SOUP) for _ in range(rng.randint(0, 400)))
    if kind == "random_unicode":
        return "".join(chr(rng.randrange(0, 0x110000)) for _ in range(rng.randint(0, 300)))
    raise ValueError(kind)


def _insert(rng: random.Random, text: str, piece: str, k: int) -> str:
    chars = list(text)
    for _ in range(k):
        chars.insert(rng.randrange(len(chars) + 1), piece)
    return "".join(chars)


def score_one(task, example, completion: str, official) -> str:
    """Score with every verifier and the official verdict; ``""`` if all is well, else what went wrong."""
    try:
        results = task.score(example, completion)
        verdict = official(example, completion)
    except Exception as exc:  # noqa: BLE001 - the point is to catch any
        return f"raised {type(exc).__name__}: {str(exc)[:120]}"
    for v, r in zip(task.verifiers, results):
        if r is None:
            if v.name == "arguments" and not example.possible_answer:
                continue
            return f"{v.name} returned None"
        if not (isinstance(r.reward, float) and math.isfinite(r.reward) and 0.0 <= r.reward <= 1.0):
            return f"{v.name} returned {r.reward!r}"
        if not isinstance(r.block, str):
            return f"{v.name} returned a block of type {type(r.block).__name__}"
    if not isinstance(verdict, bool):
        return f"official verdict {verdict!r}"
    return ""
