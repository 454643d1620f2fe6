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


def test_warm_start_examples_hook_adds_pairs_after_the_training_ones():
    seen = []

    def extras(train):
        seen.append([ex["id"] for ex in train])
        return [{"id": "x1"}, {"id": "x2"}]

    task = _task(warm_start_examples=extras)
    examples = task.load_examples("train")
    texts, pairs = policy_corpus(task, examples, block_contexts=True)
    assert seen == [["a", "b"]]  # the hook sees the training examples
    # training pairs (each also after P_all), then each extra once after its bare prompt, taught its reference
    assert [p[0][0]["content"] for p in pairs] == [
        "greet a",
        "greet a\n\nThe answer to a says hi.",
        "greet b",
        "greet b\n\nThe answer to b says hi.",
        "greet x1",
        "greet x2",
    ]
    assert pairs[-1] == ([{"role": "user", "content": "greet x2"}], "hi")
    assert "greet x1" in texts and "greet x2" in texts  # the tokenizer corpus covers the extras
    _, without = policy_corpus(_task(), examples, block_contexts=True)
    assert pairs[:4] == without


def test_warm_start_examples_change_the_cache_key():
    from mrtpo_sdk.policy.default import DefaultPolicyConfig, cache_key

    task = _task()
    examples = task.load_examples("train")
    config = DefaultPolicyConfig(seed=0)
    base = cache_key(*policy_corpus(task, examples), config)
    one = cache_key(*policy_corpus(_task(warm_start_examples=lambda tr: [{"id": "x1"}]), examples), config)
    two = cache_key(*policy_corpus(_task(warm_start_examples=lambda tr: [{"id": "x2"}]), examples), config)
    assert len({base, one, two}) == 3
    assert one == cache_key(*policy_corpus(_task(warm_start_examples=lambda tr: [{"id": "x1"}]), examples), config)


def test_warm_start_examples_hook_errors_are_one_line():
    import pytest

    from mrtpo_sdk.errors import MRTPOError

    def broken(train):
        raise KeyError("db")

    task = _task(warm_start_examples=broken)
    with pytest.raises(MRTPOError, match=r"task 'hi': warm_start_examples raised KeyError\('db'\)"):
        policy_corpus(task, task.load_examples("train"))
