"""The bundled task: splits, slot verifiers, in-prompt replay contexts, references that earn full reward."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mrtpo_sdk import MRTPOError, load_task
from mrtpo_sdk.instructions import (
    IFExample,
    ReferenceError,
    build_reference,
    compose_example,
    constraint_ids,
    constraint_type_verifier,
    describe,
)

TASK_FILE = Path(__file__).parents[2] / "tasks" / "instruction_following.py"


@pytest.fixture(scope="module")
def task():
    return load_task(str(TASK_FILE))


@pytest.fixture(scope="module")
def splits(task):
    return {s: task.load_examples(s) for s in ("train", "validation", "unseen")}


def test_splits_sizes_and_constraint_types(task, splits) -> None:
    assert task.block_placement == "in-prompt"
    assert task.verifier_names == ["constraint_1", "constraint_2", "constraint_3", "constraint_4"]
    assert all(v.kind == "constraint" for v in task.verifiers)
    assert len(splits["train"]) >= 300 and len(splits["validation"]) >= 50 and len(splits["unseen"]) >= 100
    seen, unseen = set(constraint_ids(unseen=False)), set(constraint_ids(unseen=True))
    for split in ("train", "validation"):
        types = Counter(c.id for ex in splits[split] for c in ex.constraints)
        assert set(types) <= seen
    assert set(Counter(c.id for ex in splits["train"] for c in ex.constraints)) == seen
    unseen_types = {c.id for ex in splits["unseen"] for c in ex.constraints}
    assert unseen_types >= unseen  # every held-out type is evaluated
    assert all(any(c.id in unseen for c in ex.constraints) for ex in splits["unseen"])
    sizes = Counter(len(ex.constraints) for ex in splits["train"])
    assert set(sizes) == {1, 2, 3, 4}
    with pytest.raises(MRTPOError) as err:
        task.load_examples("test")
    assert str(err.value) == "unknown split 'test'; the bundled splits: train, validation, unseen"


def test_every_reference_earns_full_reward_from_every_verifier(task, splits) -> None:
    for split, examples in splits.items():
        for ex in examples:
            ref = task.reference_completion(ex)
            results = task.score(ex, ref)
            for j, r in enumerate(results):
                if j < len(ex.constraints):
                    assert r is not None and r.reward == 1.0, (split, ex.id, j, ex.constraints[j].id, ref)
                    assert r.block == ex.sentence(j) and r.block in ex.prompt
                else:
                    assert r is None


def test_verifier_rewards_and_blocks_on_a_bad_completion(task, splits) -> None:
    ex = next(e for e in splits["train"] if len(e.constraints) == 3)
    results = task.score(ex, "")
    assert [r.reward for r in results[:3]] == [0.0, 0.0, 0.0]  # strict: an empty response follows nothing
    assert [r.block for r in results[:3]] == [describe(c.id, c.kwargs) for c in ex.constraints]
    assert results[3] is None


def test_replay_contexts_leave_out_exactly_one_constraint_sentence(task, splits) -> None:
    ex = next(e for e in splits["train"] if len(e.constraints) == 3)
    blocks = [r.block if r else "" for r in task.score(ex, task.reference_completion(ex))]
    p0 = task.rollout_prompt(ex)
    assert p0 == [{"role": "user", "content": ex.prompt}]  # one user message: read through the chat template
    for k in range(3):
        p_all, p_k = task.replay_prompts(ex, blocks, k)
        assert p_all == p0  # in-prompt: the information is already there
        assert [m["role"] for m in p_k] == ["user"]
        p_all, p_k = p_all[0]["content"], p_k[0]["content"]
        sentence = ex.sentence(k)
        assert sentence and sentence not in p_k
        assert len(p_all) - len(p_k) == len(sentence) + 1  # the sentence and one separator
        assert p_k == p_all.replace(" " + sentence, "", 1)
    # slot 4 does not apply to this example: its context is the prompt itself
    assert task.replay_prompts(ex, blocks, 3) == (p0, p0)


def test_type_keyed_verifier_and_reference_failures() -> None:
    ex = compose_example("t", "Write about tea.", [("punctuation:no_comma", {}), ("detectable_format:title", {})])
    v = constraint_type_verifier("detectable_format:title")
    assert v.name == "detectable_format_title" and v.kind == "constraint"
    assert v.score(ex, "<<Tea>> Hot tea.").reward == 1.0
    assert v.score(ex, "Hot tea.").reward == 0.0
    assert constraint_type_verifier("startend:quotation").score(ex, "x") is None
    with pytest.raises(MRTPOError, match="expected an IFExample"):
        v.score({"id": "x"}, "text")
    with pytest.raises(ReferenceError, match="english_capital|english_lowercase"):
        build_reference([("change_case:english_capital", {}), ("change_case:english_lowercase", {})])
    assert isinstance(ex, IFExample)


def test_data_flag_reads_ifeval_jsonl_and_warns_about_unlocated_constraints(task, tmp_path, capsys) -> None:
    import json

    rows = [
        {
            "key": 1,
            "prompt": "Write a haiku about rain. Do not use any commas in your response.",
            "instruction_id_list": ["punctuation:no_comma"],
            "kwargs": [{}],
        },
        {
            "key": 2,
            "prompt": "Write a haiku about snow.",
            "instruction_id_list": ["startend:quotation"],
            "kwargs": [{}],
        },
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    examples = task.load_examples("train", data=str(path))
    assert [e.id for e in examples] == ["1", "2"]
    err = capsys.readouterr().err
    assert "1 constraint(s) in 1 example(s) could not be located" in err and "['2']" in err
    rain, snow = examples
    user = lambda text: [{"role": "user", "content": text}]  # noqa: E731
    assert task.replay_prompts(rain, ["x", "", "", ""], 0) == (user(rain.prompt), user("Write a haiku about rain."))
    assert task.score(snow, '"Snow falls."')[0].block == ""  # unlocated: no block, never replayed
    assert task.score(snow, '"Snow falls."')[0].reward == 1.0
    assert task.score(rain, task.reference_completion(rain))[0].reward == 1.0


def test_a_data_file_is_split_by_id_so_validation_is_held_out_from_training(task, tmp_path) -> None:
    import json

    rows = [
        {
            "key": i,
            "prompt": f"Write a note about harbor number {i}. Do not use any commas in your response.",
            "instruction_id_list": ["punctuation:no_comma"],
            "kwargs": [{}],
        }
        for i in range(200)
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    ids = lambda t, split, file=path: [e.id for e in t.load_examples(split, data=str(file))]  # noqa: E731
    train, validation, every = ids(task, "train"), ids(task, "validation"), ids(task, "all")
    assert every == [str(i) for i in range(200)]
    assert not set(train) & set(validation) and sorted(train + validation, key=int) == every
    assert 8 <= len(validation) <= 35  # 10% of 200 rows, by a hash of each id
    # an id stays in its split whatever else the file holds, and a larger share holds out a superset
    (tmp_path / "half.jsonl").write_text("\n".join(json.dumps(r) for r in rows[:100]), encoding="utf-8")
    assert ids(task, "validation", tmp_path / "half.jsonl") == [i for i in validation if int(i) < 100]
    wider = ids(task.with_options(validation_percent=50), "validation")
    assert set(validation) < set(wider) and 70 <= len(wider) <= 130
    assert ids(task.with_options(validation_percent=0), "train") == every
    with pytest.raises(MRTPOError, match="split 'validation' has no examples"):
        ids(task.with_options(validation_percent=0), "validation")
    with pytest.raises(MRTPOError, match=r"a data file has the splits train, validation, all .* not 'unseen'"):
        ids(task, "unseen")
    with pytest.raises(MRTPOError, match="validation_percent is 0 to 100, got 101"):
        ids(task.with_options(validation_percent=101), "train")
    with pytest.raises(MRTPOError, match="-T validation_percent splits a --data file; the bundled data has its own"):
        task.with_options(validation_percent=20).load_examples("validation")


def test_semantics_loose_mode_and_ifeval_accuracy_variants(task, splits) -> None:
    from mrtpo_sdk.evaluation import EvalRecord, ifeval_accuracy
    from mrtpo_sdk.instructions import check, constraint_verifiers

    # loose mode (IFEval's): a last line after the phrase, or "*" emphasis around it, passes (strict mode fails it)
    end, kw = "startend:end_checker", {"end_phrase": "Any other questions?"}
    for text in ("Tea is hot. Any other questions?\nHope this helps", "Tea is hot. *Any other questions?*"):
        assert not check(end, kw, text, semantics="official")
        assert check(end, kw, text, semantics="official", loose=True)
        assert check(end, kw, text, loose=True)
    title = "detectable_format:title"
    assert check(title, {}, "Intro line\n<<Tea>>\nText.", loose=True)
    with pytest.raises(ValueError, match="semantics"):
        check(title, {}, "<<Tea>>", semantics="lenient")
    with pytest.raises(ValueError, match="semantics"):
        constraint_verifiers(2, semantics="lenient")
    # the task's rewards are training semantics: the prompt pasted back earns nothing
    bullets = ("detectable_format:number_bullet_lists", {"num_bullets": 2})
    ex = compose_example("m", "Write about tea.", [(title, {}), bullets])
    assert [r.reward for r in task.score(ex, ex.prompt)[:2]] == [0.0, 0.0]
    assert [v.score(ex, ex.prompt).reward for v in constraint_verifiers(2, semantics="official")] == [1.0, 1.0]
    # ifeval_accuracy adds loose and official variants when the records carry their examples
    good = task.reference_completion(ex)
    recs = [
        EvalRecord("m", 0, ex.prompt, {f"constraint_{j + 1}": r.reward if r else None for j, r in
                                       enumerate(task.score(ex, ex.prompt))}, 1, example=ex),
        EvalRecord("m", 1, good, {f"constraint_{j + 1}": r.reward if r else None for j, r in
                                  enumerate(task.score(ex, good))}, 1, example=ex),
    ]  # fmt: skip
    out = ifeval_accuracy()(recs)
    assert out == {
        "prompt_level_strict_acc": 0.5, "inst_level_strict_acc": 0.5,
        "prompt_level_loose_acc": 0.5, "inst_level_loose_acc": 0.5,
        "prompt_level_strict_acc_official": 1.0, "inst_level_strict_acc_official": 1.0,
        "prompt_level_loose_acc_official": 1.0, "inst_level_loose_acc_official": 1.0,
        # per constraint type, strict with the task's rewards: the pasted prompt fails both, the reference passes both
        f"inst_level_strict_acc/{title}": 0.5, f"inst_level_strict_acc/{bullets[0]}": 0.5,
        # per scope: the title is decided by a few tokens (local), the bullet count by the whole text (global)
        "inst_level_strict_acc/local": 0.5, "inst_level_strict_acc/global": 0.5,
    }  # fmt: skip
    # one record that follows the title and not the bullets: the two types part ways
    titled = "<<Tea>>\nTea is hot."
    rewards = {f"constraint_{j + 1}": r.reward if r else None for j, r in enumerate(task.score(ex, titled))}
    assert rewards["constraint_1"] == 1.0 and rewards["constraint_2"] == 0.0
    per_type = {k: v for k, v in ifeval_accuracy()([EvalRecord("m", 0, titled, rewards, 1, example=ex)]).items()
                if "/" in k}
    assert per_type == {
        f"inst_level_strict_acc/{title}": 1.0, f"inst_level_strict_acc/{bullets[0]}": 0.0,
        "inst_level_strict_acc/local": 1.0, "inst_level_strict_acc/global": 0.0,
    }  # fmt: skip
