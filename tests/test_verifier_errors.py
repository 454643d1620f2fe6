"""A verifier that raises: one `error:` line naming a details file (traceback, the verifier's file:line, example id,
completion) in OUTPUT_DIR/errors/, the run's other files kept; `--debug` / MRTPO_DEBUG=1 re-raise instead."""

import ast
import json
import re
import textwrap
from pathlib import Path

import pytest

from mrtpo_sdk import Verifier, VerifierContractError, VerifierError
from mrtpo_sdk.cli import main

from .helpers import FRAGILE_DEF_LINE, FRAGILE_RAISE_LINE, LETTERS, ROOT, TRAIN_FLAGS, write_fragile

SQL_TASK = str(ROOT / "tasks" / "sql.py")


def error_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]


@pytest.fixture(autouse=True)
def isolated(shared_cache, monkeypatch):  # the run's shared cache (tests/conftest.py)
    monkeypatch.delenv("MRTPO_DEBUG", raising=False)


def test_a_verifier_raising_during_train_writes_the_details_beside_one_line(tmp_path, capsys):
    task_file, out, seen = write_fragile(tmp_path)
    code = main(["train", str(task_file), "--output_dir", str(out), *TRAIN_FLAGS])
    assert code == 2
    lines = error_lines(capsys)
    assert len(lines) == 1, lines
    line = lines[0]
    details = out / "errors" / "2-fragile.txt"
    assert sorted(p.name for p in (out / "errors").iterdir()) == ["2-fragile.txt"]
    assert line.endswith(f"(details: {details})")
    assert line.startswith("error: task 'fragile', verifier 'fragile', example 'ex-")
    assert "the verifier raised KeyError: " in line and f"at {task_file}:{FRAGILE_RAISE_LINE} " in line
    example = re.search(r"example '(ex-\d)'", line).group(1)

    text = details.read_bytes().decode("utf-8")  # as written: no newline translation
    completion = ast.literal_eval(seen.read_text())
    assert text.startswith(line.removesuffix(f" (details: {details})") + "\n")
    assert "\ntask:      fragile\n" in text
    assert f"\nverifier:  fragile (defined at {task_file}:{FRAGILE_DEF_LINE})\n" in text
    assert f"\nraised at: {task_file}:{FRAGILE_RAISE_LINE}\n" in text
    assert "\nstep:      2\n" in text
    assert f"\nexample:   {example}\n" in text
    rule = "-" * 72
    assert f"completion ({len(completion)} characters, between the lines):\n{rule}\n{completion}\n{rule}\n" in text
    assert "Traceback (most recent call last):" in text
    assert f'File "{task_file}", line {FRAGILE_RAISE_LINE}, in fragile' in text
    assert "KeyError: " in text and "mrtpo_sdk.errors.VerifierError" in text
    # the run's other files are kept: run.json and step 1's metrics row
    assert json.loads((out / "run.json").read_text())["task"] == "fragile"
    rows = [json.loads(r) for r in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "rewards/fragile/mean" in r] == [1]


def test_train_debug_flag_after_the_command_reraises_with_the_traceback(tmp_path, capsys):
    task_file, out, _ = write_fragile(tmp_path)
    with pytest.raises(VerifierError) as info:
        main(["train", str(task_file), "--output_dir", str(out), *TRAIN_FLAGS, "--debug"])
    assert isinstance(info.value.__cause__, KeyError)  # the verifier's own exception, with its traceback
    assert info.value.verifier == "fragile"
    assert info.value.completion == ast.literal_eval((tmp_path / "seen.txt").read_text())
    assert (out / "errors" / "2-fragile.txt").is_file()  # written in debug mode too
    assert error_lines(capsys) == []


