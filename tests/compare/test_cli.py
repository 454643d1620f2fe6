"""`mrtpo-sdk compare`: the report files from run folders, one `error:` line for each mistake, and the train matrix
(with `train_command` replaced by a recorder that writes synthetic runs)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import mrtpo_sdk.compare.matrix
import mrtpo_sdk.trainer.cli
from mrtpo_sdk.cli import main
from mrtpo_sdk.compare.matrix import run_matrix

from .conftest import STEPS, compare_in_fresh_python, step_curve, write_run

TOY_TASK = str(Path(__file__).resolve().parents[1] / "fixtures" / "toy_task.py")  # Task(name="toy")


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("error: ")]
    assert len(errors) == 1, err
    return errors[0]


# ------------------------------------------------------------------------------------------------ run folders


def test_compare_run_folders_writes_the_three_files(experiment, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["compare", *map(str, experiment), "--output_dir", str(out)]) == 0
    for name in ("compare.json", "compare.md", "compare.png"):
        assert (out / name).stat().st_size > 0
    assert (out / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    report = json.loads((out / "compare.json").read_text())
    m = report["algos"]["mrtpo"]
    assert m["steps_to_threshold"]["fmt"]["values"] == {"seed1": 4, "seed2": 5, "seed3": None}
    assert m["auc"]["fmt"]["mean"] == pytest.approx(21 / 33)
    half = 4.302653 * 0.1 / math.sqrt(3)
    assert m["dev_final"]["eval/execution_accuracy"]["ci"] == pytest.approx([0.0, 0.2 + half])  # clipped to [0, 1]
    assert m["replay_overhead_pct"] == pytest.approx(30.0)
    assert m["replay_vs_baseline_step_pct"] == pytest.approx(40.0)
    summaries = [p["summary"] for p in report["paired"]]
    assert "MRTPO beat GDPO on 1/3 seeds, tied 1, lost 1" in summaries

    md = (out / "compare.md").read_text()
    assert "| mrtpo | 3 | 5 (4–>12) | 1 (1–1) |" in md
    assert "| gdpo | 3 | 6 (5–8) | >12 |" in md
    assert "| mrtpo | execution_accuracy (headline) | 0.000 [0.000, 0.000] | 0.200 [0.000, 0.448] |" in md
    assert "| mrtpo | 20.0 | 1.00 | 0.20 | 0.60 | 0.20 | 2.00 | 30.0% | 40.0% | ×1.33 |" in md
    assert "- steps to 0.8 on fmt: MRTPO beat GDPO on 1/3 seeds, tied 1, lost 1 (seed 1: won, seed 2: tied, " \
           "seed 3: lost)" in md
    assert "| mrtpo | seconds |" not in md and "| mrtpo | completion_length |" not in md

    text = capsys.readouterr().out
    row = r"mrtpo\s*│\s*3\s*│\s*5 \(4–>12\)\s*│\s*1 \(1–1\)\s*│\s*0\.200 \[0\.000, 0\.448\]\s*│\s*30\.0%"
    assert re.search(row, text)
    # the pairs: one table, a row per metric, MRTPO's seeds won–tied–lost against GDPO
    assert re.search(r"MRTPO paired: won–tied–lost of 3 seeds\s*┏━+┳━+┓\s*┃ metric\s*┃ MRTPO vs GDPO ┃",
                     text)
    assert re.search(r"│ steps to 0\.8: exec\s*│\s*3–0–0\s*│", text)
    assert re.search(r"│ steps to 0\.8: fmt\s*│\s*1–1–1\s*│", text)
    assert re.search(r"│ dev execution_accuracy\s*│\s*2–0–1\s*│", text)
    assert "beat GDPO" not in text  # the sentences are compare.md's
    assert f"md:   {out / 'compare.md'}" in text


def test_the_report_goes_to_the_runs_common_parent_by_default(experiment, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "runs/mrtpo-seed1", "runs/gdpo-seed1"]) == 0
    assert (tmp_path / "runs" / "compare.json").exists()
    report = json.loads((tmp_path / "runs" / "compare.json").read_text())
    assert [r["path"] for r in report["runs"]] == ["runs/mrtpo-seed1", "runs/gdpo-seed1"]


def test_run_folders_without_run_json_are_named_by_their_folder(tmp_path, capsys):
    a = write_run(tmp_path / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": step_curve(3)}, run_json=False)
    b = write_run(tmp_path / "sql-grpo", algo="grpo", seed=None, curves={"r": step_curve(None)}, run_json=False)
    assert main(["compare", str(a), str(b), "--output_dir", str(tmp_path / "o"), "--smooth", "1"]) == 0
    report = json.loads((tmp_path / "o" / "compare.json").read_text())
    assert report["algos"]["mrtpo"]["steps_to_threshold"]["r"]["values"] == {"seed1": 1}
    assert report["algos"]["grpo"]["seeds"] == [None]
    assert report["paired"] == []  # no seed to pair on


def test_run_folders_without_run_json_are_compared_without_importing_torch(tmp_path):
    a = write_run(tmp_path / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": step_curve(3)}, run_json=False)
    b = write_run(tmp_path / "gdpo-seed1", algo="gdpo", seed=1, curves={"r": step_curve(None)}, run_json=False)
    out, heavy = compare_in_fresh_python([str(a), str(b), "--output_dir", str(tmp_path / "o")], tmp_path)
    assert heavy == [] and out.splitlines()[-1] == "0"
    assert json.loads((tmp_path / "o" / "compare.json").read_text())["algos"].keys() == {"mrtpo", "gdpo"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["{tmp}/nope"], r"error: .*nope: no such run folder"),
        (["{tmp}/empty"], r"error: .*empty: no metrics.jsonl \(not a run folder written by `mrtpo-sdk train`\)"),
        (["{tmp}/a", "{tmp}/b"], r"error: the runs are of different tasks \(.*a: sql; .*b: bfcl\)"),
        (["{tmp}/a", "{tmp}/a"], r"error: .*a: given twice"),
        (["{tmp}/a", "--max_steps", "5"], r"error: unknown option --max_steps \(.*apply only with a TASK_FILE\)"),
        (["{tmp}/a", "--algos", "gdpo"], r"error: --algos applies only with a TASK_FILE"),
        (["{tmp}/a", "--smooth", "0"], r"error: --smooth must be a positive number"),
        (
            ["{tmp}/a", "--threshold", "high"],
            r"error: argument --threshold: invalid float value: 'high' \(all options: mrtpo-sdk compare --help\)",
        ),
        (
            ["{tmp}/a", "--treshold", "0.5"],
            r"error: unknown option --treshold \(did you mean --threshold\?\) \(options other than .*",
        ),
        (["{tmp}/a", TOY_TASK], r"error: compare takes one task file or run folders, not both"),
        ([], r"error: mrtpo-sdk compare needs run folders"),
    ],
)
def test_mistakes_are_one_error_line(args, message, tmp_path, capsys):
    write_run(tmp_path / "a", algo="mrtpo", seed=1, curves={"r": [1.0]}, task="sql")
    write_run(tmp_path / "b", algo="gdpo", seed=1, curves={"r": [1.0]}, task="bfcl")
    (tmp_path / "empty").mkdir()
    assert main(["compare", *(a.format(tmp=tmp_path) for a in args)]) == 2
    assert re.fullmatch(message + ".*", error_line(capsys))


# ------------------------------------------------------------------------------------------------ the matrix


@pytest.fixture
def trainer(monkeypatch):
    """Replace train_command: record each call and write a finished synthetic run into its --output_dir."""
    calls: list[list[str]] = []

    def fake_train(argv):
        calls.append(list(argv))
        def value(flag):
            return argv[argv.index(flag) + 1]

        algo, seed, out = value("--algo"), int(value("--seed")), value("--output_dir")
        steps = int(value("--max_steps")) if "--max_steps" in argv else STEPS
        write_run(Path(out), algo=algo, seed=seed, task="toy", curves={"tags": [1.0] * steps, "word": [0.0] * steps},
                  dev_final={"all_rewards": 0.1 * seed}, max_steps=steps)
        return 0

    monkeypatch.setattr(mrtpo_sdk.trainer.cli, "train_command", fake_train)
    # the initial-policy check has its own test below; here no run is checked against one
    monkeypatch.setattr(mrtpo_sdk.compare.matrix, "embedded_policy_dirs", lambda task_spec, flags: None)
    return calls


def called(calls):
    return [(c[c.index("--algo") + 1], c[c.index("--seed") + 1]) for c in calls]


def test_the_matrix_trains_seeds_outer_algos_inner_then_compares(trainer, tmp_path, capsys):
    out = tmp_path / "m"
    code = main(["compare", TOY_TASK, "--algos", "mrtpo,gdpo", "--seeds", "1,2", "--output_dir", str(out),
                 "--max_steps", "4", "--learning_rate", "1e-3"])
    assert code == 0
    assert called(trainer) == [("mrtpo", "1"), ("gdpo", "1"), ("mrtpo", "2"), ("gdpo", "2")]
    assert trainer[0] == [TOY_TASK, "--algo", "mrtpo", "--seed", "1", "--output_dir", str(out / "mrtpo-seed1"),
                          "--max_steps", "4", "--learning_rate", "1e-3"]
    text = capsys.readouterr().out
    assert re.search(rf"\[1/4\] mrtpo seed 1 -> {re.escape(str(out / 'mrtpo-seed1'))} \(elapsed \d+s\)\n", text)
    assert re.search(r"\[2/4\] gdpo seed 1 -> .* \(elapsed \d+s, ETA ~\d+s\)", text)
    report = json.loads((out / "compare.json").read_text())
    assert report["task"] == "toy" and list(report["algos"]) == ["mrtpo", "gdpo"]
    dev = report["algos"]["gdpo"]["dev_final"]["eval/all_rewards"]
    assert dev["values"] == pytest.approx({"seed1": 0.1, "seed2": 0.2})
    assert (out / "compare.md").exists() and (out / "compare.png").exists()


def test_finished_runs_are_reused_and_unfinished_ones_rerun(trainer, tmp_path, capsys):
    out = tmp_path / "m"
    curves = {"tags": [1.0] * 4, "word": [0.0] * 4}
    write_run(out / "mrtpo-seed1", algo="mrtpo", seed=1, task="toy", curves=curves, max_steps=4)  # reused
    (out / "mrtpo-seed1" / "compare_flags.json").write_text(json.dumps({"train_flags": ["--max_steps", "4"]}))
    write_run(out / "gdpo-seed1", algo="gdpo", seed=1, task="toy", curves=curves, max_steps=4, finished=False)
    write_run(out / "mrtpo-seed2", algo="mrtpo", seed=2, task="toy", curves=curves, max_steps=8)  # other max_steps
    write_run(out / "gdpo-seed2", algo="gdpo", seed=2, task="toy", curves=curves, run_json=False)
    assert main(["compare", TOY_TASK, "--algos", "mrtpo,gdpo", "--seeds", "1,2", "--output_dir", str(out),
                 "--max_steps", "4"]) == 0
    assert called(trainer) == [("gdpo", "1"), ("mrtpo", "2"), ("gdpo", "2")]
    text = capsys.readouterr().out
    assert f"[1/4] mrtpo seed 1 -> {out / 'mrtpo-seed1'}: finished run reused (4 steps)" in text
    assert "      re-running: the folder holds an unfinished run (step 2 of 4)" in text
    assert "      re-running: the folder holds a finished run of 8 steps, not 4" in text
    assert "      re-running: the folder has no run.json, so whether its run finished is unknown" in text


def test_without_max_steps_any_finished_run_is_reused(trainer, tmp_path, capsys):
    out = tmp_path / "m"
    write_run(out / "grpo-seed3", algo="grpo", seed=3, task="toy", curves={"tags": [1.0] * 5}, max_steps=5)
    assert main(["compare", TOY_TASK, "--algos", "grpo", "--seeds", "3", "--output_dir", str(out)]) == 0
    assert trainer == []


def test_a_finished_run_from_another_initial_policy_is_trained_again(trainer, monkeypatch, tmp_path, capsys):
    """The task's data or the policy build changed since the run: its embedded policy folder (cache key) differs."""
    now = {1: "/cache/toy-seed1-aaaa", 2: "/cache/toy-seed2-bbbb", 3: "/cache/toy-seed3-cccc"}
    asked = []
    monkeypatch.setattr(
        mrtpo_sdk.compare.matrix, "embedded_policy_dirs", lambda task_spec, flags: lambda seed: asked.append(seed) or now[seed]
    )
    out = tmp_path / "m"
    curves = {"tags": [1.0] * 4}
    write_run(out / "grpo-seed1", algo="grpo", seed=1, task="toy", curves=curves, initial_policy="/old/toy-seed1-aaaa")
    write_run(out / "grpo-seed2", algo="grpo", seed=2, task="toy", curves=curves, initial_policy="/cache/toy-seed2-9999")
    write_run(out / "grpo-seed3", algo="grpo", seed=3, task="toy", curves=curves)  # recorded no initial policy
    write_run(out / "grpo-seed4", algo="grpo", seed=4, task="toy", curves=curves, finished=False)
    assert main(["compare", TOY_TASK, "--algos", "grpo", "--seeds", "1,2,3,4", "--output_dir", str(out)]) == 0
    assert called(trainer) == [("grpo", "2"), ("grpo", "3"), ("grpo", "4")]
    assert asked == [1, 2, 3]  # not for a run that is trained again anyway
    text = capsys.readouterr().out
    assert f"[1/4] grpo seed 1 -> {out / 'grpo-seed1'}: finished run reused (4 steps)" in text  # same folder name
    assert ("      re-running: it started from the policy toy-seed2-9999, not toy-seed2-bbbb (the task's data or the "
            "policy build changed since)") in text
    assert "      re-running: its run.json does not say which initial policy it started from" in text


