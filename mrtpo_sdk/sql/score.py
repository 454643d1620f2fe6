"""Scoring SQL completions under two named semantics: ``training`` (the default for rewards) and ``official``.

``official`` gives the official verdicts bit for bit: the Spider/BIRD execution match of :func:`results_match` (bags
unless the reference orders its output, positional columns, float tolerance), any query that runs counts as
executing, any closed ```` ```sql ```` fence counts as the format, and a query ending in two or more ``;`` is
refused as Python's ``sqlite3`` (and so the official evaluation scripts) refuses it.

``training`` fixes every false positive and false negative the adversarial search (``tests/sql/test_adversarial.py``)
found; each row of the table in ``docs/sql.md`` is one difference:

* **format**: the fence lines are lines (```` ```sql ```` ends its line, the closing ```` ``` ```` starts one), as the
  format rule states, and the fence holds a query (it starts with ``SELECT``, ``WITH`` or ``VALUES``): the format
  rule pasted back, or prose in a fence, is not the format;
* **executes**: the query must read at least one table the reference reads (or return the reference's result): a
  constant (``SELECT 1``) or a query about other tables runs but is not an attempt at the question;
* **result match**: the query must read one of the reference's tables (a constant that equals the answer, e.g. a
  memorised ``SELECT 3.2``, is not a query of the database); it must not filter on the expected result's own values
  typed in as constants (``WHERE name IN ('ann', 'bob')``, a VALUES row list, :func:`typed_in_filter_values`), nor
  carry them in its output copied from its own text (``SELECT 32 + 0*count(*) FROM student``, ``… UNION ALL VALUES
  ('History')``, :func:`typed_in_output_values`); tables are compared as SQLite compares identifiers (``FROM
  STUDENT`` reads ``student``), and a CTE named like a table is not a read of it; an empty reference result matches only an empty result
  with as many columns from a query reading every column the reference reads; the columns may come in any order; and
  when the reference's ``ORDER BY``/``LIMIT`` cuts through ties (rows equal on every ordering key, or any rows under a
  ``LIMIT`` without ``ORDER BY``), any choice and order within the tied rows is correct, and so is the whole tied set
  at the cut; any number of trailing ``;`` is one statement; and, test-suite execution accuracy (Zhong, Yu & Klein
  2020), an answer that matches must also return what the reference returns on each perturbed copy of the database
  (:func:`mrtpo_sdk.sql.perturb.perturbed_copies`; a copy where the reference fails or returns nothing is skipped):
  a hard-coded answer in any syntax (``WHERE dept_id IN (4, 7)``, ``SELECT 0x20 + 0*count(*) FROM student``) returns
  the right rows on the original only (:func:`perturbed_mismatch`, block :data:`PERTURBED_MISMATCH`). The copies are
  run only once the original matches, so ordinary completions cost nothing more.

Ties are detected at scoring time: the reference is run once more without its ``LIMIT``/``OFFSET`` and with its
ordering keys as extra columns (sqlglot rewrites it; the rewrite is used only when it reproduces the reference's
rows), and the groups of tied rows around the cut are kept with the reference.

Blocks that quote model output are capped at :data:`MAX_QUOTED_CHARS` characters. Every cache here is bounded in
bytes (:class:`ResultCache`).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..semantics import DEFAULT_SEMANTICS, SEMANTICS
from ..verifier import cap_block
from .execution_match import exact_key, gold_is_ordered, greedy_rows_match, results_match
from .parse import SQL_TAG, extract_sql, fences
from .sandbox import ExecutionResult, execute_sql, first_keyword, strip_trailing_semicolons

__all__ = [
    "SEMANTICS",
    "DEFAULT_SEMANTICS",
    "MAX_QUOTED_CHARS",
    "RESULT_CACHE",
    "ResultCache",
    "ReferenceResult",
    "check_semantics",
    "format_error",
    "official_statement_error",
    "perturbed_mismatch",
    "PERTURBED_MISMATCH",
    "reference_result",
    "relevance_error",
    "run_cached",
    "run_prediction",
    "selects_only_constants",
    "training_match",
    "training_mismatch",
    "typed_in_filter_values",
    "typed_in_output_values",
]

#: Longest block quoting model output (a SQLite error naming a token, a fence tag): longer text is cut with "…"
#: (:func:`mrtpo_sdk.verifier.cap_block`), well below a verifier's own ``max_block_chars``.
MAX_QUOTED_CHARS = 300
_PERMUTATIONS_TRIED = 24


def check_semantics(semantics: str) -> str:
    """``semantics`` if it is one of :data:`SEMANTICS`; raises ``ValueError`` naming the choices otherwise."""
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics is one of {', '.join(SEMANTICS)}, got {semantics!r}")
    return semantics


# ---- caches bounded in bytes ------------------------------------------------------------------------------------


class ResultCache:
    """LRU cache of :class:`ExecutionResult` s keyed by ``(db_path, query)``, bounded in bytes and entries.

    An entry's size is its rows' size (:attr:`ExecutionResult.nbytes`) plus the query text; a result larger than
    ``max_entry_bytes`` is not kept (it is run again when asked for again). Thread-safe.
    """

    def __init__(self, max_bytes: int = 64_000_000, max_entry_bytes: int = 4_000_000, max_entries: int = 4096):
        self.max_bytes, self.max_entry_bytes, self.max_entries = max_bytes, max_entry_bytes, max_entries
        self._data: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        """Bytes held now (by the estimate above)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: tuple):
        with self._lock:
            item = self._data.get(key)
            if item is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return item[0]

    def put(self, key: tuple, value: object, size: int) -> None:
        size += sum(len(k) for k in key if isinstance(k, str)) + 200
        if size > self.max_entry_bytes:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._data[key] = (value, size)
            self._bytes += size
            while self._data and (self._bytes > self.max_bytes or len(self._data) > self.max_entries):
                _, (_, s) = self._data.popitem(last=False)
                self._bytes -= s

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0


