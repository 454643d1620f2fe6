"""Text heuristics shared by the lint rules: markup, sentences, imperative and meta wording, vague requirements.

Everything here is pure string processing (linear regular expressions, no backtracking-prone patterns), so it is
safe on untrusted verifier output.
"""

from __future__ import annotations

import re

__all__ = [
    "PLACEHOLDER",
    "fence_tags",
    "xml_tags",
    "names_concrete_markup",
    "strip_markup",
    "outside_fences",
    "sentences",
    "normalize",
    "imperative_problem",
    "meta_word",
    "label_or_heading",
    "vague_requirement",
    "list_items",
]

PLACEHOLDER = "\x00"
"""Stands for a computed part (an f-string field, a call) inside a block's literal template."""

_FENCE_OPEN = re.compile(r"```[ \t]*([A-Za-z0-9_+.#-]+)")
_FENCE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.S)
_XML_TAG = re.compile(r"</?([A-Za-z_][A-Za-z0-9_.:-]{0,40})(?:\s[^<>]{0,200})?/?>")
_BACKTICK_TOKEN = re.compile(r"`[^`\n]{1,60}`")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def fence_tags(text: str) -> set[str]:
    """The info strings of the code fences opened in ``text``, lower-cased: ``"```sql ..."`` -> ``{"sql"}``."""
    tags = set()
    # only openers: every other fence in a well-formed text is a closer
    for i, m in enumerate(re.finditer(r"```[ \t]*([A-Za-z0-9_+.#-]*)", text)):
        if i % 2 == 0 and m.group(1):
            tags.add(m.group(1).lower())
    return tags


def xml_tags(text: str) -> set[str]:
    """Names of the XML-like tags in ``text`` (``<tool_call>``, ``</think>`` -> ``{"tool_call", "think"}``)."""
    return {m.group(1).lower() for m in _XML_TAG.finditer(text)}


def names_concrete_markup(text: str) -> bool:
    """True when ``text`` names concrete markup: a tagged code fence, an XML-like tag or a backquoted token."""
    return bool(_FENCE_OPEN.search(text) or _XML_TAG.search(text) or _BACKTICK_TOKEN.search(text))


def strip_markup(text: str) -> str:
    """``text`` without its code-fence lines and XML-like tags (the content is kept): a format-broken probe."""
    out = re.sub(r"```[ \t]*[A-Za-z0-9_+.#-]*[ \t]*\n?", "", text)
    out = _XML_TAG.sub("", out)
    return out.strip()


def outside_fences(text: str) -> str:
    """``text`` with fenced code blocks replaced by a placeholder (their content is data, not wording)."""
    return _FENCE_BLOCK.sub(PLACEHOLDER, text)


