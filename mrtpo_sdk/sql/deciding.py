"""Where a SQL completion's rewards are decided: character spans for ``Verifier(deciding=...)``.

One locator per reward of the bundled SQL task (``tasks/sql.py``); each returns ``[start, end)`` spans of the
completion, or ``None`` when nothing in it can be pointed at:

* :func:`format_spans` (``sql_format``): the fence markers (```` ```sql ```` with its tag, the closing ```` ``` ````,
  and any other fence), where the format is kept or broken; with them, the first word of a fenced text that is no
  query (``SELECT``, ``WITH`` or ``VALUES`` is required there).
* :func:`error_spans` (``executes``): the token(s) the SQLite error names, found in the query: ``no such column:
  foo`` -> each ``foo``; ``near "X": syntax error`` -> each ``X``; ``no such table``, ``no such function``,
  ``ambiguous column name``, ``unrecognized token``, ``wrong number of arguments to function F()``, ``misuse of
  aggregate F()`` and a compound with unequal columns (the ``UNION``) alike; a query that runs but reads none of
  the question's tables -> the tables it reads. ``None`` when the error names nothing in the query.
* :func:`differing_spans` (``result_match``): the tokens of the query that differ from the reference query.
  Both are tokenized by sqlglot (SQLite dialect) and normalized token by token (keywords and unquoted or quoted
  names compared case-insensitively, string literals exactly, a trailing ``;`` dropped); the two token lists are
  aligned with :class:`difflib.SequenceMatcher`. A query token in a replaced or inserted run is deciding; where the
  query leaves out reference tokens, the query token just after the gap is (the closing fence when the gap is at
  the end: the model ended the query there). A query sqlglot cannot tokenize is deciding as a whole; a completion
  without a ```` ```sql ```` query gives ``None`` (there is no query to point at).

Model output is untrusted: every locator returns on any string, in time linear in it (the alignment is cut at
:data:`MAX_ALIGNED_TOKENS` query tokens).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from ..verifier import Spans
from .parse import FENCE, extract_sql, fences
from .sandbox import first_keyword

__all__ = [
    "MAX_ALIGNED_TOKENS",
    "differing_spans",
    "error_spans",
    "format_spans",
    "name_spans",
    "sqlite_error_names",
]

#: A query with more sqlglot tokens than this is deciding as a whole for ``result_match`` (no alignment is run).
MAX_ALIGNED_TOKENS = 4000



# ---------------------------------------------------------------------------------------------- sql_format
def format_spans(completion: str) -> Spans | None:
    """The fence markers of ``completion`` (each opening run of backticks with its tag, each closing run), plus the
    first word of the fenced query when it is no query; ``None`` when the completion has no fence."""
    if not isinstance(completion, str):
        return None
    spans: Spans = []
    for fence in fences(completion):
        spans.append((fence.start, fence.tag_end))
        if fence.close >= 0:
            end = fence.close + len(FENCE)
            while end < len(completion) and completion[end] == "`":
                end += 1
            spans.append((fence.close, end))
    answer = extract_sql(completion)
    if answer.ok and answer.span and first_keyword(answer.query or "") not in ("SELECT", "WITH", "VALUES"):
        m = re.match(r"\S+", answer.query or "")
        if m:
            spans.append((answer.span[0], answer.span[0] + m.end()))
    return sorted(spans) or None


# ---------------------------------------------------------------------------------------------- executes
_QUOTED = r'"(.*)"'
_ERROR_NAMES = [
    re.compile(r"near " + _QUOTED + r": syntax error", re.DOTALL),
    re.compile(r"unrecognized token: " + _QUOTED, re.DOTALL),
    re.compile(r"no such (?:column|table|function|module|collation): (.+)", re.DOTALL),
    re.compile(r"ambiguous column name: (.+)", re.DOTALL),
    re.compile(r"wrong number of arguments to function (.+)\(\)", re.DOTALL),
    re.compile(r"misuse of (?:aggregate|window) function (.+)\(\)", re.DOTALL),
    re.compile(r"misuse of aggregate: (.+)\(\)", re.DOTALL),
    re.compile(r"SELECTs to the left and right of (.+) do not have the same number of result columns", re.DOTALL),
]


def sqlite_error_names(error: str) -> list[str]:
    """The query text a SQLite error message names (``no such column: t.foo`` -> ``["t.foo", "foo"]``: the
    qualified name, then its last part), ``[]`` when it names nothing."""
    if not isinstance(error, str):
        return []
    for pattern in _ERROR_NAMES:
        m = pattern.fullmatch(error.strip())
        if m and m.group(1).strip():
            name = m.group(1).strip()
            if "." in name and not name.startswith(".") and not name.endswith("."):
                return [name, name.rsplit(".", 1)[1]]
            return [name]
    return []


def name_spans(query: str, name: str) -> Spans:
    """Every occurrence of ``name`` in ``query``, case-insensitively, not inside a longer word (``foo`` is not
    found in ``food``); a dotted name matches with spaces around its dots (``t . foo``)."""
    if not name:
        return []
    parts = [re.escape(p) for p in name.split(".")]
    body = r"\s*\.\s*".join(parts) if all(parts) else re.escape(name)
    left = r"(?<![\w$])" if re.match(r"[\w$]", name) else ""
    right = r"(?![\w$])" if re.search(r"[\w$]$", name) else ""
    return [m.span() for m in re.finditer(left + body + right, query, re.IGNORECASE) if m.end() > m.start()]


def error_spans(query: str, error: str, tables: Iterable[str] = ()) -> Spans | None:
    """The spans of ``query`` (offsets in ``query``) that ``error`` names: the first of
    :func:`sqlite_error_names` found in the query, each occurrence; with no error and ``tables`` (a query that runs
    but reads no table of the question), the occurrences of those table names. ``None`` when nothing is found."""
    if not isinstance(query, str):
        return None
    if error:
        for name in sqlite_error_names(error):
            spans = name_spans(query, name)
            if spans:
                return spans
        return None
    spans = [s for t in sorted(set(tables)) for s in name_spans(query, t)]
    return spans or None


# ---------------------------------------------------------------------------------------------- result_match
def _tokens(sql: str) -> list | None:
    """sqlglot's SQLite tokens of ``sql`` without a trailing ``;`` run, or ``None`` when it cannot tokenize."""
    import sqlglot
    from sqlglot.tokens import TokenType

    try:
        tokens = sqlglot.tokenize(sql, read="sqlite")
    except Exception:  # noqa: BLE001 - untrusted text: no tokens, never a crash
        return None
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    return tokens


