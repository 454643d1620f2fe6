"""The embedded policy's corpus: warm-start extras and block contexts."""

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.policy.for_task import policy_corpus


@verifier
def says_hi(example, completion):
    return Result(float("hi" in completion), f"The answer to {example['id']} says hi.")


@verifier
def silent(example, completion):
    return Result(1.0, "")


def _task(**kw):
    return Task(
        name="hi",
        examples=lambda split: [{"id": "a"}, {"id": "b"}],
        prompt=lambda ex: [{"role": "user", "content": f"greet {ex['id']}"}],
        verifiers=[says_hi, silent],
        reference=lambda ex: "hi",
        **kw,
    )


def test_block_contexts_add_the_reference_after_p_all():
    task = _task()
    examples = task.load_examples("train")
    _, plain = policy_corpus(task, examples)
    assert plain == [([{"role": "user", "content": "greet a"}], "hi"), ([{"role": "user", "content": "greet b"}], "hi")]
    _, both = policy_corpus(task, examples, block_contexts=True)
    assert len(both) == 4
    assert both[1] == ([{"role": "user", "content": "greet a\n\nThe answer to a says hi."}], "hi")
    assert both[1][0] == task.replay_prompts(examples[0], ["The answer to a says hi.", ""], 1)[0]  # P_all