#: The cache :func:`run_cached` uses unless given another.
RESULT_CACHE = ResultCache()
_references = ResultCache(max_bytes=32_000_000, max_entry_bytes=4_000_000, max_entries=4096)


def run_cached(db_path: str, query: str, cache: ResultCache | None = None) -> ExecutionResult:
    """:func:`execute_sql` with its outcome cached (the databases are read-only) in a byte-bounded cache."""
    cache = RESULT_CACHE if cache is None else cache
    key = (db_path, query)
    hit = cache.get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    res = execute_sql(db_path, query)
    cache.put(key, res, res.nbytes + len(res.error))
    return res


# ---- format -----------------------------------------------------------------------------------------------------


def _sql_fence_layout(completion: str) -> tuple[bool, bool] | None:
    """For the single ```sql fence: (opening line holds only the tag, closing fence starts a line)."""
    n = len(completion)
    for fence in fences(completion):
        if fence.tag.lower() == SQL_TAG and fence.close >= 0:
            j = fence.tag_end
            while j < n and completion[j] in " \t\r":
                j += 1
            own_line = j < n and completion[j] == "\n"
            k = fence.close
            while k > 0 and completion[k - 1] in " \t":
                k -= 1
            closes_line = k > 0 and completion[k - 1] == "\n"
            return own_line, closes_line
    return None


def format_error(completion: object, semantics: str = DEFAULT_SEMANTICS) -> str:
    """The format flaw of ``completion`` as a noun phrase ("" when it has the format), under ``semantics``."""
    answer = extract_sql(completion)  # type: ignore[arg-type]
    if not answer.ok:
        return cap_block(answer.error, 200)
    if semantics == "official":
        return ""
    layout = _sql_fence_layout(completion)  # type: ignore[arg-type]
    if layout is not None and not layout[0]:
        return "a ```sql fence whose opening line holds more than the tag (the query starts on the next line)"
    if layout is not None and not layout[1]:
        return "a ```sql fence whose closing ``` does not start a line"
    first = first_keyword(answer.query or "")
    if first not in ("SELECT", "WITH", "VALUES"):
        return "a ```sql fence that holds no query (it does not start with SELECT, WITH or VALUES)"
    return ""


# ---- executes ---------------------------------------------------------------------------------------------------

_TRAIL_TRIVIA = re.compile(r"--[^\n]*|/\*(?:[^*]|\*(?!/))*\*/")


def official_statement_error(query: str) -> str:
    """The refusal Python's ``sqlite3`` gives a query ending in two or more ``;`` ("" otherwise).

    ``cursor.execute`` prepares the first statement (its own ``;`` included) and refuses any tail that is not
    whitespace or comments, so ``SELECT 1;`` runs and ``SELECT 1;;`` does not: the ``official`` semantics keeps
    that verdict; the sandbox and ``training`` run it.
    """
    head = strip_trailing_semicolons(query)
    if len(head) == len(query):
        return ""
    if _TRAIL_TRIVIA.sub("", query[len(head) :]).count(";") >= 2:
        return "only one SQL statement may run, and the text holds more than one"
    return ""


