"""Text-to-SQL on SQLite databases: three rewards, as in the MRTPO paper.

* ``sql_format``   — one query in a single ```sql fence; the block states that format (and this response's flaw);
* ``executes``     — the query runs; the block is the response's own SQLite error, empty when it runs;
* ``result_match`` — the query returns the reference result; the block is the reference query, in the same
  ```sql fence the policy must produce.

Semantics: ``training`` (default) fixes the false positives and negatives of plain execution match (constant or
off-topic queries, the format rule pasted into a fence, empty references, column order, ties at an ORDER BY/LIMIT
cut, ``SELECT 1;;``); ``-T semantics=official`` scores exactly as the official Spider/BIRD evaluation. ``eval``
reports ``execution_accuracy`` (the rewards' semantics) and ``execution_accuracy_official``. Every difference:
docs/sql.md.

Data: Spider layout under ``tasks/data/sql`` (``--data PATH`` for a real Spider or BIRD download). The bundled
training split is its 186 written questions followed by the templated questions that
:func:`mrtpo_sdk.sql.synthetic.synthetic_examples` derives from the training databases alone (723; ids
``synth-<db>-<n>``): RL samples from both and the embedded policy's warm start (``warm_start_steps=1000``) is taught
both. ``-T synthetic=false`` leaves them out; ``--data PATH -T synthetic=true`` adds them to another dataset. The dev
split is the 42 written dev questions only. Why, and what it measured: ``docs/results.md``.
Model output is untrusted: queries run in the read-only, time- and memory-limited sandbox of :mod:`mrtpo_sdk.sql`;
results are cached in a cache bounded in bytes; blocks quoting model output are capped at 300 characters.
"""

from dataclasses import replace
from pathlib import Path

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.evaluation import execution_accuracy
from mrtpo_sdk.semantics import Semantics
from mrtpo_sdk.sql import SQLDataError, extract_sql, load_spider, results_match
from mrtpo_sdk.sql.deciding import differing_spans, error_spans, format_spans
from mrtpo_sdk.sql.synthetic import synthetic_examples
from mrtpo_sdk.sql.score import (
    MAX_QUOTED_CHARS,
    format_error,
    reference_result,
    relevance_error,
    selects_only_constants,
    run_prediction,
    training_match,
)
from mrtpo_sdk.verifier import cap_block

DATA = Path(__file__).parent / "data" / "sql"
FORMAT_RULE = "The answer is one SQLite query in a single fenced block that opens with a line ```sql and closes with a line ```."


def examples(split: str = "train", data: str | None = None, semantics: Semantics = "training",
             synthetic: bool | None = None):
    """The Spider-layout questions of ``split``: the bundled data, or a Spider/BIRD download (``--data PATH``).

    Args:
        semantics: how the rewards score: training fixes plain execution match's false verdicts; official scores
            exactly as the official Spider/BIRD evaluation (docs/sql.md).
        synthetic: add the templated questions derived from the training databases to the train split (none: on
            for the bundled data, off with --data PATH).
    """
    chosen = load_spider(data or DATA, split)
    if split == "train" and (data is None if synthetic is None else synthetic):
        chosen = list(chosen) + synthetic_examples(chosen)
    return chosen if semantics == "training" else [replace(ex, semantics=semantics) for ex in chosen]


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


def _semantics(example) -> str:
    return getattr(example, "semantics", "training")


def _in_completion(answer, spans):
    """Spans of the answer's query, moved to offsets in the completion."""
    return None if spans is None else [(answer.span[0] + s, answer.span[0] + e) for s, e in spans]


def _error_tokens(example, completion):
    """The tokens the SQLite error names (``executes``); the tables read by a query that runs but reads none of
    the question's."""
    answer = extract_sql(completion)
    if not answer.ok:
        return None
    run = run_prediction(str(example.db_path), answer.query, _semantics(example))
    if run.ok:
        if _semantics(example) != "training" or not relevance_error(run, _reference(example, "training").run):
            return None
        return _in_completion(answer, error_spans(answer.query, "", run.tables))
    return _in_completion(answer, error_spans(answer.query, run.error))


def _differing_tokens(example, completion):
    """The query's tokens that differ from the reference query (``result_match``)."""
    answer = extract_sql(completion)
    if not answer.ok:
        return None
    end = answer.span[1]
    close = completion.find("```", end)
    after = (close - answer.span[0], close - answer.span[0] + 3) if close >= 0 else None
    return _in_completion(answer, differing_spans(answer.query, example.query, after))


@verifier(kind="format", deciding=lambda example, completion: format_spans(completion))
def sql_format(example, completion):
    error = format_error(completion, _semantics(example))
    if not error:
        return Result(1.0, FORMAT_RULE)
    return Result(0.0, f"{FORMAT_RULE} This response has {error}.")


@verifier(kind="feedback", deciding=_error_tokens)
def executes(example, completion):
    answer = extract_sql(completion)
    if not answer.ok:
        return Result(0.0, "")  # nothing ran, so there is no SQLite error to show
    semantics = _semantics(example)
    run = run_prediction(str(example.db_path), answer.query, semantics)
    if not run.ok:
        return Result(0.0, cap_block(run.error, MAX_QUOTED_CHARS))
    if semantics == "training":
        why = relevance_error(run, _reference(example, semantics).run)
        if why:
            return Result(0.0, why)
    return Result(1.0, "")


@verifier(kind="reference", deciding=_differing_tokens)
def result_match(example, completion):
    semantics = _semantics(example)
    gold = _reference(example, semantics)
    answer = extract_sql(completion)
    matched = False
    if answer.ok:
        run = run_prediction(str(example.db_path), answer.query, semantics)
        if semantics == "training":
            # the answer typed in as constants beside a table read names the result instead of computing it
            matched = training_match(run, gold) and not selects_only_constants(answer.query, example.query)
        else:
            matched = run.ok and results_match(run.rows, gold.run.rows, ordered=gold.ordered)
    return Result(float(matched), reference(example))


def official_verdict(example, completion) -> bool:
    """The official (Spider/BIRD) execution-match verdict, whatever semantics the rewards use."""
    gold = _reference(example, "official")
    answer = extract_sql(completion)
    if not answer.ok:
        return False
    run = run_prediction(str(example.db_path), answer.query, "official")
    return run.ok and results_match(run.rows, gold.run.rows, ordered=gold.ordered)


def _reference(example, semantics: str):
    gold = reference_result(str(example.db_path), example.query, ties=semantics == "training")
    if not gold.run.ok:
        raise SQLDataError(f"example {example.id}: its reference query fails ({gold.run.error}); fix it in the data")
    return gold


task = Task(
    name="sql",
    description="Text-to-SQL on SQLite (format, executability, execution match)",
    examples=examples,
    prompt=prompt,
    verifiers=[sql_format, executes, result_match],
    reference=reference,
    metrics=execution_accuracy("result_match", official=official_verdict),
    warm_start_steps=1000,
)
