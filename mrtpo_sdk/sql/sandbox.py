"""Run untrusted, model-generated SQL against a SQLite database file, safely.

:func:`execute_sql` is the one entry point. It never raises for anything in the query text (NUL bytes, lone
surrogates, megabytes of garbage, non-strings) and returns an :class:`ExecutionResult` instead.

Guarantees, each enforced by SQLite itself rather than by Python wrappers:

* **Read-only.** The file is opened through the URI ``file:...?mode=ro`` (SQLite refuses every write at the
  file level), ``PRAGMA query_only=ON`` is set, ``ATTACH`` is impossible (``SQLITE_LIMIT_ATTACHED`` is 0) and an
  authorizer (:meth:`sqlite3.Connection.set_authorizer`) allows only ``SQLITE_SELECT``, ``SQLITE_READ``,
  ``SQLITE_RECURSIVE`` and ``SQLITE_FUNCTION`` for functions that are not on a deny list (``load_extension``,
  ``readfile``, ``writefile``, ``edit``, ``fts3_tokenizer``, ...). Writes, DDL, ``ATTACH``/``DETACH``,
  ``PRAGMA``, ``VACUUM``, transactions and savepoints are refused. Extension loading is switched off.
* **One query.** The text must hold exactly one statement and it must start with ``SELECT``, ``WITH`` or
  ``VALUES`` (after comments and parentheses); a trailing ``;`` and trailing comments are fine.
* **Bounded time, at every stage.** A progress handler (:meth:`sqlite3.Connection.set_progress_handler`)
  interrupts the statement inside SQLite's virtual machine once a monotonic deadline has passed (default 1.0 s), so
  an unbounded ``WITH RECURSIVE`` or a huge cross join stops on time. What the handler cannot reach (SQLite
  expanding common table expressions while it *prepares* a statement; one long function call such as
  ``instr``/``replace`` on megabyte strings or ``printf('%.*c', 2147483647, 'x')``) is bounded by running every query
  in a worker process (:class:`_Worker`) that the caller kills ``KILL_GRACE_S`` after the deadline; a query whose
  common table expressions would expand to more than ``MAX_CTE_COPIES`` copies is refused before SQLite sees it.
* **Bounded memory.** In the worker, SQLite's heap is capped (``PRAGMA hard_heap_limit``, ``HEAP_LIMIT_BYTES``) and
  the process's address space too (``RLIMIT_AS``, ``WORKER_ADDRESS_SPACE_BYTES``, where the OS has it); the rows of a
  result may hold at most ``max_result_bytes`` (default 32 MB, counted while fetching, row by row).
* **Bounded size.** At most ``max_rows`` rows are fetched (default 10 000; more is an error), the query text is
  at most ``max_query_chars`` characters, and SQLite's own limits (:data:`SQLITE_LIMITS`) bound every string or
  blob value (1 MB), the expression depth, the terms of a compound SELECT, the program size (``VDBE_OP``), the
  columns and the LIKE pattern length. Temporary storage stays in memory (``PRAGMA temp_store=MEMORY``), so no temp
  file is written next to the database.
* **No files.** Nothing is created or modified: not the database, not a journal, not an ``ATTACH`` target.
* **Says which limit.** A query stopped by a limit fails (``ok=False``) with an ``error`` naming the limit and
  ``limit`` set to one of ``time``, ``memory``, ``rows``, ``result_bytes``, ``complexity``, ``length`` (see
  :data:`LIMIT_KINDS`): memory is never reported as time.

Connections are cached per process and per thread, keyed by the database path and its inode, size and
modification time (a rebuilt file gets a fresh connection). Each thread of each process has its own worker; a
forked child never reuses its parent's worker or connections. Several processes may read the same file
concurrently.

This module imports only the standard library: the worker runs it as a script (``python -I sandbox.py``), so a
worker starts in tens of milliseconds and never imports the caller's packages.
"""

from __future__ import annotations

import math
import os
import pickle
import re
import sqlite3
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = [
    "ExecutionResult",
    "execute_sql",
    "first_keyword",
    "close_cached_connections",
    "close_worker",
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_MAX_ROWS",
    "DEFAULT_MAX_QUERY_CHARS",
    "DEFAULT_MAX_RESULT_BYTES",
    "DENIED_FUNCTIONS",
    "HEAP_LIMIT_BYTES",
    "KILL_GRACE_S",
    "LIMIT_KINDS",
    "MAX_CTE_COPIES",
    "SQLITE_LIMITS",
    "WORKER_ADDRESS_SPACE_BYTES",
]