def run_prediction(db_path: str, query: str, semantics: str) -> ExecutionResult:
    """Run the predicted query under ``semantics`` (official: the ``;;`` refusal of Python's ``sqlite3``)."""
    if semantics == "official":
        refusal = official_statement_error(query)
        if refusal:
            return ExecutionResult.failure(refusal)
    return run_cached(db_path, query)


def relevance_error(pred: ExecutionResult, gold: ExecutionResult) -> str:
    """Why a query that runs is no attempt at the question ("" when it is): it reads none of the reference's
    tables (a constant such as ``SELECT 1``, or a query about other tables). A reference that reads no table makes
    every query relevant."""
    gold_tables = gold.tables
    if not gold_tables:
        return ""
    tables = _real_tables(pred)
    if tables & gold_tables:
        return ""
    if not tables:
        return "The query runs but reads no table of the database, so it cannot answer the question."
    return "The query runs but reads none of the tables the question is about."


@functools.lru_cache(maxsize=4096)
def _parse(query: str):
    """The sqlglot tree of ``query`` (trailing ``;`` stripped), or ``None`` when it does not parse. Shared: never
    mutate it (copy first)."""
    import sqlglot

    try:
        return sqlglot.parse_one(strip_trailing_semicolons(query), read="sqlite")
    except Exception:  # noqa: BLE001 - unparsable: no verdict
        return None


_WITH = re.compile(r"\bwith\b", re.IGNORECASE)


@functools.lru_cache(maxsize=4096)
def _cte_names(query: str) -> frozenset:
    """The names (ASCII-lower-cased) of the common table expressions ``query`` defines."""
    from sqlglot import exp

    tree = _parse(query)
    if tree is None:
        return frozenset()
    return frozenset(c.alias.lower() for c in tree.find_all(exp.CTE) if c.alias)


def _real_tables(pred: ExecutionResult) -> frozenset:
    """The database tables ``pred`` reads. SQLite's authorizer reports ``FROM x`` with no column (``count(*)``)
    under the name written, even when ``x`` is a CTE of the query that shadows a table
    (``WITH student(n) AS (VALUES (1), (1)) SELECT count(*) FROM student`` reads no table): such a read is left out
    when no column of that table is read."""
    tables = pred.tables
    if not tables or not pred.query or not _WITH.search(pred.query):
        return tables
    columns = {t for t, c in pred.reads if c}
    bare = {t for t in tables if t not in columns}
    if not bare:
        return tables
    return tables - (bare & _cte_names(pred.query))


def selects_only_constants(query: str, reference: str) -> bool:
    """The query's outermost SELECT list is literals only (``SELECT 32 FROM student LIMIT 1``, the answer typed in
    beside a table read) while the reference's is not: it names the answer instead of computing it. ``False`` when
    either does not parse (the executed result decides then)."""
    import sqlglot
    from sqlglot import exp

    def constant_only(sql: str) -> bool | None:
        try:
            tree = sqlglot.parse_one(sql, read="sqlite")
        except Exception:  # noqa: BLE001 - unparsable: no verdict here
            return None
        select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
        if select is None or not select.expressions:
            return None
        return all(
            not any(isinstance(n, (exp.Column, exp.AggFunc, exp.Star, exp.Subquery)) for n in e.walk())
            for e in select.expressions
        )

    mine, theirs = constant_only(query), constant_only(reference)
    return bool(mine) and theirs is False


#: Share of the reference's result rows that the answer's typed-in filter values must name to be refused.
TYPED_IN_SHARE = 0.5


_WRITTEN_LITERAL = re.compile(r"'((?:[^']|'')*)'|(?<![\w.])(-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w.])")


def _number(text: str) -> object:
    try:
        return _norm_value(float(text))
    except ValueError:
        return None


