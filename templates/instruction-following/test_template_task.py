"""Tests of template_task (written by `mrtpo-sdk new`): run them with `pytest test_template_task.py`."""

from pathlib import Path

import pytest

from mrtpo_sdk import load_task

TASK = load_task(Path(__file__).with_name("template_task.py"))
EXAMPLES = TASK.load_examples("train")


def test_examples_load():
    assert len(EXAMPLES) >= 4  # a training batch needs at least batch_size / num_generations prompts


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda ex: ex["id"])
def test_reference_meets_every_constraint(example):
    results = TASK.score(example, TASK.reference_completion(example))
    applicable = [r.reward for r in results if r is not None]
    assert applicable == [1.0] * len(example["constraints"])


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda ex: ex["id"])
def test_each_block_is_a_sentence_of_the_prompt_and_left_out_without_it(example):
    prompt = TASK.rollout_prompt(example)
    results = TASK.score(example, "")
    blocks = ["" if r is None else r.block for r in results]
    for k, result in enumerate(results):
        if result is None:
            continue
        assert result.block in prompt
        _, without = TASK.replay_prompts(example, blocks, k)
        assert result.block not in without


def test_violations_score_zero():
    example = next(ex for ex in EXAMPLES if len(ex["constraints"]) == 3)
    results = TASK.score(example, " ".join(["word"] * 200))
    assert [r.reward for r in results] == [0.0, 0.0, 0.0]