DEFAULT_TIMEOUT_S = 1.0
DEFAULT_MAX_ROWS = 10_000
DEFAULT_MAX_QUERY_CHARS = 100_000
DEFAULT_MAX_RESULT_BYTES = 32_000_000
MAX_VALUE_BYTES = 1_000_000
#: SQLite's heap cap inside the worker process (``PRAGMA hard_heap_limit``): a query needing more fails as ``memory``.
HEAP_LIMIT_BYTES = 200_000_000
#: The worker's address-space cap (``RLIMIT_AS``, where the OS enforces it): the last line of defence.
WORKER_ADDRESS_SPACE_BYTES = 1_500_000_000
#: Seconds past ``timeout_s`` after which the caller kills a worker that has not answered (one uninterruptible call).
KILL_GRACE_S = 0.5
#: Most copies of common table expressions a query may expand to (SQLite copies a CTE at every reference while it
#: prepares the statement, before any time limit runs: 21 chained two-reference CTEs are 2**21 copies).
MAX_CTE_COPIES = 1_000
_PROGRESS_STEPS = 1_000  # virtual-machine instructions between two deadline checks
_CACHE_SIZE = 16

#: SQLite's own limits on every sandbox connection (``sqlite3.Connection.setlimit``; names without ``SQLITE_LIMIT_``).
SQLITE_LIMITS = {
    "LENGTH": MAX_VALUE_BYTES,  # bytes of one string/blob value (or row record)
    "SQL_LENGTH": 1_000_000,  # bytes of the query text
    "COLUMN": 1_000,  # columns of a result, GROUP BY / ORDER BY terms
    "EXPR_DEPTH": 1_000,  # depth of an expression tree
    "COMPOUND_SELECT": 500,  # terms of a UNION/INTERSECT/EXCEPT chain
    "VDBE_OP": 250_000,  # instructions of one prepared program
    "FUNCTION_ARG": 100,  # arguments of one function call
    "LIKE_PATTERN_LENGTH": 10_000,  # bytes of a LIKE/GLOB pattern
    "VARIABLE_NUMBER": 100,  # ?NNN parameters (none are bound)
    "TRIGGER_DEPTH": 1,
    "ATTACHED": 0,  # ATTACH is impossible
    "WORKER_THREADS": 0,  # no helper threads
}

#: Values of :attr:`ExecutionResult.limit`: which limit stopped a query ("" when none did).
LIMIT_KINDS = ("time", "memory", "rows", "result_bytes", "complexity", "length")

#: Functions the authorizer refuses even inside a SELECT (file access, extension loading, tokenizer hijacking).
DENIED_FUNCTIONS = frozenset(
    {
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        "zipfile",
        "sqlar_compress",
        "sqlar_uncompress",
        "lsmode",
        "fsdir",
        "shell_add_schema",
        "sqlite_dbpage",
    }
)

#: Statements refused before SQLite sees them (the read-only open, ``query_only`` and the authorizer refuse them
#: too). Any other first word goes to SQLite, so a typo such as ``SELEC`` gets SQLite's own syntax error.
_REFUSED_FIRST_KEYWORDS = frozenset(
    {
        "INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT", "DROP", "CREATE", "ALTER", "ATTACH", "DETACH",
        "PRAGMA", "VACUUM", "REINDEX", "ANALYZE", "BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE",
    }
)

_SQLITE_READ = getattr(sqlite3, "SQLITE_READ", 20)
_SQLITE_SELECT = getattr(sqlite3, "SQLITE_SELECT", 21)
_SQLITE_FUNCTION = getattr(sqlite3, "SQLITE_FUNCTION", 31)
_SQLITE_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
_SQLITE_OK = sqlite3.SQLITE_OK
_SQLITE_DENY = sqlite3.SQLITE_DENY

_in_worker = False  # True in the worker process: the heap limit is process-wide, so only the worker sets it