def _norm_value(value: object) -> object:
    """A literal or a result cell as compared by :func:`typed_in_filter_values` (text case-folded and stripped;
    numbers as floats; ``None`` for anything else)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, str):
        text = value.strip().casefold()
        return ("s", text) if text else None
    return None


def _literal_value(node) -> object:
    from sqlglot import exp

    negate = False
    while isinstance(node, (exp.Paren, exp.Neg)):
        negate ^= isinstance(node, exp.Neg)
        node = node.this
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string:
        return None if negate else _norm_value(node.this)
    try:
        f = float(node.this)
    except ValueError:
        return None
    return _norm_value(-f if negate else f)


def _filter_literals(tree) -> list:
    """Values of the literals compared for equality with a column: ``col = 'x'``, ``'x' = col``, ``col IN ('x', …)``,
    ``col LIKE 'x'`` / ``GLOB``, ``col IS 'x'``, anywhere in the query (WHERE, HAVING, ON, subqueries), and of the
    literals of every row list typed into the query: a ``VALUES`` clause anywhere, the SELECT list of a SELECT that
    reads no table inside it (``name IN (SELECT column1 FROM (VALUES ('History'), …))``, ``… UNION ALL SELECT 'x'``,
    a CTE of VALUES)."""
    from sqlglot import exp

    found = []
    for node in tree.walk():
        if isinstance(node, exp.Values) or (isinstance(node, exp.Select) and node.parent is not None
                                            and not node.args.get("from")):
            # a row list typed in (VALUES, or a SELECT of no table inside the query) used as a filter, join or set
            rows = node.expressions
            found.extend(_literal_value(n) for e in rows for n in e.walk()
                         if isinstance(n, exp.Literal) and not isinstance(n.parent, exp.Neg))
            found.extend(_literal_value(n) for e in rows for n in e.walk()
                         if isinstance(n, exp.Neg) and isinstance(n.this, exp.Literal))
        elif isinstance(node, exp.In):
            if node.this is not None and node.this.find(exp.Column) is not None:
                found.extend(_literal_value(e) for e in node.expressions)
        elif isinstance(node, (exp.EQ, exp.NullSafeEQ, exp.Like, exp.ILike, exp.Glob, exp.Is)):
            left, right = node.this, node.expression
            for side, other in ((left, right), (right, left)):
                if other is not None and other.find(exp.Column) is not None:
                    found.append(_literal_value(side))
    return [v for v in found if v is not None]


@functools.lru_cache(maxsize=4096)
def _reference_literals(reference: str) -> tuple[frozenset, int] | None:
    """(every literal value of the reference, how many distinct values it compares with a column), or ``None``."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(strip_trailing_semicolons(reference), read="sqlite")
    except Exception:  # noqa: BLE001 - unparsable reference: no verdict
        return None
    if tree is None:
        return None
    values = {_literal_value(n) for n in tree.find_all(exp.Literal)}
    values |= {_literal_value(n) for n in tree.find_all(exp.Neg)}
    values.discard(None)
    return frozenset(values), len(set(_filter_literals(tree)))


def typed_in_filter_values(query: str, reference: str, gold_rows: Sequence[tuple] | None) -> bool:
    """The answer filters on the expected result's own values, typed in as constants
    (``SELECT name FROM student WHERE name IN ('ann', 'bob')`` for "who has the highest GPA?"): it names the rows
    instead of computing which they are.

    True when the literals the answer compares for equality with a column (``=``, ``IN``, ``LIKE``, ``GLOB``,
    ``IS``), leaving out every literal that also occurs anywhere in the reference, are values of the reference's
    result (text compared case-folded, numbers as numbers) that name at least ``TYPED_IN_SHARE`` of its rows, and
    there are more of them than the reference itself compares with columns (the question's own values: an answer
    may name the reference's ``dept_id = 2`` as ``d.name = 'Physics'``). One typed-in number alone is not
    enough (a small count equals some filter constant by chance). ``False`` when either query does not parse.
    """
    if not gold_rows or not isinstance(query, str) or not isinstance(reference, str):
        return False
    gold_values = {_norm_value(v) for r in gold_rows for v in r}
    # cheap test first (no parse): does any string or number written in the query equal a value of the result?
    written = {_norm_value(m.group(1).replace("''", "'")) if m.group(1) is not None else _number(m.group(2))
               for m in _WRITTEN_LITERAL.finditer(query)}
    if not written & gold_values:
        return False
    ref = _reference_literals(reference)
    if ref is None:
        return False
    ref_values, ref_filters = ref
    tree = _parse(query)
    if tree is None:
        return False
    typed = {v for v in _filter_literals(tree) if v not in ref_values and v in gold_values}
    if len(typed) <= ref_filters:
        return False
    if len(typed) == 1 and not isinstance(next(iter(typed)), tuple):
        return False
    named = sum(1 for r in gold_rows if any(_norm_value(v) in typed for v in r))
    return named >= max(1, math.ceil(TYPED_IN_SHARE * len(gold_rows)))


