"""The BFCL loader: committed subset, installed-package lookup, held-out split, the task's options, data errors."""

import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from mrtpo_sdk.toolcall import (
    CATEGORIES,
    BFCLDataError,
    installed_data_dir,
    is_held_out,
    load_bfcl,
    resolve_categories,
)

BUNDLED = Path(__file__).resolve().parents[2] / "tasks" / "data" / "bfcl"


def test_bundled_subset_counts_and_fields():
    everything = load_bfcl(BUNDLED, CATEGORIES, "all")
    counts = Counter(e.category for e in everything)
    assert counts == {
        "simple_python": 60, "multiple": 40, "parallel": 41, "parallel_multiple": 40, "live_simple": 40,
        "live_multiple": 40, "live_parallel": 16, "live_parallel_multiple": 12, "irrelevance": 30,
        "live_irrelevance": 30,
    }
    first = everything[0]
    assert first.id == "simple_python_0"
    assert first.messages == [{"role": "user", "content": "Find the area of a triangle with a base of 10 units and height of 5 units."}]
    assert [f["name"] for f in first.functions] == ["calculate_triangle_area"]
    assert first.possible_answer == [{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]
    irr = [e for e in everything if e.category == "irrelevance"]
    assert all(e.possible_answer == [] and e.expects_no_call for e in irr)


def test_held_out_split_is_fixed_and_disjoint():
    train = {e.id for e in load_bfcl(BUNDLED, CATEGORIES, "train")}
    test = {e.id for e in load_bfcl(BUNDLED, CATEGORIES, "test")}
    assert not train & test and len(train) + len(test) == 349
    assert all(is_held_out(i) for i in test) and not any(is_held_out(i) for i in train)
    # the split is a pure function of the id (sha256): these never move
    assert is_held_out("simple_python_12") is False
    assert sorted(i for i in test if i.startswith("simple_python")) == ["simple_python_1", "simple_python_182", "simple_python_76"]
    # sha256("simple_python_76")[:8] as a big-endian integer is 3 mod 100 (< 10: held out)
    digest = hashlib.sha256(b"simple_python_76").digest()
    assert int.from_bytes(digest[:8], "big") % 100 == 3


def test_alias_and_category_selection():
    assert {e.category for e in load_bfcl(BUNDLED, ["simple", "live_parallel"], "all")} == {"simple_python", "live_parallel"}
    with pytest.raises(BFCLDataError, match="unknown BFCL category 'java'"):
        load_bfcl(BUNDLED, ["java"])
    with pytest.raises(BFCLDataError) as err:
        load_bfcl(BUNDLED, ["simple"], "dev")
    assert str(err.value) == "unknown split 'dev'; the BFCL splits: train, test, all"


def _write(root: Path, cat: str, questions: list[str], answers: list[str] | None) -> None:
    (root / "possible_answer").mkdir(parents=True, exist_ok=True)
    (root / f"BFCL_v4_{cat}.json").write_text("\n".join(questions) + "\n")
    if answers is not None:
        (root / "possible_answer" / f"BFCL_v4_{cat}.json").write_text("\n".join(answers) + "\n")


Q = json.dumps({"id": "simple_python_0", "question": [[{"role": "user", "content": "hi"}]], "function": [{"name": "f", "parameters": {}}]})
A = json.dumps({"id": "simple_python_0", "ground_truth": [{"f": {}}]})


def test_malformed_files_name_file_and_line(tmp_path):
    _write(tmp_path, "simple_python", [Q, "{not json"], [A])
    with pytest.raises(BFCLDataError, match=r"BFCL_v4_simple_python.json:2: not JSON"):
        load_bfcl(tmp_path, ["simple"], "all")
    _write(tmp_path, "simple_python", [Q.replace("simple_python_0", "simple_python_9")], [A])
    with pytest.raises(BFCLDataError, match=r":1: id 'simple_python_9' has no possible answer"):
        load_bfcl(tmp_path, ["simple"], "all")
    _write(tmp_path, "simple_python", [Q], None)
    (tmp_path / "possible_answer" / "BFCL_v4_simple_python.json").unlink()
    with pytest.raises(BFCLDataError, match="missing BFCL data file"):
        load_bfcl(tmp_path, ["simple"], "all")
    multi = json.dumps({"id": "simple_python_0", "question": [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]], "function": []})
    _write(tmp_path, "simple_python", [multi], [A])
    with pytest.raises(BFCLDataError, match="multi-turn is not supported"):
        load_bfcl(tmp_path, ["simple"], "all")
    with pytest.raises(BFCLDataError, match="not a directory"):
        load_bfcl(tmp_path / "nope", ["simple"])


def test_installed_package_is_found_by_importlib_resources(tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "bfcl_eval"
    _write(pkg / "data", "simple_python", [Q], [A])
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setitem(sys.modules, "bfcl_eval", None)  # undone after the test: no fake package for later tests
    del sys.modules["bfcl_eval"]
    assert installed_data_dir() == pkg / "data"
    assert [e.id for e in load_bfcl(None, ["simple"], "all")] == ["simple_python_0"]


def test_not_installed(monkeypatch):
    from mrtpo_sdk.toolcall import data

    monkeypatch.setattr(data, "installed_data_dir", lambda: None)
    with pytest.raises(BFCLDataError, match="pip install --no-deps bfcl-eval==2026.3.23"):
        data.load_bfcl(None, ["simple"])


def test_resolve_categories_aliases_all_and_unknown():
    assert resolve_categories(["simple", "live_multiple", "simple_python"]) == ("simple_python", "live_multiple")
    assert resolve_categories(["all"]) == CATEGORIES
    assert resolve_categories(["irrelevance", "all"])[:2] == ("irrelevance", "simple_python")
    with pytest.raises(BFCLDataError, match=r"unknown BFCL category 'simpel' \(did you mean simple\?\)"):
        resolve_categories(["simpel"])


def test_task_options_select_categories_and_prompt_length():
    from mrtpo_sdk import MRTPOError, load_task

    task = load_task(Path(__file__).resolve().parents[2] / "tasks" / "bfcl.py")
    assert task.option_values == {"categories": ("all",), "max_prompt_chars": 2000, "semantics": "training"}
    two = task.with_options(categories="simple,live_multiple", max_prompt_chars="0").load_examples("all", BUNDLED)
    # 40 live_multiple questions less the one no call can answer (the task drops it)
    assert Counter(e.category for e in two) == {"simple_python": 60, "live_multiple": 39}
    short = task.with_options(categories="simple", max_prompt_chars="1000").load_examples("all", BUNDLED)
    assert 0 < len(short) < 60
    with pytest.raises(MRTPOError, match="option 'max_prompt_chars' of task 'bfcl' is a whole number"):
        task.with_options(max_prompt_chars="lots")
    with pytest.raises(BFCLDataError, match="max_prompt_chars is a number of characters"):
        task.with_options(max_prompt_chars=-1).load_examples("train", BUNDLED)
    with pytest.raises(BFCLDataError, match="unknown BFCL category 'simpel'"):
        task.with_options(categories="simpel").load_examples("train", BUNDLED)
