"""The embedded policy's corpus: warm-start extras and block contexts."""

import pytest

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


def test_task_warm_start_steps_sets_the_warm_start_cap_and_a_preset_keeps_its_own(monkeypatch):
    import mrtpo_sdk.policy.default as default_mod
    from mrtpo_sdk import Result, Task, verifier
    from mrtpo_sdk.errors import MRTPOError
    from mrtpo_sdk.policy.for_task import task_policy

    @verifier(kind="format")
    def says_yes(example, completion):
        return Result(float(completion == "yes"), "Answer yes.")

    seen = []
    monkeypatch.setattr(default_mod, "default_policy", lambda name, texts, pairs, config, **kw: seen.append(config))
    exs = [{"id": "a", "q": "say yes"}]
    base = dict(name="t", examples=exs, prompt=lambda ex: ex["q"], verifiers=[says_yes], reference=lambda ex: "yes")
    task_policy(Task(**base, warm_start_steps=1000), exs, seed=3)
    task_policy(Task(**base), exs, seed=3)
    lines = []
    task_policy(Task(**base, warm_start_steps=1000), exs, seed=3, preset="tiny", log=lines.append)
    assert [c.sft_max_steps for c in seen] == [1000, default_mod.DefaultPolicyConfig().sft_max_steps, 8]
    assert lines == ["[policy] --policy_preset tiny: 8 warm-start steps (the preset's), not the task's warm_start_steps=1000"]
    assert seen[0].seed == 3
    for bad in (-1, 2.5, True, "10"):
        with pytest.raises(MRTPOError, match="warm_start_steps must be a number of optimizer steps"):
            Task(**base, warm_start_steps=bad)
