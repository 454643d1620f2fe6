"""Adversarial search on the BFCL tool-calling verifiers (tasks/bfcl.py): the generators of completions.

Two families, each generated from every bundled question:

* **holes** — completions that do not do the task (empty, junk, the prompt echoed, a block pasted, a call to a
  function of another question, the expected functions called without arguments, no call on a question that needs
  one, a plain-text or wrongly formatted "no" on an irrelevance question...). A verifier that pays 1 for one of
  them is a finding, except where the reward checks only that part of the task (:data:`BY_DESIGN`).
* **equivalents** — correct answers written differently from the reference (argument order, parallel call order,
  whitespace and layout in the tags, JSON escapes and indentation, ``5.0`` for an integer, ``5`` for a float, a
  documented default passed explicitly, an optional parameter with a documented default left out). One that earns
  0 on ``function_choice`` or ``arguments`` (or ``tool_format``, for the layout variants) is a finding.

``tests/toolcall/test_adversarial.py`` runs these generators (sampled by hypothesis) in CI and asserts that the
training semantics has none; ``python tools/agreement/bfcl/adversarial.py`` runs them on every question and prints
the findings per semantics.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from mrtpo_sdk.loader import load_task
from mrtpo_sdk.toolcall import (
    FORMAT_RULE,
    ToolCall,
    documented_default,
    function_choice_block,
    reference_calls,
    render_calls,
)

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "tasks" / "data" / "bfcl"
_NONE = documented_default(None)  # the "no default" marker

HOLE_KINDS = (
    "empty", "whitespace", "junk", "think_empty", "think_unclosed", "plain_text", "python_call", "json_no_tags",
    "prompt_echo", "question_echo", "format_block", "other_example", "no_args", "function_choice_block", "no_call",
    "duplicated_calls", "string_number_mangled",
)
"""Completions that do not do the task."""
EQUIVALENT_KINDS = (
    "argument_order", "call_order", "compact_tags", "spaced_tags", "crlf", "ascii_escapes", "indented_json",
    "int_as_float", "float_as_int", "explicit_default", "omit_defaulted",
)
"""Correct answers written differently from the reference."""
LAYOUT_KINDS = {"argument_order", "call_order", "compact_tags", "spaced_tags", "crlf", "ascii_escapes", "indented_json"}
"""Equivalents whose format is also right (``tool_format`` must pay 1 too)."""

BY_DESIGN = {
    # (kind, reward): why paying 1 is right
    ("no_args", "function_choice"): "the right functions are chosen; function_choice checks only that",
    ("function_choice_block", "function_choice"): "the block is a response that chooses the right functions",
    ("think_empty", "tool_format"): "the format is right; tool_format checks only that",
    ("no_call", "tool_format"): "the format is right",
    ("no_args", "tool_format"): "the format is right",
    ("function_choice_block", "tool_format"): "the format is right",
    ("other_example", "tool_format"): "the format is right",
    ("duplicated_calls", "tool_format"): "the format is right",
    ("string_number_mangled", "tool_format"): "the format is right",
    ("string_number_mangled", "function_choice"): "the right functions are chosen",
    ("no_call", "function_choice"): "on an irrelevance question a well-formed reasoned decline is the task",
}


def load_examples(data: Path = BUNDLED, semantics: str = "training") -> tuple[object, list]:
    task = load_task(ROOT / "tasks" / "bfcl.py")
    examples = task.with_options(max_prompt_chars=0).load_examples("all", data)
    return task, [replace(e, semantics=semantics) for e in examples]


def _props(example, name: str) -> tuple[dict, list]:
    doc = next(f for f in example.functions if f.get("name") == name)
    params = doc.get("parameters") or {}
    return params.get("properties") or {}, params.get("required") or []


def _render(calls, think="The request needs these calls.", **dumps) -> str:
    if not dumps:
        return render_calls(calls, think=think)
    blocks = [
        "<tool_call>\n" + json.dumps({"name": c.name, "arguments": c.arguments}, **dumps) + "\n</tool_call>" for c in calls
    ]
    return "\n".join([f"<think>\n{think}\n</think>", *blocks])


def holes(task, example, others: list) -> Iterator[tuple[str, str]]:
    """``(kind, completion)`` pairs that do not do the task of ``example``."""
    names = [next(iter(a)) for a in example.possible_answer]
    first = names[0] if names else example.functions[0]["name"]
    prompt = task.rollout_prompt(example)
    yield "empty", ""
    yield "whitespace", " \n\t\n"
    yield "junk", "asdf qwerty 123"
    yield "think_empty", "<think></think>"
    yield "think_unclosed", f"<think>I will call {first} now"
    yield "plain_text", "Sorry, I cannot help with that."
    yield "python_call", f"{first}(x=1)"
    yield "json_no_tags", json.dumps({"name": first, "arguments": {}})
    yield "prompt_echo", "\n\n".join(m["content"] for m in prompt)
    yield "question_echo", prompt[-1]["content"]
    yield "format_block", FORMAT_RULE
    mine = set(f["name"] for f in example.functions)
    for other in others:
        if other.possible_answer and not {next(iter(a)) for a in other.possible_answer} & mine:
            yield "other_example", task.reference_completion(other)
            break
    if example.possible_answer:
        yield "no_call", "<think>\nNone of the offered functions fits this request.\n</think>"
        yield "function_choice_block", function_choice_block(example.possible_answer)
        if any(_needs_arguments(example, n, a) for n, a in (next(iter(x.items())) for x in example.possible_answer)):
            yield "no_args", render_calls([ToolCall(n, {}) for n in names], think="Calling.")
        calls = reference_calls(example.functions, example.possible_answer)
        yield "duplicated_calls", _render(calls + calls)
        mangled = [ToolCall(c.name, {p: _mangle(v) for p, v in c.arguments.items()}) for c in calls]
        if mangled != calls:
            yield "string_number_mangled", _render(mangled)
    else:
        yield "no_call_plain", "None of these functions can do that."


_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
_SIGN = re.compile(r"(?<![0-9A-Za-z_.])-(?=\d)")


def _mangle(v):
    """A string value with a different meaning that BFCL's normal form does not see: the decimal point or the minus
    sign of its numbers dropped, ``**`` turned into ``*`` (``"1.5"`` -> ``"15"``, ``"-5"`` -> ``"5"``,
    ``"x**2"`` -> ``"x*2"``); other values unchanged."""
    if isinstance(v, list):
        return [_mangle(x) for x in v]
    if not isinstance(v, str):
        return v
    return _SIGN.sub("", _DECIMAL.sub("", v)).replace("**", "*")


def _needs_arguments(example, name: str, answer: dict) -> bool:
    """Whether a call to ``name`` without arguments is wrong in every semantics (a required parameter, or one the
    answer needs and whose documented default, if any, is not acceptable)."""
    props, required = _props(example, name)
    return any(p in required or "" not in acc for p, acc in answer.items() if p in props)


def equivalents(example) -> Iterator[tuple[str, str]]:
    """``(kind, completion)`` pairs: correct answers to ``example`` written differently from its reference."""
    if not example.possible_answer:
        return
    calls = reference_calls(example.functions, example.possible_answer)
    think = "The request needs these calls."
    yield "argument_order", _render([ToolCall(c.name, dict(reversed(list(c.arguments.items())))) for c in calls])
    if len(calls) > 1:
        yield "call_order", _render(list(reversed(calls)))
    body = [json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False) for c in calls]
    yield "compact_tags", f"<think>{think}</think>" + "".join(f"<tool_call>{b}</tool_call>" for b in body)
    yield "spaced_tags", f"\n<think>\n{think}\n</think>\n\n" + "\n\n".join(f"<tool_call> \t\n  {b}  \n\n</tool_call>" for b in body) + "\n"
    yield "crlf", _render(calls).replace("\n", "\r\n")
    yield "ascii_escapes", _render(calls, ensure_ascii=True)
    yield "indented_json", _render(calls, indent=2)
    for kind, make in (("int_as_float", _int_as_float), ("float_as_int", _float_as_int),
                       ("explicit_default", _explicit_default), ("omit_defaulted", _omit_defaulted)):
        changed = [make(example, c, a) for c, a in zip(calls, (next(iter(x.values())) for x in example.possible_answer))]
        if any(new is not None for new in changed):
            yield kind, _render([new or c for new, c in zip(changed, calls)])


def _int_as_float(example, call: ToolCall, answer: dict) -> ToolCall | None:
    props, _ = _props(example, call.name)
    args = {p: float(v) if (props.get(p) or {}).get("type") == "integer" and type(v) is int and abs(v) < 2**53 else v
            for p, v in call.arguments.items()}
    return ToolCall(call.name, args) if args != call.arguments or any(
        type(a) is not type(b) for a, b in zip(args.values(), call.arguments.values())) else None


def _float_as_int(example, call: ToolCall, answer: dict) -> ToolCall | None:
    props, _ = _props(example, call.name)
    args = {p: int(v) if (props.get(p) or {}).get("type") == "float" and type(v) is float and v.is_integer() else v
            for p, v in call.arguments.items()}
    return ToolCall(call.name, args) if any(type(a) is not type(b) for a, b in zip(args.values(), call.arguments.values())) else None


def _explicit_default(example, call: ToolCall, answer: dict) -> ToolCall | None:
    """Every parameter the call leaves out that may be left out and has a documented default, given that default."""
    props, required = _props(example, call.name)
    extra = {}
    for p, spec in props.items():
        if p in call.arguments or p in required or (p in answer and "" not in answer[p]):
            continue
        d = documented_default(spec)
        if d is not _NONE:
            extra[p] = d
    return ToolCall(call.name, {**call.arguments, **extra}) if extra else None


def _omit_defaulted(example, call: ToolCall, answer: dict) -> ToolCall | None:
    """Every optional parameter the call gives whose documented default is an acceptable value, left out."""
    props, required = _props(example, call.name)
    drop = set()
    for p, v in call.arguments.items():
        d = documented_default(props.get(p))
        if p in required or d is _NONE or isinstance(d, (dict, list)) or d is None:
            continue
        if d in answer.get(p, []) or (isinstance(d, str) and any(isinstance(a, str) and a.lower() == d.lower() for a in answer.get(p, []))):
            drop.add(p)
    return ToolCall(call.name, {p: v for p, v in call.arguments.items() if p not in drop}) if drop else None


def hole_findings(task, examples: list) -> list[tuple[str, str, str, str]]:
    """``(kind, reward, example id, completion)`` for every hole that earns 1 and is not :data:`BY_DESIGN`."""
    out = []
    for i, e in enumerate(examples):
        others = examples[i + 1 :] + examples[:i]
        for kind, text in holes(task, e, others):
            for r, result in zip(("tool_format", "function_choice", "arguments"), task.score(e, text)):
                if result is not None and result.reward >= 1.0 and not _by_design(kind, r, e):
                    out.append((kind, r, e.id, text))
    return out


def _by_design(kind: str, reward: str, example) -> bool:
    if (kind, reward) == ("no_call", "function_choice"):
        return not example.possible_answer
    if (kind, reward) == ("function_choice_block", "arguments"):
        # the expected functions need no argument: choosing them is answering
        return not any(_needs_arguments(example, n, a) for n, a in (next(iter(x.items())) for x in example.possible_answer))
    return (kind, reward) in BY_DESIGN


def equivalent_findings(task, examples: list) -> list[tuple[str, str, str, str]]:
    """``(kind, reward, example id, completion)`` for every equivalent answer that earns 0."""
    out = []
    for e in examples:
        for kind, text in equivalents(e):
            names = ("tool_format", "function_choice", "arguments")
            for r, result in zip(names, task.score(e, text)):
                if r == "tool_format" and kind not in LAYOUT_KINDS:
                    continue
                if result is not None and result.reward < 1.0:
                    out.append((kind, r, e.id, text))
    return out
