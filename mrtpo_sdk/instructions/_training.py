"""``training`` semantics: each checker agrees with what its own prompt sentence asks for.

The ``official`` checkers (:mod:`.ifeval`, :mod:`.unseen`) reproduce IFEval's verdicts, holes included. A reward is
optimized against, so the ``training`` checkers below close the holes an adversarial search found
(``tests/instructions/test_adversarial.py``) and accept the format variants the sentence allows. Every difference is
a row of the table in ``docs/instruction_following.md``.

A training checker is ``fn(kwargs, full, answer) -> bool``: ``full`` is the response with line endings normalized
(``\\r\\n`` and ``\\r`` -> ``\\n``), ``answer`` is ``full`` with every verbatim copy of the prompt's own text (the
whole prompt, the base instruction, each constraint sentence; case and whitespace ignored) cut out. What a
constraint *earns* is counted on ``answer`` (a pasted sentence such as "... such as [address]" earns no placeholder);
what a constraint *forbids* or *caps* is counted on ``full`` (copying the prompt does not hide a comma or words).

Rules applied by :func:`~mrtpo_sdk.instructions.check` before any training checker:

* a response whose ``answer`` has no letter or digit (empty, whitespace, punctuation or markup only, or only the
  prompt pasted back) follows nothing: it does not attempt the task;
* a response longer than :data:`MAX_TRAINING_CHARS` follows nothing (no bundled prompt asks for a tenth of that; it
  bounds the time every checker takes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._registry import CONSTRAINTS
from ._text import count_sentences, detect_language
from .ifeval import compare

__all__ = ["MAX_TRAINING_CHARS", "TRAINING_CHECKERS", "training_words", "remove_echoes", "has_word_char"]

MAX_TRAINING_CHARS = 50_000
"""Responses longer than this follow no constraint under ``training`` semantics."""

TrainingFn = Callable[[Mapping[str, Any], str, str], bool]
TRAINING_CHECKERS: dict[str, TrainingFn] = {}
"""Constraint id -> its training checker; ids not listed use their official checker on ``full``."""

# a word as a reader counts it: letters/digits joined by an apostrophe or hyphen (don't, well-known), a decimal
# point or thousands comma between digits (3.5, 1,000), or a period between single letters (U.S.A., e.g.)
_WORD_T = re.compile(
    r"\w+(?:(?:['\u2019\-\u2010\u2011]|(?<=\d)[.,](?=\d)|(?<=(?<!\w)\w)\.(?=\w(?!\w)))\w+)*\.?"
    r"|\w+"
)
_WORD_CHAR = re.compile(r"[^\W_]")  # a letter or digit
_COMMAS = frozenset(",\u060c\u066b\u201a\u3001\ufe10\ufe11\ufe50\ufe51\uff0c\uff64\u2e41\u2e34")


def has_word_char(text: str) -> bool:
    """Whether ``text`` has a letter or digit (``\\w`` but not ``_``)."""
    return _WORD_CHAR.search(text) is not None


def training_words(text: str) -> list[str]:
    """Words as a reader counts them: ``don't``, ``well-known``, ``3.5``, ``1,000`` and ``U.S.`` are one word each."""
    return [w.rstrip(".") if not re.fullmatch(r"(?:\w\.)+", w) else w for w in _WORD_T.findall(text)]


def _flex(phrase: str) -> str:
    """A pattern for ``phrase`` literally, any run of whitespace matching any run of whitespace."""
    return r"\s+".join(re.escape(p) for p in phrase.split())


def _whole(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + _flex(phrase) + r"(?!\w)", re.IGNORECASE)


def remove_echoes(text: str, echoes: Iterable[str]) -> str:
    """``text`` with every copy of each echo (case-insensitive, whitespace-flexible) replaced by a newline;
    longest echoes first."""
    for e in sorted({e.strip() for e in echoes if isinstance(e, str) and e.strip()}, key=len, reverse=True):
        if len(e) < 12:  # short texts (a keyword, a marker) are not echoes but what is asked for
            continue
        text = re.sub(_flex(e), "\n", text, flags=re.IGNORECASE)
    return text


def training(id: str) -> Callable[[TrainingFn], TrainingFn]:
    def wrap(fn: TrainingFn) -> TrainingFn:
        if id in TRAINING_CHECKERS:
            raise ValueError(f"training checker {id!r} registered twice")
        TRAINING_CHECKERS[id] = fn
        return fn

    return wrap


def _side(relation: str, full: str, answer: str) -> str:
    # "at least" earns by occurrence: count what the response adds; "less than" caps: count everything
    return answer if relation == "at least" else full


