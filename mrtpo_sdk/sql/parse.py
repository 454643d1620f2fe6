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

from dataclasses import dataclass

__all__ = ["FencedSQL", "extract_sql", "fence_tag_end", "FENCE", "SQL_TAG"]

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
    """

    query: str | None
    error: str = ""

    @property
    def ok(self) -> bool:
        """True when exactly one closed, non-empty ```` ```sql ```` fence was found."""
        return self.query is not None


def fence_tag_end(text: str, start: int) -> int:
    """End index of the fence tag starting at ``start`` (letters, digits, ``_+-.#``)."""
    i, n = start, len(text)
    while i < n and (text[i].isalnum() or text[i] in "_+-.#"):
        i += 1
    return i


def extract_sql(completion: str) -> FencedSQL:
    """Find the single ```` ```sql ```` fenced query in ``completion``.

    Args:
        completion: the policy's full response text.

    Returns:
        :class:`FencedSQL` with the stripped query, or ``query=None`` and an ``error`` naming the structural
        problem: not a string, no ```` ```sql ```` fence (saying if a fence with another tag was found), more
        than one ```` ```sql ```` fence, an unclosed fence, or an empty fence. Never raises.
    """
    if not isinstance(completion, str):
        return FencedSQL(None, f"no text (got {type(completion).__name__})")
    queries: list[str] = []
    other_tags: list[str] = []
    unclosed = False
    pos, n = 0, len(completion)
    while True:
        start = completion.find(FENCE, pos)
        if start < 0:
            break
        tag_start = start + len(FENCE)
        while tag_start < n and completion[tag_start] == "`":  # ```` (4+ backticks) open like ```
            tag_start += 1
        # the tag may follow the backticks after spaces on the same line: ``` sql
        i = tag_start
        while i < n and completion[i] in " \t":
            i += 1
        tag_end = fence_tag_end(completion, i)
        tag = completion[i:tag_end]
        close = completion.find(FENCE, tag_end)
        if tag.lower() == SQL_TAG:
            if close < 0:
                unclosed = True
                break
            queries.append(completion[tag_end:close].strip())
        else:
            other_tags.append(tag)
            if close < 0:
                break
        pos = close + len(FENCE)
        while pos < n and completion[pos] == "`":
            pos += 1
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
    query = queries[0]
    if not query:
        return FencedSQL(None, "an empty ```sql fence")
    return FencedSQL(query, "")
