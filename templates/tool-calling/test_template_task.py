"""Tests of template_task (written by `mrtpo-sdk new`): run them with `pytest test_template_task.py`."""

from pathlib import Path

import pytest

from mrtpo_sdk import load_task

TASK = load_task(Path(__file__).with_name("template_task.py"))
EXAMPLES = TASK.load_examples("train")


def test_examples_load():
    assert len(EXAMPLES) >= 4  # a training batch needs at least batch_size / num_generations prompts


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda ex: ex["id"])
def test_reference_earns_full_reward(example):
    results = TASK.score(example, TASK.reference_completion(example))
    assert [r.reward for r in results] == [1.0, 1.0, 1.0]


def test_right_function_wrong_arguments():
    example = EXAMPLES[0]
    name = next(iter(example["possible_answer"][0]))
    completion = (
        f'<think>Call it.</think>\n<tool_call>\n{{"name": "{name}", "arguments": {{"city": "Atlantis"}}}}\n</tool_call>'
    )
    fmt, choice, args = TASK.score(example, completion)
    assert (fmt.reward, choice.reward, args.reward) == (1.0, 1.0, 0.0)


def test_unparseable_response_scores_zero():
    fmt, choice, args = TASK.score(EXAMPLES[0], "get_weather(city='Lisbon')")
    assert (fmt.reward, choice.reward, args.reward) == (0.0, 0.0, 0.0)
