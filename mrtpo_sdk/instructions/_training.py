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

import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._registry import CONSTRAINTS
from ._text import count_sentences, detect_language
from .ifeval import compare

__all__ = [
    "CONFUSABLES",
    "ECHO_EDIT_SHARE",
    "MAX_TRAINING_CHARS",
    "TRAINING_CHECKERS",
    "fold_confusables",
    "training_words",
    "remove_echoes",
    "has_word_char",
]

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


ECHO_EDIT_SHARE = 0.1
"""A near copy of an echo differs from it by at most this share of its letters and digits (at least 1 edit)."""

_TOKEN = re.compile(r"[^\W_]+")
_NEAR_ATTEMPTS = 16  # candidate windows aligned per echo and text (bounds the time on long texts; every other
# exact copy of a near copy found is cut too, so a near copy pasted many times is cut everywhere)


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by exactly one inserted, deleted or replaced character."""
    la, lb = len(a), len(b)
    if abs(la - lb) > 1 or a == b:
        return False
    if la == lb:
        return sum(x != y for x, y in zip(a, b)) == 1
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1 :]


def _near_copies(tokens: list, echo_words: list[str], budget: int) -> list[tuple[int, int, int]]:
    """Token ranges ``(start, stop, cost)`` of ``tokens`` that spell ``echo_words`` with at most ``budget`` character
    edits (case, whitespace and punctuation are free: only letters and digits count).

    Candidates come from offset votes (a token equal to echo word j at text position i votes for offset i - j); each
    candidate window is aligned by a word-level edit distance whose costs are characters: a word one edit away costs
    1, a missing or extra word its length, two words run together (or one split in two) 1, any other replacement
    the longer word's length. No candidate, no alignment: a text unlike the echo costs one pass over its tokens.
    """
    m = len(echo_words)
    where: dict[str, list[int]] = {}
    for j, w in enumerate(echo_words):
        where.setdefault(w, []).append(j)
    votes: dict[int, int] = {}
    for i, (w, _, _) in enumerate(tokens):
        for j in where.get(w, ()):
            votes[i - j] = votes.get(i - j, 0) + 1
    need = max(2, (m + 1) // 2)  # a near copy keeps at least half its words within two offsets of one another
    near = {d: sum(votes.get(d + s, 0) for s in (-2, -1, 0, 1, 2)) for d, n in votes.items() if 2 * n >= need}
    found: list[tuple[int, int, int]] = []
    taken = [False] * len(tokens)
    slack = min(budget, m // 2) + 1  # words the copy may have more or fewer than the echo, around the window
    attempts = 0
    for d, n in sorted(near.items(), key=lambda kv: (-votes[kv[0]], kv[0])):
        if attempts >= _NEAR_ATTEMPTS:
            break
        if n < need:
            continue
        lo, hi = max(0, d - slack), min(len(tokens), d + m + slack)
        core = taken[max(0, d) : min(len(tokens), d + m)]
        if core and all(core):  # this offset's copy was found already
            continue
        attempts += 1
        best = _align(tokens, lo, hi, echo_words, budget)
        if best is None:
            continue
        start, stop, _ = best
        if any(taken[start:stop]):
            continue
        for k in range(start, stop):
            taken[k] = True
        found.append(best)
    return found


def _align(tokens: list, lo: int, hi: int, echo: list[str], budget: int) -> tuple[int, int, int] | None:
    """The cheapest range of ``tokens[lo:hi]`` spelling ``echo`` (free start and end in the text), if it costs at
    most ``budget``."""
    m = len(echo)
    inf = budget + 1
    # column j (text position lo + j): D[i] = (cost of echo[:i] ending here, start token)
    prev2 = None
    prev = [(0, lo)] + [(min(inf, sum(len(w) for w in echo[:i])), lo) for i in range(1, m + 1)]
    best = (prev[m][0], prev[m][1], lo) if prev[m][0] <= budget else None
    for j in range(lo, hi):
        t = tokens[j][0]
        cur = [(0, j + 1)]
        for i in range(1, m + 1):
            e = echo[i - 1]
            if t == e:
                c = (prev[i - 1][0], prev[i - 1][1])
            else:
                sub = 1 if _one_edit(t, e) else max(len(t), len(e))
                c = (prev[i - 1][0] + sub, prev[i - 1][1])
            dele = cur[i - 1][0] + len(e)  # echo word missing in the text
            if dele < c[0]:
                c = (dele, cur[i - 1][1])
            ins = prev[i][0] + len(t)  # extra text word
            if ins < c[0]:
                c = (ins, prev[i][1])
            if i >= 2 and t == echo[i - 2] + e and prev[i - 2][0] + 1 < c[0]:  # two echo words run together
                c = (prev[i - 2][0] + 1, prev[i - 2][1])
            if prev2 is not None and tokens[j - 1][0] + t == e and prev2[i - 1][0] + 1 < c[0]:  # one word split
                c = (prev2[i - 1][0] + 1, prev2[i - 1][1])
            cur.append((min(c[0], inf), c[1]))
        prev2, prev = prev, cur
        if cur[m][0] <= budget and (best is None or cur[m][0] < best[0]):
            best = (cur[m][0], cur[m][1], j + 1)
    if best is None:
        return None
    cost, start, stop = best
    return (start, stop, cost) if stop > start else None


def remove_echoes(text: str, echoes: Iterable[str]) -> str:
    """``text`` with every copy of each echo (case-insensitive, whitespace-flexible) replaced by a newline, and
    every *near* copy too: one whose letters and digits differ from the echo's by at most ``ECHO_EDIT_SHARE`` of
    them (at least one edit: ``rivers`` for ``river``, a dropped letter, two words run together), punctuation,
    case and whitespace free; longest echoes first. Echoes under 12 characters are not cut, and echoes of fewer
    than 4 words are cut only when copied exactly."""
    key = tuple(e for e in echoes if isinstance(e, str))
    # a text over MAX_TRAINING_CHARS follows nothing anyway: exact copies only (bounded time)
    if len(text) > MAX_TRAINING_CHARS:
        return _remove_echoes.__wrapped__(text, key, False)
    return _remove_echoes(text, key)


@functools.lru_cache(maxsize=64)  # one completion is checked against each of its example's constraints
def _remove_echoes(text: str, echoes: tuple[str, ...], near: bool = True) -> str:
    for e in sorted({e.strip() for e in echoes if e.strip()}, key=len, reverse=True):
        if len(e) < 12:  # short texts (a keyword, a marker) are not echoes but what is asked for
            continue
        # whole words only: a copy glued to a letter ("AAnswer with ...") is left whole for the near-copy pass,
        # never cut mid-word into a stray fragment that the length checks would count as the answer
        text = re.sub((r"(?<!\w)" if e[0].isalnum() else "") + _flex(e) + (r"(?!\w)" if e[-1].isalnum() else ""),
                      "\n", text, flags=re.IGNORECASE)
        words = [w.casefold() for w in _TOKEN.findall(e)]
        if not near or len(words) < 4:
            continue
        tokens = [(m.group(0).casefold(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        if len(tokens) < len(words) // 2:
            continue
        budget = max(1, int(ECHO_EDIT_SHARE * sum(len(w) for w in words)))
        copies = {text[tokens[a][1] : tokens[b - 1][2]] for a, b, _ in _near_copies(tokens, words, budget)}
        for c in sorted(copies, key=len, reverse=True):  # each near copy found, wherever it occurs
            text = re.sub(_flex(c), "\n", text, flags=re.IGNORECASE)
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


def _is_ignorable(cp: int) -> bool:
    """A character that renders as nothing: every format character (Unicode category ``Cf``: soft hyphen,
    zero-width space/joiners, bidi marks, word joiner, invisible operators, tag characters ``U+E0000..U+E007F``) and
    the other default-ignorable code points (combining grapheme joiner ``U+034F``, Hangul fillers ``U+115F``,
    ``U+1160``, ``U+3164``, ``U+FFA0``, variation selectors, Mongolian free variation selectors)."""
    ch = chr(cp)
    return (
        unicodedata.category(ch) == "Cf"
        or cp in (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0)
        or 0x180B <= cp <= 0x180F
        or 0xFE00 <= cp <= 0xFE0F
        or 0xE0000 <= cp <= 0xE0FFF
    )


class _Invisible(dict):
    """A ``str.translate`` table deleting :func:`_is_ignorable` characters (decided per character, cached)."""

    def __missing__(self, cp: int) -> int | None:
        value = None if _is_ignorable(cp) else cp
        self[cp] = value
        return value


_INVISIBLE = _Invisible()


def _as_read(text: str) -> str:
    """The text as a reader sees it: compatibility forms folded (NFKC: fullwidth ``ｓｔｏｒｙ`` -> ``story``) and
    invisible characters (:func:`_is_ignorable`: every format character ``Cf``, and the other default-ignorables)
    removed. Look-alike letters of other scripts (Cyrillic ``о``) are not folded here (:func:`fold_confusables`
    does), nor accents (:func:`_skeleton` does)."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text.translate(_INVISIBLE)).translate(_INVISIBLE)


