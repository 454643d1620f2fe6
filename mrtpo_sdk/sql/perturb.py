"""Perturbed copies of a database, for test-suite execution accuracy (Zhong, Yu & Klein 2020, "Semantic
Evaluation for Text-to-SQL with Distilled Test Suites").

An answer that hard-codes its result (``WHERE dept_id IN (4, 7)``, ``SELECT 0x20 + 0*count(*) FROM student``)
returns the reference's result on the database it was written against, but not on a changed copy of it, where the
reference, run again, computes a different result. :func:`perturbed_copies` makes :data:`COPIES` such copies of a
database, deterministically (seeded by the database's bytes and the copy's number), once, in the cache directory
(``<cache root>/sql/perturbed/<hash of the database>/<name>.<k>.sqlite``, written atomically):

* copy 0 — **shuffle**: in every table, the values of each *free* column are permuted across the rows (so every
  column keeps its bag of values: NOT NULL and single-column UNIQUE stay valid, types stay);
* copy 1 — **drop**: in every table of at least :data:`MIN_ROWS_TO_DROP` rows, about :data:`DROP_SHARE` of the rows
  are deleted, with the rows that reference them through a declared FOREIGN KEY (recursively), so foreign keys
  stay valid;
* copy 2 — both, with other seeds.

A column is *free* unless it is part of the PRIMARY KEY, of a FOREIGN KEY (either end), of a multi-column UNIQUE
index, is named like a key (``id``, ``…_id``), or is a text column whose values are all distinct (a name that
identifies its row: ``WHERE title = 'chess'`` for the reference's ``WHERE id = 1`` stays correct): keys, names and
so every join stay as they are. A table whose
shuffled rows break a CHECK constraint is left unshuffled. Schema and row counts of copy 0 equal the original's.

Databases larger than :data:`MAX_DB_BYTES` get no copies (building them would cost more than it checks).
"""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import tempfile
import threading
from pathlib import Path

from mrtpo_sdk.cache import cache_root

__all__ = ["COPIES", "DROP_SHARE", "MAX_DB_BYTES", "MIN_ROWS_TO_DROP", "perturbed_copies", "free_columns"]

#: Number of perturbed copies per database.
COPIES = 3
#: Share of a table's rows the drop perturbation deletes (at least one).
DROP_SHARE = 0.15
#: Tables with fewer rows lose none.
MIN_ROWS_TO_DROP = 3
#: Larger databases get no perturbed copies.
MAX_DB_BYTES = 64 * 2**20
_VERSION = b"mrtpo-sql-perturb-v1"
_KINDS = (("shuffle",), ("drop",), ("shuffle", "drop"))

_lock = threading.Lock()
_known: dict[tuple, tuple[str, ...]] = {}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def _foreign_keys(conn: sqlite3.Connection, tables: list[str]) -> list[tuple[str, list[str], str, list[str]]]:
    """(child table, child columns, parent table, parent columns) of every declared FOREIGN KEY."""
    lower = {t.lower(): t for t in tables}
    out = []
    for t in tables:
        groups: dict[int, list] = {}
        for row in conn.execute(f"PRAGMA foreign_key_list({_q(t)})"):
            groups.setdefault(row[0], []).append(row)
        for rows in groups.values():
            rows.sort(key=lambda r: r[1])
            parent = lower.get(rows[0][2].lower())
            if parent is None:
                continue
            to = [r[4] for r in rows]
            if any(c is None for c in to):
                to = [r[1] for r in sorted(conn.execute(f"PRAGMA table_info({_q(parent)})"), key=lambda r: r[5]) if r[5]]
            if len(to) != len(rows):
                continue
            out.append((t, [r[3] for r in rows], parent, to))
    return out


def free_columns(conn: sqlite3.Connection, table: str, fks: list | None = None) -> list[str]:
    """The columns of ``table`` the shuffle permutes (module docstring)."""
    tables = _tables(conn)
    fks = _foreign_keys(conn, tables) if fks is None else fks
    keyed = {c.lower() for child, cc, parent, pc in fks for t, cols in ((child, cc), (parent, pc))
             if t.lower() == table.lower() for c in cols}
    for idx in conn.execute(f"PRAGMA index_list({_q(table)})"):
        if idx[2]:  # unique
            cols = [r[2] for r in conn.execute(f"PRAGMA index_info({_q(idx[1])})")]
            if len(cols) > 1 or None in cols:
                keyed |= {c.lower() for c in cols if c}
    free = []
    for _, name, _, _, _, pk in conn.execute(f"PRAGMA table_info({_q(table)})"):
        low = name.lower()
        if pk or low in keyed or low == "id" or low.endswith("_id") or low == "rowid":
            continue
        free.append(name)
    # a text column whose values are all distinct names its row (``department.name``): it stays bound to its key,
    # so an answer that filters on the name the reference's id stands for still matches
    kept = []
    for name in free:
        n, distinct, texts = conn.execute(
            f"SELECT count(*), count(DISTINCT {_q(name)}), sum(typeof({_q(name)}) = 'text') FROM {_q(table)}").fetchone()
        if n > 1 and distinct == n and texts == n:
            continue
        kept.append(name)
    return kept


def _has_rowid(conn: sqlite3.Connection, table: str) -> bool:
    try:
        conn.execute(f"SELECT rowid FROM {_q(table)} LIMIT 0")
        return True
    except sqlite3.Error:
        return False


