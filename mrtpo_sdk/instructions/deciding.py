"""Where a response's constraint is decided: character spans for ``Verifier(deciding=...)``.

:func:`deciding_spans` dispatches on the constraint id to one locator per type; each returns the ``[start, end)``
spans of the response that make the constraint followed or not, found as its ``training`` checker
(:mod:`._training`) finds them:

* the end phrase (``startend:end_checker``): its last occurrence near the end up to the end (what follows it
  breaks the constraint), else the response's last characters (as many as the phrase has);
* the first and last character (``startend:quotation``); the title ``<<...>>`` (``detectable_format:title``);
* keyword, forbidden-word and all-capital-word occurrences (``keywords:existence``, ``keywords:frequency``,
  ``keywords:forbidden_words``: the literal spelling, look-alike letters are not located;
  ``change_case:capital_word_frequency``);
* the postscript line from its marker (``detectable_content:postscript``), placeholders ``[...]``, highlighted
  spans ``*...*``, section headers, bullet markers, ``***`` divider lines, the ``******`` separator, the option
  ("My answer is yes"), the repeated request, the first word of the n-th paragraph;
* commas, ``!``, digits, numbers, ``(...)`` remarks, numbered-list markers, palindromes, words over the length
  limit; the first and last word (``words:first_word``, ``words:last_word``).

Types with no tokens to point at (length, sentence and word counts, language, case of the whole response, JSON)
have no locator: :func:`deciding_spans` gives ``None``, as it does when a type's tokens are absent from the response
(no keyword written, no title). Model output is untrusted: every locator runs in time linear in the response, and a
response over :data:`~mrtpo_sdk.instructions._training.MAX_TRAINING_CHARS` (which follows nothing) gives ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..verifier import Spans
from ._registry import get_constraint, normalize_kwargs
from ._training import (
    _ALNUM_RUN,
    _BLANK_LINES,
    _BULLET,
    _COMMAS,
    _DIVIDER_LINE,
    _LINE_START,
    _OPTION,
    _PLACEHOLDER,
    _RULE,
    _SIX_STARS,
    _STAR_SPAN,
    _TITLE,
    _UNDERSCORE_SPAN,
    _WORD_T,
    MAX_TRAINING_CHARS,
    _flex,
    _marker_pattern,
    _whole,
    has_word_char,
)
from .unseen import _LETTER_WORD, _NUMBER, _NUMBERED_ITEM, _WORD

__all__ = ["LOCATORS", "deciding_spans", "locatable_ids"]

Locator = Callable[[Mapping[str, Any], str], Spans]
LOCATORS: dict[str, Locator] = {}
"""Constraint id -> its locator ``fn(kwargs, response) -> spans`` (``[]``: nothing to point at)."""

_PARENTHESES = re.compile(r"\(([^()\n]*)\)")
_TRAILING = frozenset("\"'*_`\u201d\u2019\u00bb")


def _locator(*ids: str) -> Callable[[Locator], Locator]:
    def wrap(fn: Locator) -> Locator:
        for cid in ids:
            LOCATORS[cid] = fn
        return fn

    return wrap


def locatable_ids() -> list[str]:
    """The constraint ids that have a locator, sorted."""
    return sorted(LOCATORS)


def deciding_spans(id: str, kwargs: Mapping[str, Any] | None, response: str) -> Spans | None:
    """The spans of ``response`` that decide constraint ``id`` (module docstring), sorted; ``None`` when the type
    has no locator or nothing in the response can be pointed at.

    Raises:
        UnknownConstraintError / ConstraintKwargsError: a bad id or kwargs (never because of the response).
    """
    get_constraint(id)
    fn = LOCATORS.get(id)
    if fn is None or not isinstance(response, str) or len(response) > MAX_TRAINING_CHARS:
        return None
    spans = sorted({(s, e) for s, e in fn(normalize_kwargs(id, kwargs), response) if e > s})
    return spans or None


def _all(pattern: re.Pattern[str], text: str) -> Spans:
    return [m.span() for m in pattern.finditer(text)]


# ============================================================================================ start / end
@_locator("startend:end_checker")
def _end_phrase(kw: Mapping[str, Any], text: str) -> Spans:
    phrase = kw["end_phrase"].strip()
    end = len(text)
    while end and (text[end - 1].isspace() or text[end - 1] in _TRAILING):
        end -= 1
    if not end:
        return []
    start = max(0, end - 4 * len(phrase) - 64)  # the checker's window: only the end can hold the phrase
    last = None
    for last in re.finditer(_flex(phrase), text[start:end], re.IGNORECASE):
        pass
    if last is not None:
        return [(start + last.start(), end)]
    return [(max(0, end - len(phrase)), end)]


@_locator("startend:quotation")
def _quotation(kw: Mapping[str, Any], text: str) -> Spans:
    stripped = text.strip()
    if not stripped:
        return []
    first = len(text) - len(text.lstrip())
    last = len(text.rstrip()) - 1
    return [(first, first + 1), (last, last + 1)]


@_locator("words:first_word")
def _first_word(kw: Mapping[str, Any], text: str) -> Spans:
    m = _WORD.search(text)
    return [m.span()] if m else []


@_locator("words:last_word")
def _last_word(kw: Mapping[str, Any], text: str) -> Spans:
    last = None
    for last in _WORD.finditer(text):
        pass
    return [last.span()] if last else []


@_locator("combination:repeat_prompt")
def _repeated_request(kw: Mapping[str, Any], text: str) -> Spans:
    request = kw["prompt_to_repeat"].strip()
    m = re.match(r"\s*" + _flex(request), text, re.IGNORECASE)
    first = len(text) - len(text.lstrip())
    if m:
        return [(first, m.end())]
    return [(first, min(len(text), first + len(request)))]


# ============================================================================================ words
@_locator("keywords:existence")
def _keywords(kw: Mapping[str, Any], text: str) -> Spans:
    return [s for k in kw["keywords"] for s in _all(_whole(k), text)]


@_locator("keywords:frequency")
def _keyword(kw: Mapping[str, Any], text: str) -> Spans:
    return _all(_whole(kw["keyword"].strip()), text)


@_locator("keywords:forbidden_words")
def _forbidden(kw: Mapping[str, Any], text: str) -> Spans:
    return [s for w in kw["forbidden_words"] for s in _all(_whole(w), text)]


@_locator("change_case:capital_word_frequency")
def _capital_words(kw: Mapping[str, Any], text: str) -> Spans:
    return [m.span() for m in _WORD_T.finditer(text) if m.group(0).isupper()]


@_locator("words:palindrome")
def _palindromes(kw: Mapping[str, Any], text: str) -> Spans:
    n = kw["min_length"]
    return [m.span() for m in _LETTER_WORD.finditer(text)
            if len(m.group(0)) >= n and m.group(0).lower() == m.group(0).lower()[::-1]]


@_locator("words:max_word_length")
def _long_words(kw: Mapping[str, Any], text: str) -> Spans:
    return [m.span() for m in _LETTER_WORD.finditer(text) if len(m.group(0)) > kw["max_length"]]


# ============================================================================================ content and format
@_locator("detectable_content:postscript")
def _postscript(kw: Mapping[str, Any], text: str) -> Spans:
    marker = _marker_pattern(kw["postscript_marker"].strip())
    lines = re.compile(_LINE_START + marker, re.IGNORECASE | re.MULTILINE)
    spans = []
    for m in lines.finditer(text):
        eol = text.find("\n", m.end())
        spans.append((m.start(), len(text) if eol < 0 else eol))
    return spans or _all(re.compile(marker, re.IGNORECASE), text)


@_locator("detectable_content:number_placeholders")
def _placeholders(kw: Mapping[str, Any], text: str) -> Spans:
    return [m.span() for m in _PLACEHOLDER.finditer(text) if has_word_char(m.group(1))]


@_locator("detectable_format:title")
def _title(kw: Mapping[str, Any], text: str) -> Spans:
    return _all(_TITLE, text)


@_locator("detectable_format:number_highlighted_sections")
def _highlights(kw: Mapping[str, Any], text: str) -> Spans:
    return [m.span() for p in (_STAR_SPAN, _UNDERSCORE_SPAN) for m in p.finditer(text) if has_word_char(m.group(2))]


@_locator("detectable_format:multiple_sections")
def _section_headers(kw: Mapping[str, Any], text: str) -> Spans:
    header = _LINE_START + _flex(kw["section_spliter"].strip()) + r"[ \t]*\d+(?!\w)"
    return _all(re.compile(header, re.IGNORECASE | re.MULTILINE), text)


@_locator("detectable_format:number_bullet_lists")
def _bullet_markers(kw: Mapping[str, Any], text: str) -> Spans:
    spans = []
    for m in _BULLET.finditer(text):
        if not _RULE.match(text, m.start()):
            i = m.start()
            while text[i] in " \t":
                i += 1
            spans.append((i, i + 1))
    return spans


@_locator("detectable_format:constrained_response")
def _option(kw: Mapping[str, Any], text: str) -> Spans:
    return _all(_OPTION, text)


@_locator("combination:two_responses")
def _separator(kw: Mapping[str, Any], text: str) -> Spans:
    return _all(_SIX_STARS, text)


@_locator("length_constraints:number_paragraphs")
def _dividers(kw: Mapping[str, Any], text: str) -> Spans:
    return _all(_DIVIDER_LINE, text)


@_locator("length_constraints:nth_paragraph_first_word")
def _nth_first_word(kw: Mapping[str, Any], text: str) -> Spans:
    starts, pos = [], 0
    for sep in _BLANK_LINES.finditer(text):
        if has_word_char(text[pos : sep.start()]):
            starts.append((pos, sep.start()))
        pos = sep.end()
    if has_word_char(text[pos:]):
        starts.append((pos, len(text)))
    k = kw["nth_paragraph"]
    if k > len(starts):
        return []
    m = _ALNUM_RUN.search(text, *starts[k - 1])
    return [m.span()] if m else []


@_locator("format:parentheses")
def _remarks(kw: Mapping[str, Any], text: str) -> Spans:
    return [m.span() for m in _PARENTHESES.finditer(text) if any(ch.isalpha() for ch in m.group(1))]


@_locator("format:numbered_list")
def _item_numbers(kw: Mapping[str, Any], text: str) -> Spans:
    return [(m.start(1), m.end(1) + 1) for m in _NUMBERED_ITEM.finditer(text)]


# ============================================================================================ characters
@_locator("punctuation:no_comma")
def _commas(kw: Mapping[str, Any], text: str) -> Spans:
    return [(i, i + 1) for i, ch in enumerate(text) if ch in _COMMAS]


@_locator("punctuation:exclamation_count")
def _exclamations(kw: Mapping[str, Any], text: str) -> Spans:
    return [(i, i + 1) for i, ch in enumerate(text) if ch == "!"]


@_locator("format:no_digits")
def _digits(kw: Mapping[str, Any], text: str) -> Spans:
    return [(i, i + 1) for i, ch in enumerate(text) if ch.isdigit()]


@_locator("count:numbers")
def _numbers(kw: Mapping[str, Any], text: str) -> Spans:
    return _all(_NUMBER, text)
