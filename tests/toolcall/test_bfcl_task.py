"""tasks/bfcl.py: examples, prompt, reference, and the three verifiers' rewards and blocks on fixed examples."""

from dataclasses import replace
from pathlib import Path

import pytest

from mrtpo_sdk.loader import load_task
from mrtpo_sdk.toolcall import FORMAT_RULE, parse_tool_response

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = str(ROOT / "tasks" / "data" / "bfcl")


@pytest.fixture(scope="module")
def task():
    return load_task(ROOT / "tasks" / "bfcl.py")


@pytest.fixture(scope="module")
def examples(task):
    return {e.id: e for e in task.with_options(max_prompt_chars=0).load_examples("all", BUNDLED)}


def test_examples_and_unanswerable_questions_dropped(task, examples):
    assert len(examples) == 348  # 349 in the subset, less live_multiple_862-181-3 (its answer needs an undocumented parameter)
    assert "live_multiple_862-181-3" not in examples
    train = task.load_examples("train", BUNDLED)
    test = task.load_examples("test", BUNDLED)
    assert not {e.id for e in train} & {e.id for e in test}
    # the default prompt-length limit (2,000 characters) for the embedded CPU run
    assert len(train) == 252 and len(test) == 22
    assert all(sum(len(m["content"]) for m in task.rollout_prompt(e)) <= 2000 for e in train)
    live = task.with_options(categories=("live_simple", "live_parallel")).load_examples("train", BUNDLED)
    assert {e.category for e in live} == {"live_simple", "live_parallel"}


def test_every_reference_earns_every_reward(task, examples):
    for e in examples.values():
        ref = task.reference_completion(e)
        assert parse_tool_response(ref).ok
        rewards = [r.reward for r in task.score(e, ref) if r is not None]
        assert rewards == [1.0] * len(rewards), e.id


def test_prompt(task, examples):
    p = task.rollout_prompt(examples["simple_python_0"])
    assert [m["role"] for m in p] == ["system", "user"]
    assert p[0]["content"].startswith('You can call these functions:\n{"name": "calculate_triangle_area", "description": ')
    assert "one <tool_call> … </tool_call> block per function call" in p[0]["content"]
    assert p[1]["content"] == "Find the area of a triangle with a base of 10 units and height of 5 units."


SIMPLE_REF = (
    "<think>\nThe request needs 1 call to calculate_triangle_area.\n</think>\n<tool_call>\n"
    '{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5, "unit": "units"}}\n</tool_call>'
)


def test_blocks_simple(task, examples):
    e = examples["simple_python_0"]
    assert task.reference_completion(e) == SIMPLE_REF
    wrong = SIMPLE_REF.replace('"base": 10', '"base": 12')
    fmt, choice, args = task.score(e, wrong)
    assert (fmt.reward, choice.reward, args.reward) == (1.0, 1.0, 0.0)
    assert fmt.block == FORMAT_RULE
    assert choice.block == (
        "<think>\nThe function to call is calculate_triangle_area.\n</think>\n<tool_call>\n"
        '{"name": "calculate_triangle_area", "arguments": {}}\n</tool_call>'
    )
    assert args.block == SIMPLE_REF


def test_blocks_parallel_multiple(task, examples):
    e = examples["parallel_multiple_4"]
    fmt, choice, args = task.score(e, "<think>\nx\n</think>\n")
    assert (fmt.reward, choice.reward, args.reward) == (1.0, 0.0, 0.0)
    assert choice.block == (
        "<think>\nThe functions to call are integral and derivative.\n</think>\n"
        '<tool_call>\n{"name": "integral", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "derivative", "arguments": {}}\n</tool_call>'
    )
    assert args.block == (
        "<think>\nThe request needs 2 calls to integral, derivative.\n</think>\n"
        '<tool_call>\n{"name": "integral", "arguments": {"function": "x**2", "a": 1.0, "b": 5.0}}\n</tool_call>\n'
        '<tool_call>\n{"name": "derivative", "arguments": {"function": "x**2", "x": 3.0}}\n</tool_call>'
    )
    # the two calls in the other order are right too
    swapped = (
        '<think>\nok\n</think>\n<tool_call>\n{"name": "derivative", "arguments": {"function": "x^2", "x": 3}}\n</tool_call>\n'
        '<tool_call>\n{"name": "integral", "arguments": {"function": "x**2", "a": 1, "b": 5}}\n</tool_call>'
    )
    assert [r.reward for r in task.score(e, swapped)] == [1.0, 1.0, 1.0]


def test_blocks_irrelevance(task, examples):
    e = examples["irrelevance_4"]
    fmt, choice, args = task.score(e, "<think>\nNothing fits.\n</think>")
    assert (fmt.reward, choice.reward, args) == (1.0, 1.0, None)
    assert choice.block == "<think>\nNone of the offered functions fits this request, so no function is called.\n</think>"
    call = f'<think>\nx\n</think>\n<tool_call>\n{{"name": "{e.functions[0]["name"]}", "arguments": {{}}}}\n</tool_call>'
    assert [r.reward for r in task.score(e, call) if r] == [1.0, 0.0]
    # a plain-text refusal breaks the format, so it is not a decline (training); officially it calls nothing
    fmt, choice, _ = task.score(e, "Sorry, I cannot do that.")
    assert (fmt.reward, choice.reward) == (0.0, 0.0)
    fmt, choice, _ = task.score(replace(e, semantics="official"), "Sorry, I cannot do that.")
    assert (fmt.reward, choice.reward) == (0.0, 1.0)


@pytest.mark.parametrize(
    "completion, rewards, flaw",
    [
        (SIMPLE_REF.split("</think>\n")[1], [0.0, 1.0, 1.0], "no <think> block at the start"),
        ("<think>a</think>\n<think>b</think>\n" + SIMPLE_REF.split("</think>\n")[1], [0.0, 1.0, 1.0], "2 <think> blocks instead of one"),
        (SIMPLE_REF + "\nHope this helps!", [0.0, 0.0, 0.0], "text after the last call that is not a <tool_call> block: 'Hope this helps!'"),
        (SIMPLE_REF + "\n</tool_call>", [0.0, 0.0, 0.0], "a stray </tool_call> tag"),
        ("", [0.0, 0.0, 0.0], "no text at all"),
    ],
)
def test_format_block_names_the_flaw(task, examples, completion, rewards, flaw):
    results = task.score(examples["simple_python_0"], completion)
    assert [r.reward for r in results] == rewards
    assert results[0].block == f"{FORMAT_RULE} This response has {flaw}."


def test_replay_contexts_append_the_blocks(task, examples):
    e = examples["simple_python_0"]
    blocks = [r.block for r in task.score(e, "oops")]
    p_all, p_wo = task.replay_prompts(e, blocks, k=2)
    assert p_all[-1]["content"].endswith("\n\n" + SIMPLE_REF)
    assert SIMPLE_REF not in p_wo[-1]["content"] and blocks[1] in p_wo[-1]["content"]
