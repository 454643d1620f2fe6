"""The sandbox refuses every write and side effect, stops runaway queries on time, and never raises."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import sqlite3
import time
from pathlib import Path

import pytest

from mrtpo_sdk.sql.sandbox import KILL_GRACE_S, ExecutionResult, execute_sql


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "db" / "shop.sqlite"
    path.parent.mkdir()
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id), total REAL);
        CREATE INDEX orders_customer ON orders(customer_id);
        """
    )
    conn.executemany("INSERT INTO customer VALUES (?, ?, ?)", [(i, f"c{i}", f"city{i % 5}") for i in range(1, 101)])
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(i, i % 100 + 1, i * 1.5) for i in range(1, 301)])
    conn.commit()
    conn.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _listing(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


def test_select_returns_rows_and_columns(db: Path) -> None:
    res = execute_sql(db, "SELECT name, city FROM customer WHERE id <= 2 ORDER BY id;")
    assert res == ExecutionResult(ok=True, rows=[("c1", "city1"), ("c2", "city2")], columns=["name", "city"], error="")


def test_sqlite_error_text_is_passed_through(db: Path) -> None:
    res = execute_sql(db, "SELECT nme FROM customer")
    assert not res.ok and res.rows is None and res.columns is None
    assert res.error == "no such column: nme"
    assert execute_sql(db, "SELECT * FROM custmer").error == "no such table: custmer"
    assert "syntax error" in execute_sql(db, "SELEC name FROM customer").error or not execute_sql(db, "SELEC x").ok


HOSTILE = {
    "insert": "INSERT INTO customer VALUES (1000, 'x', 'y')",
    "update": "UPDATE customer SET name = 'x'",
    "delete_with_cte": "WITH t AS (SELECT 1) DELETE FROM customer",
    "drop": "DROP TABLE customer",
    "create": "CREATE TABLE evil (x)",
    "attach": "ATTACH DATABASE '{attach}' AS x",
    "attach_in_parens": "(ATTACH DATABASE '{attach}' AS x)",
    "vacuum_into": "VACUUM INTO '{attach}'",
    "recursive": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "recursive_rows": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
    "cross_join": "SELECT count(*) FROM customer a, customer b, customer c, customer d, customer e",
    "cross_join_sorted": "SELECT a.id FROM customer a, customer b, customer c, customer d ORDER BY random() LIMIT 1",
    "load_extension": "SELECT load_extension('/tmp/evil.so')",
    "writefile": "SELECT writefile('{attach}', 'x')",
    "pragma_writable_schema": "PRAGMA writable_schema = ON",
    "pragma_table_valued": "SELECT * FROM pragma_table_info('customer')",
    "begin": "BEGIN IMMEDIATE",
    "savepoint": "SAVEPOINT s",
    "multiple": "SELECT 1; DROP TABLE customer",
    "multiple_selects": "SELECT 1; SELECT 2",
    "empty": "",
    "whitespace": "   \n\t ",
    "comment_only": "-- nothing here",
    "semicolon_only": ";",
    "huge": "SELECT '" + "x" * 1_000_000 + "'",
    "huge_blob": "SELECT length(zeroblob(2000000000))",
    "nul": "SELECT 1\x00; DROP TABLE customer",
    "surrogate": "SELECT '\udcff'",
    "garbage": "\x01\x02\ufffd)))(((",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_queries_fail_fast_without_side_effects(db: Path, tmp_path: Path, name: str) -> None:
    attach = tmp_path / "attach_target.db"
    query = HOSTILE[name].replace("{attach}", str(attach))
    before_hash, before_files = _digest(db), _listing(db.parent)
    tmp_before = _listing(tmp_path)
    start = time.monotonic()
    res = execute_sql(db, query)
    elapsed = time.monotonic() - start
    assert isinstance(res, ExecutionResult)
    assert res.ok is False, (name, res)
    assert res.error, name
    assert res.rows is None and res.columns is None
    assert elapsed < 10 * (1.0 + KILL_GRACE_S), (name, elapsed)  # the 1 s limit stopped it (room for a loaded CPU)
    assert _digest(db) == before_hash
    assert _listing(db.parent) == before_files
    assert _listing(tmp_path) == tmp_before
    assert not attach.exists()
    # the database still answers normally afterwards (cached connection not poisoned)
    assert execute_sql(db, "SELECT count(*) FROM customer").rows == [(100,)]


def test_specific_error_messages(db: Path) -> None:
    assert execute_sql(db, "").error == "empty query: the text holds no SQL statement"
    assert "more than one" in execute_sql(db, "SELECT 1; SELECT 2").error
    assert execute_sql(db, "SELECT 1;  -- done").ok
    assert execute_sql(db, "/* lead */ SELECT 1").ok
    assert "not authorized" in execute_sql(db, "DROP TABLE customer").error
    assert execute_sql(db, "WITH t AS (SELECT 1) DELETE FROM customer").error == "not authorized"
    assert "NUL" in execute_sql(db, "SELECT 1\x00").error
    assert "too long" in execute_sql(db, "SELECT 1 " + " " * 200_000).error
    assert "string" in execute_sql(db, None).error  # type: ignore[arg-type]
    timeout = execute_sql(db, HOSTILE["recursive"], timeout_s=0.2)
    assert timeout.error == "interrupted: query exceeded the 0.2 s time limit"
    assert execute_sql(db, HOSTILE["cross_join"]).error == "interrupted: query exceeded the 1.0 s time limit"


def test_row_cap(db: Path) -> None:
    assert execute_sql(db, "SELECT * FROM orders", max_rows=300).ok
    res = execute_sql(db, "SELECT * FROM orders", max_rows=299)
    assert not res.ok and res.error == "result has more than 299 rows"


def test_time_limit_is_enforced_inside_sqlite(db: Path) -> None:
    start = time.monotonic()
    res = execute_sql(db, HOSTILE["recursive"], timeout_s=0.3)
    assert not res.ok and res.error.startswith("interrupted")
    assert time.monotonic() - start < 10 * (0.3 + KILL_GRACE_S)  # stopped by the limit, not run to its end


def test_missing_database_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        execute_sql(tmp_path / "nope.sqlite", "SELECT 1")
    assert not (tmp_path / "nope.sqlite").exists()


def test_rebuilt_file_gets_a_fresh_connection(db: Path) -> None:
    assert execute_sql(db, "SELECT count(*) FROM customer").rows == [(100,)]
    tmp = db.with_suffix(".new")
    conn = sqlite3.connect(tmp)
    conn.execute("CREATE TABLE customer (id INTEGER)")
    conn.execute("INSERT INTO customer VALUES (1)")
    conn.commit()
    conn.close()
    os.replace(tmp, db)
    assert execute_sql(db, "SELECT count(*) FROM customer").rows == [(1,)]


def _worker(path: str) -> list:
    return [execute_sql(path, "SELECT count(*) FROM orders").rows for _ in range(20)]


def test_many_processes_read_concurrently(db: Path) -> None:
    execute_sql(db, "SELECT 1")  # warm this process's cache before forking
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        results = pool.map(_worker, [str(db)] * 4)
    assert all(r == [[(300,)]] * 20 for r in results)
    assert execute_sql(db, "SELECT count(*) FROM orders").rows == [(300,)]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO customer VALUES (1000, 'x', 'y')",
        "DROP TABLE customer",
        "ATTACH DATABASE '{attach}' AS x",
        "VACUUM INTO '{attach}'",
        "PRAGMA writable_schema = ON",
        "BEGIN",
        "CREATE TEMP TABLE t (x)",
        "SELECT load_extension('/tmp/evil.so')",
    ],
)
def test_sqlite_level_protections_hold_without_the_keyword_check(db: Path, tmp_path: Path, statement: str) -> None:
    """Defense in depth: the connection itself refuses writes even if the keyword pre-check were bypassed."""
    from mrtpo_sdk.sql import sandbox

    attach = tmp_path / "attach_target.db"
    before = _digest(db)
    conn, _ = sandbox._open(str(db))
    try:
        with pytest.raises(sqlite3.Error):
            conn.execute(statement.replace("{attach}", str(attach))).fetchall()
    finally:
        conn.close()
    assert _digest(db) == before
    assert not attach.exists()


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_fragments = st.sampled_from(
    ["SELECT", " * ", "FROM customer", " orders", " WHERE", " id", " = ", "1", "'x'", ";", " UNION ", "(", ")",
     "--", "/*", "*/", "\n", "\x00", "\udcff", "WITH", " RECURSIVE", "DROP", "ATTACH", "PRAGMA", ",", " JOIN "]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=200), st.lists(_fragments, max_size=25).map("".join)))
def test_arbitrary_text_never_raises_or_writes(db: Path, text: str) -> None:
    before = _digest(db)
    res = execute_sql(db, text, timeout_s=0.2)
    assert isinstance(res, ExecutionResult)
    assert res.ok == (res.error == "") == (res.rows is not None)
    assert _digest(db) == before and _listing(db.parent) == {"shop.sqlite"}
