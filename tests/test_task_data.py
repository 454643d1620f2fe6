"""Task(examples=...): datasets.Dataset, lists, local files (JSONL / JSON / Parquet / CSV), dicts of splits,
functions; generated ids; duplicate ids named by row; and a Dataset-built task trained end to end."""

import hashlib
import json
import socket
from dataclasses import dataclass
from pathlib import Path

import datasets
import pytest
from datasets import Dataset, DatasetDict

from mrtpo_sdk import MRTPOError, Result, Task, verifier
from mrtpo_sdk.reward_functions import rows_with_ids
from mrtpo_sdk.task import TaskFunctionError, example_id, with_ids

ROWS = [{"q": "what is one plus one?", "a": "two"}, {"q": "what is two plus two?", "a": "four"}, {"q": "3?", "a": "x"}]


def expected_id(i, row):
    return f"{i}-" + hashlib.sha1(json.dumps(row, sort_keys=True).encode()).hexdigest()[:8]


@verifier(kind="reference")
def correct(example, completion):
    return Result(float(example["a"] in completion), f"The answer is {example['a']}.")


def make(examples, **kw):
    return Task(name="toy", examples=examples, prompt=lambda ex: ex["q"], verifiers=[correct], **kw)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No network, and the Hugging Face datasets cache is a folder that must stay untouched."""

    def no_network(*args, **kwargs):
        raise AssertionError("examples= tried the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    hf_cache = tmp_path / "hf-datasets-cache"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    yield hf_cache
    assert not hf_cache.exists()


def test_a_dataset_without_ids_gets_stable_generated_ids():
    task = make(Dataset.from_list(ROWS))
    examples = task.load_examples()
    assert examples == [{**row, "id": expected_id(i, row)} for i, row in enumerate(ROWS)]
    assert [example_id(e) for e in make(Dataset.from_list(ROWS)).load_examples()] == [e["id"] for e in examples]
    assert task.eval_split is None  # one split: nothing held out
    assert task.rollout_prompt(examples[1]) == "what is two plus two?"


def test_a_list_of_dicts_without_ids_gets_ids_and_is_not_mutated():
    rows = [dict(r) for r in ROWS]
    examples = make(rows).load_examples()
    assert [e["id"] for e in examples] == [expected_id(i, r) for i, r in enumerate(ROWS)]
    assert rows == ROWS  # the user's dicts are left as they were
    # the TRL path uses the same ids
    assert [r["id"] for r in rows_with_ids(ROWS)] == [e["id"] for e in examples]


def test_rows_with_ids_keep_them_and_objects_keep_working():
    rows = [{"id": 7, "q": "a"}, {"id": "x", "q": "b"}]
    assert make(rows).load_examples() == rows
    assert make(rows).load_examples()[0] is rows[0]

    @dataclass
    class Ex:
        id: str
        q: str

    objs = [Ex("e1", "first"), Ex("e2", "second")]
    assert make(objs).load_examples() == objs
    with pytest.raises(MRTPOError) as info:
        make([Ex("e1", "x"), object()]).load_examples()
    assert str(info.value).startswith("task 'toy', split 'train': row 1 (object ") and "has no 'id'" in str(info.value)


def test_duplicate_ids_name_both_rows_and_the_split():
    rows = [{"id": "a", "q": "1"}, {"id": "b", "q": "2"}, {"id": "a", "q": "3"}]
    with pytest.raises(MRTPOError) as info:
        make({"train": rows}).load_examples("train")
    assert str(info.value) == "task 'toy', split 'train': rows 0 and 2 have the same id 'a'; ids must be unique"
    with pytest.raises(MRTPOError) as info:
        make(Dataset.from_list([{"id": 1, "q": "1"}, {"id": 1, "q": "2"}])).load_examples()
    assert str(info.value) == "task 'toy', split 'train': rows 0 and 1 have the same id '1'; ids must be unique"
    with pytest.raises(MRTPOError) as info:
        make(Dataset.from_list([{"id": "a", "q": "1"}, {"q": "2"}])).load_examples()  # the Dataset fills in None
    assert str(info.value) == (
        "task 'toy', split 'train': row 1 has no 'id' but row 0 has one ('a'); give every row an id, or none (ids "
        "are then generated from the row index and content)"
    )
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet", ".csv"])
def test_files_are_read_locally_with_datasets(tmp_path, offline, suffix):
    path = tmp_path / f"examples{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    elif suffix == ".json":
        path.write_text(json.dumps(ROWS))
    else:
        ds = Dataset.from_list(ROWS)
        ds.to_parquet(str(path)) if suffix == ".parquet" else ds.to_csv(str(path), index=False)
    for examples in (str(path), path):
        task = make(examples)
        assert task.load_examples() == [{**row, "id": expected_id(i, row)} for i, row in enumerate(ROWS)]
        assert task.load_examples() == task.load_examples()


def test_a_file_with_ids_and_a_bad_file(tmp_path, offline):
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "q1", "q": "x", "a": "1"}\n{"id": "q2", "q": "y", "a": "2"}\n')
    assert [e["id"] for e in make(good).load_examples()] == ["q1", "q2"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(MRTPOError) as info:
        make(bad).load_examples()
    message = str(info.value)
    assert message.startswith(f"examples: cannot read {bad} as JSON lines: ArrowInvalid(") and "\n" not in message
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(MRTPOError, match="^task 'toy': split 'train' has no examples$"):
        make(empty).load_examples()
    with pytest.raises(MRTPOError, match="has fixed examples; it does not take --data"):
        make(good).load_examples(data="other.jsonl")


def test_path_errors_are_one_line(tmp_path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(MRTPOError) as info:
        make(str(missing))
    assert str(info.value) == f"examples: no such file {missing}"
    with pytest.raises(MRTPOError) as info:
        make({"train": ROWS, "dev": missing})
    assert str(info.value) == f"examples['dev']: no such file {missing}"
    (tmp_path / "data.txt").write_text("x")
    with pytest.raises(MRTPOError) as info:
        make(tmp_path / "data.txt")
    assert str(info.value) == (
        f"examples: {str(tmp_path / 'data.txt')!r} is not a file type examples= reads; give a .jsonl, .json, "
        f".parquet or .csv file (a Hub dataset: load it with datasets.load_dataset and pass the Dataset)"
    )
    with pytest.raises(MRTPOError, match="is an IterableDataset; pass a datasets.Dataset"):
        make(Dataset.from_list(ROWS).to_iterable_dataset())


def test_a_dict_of_splits(tmp_path):
    val = tmp_path / "val.jsonl"
    val.write_text('{"q": "four?", "a": "4"}\n')
    task = make({"train": Dataset.from_list(ROWS), "validation": val}, eval_split="validation")
    assert task.eval_split == "validation"
    assert [e["q"] for e in task.load_examples("train")] == [r["q"] for r in ROWS]
    assert task.load_examples("validation") == [{"q": "four?", "a": "4", "id": expected_id(0, {"q": "four?", "a": "4"})}]
    with pytest.raises(MRTPOError) as info:
        task.load_examples("test")
    assert str(info.value) == "task 'toy' has no split 'test'; its examples= dict has 'train', 'validation'"
    with pytest.raises(MRTPOError) as info:
        make({"train": ROWS}, eval_split="test")
    assert str(info.value) == "Task 'toy': eval_split='test' is not a split of examples (splits: 'train')"
    assert make({"train": ROWS}).eval_split is None  # the default 'dev' where there is none
    both = make(DatasetDict(train=Dataset.from_list(ROWS), dev=Dataset.from_list(ROWS[:1])))
    assert both.eval_split == "dev" and len(both.load_examples("dev")) == 1
    calls = []

    def dev(split, data=None):
        calls.append((split, data))
        return [{"q": "x", "a": "1"}]

    lazy = make({"train": ROWS, "dev": dev})
    assert lazy.load_examples("dev", data="d")[0]["q"] == "x" and calls == [("dev", "d")]
    with pytest.raises(MRTPOError, match="must be a list of examples, a datasets.Dataset"):
        make({"train": 42})


def test_a_raising_loader_stays_one_task_function_error():
    def examples(split):
        raise ValueError("broken loader")

    with pytest.raises(TaskFunctionError) as info:
        make(examples).load_examples()
    message = str(info.value)
    assert message.endswith("examples() raised ValueError('broken loader') loading split 'train'")
    assert "test_task_data.py:" in message and "\n" not in message
    # a function that returns rows without ids gets generated ones too
    assert make(lambda split: Dataset.from_list(ROWS)).load_examples("dev")[2]["id"] == expected_id(2, ROWS[2])


def test_with_ids_leaves_examples_with_ids_alone():
    rows = [{"id": "a"}, {"id": "b"}]
    out = with_ids(rows, "x")
    assert out == rows and out is not rows and out[1] is rows[1]


def test_a_dataset_task_trains_end_to_end(tmp_path):
    from mrtpo_sdk.policy import DefaultPolicyConfig, build_model, build_tokenizer
    from mrtpo_sdk.trainer import MRTPOTrainer
    from mrtpo_sdk.trainer.callbacks import read_metrics

    from .helpers import TINY_POLICY, config

    rows = [{"q": f"what is {i} plus {i}?", "a": str(2 * i)} for i in range(8)]
    task = Task(name="ds-toy", examples=Dataset.from_list(rows), prompt=lambda ex: ex["q"], verifiers=[correct])
    texts = [r["q"] for r in rows] + [r["a"] for r in rows]
    tok = build_tokenizer(texts * 4, vocab_size=300)
    model = build_model(tok, DefaultPolicyConfig(**TINY_POLICY))
    args = config(tmp_path, max_steps=1)
    MRTPOTrainer(task, model, args, processing_class=tok).train()
    out = Path(args.output_dir)
    metrics = read_metrics(out / "metrics.jsonl")
    assert [r["step"] for r in metrics] == [1] and 0.0 <= metrics[0]["rewards/correct/mean"] <= 1.0
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    generated = {expected_id(i, row) for i, row in enumerate(rows)}
    assert samples and all(s["example_id"] in generated for s in samples)