@dataclass(frozen=True)
class ExecutionResult:
    """Outcome of one :func:`execute_sql` call.

    Attributes:
        ok: True when the query ran to completion within every limit.
        rows: the result rows as tuples (``None`` when ``ok`` is False).
        columns: the result column names (``None`` when ``ok`` is False).
        error: ``""`` when ``ok``; otherwise the error as SQLite states it (``no such column: nme``,
            ``not authorized``) or a plain sentence for the sandbox's own refusals (``interrupted: query
            exceeded the 1.0 s time limit``, ``result has more than 10000 rows``).
        limit: which limit stopped the query, one of :data:`LIMIT_KINDS`, or ``""``.
        reads: the ``(table, column)`` pairs of database tables the query reads, as SQLite's authorizer reported
            them while preparing it, ASCII-lower-cased (SQLite's identifiers are case-insensitive: ``FROM STUDENT``
            reads ``student``) (``column`` is ``""`` for a read of no particular column, as in ``count(*)``);
            tables named ``sqlite_*`` are left out. Empty for a constant query (``SELECT 1``).
        nbytes: approximate size of ``rows`` in bytes (string and blob lengths plus 16 per cell).
        query: the query text as given to :func:`execute_sql` (``""`` for a result built otherwise); scoring under
            ``training`` semantics reads it (:func:`mrtpo_sdk.sql.score.typed_in_filter_values`).
    """

    ok: bool
    rows: list[tuple] | None
    columns: list[str] | None
    error: str = ""
    limit: str = field(default="", compare=False)
    reads: frozenset = field(default=frozenset(), compare=False)
    nbytes: int = field(default=0, compare=False)
    query: str = field(default="", compare=False, repr=False)

    @classmethod
    def failure(cls, error: str, limit: str = "", reads: frozenset = frozenset()) -> "ExecutionResult":
        """Build a failed result carrying ``error``."""
        return cls(ok=False, rows=None, columns=None, error=error, limit=limit, reads=reads)

    @property
    def tables(self) -> frozenset:
        """The database tables the query reads (from :attr:`reads`)."""
        return frozenset(t for t, _ in self.reads)


class _Deadline:
    """Progress handler and authorizer of one connection.

    As progress handler it returns non-zero (interrupt) once ``time.monotonic()`` passes ``at``; as authorizer
    (:meth:`authorize`) it allows reads only (see the module docstring) and records the tables and columns read.
    """

    __slots__ = ("at", "hit", "reads")

    def __init__(self) -> None:
        self.at = math.inf
        self.hit = False
        self.reads: set = set()

    def __call__(self) -> int:
        if time.monotonic() > self.at:
            self.hit = True
            return 1
        return 0

    def authorize(self, action: int, arg1, arg2, db_name, trigger) -> int:
        if action == _SQLITE_READ:
            if arg1 and not str(arg1).lower().startswith("sqlite_"):
                # SQLite compares identifiers ASCII-case-insensitively, and reports a read of no column (count(*))
                # under the name as written ("STUDENT"), a column read under the schema's spelling: fold both
                self.reads.add((_fold(str(arg1)), _fold(str(arg2 or ""))))
            return _SQLITE_OK
        if action in (_SQLITE_SELECT, _SQLITE_RECURSIVE):
            return _SQLITE_OK
        if action == _SQLITE_FUNCTION:
            name = (arg2 or "").lower()
            return _SQLITE_DENY if name in DENIED_FUNCTIONS else _SQLITE_OK
        return _SQLITE_DENY


def _fold(name: str) -> str:
    """``name`` with ASCII letters lower-cased, as SQLite folds identifiers (``"Ä"`` stays ``"Ä"``)."""
    return name.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass") if not name.islower() else name


class _Cached:
    __slots__ = ("conn", "deadline", "signature")

    def __init__(self, conn: sqlite3.Connection, deadline: _Deadline, signature: tuple) -> None:
        self.conn = conn
        self.deadline = deadline
        self.signature = signature


class _Cache(threading.local):
    def __init__(self) -> None:
        self.pid = os.getpid()
        self.entries: OrderedDict[str, _Cached] = OrderedDict()
        self.worker: _Worker | None = None


_cache = _Cache()


def _set_limit(conn: sqlite3.Connection, name: str, value: int) -> None:
    limit = getattr(sqlite3, name, None)
    setter = getattr(conn, "setlimit", None)  # Python >= 3.11
    if limit is not None and setter is not None:
        setter(limit, value)


