"""Adversarial search on the tool-calling verifiers, and one named test per finding.

The search (hypothesis, bounded) draws bundled questions and runs the generators of
``tests/toolcall/adversarial_search.py`` on them: completions that do not do the task must not earn 1 (except where a
reward checks only part of the task: ``BY_DESIGN``), and correct answers written differently from the reference
must earn 1. Each finding of that search on the official semantics has a named test below; the table of
differences between the semantics is in docs/bfcl.md.
"""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrtpo_sdk import MRTPOError
from mrtpo_sdk.evaluation import bfcl_ast_accuracy
from mrtpo_sdk.evaluation.core import EvalRecord
from mrtpo_sdk.toolcall import (
    ToolCall,
    check_calls,
    declines_to_call,
    documented_default,
    parse_tool_response,
    strings_match,
)

from . import adversarial_search as ADV

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = str(ROOT / "tasks" / "data" / "bfcl")


TASK, EXAMPLES = ADV.load_examples()
BY_ID = {e.id: e for e in EXAMPLES}
OFFICIAL = {e.id: replace(e, semantics="official") for e in EXAMPLES}
SEARCH = settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def rewards(example, completion):
    return [None if r is None else r.reward for r in TASK.score(example, completion)]


# --------------------------------------------------------------------------- the search


@SEARCH
@given(st.integers(0, len(EXAMPLES) - 1))
def test_search_no_completion_that_skips_the_task_earns_1(i):
    example = EXAMPLES[i]
    others = EXAMPLES[i + 1 :] + EXAMPLES[:i]
    for kind, text in ADV.holes(TASK, example, others):
        for name, r in zip(("tool_format", "function_choice", "arguments"), rewards(example, text)):
            if r is not None and r >= 1.0:
                assert ADV._by_design(kind, name, example), (example.id, kind, name, text[:200])


@SEARCH
@given(st.integers(0, len(EXAMPLES) - 1))
def test_search_no_correct_answer_written_differently_earns_0(i):
    example = EXAMPLES[i]
    for kind, text in ADV.equivalents(example):
        fmt, choice, args = rewards(example, text)
        assert (choice, args) == (1.0, 1.0), (example.id, kind, text[:300])
        if kind in ADV.LAYOUT_KINDS:
            assert fmt == 1.0, (example.id, kind, text[:300])


def test_search_generators_cover_every_kind():
    holes = {k for i, e in enumerate(EXAMPLES) for k, _ in ADV.holes(TASK, e, EXAMPLES[i + 1 :])}
    eq = {k for e in EXAMPLES for k, _ in ADV.equivalents(e)}
    assert set(ADV.HOLE_KINDS) <= holes and set(ADV.EQUIVALENT_KINDS) == eq


# --------------------------------------------------------------------------- holes found


IRRELEVANT_NOT_DECLINING = [
    "",
    " \n\t\n",
    "asdf qwerty 123",
    "Sorry, I cannot help with that.",  # a decline, but not in the format the prompt asks for
    'find_roots(x=1)',
    '{"name": "find_roots", "arguments": {}}',
    "What is the roots of linear equation bx + c = 0?",  # the question echoed
    "<think></think>",
    "<think>\n \n</think>",
    "<think>I will call find_roots now",  # truncated
]


@pytest.mark.parametrize("completion", IRRELEVANT_NOT_DECLINING)
def test_irrelevance_no_call_pays_only_a_well_formed_decline(completion):
    # finding: function_choice paid 1 on every irrelevance question for any text without a <tool_call> tag
    e = BY_ID["irrelevance_4"]
    assert rewards(e, completion)[1:] == [0.0, None]
    assert rewards(OFFICIAL[e.id], completion)[1:] == [1.0, None]  # the official relevance checker's verdict
    assert not declines_to_call(completion)


