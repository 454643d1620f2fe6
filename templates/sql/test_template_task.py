"""Tests of template_task (written by `mrtpo-sdk new`): run them with `pytest test_template_task.py`."""

from pathlib import Path

import pytest

from mrtpo_sdk import load_task

TASK = load_task(Path(__file__).with_name("template_task.py"))
EXAMPLES = TASK.load_examples("train")


def test_examples_load():
    assert len(EXAMPLES) >= 4  # a training batch needs at least batch_size / num_generations prompts
    assert all("customer" in ex.schema and "purchase" in ex.schema for ex in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda ex: ex.id)
def test_reference_earns_full_reward(example):
    results = TASK.score(example, TASK.reference_completion(example))
    assert [r.reward for r in results] == [1.0, 1.0, 1.0]


def test_a_failing_query_shows_its_own_error():
    example = EXAMPLES[0]
    fmt, runs, match = TASK.score(example, "```sql\nSELECT nope FROM customer\n```")
    assert (fmt.reward, runs.reward, match.reward) == (1.0, 0.0, 0.0)
    assert "nope" in runs.block  # the block is this response's SQLite error


def test_unfenced_answer_fails_format_and_has_no_error_block():
    example = EXAMPLES[0]
    fmt, runs, _ = TASK.score(example, example.query)
    assert fmt.reward == 0.0 and runs.block == ""