#: A typed-in number of at most this magnitude copied into the output is not enough alone to refuse an answer: 0 and
#: 1 are the defaults and truth values that correct answers write (``coalesce(sum(x), 0)``, ``sum(CASE … THEN 1 …)``).
SMALL_NUMBER = 1.0

_SENTINEL_BASE = 987_000_000
_SENTINEL_STEP = 1_009


def _output_literals(tree) -> list:
    """Literal nodes of ``tree`` whose value can reach the output: in a SELECT list or a ``VALUES`` row, and not
    under a filter, a join condition, a grouping, an ordering, a ``LIMIT``/``OFFSET``, a comparison or a ``CASE``
    condition (``LIMIT 1``, ``WHERE active = 1``, ``CASE WHEN n = 32`` are never candidates)."""
    from sqlglot import exp

    outside = (exp.Where, exp.Having, exp.Limit, exp.Offset, exp.Order, exp.Group, exp.Qualify, exp.Predicate,
               exp.Window)
    found = []
    for lit in tree.find_all(exp.Literal):
        node, ok = lit, True
        while node.parent is not None:
            parent = node.parent
            if isinstance(parent, outside) or (isinstance(parent, exp.Join) and node.arg_key in ("on", "using")) or (
                    isinstance(parent, exp.If) and node.arg_key == "this"):
                ok = False
                break
            node = parent
        if ok:
            found.append(lit)
    return found


def typed_in_output_values(query: str, reference: str, gold_rows: Sequence[tuple] | None, db_path: str) -> bool:
    """The answer's output carries the expected result's own values typed in as literals, beside a table read that
    does not compute them (``SELECT 32 + 0*count(*) FROM student``, ``SELECT max(32, id*0) FROM student LIMIT 1``,
    ``SELECT CASE WHEN id IS NOT NULL THEN 32 END …``, ``… WHERE 0 UNION ALL VALUES ('History'), ('Philosophy')``,
    ``WITH x(n) AS (VALUES ('History'), …) SELECT n FROM x, department …``).

    Candidates are the answer's literals in output positions (:func:`_output_literals`) that equal a value of the
    reference's result and occur nowhere in the reference (the question's own values may be echoed:
    ``SELECT name, 'rome' … WHERE city = 'rome'``). Each candidate is replaced in the answer's text by a sentinel
    (a number or a string no database holds) and the answer is run again: a candidate whose sentinel shows up in the
    output is proven copied from the text into the result. True when the proven values name at least
    ``TYPED_IN_SHARE`` of the reference's rows and one of them is text or a number larger than
    :data:`SMALL_NUMBER` in magnitude. ``False`` when either query does not parse or the rerun fails.
    """
    if not gold_rows or not isinstance(query, str) or not isinstance(reference, str) or not db_path:
        return False
    gold_values = {_norm_value(v) for r in gold_rows for v in r}
    written = {_norm_value(m.group(1).replace("''", "'")) if m.group(1) is not None else _number(m.group(2))
               for m in _WRITTEN_LITERAL.finditer(query)}
    written |= {_number(v[1]) for v in written if isinstance(v, tuple)}
    written |= {-v for v in written if isinstance(v, float)}
    if not written & gold_values:
        return False
    ref = _reference_literals(reference)
    if ref is None:
        return False
    ref_values = ref[0]
    if not (written & gold_values) - ref_values:
        return False
    text = strip_trailing_semicolons(query)
    tree = _parse(query)
    if tree is None:
        return False
    from sqlglot import exp

    edits = []  # (start, end, replacement, value)
    for lit in _output_literals(tree):
        start, end = lit.meta.get("start"), lit.meta.get("end")
        if start is None or end is None:
            continue
        source = text[start : end + 1]
        value = _literal_value(lit)
        values = {value, -value} if isinstance(value, float) else {value}  # under any number of minus signs
        if lit.is_string:
            if not (source.startswith("'") and source.endswith("'")):
                continue
            values.add(_number(lit.this))
        elif source.lower() != lit.this.lower():
            continue
        values = (values & gold_values) - ref_values
        if not values:
            continue
        k = len(edits)
        sentinel = _SENTINEL_BASE + _SENTINEL_STEP * k
        numeric = not lit.is_string or _number(lit.this) is not None
        replacement = (f"'{sentinel}'" if lit.is_string else str(sentinel)) if numeric else f"'zqsent{k}q'"
        edits.append((start, end, replacement, values, sentinel if numeric else f"zqsent{k}q"))
    if not edits:
        return False
    edited = text
    for start, end, replacement, _, _ in sorted(edits, key=lambda e: -e[0]):
        edited = edited[:start] + replacement + edited[end + 1 :]
    rerun = run_cached(db_path, edited)
    if not rerun.ok or not rerun.rows:
        return False
    numbers = {e[4]: e[3] for e in edits if isinstance(e[4], int)}
    strings = {e[4]: e[3] for e in edits if isinstance(e[4], str)}
    proven: set = set()
    for row in rerun.rows:
        for cell in row:
            if isinstance(cell, (int, float)) and not isinstance(cell, bool) and math.isfinite(cell):
                for s, vals in numbers.items():
                    if math.isclose(abs(cell), s, rel_tol=1e-9):
                        proven |= vals
            elif isinstance(cell, str):
                folded = cell.casefold()
                for s, vals in itertools.chain(strings.items(), ((str(n), v) for n, v in numbers.items())):
                    if s in folded:
                        proven |= vals
    if not any(isinstance(v, tuple) or abs(v) > SMALL_NUMBER for v in proven):
        return False
    named = sum(1 for r in gold_rows if any(_norm_value(v) in proven for v in r))
    return named >= max(1, math.ceil(TYPED_IN_SHARE * len(gold_rows)))


