"""The 25 IFEval instruction types, with the semantics of IFEval's reference checkers (strict).

Source: google-research IFEval as shipped in lm-eval's ``ifeval`` task (``instructions.py``, ``instructions_util.py``,
``utils.py``); every checker below was written from that behaviour and is compared with it on a generated corpus
(``tools/agreement/ifeval``, ``tests/instructions/test_agreement.py``). Deviations, each documented in
``docs/instruction_following.md``:

* keywords, forbidden words, postscript markers and section splitters are matched literally (``re.escape``); the
  reference splices them into regular expressions unescaped, so they differ only for kwargs holding regex
  metacharacters (never the case in IFEval's data);
* JSON nested too deeply for Python's parser counts as not JSON; the reference raises ``RecursionError``;
* language detection is seeded (``DetectorFactory.seed = 0``); the reference is unseeded.
* Punkt-based checks (sentences, capital words) on a response over 100,000 characters are not followed; the reference
  runs for seconds there and raises NLTK's ``TimeoutError`` further on (``punkt_time_limit``).

These are the ``official`` semantics; the ``training`` checkers (the rewards' default) are in :mod:`._training`.

Patterns that backtrack quadratically in the reference on adversarial text (``^\\s*\\*`` over runs of blank lines,
``\\[.*?\\]`` over runs of ``[``, ``<<[^\\n]+>>``) are replaced by linear scans that give the same counts.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ._registry import LANGUAGE_NAMES, register
from ._text import count_sentences, count_upper_tokens, count_words, detect_language

__all__ = ["CONSTRAINED_RESPONSE_OPTIONS", "count_bullets", "count_placeholders", "has_title", "compare"]

CONSTRAINED_RESPONSE_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


def compare(count: int, relation: str, n: int) -> bool:
    """``count < n`` for ``"less than"``, ``count >= n`` for ``"at least"``."""
    return count < n if relation == "less than" else count >= n


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _and(items: list[str], conj: str = "and") -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {conj} " + items[-1]


# ============================================================================================ keywords
@register(
    "keywords:existence",
    scope="local",
    kwargs={"keywords": "words"},
    describe=lambda kw: (
        f"Include the keyword{'' if len(kw['keywords']) == 1 else 's'} {_and(kw['keywords'])} in the response."
    ),
)
def keywords_existence(kw: Mapping[str, Any], response: str) -> bool:
    """Every keyword occurs, case-insensitively, anywhere (also inside longer words)."""
    return all(re.search(re.escape(k), response, flags=re.IGNORECASE) for k in kw["keywords"])


@register(
    "keywords:frequency",
    scope="local",
    kwargs={"keyword": "text", "frequency": "int", "relation": "relation"},
    describe=lambda kw: (
        f"In your response, the word {kw['keyword'].strip()} should appear {kw['relation']} {_times(kw['frequency'])}."
    ),
)
def keywords_frequency(kw: Mapping[str, Any], response: str) -> bool:
    """Case-insensitive, non-overlapping occurrences of the keyword (also inside longer words) compared to n."""
    n = len(re.findall(re.escape(kw["keyword"].strip()), response, flags=re.IGNORECASE))
    return compare(n, kw["relation"], kw["frequency"])


@register(
    "keywords:forbidden_words",
    kwargs={"forbidden_words": "words"},
    describe=lambda kw: (
        f"Do not include the word{'' if len(set(kw['forbidden_words'])) == 1 else 's'} "
        f"{_and(sorted(set(kw['forbidden_words'])), 'or')} in the response."
    ),
)
def keywords_forbidden_words(kw: Mapping[str, Any], response: str) -> bool:
    """No forbidden word occurs as a whole word (``\\b`` boundaries), case-insensitively."""
    return not any(
        re.search(r"\b" + re.escape(w) + r"\b", response, flags=re.IGNORECASE) for w in kw["forbidden_words"]
    )


@register(
    "keywords:letter_frequency",
    kwargs={"letter": "letter", "let_frequency": "int", "let_relation": "relation"},
    describe=lambda kw: (
        f"In your response, the letter {kw['letter']} should appear {kw['let_relation']} {_times(kw['let_frequency'])}."
    ),
)
def keywords_letter_frequency(kw: Mapping[str, Any], response: str) -> bool:
    """Occurrences of the letter in the lower-cased response compared to n."""
    n = Counter(response.lower())[kw["letter"]]
    return compare(n, kw["let_relation"], kw["let_frequency"])


# ============================================================================================ language
@register(
    "language:response_language",
    kwargs={"language": "language"},
    describe=lambda kw: (
        f"Your entire response should be in {LANGUAGE_NAMES[kw['language']]}; no other language is allowed."
    ),
)
def language_response_language(kw: Mapping[str, Any], response: str) -> bool:
    """langdetect's language is the requested one; text it cannot classify (no letters) counts as followed."""
    lang = detect_language(response)
    return lang is None or lang == kw["language"]