def test_irrelevance_decline_in_the_format_pays():
    e = BY_ID["irrelevance_4"]
    for text in ("<think>\nNo offered function solves equations symbolically.\n</think>", "<think>no</think>\n\n"):
        assert rewards(e, text) == [1.0, 1.0, None]
        assert declines_to_call(text)
    # a call, even to an offered function, is not a decline in either semantics
    call = '<think>x</think>\n<tool_call>\n{"name": "find_roots", "arguments": {}}\n</tool_call>'
    assert rewards(e, call)[1] == rewards(OFFICIAL[e.id], call)[1] == 0.0


STR_FN = [{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
    "s": {"type": "string"}, "items": {"type": "array", "items": {"type": "string"}}}, "required": ["s"]}}]


def _ok(value, acceptable, semantics="training", param="s"):
    return check_calls(STR_FN, [ToolCall("f", {param: value})], [{"f": {param: [acceptable]}}], semantics).correct


@pytest.mark.parametrize("value, acceptable", [
    ("15", "1.5"), ("5", "-5"), ("x*2", "x**2"), ("314", "3.14"), ("2022-1-1", "2022-11"), ("1/2", "12"),
])
def test_numbers_inside_strings_must_agree(value, acceptable):
    # finding: BFCL's normal form drops ".", "-", "*", "^", "/" and spaces, so "15" matched "1.5" and "x*2" "x**2"
    assert _ok(value, acceptable, "official")
    assert not _ok(value, acceptable)
    assert not strings_match(value, acceptable)
    assert not _ok([value], [acceptable], param="items")  # list items too


@pytest.mark.parametrize("value, acceptable", [
    ("x^2", "x**2"), ("X ** 2", "x**2"), ("1,000", "1000"), ("2,500", "2500"), ("New York, NY", "new york ny"),
    ("2022/01/01", "2022-01-01"), ("3x^2 + 2x", "3*x**2+2*x"),
])
def test_strings_the_normal_form_rightly_equates_still_match(value, acceptable):
    assert _ok(value, acceptable) and _ok(value, acceptable, "official")


def test_huge_integer_for_a_float_parameter_does_not_raise():
    # finding: float(10**400) raised OverflowError inside the checker (3 of 13,572 fuzzed completions stopped the run)
    fn = [{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}}, "required": ["x"]}}]
    for semantics in ("training", "official"):
        check = check_calls(fn, [ToolCall("f", {"x": 10**400})], [{"f": {"x": [1.0]}}], semantics)
        assert not check.correct and check.error.startswith("a call to 'f' whose parameter 'x' is 1000")
    e = BY_ID["simple_python_0"]
    text = '<think>a</think>\n<tool_call>\n{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": ' \
        + "9" * 4000 + "}}\n</tool_call>"
    assert rewards(e, text) == [1.0, 1.0, 0.0]


def test_overflowing_number_literal_is_not_json():
    # finding: 1e400 was read as inf, a non-finite value the format says JSON cannot hold
    text = '<think>a</think>\n<tool_call>\n{"name": "f", "arguments": {"x": 1e400}}\n</tool_call>'
    assert parse_tool_response(text).error == "a <tool_call> block that is not valid JSON (the number 1e400 is too large for a float)"
    assert parse_tool_response(text.replace("1e400", "1e-400")).calls == (ToolCall("f", {"x": 0.0}),)


# --------------------------------------------------------------------------- refused correct answers found


AREA = BY_ID["simple_python_0"]  # base: integer, height: integer, unit: string (default 'units')


