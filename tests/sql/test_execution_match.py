"""Execution-match semantics: bags unless the gold orders its output, positional columns, float tolerance."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mrtpo_sdk.sql.execution_match import gold_is_ordered, results_match, values_equal


def test_bag_ignores_order_but_counts_duplicates() -> None:
    assert results_match([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], ordered=False)
    assert not results_match([(1,), (1,)], [(1,)], ordered=False)
    assert not results_match([(1,), (1,), (2,)], [(1,), (2,), (2,)], ordered=False)
    assert results_match([(1,), (2,), (1,)], [(1,), (1,), (2,)], ordered=False)


def test_ordered_requires_same_order() -> None:
    assert results_match([(1,), (2,)], [(1,), (2,)], ordered=True)
    assert not results_match([(2,), (1,)], [(1,), (2,)], ordered=True)


def test_columns_positional_names_ignored() -> None:
    # a SELECT a, b vs SELECT b, a mismatch; the caller passes rows only, so names never matter
    assert not results_match([(1, "x")], [("x", 1)], ordered=False)
    assert not results_match([(1, "x")], [(1,)], ordered=False)
    assert not results_match([(1,)], [(1, None)], ordered=False)


def test_numbers_and_float_tolerance() -> None:
    assert results_match([(3,)], [(3.0,)], ordered=False)
    assert results_match([(1 / 3,)], [(0.3333333333,)], ordered=False)
    assert not results_match([(0.333,)], [(1 / 3,)], ordered=False)
    assert results_match([(1e12 + 1,)], [(1e12,)], ordered=False)  # relative tolerance
    assert results_match([(0.0,)], [(1e-9,)], ordered=False)  # absolute tolerance near zero
    assert not results_match([(10**18,)], [(10**18 + 1,)], ordered=False)  # integers are exact
    assert results_match([(True,)], [(1,)], ordered=False)
    assert results_match([(2.5, "b"), (1.0000000001, "a")], [(1.0, "a"), (2.5, "b")], ordered=False)
    # near-equal floats whose sort order disagrees with the other column: the greedy fallback finds the match
    assert results_match(
        [(1.0000000001, "b"), (1.0, "a")], [(1.0, "b"), (1.0000000001, "a")], ordered=False
    )
    assert results_match([(2.0000000001,), (1,)], [(1.0,), (2,)], ordered=True) is False
    assert results_match([(1.0000000001,), (2,)], [(1.0,), (2,)], ordered=True)


def test_null_and_types() -> None:
    assert results_match([(None,)], [(None,)], ordered=False)
    assert not results_match([(None,)], [(0,)], ordered=False)
    assert not results_match([(0,)], [(None,)], ordered=False)
    assert not results_match([("",)], [(None,)], ordered=False)
    assert not results_match([("3",)], [(3,)], ordered=False)
    assert not results_match([("Alice",)], [("alice",)], ordered=False)
    assert results_match([(b"\x00\x01",)], [(b"\x00\x01",)], ordered=False)
    assert results_match([(None, 1), (2, None)], [(2, None), (None, 1)], ordered=False)
    assert values_equal(float("nan"), float("nan"))


def test_failed_or_empty_results() -> None:
    assert not results_match(None, [(1,)], ordered=False)
    assert not results_match([(1,)], None, ordered=False)
    assert results_match([], [], ordered=False)
    assert not results_match([], [(1,)], ordered=False)


def test_real_queries_on_sqlite() -> None:
    conn = sqlite3.connect(":memory:")
    conn.executescript(
        """
        CREATE TABLE emp (name TEXT, dept TEXT, salary REAL);
        INSERT INTO emp VALUES ('ann', 'eng', 100), ('bob', 'eng', 80), ('cy', 'ops', 80), ('di', 'ops', 50);
        """
    )

    def rows(q: str) -> list[tuple]:
        return conn.execute(q).fetchall()

    gold = "SELECT dept, avg(salary) FROM emp GROUP BY dept"
    assert results_match(rows("SELECT dept, sum(salary) * 1.0 / count(*) FROM emp GROUP BY dept ORDER BY dept DESC"),
                         rows(gold), ordered=gold_is_ordered(gold))
    gold = "SELECT name FROM emp ORDER BY salary DESC, name"
    assert not results_match(rows("SELECT name FROM emp ORDER BY name DESC"), rows(gold), ordered=gold_is_ordered(gold))
    assert results_match(rows("SELECT name AS n FROM emp ORDER BY salary DESC, name ASC"), rows(gold),
                         ordered=gold_is_ordered(gold))
    gold = "SELECT DISTINCT salary FROM emp"
    assert not results_match(rows("SELECT salary FROM emp"), rows(gold), ordered=gold_is_ordered(gold))
    gold = "SELECT count(*) FROM emp WHERE salary > 60"
    assert results_match(rows("SELECT count(name) AS n FROM emp WHERE salary >= 80"), rows(gold), ordered=False)


@pytest.mark.parametrize(
    ("sql", "ordered"),
    [
        ("SELECT a FROM t ORDER BY a", True),
        ("select a from t order by a desc limit 1", True),
        ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", True),
        ("WITH c AS (SELECT 1 AS x) SELECT x FROM c ORDER BY x", True),
        ("SELECT a FROM t", False),
        ("SELECT a FROM t LIMIT 3", False),
        ("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)", False),
        ("SELECT a FROM t WHERE b IN (SELECT b FROM u ORDER BY b LIMIT 1)", False),
        ("SELECT a, rank() OVER (ORDER BY a) FROM t", False),
        ("WITH c AS (SELECT a FROM t ORDER BY a) SELECT a FROM c", False),
        ("SELECT 'order by' FROM t", False),
        ("SELECT a FROM t EXCEPT SELECT a FROM u", False),
        ("not sql at all ORDER BY", True),
        ("", False),
    ],
)
def test_gold_is_ordered(sql: str, ordered: bool) -> None:
    assert gold_is_ordered(sql) is ordered


cell = st.one_of(st.none(), st.integers(-5, 5), st.floats(-5, 5, allow_nan=False), st.sampled_from(["a", "b", ""]))
rows_strategy = st.lists(st.tuples(cell, cell), max_size=8)


@given(rows_strategy, st.randoms(use_true_random=False))
def test_bag_match_is_permutation_invariant(rows: list[tuple], rnd) -> None:
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    assert results_match(shuffled, rows, ordered=False)
    assert results_match(rows, rows, ordered=True)
    if rows:
        assert not results_match(rows[:-1], rows, ordered=False)


@given(st.text(max_size=200))
def test_gold_is_ordered_never_raises(text: str) -> None:
    assert gold_is_ordered(text) in (True, False)