def _open(path: str) -> tuple[sqlite3.Connection, _Deadline]:
    """Open ``path`` read-only with every protection in place (raises ``sqlite3.Error`` on failure)."""
    uri = Path(path).as_uri() + "?mode=ro"
    # cached_statements=0: every query is prepared afresh, so the authorizer sees (and records) every read.
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=True, cached_statements=0)
    try:
        if hasattr(conn, "enable_load_extension"):
            conn.enable_load_extension(False)
        conn.execute("PRAGMA query_only=ON")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("PRAGMA trusted_schema=OFF")
        if _in_worker:  # process-wide: never set in the caller's own process
            conn.execute(f"PRAGMA hard_heap_limit={HEAP_LIMIT_BYTES}")
        for name, value in SQLITE_LIMITS.items():
            _set_limit(conn, "SQLITE_LIMIT_" + name, value)
        # Fail fast on schema problems (e.g. not a database) while the authorizer is not yet installed.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        deadline = _Deadline()
        conn.set_authorizer(deadline.authorize)
        conn.set_progress_handler(deadline, _PROGRESS_STEPS)
    except BaseException:
        conn.close()
        raise
    return conn, deadline


def _connection(path: str) -> _Cached:
    """Cached read-only connection for ``path`` (per process, per thread)."""
    if _cache.pid != os.getpid():  # forked child: never touch the parent's connections
        _cache.pid = os.getpid()
        _cache.entries = OrderedDict()
        _cache.worker = None
    st = os.stat(path)
    signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    entry = _cache.entries.get(path)
    if entry is not None and entry.signature == signature:
        _cache.entries.move_to_end(path)
        return entry
    if entry is not None:
        _close_quietly(entry.conn)
        del _cache.entries[path]
    conn, deadline = _open(path)
    entry = _Cached(conn, deadline, signature)
    _cache.entries[path] = entry
    while len(_cache.entries) > _CACHE_SIZE:
        _, old = _cache.entries.popitem(last=False)
        _close_quietly(old.conn)
    return entry


def _close_quietly(conn: sqlite3.Connection) -> None:
    try:
        conn.close()
    except Exception:  # pragma: no cover - closing is best effort
        pass


def close_cached_connections() -> None:
    """Close this thread's cached connections and its worker process (e.g. before deleting a database file on
    Windows)."""
    for entry in _cache.entries.values():
        _close_quietly(entry.conn)
    _cache.entries.clear()
    close_worker()


def _skip_trivia(text: str, i: int) -> int:
    """Index of the first character at or after ``i`` that is not whitespace or a comment."""
    n = len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            return i
    return n


def first_keyword(text: str) -> str:
    """The first word of the statement, skipping comments and opening parentheses ("" if none)."""
    i = _skip_trivia(text, 0)
    while i < len(text) and text[i] == "(":
        i = _skip_trivia(text, i + 1)
    j = i
    while j < len(text) and (text[j].isalnum() or text[j] == "_"):
        j += 1
    return text[i:j].upper() if j > i else text[i : i + 1]


_TRAILING = re.compile(r"(?:\s+|--[^\n]*\Z|--[^\n]*\n|/\*(?:[^*]|\*(?!/))*\*/|;)+\Z")


def strip_trailing_semicolons(text: str) -> str:
    """``text`` without the run of ``;``, whitespace and comments at its end (``SELECT 1;; -- x`` -> ``SELECT 1``).

    Used before running a query so that any number of trailing ``;`` is one statement. A ``--`` comment that is
    the last thing in the text is trailing; text inside strings is never touched because only the end is stripped
    and an unclosed string cannot end in ``;`` outside it.
    """
    if ";" not in text:
        return text
    # scan backwards cheaply: only the tail can match, so bound the regex to the last 4 KB of trailing trivia
    m = _TRAILING.search(text, max(0, len(text) - 4096))
    if not m or ";" not in m.group(0):
        return text
    head = text[: m.start()]
    # a "--" comment found inside the tail must not have eaten a real statement ending: keep the text if the
    # stripped head ends inside a string or quoted identifier
    if head.count("'") % 2 or head.count('"') % 2:
        return text
    return head


def _precheck(query: object, max_query_chars: int) -> str:
    """Return a refusal message for text that must not reach SQLite, or ``""``."""
    if not isinstance(query, str):
        return f"query must be a string, got {type(query).__name__}"
    if len(query) > max_query_chars:
        return f"query is too long: {len(query)} characters (limit {max_query_chars})"
    if "\x00" in query:
        return "query contains a NUL character"
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        return "query is not valid UTF-8 text (it contains an unpaired surrogate)"
    first = first_keyword(query)
    if first == "" or first == ";":
        return "empty query: the text holds no SQL statement"
    if first in _REFUSED_FIRST_KEYWORDS:
        return f"not authorized: only a read-only query (SELECT, WITH or VALUES) may run, not {first}"
    return ""