def _strip_marks(text: str) -> str:
    """``text`` decomposed (NFKD) without its combining marks (categories ``Mn``, ``Me``): ``caf\u00e9`` and
    ``cafe\u0301`` -> ``cafe``."""
    if text.isascii():
        return text
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if unicodedata.category(ch) not in ("Mn", "Me"))


def _skeleton(text: str) -> str:
    """The letters a reader recognizes: :func:`_as_read`, accents and other combining marks stripped
    (:func:`_strip_marks`), look-alike letters of other scripts read as Latin (:func:`fold_confusables`)."""
    return fold_confusables(_strip_marks(_as_read(text)))


#: Cyrillic, Greek and Armenian letters (and Latin ``ɑ``, ``ɡ``) that render like a Latin letter in common fonts, and
#: that letter: a small map after
#: Unicode's confusables list (UTS #39 ``confusables.txt``), restricted to single letters that look the same in
#: lower or upper case; no confusables library is a dependency of the SDK.
CONFUSABLES: dict[str, str] = {
    # Cyrillic, lower case
    "\u0430": "a", "\u0441": "c", "\u0501": "d", "\u0435": "e", "\u04bb": "h", "\u0456": "i", "\u0458": "j",
    "\u04cf": "l", "\u043e": "o", "\u0440": "p", "\u051b": "q", "\u0455": "s", "\u051d": "w", "\u0445": "x",
    "\u0443": "y", "\u0475": "v",
    # Cyrillic, upper case
    "\u0410": "A", "\u0412": "B", "\u0421": "C", "\u0415": "E", "\u041d": "H", "\u0406": "I", "\u0408": "J",
    "\u041a": "K", "\u041c": "M", "\u041e": "O", "\u0420": "P", "\u051a": "Q", "\u0405": "S", "\u0422": "T",
    "\u051c": "W", "\u0425": "X", "\u0423": "Y", "\u04ae": "Y", "\u0474": "V", "\u04c0": "I",
    # Greek, lower case
    "\u03b1": "a", "\u03f2": "c", "\u03b9": "i", "\u03f3": "j", "\u03ba": "k", "\u03bd": "v", "\u03bf": "o",
    "\u03c1": "p", "\u03c5": "u", "\u03c7": "x", "\u03b3": "y",
    # Greek, upper case
    "\u0391": "A", "\u0392": "B", "\u03f9": "C", "\u0395": "E", "\u0396": "Z", "\u0397": "H", "\u0399": "I",
    "\u037f": "J", "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P", "\u03a4": "T",
    "\u03a5": "Y", "\u03a7": "X",
    # Armenian, lower case
    "\u0585": "o", "\u057d": "u", "\u0578": "n", "\u0581": "g", "\u0570": "h", "\u0566": "q",
    # Armenian, upper case
    "\u0555": "O", "\u054d": "U", "\u054f": "S", "\u053c": "L",
    # Latin letters outside the Latin blocks counted as Latin below
    "\u0251": "a", "\u0261": "g",
}  # fmt: skip
_CONFUSABLE_TABLE = str.maketrans(CONFUSABLES)
_LETTERS = re.compile(r"[^\W\d_]+")