def test_integral_float_for_an_integer_parameter():
    # finding: 121 references with 10.0 for an integer earned arguments 0 (JSON Schema's integer includes 10.0)
    text = '<think>a</think>\n<tool_call>\n{"name": "calculate_triangle_area", "arguments": {"base": 10.0, "height": 5.0}}\n</tool_call>'
    assert rewards(AREA, text) == [1.0, 1.0, 1.0]
    assert rewards(OFFICIAL[AREA.id], text) == [1.0, 1.0, 0.0]
    assert rewards(AREA, text.replace("10.0", "10.5"))[2] == 0.0
    fn = [{"name": "f", "parameters": {"type": "dict", "properties": {"ids": {"type": "array", "items": {"type": "integer"}}}, "required": ["ids"]}}]
    assert check_calls(fn, [ToolCall("f", {"ids": [1.0, 2.0]})], [{"f": {"ids": [[1, 2]]}}]).correct
    assert not check_calls(fn, [ToolCall("f", {"ids": [1.0, 2.0]})], [{"f": {"ids": [[1, 2]]}}], "official").correct
    assert not check_calls(fn, [ToolCall("f", {"ids": [1.5, 2.0]})], [{"f": {"ids": [[1, 2]]}}]).correct


DEFAULTS = {
    "name": "g",
    "description": "",
    "parameters": {"type": "dict", "required": ["city"], "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "description": "Temperature unit.", "default": "celsius"},
        "days": {"type": "integer", "description": "How many days. Defaults to 3."},
        "detailed": {"type": "boolean", "description": "Details.", "default": "false"},  # a BFCL slip: a string
        "lang": {"type": "string", "description": "Language, default is 'en'."},
    }},
}


def _g(args, answer, semantics="training"):
    return check_calls([DEFAULTS], [ToolCall("g", args)], [{"g": answer}], semantics)


def test_explicitly_passing_a_documented_default():
    # finding: passing the documented default of a parameter the answer lets you leave out earned 0
    answer = {"city": ["Paris"], "unit": [""], "days": ["", 5]}
    for extra in ({"unit": "celsius"}, {"unit": "Celsius"}, {"days": 3}, {"days": 3.0}, {"lang": "en"},
                  {"detailed": False}):
        assert _g({"city": "Paris", **extra}, answer).correct, extra
        assert not _g({"city": "Paris", **extra}, answer, "official").correct, extra
    # not the default, or a value of the wrong type, is still wrong
    for extra in ({"unit": "kelvin"}, {"days": 4}, {"lang": "fr"}, {"detailed": "false"}, {"detailed": True}):
        assert not _g({"city": "Paris", **extra}, answer).correct, extra
    # a required parameter's value is the answer's business, never replaced by a default
    assert not _g({"city": "celsius"}, answer).correct


def test_leaving_out_an_optional_parameter_whose_default_is_the_answer():
    # finding: an answer listing only the documented default (no "") refused a call that leaves it out
    assert _g({"city": "Paris"}, {"city": ["Paris"], "unit": ["celsius", "c"], "days": [3]}).correct
    assert not _g({"city": "Paris"}, {"city": ["Paris"], "unit": ["celsius"]}, "official").correct
    assert not _g({"city": "Paris"}, {"city": ["Paris"], "unit": ["fahrenheit"]}).correct  # default not acceptable
    assert not _g({}, {"city": ["Paris"]}).correct  # required


def test_bundled_default_findings():
    # the bundled questions where the search found them
    e = BY_ID["simple_python_76"]  # model: "options: 'Darwin', 'Lamarck', default is 'Darwin'."; answer ['Darwin']
    call = ToolCall("prediction.evolution", {"species": "Homo Sapiens", "years": 50})
    assert check_calls(e.functions, [call], e.possible_answer).correct
    assert not check_calls(e.functions, [call], e.possible_answer, "official").correct


@pytest.mark.parametrize("spec, default", [
    ({"type": "string", "default": "celsius"}, "celsius"),
    ({"type": "string", "description": "Units. Default is 'cm'."}, "cm"),
    ({"type": "string", "description": 'The sort key, default: "date"'}, "date"),
    ({"type": "integer", "description": "Tempo in bpm. Defaults to 120 beats per minute."}, 120),
    ({"type": "integer", "description": "Stroke width of the outline. Default: 5"}, 5),
    ({"type": "float", "description": "The magnetic permeability. Default is 12.57e10."}, 12.57e10),
    ({"type": "boolean", "description": "Whether to. Default is false"}, False),
    ({"type": "boolean", "default": "true"}, True),
    ({"type": "string", "default": None}, None),
])
def test_documented_default(spec, default):
    assert documented_default(spec) == default and type(documented_default(spec)) is type(default)