# ---- common table expression expansion (SQLite copies a CTE at each reference while preparing) ----------------

_TOKEN = re.compile(
    r"""\s+|--[^\n]*|/\*.*?(?:\*/|\Z)|'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`[^`]*`?|\[[^\]]*\]?"""
    r"""|([A-Za-z_\u0080-\uffff][\w$\u0080-\uffff]*)|([(),])|.""",
    re.S,
)


def _tokens(text: str) -> list[str]:
    """Identifiers (lower-case; quoted ones unquoted) and the punctuation ``( ) ,``; everything else as ``.``."""
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        word, punct = m.group(1), m.group(2)
        if word is not None:
            out.append(word.lower())
        elif punct is not None:
            out.append(punct)
        else:
            tok = m.group(0)
            if tok[:1] in '"`[' and len(tok) >= 2:
                out.append(tok[1:-1].lower())
            elif not tok.isspace() and not tok.startswith(("--", "/*")):
                out.append(".")
    return out


def cte_copies(text: str) -> int:
    """An upper bound on the copies of common table expressions SQLite makes while preparing ``text``.

    Each ``name AS (body)`` of a ``WITH`` costs one copy per reference, and a copy brings its own references: with
    ``E(c) = 1 + sum of E over the names referenced in c's body``, the query costs the sum of ``E`` over the
    references outside every body. Self-references (``WITH RECURSIVE``) do not copy. Names are matched textually
    (a column named like a CTE counts too), so the bound is never below SQLite's real count. 0 when there is no
    ``WITH``.
    """
    lowered = text.lower()
    if "with" not in lowered:
        return 0
    toks = _tokens(text)
    n = len(toks)
    match = [-1] * n
    stack: list[int] = []
    for i, t in enumerate(toks):
        if t == "(":
            stack.append(i)
        elif t == ")" and stack:
            j = stack.pop()
            match[j], match[i] = i, j
    defs: list[tuple[str, int, int, int]] = []  # name, name position, body start, body end
    name_positions: set[int] = set()
    for i, t in enumerate(toks):
        if t != "with":
            continue
        k = i + 1
        if k < n and toks[k] == "recursive":
            k += 1
        while k < n:
            name, name_pos = toks[k], k
            k += 1
            if k < n and toks[k] == "(" and match[k] > 0:  # column list
                k = match[k] + 1
            if k >= n or toks[k] != "as":
                break
            k += 1
            while k < n and toks[k] in ("not", "materialized"):
                k += 1
            if k >= n or toks[k] != "(" or match[k] < 0:
                break
            defs.append((name, name_pos, k + 1, match[k]))
            name_positions.add(name_pos)
            k = match[k] + 1
            if k < n and toks[k] == ",":
                k += 1
                continue
            break
    if not defs:
        return 0
    names = {d[0] for d in defs}
    cap = MAX_CTE_COPIES + 1
    memo: dict[int, int] = {}

    def refs(start: int, end: int, own: str | None) -> list[str]:
        return [toks[p] for p in range(start, end) if toks[p] in names and p not in name_positions and toks[p] != own]

    by_name: dict[str, list[int]] = {}
    for idx, d in enumerate(defs):
        by_name.setdefault(d[0], []).append(idx)
    body_refs = [refs(d[2], d[3], d[0]) for d in defs]

    def cost(idx: int, visiting: frozenset) -> int:
        if idx in memo:
            return memo[idx]
        if idx in visiting:
            return 0
        total = 1
        for r in body_refs[idx]:
            total += max(cost(j, visiting | {idx}) for j in by_name[r])
            if total >= cap:
                break
        memo[idx] = total = min(total, cap)
        return total

    inside = [False] * n
    for d in defs:
        for p in range(d[2], d[3]):
            inside[p] = True
    total = 0
    for p, t in enumerate(toks):
        if t in names and p not in name_positions and not inside[p]:
            total += max(cost(j, frozenset()) for j in by_name[t])
            if total >= cap:
                return cap
    # a reference inside a body that is never referenced from outside still gets prepared once per body copy
    return min(cap, max(total, max(cost(j, frozenset()) for j in range(len(defs))) - 1))


# ---- running one query (in the worker, or in this process) --------------------------------------------------


def _row_bytes(row: tuple) -> int:
    n = 16 * len(row)
    for v in row:
        if v.__class__ is str or v.__class__ is bytes:
            n += len(v)
    return n


