"""`update_alignment`: the cosine and distance of two runs' updates, against numpy on the flattened parameters;
`align_runs`: which runs it pairs, and why it skips the others."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from mrtpo_sdk.compare.updates import align_runs, json_safe, update_alignment


def _state(gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"w": torch.randn(4, 3, generator=gen), "b": torch.randn(3, generator=gen)}


def test_matches_numpy_on_the_flattened_updates():
    gen = torch.Generator().manual_seed(0)
    init, a, b = _state(gen), _state(gen), _state(gen)
    a["only_in_a"] = torch.ones(2)  # not in all three: left out
    got = update_alignment(init, a, b)
    flat = {n: np.concatenate([s[k].numpy().astype(np.float64).ravel() for k in ("w", "b")])
            for n, s in (("i", init), ("a", a), ("b", b))}
    da, db = flat["a"] - flat["i"], flat["b"] - flat["i"]
    na, nb = np.linalg.norm(da), np.linalg.norm(db)
    assert got["norm_a"] == pytest.approx(na, rel=1e-12) and got["norm_b"] == pytest.approx(nb, rel=1e-12)
    assert got["cos"] == pytest.approx(da @ db / (na * nb), rel=1e-12)
    assert got["rel"] == pytest.approx(np.linalg.norm(da - db) / math.sqrt(na * nb), rel=1e-12)


def test_same_opposite_and_zero_updates():
    init = {"w": torch.zeros(5)}
    step = {"w": torch.tensor([1.0, -2.0, 0.5, 0.0, 3.0])}
    same = update_alignment(init, step, {"w": 2 * step["w"]})
    assert same["cos"] == pytest.approx(1.0) and same["rel"] == pytest.approx(math.sqrt(0.5))
    assert update_alignment(init, step, {"w": -step["w"]})["cos"] == pytest.approx(-1.0)
    zero = update_alignment(init, step, init)
    assert math.isnan(zero["cos"]) and math.isnan(zero["rel"]) and zero["norm_b"] == 0.0


def test_policies_of_other_shapes_or_names_are_an_error():
    with pytest.raises(ValueError, match=r"tensor w: shapes \(2,\), \(2,\), \(3,\)"):
        update_alignment({"w": torch.zeros(2)}, {"w": torch.zeros(2)}, {"w": torch.zeros(3)})
    with pytest.raises(ValueError, match="share no tensor name"):
        update_alignment({"w": torch.zeros(2)}, {"v": torch.zeros(2)}, {"w": torch.zeros(2)})


# ------------------------------------------------------------------------------------------------ run folders


def _save(folder: Path, state: dict[str, torch.Tensor]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    save_file(state, str(folder / "model.safetensors"))
    return folder


def _run(root: Path, name: str, state, *, algo: str, seed, initial: Path, task: str = "sql",
         finished: bool = True) -> Path:
    run = root / name
    _save(run / "policy", state)
    info = {"algo": algo, "seed": seed, "task": task, "finished": finished, "initial_policy": str(initial)}
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return run


def test_runs_are_paired_by_task_and_seed_and_skipped_with_a_reason(tmp_path):
    gen = torch.Generator().manual_seed(1)
    init = _state(gen)
    start = _save(tmp_path / "initial", init)
    other_start = _save(tmp_path / "initial2", _state(gen))
    finals = {name: _state(gen) for name in ("m1", "g1", "r1", "m2", "g2", "x")}
    runs = [
        _run(tmp_path, "grpo-seed1", finals["r1"], algo="grpo", seed=1, initial=start),
        _run(tmp_path, "mrtpo-seed1", finals["m1"], algo="mrtpo", seed=1, initial=start),
        _run(tmp_path, "gdpo-seed1", finals["g1"], algo="gdpo", seed=1, initial=start),
        _run(tmp_path, "mrtpo-seed2", finals["m2"], algo="mrtpo", seed=2, initial=start),
        _run(tmp_path, "gdpo-seed2", finals["g2"], algo="gdpo", seed=2, initial=other_start),
        _run(tmp_path, "gdpo-seed3", finals["x"], algo="gdpo", seed=3, initial=start, finished=False),
        _run(tmp_path, "noseed", finals["x"], algo="gdpo", seed=None, initial=start),
        _run(tmp_path, "textseed", finals["x"], algo="gdpo", seed="1", initial=start),
        _run(tmp_path, "notjson", finals["x"], algo="gdpo", seed=1, initial=start),
        _run(tmp_path, "alist", finals["x"], algo="gdpo", seed=1, initial=start),
        _run(tmp_path, "if-mrtpo-seed1", finals["x"], algo="mrtpo", seed=1, initial=start, task="if"),
        _run(tmp_path, "if-mrtpo-seed1-again", finals["x"], algo="mrtpo", seed=1, initial=start, task="if"),
        _run(tmp_path, "if-gdpo-seed1", finals["x"], algo="gdpo", seed=1, initial=start, task="if"),
        _run(tmp_path, "lf-mrtpo-seed1", finals["x"], algo="mrtpo", seed=1, initial=start, task="lf"),
        _run(tmp_path, "lf-gdpo-seed1", finals["x"], algo="gdpo", seed=1, initial=tmp_path / "gone", task="lf"),
    ]
    (tmp_path / "noseed" / "run.json").write_text(json.dumps({"algo": "gdpo", "task": "sql", "finished": True}))
    (tmp_path / "notjson" / "run.json").write_text("{oops")
    (tmp_path / "alist" / "run.json").write_text("[1, 2]")
    result = align_runs(runs)
    assert [(p["task"], p["seed"], p["a"], p["b"]) for p in result["pairs"]] == [
        ("sql", 1, "mrtpo", "gdpo"), ("sql", 1, "mrtpo", "grpo"), ("sql", 1, "gdpo", "grpo")]
    first = result["pairs"][0]
    assert first["cos"] == pytest.approx(update_alignment(init, finals["m1"], finals["g1"])["cos"], rel=1e-12)
    assert first["parameters"] == 15 and first["tensors_left_out"] == 0
    why = {Path(s["run"]).name: s["why"] for s in result["skipped"]}
    assert why["gdpo-seed3"] == "unfinished"
    assert why["noseed"] == "run.json names no seed, so its pair is unknown"
    assert why["textseed"] == "run.json's seed '1' is not an integer"
    assert why["notjson"].startswith("run.json is not readable JSON (") and why["alist"] == "run.json is not a JSON object"
    assert why["mrtpo-seed2"] == why["gdpo-seed2"] == "sql seed 2: runs start from different policies"
    assert why["if-mrtpo-seed1"].startswith("2 runs of mrtpo if seed 1 (")
    assert why["if-gdpo-seed1"] == "no run of another algorithm of if seed 1 to pair with"
    assert why["lf-gdpo-seed1"].startswith(f"initial policy {tmp_path / 'gone'}: ")
    assert why["lf-mrtpo-seed1"] == "no run of another algorithm of lf seed 1 to pair with"
    assert len(result["skipped"]) == 12  # 15 runs, 3 of them paired


def test_a_policy_saved_in_another_dtype_is_skipped_not_measured(tmp_path):
    gen = torch.Generator().manual_seed(2)
    start = _save(tmp_path / "initial", _state(gen))
    a = _run(tmp_path, "mrtpo-seed1", _state(gen), algo="mrtpo", seed=1, initial=start)
    b = _run(tmp_path, "gdpo-seed1", {k: v.bfloat16() for k, v in _state(gen).items()}, algo="gdpo", seed=1,
             initial=start)
    result = align_runs([a, b])
    assert result["pairs"] == []
    assert result["skipped"] == [{"run": f"{a} vs {b}", "why": "tensor b: dtypes torch.float32, torch.float32, "
                                  "torch.bfloat16; compare policies saved in one dtype"}]


def test_a_policy_that_cannot_be_read_is_skipped_and_the_others_measured(tmp_path):
    gen = torch.Generator().manual_seed(3)
    start = _save(tmp_path / "initial", _state(gen))
    runs = [_run(tmp_path, f"{algo}-seed1", _state(gen), algo=algo, seed=1, initial=start)
            for algo in ("mrtpo", "gdpo", "grpo")]
    (runs[2] / "policy" / "model.safetensors").write_bytes(b"\x10\x00")  # truncated
    result = align_runs(runs)
    assert [(p["a"], p["b"]) for p in result["pairs"]] == [("mrtpo", "gdpo")]
    assert [s["run"] for s in result["skipped"]] == [str(runs[2])]
    assert result["skipped"][0]["why"].startswith("cannot read policy/model.safetensors: ")


def test_json_safe_writes_a_zero_update_as_null():
    assert json.loads(json.dumps(json_safe({"pairs": [{"cos": math.nan, "rel": 0.5}]}))) == {
        "pairs": [{"cos": None, "rel": 0.5}]}