# ---- reference with ties ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceResult:
    """The reference's result plus what training semantics needs to compare against it.

    Attributes:
        run: the reference's :class:`ExecutionResult`.
        ordered: the reference orders its output (:func:`gold_is_ordered`).
        segments: ``None`` when no tie touches the compared rows; else, in order, the groups of tied rows that
            the compared rows come from, each ``(rows of the group, rows the reference takes, cut)`` where ``cut``
            says that the ``LIMIT``/``OFFSET`` cuts the group.
        sql: the reference query (``""`` when not known).
        db_path: the database it runs on (``""`` when not known; :func:`typed_in_output_values` reruns the answer).
    """

    run: ExecutionResult
    ordered: bool
    segments: tuple | None = None
    sql: str = field(default="", compare=False)
    db_path: str = field(default="", compare=False)


def _int_literal(node) -> int | None:
    from sqlglot import exp

    if node is None:
        return None
    value = node.args.get("expression") if isinstance(node, (exp.Limit, exp.Offset)) else node
    if isinstance(value, exp.Literal) and not value.is_string and value.this.lstrip("-").isdigit():
        return int(value.this)
    return None


def _tie_segments(db_path: str, sql: str, gold: ExecutionResult, ordered: bool) -> tuple | None:
    """Groups of tied rows around the reference's cut (see :class:`ReferenceResult`), or ``None``."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except Exception:
        return None
    if tree is None:
        return None
    order, limit, offset = tree.args.get("order"), tree.args.get("limit"), tree.args.get("offset")
    if order is None and limit is None:
        return None
    n_limit, n_offset = _int_literal(limit), _int_literal(offset) if offset is not None else 0
    if (limit is not None and n_limit is None) or n_offset is None or (order is not None and not ordered):
        return None
    width = len(gold.columns or [])
    projections = tree.selects if isinstance(tree, exp.Select) else []
    key_columns: list[int] = []
    hidden: list = []
    for term in order.expressions if order is not None else []:
        e = term.this
        index = None
        if isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit():
            index = int(e.this) - 1
        elif isinstance(e, exp.Column) and not e.table:
            names = [p.alias_or_name.lower() for p in projections]
            if e.name.lower() in names:
                index = names.index(e.name.lower())
        if index is None:
            for k, p in enumerate(projections):
                if (p.this if isinstance(p, exp.Alias) else p) == e:
                    index = k
                    break
        if index is None:
            if not isinstance(tree, exp.Select) or tree.args.get("distinct"):
                return None
            hidden.append(e)
            index = width + len(hidden) - 1
        if not 0 <= index < width + len(hidden):
            return None
        key_columns.append(index)
    keyed = tree.copy()
    keyed.set("limit", None)
    keyed.set("offset", None)
    if hidden:
        keyed = keyed.select(*[h.copy() for h in hidden], append=True)
    try:
        keyed_sql = keyed.sql(dialect="sqlite")
    except Exception:
        return None
    full = run_cached(db_path, keyed_sql, _references)
    if not full.ok or not full.rows:
        return None
    rows = full.rows
    if any(len(r) != width + len(hidden) for r in rows):
        return None
    groups: list[tuple[tuple, list[tuple]]] = []
    for r in rows:
        key = tuple(exact_key(r[i]) for i in key_columns)
        if groups and groups[-1][0] == key:
            groups[-1][1].append(r[:width])
        else:
            groups.append((key, [r[:width]]))
    start = n_offset
    stop = len(rows) if n_limit is None or n_limit < 0 else start + n_limit
    segments = []
    pos = 0
    for _, members in groups:
        lo, hi = pos, pos + len(members)
        pos = hi
        take = max(0, min(hi, stop) - max(lo, start))
        if take:
            segments.append((tuple(members), take, take < len(members)))
    if not any(len(m) > 1 for m, _, _ in segments):
        return None
    segments_t = tuple(segments)
    # use the rewrite only when the reference's own rows are one of the tie resolutions it describes
    if not _segments_match(gold.rows or [], segments_t, ordered, 1e-6, allow_full=False):
        return None
    return segments_t


def reference_result(db_path: str, sql: str, ties: bool = True) -> ReferenceResult:
    """The reference's result, ordering and (with ``ties``) tie groups, cached in a byte-bounded cache."""
    key = ("reference", db_path, sql, "ties" if ties else "")
    hit = _references.get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    gold = run_cached(db_path, sql)
    ordered = gold_is_ordered(sql)
    segments = _tie_segments(db_path, sql, gold, ordered) if gold.ok and ties else None
    ref = ReferenceResult(gold, ordered, segments, sql, db_path)
    size = gold.nbytes + sum(sum(len(repr(r)) for r in m) for m, _, _ in segments or ())
    _references.put(key, ref, size)
    return ref


