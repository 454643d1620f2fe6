"""Held-out constraint types (IFBench-style) for the "unseen constraints" evaluation split.

None of these appears in the training split: they measure whether instruction following transfers to constraint
types the policy was never rewarded on (the paper's largest gains are there). Each is a pure function of
``(kwargs, response)``; words are ``\\w+`` runs as in IFEval's word count unless stated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._registry import register
from ._text import count_words

__all__: list[str] = []

_WORD = re.compile(r"\w+")
_LETTER_WORD = re.compile(r"[^\W\d_]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NUMBERED_ITEM = re.compile(r"^[ \t]*(\d+)[.)][ \t]+\S", re.MULTILINE)


def _s(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _range_ok(kw: Mapping[str, Any]) -> None:
    if kw["min_words"] > kw["max_words"]:
        raise ValueError(f"min_words={kw['min_words']} exceeds max_words={kw['max_words']}")


@register(
    "count:word_count_range",
    kwargs={"min_words": "int", "max_words": "int"},
    describe=lambda kw: f"The response must be between {kw['min_words']} and {kw['max_words']} words long.",
    unseen=True,
    validate=_range_ok,
)
def word_count_range(kw: Mapping[str, Any], response: str) -> bool:
    """``min_words <= words <= max_words`` (words as in IFEval's word count)."""
    return kw["min_words"] <= count_words(response) <= kw["max_words"]


@register(
    "count:unique_words",
    kwargs={"num_unique": "int"},
    describe=lambda kw: f"Use at least {_s(kw['num_unique'], 'different word')} in the response.",
    unseen=True,
)
def unique_words(kw: Mapping[str, Any], response: str) -> bool:
    """At least n distinct lower-cased ``\\w+`` words."""
    return len({w.lower() for w in _WORD.findall(response)}) >= kw["num_unique"]


@register(
    "count:numbers",
    kwargs={"num_numbers": "int"},
    describe=lambda kw: f"Include exactly {_s(kw['num_numbers'], 'number')} written in digits.",
    unseen=True,
)
def numbers(kw: Mapping[str, Any], response: str) -> bool:
    """Exactly n numbers written in digits (``12``, ``3.5``)."""
    return len(_NUMBER.findall(response)) == kw["num_numbers"]


@register(
    "format:no_digits",
    describe=lambda kw: "Do not use any digits; write every number in words.",
    unseen=True,
)
def no_digits(kw: Mapping[str, Any], response: str) -> bool:
    """No character with ``str.isdigit()``."""
    return not any(ch.isdigit() for ch in response)


@register(
    "format:line_count",
    kwargs={"num_lines": "int"},
    describe=lambda kw: f"Write exactly {_s(kw['num_lines'], 'non-empty line')}.",
    unseen=True,
)
def line_count(kw: Mapping[str, Any], response: str) -> bool:
    """Exactly n lines with non-whitespace content."""
    return sum(1 for line in response.splitlines() if line.strip()) == kw["num_lines"]


@register(
    "format:numbered_list",
    kwargs={"num_items": "int"},
    describe=lambda kw: (
        f"Include a numbered list of exactly {_s(kw['num_items'], 'item')}, numbered 1., 2., and so on."
    ),
    unseen=True,
)
def numbered_list(kw: Mapping[str, Any], response: str) -> bool:
    """The lines that start with ``N.`` or ``N)`` are numbered exactly 1..n in order."""
    found = [_item_number(m.group(1)) for m in _NUMBERED_ITEM.finditer(response)]
    return found == list(range(1, kw["num_items"] + 1))


def _item_number(digits: str) -> int:
    # int() of a run of more than 4,300 digits raises ValueError (Python's int/str limit): such a run, once its
    # leading zeros are dropped, is no small item number
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else -1


@register(
    "format:parentheses",
    scope="local",
    kwargs={"num_parentheses": "int"},
    describe=lambda kw: f"Include at least {_s(kw['num_parentheses'], 'remark')} in parentheses.",
    unseen=True,
)
def parentheses(kw: Mapping[str, Any], response: str) -> bool:
    """At least n ``( ... )`` spans with a letter inside, each within one line and not nested."""
    n = 0
    for line in response.split("\n"):
        for m in re.finditer(r"\(([^()]*)\)", line):
            if any(ch.isalpha() for ch in m.group(1)):
                n += 1
    return n >= kw["num_parentheses"]


@register(
    "words:first_word",
    scope="local",
    kwargs={"first_word": "text"},
    describe=lambda kw: f"Start your response with the word {kw['first_word'].strip()}.",
    unseen=True,
)
def first_word(kw: Mapping[str, Any], response: str) -> bool:
    """The first ``\\w+`` word equals the given word, case-insensitively."""
    m = _WORD.search(response)
    return m is not None and m.group(0).lower() == kw["first_word"].strip().lower()


@register(
    "words:last_word",
    scope="local",
    kwargs={"last_word": "text"},
    describe=lambda kw: f"The last word of your response must be {kw['last_word'].strip()}.",
    unseen=True,
)
def last_word(kw: Mapping[str, Any], response: str) -> bool:
    """The last ``\\w+`` word equals the given word, case-insensitively."""
    last = None
    for m in _WORD.finditer(response):
        last = m.group(0)
    return last is not None and last.lower() == kw["last_word"].strip().lower()


@register(
    "words:max_word_length",
    kwargs={"max_length": "int"},
    describe=lambda kw: f"Do not use any word longer than {_s(kw['max_length'], 'letter')}.",
    unseen=True,
)
def max_word_length(kw: Mapping[str, Any], response: str) -> bool:
    """Every run of letters has at most n letters."""
    return all(len(w) <= kw["max_length"] for w in _LETTER_WORD.findall(response))


@register(
    "words:palindrome",
    scope="local",
    kwargs={"min_length": "int"},
    describe=lambda kw: f"Include a palindrome word of at least {_s(kw['min_length'], 'letter')}, such as level.",
    unseen=True,
)
def palindrome(kw: Mapping[str, Any], response: str) -> bool:
    """Some run of letters of at least n letters reads the same backwards (case-insensitive)."""
    return any(len(w) >= kw["min_length"] and w.lower() == w.lower()[::-1] for w in _LETTER_WORD.findall(response))


@register(
    "punctuation:exclamation_count",
    kwargs={"num_exclamations": "int"},
    describe=lambda kw: f"Use exactly {_s(kw['num_exclamations'], 'exclamation mark')} in the response.",
    unseen=True,
)
def exclamation_count(kw: Mapping[str, Any], response: str) -> bool:
    """Exactly n ``!`` characters."""
    return response.count("!") == kw["num_exclamations"]