# ============================================================================================ keywords
@training("keywords:existence")
def _keywords_existence(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Every keyword as a whole word (not inside a longer word), case-insensitively, outside copies of the prompt."""
    return all(_whole(k).search(answer) for k in kw["keywords"])


@training("keywords:frequency")
def _keywords_frequency(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Whole-word occurrences of the keyword (the sentence says "the word X")."""
    n = sum(1 for _ in _whole(kw["keyword"].strip()).finditer(_side(kw["relation"], full, answer)))
    return compare(n, kw["relation"], kw["frequency"])


#: Characters that render as nothing: a forbidden word split by one of them still reads as the word.
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u180e\u200b\u200c\u200d\u2060\ufeff"))


def _as_read(text: str) -> str:
    """The text as a reader sees it: compatibility forms folded (NFKC: fullwidth ``ｓｔｏｒｙ`` -> ``story``) and
    invisible characters (soft hyphen, zero-width space/joiners, word joiner) removed. Look-alike letters of other
    scripts (Cyrillic ``о``) are not folded."""
    import unicodedata

    return unicodedata.normalize("NFKC", text).translate(_INVISIBLE)


@training("keywords:forbidden_words")
def _keywords_forbidden(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """No forbidden word as a whole word anywhere (whitespace inside a phrase may be any whitespace), in the text as
    it reads (fullwidth forms folded, invisible characters removed)."""
    text = _as_read(full)
    return not any(_whole(w).search(text) for w in kw["forbidden_words"])


@training("keywords:letter_frequency")
def _letter_frequency(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """The letter's occurrences in the lower-cased text as it reads (fullwidth ``ｚ`` is a ``z``); copies of the
    prompt earn none."""
    n = _as_read(_side(kw["let_relation"], full, answer)).lower().count(kw["letter"])
    return compare(n, kw["let_relation"], kw["let_frequency"])


# ============================================================================================ language
@training("language:response_language")
def _response_language(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """langdetect's language is the requested one; text without letters is in no language (not followed)."""
    if not any(ch.isalpha() for ch in answer):
        return False
    return detect_language(answer) == kw["language"]


# ============================================================================================ length
@training("length_constraints:number_sentences")
def _number_sentences(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Punkt sentences, as official; for "at least", copies of the prompt earn none."""
    return compare(count_sentences(_side(kw["relation"], full, answer)), kw["relation"], kw["num_sentences"])


_DIVIDER_LINE = re.compile(r"^[ \t]*\*(?:[ \t]*\*){2,}[ \t]*$", re.MULTILINE)


@training("length_constraints:number_paragraphs")
def _number_paragraphs(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Parts between divider *lines* of three or more ``*`` (``***``, ``* * *``, ``****``); blank parts are not
    paragraphs and never make the answer wrong; ``***`` inside a line (``***bold***``) is no divider."""
    parts = [p for p in _DIVIDER_LINE.split(answer) if has_word_char(p)]
    return len(parts) == kw["num_paragraphs"]


@training("length_constraints:number_words")
def _number_words(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Words as a reader counts them (``don't``, ``well-known``, ``3.5`` are one word)."""
    return compare(len(training_words(_side(kw["relation"], full, answer))), kw["relation"], kw["num_words"])


_BLANK_LINES = re.compile(r"\n[ \t]*\n")
_ALNUM_RUN = re.compile(r"[^\W_]+")


def paragraphs_by_blank_lines(text: str) -> list[str]:
    """Paragraphs separated by one or more blank lines (lines of only spaces/tabs count as blank); paragraphs with
    no letter or digit are dropped, so they never shift an index."""
    return [p.strip() for p in _BLANK_LINES.split(text) if has_word_char(p)]


@training("length_constraints:nth_paragraph_first_word")
def _nth_paragraph_first_word(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Exactly n paragraphs separated by blank lines (empty ones never shift the index), and paragraph k's first
    word (the first run of letters/digits, after any markdown or punctuation) is the given word."""
    paragraphs = paragraphs_by_blank_lines(full)
    k = kw["nth_paragraph"]
    if len(paragraphs) != kw["num_paragraphs"] or k > len(paragraphs):
        return False
    m = _ALNUM_RUN.search(paragraphs[k - 1])
    first = m.group(0) if m else ""
    return first.lower() == kw["first_word"].strip().lower()


# ============================================================================================ detectable content
_PLACEHOLDER = re.compile(r"\[([^\[\]\n]*)\]")


@training("detectable_content:number_placeholders")
def _number_placeholders(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """At least n ``[...]`` with a letter or digit inside (``[]`` and ``[ ]`` are not placeholders)."""
    n = sum(1 for m in _PLACEHOLDER.finditer(answer) if has_word_char(m.group(1)))
    return n >= kw["num_placeholders"]


_LINE_START = r"^[ \t#>*_\"'\u201c\u201e\u00ab]*"  # markdown or an opening quote may come before a header or marker


def _marker_pattern(marker: str) -> str:
    if marker == "P.P.S":
        return r"p\.\s?p\.\s?s\.?"
    if marker == "P.S.":
        return r"p\.\s?s\."
    return _flex(marker)


@training("detectable_content:postscript")
def _postscript(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """A line starting (after markdown such as ``**``) with the marker, followed by some text: a postscript, not
    the marker mentioned mid-sentence or left empty."""
    pat = re.compile(_LINE_START + _marker_pattern(kw["postscript_marker"].strip()), re.IGNORECASE | re.MULTILINE)
    return any(has_word_char(answer[m.end() :]) for m in pat.finditer(answer))


# ============================================================================================ detectable format
_BULLET = re.compile(r"^[ \t]*[*+\-\u2022\u2023\u25e6\u25aa\u2043][ \t]+\S", re.MULTILINE)
_RULE = re.compile(r"^[ \t]*([*\-_])(?:[ \t]*\1){2,}[ \t]*$", re.MULTILINE)


def count_training_bullets(text: str) -> int:
    """Markdown bullet items: a line starting with ``*``, ``-``, ``+`` or ``•`` then a space and text; a rule
    (``---``, ``* * *``) is no bullet, and neither is ``*italic*`` or ``-5`` at a line start."""
    return sum(1 for _ in _BULLET.finditer(text)) - sum(
        1 for m in _RULE.finditer(text) if _BULLET.match(text, m.start())
    )


@training("detectable_format:number_bullet_lists")
def _number_bullets(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Exactly n markdown bullet items (``*``, ``-``, ``+`` or ``•`` markers); the example bullets of a pasted
    prompt sentence do not count."""
    return count_training_bullets(answer) == kw["num_bullets"]


_OPTION = re.compile(r"(?<!\w)my\s+answer\s+is\s+(yes|no|maybe)(?!\w)", re.IGNORECASE)


@training("detectable_format:constrained_response")
def _constrained_response(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Exactly one of the options (any case, final period optional): "My answer is yes. My answer is no." and a
    pasted copy of the option list answer nothing."""
    return len({m.group(1).lower() for m in _OPTION.finditer(answer)}) == 1


_STAR_SPAN = re.compile(r"(?<!\*)(\*{1,3})([^\s*][^\n*]*?)(?<=\S)\1(?!\*)")
_UNDERSCORE_SPAN = re.compile(r"(?<![\w_])(_{1,2})([^\s_][^\n_]*?)(?<=\S)\1(?![\w_])")


@training("detectable_format:number_highlighted_sections")
def _highlights(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """At least n markdown emphasis spans (``*x*``, ``**x**``, ``***x***``, ``_x_``, ``__x__``) with text inside
    that does not start or end with a space; ``***x***`` counts once, ``2 * 3 * 4`` is no highlight."""
    n = sum(1 for m in _STAR_SPAN.finditer(answer) if has_word_char(m.group(2)))
    n += sum(1 for m in _UNDERSCORE_SPAN.finditer(answer) if has_word_char(m.group(2)))
    return n >= kw["num_highlights"]


@training("detectable_format:multiple_sections")
def _multiple_sections(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Exactly n section headers: a line starting (after markdown such as ``#`` or ``**``) with the splitter in any
    case and a number; a mention mid-sentence ("see Section 2") is no header; every section has content (a letter
    or digit after its header, on its line or below, before the next header)."""
    pat = re.compile(
        _LINE_START + _flex(kw["section_spliter"].strip()) + r"[ \t]*\d+(?!\w)", re.IGNORECASE | re.MULTILINE
    )
    heads = list(pat.finditer(answer))
    if len(heads) != kw["num_sections"]:
        return False
    # every section has content: text with a letter or digit after its header line, before the next header
    bounds = [h.start() for h in heads[1:]] + [len(answer)]
    return all(has_word_char(answer[head.end():end]) for head, end in zip(heads, bounds))


_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\n(.*)\n[ \t]*```", re.IGNORECASE | re.DOTALL)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@training("detectable_format:json_format")
def _json_format(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """The whole response (inside one optional ```` ```json ```` fence) is a non-empty JSON object or array:
    a bare number, string, ``null``, ``{}``, ``[]`` or ``NaN`` does not wrap an answer."""
    text = full.strip()
    m = _FENCE.fullmatch(text)
    if m:
        text = m.group(1)
    else:
        text = text.removeprefix("```json").removeprefix("```JSON").removeprefix("```Json").removeprefix("```")
        text = text.removesuffix("```")
    try:
        value = json.loads(text.strip(), parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, (dict, list)) and len(value) > 0


_TITLE = re.compile(r"<<([^<>\n]*)>>")


@training("detectable_format:title")
def _title(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """A ``<<title>>`` on one line with a letter or digit inside; the example title of a pasted prompt sentence does
    not count."""
    return any(has_word_char(m.group(1)) for m in _TITLE.finditer(answer))


# ============================================================================================ combination
_SIX_STARS = re.compile(r"\*(?:[ \t]*\*){5,}")


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


@training("combination:two_responses")
def _two_responses(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Exactly two responses with text, around a separator of six (or more) asterisks, spaces allowed between them
    (``* * * * * *``); blank parts are ignored; the two must differ beyond case and whitespace."""
    parts = [p for p in _SIX_STARS.split(full) if has_word_char(p)]
    return len(parts) == 2 and _norm(parts[0]) != _norm(parts[1])


@training("combination:repeat_prompt")
def _repeat_prompt(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Starts with the request (case-insensitive, any whitespace), then gives an answer: the request alone, or
    followed by nothing but copies of the prompt, answers nothing."""
    m = re.match(r"\s*" + _flex(kw["prompt_to_repeat"].strip()), full, re.IGNORECASE)
    if m is None:
        return False
    return has_word_char(remove_echoes(full[m.end() :], [kw["prompt_to_repeat"]]))


# ============================================================================================ start / end
_TRAILING_MARKUP = re.compile(r"[\s\"'*_`\u201d\u2019\u00bb]+$")


@training("startend:end_checker")
def _end_checker(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Ends with the phrase (case-insensitive, any whitespace inside, closing quotes or markdown such as ``**``
    after it allowed), and something comes before it: the phrase alone answers nothing."""
    phrase = kw["end_phrase"].strip()
    tail_len = 4 * len(phrase) + 64
    text = full[-tail_len:] if len(full) > tail_len else full
    text = _TRAILING_MARKUP.sub("", text)
    m = re.search(_flex(phrase) + r"$", text, re.IGNORECASE)
    if m is None:
        return False
    head = full[: len(full) - len(text) + m.start()] if len(full) > tail_len else text[: m.start()]
    return has_word_char(remove_echoes(head, [phrase]))


_QUOTES = {'"': '"', "\u201c": "\u201d", "\u201e": "\u201c", "\u00ab": "\u00bb"}


@training("startend:quotation")
def _quotation(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Starts and ends with a double quotation mark (``"``, or typographic ``“…”``, ``„…“``, ``«…»``), as a
    pair."""
    text = full.strip()
    return len(text) > 1 and _QUOTES.get(text[0]) == text[-1]


# ============================================================================================ change case
@training("change_case:capital_word_frequency")
def _capital_words(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Words (as a reader counts them: ``DON'T`` and ``U.S.`` are one each) in all capital letters."""
    n = sum(1 for w in training_words(_side(kw["capital_relation"], full, answer)) if w.isupper())
    return compare(n, kw["capital_relation"], kw["capital_frequency"])


def _is_english(text: str) -> bool:
    # langdetect's profiles are lower-case text: "MY ANSWER IS YES." is Somali to it, "my answer is yes." English
    return detect_language(text.lower()) == "en"


@training("change_case:english_capital")
def _english_capital(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """All cased letters are capitals, and langdetect says English on the lower-cased answer (copies of the prompt,
    which is English, left out)."""
    return full.isupper() and _is_english(answer)


@training("change_case:english_lowercase")
def _english_lowercase(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """All cased letters are lower case, and langdetect says English on the answer (copies of the prompt left out)."""
    return full.islower() and _is_english(answer)


# ============================================================================================ punctuation
@training("punctuation:no_comma")
def _no_comma(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """No comma of any script or width (``,`` ``，`` ``、`` ``،`` ``‚`` ...): a look-alike is still a comma."""
    return not any(ch in _COMMAS for ch in full)


# ============================================================================================ unseen (held-out)
@training("count:word_count_range")
def _word_count_range(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """``min_words <= words <= max_words``, words as a reader counts them."""
    return kw["min_words"] <= len(training_words(full)) <= kw["max_words"]


@training("count:unique_words")
def _unique_words(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """At least n distinct words (as a reader counts them, case-insensitive), outside copies of the prompt."""
    return len({w.lower() for w in training_words(answer)}) >= kw["num_unique"]


def check_training(id: str, kw: Mapping[str, Any], full: str, answer: str) -> bool:
    fn = TRAINING_CHECKERS.get(id)
    if fn is None:
        return bool(CONSTRAINTS[id].check_fn(kw, full))
    return bool(fn(kw, full, answer))
