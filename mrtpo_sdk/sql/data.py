"""Load text-to-SQL examples from a directory in the Spider layout (or a BIRD download).

Spider layout (what ``tasks/data/sql/`` ships and what ``--data PATH`` points at)::

    PATH/
      tables.json                      # optional here; Spider format, used to validate db_ids
      train.json                       # [{"db_id": ..., "question": ..., "query": ...}, ...]
      dev.json
      database/<db_id>/<db_id>.sqlite  # a SQLite file, or
      database/<db_id>/schema.sql      # a SQL script (CREATE TABLE + INSERT) built into a cached .sqlite

A real Spider download works as is (``train`` reads ``train_spider.json`` and ``train_others.json`` when there is
no ``train.json``; ``test`` also looks in ``test_database/``). A BIRD download works too: entries use ``SQL`` instead of ``query`` and may carry
``evidence``; databases live in ``<split>_databases/``; the tables file is ``<split>_tables.json``; ``PATH`` may be
the BIRD root (holding ``train/`` and ``dev/``) or one of those folders.

Databases given as ``schema.sql`` are built once into a cache directory (``$MRTPO_SDK_CACHE_DIR`` or
``platformdirs.user_cache_dir("mrtpo-sdk")``, then ``sql/<hash of the script>/<db_id>.sqlite``), atomically (a
temp file renamed into place), so concurrent processes are safe and the data directory is never written: a
read-only checkout works.

Every problem with the data raises one :class:`SQLDataError` naming the file and field and what to do.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mrtpo_sdk.cache import CACHE_ENV, cache_root
from mrtpo_sdk.errors import MRTPOError

__all__ = [
    "SQLDataError",
    "SQLExample",
    "load_spider",
    "render_schema",
    "default_cache_dir",
    "bundled_data_dir",
    "query_categories",
    "CATEGORIES",
    "CACHE_ENV",
]

_LAYOUT_HINT = (
    "expected a Spider-layout directory: train.json, dev.json, optional tables.json, and "
    "database/<db_id>/<db_id>.sqlite or database/<db_id>/schema.sql; pass --data PATH pointing at one"
)
_SPLIT_RE = re.compile(r"[A-Za-z0-9_.-]+\Z")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RESERVED = frozenset(
    """add all alter and as asc between by case check collate column constraint create cross default delete
    desc distinct drop else end except exists foreign from full group having in index inner insert intersect
    into is join key left like limit natural not null on or order outer primary references right select set
    table then to union unique update using values when where with""".split()
)


class SQLDataError(MRTPOError, ValueError):
    """The SQL data directory is missing, malformed, or names a database that cannot be found.

    ``str(error)`` is one line naming the file (and entry/field) and what to do.
    """


@dataclass(frozen=True)
class SQLExample:
    """One text-to-SQL example.

    Attributes:
        id: deterministic id, ``f"{split}-{index:04d}"`` (index in the split file; for Spider's train,
            ``train_spider.json`` then ``train_others.json``).
        db_id: name of the database.
        question: the natural-language question.
        query: the gold SQL query.
        db_path: the SQLite file to run queries against (read-only; maybe in the cache directory).
        schema: compact ``CREATE TABLE`` text of the database, one table per line, for the prompt.
        evidence: BIRD's external-knowledge hint ("" for Spider).
        semantics: how the bundled task's rewards score answers to it: ``"training"`` (default) or ``"official"``
            (see :mod:`mrtpo_sdk.sql.score` and ``docs/sql.md``).
    """

    id: str
    db_id: str
    question: str
    query: str
    db_path: Path
    schema: str
    evidence: str = ""
    semantics: str = "training"


#: Query kinds reported by :func:`query_categories`.
CATEGORIES = ("join", "aggregate", "group-having", "order-limit", "nested", "set-op")


def query_categories(sql: str) -> frozenset[str]:
    """The kinds of SQL a (gold) query uses, detected with sqlglot.

    ``join`` (any JOIN), ``aggregate`` (an aggregate function outside a window), ``group-having`` (GROUP BY or HAVING),
    ``order-limit`` (ORDER BY outside a window, or LIMIT), ``nested`` (a SELECT inside another SELECT:
    subquery or CTE), ``set-op`` (UNION, INTERSECT or EXCEPT). A query can have several kinds.

    Args:
        sql: the query text (SQLite dialect).

    Returns:
        The set of kinds; empty when sqlglot cannot parse the text. Never raises.
    """
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except Exception:
        return frozenset()
    if tree is None:
        return frozenset()
    kinds = set()
    if tree.find(exp.Join):
        kinds.add("join")
    if any(a.find_ancestor(exp.Window) is None for a in tree.find_all(exp.AggFunc)):
        kinds.add("aggregate")
    if tree.find(exp.Group) or tree.find(exp.Having):
        kinds.add("group-having")
    if tree.find(exp.Limit) or any(o.find_ancestor(exp.Window) is None for o in tree.find_all(exp.Order)):
        kinds.add("order-limit")
    if any(s.find_ancestor(exp.Select) is not None for s in tree.find_all(exp.Select)):
        kinds.add("nested")
    if tree.find(exp.Union, exp.Intersect, exp.Except):
        kinds.add("set-op")
    return frozenset(kinds)


def default_cache_dir() -> Path:
    """Cache root for built databases: ``$MRTPO_SDK_CACHE_DIR`` or the platform user cache for ``mrtpo-sdk``."""
    return cache_root()


def bundled_data_dir() -> Path:
    """The SQL data shipped with the bundled tasks (``tasks/data/sql``, in the checkout or the installed wheel).

    Raises:
        SQLDataError: the bundled data is missing.
    """
    from ..errors import MRTPOError
    from ..resources import bundled_dir

    try:
        path = bundled_dir("tasks") / "data" / "sql"
    except MRTPOError as exc:
        raise SQLDataError(f"{exc}; or pass --data PATH pointing at a Spider-layout directory") from None
    if not (path / "dev.json").is_file():
        raise SQLDataError(f"bundled SQL data not found at {path}; pass --data PATH pointing at a Spider-layout directory")
    return path


def _read_json(path: Path, what: str) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SQLDataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save the {what} as UTF-8") from None
    except OSError as exc:
        raise SQLDataError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SQLDataError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}; fix the {what}"
        ) from None


def _split_files(base: Path, split: str) -> list[Path]:
    own = base / f"{split}.json"
    if own.is_file():
        return [own]
    if split == "train" and (base / "train_spider.json").is_file():  # the original Spider download
        return [p for p in (base / "train_spider.json", base / "train_others.json") if p.is_file()]
    return []


def _locate_base(root: Path, split: str) -> Path:
    """The directory holding the split file: ``root`` itself, or ``root/<split>`` for a BIRD root."""
    if not _is_split_name(split):
        here = _present_splits(root)
        raise SQLDataError(f"{root}: {split}.json is not a split (it holds schemas or the rest of another split)"
                           + (f"; the splits here: {', '.join(here)}" if here else ""))
    if _split_files(root, split):
        return root
    sub = root / split
    if sub.is_dir() and _split_files(sub, split):
        return sub
    present = _present_splits(root)
    if present:
        raise SQLDataError(f"{root}: no {split}.json (split {split!r}); the splits here: {', '.join(present)}")
    raise SQLDataError(f"{root}: no {split}.json (split {split!r}); {_LAYOUT_HINT}")


def _is_split_name(stem: str) -> bool:
    """Whether ``<stem>.json`` can be a split file: not ``tables.json`` / ``<split>_tables.json`` (schemas) nor
    ``train_others.json`` (the second half of Spider's ``train``)."""
    return stem != "tables" and not stem.endswith("_tables") and stem != "train_others"


def _present_splits(root: Path) -> list[str]:
    """The split names a Spider-layout (or BIRD) directory holds, sorted: ``<split>.json`` beside it, the original
    Spider download's ``train_spider.json`` as ``train``, and BIRD's ``<split>/<split>.json``."""
    if not root.is_dir():
        return []
    names = set()
    for path in root.iterdir():
        if path.is_file() and path.suffix == ".json" and _SPLIT_RE.match(path.stem) and _is_split_name(path.stem):
            names.add("train" if path.stem == "train_spider" else path.stem)
        elif path.is_dir() and (path / f"{path.name}.json").is_file():
            names.add(path.name)
    return sorted(names)


def _known_db_ids(base: Path, split: str) -> tuple[Path, set[str]] | None:
    for name in ("tables.json", f"{split}_tables.json"):
        path = base / name
        if path.is_file():
            data = _read_json(path, "tables file")
            if not isinstance(data, list):
                raise SQLDataError(f"{path}: must be a JSON list of database descriptions, got {type(data).__name__}")
            ids = set()
            for i, entry in enumerate(data):
                if not isinstance(entry, dict) or not isinstance(entry.get("db_id"), str):
                    raise SQLDataError(f"{path}: entry {i} has no string \"db_id\" field; every entry needs one")
                ids.add(entry["db_id"])
            return path, ids
    return None


def _db_dirs(base: Path, split: str) -> list[Path]:
    candidates = (base / "database", base / f"{split}_databases", base / f"{split}_database")
    return [d for d in candidates if d.is_dir()]


def _build_from_script(script: Path, db_id: str, cache_root: Path) -> Path:
    """Build (once) the SQLite file for ``script`` in the cache and return its path."""
    try:
        blob = script.read_bytes()
    except OSError as exc:
        raise SQLDataError(f"{script}: cannot read the schema script ({exc.strerror})") from None
    digest = hashlib.sha256(b"mrtpo-sql-v1\0" + db_id.encode() + b"\0" + blob).hexdigest()[:20]
    target_dir = cache_root / "sql" / digest
    target = target_dir / f"{db_id}.sqlite"
    if target.is_file():
        return target
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SQLDataError(f"{script}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target_dir, prefix=f".{db_id}.", suffix=".tmp")
        os.close(fd)
    except OSError as exc:
        raise SQLDataError(
            f"cannot write the database cache {target_dir} ({exc.strerror}); set {CACHE_ENV} to a writable directory"
        ) from None
    tmp = Path(tmp_name)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.executescript(text)
            conn.commit()
            tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        finally:
            conn.close()
        if tables == 0:
            raise SQLDataError(f"{script}: the script creates no table; add CREATE TABLE statements")
        os.replace(tmp, target)
    except sqlite3.Error as exc:
        raise SQLDataError(f"{script}: the SQL script failed: {exc}; fix the script") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


def _resolve_db(db_dirs: list[Path], db_id: str, cache_root: Path) -> Path | None:
    for d in db_dirs:
        sqlite_file = d / db_id / f"{db_id}.sqlite"
        if sqlite_file.is_file():
            return sqlite_file
        script = d / db_id / "schema.sql"
        if script.is_file():
            return _build_from_script(script, db_id, cache_root)
    return None


def _quote(name: str) -> str:
    if _IDENT_RE.match(name) and name.lower() not in _RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


def render_schema(db_path: str | os.PathLike[str]) -> str:
    """Compact ``CREATE TABLE`` rendering of a SQLite database, one table per line.

    Columns carry their declared type, ``PRIMARY KEY`` and ``REFERENCES``; a composite key or foreign key is a
    table constraint. Example: ``CREATE TABLE enrollment (student_id INTEGER REFERENCES student(id), ...)``.

    Args:
        db_path: the SQLite file (opened read-only).

    Returns:
        The schema text (tables in creation order).

    Raises:
        SQLDataError: the file cannot be opened or read as a SQLite database.
    """
    path = Path(db_path)
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise SQLDataError(f"{path}: cannot open the SQLite database ({exc})") from None
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
            )
        ]
        lines = []
        for table in tables:
            qt = table.replace("'", "''")
            cols = conn.execute(f"SELECT name, type, pk FROM pragma_table_info('{qt}') ORDER BY cid").fetchall()
            fks = conn.execute(
                f'SELECT id, seq, "table", "from", "to" FROM pragma_foreign_key_list(\'{qt}\') ORDER BY id, seq'
            ).fetchall()
            pk_cols = [c[0] for c in sorted((c for c in cols if c[2]), key=lambda c: c[2])]
            groups: dict[int, list[tuple]] = {}
            for fk in fks:
                groups.setdefault(fk[0], []).append(fk)
            inline_fk: dict[str, str] = {}
            table_fks: list[str] = []
            for rows in groups.values():
                ref = _quote(rows[0][2])
                to_cols = [r[4] for r in rows]
                target = ref if any(t is None for t in to_cols) else f"{ref}({', '.join(_quote(t) for t in to_cols)})"
                if len(rows) == 1 and rows[0][3] not in inline_fk:
                    inline_fk[rows[0][3]] = target
                else:
                    table_fks.append(f"FOREIGN KEY ({', '.join(_quote(r[3]) for r in rows)}) REFERENCES {target}")
            parts = []
            for name, ctype, _pk in cols:
                part = _quote(name) + (f" {ctype}" if ctype else "")
                if len(pk_cols) == 1 and name == pk_cols[0]:
                    part += " PRIMARY KEY"
                if name in inline_fk:
                    part += f" REFERENCES {inline_fk[name]}"
                parts.append(part)
            if len(pk_cols) > 1:
                parts.append(f"PRIMARY KEY ({', '.join(_quote(c) for c in pk_cols)})")
            parts.extend(table_fks)
            lines.append(f"CREATE TABLE {_quote(table)} ({', '.join(parts)})")
        return "\n".join(lines)
    except sqlite3.Error as exc:
        raise SQLDataError(f"{path}: cannot read the database schema ({exc}); is it a SQLite file?") from None
    finally:
        conn.close()


