"""Where a tool-calling completion's rewards are decided (mrtpo_sdk.toolcall.deciding and tasks/bfcl.py's
deciding= wiring): exact spans on hand-built completions; no crash on any text."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk import load_task
from mrtpo_sdk.toolcall.deciding import argument_spans, call_spans, format_spans, name_spans

from ..helpers import ROOT

RESPONSE = (
    "<think>\nThe factorial of five.\n</think>\n"
    '<tool_call>\n{"name": "math.factorial", "arguments": {"number": 5, "mode": "exact", "opts": [1, {"a": "}"}]}}\n'
    "</tool_call>\n"
    '<tool_call>\n{"arguments": {}, "name": "noop"}\n</tool_call>'
)


def texts(text, spans):
    return None if spans is None else [text[s:e] for s, e in spans]


def test_format_spans_are_the_tags_and_the_wrapper_keys():
    assert texts(RESPONSE, format_spans(RESPONSE)) == [
        "<think>", "</think>", "<tool_call>", '"name"', '"arguments"', "</tool_call>",
        "<tool_call>", '"arguments"', '"name"', "</tool_call>",
    ]
    assert format_spans(RESPONSE)[:2] == [(0, 7), (31, 39)]


def test_name_spans_are_the_function_names_inside_their_quotes():
    assert texts(RESPONSE, name_spans(RESPONSE)) == ["math.factorial", "noop"]
    start = RESPONSE.index("math.factorial")
    assert name_spans(RESPONSE)[0] == (start, start + len("math.factorial"))


def test_argument_spans_are_the_values_or_an_empty_arguments_object():
    assert texts(RESPONSE, argument_spans(RESPONSE)) == ["5", "exact", '[1, {"a": "}"}]', "{}"]


def test_a_broken_call_shows_what_was_written_before_the_break():
    text = '<tool_call>{"name": "f", "arguments": {"x": 1, "y": tru'
    assert texts(text, name_spans(text)) == ["f"]
    assert texts(text, argument_spans(text)) == ["1", "tru"]
    text = '<tool_call>{"name": "", "arguments": {"s": ""}}</tool_call>'
    assert texts(text, name_spans(text)) == ['""']  # an empty string: its quotes
    assert texts(text, argument_spans(text)) == ['""']


def test_nothing_to_point_at_is_none():
    for text in ("", "The answer is 5.", "<think>no call</think>", None):
        assert name_spans(text) is None and argument_spans(text) is None
    assert format_spans("The answer is 5.") is None
    assert texts("<think>x</think>", format_spans("<think>x</think>")) == ["<think>", "</think>"]
    assert call_spans('<tool_call>["name"]</tool_call>')[0].keys == []  # not an object


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(['<tool_call>', '</tool_call>', '<think>', '</think>', '{', '}', '[', ']', '"',
                                 '\\', ':', ',', '"name"', '"arguments"', ' ', '\n', '1', 'x', '{"name": "f"']),
                max_size=60),
       st.text(max_size=40))
def test_locators_never_raise_and_stay_inside_the_text(pieces, noise):
    text = "".join(pieces) + noise
    for spans in (format_spans(text), name_spans(text), argument_spans(text)):
        assert spans is None or all(0 <= s < e <= len(text) for s, e in spans)


def test_huge_inputs_are_fast():
    start = time.monotonic()
    for text in ("<tool_call>" + "{" * 200_000, '<tool_call>{"name": "' + "\\" * 200_001, "<tool_call>" * 50_000,
                 '<tool_call>{"name": "f", "arguments": {' + '"a": 1, ' * 20_000):
        format_spans(text), name_spans(text), argument_spans(text)
    assert time.monotonic() - start < 10


def test_the_bfcl_task_wires_each_locator():
    task = load_task(ROOT / "tasks" / "bfcl.py")
    by = {v.name: v for v in task.verifiers}
    assert texts(RESPONSE, by["function_choice"].locate(None, RESPONSE)) == ["math.factorial", "noop"]
    assert texts(RESPONSE, by["arguments"].locate(None, RESPONSE)) == ["5", "exact", '[1, {"a": "}"}]', "{}"]
    assert texts(RESPONSE, by["tool_format"].locate(None, RESPONSE))[:3] == ["<think>", "</think>", "<tool_call>"]
