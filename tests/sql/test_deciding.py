"""Where a SQL completion's rewards are decided (mrtpo_sdk.sql.deciding and the task's deciding= wiring): exact
spans on hand-built completions; no crash on any text."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.sql.deciding import differing_spans, error_spans, format_spans, name_spans, sqlite_error_names


def texts(text: str, spans) -> list[str]:
    return None if spans is None else [text[s:e] for s, e in spans]


# ---------------------------------------------------------------------------------------------- sql_format
def test_format_spans_are_the_fence_markers():
    text = "Here:\n```sql\nSELECT 1\n```\n"
    assert format_spans(text) == [(6, 12), (22, 25)]
    assert format_spans("```python\nx\n```") == [(0, 9), (12, 15)]
    assert format_spans("````sql\nSELECT 1\n````") == [(0, 7), (17, 21)]
    assert format_spans("```sql\nSELECT 1") == [(0, 6)]  # unclosed: where it breaks


def test_format_spans_point_at_prose_in_a_fence():
    text = "```sql\nThe answer is 3\n```"
    assert texts(text, format_spans(text)) == ["```sql", "The", "```"]


def test_format_spans_without_a_fence_are_none():
    assert format_spans("SELECT name FROM student") is None
    assert format_spans("") is None
    assert format_spans(None) is None  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- executes
@pytest.mark.parametrize(
    ("error", "names"),
    [
        ("no such column: nme", ["nme"]),
        ("no such column: T1.nme", ["T1.nme", "nme"]),
        ("no such table: main.studnt", ["main.studnt", "studnt"]),
        ('near "FORM": syntax error', ["FORM"]),
        ('near ")": syntax error', [")"]),
        ('unrecognized token: "#"', ["#"]),
        ("no such function: CONCATT", ["CONCATT"]),
        ("ambiguous column name: id", ["id"]),
        ("wrong number of arguments to function substr()", ["substr"]),
        ("misuse of aggregate function count()", ["count"]),
        ("misuse of aggregate: max()", ["max"]),
        ("SELECTs to the left and right of UNION do not have the same number of result columns", ["UNION"]),
        ("incomplete input", []),
        ("interrupted: query exceeded the 5.0 s time limit", []),
        ("", []),
    ],
)
def test_the_names_a_sqlite_error_gives(error, names):
    assert sqlite_error_names(error) == names


def test_error_spans_are_every_occurrence_of_the_named_token():
    query = "SELECT nme, s.nme FROM student AS s WHERE nme_x = 1 OR [nme] = 2"
    assert texts(query, error_spans(query, "no such column: nme")) == ["nme", "nme", "nme"]
    assert error_spans(query, "no such column: nme") == [(7, 10), (14, 17), (56, 59)]  # not inside nme_x
    q2 = "SELECT T1.nme, T1 . nme, nme FROM student AS T1"
    assert texts(q2, error_spans(q2, "no such column: T1.nme")) == ["T1.nme", "T1 . nme"]
    q3 = "SELECT name FORM student"
    assert error_spans(q3, 'near "FORM": syntax error') == [(12, 16)]
    q4 = "SELECT name FROM studnt"
    assert error_spans(q4, "no such table: studnt") == [(17, 23)]


def test_error_spans_of_an_error_naming_nothing_in_the_query_are_none():
    assert error_spans("SELECT name FROM student WHERE", "incomplete input") is None
    assert error_spans("SELECT name FROM student", "no such column: other") is None
    assert error_spans("SELECT 1", "") is None  # it runs


def test_error_spans_of_a_query_reading_other_tables_are_those_tables():
    query = "SELECT title FROM club JOIN Club AS c2"
    assert error_spans(query, "", tables={"club"}) == [(18, 22), (28, 32)]


def test_name_spans_match_whole_names_case_insensitively():
    assert name_spans("select Foo, foo2, `foo`, food", "foo") == [(7, 10), (19, 22)]
    assert name_spans("abc", "") == []


# ---------------------------------------------------------------------------------------------- result_match
def test_differing_spans_are_the_tokens_off_the_reference():
    ref = "SELECT name FROM student WHERE gpa > 3.5"
    query = "SELECT name FROM student WHERE gpa > 3.0"
    assert differing_spans(query, ref) == [(37, 40)]
    query = "SELECT name, city FROM student WHERE gpa < 3.5"
    assert texts(query, differing_spans(query, ref)) == [",", "city", "<"]


def test_differing_spans_normalize_case_quotes_and_a_trailing_semicolon():
    ref = "SELECT name FROM student WHERE city = 'rome'"
    assert differing_spans('select "NAME" from Student where CITY = \'rome\';', ref) is None
    query = "SELECT name FROM student WHERE city = 'Rome'"
    assert texts(query, differing_spans(query, ref)) == ["'Rome'"]  # string literals are compared exactly


def test_a_left_out_clause_points_at_the_token_after_the_gap():
    ref = "SELECT name FROM student WHERE gpa > 3.5 ORDER BY name"
    query = "SELECT name FROM student ORDER BY name"
    assert texts(query, differing_spans(query, ref)) == ["ORDER BY"]  # one sqlglot token
    query = "SELECT name FROM student WHERE gpa > 3.5"
    assert differing_spans(query, ref) == [(37, 40)]  # the last token "3.5", when nothing stands for the end
    assert differing_spans(query, ref, after=(41, 44)) == [(41, 44)]


def test_differing_spans_of_text_sqlglot_cannot_tokenize_is_the_whole_query():
    query = "SELECT 'unclosed FROM student"
    assert differing_spans(query, "SELECT name FROM student") == [(0, len(query))]
    assert differing_spans("SELECT 1", "SELECT 'x") is None  # a reference that cannot be tokenized: no verdict
    assert differing_spans("   ", "SELECT 1") is None


# ---------------------------------------------------------------------------------------------- untrusted text
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.text(max_size=80), st.text(max_size=80))
def test_locators_never_raise_and_stay_inside_the_text(text, error, other):
    completion = f"```sql\n{text}\n```"
    for spans in (format_spans(text), format_spans(completion), error_spans(text, error),
                  error_spans(text, f"no such column: {other}"), error_spans(text, f'near "{other}": syntax error'),
                  differing_spans(text, other), differing_spans(text, "SELECT name FROM t WHERE a = 1")):
        assert spans is None or all(0 <= s < e <= len(completion) for s, e in spans)
    for spans in (error_spans(text, f"no such table: {other}"), differing_spans(text, other)):
        assert spans is None or all(0 <= s < e <= len(text) for s, e in spans)


def test_huge_queries_are_fast():
    query = "SELECT " + ", ".join(f"c{i}" for i in range(20_000)) + " FROM t"
    start = time.monotonic()
    assert differing_spans(query, "SELECT c0 FROM t") == [(0, len(query))]  # past MAX_ALIGNED_TOKENS: all of it
    assert error_spans(query, "no such column: c19999") is not None
    assert format_spans("```" * 100_000) is not None
    assert time.monotonic() - start < 10


# ---------------------------------------------------------------------------------------------- the task's wiring
def located(task, name, example, completion):
    verifier = next(v for v in task.task.verifiers if v.name == name)
    return texts(completion, verifier.locate(example, completion))


def test_the_tasks_verifiers_locate_their_tokens(sql_task, make_example):
    ex = make_example("SELECT name FROM student WHERE gpa > 3.5")
    bad_column = "I read the table.\n```sql\nSELECT nme FROM student\n```"
    assert located(sql_task, "executes", ex, bad_column) == ["nme"]
    assert located(sql_task, "sql_format", ex, bad_column) == ["```sql", "```"]
    assert located(sql_task, "executes", ex, "```sql\nSELECT title FROM club\n```") == ["club"]  # no table of it
    assert located(sql_task, "executes", ex, "```sql\nSELECT name FROM student\n```") is None  # it runs
    assert located(sql_task, "executes", ex, "no fence") is None
    wrong = "```sql\nSELECT name FROM student WHERE gpa > 3.0\n```"
    assert located(sql_task, "result_match", ex, wrong) == ["3.0"]
    cut = "```sql\nSELECT name FROM student\n```"
    assert located(sql_task, "result_match", ex, cut) == ["```"]  # it ends where the WHERE clause should start
    assert located(sql_task, "result_match", ex, "```sql\nSELECT name FROM student WHERE gpa > 3.5\n```") is None
    assert located(sql_task, "result_match", ex, "SELECT name FROM student") is None  # no query to point at
