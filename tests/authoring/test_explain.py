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
    # credit precision: sql_format's deciding tokens are the fence markers; the reference matches itself token for
    # token, so result_match has none to point at
    fmt = rewards["sql_format"]
    marked = "".join(t for t, d in zip(data["tokens"], fmt["deciding"]) if d)
    assert "```sql" in marked and marked.replace("```sql", "").strip("`\n") == ""
    share = sum(q for q, d in zip(fmt["q"], fmt["deciding"]) if d) / sum(fmt["q"])
    assert fmt["deciding_share"] == pytest.approx(share, abs=1e-4)
    assert fmt["lift"] == pytest.approx(share / (sum(fmt["deciding"]) / len(fmt["deciding"])), abs=1e-3)
    assert rewards["result_match"]["deciding"] is None and rewards["result_match"]["lift"] is None
    assert rewards["result_match"]["deciding_note"] == "nothing to point at in this completion"


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
    executes = data["rewards"]["executes"]
    assert "".join(t for t, d in zip(data["tokens"], executes["deciding"]) if d).strip() == "nowhere"
    assert executes["lift"] is not None and executes["lift"] > 0
    assert "executes" in capsys.readouterr().out


def test_completion_from_file_and_bad_example(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["explain", SQL, "--policy_preset", "tiny", "--example", "nope"]) == 2
    assert "no example with id 'nope'" in capsys.readouterr().err
    assert main(["explain", SQL, "--policy_preset", "tiny", "--completion", f"@{tmp_path / 'missing.txt'}"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_verifier_that_does_not_apply_is_told_apart_from_an_empty_block(tmp_path):
    """A verifier returning None (constraint_3 on a prompt with two constraints) is "does not apply", not an empty
    block, in the summary, the page, the PNG's labels and the JSON."""
    from mrtpo_sdk import Result, Task, verifier
    from mrtpo_sdk.authoring.explain import explain, render_html, summary_lines, write_outputs

    from ..helpers import tiny_policy

    @verifier(kind="reference")
    def has_a(example, completion):
        return Result(float("a" in completion), f"The word {example['word']} has an a.")

    @verifier(kind="reference")
    def plural(example, completion):
        return None if not example["word"].endswith("s") else Result(1.0, "It is plural.")

    @verifier(kind="feedback")
    def length(example, completion):
        return Result(0.5, "")

    task = Task(name="t", examples=[{"id": "e0", "word": "apple"}, {"id": "e1", "word": "stones"}],
                prompt=lambda ex: [{"role": "user", "content": f"Spell {ex['word']}."}],
                verifiers=[has_a, plural, length], reference=lambda ex: " ".join(ex["word"]))
    torch.manual_seed(0)
    model, tok = tiny_policy(task)
    exp = explain(task, task.load_examples()[0], "a p p l e", model.eval(), tok, policy="tiny")
    rows = {r.name: r for r in exp.rows}
    assert (rows["plural"].reward, rows["plural"].block, rows["plural"].replayed) == (None, "", False)
    assert (rows["length"].reward, rows["length"].block, rows["length"].replayed) == (0.5, "", False)
    assert rows["has_a"].replayed
    lines = {line.split()[0]: line for line in summary_lines(exp)[1:]}
    assert lines["plural"].endswith("reward n/a  does not apply to this example (reward None): not replayed")
    assert lines["length"].endswith("reward 0.500  empty block: not replayed")
    page = render_html(exp)
    plural_row, length_row = (re.search(rf'<div class="name">{n}</div>.*?</th>', page, re.S).group(0)
                              for n in ("plural", "length"))
    assert "does not apply to this example (reward None): not replayed, w = 1" in plural_row
    assert "(none: the verifier does not apply)" in plural_row and "empty block" not in plural_row
    assert "empty block: not replayed, w = 1" in length_row and "does not apply" not in length_row
    paths = write_outputs(exp, tmp_path)
    data = json.loads(paths["json"].read_text())
    assert data["rewards"]["plural"]["reward"] is None and data["rewards"]["plural"]["w"] == [1.0] * len(exp.tokens)
    assert "does not apply to this example (reward None)" in data["note"]
