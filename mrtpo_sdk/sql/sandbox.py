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
* **Bounded time.** A progress handler (:meth:`sqlite3.Connection.set_progress_handler`) interrupts the
  statement inside SQLite's virtual machine once a monotonic deadline has passed (default 1.0 s), so an
  unbounded ``WITH RECURSIVE`` or a huge cross join stops on time. Thread or asyncio time-outs could not.
* **Bounded size.** At most ``max_rows`` rows are fetched (default 10 000; more is an error), the query text is
  at most ``max_query_chars`` characters, every string or blob value is at most 1 MB
  (``SQLITE_LIMIT_LENGTH``) and temporary storage stays in memory (``PRAGMA temp_store=MEMORY``), so no temp
  file is written next to the database.
* **No files.** Nothing is created or modified: not the database, not a journal, not an ``ATTACH`` target.

Connections are cached per process and per thread, keyed by the database path and its inode, size and
modification time (a rebuilt file gets a fresh connection). A forked child never reuses its parent's
connections. Several processes may read the same file concurrently.
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ExecutionResult",
    "execute_sql",
    "close_cached_connections",
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_MAX_ROWS",
    "DEFAULT_MAX_QUERY_CHARS",
    "DENIED_FUNCTIONS",
]

DEFAULT_TIMEOUT_S = 1.0
DEFAULT_MAX_ROWS = 10_000
DEFAULT_MAX_QUERY_CHARS = 100_000
MAX_VALUE_BYTES = 1_000_000
_PROGRESS_STEPS = 1_000  # virtual-machine instructions between two deadline checks
_CACHE_SIZE = 16

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
    """

    ok: bool
    rows: list[tuple] | None
    columns: list[str] | None
    error: str = ""

    @classmethod
    def failure(cls, error: str) -> "ExecutionResult":
        """Build a failed result carrying ``error``."""
        return cls(ok=False, rows=None, columns=None, error=error)


def _authorizer(action: int, arg1, arg2, db_name, trigger) -> int:
    """SQLite authorizer: allow reads only; see the module docstring."""
    if action in (_SQLITE_SELECT, _SQLITE_READ, _SQLITE_RECURSIVE):
        return _SQLITE_OK
    if action == _SQLITE_FUNCTION:
        name = (arg2 or "").lower()
        return _SQLITE_DENY if name in DENIED_FUNCTIONS else _SQLITE_OK
    return _SQLITE_DENY


class _Deadline:
    """Progress-handler callable: returns non-zero (interrupt) once ``time.monotonic()`` passes ``at``."""

    __slots__ = ("at", "hit")

    def __init__(self) -> None:
        self.at = math.inf
        self.hit = False

    def __call__(self) -> int:
        if time.monotonic() > self.at:
            self.hit = True
            return 1
        return 0


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


_cache = _Cache()


def _set_limit(conn: sqlite3.Connection, name: str, value: int) -> None:
    limit = getattr(sqlite3, name, None)
    setter = getattr(conn, "setlimit", None)  # Python >= 3.11
    if limit is not None and setter is not None:
        setter(limit, value)


def _open(path: str) -> tuple[sqlite3.Connection, _Deadline]:
    """Open ``path`` read-only with every protection in place (raises ``sqlite3.Error`` on failure)."""
    uri = Path(path).as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=True)
    try:
        if hasattr(conn, "enable_load_extension"):
            conn.enable_load_extension(False)
        conn.execute("PRAGMA query_only=ON")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("PRAGMA trusted_schema=OFF")
        _set_limit(conn, "SQLITE_LIMIT_ATTACHED", 0)
        _set_limit(conn, "SQLITE_LIMIT_LENGTH", MAX_VALUE_BYTES)
        _set_limit(conn, "SQLITE_LIMIT_SQL_LENGTH", 1_000_000)
        _set_limit(conn, "SQLITE_LIMIT_COLUMN", 1_000)
        # Fail fast on schema problems (e.g. not a database) while the authorizer is not yet installed.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        deadline = _Deadline()
        conn.set_authorizer(_authorizer)
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
    """Close this thread's cached connections (e.g. before deleting a database file on Windows)."""
    for entry in _cache.entries.values():
        _close_quietly(entry.conn)
    _cache.entries.clear()


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


def _first_keyword(text: str) -> str:
    """The first word of the statement, skipping comments and opening parentheses ("" if none)."""
    i = _skip_trivia(text, 0)
    while i < len(text) and text[i] == "(":
        i = _skip_trivia(text, i + 1)
    j = i
    while j < len(text) and (text[j].isalnum() or text[j] == "_"):
        j += 1
    return text[i:j].upper() if j > i else text[i : i + 1]


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
    first = _first_keyword(query)
    if first == "" or first == ";":
        return "empty query: the text holds no SQL statement"
    if first in _REFUSED_FIRST_KEYWORDS:
        return f"not authorized: only a read-only query (SELECT, WITH or VALUES) may run, not {first}"
    return ""


def execute_sql(
    db_path: str | os.PathLike[str],
    query: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
) -> ExecutionResult:
    """Run one untrusted read-only query against the SQLite file ``db_path``.

    Args:
        db_path: path of an existing SQLite database file (opened read-only; never modified).
        query: the SQL text, exactly one statement (a trailing ``;`` is fine).
        timeout_s: wall-clock budget enforced inside SQLite; past it the statement is interrupted.
        max_rows: largest number of result rows accepted; a larger result is an error.
        max_query_chars: longest query text accepted.

    Returns:
        An :class:`ExecutionResult`. ``ok`` is False for every problem with the query, including
        refusals, SQLite errors, time-outs and oversized results; ``error`` then says what happened.

    Raises:
        FileNotFoundError: ``db_path`` does not exist (a configuration error, not the query's fault).
        sqlite3.DatabaseError: ``db_path`` exists but cannot be opened as a SQLite database.
    """
    path = os.path.abspath(os.fspath(db_path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"SQLite database {path} does not exist")
    refusal = _precheck(query, max_query_chars)
    if refusal:
        return ExecutionResult.failure(refusal)
    entry = _connection(path)
    conn, deadline = entry.conn, entry.deadline
    deadline.hit = False
    deadline.at = time.monotonic() + timeout_s
    cursor = None
    try:
        cursor = conn.cursor()
        cursor.execute(query)
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
                return ExecutionResult.failure(f"result has more than {max_rows} rows")
        return ExecutionResult(ok=True, rows=rows, columns=columns, error="")
    except sqlite3.ProgrammingError as exc:
        msg = str(exc)
        if "one statement at a time" in msg:
            return ExecutionResult.failure("only one SQL statement may run, and the text holds more than one")
        return ExecutionResult.failure(msg or type(exc).__name__)
    except sqlite3.Error as exc:
        if deadline.hit:
            return ExecutionResult.failure(f"interrupted: query exceeded the {float(timeout_s)} s time limit")
        return ExecutionResult.failure(str(exc) or type(exc).__name__)
    except MemoryError:
        return ExecutionResult.failure("out of memory while running the query")
    except Exception as exc:  # never raise on model output (e.g. OverflowError for huge integers)
        return ExecutionResult.failure(f"{type(exc).__name__}: {exc}")
    finally:
        deadline.at = math.inf
        if cursor is not None:
            try:
                cursor.close()
            except Exception:  # pragma: no cover
                pass
