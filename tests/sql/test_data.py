"""The bundled SQL data loads, every gold query runs and answers, and the loader fails with one clear error."""

from __future__ import annotations

import collections
import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from mrtpo_sdk.errors import MRTPOError
from mrtpo_sdk.sql.execution_match import gold_is_ordered, results_match
from mrtpo_sdk.sql.data import (
    CATEGORIES,
    SQLDataError,
    SQLExample,
    bundled_data_dir,
    load_spider,
    query_categories,
    render_schema,
)
from mrtpo_sdk.sql.sandbox import execute_sql

DATA = Path(__file__).resolve().parents[2] / "tasks" / "data" / "sql"


def _tree(path: Path) -> dict[str, int]:
    return {str(p.relative_to(path)): p.stat().st_mtime_ns for p in sorted(path.rglob("*"))}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sql-cache")


@pytest.fixture(scope="module")
def splits(cache: Path) -> dict[str, list[SQLExample]]:
    before = _tree(DATA)
    loaded = {split: load_spider(DATA, split, cache_dir=cache) for split in ("train", "dev")}
    assert _tree(DATA) == before, "loading must never write into the data directory"
    return loaded


def test_bundled_data_dir() -> None:
    assert bundled_data_dir() == DATA


def test_splits_load_with_deterministic_ids(splits: dict[str, list[SQLExample]], cache: Path) -> None:
    train, dev = splits["train"], splits["dev"]
    assert len(train) >= 180 and len(dev) >= 40
    assert [e.id for e in dev[:3]] == ["dev-0000", "dev-0001", "dev-0002"]
    assert len({e.id for e in train}) == len(train)
    assert {e.db_id for e in train} == {e.db_id for e in dev}
    assert len({e.db_id for e in train}) >= 6
    for e in train + dev:
        assert e.question and e.query and e.schema.startswith("CREATE TABLE ")
        assert e.db_path.is_file() and cache in e.db_path.parents
    again = load_spider(DATA, "dev", cache_dir=cache)
    assert again == dev


def test_every_gold_query_answers(splits: dict[str, list[SQLExample]]) -> None:
    for e in splits["train"] + splits["dev"]:
        res = execute_sql(e.db_path, e.query)
        assert res.ok, (e.id, e.query, res.error)
        assert res.rows, (e.id, e.query)


def test_gold_answers_do_not_depend_on_scan_order(splits: dict[str, list[SQLExample]]) -> None:
    for e in splits["train"] + splits["dev"]:
        conn = sqlite3.connect(e.db_path.as_uri() + "?mode=ro", uri=True)
        try:
            forward = conn.execute(e.query).fetchall()
            conn.execute("PRAGMA reverse_unordered_selects = ON")
            backward = conn.execute(e.query).fetchall()
        finally:
            conn.close()
        assert results_match(backward, forward, ordered=gold_is_ordered(e.query)), (e.id, e.query)


def test_category_coverage(splits: dict[str, list[SQLExample]]) -> None:
    counts = collections.Counter(k for e in splits["train"] + splits["dev"] for k in query_categories(e.query))
    for kind in CATEGORIES:
        assert counts[kind] >= 10, (kind, counts)


def test_query_categories() -> None:
    assert query_categories("SELECT a FROM t") == frozenset()
    assert query_categories("SELECT count(*) FROM t JOIN u ON t.x = u.x GROUP BY t.y HAVING count(*) > 1") == {
        "join", "aggregate", "group-having"}
    assert query_categories("SELECT a FROM t WHERE b IN (SELECT b FROM u) ORDER BY a LIMIT 2") == {"nested", "order-limit"}
    assert query_categories("SELECT a FROM t EXCEPT SELECT a FROM u") == {"set-op"}
    assert query_categories("SELECT rank() OVER (ORDER BY a) FROM t") == frozenset()
    assert query_categories("not sql (((") == frozenset()


def test_schema_rendering(splits: dict[str, list[SQLExample]]) -> None:
    uni = next(e for e in splits["train"] if e.db_id == "university")
    lines = uni.schema.splitlines()
    assert lines[0] == "CREATE TABLE department (dept_id INTEGER PRIMARY KEY, name TEXT, building TEXT, budget INTEGER)"
    assert (
        "CREATE TABLE enrollment (student_id INTEGER REFERENCES student(student_id), "
        "course_id INTEGER REFERENCES course(course_id), semester TEXT, grade TEXT, PRIMARY KEY (student_id, course_id))"
    ) in lines
    assert len(lines) == 5


