"""Tests of template_task (written by `mrtpo-sdk new`): run them with `pytest test_template_task.py`."""

from pathlib import Path

import pytest

from mrtpo_sdk import load_task

TASK = load_task(Path(__file__).with_name("template_task.py"))
EXAMPLES = TASK.load_examples("train")


def test_examples_load():
    assert len(EXAMPLES) >= 4  # a training batch needs at least batch_size / num_generations prompts
    assert len({ex["id"] for ex in EXAMPLES}) == len(EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda ex: ex["id"])
def test_reference_earns_full_reward(example):
    results = TASK.score(example, TASK.reference_completion(example))
    assert [r.reward for r in results if r is not None] == [1.0] * sum(r is not None for r in results)


def test_wrong_completions_lose_reward():
    example = EXAMPLES[0]
    unformatted = TASK.score(example, example["answer"])  # right answer, no tags
    assert [r.reward for r in unformatted] == [0.0, 0.0]
    wrong = TASK.score(example, "<answer>not the answer</answer>")  # right format, wrong answer
    assert [r.reward for r in wrong] == [1.0, 0.0]


def test_blocks_are_specific_to_the_example():
    a, b = EXAMPLES[0], EXAMPLES[1]
    block_a = TASK.score(a, "")[1].block
    block_b = TASK.score(b, "")[1].block
    assert block_a != block_b and a["answer"] in block_a