# ============================================================================================ length
@register(
    "length_constraints:number_sentences",
    kwargs={"num_sentences": "int", "relation": "relation"},
    describe=lambda kw: (
        f"Your response should contain {kw['relation']} {kw['num_sentences']} "
        f"sentence{'' if kw['num_sentences'] == 1 else 's'}."
    ),
)
def length_number_sentences(kw: Mapping[str, Any], response: str) -> bool:
    """Punkt sentences (NLTK English model) compared to n."""
    return compare(count_sentences(response), kw["relation"], kw["num_sentences"])


_DIVIDER = re.compile(r"\s?\*\*\*\s?")


@register(
    "length_constraints:number_paragraphs",
    kwargs={"num_paragraphs": "int"},
    describe=lambda kw: (
        f"There should be exactly {kw['num_paragraphs']} paragraph{'' if kw['num_paragraphs'] == 1 else 's'}, "
        "separated from each other by the markdown divider ***."
    ),
)
def length_number_paragraphs(kw: Mapping[str, Any], response: str) -> bool:
    """Exactly n parts between ``***`` dividers; an empty part is allowed only first or last."""
    parts = _DIVIDER.split(response)
    n = len(parts)
    for i, part in enumerate(parts):
        if not part.strip():
            if i == 0 or i == len(parts) - 1:
                n -= 1
            else:
                return False
    return n == kw["num_paragraphs"]


@register(
    "length_constraints:number_words",
    kwargs={"num_words": "int", "relation": "relation"},
    describe=lambda kw: f"Answer with {kw['relation']} {kw['num_words']} word{'' if kw['num_words'] == 1 else 's'}.",
)
def length_number_words(kw: Mapping[str, Any], response: str) -> bool:
    """``\\w+`` runs compared to n (a hyphenated word counts twice, ``don't`` counts twice)."""
    return compare(count_words(response), kw["relation"], kw["num_words"])


_PUNCT_FIRST_WORD = frozenset(".,?!'\"")


def _nth_ok(kw: Mapping[str, Any]) -> None:
    if kw["nth_paragraph"] > kw["num_paragraphs"]:
        raise ValueError(f"nth_paragraph={kw['nth_paragraph']} exceeds num_paragraphs={kw['num_paragraphs']}")