def test_a_run_whose_config_file_changed_is_trained_again(trainer, tmp_path, capsys):
    out, config = tmp_path / "m", tmp_path / "run.yaml"
    config.write_text("learning_rate: 0.001\n")
    argv = ["compare", TOY_TASK, "--algos", "grpo", "--seeds", "1", "--output_dir", str(out), "--config", str(config)]
    assert main(argv) == 0 and main(argv) == 0
    assert called(trainer) == [("grpo", "1")]  # the second call reused it
    config.write_text("# the same settings, commented\nlearning_rate:   0.001\n")
    assert main(argv) == 0
    assert called(trainer) == [("grpo", "1")]  # comments and layout do not count
    config.write_text("learning_rate: 0.01\n")
    assert main(argv) == 0
    assert called(trainer) == [("grpo", "1"), ("grpo", "1")]
    assert "      re-running: its --config file says something else now (or what it said is unknown)" in capsys.readouterr().out


def test_the_initial_policy_of_a_run_is_the_folder_train_would_load(tmp_path):
    from mrtpo_sdk.compare.matrix import _started_from, embedded_policy_dirs
    from mrtpo_sdk.loader import load_task
    from mrtpo_sdk.policy.for_task import task_policy_dir

    folder = embedded_policy_dirs(TOY_TASK, ["--max_steps", "3", "--policy_preset", "tiny"])
    task = load_task(TOY_TASK)
    expected = task_policy_dir(task, task.load_examples("train"), seed=5, preset="tiny")
    assert folder(5) == str(expected) and expected.name.startswith("toy-seed5-")
    assert folder(6) != folder(5)
    shared = embedded_policy_dirs(TOY_TASK, ["--policy_preset", "tiny", "--policy_seed", "5"])  # one policy, any seed
    assert shared(6) == shared(7) == str(expected)
    assert embedded_policy_dirs(TOY_TASK, ["--model", "some/model"]) is None
    # a --config file's data / policy_preset / model count as the flags do
    config = tmp_path / "run.yaml"
    config.write_text("policy_preset: tiny\nmax_steps: 3\n")
    assert embedded_policy_dirs(TOY_TASK, ["--config", str(config)])(5) == str(expected)
    config.write_text("model: some/model\n")
    assert embedded_policy_dirs(TOY_TASK, ["--config", str(config)]) is None
    # older runs recorded the folder only at the end of their policy label
    assert _started_from({"policy": "embedded bootstrap policy (0.56M parameters) from /c/sql-seed1-4ad4"}) == "/c/sql-seed1-4ad4"
    assert _started_from({"initial_policy": "/c/x", "policy": "embedded bootstrap policy (1M) from /c/y"}) == "/c/x"
    assert _started_from({"policy": "Qwen/Qwen2.5-0.5B"}) is None