def test_debug_before_the_command_and_from_the_environment(tmp_path, capsys, monkeypatch):
    missing = str(tmp_path / "nope.py")
    assert main(["train", missing]) == 2
    assert len(error_lines(capsys)) == 1
    with pytest.raises(Exception, match="nope.py: no such file"):
        main(["--debug", "train", missing])
    # train's own flags go to TRL's parser: --debug is never one of them
    assert main(["train", SQL_TASK, "--max_step", "3", "--debug"]) == 2
    (line,) = error_lines(capsys)
    assert "unknown option: --max_step (did you mean --max_steps?)" in line and "--debug" not in line
    monkeypatch.setenv("MRTPO_DEBUG", "1")
    with pytest.raises(Exception, match="nope.py: no such file"):
        main(["train", missing])
    monkeypatch.setenv("MRTPO_DEBUG", "0")
    assert main(["train", missing]) == 2


def test_trls_debug_setting_is_set_with_an_equals_sign_or_a_config_list_never_a_bare_debug(
    tmp_path, capsys, monkeypatch
):
    """A bare --debug is mrtpo-sdk's (tracebacks); TRL's TrainingArguments.debug takes --debug=FEATURE or the
    --config key; a config value that is no list of features (``debug: true``) is refused, not passed on."""
    from mrtpo_sdk.trainer import cli as trainer_cli

    seen = []

    def run_training(task, script_args, config, **kwargs):
        seen.append(config.debug)
        return 0

    monkeypatch.setattr(trainer_cli, "run_training", run_training)
    out = ["--output_dir", str(tmp_path / "o")]
    assert main(["train", LETTERS, "--debug=underflow_overflow", *out]) == 0
    listed, flag = tmp_path / "list.yaml", tmp_path / "flag.yaml"
    listed.write_text("debug: [underflow_overflow]\n")
    assert main(["train", LETTERS, "--config", str(listed), *out]) == 0
    assert seen == [["underflow_overflow"], ["underflow_overflow"]]
    flag.write_text("debug: true\n")
    assert main(["train", LETTERS, "--config", str(flag), *out]) == 2
    assert error_lines(capsys) == [
        f"error: --config {flag}: debug: invalid value: true (TRL's debug features: a list of underflow_overflow, "
        "tpu_metrics_debug); mrtpo-sdk's --debug (the full traceback of an error) is a command-line flag or "
        "MRTPO_DEBUG=1, not a --config key"
    ]
    assert main(["train", LETTERS, "--debug", "underflow_overflow", *out]) == 2
    assert error_lines(capsys) == [
        "error: unexpected argument 'underflow_overflow' (a bare --debug is mrtpo-sdk's own flag, for full "
        "tracebacks; TRL's debug feature is --debug=underflow_overflow) (all options: mrtpo-sdk train TASK --help)"
    ]
    assert main(["train", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("'tpu_metrics_debug' (print TPU metrics). mrtpo-sdk train: a bare --debug is mrtpo-sdk's own flag (on an "
            "error, the full Python traceback instead of one line; also MRTPO_DEBUG=1), not this setting; set TRL's "
            "debug features with --debug=underflow_overflow or the --config key debug: [underflow_overflow].") in help_text
    assert "--debug FEATURE [FEATURE ...] Enable one or more debug features." in help_text
    assert seen == [["underflow_overflow"], ["underflow_overflow"]]


def test_verifier_error_message_names_where_it_raised(tmp_path):
    def boom(example, completion):
        return {}["db_path"]

    v = Verifier(boom)
    with pytest.raises(VerifierError) as info:
        v.score({"id": "e1"}, "SELECT 1", task="sql", example_id="e1")
    exc = info.value
    here = Path(__file__)
    line = boom.__code__.co_firstlineno + 1
    assert str(exc).endswith(f"raised KeyError: 'db_path' at {_shown(here)}:{line} (fix the verifier, or return "
                             f"None when the reward does not apply)")
    assert exc.completion == "SELECT 1" and exc.source == f"{_shown(here)}:{line - 1}"
    assert exc.raised_at == f"{_shown(here)}:{line}"
    path = exc.write_details(tmp_path, step=7, example={"id": "e1"})
    assert path == tmp_path / "errors" / "7-boom.txt" and str(exc).endswith(f"(details: {path})")
    assert "example value: {'id': 'e1'}" in path.read_text()
    again = VerifierError("x", task="t", verifier="boom", example_id="e1")
    assert again.write_details(tmp_path, step=7) == tmp_path / "errors" / "7-boom-2.txt"  # never replaced

    def two(example, completion):
        return [1.0, 0.0]

    with pytest.raises(VerifierContractError) as contract:
        Verifier(two).score({}, "x", task="t", example_id="e2")
    assert str(contract.value).endswith(f" (verifier at {_shown(here)}:{two.__code__.co_firstlineno})")
    assert contract.value.completion == "x"


def _shown(path: Path) -> str:
    import os

    rel = os.path.relpath(path)
    return str(path) if rel.startswith("..") else rel


def test_a_details_folder_that_cannot_be_written_keeps_the_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    exc = VerifierError("task 't', verifier 'v', example 'e': the verifier raised X", task="t", verifier="v",
                        example_id="e")
    assert exc.write_details(blocker, step=1) is None
    assert str(exc) == "task 't', verifier 'v', example 'e': the verifier raised X" and exc.details_path is None


EVAL_TASK = '''
from mrtpo_sdk import Result, Task, verifier


@verifier(kind="reference")
def picky(example, completion):
    if example["id"] == "dev-1":
        raise ValueError("no rule for " + example["word"])
    return Result(1.0, "")


task = Task(
    name="picky",
    examples=lambda split, data=None: [{{"id": f"{{split}}-{{i}}", "word": w}}
                                       for i, w in enumerate(["apple", "river", "stone", "cloud"] * 2)],
    prompt=lambda ex: [{{"role": "user", "content": "Spell " + ex["word"]}}],
    verifiers=[picky],
    reference=lambda ex: ex["word"],
    eval_split="dev",
)
'''


def test_eval_writes_the_details_into_its_output_folder(tmp_path, capsys):
    task_file = tmp_path / "picky_task.py"
    task_file.write_text(EVAL_TASK.format())
    out = tmp_path / "eval-out"
    code = main(["eval", str(task_file), "--policy_preset", "tiny", "--output_dir", str(out), "--max_examples", "3"])
    assert code == 2
    lines = error_lines(capsys)
    assert len(lines) == 1, lines
    details = out / "errors" / "eval-picky.txt"
    assert lines[0].startswith("error: task 'picky', verifier 'picky', example 'dev-1': the verifier raised "
                               f"ValueError: no rule for river at {task_file}:8 ")
    assert lines[0].endswith(f"(details: {details})")
    text = details.read_text()
    assert "\nexample:   dev-1\n" in text and f'File "{task_file}", line 8, in picky' in text
    assert f"(defined at {task_file}:5)" in text and "ValueError: no rule for river" in text


def test_explain_writes_the_details_into_its_output_folder(tmp_path, capsys):
    task_file = tmp_path / "picky_task.py"
    task_file.write_text(EVAL_TASK.format().replace('example["id"] == "dev-1"', '"zzz" in completion'))
    out = tmp_path / "explain-out"
    code = main(["explain", str(task_file), "--completion", "zzz top", "--example", "train-2", "--policy_preset", "tiny",
                 "--output_dir", str(out)])
    assert code == 2
    lines = error_lines(capsys)
    assert len(lines) == 1, lines
    details = out / "errors" / "explain-picky.txt"
    assert lines[0].startswith("error: task 'picky', verifier 'picky', example 'train-2': the verifier raised "
                               f"ValueError: no rule for stone at {task_file}:8 ")
    assert lines[0].endswith(f"(details: {details})")
    text = details.read_text()
    assert "\nexample:   train-2\n" in text and "example value: {'id': 'train-2', 'word': 'stone'}" in text
    assert "\nzzz top\n" in text and f'File "{task_file}", line 8, in picky' in text
