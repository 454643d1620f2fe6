"""The flow a new author follows: `new` -> `lint` clean -> `check` passes -> `train --max_steps 2` (tiny policy)."""

import json

import pytest

from mrtpo_sdk.cli import main


@pytest.mark.slow
def test_new_author_flow(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))  # the embedded policy is built here

    assert main(["new", "capitals"]) == 0
    out = capsys.readouterr().out
    assert "capitals.py" in out and "mrtpo-sdk check capitals.py" in out

    assert main(["lint", "capitals.py", "--isolated"]) == 0
    assert "All checks passed" in capsys.readouterr().out

    assert main(["check", "capitals.py"]) == 0
    assert "ok: every reference completion earns full reward" in capsys.readouterr().out

    code = main(
        [
            "train",
            "capitals.py",
            "--max_steps",
            "2",
            "--policy_preset",
            "tiny",
            "--per_device_train_batch_size",
            "4",
            "--num_generations",
            "2",
            "--max_completion_length",
            "16",
            "--output_dir",
            "run",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "trained 2 steps" in out
    every = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in every if any(k.startswith("rewards/") for k in r)]
    assert [r["step"] for r in rows] == [1, 2]
    # the template's held-out "validation" lines are scored before, during and after training
    assert [r["step"] for r in every if "eval/all_rewards" in r] == [0, 1, 2]
    assert "dev (validation, " in out
    for row in rows:
        for name in ("answer_format", "correct_answer"):
            assert 0.0 <= row[f"rewards/{name}/mean"] <= 1.0
            assert f"concentration/{name}" in row  # null in a step where the reward had no replayed pair
