"""Where a response's constraint is decided (mrtpo_sdk.instructions.deciding, wired into the slot verifiers):
exact spans per constraint type on hand-built responses; None for types with nothing to point at; no crash on any
text."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.instructions import compose_example, constraint_ids, constraint_type_verifier, constraint_verifier
from mrtpo_sdk.instructions.deciding import deciding_spans, locatable_ids

from .if_kwargs_examples import EXAMPLE_KWARGS


def found(cid, kwargs, text):
    spans = deciding_spans(cid, kwargs, text)
    return None if spans is None else [text[s:e] for s, e in spans]


@pytest.mark.parametrize(
    ("cid", "kwargs", "text", "expected"),
    [
        # the end phrase at the end, closing markup after it allowed; what follows it is where it breaks
        ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Tea is hot. Any other questions?**\n",
         ["Any other questions?"]),
        ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Any  other\nquestions? Bye.",
         ["Any  other\nquestions? Bye."]),
        ("startend:end_checker", {"end_phrase": "Bye now"}, "Tea is hot.", ["is hot."]),  # the last 7 characters
        ("startend:quotation", {}, '  "Tea is hot."\n', ['"', '"']),
        ("startend:quotation", {}, "Tea", ["T", "a"]),
        ("detectable_format:title", {}, "<<Tea>>\nTea is hot. <<Also>>", ["<<Tea>>", "<<Also>>"]),
        ("keywords:existence", {"keywords": ["river", "stone"]}, "A stone, a River, riverbed.", ["stone", "River"]),
        ("keywords:frequency", {"keyword": "tea", "frequency": 2, "relation": "at least"}, "Tea, tea, teal.",
         ["Tea", "tea"]),
        ("keywords:forbidden_words", {"forbidden_words": ["hot"]}, "Hot tea is hot.", ["Hot", "hot"]),
        ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Tea.\n\nP.S. Drink it hot.\nBye",
         ["P.S. Drink it hot."]),
        ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Tea, p.s. hot", ["p.s."]),  # mid-line
        ("detectable_content:number_placeholders", {"num_placeholders": 2}, "At [address] on [ ] by [name].",
         ["[address]", "[name]"]),
        ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*One* and **two**, 2 * 3 * 4",
         ["*One*", "**two**"]),
        ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2},
         "Section 1\nTea.\n## SECTION 2\nHot. See Section 3.", ["Section 1", "## SECTION 2"]),
        ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* one\n  - two\n---\n*no*", ["*", "-"]),
        ("detectable_format:constrained_response", {}, "Well. My answer is yes.", ["My answer is yes"]),
        ("combination:two_responses", {}, "Tea.\n******\nCoffee.", ["******"]),
        ("combination:repeat_prompt", {"prompt_to_repeat": "Write a poem."}, " write a  poem. Roses.",
         ["write a  poem."]),
        ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "Tea.\n* * *\nHot.", ["* * *"]),
        ("length_constraints:nth_paragraph_first_word",
         {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "x"}, "Tea is hot.\n\n\n**Then** it cools.", ["Then"]),
        ("words:first_word", {"first_word": "tea"}, '  "Tea is hot."', ["Tea"]),
        ("words:last_word", {"last_word": "hot"}, "Tea is hot!", ["hot"]),
        ("punctuation:no_comma", {}, "Tea, hot\uff0c sweet", [",", "\uff0c"]),
        ("punctuation:exclamation_count", {"num_exclamations": 1}, "Hot! Tea!", ["!", "!"]),
        ("format:no_digits", {}, "2 teas at 10", ["2", "1", "0"]),
        ("count:numbers", {"num_numbers": 2}, "2 teas at 3.5 each", ["2", "3.5"]),
        ("format:parentheses", {"num_parentheses": 1}, "Tea (hot) and (2)", ["(hot)"]),
        ("format:numbered_list", {"num_items": 2}, "1. Tea\n2) Hot\n3.x", ["1.", "2)"]),
        ("words:palindrome", {"min_length": 5}, "A level racecar noon", ["level", "racecar"]),
        ("words:max_word_length", {"max_length": 4}, "Tea is wonderful", ["wonderful"]),
        ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"},
         "TEA is HOT, DON'T", ["TEA", "HOT", "DON'T"]),
    ],
)
def test_each_locator_finds_its_tokens(cid, kwargs, text, expected):
    assert found(cid, kwargs, text) == expected


def test_exact_offsets():
    text = "Tea is hot. Any other questions?"
    assert deciding_spans("startend:end_checker", {"end_phrase": "Any other questions?"}, text) == [(12, 32)]
    assert deciding_spans("detectable_format:title", {}, "x <<T>>") == [(2, 7)]


@pytest.mark.parametrize(
    "cid",
    ["length_constraints:number_words", "length_constraints:number_sentences", "language:response_language",
     "change_case:english_lowercase", "change_case:english_capital", "detectable_format:json_format",
     "keywords:letter_frequency", "count:word_count_range", "count:unique_words", "format:line_count"],
)
def test_types_without_tokens_to_point_at_give_none(cid):
    assert cid not in locatable_ids()
    assert deciding_spans(cid, EXAMPLE_KWARGS[cid], "Tea is hot, and so is coffee!") is None


def test_absent_tokens_give_none():
    assert deciding_spans("detectable_format:title", {}, "No title here") is None
    assert deciding_spans("keywords:existence", {"keywords": ["river"]}, "A stream") is None
    assert deciding_spans("startend:quotation", {}, "   ") is None
    assert deciding_spans("startend:end_checker", {"end_phrase": "Bye"}, "  \n") is None
    assert deciding_spans("startend:end_checker", {"end_phrase": "Bye"}, "x" * 50_001) is None  # follows nothing


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=200))
def test_locators_never_raise_and_stay_inside_the_text(text):
    for cid in constraint_ids():
        spans = deciding_spans(cid, EXAMPLE_KWARGS[cid], text)
        assert spans is None or all(0 <= s < e <= len(text) for s, e in spans)


def test_adversarial_texts_are_fast():
    texts = ["*" * 50_000, "[" * 50_000, "<<" * 25_000, " " * 50_000 + "x", "\n" * 50_000, "a" * 50_000,
             "* " * 25_000, "p. " * 16_000]
    start = time.monotonic()
    for text in texts:
        for cid in locatable_ids():
            deciding_spans(cid, EXAMPLE_KWARGS[cid], text)
    assert time.monotonic() - start < 30


def test_the_slot_verifiers_dispatch_on_the_examples_constraint():
    ex = compose_example("e", "Write about tea.", [("detectable_format:title", {}),
                                                   ("startend:end_checker", {"end_phrase": "Bye now"})])
    text = "<<Tea>>\nTea is hot. Bye now"
    assert constraint_verifier(1).locate(ex, text) == [(0, 7)]
    assert constraint_verifier(2).locate(ex, text) == [(len(text) - 7, len(text))]
    assert constraint_verifier(3).locate(ex, text) is None  # the example has two constraints
    assert constraint_type_verifier("startend:end_checker").locate(ex, text) == [(len(text) - 7, len(text))]
    assert constraint_type_verifier("keywords:existence").locate(ex, text) is None


def test_the_bundled_tasks_keep_the_locators():
    from mrtpo_sdk import load_task

    from ..helpers import ROOT

    for name in ("instruction_following", "long_form"):
        task = load_task(str(ROOT / "tasks" / f"{name}.py"))
        ex = compose_example("e", "Write.", [("detectable_format:title", {})])
        assert task.verifiers[0].locate(ex, "x <<T>>") == [(2, 7)], name
