"""template_task: text-to-SQL on a SQLite database, with three rewards (as the MRTPO paper's SQL task).

Written by `mrtpo-sdk new` from the sql template. The rewards:

* ``sql_format``   — one query in a single ```sql fence; the block states that format (and this response's flaw);
* ``executes``     — the query runs; the block is the response's own SQLite error, empty when it runs;
* ``result_match`` — the query returns the reference result; the block is the reference query, in the same
  ```sql fence the policy must produce.

Data: template_task_data/ in the Spider layout: ``train.json`` / ``dev.json`` (entries with ``db_id``,
``question``, ``query``) and ``database/<db_id>/schema.sql`` (or ``<db_id>.sqlite``). Add questions there, or
point ``--data`` at a Spider or BIRD download. Model output is untrusted: queries run in the read-only,
time-limited sandbox of mrtpo_sdk.sql. Block rules: docs/writing-blocks.md; checks: `mrtpo-sdk lint`, `check`.
"""

from functools import lru_cache
from pathlib import Path

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.sql import execute_sql, extract_sql, gold_is_ordered, load_spider, results_match

DATA = Path(__file__).with_name("template_task_data")
# Block rules 2 and 5: the concrete format, with the same fence the policy must write.
FORMAT_RULE = (
    "The answer is one SQLite query in a single fenced block that opens with a line ```sql and closes with a line ```."
)


def examples(split: str = "train", data: str | None = None):
    return load_spider(data or DATA, split)


def prompt(example):
    # The rollout prompt P_0 (the policy samples from it alone; blocks are appended only in the replay).
    return [
        {"role": "system", "content": "You write SQLite queries that answer questions about a database."},
        {
            "role": "user",
            "content": f"Database schema:\n{example.schema}\n\nQuestion: {example.question}\n\n"
            "Answer with one SQLite query in a ```sql code block.",
        },
    ]


def reference(example):
    # Block rule 5: the reference in the form the policy is asked to produce.
    return f"```sql\n{example.query}\n```"


@verifier(kind="format")
def sql_format(example, completion):
    answer = extract_sql(completion)
    if answer.ok:
        return Result(1.0, FORMAT_RULE)
    return Result(0.0, f"{FORMAT_RULE} This response has {answer.error}.")


@verifier(kind="feedback")
def executes(example, completion):
    # Block rule 4: only this response's own feedback; when nothing ran there is none, so the block is empty.
    answer = extract_sql(completion)
    if not answer.ok:
        return Result(0.0, "")
    run = execute_sql(example.db_path, answer.query)
    return Result(float(run.ok), run.error)


@verifier(kind="reference")
def result_match(example, completion):
    # Block rule 2: the information itself (the reference query of this example), not "the result must match".
    answer = extract_sql(completion)
    matched = False
    if answer.ok:
        run = execute_sql(example.db_path, answer.query)
        gold = _gold_rows(str(example.db_path), example.query)
        matched = run.ok and results_match(run.rows, gold, ordered=gold_is_ordered(example.query))
    return Result(float(matched), reference(example))


@lru_cache(maxsize=4096)
def _gold_rows(db_path: str, query: str):
    run = execute_sql(db_path, query)
    if not run.ok:
        raise ValueError(f"the reference query fails on {db_path}: {run.error}")
    return run.rows


task = Task(
    name="template_task",
    description="Text-to-SQL on SQLite (format, executability, execution match)",
    examples=examples,
    prompt=prompt,
    verifiers=[sql_format, executes, result_match],
    reference=reference,
)