def normalize(text: str) -> str:
    """Collapse whitespace runs to one space and strip: substring tests ignore layout."""
    return " ".join(text.split())


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences and lines (after ``.``/``!``/``?`` + space, or at newlines); stripped."""
    return [s.strip() for s in _SENTENCE_SPLIT.split(text) if s and s.strip()]


# Imperative verbs that open an instruction addressed to the model ("Write the query ...", "Do not ...").
_IMPERATIVE_VERBS = frozenset(
    """
    add answer avoid begin check choose consider correct do don't dont enclose ensure explain fix follow give
    include keep make mention never note output place please provide put remember remove replace reply respond
    return rewrite think try use verify wrap write
    """.split()
)
# Verbs of the list above that are also adjectives: "Correct." and "Correct answer." are verdicts, "Correct the
# join." is an order. As imperatives they take an object, so they count only before a determiner or pronoun.
_ALSO_ADJECTIVES = frozenset({"correct"})
_OBJECT_START = frozenset(
    """
    a an the this that these those it its them each every all any both either your my our their his her
    """.split()
)
_ADDRESS = re.compile(r"\b(?:you|your|you're|yourself)\b", re.I)
_MODAL_TO_MODEL = re.compile(r"\b(?:make sure|be sure|please|remember to|don't forget|do not forget)\b", re.I)


def imperative_problem(sentence: str) -> str | None:
    """Why ``sentence`` reads as an instruction to the model, or ``None``.

    A sentence starting with a placeholder (a computed part) is not judged by its first word, nor is a one-word
    sentence ("Correct.", "Valid.", "Done."): an instruction has an object or a complement. A first word that is
    also an adjective ("Correct") is an imperative only before a determiner or pronoun ("Correct the join.").
    """
    s = sentence.lstrip(" \t\"'*-•>")
    s = re.sub(r"^[A-Za-z][A-Za-z ]{0,30}:\s*", "", s)  # "Hint: wrap ..." is judged by "wrap"
    if not s or s.startswith(PLACEHOLDER):
        first = None
    else:
        first = re.match(r"[A-Za-z']+", s)
    if first:
        word = first.group(0).lower()
        rest = re.match(r"[A-Za-z']+", s[first.end() :].lstrip(" \t,"))
        if word in _IMPERATIVE_VERBS and rest is not None:
            if word not in _ALSO_ADJECTIVES or rest.group(0).lower() in _OBJECT_START:
                return f"starts with the imperative {first.group(0)!r}"
    m = _MODAL_TO_MODEL.search(s)
    if m:
        return f"says {m.group(0)!r} to the model"
    m = _ADDRESS.search(s)
    if m:
        return f"addresses the model as {m.group(0)!r}"
    return None


_META = re.compile(
    r"\b(?:rewards?|rewarded|scores?|scored|scoring|verifiers?|verified by|replay(?:s|ed)?|training|trained|"
    r"penalt(?:y|ies)|penali[sz]\w*|grader|graded|grading|rubric|advantages?)\b",
    re.I,
)


def meta_word(text: str) -> str | None:
    """The first word about training, replay, rewards, scores or verifiers in ``text``, or ``None``."""
    m = _META.search(text)
    return m.group(0) if m else None


_LABEL = re.compile(
    r"^[ \t]*(?:\*\*)?(?:feedback|hint|hints|note|notes|tip|error|errors|reference|reference answer|reference query|"
    r"correct answer|expected|expected answer|expected output|answer|solution|format|constraint|requirement|"
    r"instruction|instructions|rule|rules|info|information|context|block)(?:\*\*)?[ \t]*:",
    re.I | re.M,
)
_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]+[^\n]{1,60}|\*\*[^*\n]{1,60}\*\*[ \t]*$|[A-Z][A-Za-z ]{0,40}:[ \t]*$)", re.M
)


def label_or_heading(text: str) -> str | None:
    """The label (``"Hint:"``) or heading (``"## Feedback"``) in ``text``, or ``None``."""
    m = _LABEL.search(text) or _HEADING.search(text)
    return m.group(0).strip() if m else None


_VAGUE = [
    re.compile(p, re.I)
    for p in (
        r"\b(?:must|should|has to|needs to)\s+(?:execute|run|compile|parse|work|succeed|match|"
        r"be (?:valid|correct|right|"
        r"well-formed|accurate))\b",
        r"\bfollows?\s+the\s+(?:required\s+|expected\s+|correct\s+|right\s+|given\s+|specified\s+|proper\s+)?"
        r"(?:output\s+|answer\s+|response\s+)?format\b",
        r"\bin\s+the\s+(?:correct|right|required|expected|proper|specified)\s+format\b",
        r"\b(?:is|was|looks)\s+(?:not\s+)?(?:incorrect|wrong|invalid|correct|right|valid)\b\.?$",
        r"\b(?:has|contains|had)\s+(?:an?\s+|some\s+)?(?:errors?|mistakes?|problems?|issues?)\b\.?$",
        r"\bdoes\s+not\s+(?:execute|run|work|match)\b\.?$",
        r"\b(?:the\s+)?(?:correct|expected|right)\s+(?:answer|result|output)\b\.?$",
    )
]


def vague_requirement(sentence: str) -> str | None:
    """The vague requirement in a fully literal ``sentence`` ("the query must execute"), or ``None``.

    Sentences with a computed part (a placeholder) carry that part as information and are not judged.
    """
    if PLACEHOLDER in sentence:
        return None
    for pat in _VAGUE:
        m = pat.search(sentence)
        if m:
            return m.group(0).strip().rstrip(".")
    return None


_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]+\S", re.M)


def list_items(text: str) -> int:
    """Number of bulleted or numbered list items in ``text`` outside code fences."""
    return len(_LIST_ITEM.findall(outside_fences(text)))
