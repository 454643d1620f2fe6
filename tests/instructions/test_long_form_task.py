"""The bundled long-form task: deterministic generated data, references that earn every reward, in-prompt ``P_\\k``,
constraints that concern a few tokens, and the report gate (a short completion earns nothing)."""

from __future__ import annotations

import difflib
from collections import Counter
from pathlib import Path

import pytest

from mrtpo_sdk import MRTPOError, load_task
from mrtpo_sdk.resources import bundled_task_file

TASK_FILE = Path(__file__).resolve().parents[2] / "tasks" / "long_form.py"


@pytest.fixture(scope="module")
def task():
    return load_task(str(TASK_FILE))


@pytest.fixture(scope="module")
def train(task):
    return task.load_examples("train")


def test_splits_are_deterministic_and_sized(task, train) -> None:
    assert task.block_placement == "in-prompt" and task.eval_split == "validation"
    assert task.verifier_names == ["constraint_1", "constraint_2", "constraint_3"]
    assert len(train) == 1200 and len(task.load_examples("validation")) == 100
    again = task.load_examples("train")
    assert [ex.prompt for ex in again] == [ex.prompt for ex in train]
    assert [task.reference_completion(ex) for ex in again[:50]] == [task.reference_completion(ex) for ex in train[:50]]
    assert Counter(len(ex.constraints) for ex in train).keys() == {1, 2, 3}
    types = Counter(c.id for ex in train for c in ex.constraints)
    assert set(types) == {"detectable_format:title", "keywords:existence", "startend:end_checker"}
    assert all(0.55 * len(train) < n < 0.8 * len(train) for n in types.values()), types
    val_prompts = {ex.prompt for ex in task.load_examples("validation")}
    assert len(val_prompts) == 100 and not val_prompts & {ex.prompt for ex in train}  # held out
    with pytest.raises(MRTPOError) as err:
        task.load_examples("test")
    assert str(err.value) == "unknown split 'test'; the splits: train, validation"
    with pytest.raises(MRTPOError, match="no --data"):
        task.load_examples("train", data="x.jsonl")
    assert bundled_task_file("long_form") == TASK_FILE.resolve() or bundled_task_file("long_form").name == "long_form.py"


def test_references_are_long_and_earn_every_reward(task, train) -> None:
    for ex in train + task.load_examples("validation"):
        ref = task.reference_completion(ex)
        assert 70 <= len(ref.split()) <= 150, (ex.id, ref)
        results = task.score(ex, ref)
        for j, r in enumerate(results):
            if j < len(ex.constraints):
                assert r is not None and r.reward == 1.0, (ex.id, j, ex.constraints[j].id, ref)
            else:
                assert r is None


def test_each_constraint_concerns_a_few_tokens(task, train) -> None:
    """Breaking only the tokens a constraint concerns costs exactly that reward."""
    ex = next(e for e in train if len(e.constraints) == 3)
    ref = task.reference_completion(ex)
    slot = {c.id: j for j, c in enumerate(ex.constraints)}
    end = ex.constraints[slot["startend:end_checker"]].kwargs["end_phrase"]
    kw = ex.constraints[slot["keywords:existence"]].kwargs["keywords"][0]
    broken = {
        "startend:end_checker": ref[: -len(end)].rstrip(),
        "keywords:existence": ref.replace(kw, "things"),
        "detectable_format:title": ref.replace("<<", "").replace(">>", ""),
    }
    for cid, text in broken.items():
        rewards = [r.reward for r in task.score(ex, text)]
        expect = [0.0 if j == slot[cid] else 1.0 for j in range(3)]
        assert rewards == expect, (cid, rewards, text)


def test_prompt_without_drops_exactly_that_sentence(task, train) -> None:
    for ex in train[:200]:
        for j, _ in enumerate(ex.constraints):
            messages = task.prompt_without(ex, f"constraint_{j + 1}")
            assert [m["role"] for m in messages] == ["user"]
            without = messages[0]["content"]
            sentence = ex.sentence(j)
            assert sentence and sentence not in without
            assert len(without) < len(ex.prompt)
            for other in range(len(ex.constraints)):
                if other != j:
                    assert ex.sentence(other) in without


def test_a_short_completion_earns_nothing(task, train) -> None:
    """The gate: the constraints' text without a report (fewer than 50 words) is not the task."""
    ex = next(e for e in train if len(e.constraints) == 3)
    slot = {c.id: c for c in ex.constraints}
    kws = " ".join(slot["keywords:existence"].kwargs["keywords"])
    end = slot["startend:end_checker"].kwargs["end_phrase"]
    short = f"<<Title>>\n\n{kws}. {end}"
    assert [r.reward for r in task.score(ex, short)] == [0.0, 0.0, 0.0]
    padded = f"<<Title>>\n\n{kws}. " + " ".join(f"word{i}" for i in range(60)) + f" {end}"
    assert [r.reward for r in task.score(ex, padded)] == [1.0, 1.0, 1.0]  # past the gate: it judges the constraint
    # filler and copies of the prompt are not a report
    pasted = f"<<Title>>\n\n{(ex.base + ' ') * 6}{kws}. {end}"
    joined = "-".join(f"w{i}" for i in range(60))
    zwsp = "\u200b".join(f"w{i}" for i in range(60))
    for text in (pasted, f"<<x>> {'a ' * 50}{kws}. {end}", f"<<x>> {(kws + ' ') * 50}{end}",
                 f"<<R>>\n{joined} {kws}. {end}", f"<<R>>\n{zwsp} {kws}. {end}"):
        assert [r.reward for r in task.score(ex, text)] == [0.0, 0.0, 0.0], text


def test_warm_start_drafts_break_constraints_in_the_tokens_they_concern(task, train) -> None:
    """The warm start's drafts: two per training report, each constraint broken with probability 0.75, so the
    corpus follows each constraint about half the time; a draft differs from its report only where it breaks one."""
    drafts = task.warm_start_examples(train)
    assert len(drafts) == 2 * len(train)
    followed = [r.reward for d in drafts for r in task.score(d, task.reference_completion(d)) if r is not None]
    n_ref = sum(len(ex.constraints) for ex in train)
    overall = (n_ref + sum(followed)) / (n_ref + len(followed))
    assert 0.2 < sum(followed) / len(followed) < 0.3 and 0.45 < overall < 0.55, overall
    by_id = {ex.id: ex for ex in train}
    for d in drafts[:300]:
        ref = task.reference_completion(by_id[d.id.rsplit("-draft", 1)[0]]).split()
        draft = task.reference_completion(d).split()
        broken = sum(r.reward == 0.0 for r in task.score(d, " ".join(draft)) if r is not None)
        changed = sum(max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in
                      difflib.SequenceMatcher(a=ref, b=draft, autojunk=False).get_opcodes() if op != "equal")
        assert changed <= 8 * broken, (changed, broken, ref, draft)
        assert (changed == 0) == (broken == 0)


def test_keywords_and_closings_appear_nowhere_else_in_the_grammar() -> None:
    """Only the keyword sentence / the closing can satisfy those constraints (a keyword inside a filler sentence
    would pay `keywords:existence` for free)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("long_form_grammar", TASK_FILE)
    lf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lf)
    filler = " ".join(lf.TOPICS + lf.TITLE_WORDS + lf.SUBJECTS + lf.VERBS + lf.OBJECTS + lf.TAILS + lf.ABOUT)
    filler += " ".join(lf.KEYWORD_SENTENCES)
    assert not [k for k in lf.KEYWORDS if k in filler.lower()]
    assert not [e for e in lf.END_PHRASES if e.lower() in filler.lower()]
