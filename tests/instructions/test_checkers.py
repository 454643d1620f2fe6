"""Official checker semantics at the edges (IFEval strict), and the linear scans against the reference regexes.

(The training semantics, where they differ, are tested in test_adversarial.py.)"""

from __future__ import annotations

import random
import re

from functools import partial

from mrtpo_sdk.instructions import check as _check
from mrtpo_sdk.instructions.ifeval import count_bullets, count_placeholders, has_title

check = partial(_check, semantics="official")


def test_word_and_sentence_counts_follow_ifeval() -> None:
    words = "length_constraints:number_words"
    # \w+ runs: a hyphenated word and a contraction count twice, underscores join
    assert check(words, {"num_words": 4, "relation": "at least"}, "well-known don't")
    assert not check(words, {"num_words": 4, "relation": "less than"}, "well-known don't")
    assert not check(words, {"num_words": 3, "relation": "at least"}, "snake_case words")
    sentences = "length_constraints:number_sentences"
    # Punkt knows "Dr." and "p.m." are abbreviations
    text = "Dr. Smith came home at 5 p.m. yesterday. He was tired."
    assert check(sentences, {"num_sentences": 2, "relation": "at least"}, text)
    assert not check(sentences, {"num_sentences": 3, "relation": "at least"}, text)
    assert check(sentences, {"num_sentences": 3, "relation": "less than"}, text)


def test_paragraph_dividers_and_first_words() -> None:
    paragraphs = "length_constraints:number_paragraphs"
    assert check(paragraphs, {"num_paragraphs": 2}, "One.\n***\nTwo.")
    assert check(paragraphs, {"num_paragraphs": 2}, "***\nOne.\n***\nTwo.\n***")  # empty ends are allowed
    assert not check(paragraphs, {"num_paragraphs": 2}, "One.\n***\n***\nTwo.")  # an empty middle is not
    nth = "length_constraints:nth_paragraph_first_word"
    kw = {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"}
    assert check(nth, kw, 'First part.\n\n"Then, the second.')
    assert not check(nth, kw, "First part.\n\nThenceforth the second.")
    assert not check(nth, kw, "First part.\nThen the second.")  # one newline is not a paragraph break


def test_markdown_bullets_highlights_titles() -> None:
    bullets = "detectable_format:number_bullet_lists"
    assert check(bullets, {"num_bullets": 2}, "* one\n* two")
    assert check(bullets, {"num_bullets": 2}, "- one\n  * two\n**bold** line")
    assert check(bullets, {"num_bullets": 3}, "* one\n* two\n---")  # IFEval counts a --- rule as a bullet
    highlights = "detectable_format:number_highlighted_sections"
    assert check(highlights, {"num_highlights": 2}, "a *b* c **d** e")
    assert not check(highlights, {"num_highlights": 1}, "a * * b")
    assert check("detectable_format:title", {}, "<<A Title>>\ntext")
    assert not check("detectable_format:title", {}, "<< >>\n<<\n>>")


def test_case_language_quotes_endings_json() -> None:
    assert check("change_case:english_lowercase", {}, "this is a small plain english sentence about the weather.")
    assert not check("change_case:english_lowercase", {}, "This is English.")
    assert check("change_case:english_capital", {}, "THIS IS AN ENGLISH SENTENCE ABOUT THE WEATHER TODAY.")
    assert check(
        "language:response_language", {"language": "fr"}, "Le temps est beau aujourd'hui et nous allons au parc."
    )
    assert not check("language:response_language", {"language": "fr"}, "The weather is nice and we go to the park.")
    assert check("language:response_language", {"language": "de"}, "12345 !!!")  # no letters: followed, as in IFEval
    assert check("startend:quotation", {}, '  "quoted"  ')
    assert not check("startend:quotation", {}, '"')
    assert check("startend:end_checker", {"end_phrase": "Any other questions?"}, 'Text. any other questions?"\n')
    assert check("detectable_format:json_format", {}, '```json\n{"a": 1}\n```')
    assert not check("detectable_format:json_format", {}, '{"a": 1} trailing')
    assert check(
        "change_case:capital_word_frequency",
        {"capital_frequency": 2, "capital_relation": "at least"},
        "NASA and the USA.",
    )
    assert check("detectable_content:postscript", {"postscript_marker": "P.S."}, "Body.\np. s. later")
    assert not check("detectable_content:postscript", {"postscript_marker": "P.S."}, "Body.\nPS later")


def test_unseen_checkers_on_both_sides() -> None:
    cases = [
        ("count:word_count_range", {"min_words": 3, "max_words": 4}, "one two three", "one two"),
        ("count:unique_words", {"num_unique": 3}, "a b C", "a A a b"),
        ("count:numbers", {"num_numbers": 2}, "12 and 3.5", "12 and 3.5 and 7"),
        ("format:no_digits", {}, "no digits here", "route 66"),
        ("format:line_count", {"num_lines": 2}, "a\n\n  \nb", "a\nb\nc"),
        ("format:numbered_list", {"num_items": 2}, "Intro\n1. a\n2. b", "1. a\n3. b"),
        ("format:parentheses", {"num_parentheses": 2}, "x (one) y (two)", "x (one) y (2)"),
        ("words:first_word", {"first_word": "Hello"}, "  hello, world", "Well hello"),
        ("words:last_word", {"last_word": "end"}, "This is the END!", "end of it"),
        ("words:max_word_length", {"max_length": 5}, "short words only", "a lengthy word"),
        ("words:palindrome", {"min_length": 5}, "a Level radar", "a noon"),
        ("punctuation:exclamation_count", {"num_exclamations": 2}, "Hi! Yes!", "Hi!!!"),
    ]
    for cid, kw, good, bad in cases:
        assert check(cid, kw, good), (cid, good)
        assert not check(cid, kw, bad), (cid, bad)


def _soup(r: random.Random, n: int) -> str:
    return "".join(
        r.choice(["*", "-", "\n", " ", "\t", "[", "]", "<", ">", "<<", ">>", "a", "\r", "\x0b", "**"]) for _ in range(n)
    )


def test_linear_scans_equal_the_reference_regexes() -> None:
    r = random.Random(7)
    for _ in range(3000):
        text = _soup(r, r.randint(0, 30))
        ref_bullets = len(re.findall(r"^\s*\*[^\*].*$", text, flags=re.MULTILINE)) + len(
            re.findall(r"^\s*-.*$", text, flags=re.MULTILINE)
        )
        assert count_bullets(text) == ref_bullets, repr(text)
        assert count_placeholders(text) == len(re.findall(r"\[.*?\]", text)), repr(text)
        ref_title = any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", text))
        assert has_title(text) == ref_title, repr(text)