# ---- matching ---------------------------------------------------------------------------------------------------


def _sub_bag(part: Sequence[tuple], pool: Sequence[tuple], float_tol: float) -> bool:
    """Every row of ``part`` matched to a distinct row of ``pool`` (exact first, then greedy with tolerance)."""
    if len(part) > len(pool):
        return False
    want = Counter(tuple(map(exact_key, r)) for r in part)
    have = Counter(tuple(map(exact_key, r)) for r in pool)
    if not want - have:
        return True
    if len(pool) > 2_000:
        return False
    return greedy_rows_match(part, pool, float_tol)


def _segments_match(pred: Sequence[tuple], segments: tuple, ordered: bool, float_tol: float, allow_full: bool = True) -> bool:
    cut_indices = [i for i, (_, _, cut) in enumerate(segments) if cut]
    choices = [(False, True) if allow_full else (False,)] * len(cut_indices)
    for combo in itertools.product(*choices):
        full = {cut_indices[k] for k, v in enumerate(combo) if v}
        takes = [len(m) if i in full else t for i, (m, t, _) in enumerate(segments)]
        if sum(takes) != len(pred):
            continue
        if not ordered:
            pool = [r for m, _, _ in segments for r in m]
            if len(segments) == 1 and _sub_bag(pred, pool, float_tol):
                return True
            if len(segments) != 1:
                whole = [r for i, (m, t, _) in enumerate(segments) for r in (m if takes[i] == len(m) else ())]
                if all(takes[i] == len(m) for i, (m, _, _) in enumerate(segments)) and results_match(pred, whole, False, float_tol):
                    return True
            continue
        pos, ok = 0, True
        for i, (members, _, _) in enumerate(segments):
            part = pred[pos : pos + takes[i]]
            pos += takes[i]
            if not _sub_bag(part, members, float_tol):
                ok = False
                break
        if ok:
            return True
    return False


def _coarse(value: object) -> object:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        f = float(value)
        return ("n", float(f"{f:.4g}")) if math.isfinite(f) else ("n", str(f))
    if isinstance(value, bool):
        return ("n", float(value))
    return exact_key(value)


def _permutations(pred: Sequence[tuple], gold_pool: Sequence[tuple], width: int, exact_bag: bool):
    """Column orders of ``pred`` (tuples of pred column indices per gold column) worth testing, identity excluded."""
    pred_cols = [Counter(_coarse(r[i]) for r in pred) for i in range(width)]
    gold_cols = [Counter(_coarse(r[j]) for r in gold_pool) for j in range(width)]
    ok = [
        [(pred_cols[i] == gold_cols[j]) if exact_bag else not (pred_cols[i] - gold_cols[j]) for i in range(width)]
        for j in range(width)
    ]
    found = 0
    chosen: list[int] = []
    used = [False] * width

    def walk(j: int):
        nonlocal found
        if found >= _PERMUTATIONS_TRIED:
            return
        if j == width:
            perm = tuple(chosen)
            if perm != tuple(range(width)):
                found += 1
                yield perm
            return
        for i in range(width):
            if not used[i] and ok[j][i]:
                used[i] = True
                chosen.append(i)
                yield from walk(j + 1)
                chosen.pop()
                used[i] = False

    yield from walk(0)


