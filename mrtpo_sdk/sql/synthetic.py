"""Synthetic (question, SQL) pairs for the embedded policy's warm start, from the training databases' schemas.

The embedded bootstrap policy is a small model trained from scratch: on the 186 bundled training questions alone it
memorises their queries and answers a new question with the query of a similar training one. :func:`synthetic_examples`
adds templated questions whose shapes are those of the training queries — count, aggregate, filter on a value,
comparison, arg-max / arg-min, top-k, ordering, distinct, group-by, having, above-average, one join along a foreign
key (filter on the parent, count per parent, the parent with the most children, parents with no children) — over
every table and column of each database the training examples use, in natural-language words (``hire_year`` ->
"hire year"), with values taken from the database itself. Every query is run in the sandbox; a query that errors,
returns no row, returns only NULLs, or (when it orders) has rows that tie on its order key is dropped.

A task can teach them in the warm start only (``Task(warm_start_examples=...)``) or add them to its training split.
Nothing of any split but the training examples' databases is read: no question or query of any split is used
(though simple dev questions on the same databases can have the same query: 11 of the 42 bundled dev questions do,
and 2 more an equivalent one).
The bundled ``tasks/sql.py`` adds them to its training split (RL samples them; the warm start, 1,000 steps, is taught
them): in the warm start alone, at 700 steps, they lowered train ``result_match`` and did not raise dev execution
accuracy; in the training split with 1,000 warm-start steps, measured in ``docs/results.md``.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .data import SQLExample
from .sandbox import execute_sql

__all__ = ["synthetic_examples", "synthetic_pairs"]

_NUMERIC = ("INT", "REAL", "NUM", "FLOA", "DOUB", "DEC")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_LABELS = ("name", "title")
_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


@dataclass
class _Column:
    name: str
    words: str
    numeric: bool
    key: bool  # primary key, foreign key or *_id
    values: list  # distinct non-NULL values, sorted
    date: bool = False


@dataclass
class _Table:
    name: str
    words: str
    plural: str
    pk: list[str]
    fks: list[tuple[str, str, str]]  # (column, parent table, parent column)
    columns: list[_Column]
    label: _Column | None = None
    count: int = 0

    def col(self, name: str) -> _Column:
        return next(c for c in self.columns if c.name == name)


def _words(name: str) -> str:
    return name.replace("_", " ").strip()


def _plural(words: str) -> str:
    if words.endswith(("s", "x", "ch", "sh")):
        return words + "es"
    if words.endswith("y") and not words.endswith(("ay", "ey", "oy", "uy")):
        return words[:-1] + "ies"
    return words + "s"


def _article(words: str) -> str:
    return "an" if words[:1].lower() in "aeiou" else "a"


def _lit(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def _read_schema(conn: sqlite3.Connection) -> list[_Table]:
    tables = []
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        )
    ]
    for name in names:
        q = name.replace("'", "''")
        info = conn.execute(f"SELECT name, type, pk FROM pragma_table_info('{q}') ORDER BY cid").fetchall()
        fks = [(r[3], r[2], r[4]) for r in conn.execute(f"SELECT * FROM pragma_foreign_key_list('{q}')").fetchall()]
        fk_cols = {f[0] for f in fks}
        pk = [r[0] for r in sorted((r for r in info if r[2]), key=lambda r: r[2])]
        cols = []
        for cname, ctype, cpk in info:
            values = sorted(
                {r[0] for r in conn.execute(f'SELECT "{cname}" FROM "{name}" WHERE "{cname}" IS NOT NULL')},
                key=lambda v: (isinstance(v, str), v),
            )
            numeric = any(k in (ctype or "").upper() for k in _NUMERIC)
            key = bool(cpk) or cname in fk_cols or cname.endswith("_id") or cname == "id"
            date = bool(values) and all(isinstance(v, str) and _DATE.match(v) for v in values)
            cols.append(_Column(cname, _words(cname), numeric, key, values, date))
        words = _words(name)
        if words.endswith("s") and not words.endswith("ss"):  # a table named in the plural: "orders"
            t = _Table(name, words[:-1], words, pk, fks, cols)
        else:
            t = _Table(name, words, _plural(words), pk, fks, cols)
        t.count = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
        texts = [c for c in cols if not c.numeric and not c.date]
        t.label = next((c for c in texts if c.name in _LABELS), None)
        tables.append(t)
    return tables


def _aliases(*tables: _Table) -> list[str]:
    out: list[str] = []
    for t in tables:
        parts = t.name.split("_")
        initials = "".join(p[0] for p in parts)
        cand = [initials, t.name[:2], initials + "2"] if len(parts) > 1 else [t.name[0], t.name[:2], t.name[0] + "2"]
        out.append(next(a for a in cand if a not in out))
    return out


def _categorical(t: _Table) -> list[_Column]:
    """Text columns that group the rows: few distinct values, each shared by several rows (not the label)."""
    return [
        c
        for c in t.columns
        if not c.numeric and not c.key and not c.date and c is not t.label and 2 <= len(c.values) <= max(2, t.count // 2)
    ]


def _measures(t: _Table) -> list[_Column]:
    return [c for c in t.columns if c.numeric and not c.key and len(c.values) >= 3]


def _single_table(t: _Table, rng: random.Random) -> list[tuple[str, str, str]]:
    """(question, query, shape) for one table."""
    T, Ts, out = t.words, t.plural, []
    n = t.name
    add = lambda shape, qs, sql: out.append((rng.choice(qs), sql, shape))  # noqa: E731
    add("count", [f"How many {Ts} are there?", f"How many {Ts} does the database have?", f"Count the {Ts}."],
        f"SELECT count(*) FROM {n}")
    L = t.label
    if L is not None:
        Lw = L.words
        add("list", [f"List the {Lw}s of all {Ts}.", f"Show the {Lw} of every {T}.", f"What are the {Lw}s of the {Ts}?"],
            f"SELECT {L.name} FROM {n}")
        add("order", [f"List the {Lw}s of all {Ts} in alphabetical order.", f"Show the {Ts} sorted by {Lw}."],
            f"SELECT {L.name} FROM {n} ORDER BY {L.name}")
    for C in _categorical(t):
        Cw = C.words
        add("distinct", [f"List the different {Cw}s of the {Ts}.", f"What distinct {Cw} values do {Ts} have?",
                         f"List the distinct {Cw}s of the {Ts}, in alphabetical order."][:2],
            f"SELECT DISTINCT {C.name} FROM {n}")
        add("group-count", [f"How many {Ts} are there for each {Cw}?", f"Show each {Cw} and the number of {Ts}.",
                            f"How many {Ts} are there in each {Cw}?"],
            f"SELECT {C.name}, count(*) FROM {n} GROUP BY {C.name}")
        for v in rng.sample(C.values, min(2, len(C.values))):
            add("count-where", [f"How many {Ts} have {Cw} {v}?", f"How many {Ts} are there with {Cw} {v}?"],
                f"SELECT count(*) FROM {n} WHERE {C.name} = {_lit(v)}")
            if L is not None:
                add("filter", [f"List the {L.words}s of the {Ts} whose {Cw} is {v}.",
                               f"Show the {L.words}s of the {Ts} with {Cw} {v}.",
                               f"Which {Ts} have {Cw} {v}? List their {L.words}s."],
                    f"SELECT {L.name} FROM {n} WHERE {C.name} = {_lit(v)}")
        for k in (1, 2, 3, 4, 5):
            kw = rng.choice([str(k), _NUMBER_WORDS.get(k, str(k))]) if k > 1 else "one"
            add("having", [f"Which {Cw}s have more than {kw} {Ts}?", f"Which {Cw} values are shared by more than {kw} {Ts}?"],
                f"SELECT {C.name} FROM {n} GROUP BY {C.name} HAVING count(*) > {k}")
        for M in _measures(t):
            Mw = M.words
            add("group-avg", [f"What is the average {Mw} of the {Ts} in each {Cw}?",
                              f"For each {Cw}, what is the average {Mw}?"],
                f"SELECT {C.name}, avg({M.name}) FROM {n} GROUP BY {C.name}")
            add("group-max", [f"What is the highest {Mw} for each {Cw}?", f"For each {Cw}, show the largest {Mw}."],
                f"SELECT {C.name}, max({M.name}) FROM {n} GROUP BY {C.name}")
    for M in _measures(t):
        Mw = M.words
        for fn, words in (("avg", ["average"]), ("sum", ["total"]), ("max", ["highest", "maximum"]), ("min", ["lowest", "minimum"])):
            w = rng.choice(words)
            add("aggregate", [f"What is the {w} {Mw} of the {Ts}?", f"What is the {w} {Mw} of all {Ts}?"],
                f"SELECT {fn}({M.name}) FROM {n}")
        mid = M.values[len(M.values) // 2]
        if L is not None:
            Lw = L.words
            add("compare", [f"List the {Lw}s of the {Ts} with {Mw} above {mid}.",
                            f"Which {Ts} have {_article(Mw)} {Mw} greater than {mid}?"],
                f"SELECT {L.name} FROM {n} WHERE {M.name} > {_lit(mid)}")
            add("compare", [f"List the {Lw}s of the {Ts} with {Mw} below {mid}.",
                            f"Which {Ts} have {_article(Mw)} {Mw} less than {mid}?"],
                f"SELECT {L.name} FROM {n} WHERE {M.name} < {_lit(mid)}")
            add("argmax", [f"Which {T} has the highest {Mw}?", f"What is the {Lw} of the {T} with the largest {Mw}?"],
                f"SELECT {L.name} FROM {n} ORDER BY {M.name} DESC LIMIT 1")
            add("argmin", [f"Which {T} has the lowest {Mw}?", f"What is the {Lw} of the {T} with the smallest {Mw}?"],
                f"SELECT {L.name} FROM {n} ORDER BY {M.name} LIMIT 1")
            add("argmax", [f"What is the {Lw} and {Mw} of the {T} with the highest {Mw}?"],
                f"SELECT {L.name}, {M.name} FROM {n} ORDER BY {M.name} DESC LIMIT 1")
            k = rng.choice([3, 5])
            add("top-k", [f"List the {Lw}s of the {_NUMBER_WORDS[k]} {Ts} with the highest {Mw}, highest first.",
                          f"What are the {_NUMBER_WORDS[k]} {Ts} with the largest {Mw}?"],
                f"SELECT {L.name} FROM {n} ORDER BY {M.name} DESC LIMIT {k}")
            add("order", [f"List all {Ts} with their {Mw}s, from the smallest {Mw} to the largest.",
                          f"Show each {T}'s {Lw} and {Mw}, ordered by {Mw}."],
                f"SELECT {L.name}, {M.name} FROM {n} ORDER BY {M.name}")
            add("above-avg", [f"Which {Ts} have {_article(Mw)} {Mw} above the average?",
                              f"Find the {Lw}s of the {Ts} whose {Mw} is higher than the average {Mw}."],
                f"SELECT {L.name} FROM {n} WHERE {M.name} > (SELECT avg({M.name}) FROM {n})")
    for D in (c for c in t.columns if c.date):
        years = sorted({v[:4] for v in D.values})
        for y in rng.sample(years, min(2, len(years))):
            add("date", [f"How many {Ts} have {_article(D.words)} {D.words} in {y}?", f"How many {Ts} are from {y}?"],
                f"SELECT count(*) FROM {n} WHERE {D.name} LIKE '{y}%'")
    return out


def _joins(tables: list[_Table], rng: random.Random) -> list[tuple[str, str, str]]:
    """(question, query, shape) along each foreign key child.fk -> parent.pk, with the parent named by its label."""
    by_name = {t.name: t for t in tables}
    out = []
    add = lambda shape, qs, sql: out.append((rng.choice(qs), sql, shape))  # noqa: E731
    for child in tables:
        for fk, parent_name, pcol in child.fks:
            parent = by_name.get(parent_name)
            if parent is None or parent.label is None or parent is child:
                continue
            if sum(f[1] == parent_name for f in child.fks) > 1:
                continue  # two keys to the same parent (origin, destination): "the flights of X" is ambiguous
            pcol = pcol or (parent.pk[0] if parent.pk else None)
            if pcol is None:
                continue
            a, b = _aliases(parent, child)
            P, Ps, Cs = parent.words, parent.plural, child.plural
            PL = parent.label
            on = f"{b}.{fk} = {a}.{pcol}"
            join = f"FROM {parent.name} {a} JOIN {child.name} {b} ON {on}"
            add("join-group-count", [f"For each {P}, give its {PL.words} and how many {Cs} it has.",
                                     f"How many {Cs} does each {P} have? Show the {P} {PL.words} and the count.",
                                     f"Show the {PL.words} of each {P} and the number of its {Cs}."],
                f"SELECT {a}.{PL.name}, count(*) {join} GROUP BY {a}.{pcol}")
            add("join-most", [f"Which {P} has the most {Cs}?", f"What is the {PL.words} of the {P} with the most {Cs}?"],
                f"SELECT {a}.{PL.name} {join} GROUP BY {a}.{pcol} ORDER BY count(*) DESC LIMIT 1")
            for k in (1, 2, 3, 5):
                kw = rng.choice([str(k), _NUMBER_WORDS.get(k, str(k))]) if k > 1 else "one"
                add("join-having", [f"Which {Ps} have more than {kw} {Cs}?", f"List the {Ps} with more than {kw} {Cs}."],
                    f"SELECT {a}.{PL.name} {join} GROUP BY {a}.{pcol} HAVING count(*) > {k}")
            add("not-in", [f"Which {Ps} have no {Cs}?", f"List the {PL.words}s of the {Ps} that have no {Cs}.",
                           f"Find the {Ps} without any {child.words}."],
                f"SELECT {PL.name} FROM {parent.name} WHERE {pcol} NOT IN (SELECT {fk} FROM {child.name})")
            for v in rng.sample(PL.values, min(3, len(PL.values))):
                add("join-count", [f"How many {Cs} does {v} have?", f"How many {Cs} are there for the {P} {v}?"],
                    f"SELECT count(*) {join} WHERE {a}.{PL.name} = {_lit(v)}")
                if child.label is not None:
                    add("join-filter", [f"List the {child.label.words}s of the {Cs} of {v}.",
                                        f"Show the {child.label.words}s of the {Cs} whose {P} is {v}.",
                                        f"What are the {child.label.words}s of the {Cs} of the {P} {v}?"],
                        f"SELECT {b}.{child.label.name} {join} WHERE {a}.{PL.name} = {_lit(v)}")
            for M in _measures(child):
                add("join-group-agg", [f"What is the average {M.words} of the {Cs} of each {P}?",
                                       f"For each {P}, show its {PL.words} and the average {M.words} of its {Cs}."],
                    f"SELECT {a}.{PL.name}, avg({b}.{M.name}) {join} GROUP BY {a}.{pcol}")
                add("join-group-agg", [f"For each {P}, show its {PL.words} and the total {M.words} of its {Cs}."],
                    f"SELECT {a}.{PL.name}, sum({b}.{M.name}) {join} GROUP BY {a}.{pcol}")
            if child.label is not None:
                for C in _categorical(parent)[:2]:
                    for v in rng.sample(C.values, min(2, len(C.values))):
                        add("join-filter", [f"List the {child.label.words}s of the {Cs} whose {P} has {C.words} {v}.",
                                            f"Show the {child.label.words}s of the {Cs} of {Ps} with {C.words} {v}."],
                            f"SELECT {b}.{child.label.name} {join} WHERE {a}.{C.name} = {_lit(v)}")
    return out


def _valid(db_path: str, sql: str) -> bool:
    """The query runs, returns a row that is not all NULL, and (when it orders) no two rows tie on its order key
    within the rows it returns or across its ``LIMIT`` — so that its answer is unambiguous."""
    run = execute_sql(db_path, sql)
    if not run.ok or not run.rows or all(v is None for row in run.rows for v in row):
        return False
    m = re.search(r" ORDER BY (.+?)(?: DESC)?(?: LIMIT (\d+))?\Z", sql)
    if m:
        keys_sql = re.sub(r"\ASELECT (?:DISTINCT )?.+? FROM ", f"SELECT {m.group(1)} FROM ", sql[: m.start()], count=1)
        keys = execute_sql(db_path, keys_sql + sql[m.start() : m.start(2) - len(" LIMIT ") if m.group(2) else None])
        if not keys.ok:
            return False
        limit = int(m.group(2)) + 1 if m.group(2) else len(keys.rows)
        head = keys.rows[:limit]
        if any(x == y for x, y in zip(head, head[1:])):
            return False
    return True


def synthetic_pairs(db_path: str | Path, *, seed: int = 0) -> list[tuple[str, str, str]]:
    """Every verified ``(question, query, shape)`` of one database, in a deterministic order."""
    rng = random.Random(f"{seed}-{Path(db_path).stem}")
    conn = sqlite3.connect(Path(db_path).resolve().as_uri() + "?mode=ro", uri=True)
    try:
        tables = _read_schema(conn)
    finally:
        conn.close()
    out, seen = [], set()
    for question, sql, shape in [p for t in tables for p in _single_table(t, rng)] + _joins(tables, rng):
        if sql in seen or question in {q for q, _, _ in out}:
            continue
        seen.add(sql)
        if _valid(str(db_path), sql):
            out.append((question, sql, shape))
    return out


def synthetic_examples(
    examples: Sequence[Any], *, per_database: int | None = None, seed: int = 0
) -> list[SQLExample]:
    """Verified templated questions with their queries for each database the training examples use.

    Args:
        examples: the task's training examples (:class:`SQLExample`; others are skipped).
        per_database: the most questions per database (a seeded sample when there are more); ``None``: all.
        seed: the seed of the phrasing choices and of the sample.

    Returns:
        ``SQLExample`` s with ids ``synth-<db_id>-<n>`` and the training examples' ``db_path`` and ``schema``;
        a question or query equal to a training example's is left out (the training example already teaches it).
    """
    bases: dict[str, SQLExample] = {}
    for ex in examples:
        if isinstance(ex, SQLExample) and ex.db_id not in bases:
            bases[ex.db_id] = ex
    known = {(ex.db_id, ex.question) for ex in examples if isinstance(ex, SQLExample)}
    known |= {(ex.db_id, ex.query) for ex in examples if isinstance(ex, SQLExample)}
    out: list[SQLExample] = []
    for db_id, base in bases.items():
        pairs = [p for p in synthetic_pairs(base.db_path, seed=seed) if (db_id, p[0]) not in known and (db_id, p[1]) not in known]
        if per_database is not None and len(pairs) > per_database:
            pairs = random.Random(f"{seed}-{db_id}-sample").sample(pairs, per_database)
        for n, (question, query, _shape) in enumerate(pairs):
            out.append(replace(base, id=f"synth-{db_id}-{n:04d}", question=question, query=query, evidence=""))
    return out