def test_render_schema_quotes_odd_names(tmp_path: Path) -> None:
    db = tmp_path / "odd.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript(
        'CREATE TABLE "order" (id INTEGER PRIMARY KEY, "unit price" REAL);'
        'CREATE TABLE line (a INT, b INT, FOREIGN KEY (a, b) REFERENCES "order"(id, id), PRIMARY KEY (a, b));'
    )
    conn.close()
    assert render_schema(db).splitlines() == [
        'CREATE TABLE "order" (id INTEGER PRIMARY KEY, "unit price" REAL)',
        'CREATE TABLE line (a INT, b INT, PRIMARY KEY (a, b), FOREIGN KEY (a, b) REFERENCES "order"(id, id))',
    ]


# ---- loader errors -------------------------------------------------------------------------------------------


def _make(root: Path, entries: object = None, *, schema: str | None = None, tables: object = None,
          sqlite_file: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if entries is None:
        entries = [{"db_id": "shop", "question": "How many items?", "query": "SELECT count(*) FROM item"}]
    (root / "dev.json").write_text(entries if isinstance(entries, str) else json.dumps(entries))
    db_dir = root / "database" / "shop"
    db_dir.mkdir(parents=True, exist_ok=True)
    script = schema if schema is not None else "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO item VALUES (1, 'a');"
    if sqlite_file:
        conn = sqlite3.connect(db_dir / "shop.sqlite")
        conn.executescript(script)
        conn.close()
    else:
        (db_dir / "schema.sql").write_text(script)
    if tables is not None:
        (root / "tables.json").write_text(json.dumps(tables))
    return root


def _error(path: Path, split: str = "dev", cache: Path | None = None) -> str:
    with pytest.raises(SQLDataError) as info:
        load_spider(path, split, cache_dir=cache or path.parent / "cache")
    assert isinstance(info.value, ValueError) and isinstance(info.value, MRTPOError)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_minimal_directory_loads(tmp_path: Path) -> None:
    root = _make(tmp_path / "data")
    [ex] = load_spider(root, "dev", cache_dir=tmp_path / "cache")
    assert ex.id == "dev-0000" and ex.db_id == "shop"
    assert ex.schema == "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT)"
    assert execute_sql(ex.db_path, ex.query).rows == [(1,)]
    assert sorted(p.name for p in (root / "database" / "shop").iterdir()) == ["schema.sql"]


def test_sqlite_file_preferred_and_used_in_place(tmp_path: Path) -> None:
    root = _make(tmp_path / "data", sqlite_file=True)
    [ex] = load_spider(root, "dev", cache_dir=tmp_path / "cache")
    assert ex.db_path == root / "database" / "shop" / "shop.sqlite"
    assert not (tmp_path / "cache").exists()


def test_missing_directory(tmp_path: Path) -> None:
    msg = _error(tmp_path / "nowhere")
    assert "nowhere does not exist" in msg and "--data PATH" in msg


def test_missing_split_file_names_the_splits_present(tmp_path: Path) -> None:
    root = _make(tmp_path / "data", tables=[{"db_id": "shop"}])
    msg = _error(root, "train")
    assert msg == f"{root}: no train.json (split 'train'); the splits here: dev"
    entry = {"db_id": "shop", "question": "q", "query": "SELECT 1"}
    (root / "train_spider.json").write_text(json.dumps([entry]))
    (root / "train_others.json").write_text(json.dumps([entry]))
    (root / "test").mkdir()
    (root / "test" / "test.json").write_text(json.dumps([entry]))
    assert _error(root, "tset").endswith("; the splits here: dev, test, train")
    # a schema file or the second half of Spider's train is not a split
    for name in ("tables", "dev_tables", "train_others"):
        (root / f"{name}.json").write_text(json.dumps([entry]))
        assert _error(root, name) == (f"{root}: {name}.json is not a split (it holds schemas or the rest of another "
                                      f"split); the splits here: dev, test, train")


def test_directory_without_split_files_gets_the_layout(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    msg = _error(tmp_path / "data", "train")
    assert "no train.json" in msg and "expected a Spider-layout directory" in msg and "--data PATH" in msg


def test_json_syntax_error_names_line(tmp_path: Path) -> None:
    root = _make(tmp_path / "data", '[\n  {"db_id": "shop",\n   "question": "q" "query": "SELECT 1"}\n]')
    msg = _error(root)
    assert "dev.json" in msg and "line 3" in msg and "invalid JSON" in msg


def test_missing_key(tmp_path: Path) -> None:
    root = _make(tmp_path / "data", [{"db_id": "shop", "query": "SELECT 1"}])
    msg = _error(root)
    assert "dev.json" in msg and "entry 0" in msg and '"question"' in msg


def test_wrong_types(tmp_path: Path) -> None:
    assert "must be a JSON list" in _error(_make(tmp_path / "a", {"db_id": "shop"}))
    assert "must be a JSON object" in _error(_make(tmp_path / "b", ["x"]))
    assert "non-empty string" in _error(_make(tmp_path / "c", [{"db_id": "shop", "question": "", "query": "SELECT 1"}]))


def test_unknown_db_id(tmp_path: Path) -> None:
    root = _make(tmp_path / "data", tables=[{"db_id": "shop"}],
                 entries=[{"db_id": "shoop", "question": "q", "query": "SELECT 1"}])
    msg = _error(root)
    assert "unknown db_id 'shoop'" in msg and "tables.json" in msg


def test_missing_database(tmp_path: Path) -> None:
    root = _make(tmp_path / "data", entries=[{"db_id": "depot", "question": "q", "query": "SELECT 1"}])
    msg = _error(root)
    assert "'depot'" in msg and "depot/depot.sqlite" in msg and "depot/schema.sql" in msg


def test_broken_schema_script(tmp_path: Path) -> None:
    root = _make(tmp_path / "data", schema="CREATE TABLE item (id INTEGER;")
    msg = _error(root)
    assert "schema.sql" in msg and "syntax error" in msg
    assert not list((tmp_path / "cache").rglob("*.sqlite")) and not list((tmp_path / "cache").rglob("*.tmp"))


def test_unwritable_cache(tmp_path: Path) -> None:
    root = _make(tmp_path / "data")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache directory should go")
    msg = _error(root, cache=blocker)
    assert "MRTPO_SDK_CACHE_DIR" in msg


def test_cache_env_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _make(tmp_path / "data")
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "envcache"))
    [ex] = load_spider(root, "dev")
    assert (tmp_path / "envcache") in ex.db_path.parents