def test_a_failed_run_stops_the_matrix_naming_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(mrtpo_sdk.trainer.cli, "train_command", lambda argv: 1)
    out = tmp_path / "m"
    assert main(["compare", TOY_TASK, "--algos", "gdpo", "--seeds", "7", "--output_dir", str(out)]) == 2
    assert error_line(capsys) == (
        f"error: training gdpo seed 7 ({out / 'gdpo-seed7'}) stopped with exit status 1; the runs finished before "
        f"it are reused when compare is run again"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--algos", "mrtpo,ppo"], "error: --algos: unknown algorithm 'ppo' (valid: mrtpo, gdpo, grpo)"),
        (["--algos", "gdpo,gdpo"], "error: --algos: gdpo given more than once"),
        (["--seeds", "1,x"], "error: --seeds: 'x' is not an integer"),
        (["--seeds", "1,2,1"], "error: --seeds: 1 given more than once"),
        (["--seeds", "1,01"], "error: --seeds: a seed is given more than once (1,01)"),
        (["--seed", "3"], "error: --seed is set by compare for each run; use --seeds"),
    ],
)
def test_matrix_mistakes_are_one_error_line(args, message, trainer, tmp_path, capsys):
    assert main(["compare", TOY_TASK, "--output_dir", str(tmp_path / "m"), *args]) == 2
    assert error_line(capsys) == message
    assert trainer == []


