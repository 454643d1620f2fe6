"""Text-to-SQL machinery: a read-only sandbox, execution match, answer parsing and a Spider-layout loader.

* :func:`execute_sql` (:mod:`.sandbox`) runs one untrusted query read-only, with a time limit enforced inside
  SQLite and a row cap; it never raises on any query text.
* :func:`results_match` and :func:`gold_is_ordered` (:mod:`.execution_match`) decide execution match: bags of rows
  unless the gold query orders its output, positional columns, float tolerance.
* :func:`extract_sql` (:mod:`.parse`) pulls the single ```` ```sql ```` fenced query out of a completion.
* :func:`load_spider` (:mod:`.data`) loads a Spider-layout (or BIRD) directory into :class:`SQLExample` s;
  :func:`synthetic_examples` (:mod:`.synthetic`) adds templated, verified questions over the same databases.
* The bundled task's verifiers (:mod:`.score`): :func:`run_prediction` (cached, read-only), :func:`format_error`,
  :func:`relevance_error`, :func:`training_match` and :func:`reference_result` (ties at a ``LIMIT``), under one of
  :data:`SEMANTICS`; blocks quoting model output are capped at :data:`MAX_QUOTED_CHARS`.

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
from mrtpo_sdk.sql.score import (
    DEFAULT_SEMANTICS,
    MAX_QUOTED_CHARS,
    SEMANTICS,
    ReferenceResult,
    check_semantics,
    format_error,
    official_statement_error,
    reference_result,
    relevance_error,
    run_cached,
    run_prediction,
    selects_only_constants,
    training_match,
)
from mrtpo_sdk.sql.synthetic import synthetic_examples

__all__ = [
    "CATEGORIES",
    "DEFAULT_SEMANTICS",
    "MAX_QUOTED_CHARS",
    "SEMANTICS",
    "ExecutionResult",
    "FencedSQL",
    "ReferenceResult",
    "SQLDataError",
    "SQLExample",
    "bundled_data_dir",
    "check_semantics",
    "close_cached_connections",
    "default_cache_dir",
    "execute_sql",
    "extract_sql",
    "format_error",
    "gold_is_ordered",
    "load_spider",
    "official_statement_error",
    "query_categories",
    "reference_result",
    "relevance_error",
    "render_schema",
    "results_match",
    "run_cached",
    "run_prediction",
    "selects_only_constants",
    "synthetic_examples",
    "training_match",
    "values_equal",
]
