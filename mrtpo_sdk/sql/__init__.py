"""Text-to-SQL machinery: a read-only sandbox, execution match, answer parsing and a Spider-layout loader.

* :func:`execute_sql` (:mod:`.sandbox`) runs one untrusted query read-only, with a time limit enforced inside
  SQLite and a row cap; it never raises on any query text.
* :func:`results_match` and :func:`gold_is_ordered` (:mod:`.execution_match`) decide execution match: bags of rows
  unless the gold query orders its output, positional columns, float tolerance.
* :func:`extract_sql` (:mod:`.parse`) pulls the single ```` ```sql ```` fenced query out of a completion.
* :func:`load_spider` (:mod:`.data`) loads a Spider-layout (or BIRD) directory into :class:`SQLExample` s.

See ``docs/sql.md``.
"""

from mrtpo_sdk.sql.execution_match import gold_is_ordered, results_match, values_equal
from mrtpo_sdk.sql.data import (
    CATEGORIES,
    SQLDataError,
    SQLExample,
    bundled_data_dir,
    default_cache_dir,
    load_spider,
    query_categories,
    render_schema,
)
from mrtpo_sdk.sql.parse import FencedSQL, extract_sql
from mrtpo_sdk.sql.sandbox import ExecutionResult, close_cached_connections, execute_sql

__all__ = [
    "CATEGORIES",
    "ExecutionResult",
    "FencedSQL",
    "SQLDataError",
    "SQLExample",
    "bundled_data_dir",
    "close_cached_connections",
    "default_cache_dir",
    "execute_sql",
    "extract_sql",
    "gold_is_ordered",
    "load_spider",
    "query_categories",
    "render_schema",
    "results_match",
    "values_equal",
]