@pytest.mark.parametrize("spec", [
    {"type": "integer", "description": "Permitivity, default is for vacuum."},
    {"type": "string", "description": "Genre. Default is none if not provided."},
    {"type": "array", "description": "Types sold. Default empty array"},
    {"type": "integer", "description": "Count. Default is 2.5."},
    {"type": "integer", "default": "many"},
    {"type": "string"},
])
def test_no_documented_default(spec):
    assert documented_default(spec) is documented_default(None)


def test_parallel_calls_paired_one_to_one():
    # the official checker pairs greedily (parallel_178: its verdict depends on the order of the calls)
    e = BY_ID["parallel_178"]
    calls = list(reversed(parse_tool_response(TASK.reference_completion(e)).calls))
    assert check_calls(e.functions, calls, e.possible_answer).correct
    assert not check_calls(e.functions, calls, e.possible_answer, "official").correct
    assert check_calls(e.functions, calls[::-1], e.possible_answer, "official").correct


def test_parallel_178_data_slip_pays_a_wrong_call_set_officially_only():
    """parallel_178's first expected call accepts "Microsoft" or "Apple" for 2022-01-01 (a slip in BFCL's data), so
    Apple/2022-01-01 twice and no Microsoft/2022-01-01 passes on the data as published; training checks the
    corrected answer (DATA_FIXES), official the data as published."""
    import json

    from mrtpo_sdk.toolcall import ast_correct
    from mrtpo_sdk.toolcall.check import DATA_FIXES, corrected_answer

    e = BY_ID["parallel_178"]
    assert e.possible_answer == DATA_FIXES["parallel_178"][0]  # the bundled line is the published one

    def call(company, date):
        args = {"company_name": company, "date": date, "exchange": "NASDAQ"}
        return "<tool_call>\n" + json.dumps({"name": "get_stock_price", "arguments": args}) + "\n</tool_call>"

    wrong = "<think>\nFour prices.\n</think>\n" + "\n".join(
        [call("Apple", "2022-01-01"), call("Microsoft", "2022-02-01"), call("Apple", "2022-01-01"),
         call("Apple", "2022-02-01")])
    assert ast_correct(e.functions, e.possible_answer, wrong, "official") is True
    assert ast_correct(e.functions, e.possible_answer, wrong) is False
    right = TASK.reference_completion(e)
    assert ast_correct(e.functions, e.possible_answer, right) and ast_correct(e.functions, e.possible_answer, right,
                                                                               "official")
    calls = list(reversed(parse_tool_response(right).calls))  # any order of the four right calls, under training
    assert check_calls(e.functions, calls, e.possible_answer).correct
    assert corrected_answer(e.possible_answer)[0]["get_stock_price"]["company_name"] == ["Microsoft"]
    other = BY_ID["parallel_72"].possible_answer if "parallel_72" in BY_ID else []
    assert corrected_answer(other) is other  # every other answer is left as it is


# --------------------------------------------------------------------------- choosing and reporting the semantics


def test_semantics_option():
    with pytest.raises(MRTPOError, match="option 'semantics' of task 'bfcl' is one of training, official"):
        TASK.with_options(semantics="strict")
    official = TASK.with_options(semantics="official").load_examples("train", BUNDLED)
    assert {e.semantics for e in official} == {"official"}
    assert {e.semantics for e in TASK.load_examples("train", BUNDLED)} == {"training"}
    with pytest.raises(ValueError, match="unknown semantics 'x'"):
        check_calls(AREA.functions, [], AREA.possible_answer, "x")


