"""Schema-derived warm-start examples for a text-to-SQL task (``Task(warm_start=...)``).

The embedded bootstrap policy is warm-started by supervised learning on the task's reference answers; on the bundled
data that is 186 questions, too few for a 0.43M-parameter model to learn that the query's table and column names
come from the question and the schema (it recites training queries instead). :func:`schema_examples` adds simple
questions generated from each training database's own schema — counts, aggregates of numeric columns, listings and
filters on a value found in the database — each with its query, for the warm start only (RL and evaluation use the
task's own splits). Only databases that training examples use are read, and no question of any split is used.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .data import SQLExample

__all__ = ["schema_examples"]

_NUMERIC = ("INT", "REAL", "NUM", "FLOA", "DOUB", "DEC")


def _words(name: str) -> str:
    return name.replace("_", " ")


def _plural(name: str) -> str:
    w = _words(name)
    if w.endswith(("s", "x", "ch", "sh")):
        return w + "es"
    if w.endswith("y") and not w.endswith(("ay", "ey", "oy", "uy")):
        return w[:-1] + "ies"
    return w + "s"


def _questions(conn: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    qt = table.replace('"', '""')
    cols = conn.execute(f"SELECT name, type, pk FROM pragma_table_info('{table}')").fetchall()
    fks = {r[3] for r in conn.execute(f"SELECT * FROM pragma_foreign_key_list('{table}')").fetchall()}
    t, ts = _words(table), _plural(table)
    out = [(f"How many {ts} are there?", f"SELECT count(*) FROM {table}")]
    for name, ctype, pk in cols:
        if pk or name in fks or name.endswith("_id") or name == "id":
            continue
        c = _words(name)
        numeric = any(k in (ctype or "").upper() for k in _NUMERIC)
        if numeric:
            out += [
                (f"What is the average {c} of the {ts}?", f"SELECT avg({name}) FROM {table}"),
                (f"What is the highest {c} of any {t}?", f"SELECT max({name}) FROM {table}"),
                (f"What is the lowest {c} of any {t}?", f"SELECT min({name}) FROM {table}"),
                (f"What is the total {c} of all {ts}?", f"SELECT sum({name}) FROM {table}"),
            ]
        else:
            out += [
                (f"List the {c} of every {t}.", f"SELECT {name} FROM {table}"),
                (f"How many different {c} values do the {ts} have?", f"SELECT count(DISTINCT {name}) FROM {table}"),
            ]
            row = conn.execute(f'SELECT "{name}" FROM "{qt}" WHERE "{name}" IS NOT NULL LIMIT 1').fetchone()
            if row is not None and isinstance(row[0], str) and "'" not in row[0] and len(row[0]) <= 40:
                v = row[0]
                out.append((f"How many {ts} have {c} {v}?", f"SELECT count(*) FROM {table} WHERE {name} = '{v}'"))
    return out


def schema_examples(examples: Sequence[Any], *, per_database: int = 40, seed: int = 0) -> list[SQLExample]:
    """Up to ``per_database`` templated questions with their queries for each database the examples use.

    Args:
        examples: the task's training examples (:class:`SQLExample`; others are skipped).
        per_database: the most questions drawn per database (a seeded sample when it has more).
        seed: the sampling seed.

    Returns:
        ``SQLExample`` s with ids ``warm-<db_id>-<n>``, the training examples' ``db_path`` and ``schema``.
    """
    rng = random.Random(seed)
    seen: dict[str, SQLExample] = {}
    for ex in examples:
        if isinstance(ex, SQLExample) and ex.db_id not in seen:
            seen[ex.db_id] = ex
    out: list[SQLExample] = []
    for db_id, base in seen.items():
        conn = sqlite3.connect(Path(base.db_path).resolve().as_uri() + "?mode=ro", uri=True)
        try:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
                )
            ]
            pairs = [p for t in tables for p in _questions(conn, t)]
        finally:
            conn.close()
        if len(pairs) > per_database:
            pairs = rng.sample(pairs, per_database)
        for n, (question, query) in enumerate(pairs):
            out.append(replace(base, id=f"warm-{db_id}-{n:03d}", question=question, query=query, evidence=""))
    return out