class _ResultTooBig(Exception):
    pass


def _out_of_memory_message() -> str:
    mb = HEAP_LIMIT_BYTES // 1_000_000
    return (
        f"out of memory: the query needs more than the sandbox's {mb} MB of SQLite memory (PRAGMA hard_heap_limit) "
        f"or a program of more than {SQLITE_LIMITS['VDBE_OP']} instructions (SQLITE_LIMIT_VDBE_OP)"
    )


_TOOBIG = "string or blob too big"


def _run(path: str, query: str, timeout_s: float, max_rows: int, max_result_bytes: int) -> ExecutionResult:
    """Run an already pre-checked query on a cached connection of this process (worker or caller)."""
    copies = cte_copies(query)
    if copies > MAX_CTE_COPIES:
        return ExecutionResult.failure(
            f"query is too complex: its common table expressions expand to more than {MAX_CTE_COPIES} copies "
            f"(each reference copies the CTE while SQLite prepares the query)",
            limit="complexity",
        )
    entry = _connection(path)
    conn, deadline = entry.conn, entry.deadline
    deadline.hit = False
    deadline.reads = set()
    deadline.at = time.monotonic() + timeout_s
    cursor = None
    used = [0]

    def count_row(cur, row):
        used[0] += _row_bytes(row)
        if used[0] > max_result_bytes:
            raise _ResultTooBig
        return row

    try:
        cursor = conn.cursor()
        cursor.row_factory = count_row
        cursor.execute(strip_trailing_semicolons(query))
        reads = frozenset(deadline.reads)
        if cursor.description is None:
            return ExecutionResult.failure("empty query: the text holds no SQL statement")
        columns = [d[0] for d in cursor.description]
        rows: list[tuple] = []
        while True:
            chunk = cursor.fetchmany(min(1_000, max_rows + 1))
            if not chunk:
                break
            rows.extend(chunk)
            if len(rows) > max_rows:
                return ExecutionResult.failure(f"result has more than {max_rows} rows", limit="rows", reads=reads)
        return ExecutionResult(ok=True, rows=rows, columns=columns, error="", reads=reads, nbytes=used[0])
    except _ResultTooBig:
        return ExecutionResult.failure(
            f"result is larger than {max_result_bytes // 1_000_000} MB", limit="result_bytes",
            reads=frozenset(deadline.reads),
        )
    except sqlite3.ProgrammingError as exc:
        msg = str(exc)
        if "one statement at a time" in msg:
            return ExecutionResult.failure("only one SQL statement may run, and the text holds more than one")
        return ExecutionResult.failure(msg or type(exc).__name__)
    except sqlite3.Error as exc:
        if deadline.hit:
            return ExecutionResult.failure(
                f"interrupted: query exceeded the {float(timeout_s)} s time limit", limit="time",
                reads=frozenset(deadline.reads),
            )
        msg = str(exc) or type(exc).__name__
        if msg == _TOOBIG:
            return ExecutionResult.failure(
                f"{_TOOBIG}: a value is longer than {MAX_VALUE_BYTES} bytes (SQLITE_LIMIT_LENGTH)", limit="length",
                reads=frozenset(deadline.reads),
            )
        if "too many terms in compound" in msg or "Expression tree is too large" in msg or "too many columns" in msg \
                or "parser stack overflow" in msg or "pattern too complex" in msg or "too many arguments" in msg:
            return ExecutionResult.failure(msg, limit="complexity", reads=frozenset(deadline.reads))
        if "out of memory" in msg:
            return ExecutionResult.failure(_out_of_memory_message(), limit="memory", reads=frozenset(deadline.reads))
        return ExecutionResult.failure(msg, reads=frozenset(deadline.reads))
    except MemoryError:
        return ExecutionResult.failure(_out_of_memory_message(), limit="memory", reads=frozenset(deadline.reads))
    except Exception as exc:  # never raise on model output (e.g. OverflowError for huge integers)
        return ExecutionResult.failure(f"{type(exc).__name__}: {exc}")
    finally:
        deadline.at = math.inf
        if cursor is not None:
            try:
                cursor.close()
            except Exception:  # pragma: no cover
                pass


# ---- the worker process --------------------------------------------------------------------------------------

_HEADER = struct.Struct("!Q")
_workers: "weakref.WeakSet[_Worker]" = weakref.WeakSet()