def _rows_match(pred: ExecutionResult, ref: ReferenceResult, float_tol: float) -> bool:
    """``pred``'s rows against the reference's: ties, columns in any order, the empty-reference rule."""
    gold = ref.run
    if not pred.ok or not gold.ok or pred.rows is None or gold.rows is None:
        return False
    pred_rows = [tuple(r) for r in pred.rows]
    width = len(gold.columns or [])
    if len(pred.columns or []) != width:
        return False
    if not gold.rows:
        return not pred_rows and gold.reads <= pred.reads | {(t, "") for t in _real_tables(pred)}

    def match(rows: list[tuple]) -> bool:
        if ref.segments is not None:
            return _segments_match(rows, ref.segments, ref.ordered, float_tol)
        return results_match(rows, gold.rows, ordered=ref.ordered, float_tol=float_tol)

    if match(pred_rows):
        return True
    if width < 2 or not pred_rows:
        return False
    pool = [r for m, _, _ in ref.segments for r in m] if ref.segments is not None else gold.rows
    return any(match([tuple(r[i] for i in perm) for r in pred_rows])
               for perm in _permutations(pred_rows, pool, width, exact_bag=ref.segments is None))


#: Block of an answer that matches on the database but not on a perturbed copy of it.
PERTURBED_MISMATCH = ("The query returns the right rows here but not on a changed copy of the database: "
                      "it does not compute the answer from the data.")


def perturbed_mismatch(pred: ExecutionResult, ref: ReferenceResult, float_tol: float = 1e-6) -> bool:
    """Test-suite execution accuracy (Zhong, Yu & Klein 2020): True when ``pred``'s query, run on a perturbed copy
    of the database (:func:`mrtpo_sdk.sql.perturb.perturbed_copies`), does not return what the reference returns
    there. A copy on which the reference fails or returns no rows is skipped; so is every copy when the query texts
    or the database are not known."""
    if not pred.query or not ref.sql or not ref.db_path:
        return False
    from .perturb import perturbed_copies

    for copy in perturbed_copies(ref.db_path):
        gold = reference_result(copy, ref.sql)
        if not gold.run.ok or not gold.run.rows:
            continue
        if not _rows_match(run_cached(copy, pred.query), gold, float_tol):
            return True
    return False


def training_mismatch(pred: ExecutionResult, ref: ReferenceResult, float_tol: float = 1e-6) -> str:
    """Why ``pred`` does not match under ``training`` semantics (module docstring); ``""`` when it matches.
    ``pred`` must have run. The reason is a block: the relevance error, the typed-in rules, or
    :data:`PERTURBED_MISMATCH`; a plain wrong result gives "The query does not return the reference result."."""
    gold = ref.run
    if not pred.ok or not gold.ok or pred.rows is None or gold.rows is None:
        return "The query does not return the reference result."
    why = relevance_error(pred, gold)
    if why:
        return why
    if not _rows_match(pred, ref, float_tol):
        return "The query does not return the reference result."
    if not gold.rows:
        return ""
    # the result's own values typed in as the filter (known only when both query texts are)
    if pred.query and ref.sql and typed_in_filter_values(pred.query, ref.sql, gold.rows):
        return "The query filters on the expected result's own values typed in as constants instead of computing them."
    # ... or copied from the answer's text into its output (a literal in the SELECT list, VALUES, a CTE, a branch)
    if pred.query and ref.sql and typed_in_output_values(pred.query, ref.sql, gold.rows, ref.db_path):
        return "The query copies the expected result's values from its own text instead of computing them."
    # ... or returns the right rows only on this database (test-suite accuracy: the perturbed copies)
    if perturbed_mismatch(pred, ref, float_tol):
        return PERTURBED_MISMATCH
    return ""


def training_match(pred: ExecutionResult, ref: ReferenceResult, float_tol: float = 1e-6) -> bool:
    """Execution match under ``training`` semantics (module docstring); ``pred`` must have run."""
    return not training_mismatch(pred, ref, float_tol)