def _text_field(entry: dict, key: str, file: Path, index: int) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise SQLDataError(
            f"{file}: entry {index} field \"{key}\" must be a non-empty string, got {json.dumps(value)[:60]}; fix the entry"
        )
    return value


def load_spider(
    path: str | os.PathLike[str],
    split: str,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
) -> list[SQLExample]:
    """Load one split of a Spider-layout (or BIRD) directory.

    Args:
        path: the data directory (see the module docstring for the layout).
        split: the split name, e.g. ``"train"`` or ``"dev"``; reads ``<split>.json``.
        cache_dir: where databases built from ``schema.sql`` go (default :func:`default_cache_dir`).

    Returns:
        The examples in file order, with ids ``f"{split}-{index:04d}"``.

    Raises:
        SQLDataError: the directory or split file is missing, a file is not valid JSON (the message gives the
            line and column), an entry lacks ``db_id``/``question``/``query`` (or ``SQL``), a ``db_id`` is not in
            the tables file, a database has neither ``<db_id>.sqlite`` nor ``schema.sql``, or a schema script
            fails.
    """
    root = Path(path).expanduser()
    if not isinstance(split, str) or not _SPLIT_RE.match(split):
        raise SQLDataError(f"invalid split name {split!r}; use a name such as 'train' or 'dev'")
    if not root.exists():
        raise SQLDataError(f"SQL data directory {root} does not exist; {_LAYOUT_HINT}")
    if not root.is_dir():
        raise SQLDataError(f"SQL data path {root} is not a directory; {_LAYOUT_HINT}")
    base = _locate_base(root, split)
    cache_root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    known = _known_db_ids(base, split)
    db_dirs = _db_dirs(base, split)
    if not db_dirs:
        raise SQLDataError(f"{base}: no database/ directory (or {split}_databases/); {_LAYOUT_HINT}")

    resolved: dict[str, tuple[Path, str]] = {}
    examples: list[SQLExample] = []
    index = 0
    for file in _split_files(base, split):
        data = _read_json(file, "split file")
        if not isinstance(data, list):
            raise SQLDataError(f"{file}: must be a JSON list of examples, got a JSON {type(data).__name__}")
        for i, entry in enumerate(data):
            if not isinstance(entry, dict):
                raise SQLDataError(f"{file}: entry {i} must be a JSON object, got {type(entry).__name__}")
            query_key = "query" if "query" in entry else "SQL" if "SQL" in entry else None
            for key in ("db_id", "question", query_key or "query"):
                if key not in entry:
                    raise SQLDataError(
                        f"{file}: entry {i} has no \"{key}\" field; every entry needs \"db_id\", \"question\" "
                        f"and \"query\" (or BIRD's \"SQL\")"
                    )
            db_id = _text_field(entry, "db_id", file, i)
            question = _text_field(entry, "question", file, i).strip()
            query = _text_field(entry, query_key, file, i).strip()
            evidence = entry.get("evidence") or ""
            if not isinstance(evidence, str):
                raise SQLDataError(f"{file}: entry {i} field \"evidence\" must be a string; fix the entry")
            if db_id not in resolved:
                if known is not None and db_id not in known[1]:
                    raise SQLDataError(
                        f"{file}: entry {i} has unknown db_id {db_id!r}: it is not in {known[0]}; "
                        f"fix the db_id or add the database to {known[0].name}"
                    )
                if "/" in db_id or "\\" in db_id or db_id in (".", ".."):
                    raise SQLDataError(f"{file}: entry {i} field \"db_id\" {db_id!r} is not a database name")
                db_path = _resolve_db(db_dirs, db_id, cache_root)
                if db_path is None:
                    where = " or ".join(f"{d}/{db_id}/{db_id}.sqlite or {d}/{db_id}/schema.sql" for d in db_dirs)
                    raise SQLDataError(f"{file}: entry {i} uses database {db_id!r} but there is no {where}; add it")
                resolved[db_id] = (db_path, render_schema(db_path))
            db_path, schema = resolved[db_id]
            examples.append(
                SQLExample(
                    id=f"{split}-{index:04d}",
                    db_id=db_id,
                    question=question,
                    query=query,
                    db_path=db_path,
                    schema=schema,
                    evidence=evidence.strip(),
                )
            )
            index += 1
    return examples