def _read_exact(stream, n: int) -> bytearray | None:
    """Read exactly ``n`` bytes into one buffer allocated once (``None`` at end of file).

    A pipe gives at most its capacity (64 KB by default) per read; appending each chunk to a growing ``bytes``
    copied the whole buffer every time (quadratic: a 31 MB result took 3-6 s on the first query of a process, the
    fresh pages faulting in). ``readinto`` a preallocated ``bytearray`` copies each byte once.
    """
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    try:
        while got < n:
            k = stream.readinto(view[got:])
            if not k:
                return None
            got += k
    finally:
        view.release()
    return buf


def _send(stream, obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)  # two writes: no 31 MB concatenation
    stream.flush()


#: Capacity asked for the worker's pipes (Linux ``F_SETPIPE_SZ``; capped by ``/proc/sys/fs/pipe-max-size``): fewer
#: reads and context switches for a result of megabytes.
_PIPE_BYTES = 1 << 20


def _grow_pipe(stream) -> None:
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except Exception:  # not Linux, or a lower system cap: the default capacity works, only slower
        pass


class _WorkerDied(Exception):
    pass


class _Worker:
    """One worker process running queries for one thread of one process; killed when a query runs too long."""

    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            bufsize=0,
        )
        _grow_pipe(self.proc.stdout)
        self.pid = os.getpid()
        self.kills = 0
        _workers.add(self)

    def alive(self) -> bool:
        return self.proc.poll() is None and self.pid == os.getpid()

    def call(self, request: tuple, wait_s: float) -> object:
        """Send ``request`` and wait at most ``wait_s`` for the answer; kill the worker past that."""
        try:
            _send(self.proc.stdin, request)
        except (BrokenPipeError, OSError) as exc:
            self.kill()
            raise _WorkerDied(str(exc)) from None
        out = self.proc.stdout
        if not self._wait_readable(out, wait_s):
            self.kill()
            raise TimeoutError
        head = _read_exact(out, _HEADER.size)
        body = _read_exact(out, _HEADER.unpack(head)[0]) if head else None
        if body is None:
            self.kill()
            raise _WorkerDied(f"exit status {self.proc.returncode}")
        return pickle.loads(body)

    def _wait_readable(self, stream, wait_s: float) -> bool:
        if os.name == "posix":
            import select

            end = time.monotonic() + wait_s
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                try:
                    ready, _, _ = select.select([stream], [], [], left)
                except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for safety
                    continue
                return bool(ready)
        timer = threading.Timer(wait_s, self.kill)  # pragma: no cover - Windows: no select() on pipes
        timer.start()
        try:
            return True
        finally:
            timer.cancel()

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:  # pragma: no cover
            pass
        try:
            self.proc.wait(timeout=5)
        except Exception:  # pragma: no cover
            pass
        for s in (self.proc.stdin, self.proc.stdout):
            try:
                s.close()
            except Exception:
                pass

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=2)
        except Exception:
            self.kill()
        try:
            self.proc.stdout.close()
        except Exception:
            pass


def _worker_for_thread() -> _Worker:
    if _cache.pid != os.getpid():
        _cache.pid = os.getpid()
        _cache.entries = OrderedDict()
        _cache.worker = None
    worker = _cache.worker
    if worker is None or not worker.alive():
        worker = _cache.worker = _Worker()
    return worker


def close_worker() -> None:
    """Stop this thread's worker process (a later query starts a new one)."""
    worker = getattr(_cache, "worker", None)
    if worker is not None and worker.pid == os.getpid():
        worker.close()
    _cache.worker = None


def worker_pid() -> int | None:
    """Process id of this thread's worker (``None`` before the first query); for tests and benchmarks."""
    worker = getattr(_cache, "worker", None)
    return worker.proc.pid if worker is not None and worker.alive() else None


def _close_all_workers() -> None:  # pragma: no cover - interpreter exit
    for w in list(_workers):
        if w.pid == os.getpid():
            w.close()


import atexit  # noqa: E402

atexit.register(_close_all_workers)


def _as_tuple(r: ExecutionResult) -> tuple:
    """Plain-data form of a result for the pipe (the worker's classes live in its ``__main__``)."""
    return (r.ok, r.rows, r.columns, r.error, r.limit, tuple(r.reads), r.nbytes)


