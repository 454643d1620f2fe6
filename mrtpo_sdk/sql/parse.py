"""Pull the policy's SQL answer out of its completion.

The answer format is ONE query inside one fenced block tagged ``sql``, optionally preceded (or followed) by
reasoning text::

    The students table has the names, so I filter by year.
    ```sql
    SELECT name FROM student WHERE year = 2
    ```

:func:`extract_sql` checks the structure only (it does not parse the SQL). The scan is linear (``str.find``, no
regular expressions), so huge or adversarial completions cannot cause catastrophic backtracking.

Fence rules: a fence starts with three backticks; the word right after an opening fence is its tag, compared
case-insensitively (```` ```sql ````, ```` ```SQL ````). The query is the text between the opening fence's tag
and the next three backticks, stripped of surrounding whitespace (a trailing ``;`` is kept). Fences with another
tag (```` ```python ````, ```` ```sqlite ````) or none are skipped as a whole, closing fence included.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["Fence", "FencedSQL", "extract_sql", "fence_tag_end", "fences", "FENCE", "SQL_TAG"]

FENCE = "```"
SQL_TAG = "sql"


@dataclass(frozen=True)
class FencedSQL:
    """Result of :func:`extract_sql`.

    Attributes:
        query: the SQL text inside the single ```` ```sql ```` fence, stripped; ``None`` when the structure is wrong.
        error: ``""`` on success, otherwise a noun phrase naming what is wrong, written to read as
            "the response has <error>": ``no ```sql fence``, ``no ```sql fence (only a ```python fence)``,
            ``2 ```sql fences``, ``an unclosed ```sql fence (no closing ``` after it)``,
            ``an empty ```sql fence``, ``no text (got NoneType)``.
        span: ``(start, end)`` of ``query`` in the completion (``completion[start:end] == query``); ``None`` with
            the query. Not compared: two results are equal when query and error are.
    """

    query: str | None
    error: str = ""
    span: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        """True when exactly one closed, non-empty ```` ```sql ```` fence was found."""
        return self.query is not None


@dataclass(frozen=True)
class Fence:
    """One fence of a completion, as :func:`fences` finds it.

    Attributes:
        start: index of its first backtick.
        tag: the word after the backticks (``"sql"``, ``"python"``, ``""``), as written.
        tag_end: index just after the tag (where the fenced text starts).
        close: index of the closing ````` ``` `````, ``-1`` when none follows.
    """

    start: int
    tag: str
    tag_end: int
    close: int


def fence_tag_end(text: str, start: int) -> int:
    """End index of the fence tag starting at ``start`` (letters, digits, ``_+-.#``)."""
    i, n = start, len(text)
    while i < n and (text[i].isalnum() or text[i] in "_+-.#"):
        i += 1
    return i


def fences(text: str) -> Iterator[Fence]:
    """The fences of ``text`` in order, each with its closing fence; the last one may be unclosed (``close == -1``).

    The fence rules of the module docstring: four or more backticks open like three, the tag may follow the
    backticks after spaces, and the text after a closing fence is scanned for the next one. Linear in ``text``.
    """
    pos, n = 0, len(text)
    while True:
        start = text.find(FENCE, pos)
        if start < 0:
            return
        tag_start = start + len(FENCE)
        while tag_start < n and text[tag_start] == "`":  # ```` (4+ backticks) open like ```
            tag_start += 1
        # the tag may follow the backticks after spaces on the same line: ``` sql
        i = tag_start
        while i < n and text[i] in " \t":
            i += 1
        tag_end = fence_tag_end(text, i)
        close = text.find(FENCE, tag_end)
        yield Fence(start, text[i:tag_end], tag_end, close)
        if close < 0:
            return
        pos = close + len(FENCE)
        while pos < n and text[pos] == "`":
            pos += 1


def extract_sql(completion: str) -> FencedSQL:
    """Find the single ```` ```sql ```` fenced query in ``completion``.

    Args:
        completion: the policy's full response text.

    Returns:
        :class:`FencedSQL` with the stripped query and its span, or ``query=None`` and an ``error`` naming the
        structural problem: not a string, no ```` ```sql ```` fence (saying if a fence with another tag was
        found), more than one ```` ```sql ```` fence, an unclosed fence, or an empty fence. Never raises.
    """
    if not isinstance(completion, str):
        return FencedSQL(None, f"no text (got {type(completion).__name__})")
    queries: list[Fence] = []
    other_tags: list[str] = []
    unclosed = False
    for fence in fences(completion):
        if fence.tag.lower() == SQL_TAG:
            if fence.close < 0:
                unclosed = True
                break
            queries.append(fence)
        else:
            other_tags.append(fence.tag)
    count = len(queries) + (1 if unclosed else 0)
    if count == 0:
        if other_tags:
            shown = ", ".join(f"a ```{t} fence" if t else "a ``` fence without a tag" for t in other_tags[:3])
            return FencedSQL(None, f"no ```sql fence (only {shown})")
        return FencedSQL(None, "no ```sql fence")
    if count > 1:
        return FencedSQL(None, f"{count} ```sql fences")
    if unclosed:
        return FencedSQL(None, "an unclosed ```sql fence (no closing ``` after it)")
    fence = queries[0]
    raw = completion[fence.tag_end : fence.close]
    query = raw.strip()
    if not query:
        return FencedSQL(None, "an empty ```sql fence")
    start = fence.tag_end + len(raw) - len(raw.lstrip())
    return FencedSQL(query, "", (start, start + len(query)))
