"""Synthetic warm-start questions: every query runs on its database and answers, without ties, from the schema."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from mrtpo_sdk.sql.execution_match import gold_is_ordered
from mrtpo_sdk.sql.data import load_spider, query_categories
from mrtpo_sdk.sql.sandbox import execute_sql
from mrtpo_sdk.sql.synthetic import _valid, synthetic_examples, synthetic_pairs

DATA = Path(__file__).resolve().parents[2] / "tasks" / "data" / "sql"


@pytest.fixture(scope="module")
def train(tmp_path_factory):
    return load_spider(DATA, "train", cache_dir=tmp_path_factory.mktemp("sql-cache"))


@pytest.fixture(scope="module")
def synth(train):
    return synthetic_examples(train)


def test_every_synthetic_query_runs_and_returns_rows(synth, train):
    assert len(synth) > 600
    assert {ex.db_id for ex in synth} == {ex.db_id for ex in train}
    by_db = {ex.db_id: ex for ex in train}
    for ex in synth:
        assert ex.id.startswith(f"synth-{ex.db_id}-")
        assert ex.db_path == by_db[ex.db_id].db_path and ex.schema == by_db[ex.db_id].schema
        run = execute_sql(ex.db_path, ex.query)
        assert run.ok, (ex.query, run.error)
        assert run.rows and any(v is not None for row in run.rows for v in row), ex.query


def test_synthetic_queries_cover_the_training_shapes(synth):
    kinds = collections.Counter(k for ex in synth for k in query_categories(ex.query))
    for kind in ("join", "aggregate", "group-having", "order-limit", "nested"):
        assert kinds[kind] >= 20, (kind, kinds)
    ordered = [ex for ex in synth if gold_is_ordered(ex.query)]
    assert len(ordered) >= 50


def test_synthetic_questions_use_the_schema_words_and_database_values(synth):
    by_query = {ex.query: ex.question for ex in synth if ex.db_id == "university"}
    assert by_query["SELECT count(*) FROM instructor"] in (
        "How many instructors are there?",
        "How many instructors does the database have?",
        "Count the instructors.",
    )
    hire = [q for sql, q in by_query.items() if "hire_year" in sql]
    assert hire and all("hire year" in q for q in hire)
    # values come from the database: each filter on a department's name names one that exists, in the question too
    import re

    names = {"Computer Science", "Mathematics", "Physics", "History", "Biology", "Economics", "Philosophy"}
    filters = [(sql, re.search(r"d\.name = '([^']+)'", sql)) for sql in by_query]
    filters = [(sql, m.group(1)) for sql, m in filters if m]
    assert len(filters) >= 3
    assert all(value in names and value in by_query[sql] for sql, value in filters)


def test_synthetic_examples_leave_out_training_questions_and_queries(synth, train):
    known_q = {(ex.db_id, ex.question) for ex in train}
    known_sql = {(ex.db_id, ex.query) for ex in train}
    assert not [ex for ex in synth if (ex.db_id, ex.question) in known_q or (ex.db_id, ex.query) in known_sql]
    # "How many students are there?" / SELECT count(*) FROM student is a training example: not repeated
    assert not [ex for ex in synth if ex.db_id == "university" and ex.query == "SELECT count(*) FROM student"]


def test_synthetic_examples_are_deterministic_and_capped(train, synth):
    assert [(e.id, e.question, e.query) for e in synthetic_examples(train)] == [
        (e.id, e.question, e.query) for e in synth
    ]
    capped = synthetic_examples(train, per_database=10)
    assert collections.Counter(e.db_id for e in capped) == {db: 10 for db in {e.db_id for e in train}}
    assert {(e.question, e.query) for e in capped} <= {(e.question, e.query) for e in synth}
    other = synthetic_examples(train, seed=1)
    # the seed changes the phrasings and the sampled values, not the shapes
    assert [e.question for e in other] != [e.question for e in synth]
    assert abs(len(other) - len(synth)) < 0.1 * len(synth)
    fixed = lambda exs: {e.query for e in exs if "WHERE" not in e.query and "LIMIT" not in e.query}  # noqa: E731
    assert len(fixed(other) & fixed(synth)) >= 0.95 * len(fixed(synth))


def test_ties_and_empty_results_are_dropped(train):
    db = str(next(ex.db_path for ex in train if ex.db_id == "university"))
    assert _valid(db, "SELECT name FROM student ORDER BY gpa DESC LIMIT 3")
    assert not _valid(db, "SELECT name FROM department ORDER BY building")  # two departments in Gibbon Hall
    assert not _valid(db, "SELECT name FROM student WHERE gpa > 100")  # no row
    assert not _valid(db, "SELECT nme FROM student")  # error
    pairs = synthetic_pairs(db)
    assert "SELECT name FROM department ORDER BY building" not in {sql for _, sql, _ in pairs}


def _bundled_task():
    from mrtpo_sdk.loader import load_task

    return load_task(str(Path(__file__).resolve().parents[2] / "tasks" / "sql.py"))


def test_bundled_training_split_is_the_written_questions_then_the_synthetic_ones(train, synth):
    task = _bundled_task()
    split = task.load_examples("train")
    written = task.with_options(synthetic=False).load_examples("train")
    assert [ex.id for ex in written] == [ex.id for ex in train]
    assert [ex.id for ex in split] == [ex.id for ex in train] + [ex.id for ex in synth]
    assert [ex.query for ex in split[len(train):]] == [ex.query for ex in synth]
    # the dev split never gets them, and official semantics reach the synthetic examples too
    with_synth = task.with_options(synthetic="true")
    assert [ex.id for ex in task.load_examples("dev")] == [ex.id for ex in with_synth.load_examples("dev")]
    assert not any(ex.id.startswith("synth-") for ex in task.load_examples("dev"))
    official = task.with_options(semantics="official").load_examples("train")
    assert len(official) == len(split) and {ex.semantics for ex in official} == {"official"}


def test_synthetic_option_is_a_bool_and_off_for_a_data_folder():
    from mrtpo_sdk import MRTPOError

    task = _bundled_task()
    sql_data_dir = Path(__file__).resolve().parents[2] / "tasks" / "data" / "sql"  # given as --data: a Spider folder
    with pytest.raises(MRTPOError, match=r"-T synthetic=maybe: option 'synthetic' of task 'sql' is a bool"):
        task.with_options(synthetic="maybe")
    folder = [ex.id for ex in task.load_examples("train", str(sql_data_dir))]
    assert folder and not any(eid.startswith("synth-") for eid in folder)
    added = [ex.id for ex in task.with_options(synthetic="on").load_examples("train", str(sql_data_dir))]
    assert added[: len(folder)] == folder and any(eid.startswith("synth-") for eid in added[len(folder):])


def test_every_synthetic_reference_earns_every_reward(synth):
    """The synthetic questions are RL prompts too: their references must score 1 on all three rewards."""
    task = _bundled_task()
    failures = []
    for ex in synth:
        rewards = [r.reward for r in task.score(ex, task.reference_completion(ex))]
        if rewards != [1.0, 1.0, 1.0]:
            failures.append((ex.id, ex.query, rewards))
    assert not failures, failures[:5]
