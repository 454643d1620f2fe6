"""The constraint registry: ids, kwargs validation, rendering, strict empty-response rule, clear errors."""

from __future__ import annotations

import pytest
from .if_kwargs_examples import EXAMPLE_KWARGS

from mrtpo_sdk import MRTPOError
from mrtpo_sdk.instructions import (
    ConstraintKwargsError,
    UnknownConstraintError,
    check,
    constraint_ids,
    describe,
    get_constraint,
    normalize_kwargs,
)

IFEVAL_IDS = {
    "keywords:existence", "keywords:frequency", "keywords:forbidden_words", "keywords:letter_frequency",
    "language:response_language", "length_constraints:number_sentences", "length_constraints:number_paragraphs",
    "length_constraints:number_words", "length_constraints:nth_paragraph_first_word",
    "detectable_content:number_placeholders", "detectable_content:postscript", "detectable_format:number_bullet_lists",
    "detectable_format:constrained_response", "detectable_format:number_highlighted_sections",
    "detectable_format:multiple_sections", "detectable_format:json_format", "detectable_format:title",
    "combination:two_responses", "combination:repeat_prompt", "startend:end_checker", "change_case:capital_word_frequency",
    "change_case:english_capital", "change_case:english_lowercase", "punctuation:no_comma", "startend:quotation",
}  # fmt: skip


def test_the_25_ifeval_ids_are_the_seen_set_and_at_least_10_unseen() -> None:
    assert set(constraint_ids(unseen=False)) == IFEVAL_IDS
    unseen = constraint_ids(unseen=True)
    assert len(unseen) >= 10
    assert not set(unseen) & IFEVAL_IDS
    assert set(EXAMPLE_KWARGS) == set(constraint_ids())


def test_scope_marks_the_few_token_types_local_and_the_rest_global() -> None:
    local = {i for i in constraint_ids() if get_constraint(i).scope == "local"}
    # decided by a few tokens at a place: a phrase, a marker, a keyword, a word at a position
    assert {"startend:end_checker", "startend:quotation", "detectable_format:title", "keywords:existence",
            "detectable_content:postscript", "words:last_word"} <= local  # fmt: skip
    # decided by every token: a character class, the case, a count or length over the whole text, the language
    assert not local & {"punctuation:no_comma", "change_case:english_lowercase", "length_constraints:number_words",
                        "language:response_language", "format:no_digits", "count:word_count_range"}  # fmt: skip
    assert {get_constraint(i).scope for i in constraint_ids()} == {"local", "global"}
    from mrtpo_sdk.instructions._registry import register

    with pytest.raises(ValueError, match="scope must be one of local, global, got 'few'"):
        register("test:bad_scope", describe=lambda kw: "x", scope="few")


def test_unknown_id_raises_clear_error_everywhere() -> None:
    for call in (
        lambda: get_constraint("keywords:existance"),
        lambda: check("keywords:existance", {}, "text"),
        lambda: describe("no_such:thing", {}),
    ):
        with pytest.raises(UnknownConstraintError) as err:
            call()
        assert isinstance(err.value, MRTPOError)
        assert "unknown constraint id" in str(err.value)
    with pytest.raises(UnknownConstraintError, match="did you mean 'keywords:existence'"):
        get_constraint("keywords:existance")


@pytest.mark.parametrize(
    "cid,kwargs,message",
    [
        ("length_constraints:number_words", {"num_words": 10}, "'relation' is missing"),
        ("length_constraints:number_words", {"num_words": 0, "relation": "at least"}, "integer >= 1"),
        ("length_constraints:number_words", {"num_words": 5, "relation": "at most"}, "must be one of"),
        ("length_constraints:number_words", {"num_words": True, "relation": "at least"}, "integer >= 1"),
        ("keywords:existence", {"keywords": "river"}, "list of strings"),
        ("keywords:existence", {"keywords": ["river", ""]}, "non-empty strings"),
        ("keywords:letter_frequency", {"letter": " a", "let_frequency": 2, "let_relation": "at least"}, "one ASCII"),
        ("keywords:letter_frequency", {"letter": "é", "let_frequency": 2, "let_relation": "at least"}, "one ASCII"),
        ("language:response_language", {"language": "xx"}, "ISO 639-1"),
        ("punctuation:no_comma", {"extra": 1}, "unexpected kwargs"),
        (
            "length_constraints:nth_paragraph_first_word",
            {"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "a"},
            "exceeds num_paragraphs",
        ),
        ("count:word_count_range", {"min_words": 9, "max_words": 3}, "exceeds max_words"),
    ],
)
def test_bad_kwargs_name_the_field(cid, kwargs, message) -> None:
    with pytest.raises(ConstraintKwargsError, match=message) as err:
        normalize_kwargs(cid, kwargs)
    assert cid in str(err.value)


def test_null_kwargs_are_dropped_like_ifeval_rows() -> None:
    kw = {"num_words": 5, "relation": "at least", "keywords": None, "num_bullets": None}
    assert normalize_kwargs("length_constraints:number_words", kw) == {"num_words": 5, "relation": "at least"}
    assert (
        normalize_kwargs("keywords:letter_frequency", {"letter": "Q", "let_frequency": 1, "let_relation": "less than"})[
            "letter"
        ]
        == "q"
    )


@pytest.mark.parametrize("cid", sorted(EXAMPLE_KWARGS))
def test_every_type_renders_a_sentence_and_rejects_empty_responses(cid) -> None:
    kw = EXAMPLE_KWARGS[cid]
    sentence = describe(cid, kw)
    assert isinstance(sentence, str) and len(sentence) > 15 and "{" not in sentence
    for empty in ("", "   ", "\n\t\n"):
        assert check(cid, kw, empty) is False  # IFEval strict: an empty response follows nothing
    with pytest.raises(TypeError):
        check(cid, kw, None)  # type: ignore[arg-type]


def test_rendered_sentences_carry_the_kwargs() -> None:
    assert describe("length_constraints:number_words", {"num_words": 120, "relation": "less than"}) == (
        "Answer with less than 120 words."
    )
    assert "river and stone" in describe("keywords:existence", {"keywords": ["river", "stone"]})
    assert "French" in describe("language:response_language", {"language": "fr"})
    assert "P.P.S" in describe("detectable_content:postscript", {"postscript_marker": "P.P.S"})