def _shuffle(conn: sqlite3.Connection, rnd: random.Random, fks: list) -> None:
    for t in _tables(conn):
        cols = free_columns(conn, t, fks)
        if not cols or not _has_rowid(conn, t):
            continue
        rows = conn.execute(f"SELECT rowid, {', '.join(map(_q, cols))} FROM {_q(t)} ORDER BY rowid").fetchall()
        if len(rows) < 2:
            continue
        new = {}
        for j in range(len(cols)):
            values = [r[j + 1] for r in rows]
            rnd.shuffle(values)
            for i, r in enumerate(rows):
                new.setdefault(r[0], []).append(values[i])
        conn.execute("SAVEPOINT shuffle")
        try:
            # rewrite the table whole, so that a single-column UNIQUE never sees a duplicate half-way
            cursor = conn.execute(f"SELECT * FROM {_q(t)} LIMIT 0")
            all_cols = [d[0] for d in cursor.description]
            full = {r[0]: list(r[1:]) for r in conn.execute(f"SELECT rowid, * FROM {_q(t)}")}
            positions = [all_cols.index(c) for c in cols]
            for rid, vals in new.items():
                for p, v in zip(positions, vals):
                    full[rid][p] = v
            conn.execute(f"DELETE FROM {_q(t)}")
            marks = ", ".join("?" * (len(all_cols) + 1))
            conn.executemany(f"INSERT INTO {_q(t)} (rowid, {', '.join(map(_q, all_cols))}) VALUES ({marks})",
                             [(rid, *vals) for rid, vals in sorted(full.items())])
            conn.execute("RELEASE shuffle")
        except sqlite3.Error:
            conn.execute("ROLLBACK TO shuffle")
            conn.execute("RELEASE shuffle")


def _delete_cascade(conn: sqlite3.Connection, table: str, rowids: list[int], fks: list, depth: int = 0) -> None:
    if not rowids or depth > 16:
        return
    for child, cc, parent, pc in fks:
        if parent.lower() != table.lower() or not _has_rowid(conn, child):
            continue
        keys = set()
        for chunk in range(0, len(rowids), 500):
            part = rowids[chunk : chunk + 500]
            keys |= set(conn.execute(f"SELECT {', '.join(map(_q, pc))} FROM {_q(table)} WHERE rowid IN "
                                     f"({', '.join('?' * len(part))})", part).fetchall())
        if not keys:
            continue
        child_rows = [r[0] for r in conn.execute(f"SELECT rowid, {', '.join(map(_q, cc))} FROM {_q(child)}")
                      if tuple(r[1:]) in keys]
        if child.lower() == table.lower():
            child_rows = [r for r in child_rows if r not in set(rowids)]
        _delete_cascade(conn, child, child_rows, fks, depth + 1)
    for chunk in range(0, len(rowids), 500):
        part = rowids[chunk : chunk + 500]
        conn.execute(f"DELETE FROM {_q(table)} WHERE rowid IN ({', '.join('?' * len(part))})", part)


def _drop(conn: sqlite3.Connection, rnd: random.Random, fks: list) -> None:
    for t in _tables(conn):
        if not _has_rowid(conn, t):
            continue
        rowids = [r[0] for r in conn.execute(f"SELECT rowid FROM {_q(t)} ORDER BY rowid")]
        if len(rowids) < MIN_ROWS_TO_DROP:
            continue
        k = max(1, round(DROP_SHARE * len(rowids)))
        _delete_cascade(conn, t, sorted(rnd.sample(rowids, k)), fks)


def _digest(path: Path) -> str:
    h = hashlib.sha256(_VERSION + b"\0" + str(COPIES).encode() + b"\0")
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:20]


def _build(source: Path, target: Path, k: int, digest: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        src = sqlite3.connect(source.resolve().as_uri() + "?mode=ro", uri=True)
        dst = sqlite3.connect(tmp, isolation_level=None)
        try:
            src.backup(dst)
            dst.execute("PRAGMA foreign_keys = OFF")
            dst.execute("BEGIN")
            fks = _foreign_keys(dst, _tables(dst))
            for step, kind in enumerate(_KINDS[k % len(_KINDS)]):
                rnd = random.Random(f"{digest}:{k}:{step}:{kind}")
                (_shuffle if kind == "shuffle" else _drop)(dst, rnd, fks)
            dst.execute("COMMIT")
        finally:
            src.close()
            dst.close()
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def perturbed_copies(db_path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The paths of the :data:`COPIES` perturbed copies of ``db_path``, built once in the cache (module docstring);
    ``()`` when the database is too large or no copy can be written (the check is then skipped)."""
    path = Path(os.path.abspath(os.fspath(db_path)))
    try:
        st = path.stat()
    except OSError:
        return ()
    key = (str(path), st.st_size, st.st_mtime_ns)
    hit = _known.get(key)
    if hit is not None:
        return hit
    with _lock:
        hit = _known.get(key)
        if hit is not None:
            return hit
        copies: tuple[str, ...] = ()
        if st.st_size <= MAX_DB_BYTES:
            try:
                digest = _digest(path)
                folder = cache_root() / "sql" / "perturbed" / digest
                out = []
                for k in range(COPIES):
                    target = folder / f"{path.stem}.{k}.sqlite"
                    if not target.is_file():
                        _build(path, target, k, digest)
                    out.append(str(target))
                copies = tuple(out)
            except (OSError, sqlite3.Error):
                copies = ()
        _known[key] = copies
        return copies