def _is_latin(ch: str) -> bool:
    return ch < "\u0250" and ch.isalpha()  # Basic Latin, Latin-1, Latin Extended-A/B


def fold_confusables(text: str) -> str:
    """``text`` with the look-alike letters of :data:`CONFUSABLES` replaced by the Latin letters they look like:
    in every word that mixes them with Latin letters (``\u0441\u043ef\u0066ee`` -> ``coffee``), and in whole words
    of them too when most letters of the text are Latin (a Latin-script text with one word spelled in look-alikes).
    A text mostly in Cyrillic or Greek keeps its own words (a Russian ``\u0441\u043e\u0440`` is not ``cop``)."""
    if text.isascii():
        return text
    latin = other = 0
    for ch in text:
        if ch.isalpha():
            if _is_latin(ch):
                latin += 1
            else:
                other += 1
    if 2 * latin > latin + other:
        return text.translate(_CONFUSABLE_TABLE)
    return _LETTERS.sub(lambda m: m.group(0).translate(_CONFUSABLE_TABLE)
                        if any(_is_latin(c) for c in m.group(0)) else m.group(0), text)


@training("keywords:forbidden_words")
def _keywords_forbidden(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """No forbidden word as a whole word anywhere (whitespace inside a phrase may be any whitespace), in the text as
    it reads (:func:`_skeleton`: fullwidth forms folded, invisible characters removed, accents stripped on both the
    text and the word, Cyrillic/Greek/Armenian look-alike letters read as the Latin ones)."""
    text = _skeleton(full)
    return not any(_whole(_skeleton(w)).search(text) for w in kw["forbidden_words"])


@training("keywords:letter_frequency")
def _letter_frequency(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """The letter's occurrences in the lower-cased text as it reads (fullwidth ``ｚ`` is a ``z``, invisible characters
    removed, an accented ``á`` is an ``a``); copies of the prompt earn none. For "less than" (a cap) look-alike
    letters of other scripts count as the letter too (Cyrillic ``а``, Latin alpha ``ɑ``: :func:`_skeleton`), so
    hiding the letter behind them does not pay; for "at least" they do not (a look-alike is not the letter: counting
    it would pay for the trick)."""
    relation = kw["let_relation"]
    text = _side(relation, full, answer)
    text = _strip_marks(_as_read(text)) if relation == "at least" else _skeleton(text)
    letter = _strip_marks(_as_read(kw["letter"])).lower()
    n = text.lower().count(letter) if letter else 0
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


def _norm(text: str) -> tuple[str, ...]:
    """The words of ``text`` (runs of letters and digits, case-folded, as read): what two responses must differ in."""
    return tuple(w.casefold() for w in _TOKEN.findall(fold_confusables(_as_read(text))))


@training("combination:two_responses")
def _two_responses(kw: Mapping[str, Any], full: str, answer: str) -> bool:
    """Exactly two responses with text, around a separator of six (or more) asterisks, spaces allowed between them
    (``* * * * * *``); blank parts are ignored; the two must differ in their words: case, whitespace, punctuation
    and markup are no difference (``Tea.`` / ``Tea!``)."""
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
    pair, and the whole response is that one quotation: a quote inside that closes the opening one before the end
    (``"Tea" is hot and "coffee"``, ``"Tea."\n\nMore."``) leaves text outside it. Quotes nested inside (``"He said
    "hi" to me."``) are fine: an inner ``"`` after a space opens, one before a space or punctuation closes, one
    between letters or spaces on both sides, or after a digit (an inch mark, ``5"``), is neither."""
    text = full.strip()
    if len(text) < 2 or _QUOTES.get(text[0]) != text[-1]:
        return False
    return _one_quotation(text[0], text[-1], text[1:-1])


def _one_quotation(open_q: str, close_q: str, inner: str) -> bool:
    depth = 1
    for i, ch in enumerate(inner):
        if ch not in (open_q, close_q) or (i and inner[i - 1] == "\\"):
            continue
        if open_q != close_q:
            depth += 1 if ch == open_q else -1
        else:
            before = inner[i - 1] if i else " "
            after = inner[i + 1] if i + 1 < len(inner) else " "
            opens = (before.isspace() or before in "([{\u2014-") and not after.isspace()
            closes = not before.isspace() and not (after.isalnum() or after == "_")
            if opens == closes or before.isdigit():
                continue  # ambiguous: a"b, " alone, or an inch mark (5")
            depth += 1 if opens else -1
        if depth == 0:
            return False
    return True


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
