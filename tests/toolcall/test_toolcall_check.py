"""The call checker against BFCL possible answers: names, required/optional parameters, types, values, order."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.toolcall import ToolCall, arguments_schema, check_calls, standardize_string

AREA = {
    "name": "calculate_triangle_area",
    "description": "Area of a triangle.",
    "parameters": {
        "type": "dict",
        "properties": {
            "base": {"type": "integer"},
            "height": {"type": "float"},
            "unit": {"type": "string"},
            "exact": {"type": "boolean"},
        },
        "required": ["base", "height"],
    },
}
WEATHER = {
    "name": "weather.get",
    "description": "Weather for a city.",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "array", "items": {"type": "integer"}},
            "options": {"type": "dict", "properties": {"units": {"type": "string"}, "alerts": {"type": "boolean"}}},
        },
        "required": ["city"],
    },
}
FUNCS = [AREA, WEATHER]
AREA_ANSWER = [{"calculate_triangle_area": {"base": [10], "height": [5.0], "unit": ["units", "cm", ""], "exact": ["", False]}}]


def verdict(calls, answer=AREA_ANSWER, functions=FUNCS):
    return check_calls(functions, [ToolCall(n, a) for n, a in calls], answer)


def test_right_call():
    c = verdict([("calculate_triangle_area", {"base": 10, "height": 5.0, "unit": "units"})])
    assert c.correct and c.functions_correct and c.error == ""


@pytest.mark.parametrize(
    "args, correct, error",
    [
        ({"base": 10, "height": 5}, True, ""),  # optional omitted; int accepted for float
        ({"base": 10, "height": 5.0, "unit": "CM"}, True, ""),  # strings ignore case
        ({"base": 10, "height": 5.0, "unit": " c-m."}, True, ""),  # ... and spaces/punctuation
        ({"base": 10, "height": 5.0, "exact": False}, True, ""),
        ({"base": 10.0, "height": 5.0}, True, ""),  # training: an integral float is an integer (JSON Schema)
        ({"base": 10.5, "height": 5.0}, False, "a call to 'calculate_triangle_area' whose base 10.5 is not of type 'integer'"),
        ({"base": True, "height": 5.0}, False, "a call to 'calculate_triangle_area' whose base True is not of type 'integer'"),
        ({"base": "10", "height": 5.0}, False, "a call to 'calculate_triangle_area' whose base '10' is not of type 'integer'"),
        ({"base": 11, "height": 5.0}, False, "a call to 'calculate_triangle_area' whose parameter 'base' is 11, not one of [10]"),
        ({"height": 5.0}, False, "a call to 'calculate_triangle_area' whose arguments 'base' is a required property"),
        ({"base": 10, "height": 5.0, "color": "red"}, False, "a call to 'calculate_triangle_area' with the unexpected parameter 'color'"),
        ({"base": 10, "height": 5.0, "unit": "inch"}, False, "a call to 'calculate_triangle_area' whose parameter 'unit' is 'inch', not one of ['units', 'cm', ''] (compared ignoring case and spacing)"),
        ({"base": 10, "height": 5.0, "exact": "false"}, False, "a call to 'calculate_triangle_area' whose exact 'false' is not of type 'boolean'"),
        ({"base": 10, "height": 5.0, "exact": 0}, False, "a call to 'calculate_triangle_area' whose exact 0 is not of type 'boolean'"),
    ],
)
def test_arguments(args, correct, error):
    c = verdict([("calculate_triangle_area", args)])
    assert (c.correct, c.error) == (correct, error)
    assert c.functions_correct


def test_official_semantics_refuses_an_integral_float_for_an_integer():
    c = check_calls(FUNCS, [ToolCall("calculate_triangle_area", {"base": 10.0, "height": 5.0})], AREA_ANSWER, "official")
    assert (c.correct, c.error) == (False, "a call to 'calculate_triangle_area' whose base 10.0 is not of type 'integer'")


def test_parameter_in_answer_but_not_optional_must_be_given():
    answer = [{"calculate_triangle_area": {"base": [10], "height": [5.0], "unit": ["units"]}}]
    c = verdict([("calculate_triangle_area", {"base": 10, "height": 5.0})], answer)
    assert not c.correct and c.error == "a call to 'calculate_triangle_area' without the parameter 'unit'"


def test_wrong_function_and_counts():
    c = verdict([("weather.get", {"city": "Paris"})])
    assert not c.correct and not c.functions_correct
    assert c.error == "no call to 'calculate_triangle_area'"
    c = verdict([])
    assert (c.correct, c.functions_correct, c.error) == (False, False, "0 calls where 1 are expected")
    both = ("calculate_triangle_area", {"base": 10, "height": 5.0})
    c = verdict([both, both])
    assert (c.correct, c.error) == (False, "2 calls where 1 are expected")


def test_no_call_expected():
    assert verdict([], answer=[]).correct
    c = verdict([("weather.get", {"city": "Paris"})], answer=[])
    assert (c.correct, c.functions_correct, c.error) == (False, False, "1 call where no given function fits the request")


PARALLEL = [
    {"weather.get": {"city": ["Paris", "London"], "days": [[1, 2], ""]}},
    {"weather.get": {"city": ["Paris"], "days": [""]}},
]


def test_parallel_calls_any_order_with_a_full_matching():
    london = ("weather.get", {"city": "London", "days": [1, 2]})
    paris = ("weather.get", {"city": "Paris"})
    assert verdict([london, paris], PARALLEL).correct
    # paris fits both expected calls: BFCL's greedy first-fit gives it to the first one and then finds nothing for
    # the second; the matching (london -> first, paris -> second) exists, so the response is right
    assert verdict([paris, london], PARALLEL).correct
    official = check_calls(FUNCS, [ToolCall(*paris), ToolCall(*london)], PARALLEL, "official")
    assert not official.correct and official.functions_correct  # the official semantics pairs greedily
    paris_days = ("weather.get", {"city": "Paris", "days": [1, 2]})
    assert verdict([paris, paris_days], PARALLEL).correct
    c = verdict([paris_days, paris_days], PARALLEL)  # the second expected call takes no days
    assert not c.correct and c.functions_correct
    assert c.error == "a call to 'weather.get' whose parameter 'days' is [1, 2], not one of ['']"


def test_list_and_dict_values():
    answer = [{"weather.get": {"city": ["Paris"], "days": [[1, 2]], "options": [{"units": ["metric", ""], "alerts": [True]}, ""]}}]
    ok = {"city": "paris", "days": [1, 2], "options": {"units": "Metric", "alerts": True}}
    assert verdict([("weather.get", ok)], answer).correct
    assert verdict([("weather.get", {"city": "paris", "days": [1, 2], "options": {"alerts": True}})], answer).correct
    assert not verdict([("weather.get", {**ok, "days": [2, 1]})], answer).correct  # order of a list matters
    assert not verdict([("weather.get", {**ok, "days": [1.5, 2.0]})], answer).correct  # item type
    assert verdict([("weather.get", {**ok, "days": [1.0, 2.0]})], answer).correct  # integral floats are integers
    assert not check_calls(FUNCS, [ToolCall("weather.get", {**ok, "days": [1.0, 2.0]})], answer, "official").correct
    assert not verdict([("weather.get", {**ok, "options": {"units": "metric"}})], answer).correct  # alerts required
    assert not verdict([("weather.get", {**ok, "options": {"alerts": True, "x": 1}})], answer).correct
    assert not verdict([("weather.get", {**ok, "days": "[1, 2]"})], answer).correct


def test_variable_rule_accepts_the_answers_own_type():
    # BFCL marks some answers with values of another type than the doc's (e.g. a string for an integer)
    answer = [{"calculate_triangle_area": {"base": ["b"], "height": [5.0]}}]
    assert verdict([("calculate_triangle_area", {"base": "b", "height": 5.0})], answer).correct
    assert not verdict([("calculate_triangle_area", {"base": "B", "height": 5.0})], answer).correct  # exact


def test_arguments_schema_maps_bfcl_types():
    schema = arguments_schema(WEATHER)
    assert schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "array", "items": {"type": "integer"}},
            "options": {"type": "object", "properties": {"units": {"type": "string"}, "alerts": {"type": "boolean"}}},
        },
        "required": ["city"],
    }
    widened = arguments_schema(AREA, {"base": ["b"], "height": [5.0]})
    assert widened["properties"]["base"]["type"] == ["integer", "string"]
    assert widened["properties"]["height"]["type"] == "number"


def test_standardize_string():
    assert standardize_string("April 1, 2024") == standardize_string("april-1 2024") == "april12024"
    assert standardize_string("it's") == 'it"s'


def test_unknown_expected_function_is_a_data_error():
    with pytest.raises(ValueError, match="not among the documented functions"):
        check_calls(FUNCS, [], [{"nope": {}}])


JSONV = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["calculate_triangle_area", "weather.get", "x"]),
       st.dictionaries(st.sampled_from(["base", "height", "unit", "exact", "city", "days", "options", "z"]), JSONV, max_size=5))
def test_checker_never_raises_on_any_call(name, args):
    for answer in (AREA_ANSWER, PARALLEL, []):
        c = check_calls(FUNCS, [ToolCall(name, args)], answer)
        assert c.correct == (c.error == "")
