"""Shared fixtures for the SQL tests: the bundled task module and a small database with ties."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import pytest

from mrtpo_sdk.sql import SQLExample, render_schema

ROOT = Path(__file__).resolve().parents[2]


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def sql_task(tmp_path_factory):
    """``tasks/sql.py`` as a module (its ``examples``, verifiers and ``official_verdict``)."""
    import os

    os.environ.setdefault("MRTPO_SDK_CACHE_DIR", str(tmp_path_factory.mktemp("sqlcache")))
    return load_module(ROOT / "tasks" / "sql.py", "bundled_sql_task")


@pytest.fixture(scope="session")
def tie_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tiedb") / "school.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE student (id INTEGER PRIMARY KEY, name TEXT, city TEXT, gpa REAL, year INTEGER);
        CREATE TABLE club (id INTEGER PRIMARY KEY, title TEXT);
        INSERT INTO student VALUES (1, 'ann', 'paris', 3.9, 1), (2, 'bob', 'rome', 3.9, 2), (3, 'cy', 'oslo', 3.5, 2),
                                   (4, 'di', 'rome', 3.1, 3), (5, 'ed', 'lima', 3.1, 3), (6, 'flo', 'rome', 2.5, 4);
        INSERT INTO club VALUES (1, 'chess'), (2, 'choir');
        """
    )
    conn.commit()
    conn.close()
    return path


@pytest.fixture(scope="session")
def make_example(tie_db):
    schema = render_schema(tie_db)

    def make(query: str, semantics: str = "training", question: str = "q") -> SQLExample:
        return SQLExample("t-0000", "school", question, query, tie_db, schema, "", semantics)

    return make


def fence(query: str) -> str:
    return f"```sql\n{query}\n```"
