"""Test-suite execution accuracy (Zhong, Yu & Klein 2020) under ``training``: perturbed copies of each database,
and answers that hard-code the result instead of computing it."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from mrtpo_sdk.sql.perturb import COPIES, perturbed_copies

from .conftest import fence


@pytest.fixture(scope="module")
def bundled(sql_task):
    from mrtpo_sdk import load_task

    task = load_task(Path(__file__).resolve().parents[2] / "tasks" / "sql.py")
    return task, {e.id: e for e in task.load_examples("train") + task.load_examples("dev")}


def _dump(path: str) -> str:
    with sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True) as conn:
        return "\n".join(conn.iterdump())


def _schema(path: str) -> list:
    with sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True) as conn:
        return conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()


def _counts(path: str) -> dict:
    with sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


def test_hard_coded_answers_earn_no_result_match(bundled):
    """Each of these returns the reference's rows on the bundled database (so it matches under official semantics
    and slips past every syntactic rule) but computes nothing; on a perturbed copy of the
    database the reference, run again, returns other rows."""
    task, by_id = bundled
    holes = {
        "train-0020": [
            "SELECT name FROM department WHERE dept_id IN (4, 7)",
            "SELECT name FROM department WHERE rowid IN (4, 7)",
            "SELECT name FROM department WHERE budget IN (410000, 255000)",
            "SELECT name FROM department WHERE name NOT IN ('Computer Science','Mathematics','Physics','Biology','Economics')",
            "SELECT name FROM department WHERE name LIKE 'Hist%' OR name LIKE 'Phil%'",
            "SELECT name FROM department WHERE CASE name WHEN 'History' THEN 1 WHEN 'Philosophy' THEN 1 ELSE 0 END",
            "SELECT name FROM department WHERE 'History,Philosophy' LIKE '%' || name || '%'",
        ],
        "train-0000": [
            "SELECT 0x20 + 0*count(*) FROM student",
            "SELECT unicode(' ') + 0*count(*) FROM student",
            "SELECT length('abcdefghijklmnopqrstuvwxyz012345') + 0*count(*) FROM student",
            "SELECT json_extract('[32]', '$[0]') + 0*count(*) FROM student",
        ],
    }
    from mrtpo_sdk.sql import results_match
    from mrtpo_sdk.sql.score import PERTURBED_MISMATCH, reference_result, run_cached, training_mismatch

    for eid, answers in holes.items():
        ex = by_id[eid]
        gold = reference_result(str(ex.db_path), ex.query)
        for answer in answers:
            run = run_cached(str(ex.db_path), answer)
            assert results_match(run.rows, gold.run.rows, ordered=gold.ordered), answer  # right rows here
            assert [r.reward for r in task.score(ex, fence(answer))] == [1.0, 1.0, 0.0], (eid, answer)
            assert training_mismatch(run, gold) == PERTURBED_MISMATCH, answer


def test_correct_rewrites_still_match_on_every_copy(bundled):
    task, by_id = bundled
    correct = {
        "train-0020": [
            "SELECT d.name FROM department AS d JOIN student AS s ON s.dept_id = d.dept_id GROUP BY d.name "
            "HAVING avg(s.gpa) > 3.0",
            "SELECT DISTINCT name FROM department WHERE dept_id IN (SELECT dept_id FROM student GROUP BY dept_id "
            "HAVING avg(gpa) > 3.0)",
            "WITH a AS (SELECT dept_id, avg(gpa) AS g FROM student GROUP BY dept_id) "
            "SELECT department.name FROM department, a WHERE a.dept_id = department.dept_id AND a.g > 3 ORDER BY 1 DESC",
            "SELECT x.n FROM (SELECT d.name AS n, avg(s.gpa) AS g FROM student s JOIN department d "
            "USING (dept_id) GROUP BY d.dept_id) x WHERE x.g > 3.0",
        ],
        "train-0000": ["SELECT count(student_id) FROM student", "SELECT count(*) AS n FROM student s",
                       "SELECT sum(1) FROM student", "WITH c AS (SELECT count(*) AS n FROM student) SELECT n FROM c"],
    }
    for eid, answers in correct.items():
        for answer in answers:
            assert [r.reward for r in task.score(by_id[eid], fence(answer))] == [1.0, 1.0, 1.0], (eid, answer)


def test_every_reference_matches_itself_on_every_copy(bundled):
    from mrtpo_sdk.sql.score import perturbed_mismatch, reference_result, run_cached

    _, by_id = bundled
    checked = 0
    for ex in by_id.values():
        gold = reference_result(str(ex.db_path), ex.query)
        assert not perturbed_mismatch(run_cached(str(ex.db_path), ex.query), gold), ex.id
        for copy in perturbed_copies(ex.db_path):
            checked += reference_result(copy, ex.query).run.ok
    assert checked  # the references run on the copies


def test_perturbed_copies_are_deterministic_and_valid(bundled, tmp_path, monkeypatch):
    from mrtpo_sdk.sql import perturb

    _, by_id = bundled
    dbs = sorted({str(e.db_path) for e in by_id.values()})
    assert len(dbs) >= 2
    for db in dbs:
        copies = perturbed_copies(db)
        assert len(copies) == COPIES
        # built again from scratch elsewhere: the same bytes of data
        monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / Path(db).stem))
        monkeypatch.setattr(perturb, "_known", {})
        again = perturbed_copies(db)
        monkeypatch.undo()
        perturb._known.clear()
        assert again != copies
        original = _counts(db)
        changed = False
        for k, (a, b) in enumerate(zip(copies, again)):
            assert hashlib.sha256(_dump(a).encode()).digest() == hashlib.sha256(_dump(b).encode()).digest()
            assert _schema(a) == _schema(db)
            counts = _counts(a)
            assert counts.keys() == original.keys()
            if k == 0:
                assert counts == original  # the shuffle keeps every row
            else:
                assert all(counts[t] <= original[t] for t in original) and counts != original
            with sqlite3.connect(a) as conn:
                assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
                assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            changed |= _dump(a) != _dump(db)
        assert changed


def test_shuffle_keeps_keys_and_each_columns_values(bundled):
    _, by_id = bundled
    db = str(by_id["train-0020"].db_path)
    shuffled = perturbed_copies(db)[0]
    with sqlite3.connect(db) as a, sqlite3.connect(shuffled) as b:
        for (table,) in a.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            cols = [r[1] for r in a.execute(f'PRAGMA table_info("{table}")')]
            for c in cols:
                mine = sorted(map(repr, (r[0] for r in a.execute(f'SELECT "{c}" FROM "{table}"'))))
                theirs = sorted(map(repr, (r[0] for r in b.execute(f'SELECT "{c}" FROM "{table}"'))))
                assert mine == theirs, (table, c)  # the same bag of values
            key = [r[1] for r in a.execute(f'PRAGMA table_info("{table}")') if r[5] or r[1].endswith("_id")]
            if key:
                sel = ", ".join(f'"{k}"' for k in key)
                assert (a.execute(f'SELECT {sel} FROM "{table}" ORDER BY rowid').fetchall()
                        == b.execute(f'SELECT {sel} FROM "{table}" ORDER BY rowid').fetchall())


def test_a_database_over_the_size_limit_gets_no_copies(tmp_path, monkeypatch):
    from mrtpo_sdk.sql import perturb

    monkeypatch.setattr(perturb, "MAX_DB_BYTES", 0)
    monkeypatch.setattr(perturb, "_known", {})
    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, i * 10) for i in range(5)])
    assert perturbed_copies(path) == ()