def _key(token) -> tuple[str, str]:
    """What two tokens must share to be the same: its kind (names are one kind) and its text, case-folded but for
    string literals."""
    kind = token.token_type.name
    if kind in ("VAR", "IDENTIFIER"):
        return "NAME", token.text.casefold()
    if kind == "STRING":
        return kind, token.text
    return kind, token.text.casefold()


def differing_spans(query: str, reference: str, after: tuple[int, int] | None = None) -> Spans | None:
    """The spans of ``query`` (offsets in ``query``) whose tokens differ from ``reference``'s (module docstring).

    Args:
        query: the completion's query; reference: the reference query.
        after: the span (in ``query``'s offsets, may lie past its end) that stands for "the end of the query": where a
            gap at the end points (the closing fence); ``None``: the query's last token.

    Returns:
        the spans, or ``None`` when the two token lists agree, the query is empty, or the reference cannot be
        tokenized; the whole query when it cannot be tokenized or has more than :data:`MAX_ALIGNED_TOKENS` tokens.
    """
    if not isinstance(query, str) or not isinstance(reference, str) or not query.strip():
        return None
    ref = _tokens(reference)
    if ref is None:
        return None
    mine = _tokens(query)
    if mine is None or len(mine) > MAX_ALIGNED_TOKENS:
        return [(0, len(query))]
    if not mine:
        return None
    spans: Spans = []
    matcher = difflib.SequenceMatcher(None, [_key(t) for t in mine], [_key(t) for t in ref], autojunk=False)
    for op, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if op in ("replace", "delete"):  # query tokens the reference does not have here
            spans += [(t.start, t.end + 1) for t in mine[i1:i2]]
        elif op == "insert":  # reference tokens the query leaves out before mine[i1]
            if i1 < len(mine):
                spans.append((mine[i1].start, mine[i1].end + 1))
            else:
                spans.append(after if after is not None else (mine[-1].start, mine[-1].end + 1))
    return sorted(set(spans)) or None