def test_bird_layout(tmp_path: Path) -> None:
    dev = tmp_path / "bird" / "dev"
    dev.mkdir(parents=True)
    (dev / "dev.json").write_text(json.dumps([
        {"question_id": 0, "db_id": "shop", "question": "How many items?", "evidence": "items are rows of item",
         "SQL": "SELECT count(*) FROM item", "difficulty": "simple"}]))
    (dev / "dev_tables.json").write_text(json.dumps([{"db_id": "shop"}]))
    db_dir = dev / "dev_databases" / "shop"
    db_dir.mkdir(parents=True)
    conn = sqlite3.connect(db_dir / "shop.sqlite")
    conn.executescript("CREATE TABLE item (id INTEGER PRIMARY KEY); INSERT INTO item VALUES (1), (2);")
    conn.close()
    for path in (tmp_path / "bird", dev):
        [ex] = load_spider(path, "dev", cache_dir=tmp_path / "cache")
        assert ex.query == "SELECT count(*) FROM item" and ex.evidence == "items are rows of item"
        assert execute_sql(ex.db_path, ex.query).rows == [(2,)]


def test_spider_train_files(tmp_path: Path) -> None:
    root = _make(tmp_path / "data")
    entry = {"db_id": "shop", "question": "q", "query": "SELECT 1"}
    (root / "train_spider.json").write_text(json.dumps([entry, entry]))
    (root / "train_others.json").write_text(json.dumps([entry]))
    assert [e.id for e in load_spider(root, "train", cache_dir=tmp_path / "c")] == ["train-0000", "train-0001", "train-0002"]


def _load_in_child(args: tuple[str, str]) -> str:
    root, cache = args
    return str(load_spider(root, "dev", cache_dir=cache)[0].db_path)


def test_concurrent_builds_agree(tmp_path: Path) -> None:
    root = _make(tmp_path / "data")
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        paths = pool.map(_load_in_child, [(str(root), str(tmp_path / "cache"))] * 4)
    assert len(set(paths)) == 1
    assert not list((tmp_path / "cache").rglob("*.tmp"))
