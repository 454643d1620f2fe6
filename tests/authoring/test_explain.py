"""`mrtpo-sdk explain` on the bundled SQL task with the tiny embedded policy: HTML, PNG, JSON, concentration."""

import json
import re
from pathlib import Path

import pytest
import torch

from mrtpo_sdk.algorithms.concentration import token_share_for_mass
from mrtpo_sdk.cli import main

ROOT = Path(__file__).resolve().parents[2]
SQL = str(ROOT / "tasks" / "sql.py")

# Builds the tiny embedded policy for the SQL task (SFT warm start): about 6 s on 2 idle cores, more when busy.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def explained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("explain")
    mp = pytest.MonkeyPatch()
    mp.setenv("MRTPO_SDK_CACHE_DIR", str(tmp / "cache"))
    try:
        code = main(
            ["explain", SQL, "--policy_preset", "tiny", "--example", "train-0003", "--output_dir", str(tmp / "out")]
        )
    finally:
        mp.undo()
    assert code == 0
    return tmp / "out"


def test_writes_html_png_json(explained):
    names = sorted(p.name for p in explained.iterdir())
    assert names == ["explain-train-0003.html", "explain-train-0003.json", "explain-train-0003.png"]
    assert (explained / "explain-train-0003.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_html_has_one_row_per_reward_and_no_external_assets(explained):
    page = (explained / "explain-train-0003.html").read_text()
    rows = re.findall(r'<tr class="reward-row">.*?</tr>', page, flags=re.S)
    assert len(rows) == 3
    for name, row in zip(["sql_format", "executes", "result_match"], rows):
        assert f'<div class="name">{name}</div>' in row
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", page, flags=re.I)
    assert "<script" not in page.lower() and "@import" not in page and "url(" not in page
    assert "regardless" in page or "whatever its group variance" in page


def test_json_numbers_are_consistent(explained):
    data = json.loads((explained / "explain-train-0003.json").read_text())
    rewards = data["rewards"]
    assert list(rewards) == ["sql_format", "executes", "result_match"]
    assert [r["reward"] for r in rewards.values()] == [1.0, 1.0, 1.0]  # the reference completion
    assert rewards["executes"]["replayed"] is False and rewards["executes"]["block"] == ""
    assert rewards["executes"]["w"] == [1.0] * len(data["tokens"])
    for name in ("sql_format", "result_match"):
        r = rewards[name]
        assert r["replayed"] is True and len(r["q"]) == len(data["tokens"])
        assert all(0.0 <= x <= 1.0 for x in r["q"]) and max(r["q"]) > 0
        assert sum(r["w"]) / len(r["w"]) == pytest.approx(1.0, abs=1e-4)  # spec §5: mean weight 1
        # the reported concentration is the statistic of the reported q
        q = torch.tensor([[r["q"]]], dtype=torch.float64)
        expected = token_share_for_mass(q, torch.ones(1, len(r["q"]))).item()
        assert r["concentration"] == pytest.approx(expected, abs=1e-9)
        assert 0 < r["concentration"] <= 1
    assert "".join(data["tokens"]) == data["completion"]  # tokenized once; the ids decode back to the text


def test_model_path_and_completion_file(explained, tmp_path, capsys):
    # the embedded policy saved by the fixture is a regular Hugging Face folder: load it as --model
    policy_dir = next((explained.parent / "cache" / "policies").iterdir())
    (tmp_path / "c.txt").write_text("```sql\nSELECT name FROM nowhere\n```")
    args = ["explain", SQL, "--model", str(policy_dir), "--device", "cpu", "--example", "train-0003"]
    assert main(args + ["--completion", f"@{tmp_path / 'c.txt'}", "--output_dir", str(tmp_path / "o")]) == 0
    data = json.loads((tmp_path / "o" / "explain-train-0003.json").read_text())
    assert data["policy"] == str(policy_dir)
    assert data["completion"] == "```sql\nSELECT name FROM nowhere\n```"
    assert [r["reward"] for r in data["rewards"].values()] == [1.0, 0.0, 0.0]
    assert data["rewards"]["executes"]["block"] == "no such table: nowhere"
    assert data["rewards"]["executes"]["replayed"] is True  # a non-empty block is replayed whatever the variance
    assert "executes" in capsys.readouterr().out


def test_completion_from_file_and_bad_example(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["explain", SQL, "--policy_preset", "tiny", "--example", "nope"]) == 2
    assert "no example with id 'nope'" in capsys.readouterr().err
    assert main(["explain", SQL, "--policy_preset", "tiny", "--completion", f"@{tmp_path / 'missing.txt'}"]) == 2
    assert "cannot read" in capsys.readouterr().err
