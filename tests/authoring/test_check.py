"""`mrtpo-sdk check`: the table, the exit status, failures named with example ids."""

import json
import textwrap
from pathlib import Path

from mrtpo_sdk.authoring.check import run_check
from mrtpo_sdk.cli import main
from mrtpo_sdk.loader import load_task

ROOT = Path(__file__).resolve().parents[2]

TASK = """
from mrtpo_sdk import Result, Task, verifier

@verifier(kind="format")
def tags(example, completion):
    ok = completion.startswith("<w>") and completion.endswith("</w>")
    return Result(float(ok), "The answer is one word between <w> and </w>.")

@verifier(kind="reference")
def word(example, completion):
    {body}
    return Result(float(completion == "<w>" + example["word"] + "</w>"), "<w>" + example["word"] + "</w>")

task = Task(
    name="words",
    examples=[{{"id": f"w{{i}}", "word": w}} for i, w in enumerate(["apple", "river", "stone", "cloud"])],
    prompt=lambda ex: "Write the word " + ex["word"] + " between <w> and </w>.",
    verifiers=[tags, word],
    reference=lambda ex: "<w>" + ex["word"] + "</w>",
)
"""


def _task_file(tmp_path, body="pass"):
    path = tmp_path / "words.py"
    path.write_text(textwrap.dedent(TASK.format(body=body)))
    return path


def test_bundled_sql_task_passes(capsys):
    assert main(["check", str(ROOT / "tasks" / "sql.py")]) == 0
    out = capsys.readouterr().out
    for name in ("sql_format", "executes", "result_match"):
        assert name in out
    assert "909/909" in out  # every reference at full reward: 186 written + 723 synthetic training questions
    assert "ok: every reference completion earns full reward" in out


def test_numbers_of_a_small_task(tmp_path):
    report = run_check(load_task(_task_file(tmp_path)), load_task(_task_file(tmp_path)).load_examples("train"))
    assert report.ok
    tags, word = report.verifiers
    assert [r for _, r in tags.probes["reference"].rewards] == [1.0] * 4
    assert [r for _, r in word.probes["other-reference"].rewards] == [0.0] * 4  # right format, wrong word
    assert [r for _, r in tags.probes["other-reference"].rewards] == [1.0] * 4
    assert [r for _, r in tags.probes["empty"].rewards] == [0.0] * 4
    assert tags.probes["reference"].empty_blocks == 0


def test_reference_without_full_reward_fails_with_ids(tmp_path, capsys):
    body = 'if example["id"] == "w2":\n        return Result(0.5, "<w>" + example["word"] + "</w>")'
    assert main(["check", str(_task_file(tmp_path, body))]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "word" in out and "w2 (0.5)" in out


def test_raising_verifier_fails_with_example_id(tmp_path, capsys):
    body = 'if example["id"] == "w1" and completion == "":\n        raise KeyError("boom")'
    assert main(["check", str(_task_file(tmp_path, body)), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False
    errors = data["verifiers"]["word"]["probes"]["empty"]["errors"]
    assert [e["example_id"] for e in errors] == ["w1"] and "boom" in errors[0]["message"]
    assert data["verifiers"]["word"]["probes"]["reference"]["reward_mean"] == 1.0


def test_limit_and_user_errors(tmp_path, capsys):
    path = _task_file(tmp_path)
    assert main(["check", str(path), "--limit", "2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["examples"] == 2
    assert main(["check", str(tmp_path / "missing.py")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    no_ref = tmp_path / "noref.py"
    no_ref.write_text(path.read_text().replace('    reference=lambda ex: "<w>" + ex["word"] + "</w>",\n', ""))
    assert main(["check", str(no_ref)]) == 2
    assert "has no reference=" in capsys.readouterr().err


def test_declared_probes_are_checked(tmp_path, capsys):
    path = _task_file(tmp_path)
    path.write_text(path.read_text() + '\nPROBES = ["<w>apple</w> and more"]\n')
    assert main(["check", str(path), "--format", "json"]) == 0
    probes = json.loads(capsys.readouterr().out)["verifiers"]["tags"]["probes"]
    assert probes["declared-1"]["n"] == 4 and probes["declared-1"]["reward_max"] == 0.0


def test_a_verifier_that_never_applies_fails_check(tmp_path):
    from mrtpo_sdk import Result, Task, verifier
    from mrtpo_sdk.authoring.check import run_check

    @verifier(kind="format")
    def ok(example, completion):
        return Result(float(completion == example["word"]), f"The answer is the word {example['word']}.")

    @verifier(kind="feedback")
    def never(example, completion):
        return None

    task = Task(name="none", examples=[{"id": i, "word": w} for i, w in enumerate("abc")],
                prompt=lambda ex: "say " + ex["word"], verifiers=[ok, never], reference=lambda ex: ex["word"])
    report = run_check(task, task.load_examples())
    assert not report.ok
    assert [f for f in report.failures if f.startswith("never: returned None")]
    assert not [f for f in report.failures if f.startswith("ok:")]
