"""Task declaration checks and the replay contexts of spec §3."""

import pytest

from mrtpo_sdk import MRTPOError, Result, Task, verifier


@verifier
def a(example, completion):
    return Result(1.0, f"A for {example['id']}")


@verifier
def b(example, completion):
    return Result(0.0, "")


@verifier
def c(example, completion):
    return Result(0.0, "C block")


def chat(ex):
    return [{"role": "system", "content": "sys"}, {"role": "user", "content": f"Q{ex['id']}"}]


def make(**kw):
    base = dict(name="t", examples=[{"id": 1}, {"id": 2}], prompt=chat, verifiers=[a, b, c])
    base.update(kw)
    return Task(**base)


def test_append_contexts_chat():
    task = make()
    blocks = ["A1", "", "C1"]
    p_all, p_wo = task.replay_prompts({"id": 1}, blocks, k=0)
    assert p_all[-1]["content"] == "Q1\n\nA1\n\nC1"
    assert p_wo[-1]["content"] == "Q1\n\nC1"
    assert p_all[0] == {"role": "system", "content": "sys"}
    _, p_wo2 = task.replay_prompts({"id": 1}, blocks, k=2)
    assert p_wo2[-1]["content"] == "Q1\n\nA1"
    # P_0 is untouched (sampling uses it alone)
    assert task.rollout_prompt({"id": 1})[-1]["content"] == "Q1"


def test_append_contexts_text_and_separator():
    task = make(prompt=lambda ex: f"Question {ex['id']}:", block_separator="\n")
    p_all, p_wo = task.replay_prompts({"id": 2}, ["x", "y", "z"], k=1)
    assert p_all == "Question 2:\nx\ny\nz"
    assert p_wo == "Question 2:\nx\nz"


def test_in_prompt_contexts():
    def prompt_without(ex, name):
        return [{"role": "user", "content": f"Q{ex['id']} without {name}"}]

    task = make(block_placement="in-prompt", prompt_without=prompt_without)
    p_all, p_wo = task.replay_prompts({"id": 1}, ["", "", ""], k=1)
    assert p_all == chat({"id": 1})
    assert p_wo == [{"role": "user", "content": "Q1 without b"}]


def test_in_prompt_requires_prompt_without():
    with pytest.raises(MRTPOError, match="prompt_without"):
        make(block_placement="in-prompt")


@pytest.mark.parametrize(
    "kw, fragment",
    [
        (dict(verifiers=[]), "verifiers is empty"),
        (dict(verifiers=[a, lambda e, c: None]), "verifiers[1] is function"),
        (dict(verifiers=[a, a]), "unique"),
        (dict(block_placement="prepend"), "block_placement"),
        (dict(name=""), "name"),
        (dict(examples=42), "examples must be"),
    ],
)
def test_declaration_errors(kw, fragment):
    with pytest.raises(MRTPOError) as info:
        make(**kw)
    assert fragment in str(info.value)


def test_examples_function_gets_split_and_data(tmp_path):
    calls = []

    def examples(split, data=None):
        calls.append((split, data))
        return [{"id": f"{split}-0"}]

    task = make(examples=examples)
    assert task.load_examples("dev", data=tmp_path) == [{"id": "dev-0"}]
    assert calls == [("dev", tmp_path)]


def test_examples_errors():
    with pytest.raises(MRTPOError, match=r"^task 't', split 'train': rows 0 and 1 have the same id '1'; ids must be"):
        make(examples=[{"id": 1}, {"id": 1}]).load_examples()
    assert make(examples=[{"x": 1}]).load_examples() == [{"x": 1, "id": "0-c8b0bcdb"}]  # a generated id
    with pytest.raises(MRTPOError, match="no examples"):
        make(examples=lambda split: []).load_examples()
    with pytest.raises(MRTPOError, match="does not take --data"):
        make(examples=lambda split: [{"id": 1}]).load_examples(data="x")


def test_bad_prompt_is_reported():
    task = make(prompt=lambda ex: {"role": "user"})
    with pytest.raises(MRTPOError, match="prompt"):
        task.rollout_prompt({"id": 1})


def test_score_returns_one_result_per_verifier():
    task = make()
    assert task.score({"id": 5}, "anything") == [Result(1.0, "A for 5"), Result(0.0, ""), Result(0.0, "C block")]
