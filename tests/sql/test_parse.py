"""extract_sql: exactly one closed, non-empty ```sql fence; concrete errors; never raises."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.sql.parse import FencedSQL, extract_sql


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("```sql\nSELECT 1\n```", "SELECT 1"),
        ("The table is t.\n```sql\nSELECT a\nFROM t;\n```\n", "SELECT a\nFROM t;"),
        ("```SQL\nSELECT 1\n```", "SELECT 1"),
        ("```sql SELECT 1 ```", "SELECT 1"),
        ("reasoning\n```python\nprint(1)\n```\n```sql\nSELECT 2\n```\nDone.", "SELECT 2"),
        ("````sql\nSELECT 3\n````", "SELECT 3"),
    ],
)
def test_valid(text: str, query: str) -> None:
    res = extract_sql(text)
    assert res == FencedSQL(query, "")
    assert res.ok


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("SELECT 1", "no ```sql fence"),
        ("", "no ```sql fence"),
        ("```\nSELECT 1\n```", "no ```sql fence (only a ``` fence without a tag)"),
        ("```sqlite\nSELECT 1\n```", "no ```sql fence (only a ```sqlite fence)"),
        ("```sql\nSELECT 1\n```\n```sql\nSELECT 2\n```", "2 ```sql fences"),
        ("```sql\nSELECT 1\n```\n```sql\nSELECT 2", "2 ```sql fences"),
        ("```sql\nSELECT 1", "an unclosed ```sql fence (no closing ``` after it)"),
        ("```sql\n  \n```", "an empty ```sql fence"),
        ("```sql```", "an empty ```sql fence"),
    ],
)
def test_errors(text: str, error: str) -> None:
    res = extract_sql(text)
    assert res.query is None and not res.ok
    assert res.error == error


def test_non_string() -> None:
    assert extract_sql(None).error == "no text (got NoneType)"  # type: ignore[arg-type]
    assert extract_sql(b"```sql\nSELECT 1\n```").query is None  # type: ignore[arg-type]


def test_huge_and_adversarial_inputs_are_fast() -> None:
    for text in ["`" * 1_000_000, "```sql" * 200_000, "```" + " " * 1_000_000, "x" * 5_000_000, "\x00\udcff" * 100_000]:
        start = time.monotonic()
        res = extract_sql(text)
        assert isinstance(res, FencedSQL)
        assert time.monotonic() - start < 20  # linear; a quadratic scan of millions of characters takes far longer


@settings(max_examples=300)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    res = extract_sql(text)
    assert (res.query is None) != (res.error == "")


fragment = st.sampled_from(["```", "```sql", "```SQL", "```py", "\n", " ", "SELECT 1", "`", "sql", ";", "x"])


@settings(max_examples=300)
@given(st.lists(fragment, max_size=20).map("".join))
def test_fence_soup_never_raises(text: str) -> None:
    res = extract_sql(text)
    if res.ok:
        assert res.query and res.query == res.query.strip() and "```" not in res.query