@register(
    "length_constraints:nth_paragraph_first_word",
    kwargs={"num_paragraphs": "int", "nth_paragraph": "int", "first_word": "text"},
    describe=lambda kw: (
        f"There should be exactly {kw['num_paragraphs']} paragraph{'' if kw['num_paragraphs'] == 1 else 's'}, "
        "separated from each other by one blank line, and paragraph "
        f"{kw['nth_paragraph']} must start with the word {kw['first_word'].lower()}."
    ),
    validate=_nth_ok,
)
def length_nth_paragraph_first_word(kw: Mapping[str, Any], response: str) -> bool:
    """Exactly n non-blank ``\\n\\n``-separated paragraphs, and paragraph k's first word (lower-cased, cut at the
    first ``.,?!'"``) is the given word."""
    paragraphs = response.split("\n\n")
    n = sum(1 for p in paragraphs if p.strip())
    k = kw["nth_paragraph"]
    if k > n:
        return False
    paragraph = paragraphs[k - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    first = ""
    for ch in word:
        if ch in _PUNCT_FIRST_WORD:
            break
        first += ch.lower()
    return n == kw["num_paragraphs"] and first == kw["first_word"].lower()


# ============================================================================================ detectable content
def count_placeholders(text: str) -> int:
    """Matches of ``\\[.*?\\]`` (a ``[`` and the next ``]`` on the same line), counted in linear time."""
    n = 0
    for line in text.split("\n"):
        i = line.find("[")
        while i != -1:
            j = line.find("]", i + 1)
            if j == -1:
                break
            n += 1
            i = line.find("[", j + 1)
    return n


@register(
    "detectable_content:number_placeholders",
    scope="local",
    kwargs={"num_placeholders": "int"},
    describe=lambda kw: (
        f"The response must contain at least {kw['num_placeholders']} placeholder"
        f"{'' if kw['num_placeholders'] == 1 else 's'} in square brackets, such as [address]."
    ),
)
def content_number_placeholders(kw: Mapping[str, Any], response: str) -> bool:
    """At least n ``[...]`` spans (each within one line, possibly empty)."""
    return count_placeholders(response) >= kw["num_placeholders"]


@register(
    "detectable_content:postscript",
    scope="local",
    kwargs={"postscript_marker": "text"},
    describe=lambda kw: (
        f"At the end of your response, add a postscript starting with {kw['postscript_marker'].strip()}"
    ),
)
def content_postscript(kw: Mapping[str, Any], response: str) -> bool:
    """The marker occurs, case-insensitively (``P.S.`` and ``P.P.S`` allow one space after each period)."""
    marker = kw["postscript_marker"].strip()
    text = response.lower()
    if marker == "P.P.S":
        pattern = r"p\.\s?p\.\s?s"
    elif marker == "P.S.":
        pattern = r"p\.\s?s\."
    else:
        pattern = re.escape(marker.lower())
    return re.search(pattern, text) is not None


# ============================================================================================ detectable format
def _is_re_space(ch: str) -> bool:
    return ch.isspace()


def _count_line_items(text: str, star: bool) -> int:
    """Matches of ``(?m)^\\s*\\*[^\\*].*$`` (``star``) or ``(?m)^\\s*-.*$``, counted in linear time.

    A match starts at a line start whose next non-whitespace character (possibly on a later line) is the marker;
    every line start in the same whitespace run reaches the same character, so each run is scanned once.
    """
    n, length = 0, len(text)
    pos = 0  # next candidate line start
    while pos <= length:
        j = pos
        while j < length and _is_re_space(text[j]):
            j += 1
        if j >= length:
            break
        end = -1
        if star:
            if text[j] == "*" and j + 1 < length and text[j + 1] != "*":
                end = j + 2  # '.*' from here
        elif text[j] == "-":
            end = j + 1
        if end >= 0:
            n += 1
            nl = text.find("\n", end)
            if nl == -1:
                break
            # the match ends before this newline; the next line start is after it
            pos = nl + 1
            continue
        nl = text.find("\n", j)
        if nl == -1:
            break
        pos = nl + 1
    return n


def count_bullets(text: str) -> int:
    """IFEval's bullet count: lines starting (after whitespace) with ``*`` not followed by ``*``, plus lines
    starting with ``-`` (so a ``---`` rule counts)."""
    return _count_line_items(text, star=True) + _count_line_items(text, star=False)


@register(
    "detectable_format:number_bullet_lists",
    kwargs={"num_bullets": "int"},
    describe=lambda kw: (
        f"Your answer must contain exactly {kw['num_bullets']} bullet point{'' if kw['num_bullets'] == 1 else 's'}, "
        "written as markdown bullets such as:\n* This is point 1.\n* This is point 2"
    ),
)
def format_number_bullet_lists(kw: Mapping[str, Any], response: str) -> bool:
    """Exactly n lines that start with ``* `` (not ``**``) or ``-``."""
    return count_bullets(response) == kw["num_bullets"]


@register(
    "detectable_format:constrained_response",
    scope="local",
    describe=lambda kw: "Answer with one of the following options: " + ", ".join(CONSTRAINED_RESPONSE_OPTIONS),
)
def format_constrained_response(kw: Mapping[str, Any], response: str) -> bool:
    """One of the three options occurs verbatim (case-sensitive) in the response."""
    text = response.strip()
    return any(opt in text for opt in CONSTRAINED_RESPONSE_OPTIONS)


_HIGHLIGHT = re.compile(r"\*[^\n\*]*\*")
_DOUBLE_HIGHLIGHT = re.compile(r"\*\*[^\n\*]*\*\*")


@register(
    "detectable_format:number_highlighted_sections",
    scope="local",
    kwargs={"num_highlights": "int"},
    describe=lambda kw: (
        f"Highlight at least {kw['num_highlights']} section{'' if kw['num_highlights'] == 1 else 's'} of your "
        "answer with markdown, i.e. *highlighted section*."
    ),
)
def format_number_highlighted_sections(kw: Mapping[str, Any], response: str) -> bool:
    """At least n non-blank ``*...*`` spans plus non-blank ``**...**`` spans (within one line)."""
    n = sum(1 for h in _HIGHLIGHT.findall(response) if h.strip("*").strip())
    n += sum(1 for h in _DOUBLE_HIGHLIGHT.findall(response) if h.removeprefix("**").removesuffix("**").strip())
    return n >= kw["num_highlights"]


@register(
    "detectable_format:multiple_sections",
    scope="local",
    kwargs={"section_spliter": "text", "num_sections": "int"},
    describe=lambda kw: (
        f"Your response must have {kw['num_sections']} section{'' if kw['num_sections'] == 1 else 's'}. "
        f"Mark the beginning of each section with {kw['section_spliter'].strip()} X, such as:\n"
        f"{kw['section_spliter'].strip()} 1\n[content of section 1]\n"
        f"{kw['section_spliter'].strip()} 2\n[content of section 2]"
    ),
)
def format_multiple_sections(kw: Mapping[str, Any], response: str) -> bool:
    """At least n occurrences of the splitter followed by a number (case-sensitive)."""
    pattern = r"\s?" + re.escape(kw["section_spliter"].strip()) + r"\s?\d+\s?"
    return len(re.split(pattern, response)) - 1 >= kw["num_sections"]


@register(
    "detectable_format:json_format",
    describe=lambda kw: "Wrap the entire output in JSON format; you can use markdown ticks such as ```.",
)
def format_json_format(kw: Mapping[str, Any], response: str) -> bool:
    """The response, stripped of one leading ```` ```json ````/```` ``` ```` and one trailing ```` ``` ````, parses
    as JSON."""
    text = (
        response.strip()
        .removeprefix("```json")
        .removeprefix("```Json")
        .removeprefix("```JSON")
        .removeprefix("```")
        .removesuffix("```")
        .strip()
    )
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def has_title(text: str) -> bool:
    """IFEval's title test: some ``<<[^\\n]+>>`` match (greedy, per line) has non-blank text inside the brackets.

    Linear: per line the first match runs from the first ``<<`` to the last ``>>`` (greedy), and no later match
    exists on that line.
    """
    for line in text.split("\n"):
        i = line.find("<<")
        if i == -1:
            continue
        k = line.rfind(">>")
        if k >= i + 3 and line[i : k + 2].lstrip("<").rstrip(">").strip():
            return True
    return False


@register(
    "detectable_format:title",
    scope="local",
    describe=lambda kw: (
        "Your answer must contain a title, wrapped in double angular brackets, such as <<poem of joy>>."
    ),
)
def format_title(kw: Mapping[str, Any], response: str) -> bool:
    """A ``<<title>>`` with non-blank text, on one line."""
    return has_title(response)


# ============================================================================================ combination
@register(
    "combination:two_responses",
    scope="local",
    describe=lambda kw: (
        "Give two different responses. Responses and only responses should be separated by 6 asterisk symbols: ******."
    ),
)
def combination_two_responses(kw: Mapping[str, Any], response: str) -> bool:
    """Exactly two non-blank, different parts around ``******`` (blank parts only at the ends)."""
    valid = []
    parts = response.split("******")
    for i, part in enumerate(parts):
        if not part.strip():
            if i != 0 and i != len(parts) - 1:
                return False
        else:
            valid.append(part)
    return len(valid) == 2 and valid[0].strip() != valid[1].strip()


@register(
    "combination:repeat_prompt",
    scope="local",
    kwargs={"prompt_to_repeat": "text"},
    describe=lambda kw: (
        "First repeat the request word for word without change, then give your answer (1. do not say any words "
        "or characters before repeating the request; 2. the request you need to repeat does not include this "
        "sentence)"
    ),
)
def combination_repeat_prompt(kw: Mapping[str, Any], response: str) -> bool:
    """The stripped response starts with the request, case-insensitively."""
    return response.strip().lower().startswith(kw["prompt_to_repeat"].strip().lower())


# ============================================================================================ start / end
@register(
    "startend:end_checker",
    scope="local",
    kwargs={"end_phrase": "text"},
    describe=lambda kw: (
        f"Finish your response with this exact phrase: {kw['end_phrase'].strip()} No other words should follow it."
    ),
)
def startend_end_checker(kw: Mapping[str, Any], response: str) -> bool:
    """The response, stripped of whitespace and then of double quotes, ends with the phrase (case-insensitive)."""
    return response.strip().strip('"').lower().endswith(kw["end_phrase"].strip().lower())


@register(
    "startend:quotation",
    scope="local",
    describe=lambda kw: "Wrap your entire response with double quotation marks.",
)
def startend_quotation(kw: Mapping[str, Any], response: str) -> bool:
    """The stripped response is at least two characters, starting and ending with ``"``."""
    text = response.strip()
    return len(text) > 1 and text[0] == '"' and text[-1] == '"'


# ============================================================================================ change case
@register(
    "change_case:capital_word_frequency",
    kwargs={"capital_frequency": "int", "capital_relation": "relation"},
    describe=lambda kw: (
        "In your response, words with all capital letters should appear "
        f"{kw['capital_relation']} {_times(kw['capital_frequency'])}."
    ),
)
def change_case_capital_word_frequency(kw: Mapping[str, Any], response: str) -> bool:
    """Tokens of ``nltk.word_tokenize`` that are upper case (``str.isupper``) compared to n."""
    n = count_upper_tokens(response)
    return compare(n, kw["capital_relation"], kw["capital_frequency"])


@register(
    "change_case:english_capital",
    describe=lambda kw: "Your entire response should be in English, and in all capital letters.",
)
def change_case_english_capital(kw: Mapping[str, Any], response: str) -> bool:
    """``str.isupper()`` and langdetect says English (text it cannot classify counts as English)."""
    if not response.isupper():
        return False
    lang = detect_language(response)
    return lang is None or lang == "en"


@register(
    "change_case:english_lowercase",
    describe=lambda kw: (
        "Your entire response should be in English, and in all lowercase letters. No capital letters are allowed."
    ),
)
def change_case_english_lowercase(kw: Mapping[str, Any], response: str) -> bool:
    """``str.islower()`` and langdetect says English (text it cannot classify counts as English)."""
    if not response.islower():
        return False
    lang = detect_language(response)
    return lang is None or lang == "en"


# ============================================================================================ punctuation
@register(
    "punctuation:no_comma",
    describe=lambda kw: "In your entire response, refrain from the use of any commas.",
)
def punctuation_no_comma(kw: Mapping[str, Any], response: str) -> bool:
    """No ``,`` (U+002C) anywhere."""
    return "," not in response