@pytest.mark.parametrize(
    "yaml_text, message",
    [
        ("algo: grpo\n", ": algo is set by compare for each run; use --algos (and drop the key)"),
        ("max_steps: 2\nseed: 4\n", ": seed is set by compare for each run; use --seeds (and drop the key)"),
        ("output_dir: x\n", ": output_dir is set by compare for each run; use compare's --output_dir (and drop the key)"),
        ("seed: 010\n", ":1: seed: 010 is 8 in YAML 1.1 but 10 in YAML 1.2; write 8 or 10"),
    ],
)
def test_a_config_key_compare_sets_or_a_bad_config_is_one_line_before_any_run(yaml_text, message, trainer, tmp_path,
                                                                                capsys):
    """The keys compare sets for each run would be silently replaced; a bad file fails once, before the banner."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml_text)
    assert main(["compare", TOY_TASK, "--output_dir", str(tmp_path / "m"), "--config", str(cfg)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().splitlines() == [f"error: --config {cfg}{message}"]
    assert trainer == []


def test_no_eta_before_a_run_finished_then_the_mean_run_time_times_the_runs_left(tmp_path, monkeypatch):
    now = [0.0]

    def fake_train(argv):
        now[0] += 100.0  # each run takes 100 s
        return 0

    monkeypatch.setattr(mrtpo_sdk.trainer.cli, "train_command", fake_train)
    lines: list[str] = []
    run_matrix(TOY_TASK, "toy", ["mrtpo", "gdpo", "grpo"], [1], tmp_path, log=lines.append, clock=lambda: now[0])
    assert lines == [
        f"[1/3] mrtpo seed 1 -> {tmp_path / 'mrtpo-seed1'} (elapsed 0s)",
        f"[2/3] gdpo seed 1 -> {tmp_path / 'gdpo-seed1'} (elapsed 1m40s, ETA ~3m20s)",
        f"[3/3] grpo seed 1 -> {tmp_path / 'grpo-seed1'} (elapsed 3m20s, ETA ~1m40s)",
    ]


def test_dashed_spelling_of_compares_own_options_is_compares():
    from mrtpo_sdk.compare.cli import split_argv

    own, train = split_argv(["tasks/sql.py", "--max_steps", "2", "--output-dir", "/tmp/x", "--seeds=1"])
    assert own == ["tasks/sql.py", "--output_dir", "/tmp/x", "--seeds=1"]
    assert train == ["--max_steps", "2"]


def test_a_run_trained_with_other_flags_is_rerun(trainer, tmp_path, capsys):
    out = tmp_path / "m"
    write_run(out / "grpo-seed3", algo="grpo", seed=3, task="toy", curves={"tags": [1.0] * 5}, max_steps=5)
    (out / "grpo-seed3" / "compare_flags.json").write_text(json.dumps({"train_flags": ["--learning_rate", "0.1"]}))
    assert main(["compare", TOY_TASK, "--algos", "grpo", "--seeds", "3", "--output_dir", str(out),
                 "--learning_rate", "0.5"]) == 0
    assert called(trainer) == [("grpo", "3")]
    assert "re-running: it was trained with other train flags (--learning_rate 0.1)" in capsys.readouterr().out
    assert json.loads((out / "grpo-seed3" / "compare_flags.json").read_text()) == {
        "train_flags": ["--learning_rate", "0.5"], "config": None
    }


def test_a_bundled_task_name_is_a_task_unless_such_a_folder_exists(trainer, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "m"
    assert main(["compare", "long_form", "--algos", "mrtpo,gdpo", "--seeds", "1", "--max_steps", "3",
                 "--output_dir", str(out)]) == 0
    assert called(trainer) == [("mrtpo", "1"), ("gdpo", "1")]
    assert trainer[0] == ["long_form", "--algo", "mrtpo", "--seed", "1", "--output_dir", str(out / "mrtpo-seed1"),
                          "--max_steps", "3"]
    assert "compare: long_form, 2 algos x 1 seed = 2 runs in " in capsys.readouterr().out
    # a folder of that name in the working folder is a run folder, as before
    write_run(tmp_path / "long_form", algo="mrtpo", seed=1, curves={"r": [1.0]}, task="long_form")
    write_run(tmp_path / "other", algo="gdpo", seed=1, curves={"r": [1.0]}, task="long_form")
    trainer.clear()
    assert main(["compare", "long_form", "other", "--output_dir", str(tmp_path / "o")]) == 0
    assert trainer == []
    assert [r["path"] for r in json.loads((tmp_path / "o" / "compare.json").read_text())["runs"]] == [
        "long_form", "other"]


# ------------------------------------------------------------------------------------------------ the report folder


def test_a_comparison_of_other_runs_is_never_replaced_silently(experiment, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    big = ["runs/mrtpo-seed1", "runs/gdpo-seed1", "runs/mrtpo-seed2", "runs/gdpo-seed2"]
    assert main(["compare", *big]) == 0
    before = (tmp_path / "runs" / "compare.md").read_text()
    capsys.readouterr()
    # a smaller matrix into the same default folder (the runs' parent): refused, nothing written
    assert main(["compare", "runs/mrtpo-seed1", "--threshold", "2"]) == 2
    assert error_line(capsys) == (
        "error: runs already holds a comparison of other runs (4 runs) (compare.json, compare.md); pass "
        "--output_dir DIR to write this one elsewhere, or --overwrite_report true to replace it"
    )
    assert (tmp_path / "runs" / "compare.md").read_text() == before
    # the same runs (given in another order, another threshold): rewritten
    assert main(["compare", *reversed(big), "--threshold", "0.5"]) == 0
    assert json.loads((tmp_path / "runs" / "compare.json").read_text())["threshold"] == 0.5
    # asked for: replaced, with a note
    capsys.readouterr()
    assert main(["compare", "runs/mrtpo-seed1", "--overwrite_report", "true"]) == 0
    assert "note: --overwrite_report: replacing a comparison of other runs (4 runs) in runs" in capsys.readouterr().out
    assert [r["path"] for r in json.loads((tmp_path / "runs" / "compare.json").read_text())["runs"]] == [
        "runs/mrtpo-seed1"]
    # a compare.md of unknown runs (no compare.json) is not replaced either
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "compare.md").write_text("# my notes\n")
    assert main(["compare", "runs/mrtpo-seed1", "--output_dir", str(other)]) == 2
    assert "already holds a comparison it cannot read (compare.md)" in error_line(capsys)
    assert main(["compare", "runs/mrtpo-seed1", "--output_dir", str(other), "--overwrite_report"]) == 0


def test_an_output_dir_that_cannot_be_a_folder_is_one_error_line(experiment, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.txt").write_text("my notes\n")
    assert main(["compare", "runs/mrtpo-seed1", "--output_dir", "f.txt"]) == 2
    assert error_line(capsys) == "error: --output_dir f.txt is a file, not a folder; pass a folder for the report"
    assert main(["compare", "runs/mrtpo-seed1", "--output_dir", "f.txt/report"]) == 2
    assert error_line(capsys).startswith("error: --output_dir f.txt/report: cannot create the report folder (")
    assert (tmp_path / "f.txt").read_text() == "my notes\n"


def test_the_matrix_refuses_a_report_folder_of_other_runs_before_training(trainer, tmp_path, capsys):
    out = tmp_path / "m"
    assert main(["compare", TOY_TASK, "--algos", "mrtpo,gdpo", "--seeds", "1,2", "--output_dir", str(out)]) == 0
    trainer.clear()
    capsys.readouterr()
    assert main(["compare", TOY_TASK, "--algos", "mrtpo", "--seeds", "1", "--output_dir", str(out)]) == 2
    assert "already holds a comparison of other runs (4 runs)" in error_line(capsys)
    assert trainer == []  # nothing trained
    assert main(["compare", TOY_TASK, "--algos", "mrtpo,gdpo", "--seeds", "1,2", "--output_dir", str(out)]) == 0


def test_a_threshold_no_reward_reaches_gets_a_note(tmp_path, capsys):
    a = write_run(tmp_path / "a", algo="mrtpo", seed=1, curves={"r": [0.2, 1.0, 0.9]})
    assert main(["compare", str(a), "--threshold", "2", "--output_dir", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert ("note: --threshold 2 is above every logged reward mean (the highest is 1.000; a reward is at most its "
            "verifier's maximum, usually 1): every steps-to-threshold reads '>N'") in out
    assert main(["compare", str(a), "--threshold", "0.9", "--output_dir", str(tmp_path / "o")]) == 0
    assert "note: --threshold" not in capsys.readouterr().out