def _worker_main() -> None:  # pragma: no cover - runs in the worker process
    global _in_worker
    _in_worker = True
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = WORKER_ADDRESS_SPACE_BYTES if hard == resource.RLIM_INFINITY else min(hard, WORKER_ADDRESS_SPACE_BYTES)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except Exception:
        pass
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = _read_exact(stdin, _HEADER.size)
        if head is None:
            return
        body = _read_exact(stdin, _HEADER.unpack(head)[0])
        if body is None:
            return
        request = pickle.loads(body)
        try:
            if request[0] == "stats":
                import resource

                answer: object = ("stats", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            else:
                _, path, query, timeout_s, max_rows, max_result_bytes = request
                try:
                    answer = ("ok", _as_tuple(_run(path, query, timeout_s, max_rows, max_result_bytes)))
                except sqlite3.DatabaseError as exc:
                    answer = ("database_error", str(exc))
                except OSError as exc:
                    answer = ("os_error", str(exc))
            try:
                _send(stdout, answer)
            except MemoryError:
                _send(stdout, ("ok", _as_tuple(ExecutionResult.failure(_out_of_memory_message(), limit="memory"))))
        except MemoryError:
            try:
                _send(stdout, ("ok", _as_tuple(ExecutionResult.failure(_out_of_memory_message(), limit="memory"))))
            except Exception:
                return


def execute_sql(
    db_path: str | os.PathLike[str],
    query: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    isolate: bool = True,
) -> ExecutionResult:
    """Run one untrusted read-only query against the SQLite file ``db_path``.

    Args:
        db_path: path of an existing SQLite database file (opened read-only; never modified).
        query: the SQL text, exactly one statement (any number of trailing ``;`` is fine).
        timeout_s: wall-clock budget enforced inside SQLite; past it the statement is interrupted, and a worker
            that has not answered ``KILL_GRACE_S`` later (a call SQLite cannot interrupt) is killed.
        max_rows: largest number of result rows accepted; a larger result is an error.
        max_query_chars: longest query text accepted.
        max_result_bytes: largest result accepted (string/blob bytes plus 16 per cell), counted while fetching.
        isolate: run in this thread's worker process (default). ``False`` runs in the calling process: the
            SQLite limits and the time limit still hold, but not the heap limit nor the kill of a stuck call.

    Returns:
        An :class:`ExecutionResult`. ``ok`` is False for every problem with the query, including
        refusals, SQLite errors, time-outs and oversized results; ``error`` then says what happened and
        ``limit`` which limit stopped it.

    Raises:
        FileNotFoundError: ``db_path`` does not exist (a configuration error, not the query's fault).
        sqlite3.DatabaseError: ``db_path`` exists but cannot be opened as a SQLite database.
    """
    res = _execute(db_path, query, timeout_s, max_rows, max_query_chars, max_result_bytes, isolate)
    return replace(res, query=query) if query.__class__ is str else res


def _execute(db_path, query, timeout_s, max_rows, max_query_chars, max_result_bytes, isolate) -> ExecutionResult:
    path = os.path.abspath(os.fspath(db_path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"SQLite database {path} does not exist")
    refusal = _precheck(query, max_query_chars)
    if refusal:
        return ExecutionResult.failure(refusal, limit="length" if refusal.startswith("query is too long") else "")
    if not isolate:
        return _run(path, query, timeout_s, max_rows, max_result_bytes)
    try:
        worker = _worker_for_thread()
    except OSError:  # pragma: no cover - no way to start a process here: run in this process
        return _run(path, query, timeout_s, max_rows, max_result_bytes)
    try:
        kind, value = worker.call(("run", path, query, float(timeout_s), max_rows, max_result_bytes),
                                  float(timeout_s) + KILL_GRACE_S)
    except TimeoutError:
        return ExecutionResult.failure(
            f"interrupted: query exceeded the {float(timeout_s)} s time limit inside one SQLite call "
            f"(its worker process was stopped)",
            limit="time",
        )
    except _WorkerDied:
        return ExecutionResult.failure(
            f"out of memory: the query's worker process stopped (address-space limit "
            f"{WORKER_ADDRESS_SPACE_BYTES // 1_000_000} MB)",
            limit="memory",
        )
    if kind == "ok":
        ok, rows, columns, error, limit, reads, nbytes = value  # type: ignore[misc]
        return ExecutionResult(ok, rows, columns, error, limit, frozenset(reads), nbytes)
    if kind == "database_error":
        raise sqlite3.DatabaseError(value)
    raise FileNotFoundError(value)


if __name__ == "__main__":  # pragma: no cover - the worker
    if sys.argv[1:] == ["--worker"]:
        _worker_main()
