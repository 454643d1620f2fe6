"""Text-to-SQL on SQLite databases: three rewards, as in the MRTPO paper.

* ``sql_format``   — one query in a single ```sql fence; the block states that format (and this response's flaw);
* ``executes``     — the query runs; the block is the response's own SQLite error, empty when it runs;
* ``result_match`` — the query returns the reference result; the block is the reference query, in the same
  ```sql fence the policy must produce.

Data: Spider layout under ``tasks/data/sql`` (``--data PATH`` for a real Spider or BIRD download).
Model output is untrusted: queries run in the read-only, time-limited sandbox of :mod:`mrtpo_sdk.sql`.
"""

from functools import lru_cache
from pathlib import Path

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.evaluation import execution_accuracy
from mrtpo_sdk.sql import SQLDataError, execute_sql, extract_sql, gold_is_ordered, load_spider, results_match

DATA = Path(__file__).parent / "data" / "sql"
FORMAT_RULE = "The answer is one SQLite query in a single fenced block that opens with a line ```sql and closes with a line ```."


def examples(split: str = "train", data: str | None = None):
    return load_spider(data or DATA, split)


def prompt(example):
    return [
        {"role": "system", "content": "You write SQLite queries that answer questions about a database."},
        {
            "role": "user",
            "content": f"Database schema:\n{example.schema}\n\nQuestion: {example.question}\n\n"
            "Answer with one SQLite query in a ```sql code block.",
        },
    ]


def reference(example):
    return f"```sql\n{example.query}\n```"


@verifier(kind="format")
def sql_format(example, completion):
    answer = extract_sql(completion)
    if answer.ok:
        return Result(1.0, FORMAT_RULE)
    return Result(0.0, f"{FORMAT_RULE} This response has {answer.error}.")


@verifier(kind="feedback")
def executes(example, completion):
    answer = extract_sql(completion)
    if not answer.ok:
        return Result(0.0, "")  # nothing ran, so there is no SQLite error to show
    run = _execute(str(example.db_path), answer.query)
    return Result(float(run.ok), run.error)


@verifier(kind="reference")
def result_match(example, completion):
    answer = extract_sql(completion)
    gold = _execute(str(example.db_path), example.query)
    if not gold.ok:
        raise SQLDataError(f"example {example.id}: its reference query fails ({gold.error}); fix it in the data")
    matched = False
    if answer.ok:
        run = _execute(str(example.db_path), answer.query)
        matched = run.ok and results_match(run.rows, gold.rows, ordered=gold_is_ordered(example.query))
    return Result(float(matched), reference(example))


@lru_cache(maxsize=1024)
def _execute(db_path: str, query: str):
    """The databases are read-only, so a query's outcome is cached: the verifiers run each query once."""
    return execute_sql(db_path, query)


task = Task(
    name="sql",
    description="Text-to-SQL on SQLite (format, executability, execution match)",
    examples=examples,
    prompt=prompt,
    verifiers=[sql_format, executes, result_match],
    reference=reference,
    metrics=execution_accuracy("result_match"),
)
