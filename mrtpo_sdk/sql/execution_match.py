"""Execution match: does a predicted query return the same result as the reference (gold) query?

Semantics of :func:`results_match` (also in ``docs/sql.md``):

* **Rows form a bag** (a multiset): order is ignored, duplicates count. ``[(1,), (1,)]`` does not match
  ``[(1,)]``. Exception: when the gold query orders its output (a top-level ``ORDER BY``, see
  :func:`gold_is_ordered`), the rows must also come in the same order.
* **Columns are positional**: the same number of columns in the same order. Column names (aliases) are
  ignored, so ``SELECT count(*)`` matches ``SELECT count(*) AS n``; ``SELECT a, b`` does not match
  ``SELECT b, a``.
* **Values**: numbers compare by value, so the integer ``3`` equals the float ``3.0`` (and ``True`` equals
  ``1``); floats are equal when ``math.isclose(a, b, rel_tol=float_tol, abs_tol=float_tol)``. Text compares
  exactly (case and whitespace matter), text never equals a number (``'3'`` is not ``3``), blobs compare
  byte for byte, ``NULL`` (``None``) equals only ``NULL``.
* With float tolerance, unordered matching sorts both bags and compares them pairwise; if that fails it falls
  back to a greedy one-to-one matching (for bags up to 2 000 rows). Values that are all within tolerance of
  each other are treated as equal.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import sqlglot
from sqlglot import exp

__all__ = ["exact_key", "gold_is_ordered", "greedy_rows_match", "results_match", "values_equal"]

_GREEDY_LIMIT = 2_000


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, complex)


def values_equal(a: object, b: object, float_tol: float = 1e-6) -> bool:
    """Compare two result cells with the semantics in the module docstring.

    Args:
        a: a cell of the predicted result.
        b: a cell of the gold result.
        float_tol: relative and absolute tolerance for numbers that are not both integers.

    Returns:
        True when the two cells count as equal.
    """
    if a is None or b is None:
        return a is None and b is None
    if _is_number(a) and _is_number(b):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return math.isclose(fa, fb, rel_tol=float_tol, abs_tol=float_tol)
    if _is_number(a) or _is_number(b):
        return False
    if isinstance(a, (bytes, bytearray, memoryview)) and isinstance(b, (bytes, bytearray, memoryview)):
        return bytes(a) == bytes(b)
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return False
    return a == b


def _rows_equal(a: Sequence, b: Sequence, float_tol: float) -> bool:
    return len(a) == len(b) and all(values_equal(x, y, float_tol) for x, y in zip(a, b))


def _sort_key(value: object) -> tuple:
    """Total order over SQLite cell values: NULL < numbers < text < blobs < anything else."""
    if value is None:
        return (0, 0)
    if _is_number(value):
        f = float(value)
        return (1, -math.inf) if math.isnan(f) else (1, f)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return (3, bytes(value))
    return (4, repr(value))


def exact_key(value: object) -> object:
    """Hashable key that is equal exactly when two cells are equal without tolerance."""
    if _is_number(value):
        if isinstance(value, float) and value.is_integer():
            return ("n", int(value))
        if isinstance(value, float) and math.isnan(value):
            return ("nan",)
        return ("n", value if isinstance(value, float) else int(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("b", bytes(value))
    if value is None:
        return ("null",)
    if isinstance(value, str):
        return ("s", value)
    return ("o", repr(value))


def results_match(
    pred_rows: Sequence[Sequence] | None,
    gold_rows: Sequence[Sequence] | None,
    ordered: bool,
    float_tol: float = 1e-6,
) -> bool:
    """Execution match between a predicted result and the gold result (semantics: module docstring).

    Args:
        pred_rows: rows returned by the predicted query (``None`` when it failed: never a match).
        gold_rows: rows returned by the gold query (``None``: never a match).
        ordered: compare as sequences (True when the gold query has a top-level ``ORDER BY``) instead of bags.
        float_tol: relative and absolute tolerance for non-integer numbers.

    Returns:
        True when the results match.
    """
    if pred_rows is None or gold_rows is None:
        return False
    pred = [tuple(r) for r in pred_rows]
    gold = [tuple(r) for r in gold_rows]
    if len(pred) != len(gold):
        return False
    if not gold:
        return True
    widths = {len(r) for r in pred} | {len(r) for r in gold}
    if len(widths) != 1:
        return False
    if ordered:
        return all(_rows_equal(p, g, float_tol) for p, g in zip(pred, gold))
    # Fast path: exact bag equality (also exact for int vs integral float).
    if Counter(tuple(map(exact_key, r)) for r in pred) == Counter(tuple(map(exact_key, r)) for r in gold):
        return True

    def key(row: tuple) -> tuple:
        return tuple(_sort_key(v) for v in row)

    pred_sorted, gold_sorted = sorted(pred, key=key), sorted(gold, key=key)
    if all(_rows_equal(p, g, float_tol) for p, g in zip(pred_sorted, gold_sorted)):
        return True
    if len(gold) > _GREEDY_LIMIT:
        return False
    return greedy_rows_match(pred_sorted, gold_sorted, float_tol)


def greedy_rows_match(part: Sequence[Sequence], pool: Sequence[Sequence], float_tol: float) -> bool:
    """Every row of ``part`` matched, in order, to a distinct row of ``pool`` equal within ``float_tol`` (greedy:
    the first unmatched equal row)."""
    unmatched = list(pool)
    for p in part:
        for j, g in enumerate(unmatched):
            if _rows_equal(p, g, float_tol):
                del unmatched[j]
                break
        else:
            return False
    return True


def _scan_top_level_order_by(sql: str) -> bool:
    """Fallback when sqlglot cannot parse: is there an ORDER BY outside parentheses, strings and comments?"""
    depth, i, n = 0, 0, len(sql)
    upper = sql.upper()
    while i < n:
        ch = sql[i]
        if ch in "'\"`[":
            close = "]" if ch == "[" else ch
            j = sql.find(close, i + 1)
            i = n if j < 0 else j + 1
            continue
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and upper.startswith("ORDER", i) and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            rest = upper[i + 5 :].lstrip()
            if rest.startswith("BY") and (len(rest) == 2 or not (rest[2].isalnum() or rest[2] == "_")):
                return True
        i += 1
    return False


def gold_is_ordered(sql: str) -> bool:
    """Whether a (gold) query orders its output, i.e. has an ``ORDER BY`` on its outermost query.

    An ``ORDER BY`` only inside a subquery, a CTE or a window (``OVER (ORDER BY ...)``) does not count. A
    compound query (``UNION``/``INTERSECT``/``EXCEPT``) counts when the ``ORDER BY`` applies to the compound.

    Args:
        sql: the query text (SQLite dialect).

    Returns:
        True when the result order is part of the answer. Text sqlglot cannot parse is scanned for an
        ``ORDER BY`` outside parentheses instead; this function never raises.
    """
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except Exception:
        try:
            return _scan_top_level_order_by(sql)
        except Exception:
            return False
    while isinstance(tree, (exp.Subquery, exp.Paren)):
        if tree.args.get("order"):
            return True
        tree = tree.this
    return bool(tree is not None and tree.args.get("order"))
