"""The think + tool-call output parser: format edge cases, robustness on arbitrary text, rendering round trips."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.toolcall import (
    MAX_JSON_DEPTH,
    MAX_RESPONSE_CHARS,
    ToolCall,
    parse_tool_response,
    render_call,
    render_calls,
    response_calls,
)

CALL = '<tool_call>\n{"name": "math.factorial", "arguments": {"number": 5}}\n</tool_call>'
GOOD = f"<think>\nI need the factorial.\n</think>\n{CALL}"


def test_well_formed_response():
    r = parse_tool_response(GOOD)
    assert r.ok and r.error == ""
    assert r.think == "\nI need the factorial.\n"
    assert r.calls == (ToolCall("math.factorial", {"number": 5}),)


def test_multi_line_think_and_several_calls():
    text = "<think>\nline one\n\nline two: f(x)\n</think>\n" + CALL + "\n\n" + CALL.replace("5", "6")
    r = parse_tool_response(text)
    assert r.ok
    assert r.think.count("\n") == 4
    assert [c.arguments["number"] for c in r.calls] == [5, 6]


def test_no_call_is_well_formed():
    r = parse_tool_response("<think>None of the functions fits.</think>\n")
    assert r.ok and r.calls == ()


def test_leading_whitespace_and_compact_layout_allowed():
    r = parse_tool_response('  \n<think>x</think><tool_call>{"name":"f","arguments":{}}</tool_call>')
    assert r.ok and r.calls == (ToolCall("f", {}),)


@pytest.mark.parametrize(
    "text, error",
    [
        ("", "no text at all"),
        ("   \n ", "no text at all"),
        (CALL, "no <think> block at the start"),
        ("reasoning</think>\n" + CALL, "a </think> tag with no <think> block at the start"),
        ("<think>a</think>\n<think>b</think>\n" + CALL, "2 <think> blocks instead of one"),
        ("<think>a</think></think>\n" + CALL, "2 </think> tags instead of one"),
        ("hi <think>a</think>\n" + CALL, "text before the <think> block: 'hi '"),
        ("<think>a <tool_call> b</think>\n" + CALL, "a <tool_call> tag inside the <think> block"),
        ("<think>a\n" + CALL, "a <think> block that is never closed with </think>"),
        (GOOD + "\nDone!", "text after the last call that is not a <tool_call> block: 'Done!'"),
        ("<think>a</think>\nSure:\n" + CALL, "text after the </think> tag that is not a <tool_call> block: 'Sure:\\n<tool_call>\\n{\"name\": \"math.factori'"),
        (GOOD + "\n</tool_call>", "a stray </tool_call> tag"),
        (GOOD + "\n<think>more</think>", "2 <think> blocks instead of one"),
        ("<think>a</think>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n", "a <tool_call> block that is never closed with </tool_call>"),
        ("<think>a</think>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}} extra\n</tool_call>", "text after the JSON inside a <tool_call> block: 'extra\\n'"),
        ("<think>a</think>\n<tool_call>\nf(x=1)\n</tool_call>", "a <tool_call> block that does not hold a JSON object"),
        ("<think>a</think>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}\n</tool_call>", "a <tool_call> block whose JSON object is not closed before </tool_call>"),
        ("<think>a</think>\n<tool_call>\n{\"name\": \"f\"}\n</tool_call>", "a <tool_call> block whose JSON lacks the key 'arguments'"),
        ("<think>a</think>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}, \"id\": 1}\n</tool_call>", "a <tool_call> block whose JSON has the extra key 'id' (only \"name\" and \"arguments\")"),
        ("<think>a</think>\n<tool_call>\n{\"name\": \"\", \"arguments\": {}}\n</tool_call>", "a <tool_call> block whose JSON has a \"name\" that is not a non-empty string"),
        ("<think>a</think>\n<tool_call>\n{\"name\": \"f\", \"arguments\": [1]}\n</tool_call>", "a <tool_call> block whose JSON has \"arguments\" that are not a JSON object"),
        ("<think>a</think>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": NaN}}\n</tool_call>", "a <tool_call> block that is not valid JSON (NaN is not JSON)"),
        ("<think>a</think>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1, \"x\": 2}}\n</tool_call>", "a <tool_call> block that is not valid JSON (duplicate key 'x')"),
        ("<think>a</think>\n<tool_call>\n{'name': 'f', 'arguments': {}}\n</tool_call>", "a <tool_call> block that is not valid JSON (Expecting property name enclosed in double quotes)"),
    ],
)
def test_format_errors(text, error):
    r = parse_tool_response(text)
    assert not r.ok
    assert r.error == error


def test_missing_think_still_yields_calls():
    r = parse_tool_response(CALL)
    assert not r.ok and r.calls == (ToolCall("math.factorial", {"number": 5}),)


def test_extra_think_blocks_are_flaws_that_keep_the_calls():
    for text in ("<think>a</think>\n<think>b</think>\n" + CALL, "<think>a</think></think>\n" + CALL,
                 GOOD + "\n<think>more</think>", "x</think>\n" + CALL):
        r = parse_tool_response(text)
        assert not r.ok and r.think is None
        assert r.calls == (ToolCall("math.factorial", {"number": 5}),), text


def test_text_after_call_yields_no_calls():
    assert parse_tool_response(GOOD + " thanks").calls is None


def test_tags_inside_json_strings_are_data():
    text = '<think>a</think>\n<tool_call>\n{"name": "echo", "arguments": {"s": "</tool_call> <think>"}}\n</tool_call>'
    r = parse_tool_response(text)
    assert r.ok and r.calls[0].arguments == {"s": "</tool_call> <think>"}


def test_deep_nesting_fails_cleanly():
    deep = '{"a": ' * (MAX_JSON_DEPTH + 5) + "1" + "}" * (MAX_JSON_DEPTH + 5)
    text = f'<think>a</think>\n<tool_call>\n{{"name": "f", "arguments": {deep}}}\n</tool_call>'
    r = parse_tool_response(text)
    assert r.calls is None
    assert r.error == f"a <tool_call> block whose JSON is nested more than {MAX_JSON_DEPTH} levels deep"
    # just inside the limit parses
    ok = '{"a": ' * (MAX_JSON_DEPTH - 2) + "1" + "}" * (MAX_JSON_DEPTH - 2)
    assert parse_tool_response(f'<think>a</think><tool_call>{{"name": "f", "arguments": {ok}}}</tool_call>').ok


def test_huge_input_and_huge_numbers_fail_cleanly():
    r = parse_tool_response("<think>" + "x" * MAX_RESPONSE_CHARS + "</think>")
    assert r.error == f"{MAX_RESPONSE_CHARS + 15} characters, more than the {MAX_RESPONSE_CHARS} allowed"
    big = "9" * 5000  # beyond Python's int-from-string digit limit
    r = parse_tool_response(f'<think>a</think><tool_call>{{"name": "f", "arguments": {{"n": {big}}}}}</tool_call>')
    assert r.calls is None and r.error.startswith("a <tool_call> block that is not valid JSON")


def test_non_text_input():
    assert parse_tool_response(None).error == "a NoneType instead of text"
    assert response_calls(b"<think>") is None


def test_response_calls():
    assert response_calls("I cannot help with that.") == ()
    assert response_calls(GOOD + " trailing") is None
    assert response_calls(CALL) == (ToolCall("math.factorial", {"number": 5}),)
    assert response_calls("<think>x</think> <tool_call> broken") is None


def test_render_matches_the_format():
    call = ToolCall("spotify.play", {"artist": "Taylor Swift", "duration": 20})
    assert render_call(call) == (
        '<tool_call>\n{"name": "spotify.play", "arguments": {"artist": "Taylor Swift", "duration": 20}}\n</tool_call>'
    )
    text = render_calls([call, call], think="pick it")
    assert text.startswith("<think>\npick it\n</think>\n<tool_call>\n")
    assert parse_tool_response(text).calls == (call, call)
    with pytest.raises(ValueError):
        render_call(ToolCall("f", {"x": float("nan")}))


TAGS = st.sampled_from(["<think>", "</think>", "<tool_call>", "</tool_call>", "{", "}", "[", "]", '"', "\\", ":", ",",
                        "\n", " ", "name", "arguments", '"name": "f"', '"arguments": {}', "1", "x"])


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text):
    r = parse_tool_response(text)
    assert isinstance(r.error, str)
    assert r.ok == (r.error == "")
    assert r.calls is None or all(isinstance(c, ToolCall) for c in r.calls)
    response_calls(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(TAGS, max_size=60).map("".join))
def test_tag_soup_never_raises(text):
    r = parse_tool_response(text)
    if r.ok:
        assert r.think is not None and r.calls is not None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1).filter(str.strip), st.dictionaries(st.text(max_size=8), JSON, max_size=5)), max_size=4),
       st.text().filter(lambda t: all(tag not in t for tag in ("<think>", "</think>", "<tool_call>", "</tool_call>"))))
def test_render_parse_round_trip(calls, think):
    calls = [ToolCall(n, a) for n, a in calls]
    r = parse_tool_response(render_calls(calls, think=think))
    assert r.ok, r.error
    assert json.dumps([(c.name, c.arguments) for c in r.calls]) == json.dumps([(c.name, c.arguments) for c in calls])