def test_eval_reports_official_accuracy_beside_the_rewards():
    int_float = '<think>a</think>\n<tool_call>\n{"name": "calculate_triangle_area", "arguments": {"base": 10.0, "height": 5}}\n</tool_call>'
    irr = BY_ID["irrelevance_4"]
    records = []
    for e, text in ((AREA, int_float), (irr, ""), (irr, "<think>Nothing fits.</think>")):
        rs = dict(zip(("tool_format", "function_choice", "arguments"), rewards(e, text)))
        records.append(EvalRecord(e.id, 0, text, rs, 10, e))
    out = TASK.metrics(records)
    assert out["ast_accuracy"] == pytest.approx(2 / 3) and out["ast_accuracy_official"] == pytest.approx(2 / 3)
    assert out["ast_accuracy/simple_python"] == 1.0 and out["ast_accuracy_official/simple_python"] == 0.0
    assert out["ast_accuracy/irrelevance"] == 0.5 and out["ast_accuracy_official/irrelevance"] == 1.0
    assert "ast_accuracy_official" not in bfcl_ast_accuracy()(records)


def test_docs_table_lists_every_difference():
    doc = (ROOT / "docs" / "bfcl.md").read_text(encoding="utf-8")
    section = doc[doc.index("## `official` and `training` semantics") : doc.index("## Adversarial search")]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    for key in ("parallel", "integral float", "default passed", "default left out", "numbers inside strings",
                "irrelevance", "1e400", "huge integer"):
        assert any(key in row.lower() for row in rows), key
    # every row: a difference, both semantics' behaviour and a one-line example input
    assert all(row.count(" | ") == 3 and row.split(" | ")[-1].strip(" |") for row in rows)


def test_reference_and_official_verdicts_json_round_trip():
    # the references the blocks show stay correct in both semantics (no example changes with the semantics)
    for e in EXAMPLES:
        ref = TASK.reference_completion(e)
        assert rewards(e, ref) == rewards(OFFICIAL[e.id], ref)
        json.dumps(rewards(e, ref))


def test_explicit_empty_string_is_not_the_documented_default():
    # {"base": 10, "height": 5, "unit": ""} earns arguments 1 officially; the function receives "", not its default
    # 'units' (BFCL's "" in the answer marks "may be left out", not the value ""), so training gives 0
    text = '<think>a</think>\n<tool_call>\n{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5, "unit": ""}}\n</tool_call>'
    assert rewards(OFFICIAL[AREA.id], text) == [1.0, 1.0, 1.0]
    assert rewards(AREA, text) == [1.0, 1.0, 0.0]
    assert rewards(AREA, text.replace('"unit": ""', '"unit": " "')) == [1.0, 1.0, 0.0]
    assert rewards(AREA, text.replace(', "unit": ""', "")) == [1.0, 1.0, 1.0]  # left out: its default
    assert rewards(AREA, text.replace('"unit": ""', '"unit": "units"')) == [1.0, 1.0, 1.0]
    # the other direction: "" is right where it is the documented default, or where no default is documented
    fn = {"name": "h", "parameters": {"type": "dict", "required": ["q"], "properties": {
        "q": {"type": "string"}, "prefix": {"type": "string", "default": ""}, "tag": {"type": "string"}}}}
    answer = {"q": ["x"], "prefix": [""], "tag": [""]}
    assert check_calls([fn], [ToolCall("h", {"q": "x", "prefix": ""})], [{"h": answer}]).correct
    assert check_calls([fn], [ToolCall("h", {"q": "x", "tag": ""})], [{"h": answer}]).correct
    assert _g({"city": "Paris", "unit": ""}, {"city": ["Paris"], "unit": ["", "celsius"]}).correct is False
    assert _g({"city": "Paris", "unit": ""}, {"city": ["Paris"], "unit": ["", "celsius"]}, "official").correct
