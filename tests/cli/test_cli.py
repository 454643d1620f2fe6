"""The `mrtpo-sdk` command line: one clear error line for user mistakes, and a real end-to-end run."""

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mrtpo_sdk.cli import main

from ..helpers import LETTERS, error_line

ROOT = Path(__file__).resolve().parents[2]  # the repository
SQL_TASK = str(ROOT / "tasks" / "sql.py")


@pytest.fixture(autouse=True)
def isolated_cache(shared_cache):
    """The run's shared cache (tests/conftest.py): each embedded policy is built once per run."""


def test_no_arguments_prints_help(capsys):
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 0
    assert "train" in capsys.readouterr().out


def test_train_without_task(capsys):
    assert main(["train"]) == 2
    assert "needs a task file" in error_line(capsys)


def test_missing_task_file(capsys, tmp_path):
    assert main(["train", str(tmp_path / "nope.py")]) == 2
    line = error_line(capsys)
    assert "nope.py: no such file" in line


def test_unknown_algorithm(capsys):
    assert main(["train", SQL_TASK, "--algo", "ppo"]) == 2
    assert "--algo must be one of mrtpo, gdpo, grpo" in error_line(capsys)


def test_bad_data_path(capsys, tmp_path):
    assert main(["train", SQL_TASK, "--data", str(tmp_path / "no-such-dir")]) == 2
    line = error_line(capsys)
    assert "no-such-dir" in line


def test_several_tasks_without_name(capsys, tmp_path):
    p = tmp_path / "two.py"
    p.write_text(textwrap.dedent("""
        from mrtpo_sdk import Result, Task, verifier
        v = verifier(lambda ex, c: Result(1.0, ""), name="v")
        a = Task(name="a", examples=[{"id": 1}], prompt=lambda ex: "p", verifiers=[v])
        b = Task(name="b", examples=[{"id": 1}], prompt=lambda ex: "p", verifiers=[v])
    """))
    assert main(["train", str(p)]) == 2
    assert error_line(capsys) == (
        f"error: {p}: declares 2 tasks, variable 'a' (Task name 'a'), variable 'b' (Task name 'b'); pick one by "
        f"either name: {p}@a, {p}@b"
    )


ARITH_TASK = """
from mrtpo_sdk import Result, Task, verifier
v = verifier(lambda ex, c: Result(1.0, ""), name="v")
task = Task(name="arith", examples=[{"id": 1}], prompt=lambda ex: "p", verifiers=[v])
"""


def test_unknown_task_name_lists_variables_and_task_names(capsys, tmp_path):
    p = tmp_path / "arith.py"
    p.write_text(ARITH_TASK)
    assert main(["train", f"{p}@other"]) == 2
    assert error_line(capsys) == (
        f"error: {p}: no task named 'other'; it declares variable 'task' (Task name 'arith'); "
        f"select by either name: {p}@arith, {p}@task"
    )
    # the Task's own name selects it: the run goes on to the one-step check, which names the task
    assert main(["train", f"{p}@arith", "--output_dir", str(tmp_path / "run")]) == 2
    assert "'arith'" in error_line(capsys)


BROKEN_TASK = """
from mrtpo_sdk import Result, Task, verifier

@verifier
def ok(example, completion):
    return Result(1.0, "")

@verifier
def broken(example, completion):
    return {returned}

task = Task(
    name="broken",
    examples=[{{"id": f"ex-{{i}}", "word": w}} for i, w in enumerate(["apple", "river", "stone", "cloud", "grass", "flame", "ocean", "tiger"])],
    prompt=lambda ex: [{{"role": "user", "content": "Spell " + ex["word"]}}],
    verifiers=[ok, broken],
    reference=lambda ex: ex["word"],
)
"""


@pytest.mark.parametrize(
    "returned, fragment",
    [("[1.0, 0.0]", "returned a list of 2 values"), ("Result(float('nan'), '')", "rewards must be finite")],
)
def test_verifier_contract_violation_is_one_line(capsys, tmp_path, returned, fragment):
    p = tmp_path / "broken.py"
    p.write_text(BROKEN_TASK.format(returned=returned))
    code = main(["train", str(p), "--policy_preset", "tiny", "--max_steps", "1", "--output_dir", str(tmp_path / "o")])
    assert code == 2
    line = error_line(capsys)
    assert fragment in line and "verifier 'broken'" in line and "task 'broken'" in line and "example 'ex-" in line


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["mrtpo", "gdpo", "grpo"])
def test_train_sql_end_to_end(tmp_path, algo):
    """The README's main job, shortened: the console script on the bundled SQL task and the embedded policy."""
    out = tmp_path / "run"
    cmd = [
        sys.executable, "-m", "mrtpo_sdk", "train", SQL_TASK, "--algo", algo, "--policy_preset", "tiny",
        "--max_steps", "2", "--output_dir", str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**__import__("os").environ})  # the shared cache
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "trained 2 steps" in proc.stdout
    every = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in every if "rewards/sql_format/mean" in r]
    assert [r["step"] for r in rows] == [1, 2]
    evals = [r for r in every if "eval/execution_accuracy" in r]
    assert [r["step"] for r in evals] == [0, 1, 2]  # held-out dev: before, every quarter (here every step), after
    assert all(0.0 <= r["eval/execution_accuracy"] <= 1.0 for r in evals)
    assert len(every) == len(rows) + len(evals)
    assert "dev (dev, 42 examples, greedy), step 0 -> step 2:" in proc.stdout
    assert (out / "policy" / "model.safetensors").is_file()
    for name in ("sql_format", "executes", "result_match"):
        assert all(0.0 <= r[f"rewards/{name}/mean"] <= 1.0 for r in rows)
    if algo == "mrtpo":
        assert all(0.0 <= r["mrtpo/replayed_fraction"] <= 1.0 for r in rows)
    assert (out / "rewards.png").stat().st_size > 5000


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--max_steps", "three"], "error: argument --max_steps: invalid int value: 'three' (all options:"),
        (["--max-steps", "three"], "error: argument --max_steps: invalid int value: 'three' (all options:"),
        (["--max_step", "3"], "unknown option: --max_step (did you mean --max_steps?)"),
        (["--split", "dev"], "unknown option: --split (train samples the task's train split; --data FILE trains on "
                             "other data)"),
        (["--num_generations", "1"], "error: --num_generations must be >= 2, got 1"),
        (["--max_steps", "0"], "error: --max_steps must be a positive number of steps (or -1 to train by "
                               "--num_train_epochs), got 0"),
        (["--model", "/no/such/model-folder", "--max_steps", "1"], "--model /no/such/model-folder: no such folder"),
        (["extra_positional"], "error: unexpected argument 'extra_positional' (train takes one TASK_FILE; flags "
                               "start with --, e.g. --max_steps 10) (all options: mrtpo-sdk train TASK --help)"),
        (["--max_steps", "1", "a", "b"], "error: unexpected arguments 'a', 'b' (train takes one TASK_FILE;"),
    ],
)
def test_bad_options_are_one_line(capsys, args, fragment):
    assert main(["train", SQL_TASK, *args]) == 2
    assert fragment in error_line(capsys)


@pytest.mark.parametrize("command", [["eval", SQL_TASK], ["check", SQL_TASK], ["explain", SQL_TASK], ["lint", "tasks"]])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_split_is_refused_not_read_as_the_default(capsys, command, value):
    assert main([*command, "--split", value]) == 2
    assert error_line(capsys).startswith(
        "error: argument --split: a split name cannot be empty or blank: name one of the task's splits, or drop the "
        "flag for its default"
    )


def test_bad_config_file_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("max_steps: [\n")
    assert main(["train", SQL_TASK, "--config", str(bad)]) == 2
    assert error_line(capsys) == (f"error: --config {bad}:2:1: not valid YAML: expected the node content, but found "
                                  "'<stream end>' (while parsing a flow node)")
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("max_stepz: 3\n")
    assert main(["train", SQL_TASK, "--config", str(unknown)]) == 2
    assert "unknown key in --config: max_stepz (did you mean max_steps?)" in error_line(capsys)
    dashed = tmp_path / "dashed.yaml"
    dashed.write_text("num-generations: 4\n")
    assert main(["train", SQL_TASK, "--config", str(dashed)]) == 2
    assert "unknown key in --config: num-generations (did you mean num_generations?)" in error_line(capsys)


def test_several_unknown_config_keys_are_named_in_one_line(capsys, tmp_path):
    """Every key of the file that is no setting, each with its closest setting; a value is never taken for a key."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("max_stepz: 3\nnum_generatons: 4\nzzqqxx: --max_steps\nseed: 1\n")
    assert main(["train", SQL_TASK, "--config", str(cfg)]) == 2
    assert error_line(capsys) == (
        "error: unknown keys in --config: max_stepz (did you mean max_steps?), num_generatons (did you mean "
        "num_generations?), zzqqxx (all options: mrtpo-sdk train TASK --help)"
    )


def test_a_config_value_of_the_wrong_type_names_the_file_and_the_key(capsys, tmp_path):
    """argparse converts a --config value as it converts a flag's: the file's error names the file and the key, the
    flag's names the flag; a flag given on the command line replaces the key, whose value is then not read."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("num_generations: abc\n")
    out = ["--output_dir", str(tmp_path / "o")]
    assert main(["train", LETTERS, "--config", str(cfg), *out]) == 2
    assert error_line(capsys) == f"error: --config {cfg}: num_generations: invalid int value: 'abc'"
    assert main(["train", LETTERS, f"--config={cfg}", *out]) == 2
    assert error_line(capsys) == f"error: --config {cfg}: num_generations: invalid int value: 'abc'"
    flag_error = ("error: argument --num_generations: invalid int value: 'abc' (all options: mrtpo-sdk train TASK "
                  "--help)")
    assert main(["train", LETTERS, "--num_generations", "abc", *out]) == 2
    assert error_line(capsys) == flag_error
    assert main(["train", LETTERS, "--config", str(cfg), "--num-generations", "abc", *out]) == 2
    assert error_line(capsys) == flag_error
    assert not (tmp_path / "o").exists()


def test_the_config_flag_reads_yaml_or_json_and_a_flag_overrides_its_keys(tmp_path, capsys):
    from mrtpo_sdk.trainer import MRTPOConfig
    from mrtpo_sdk.trainer.arguments import train_parser

    base = ["--output_dir", str(tmp_path / "o"), "--report_to", "none", "--bf16", "false"]
    yaml_file, json_file = tmp_path / "c.yaml", tmp_path / "c.json"
    yaml_file.write_text("max_steps: 5\nnum_generations: abc\n")
    json_file.write_text('{"max_steps": 5, "seed": 7}')
    _, config, _ = train_parser(MRTPOConfig).parse_args_and_config(
        ["--config", str(yaml_file), "--max_steps", "7", "--num_generations", "4", *base])
    assert (config.max_steps, config.num_generations) == (7, 4)
    _, config, _ = train_parser(MRTPOConfig).parse_args_and_config([f"--config={json_file}", *base])
    assert (config.max_steps, config.seed) == (5, 7)
    text = _help_text(["train", "--help"], capsys)
    assert ("--help show this help message and exit --config FILE Read settings from a YAML (or JSON) file whose "
            "keys are the flags' names without the dashes (max_steps: 10); a flag given on the command line "
            "overrides the file's key. The file is read as YAML 1.2; a value YAML 1.1 reads otherwise (010, no, "
            "1:30) or a key given twice is refused. --model MODEL") in text
    assert main(["train", LETTERS, "--config"]) == 2
    assert error_line(capsys) == "error: --config needs a FILE, e.g. --config run.yaml (YAML or JSON)"
    assert main(["train", LETTERS, "--config", str(yaml_file), f"--config={json_file}"]) == 2
    assert error_line(capsys) == "error: --config is given more than once; give one file"


def test_the_max_steps_check_names_flags_on_the_command_line_and_keys_in_a_config(capsys, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("max_steps: 0\n")
    check = "max_steps must be a positive number of steps (or -1 to train by num_train_epochs), got 0"
    assert main(["train", LETTERS, "--max_steps", "0", "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == "error: --" + check.replace("by num_train_epochs", "by --num_train_epochs")
    assert main(["train", LETTERS, "--config", str(cfg), "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == f"error: --config {cfg}: {check}"
    assert main(["train", LETTERS, "--reward_std_floor", "-1", "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == "error: --reward_std_floor must be >= 0 and --advantage_eps > 0"


def _refused_config(capsys, tmp_path, yaml_text: str):
    """(the --config file, train's one error line) for a file holding ``yaml_text``, which must train nothing."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml_text)
    assert main(["train", LETTERS, "--config", str(cfg), "--output_dir", str(tmp_path / "o")]) == 2
    line = error_line(capsys)
    assert not (tmp_path / "o").exists()
    return cfg, line


@pytest.mark.parametrize(
    "yaml_text, expected",
    [
        ("num_generations: 4.5\n", "num_generations: expected an integer, got 4.5"),
        ("max_steps: true\n", "max_steps: expected an integer, got true"),
        ("max_steps: [1, 2]\n", "max_steps: expected an integer, got [1, 2]"),
        ("max_steps: null\n", "max_steps: expected an integer, got null"),
        ("learning_rate: true\n", "learning_rate: expected a number, got true"),
        ("bf16: 1\n", "bf16: expected true or false, got 1"),
        ("reward_weights: [1, x]\n", 'reward_weights: expected a list of numbers, got [1, "x"]'),
        ("report_to: 3\n", "report_to: expected a string or a list of strings, got 3"),
    ],
)
def test_a_config_value_not_of_its_fields_type_names_the_file_and_the_key(capsys, tmp_path, yaml_text, expected):
    """argparse converts a string value of a --config key as it converts the flag's, but keeps any other value as it
    is: a float for an integer field would reach TRL, whose failure names neither the file nor the key."""
    cfg, line = _refused_config(capsys, tmp_path, yaml_text)
    assert line == f"error: --config {cfg}: {expected}"


def test_config_values_of_their_fields_types_load_as_the_flags_do(tmp_path):
    """Each kind of value a field takes: a YAML integer for a number, a string converted as the flag's value, null for
    an optional field, a string for a list field (PEFT's all-linear), a mapping; a flag replaces a key unread."""
    from mrtpo_sdk.trainer import MRTPOConfig
    from mrtpo_sdk.trainer.arguments import train_parser

    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "num_generations: '4'\nlearning_rate: 1e-5\nwarmup_steps: 2\neval_steps: 5\nreward_weights: [1, 2.5]\n"
        "bf16: 'false'\nreport_to: none\nlr_scheduler_type: cosine\nsave_strategy: 'no'\nlora_target_modules: "
        "all-linear\nmodel_init_kwargs: {revision: main}\nnum_generations_eval: null\nmax_steps: 4.5\n"
    )
    _, config, model_args = train_parser(MRTPOConfig).parse_args_and_config(
        ["--config", str(cfg), "--max_steps", "3", "--output_dir", str(tmp_path / "o")])
    assert (config.num_generations, config.learning_rate, config.warmup_steps, config.eval_steps) == (4, 1e-5, 2, 5)
    assert (config.reward_weights, config.bf16, config.report_to, config.max_steps) == ([1, 2.5], False, [], 3)
    assert (config.lr_scheduler_type.value, config.save_strategy.value) == ("cosine", "no")
    assert (model_args.lora_target_modules, config.model_init_kwargs) == ("all-linear", {"revision": "main"})


def test_a_config_value_outside_its_fields_choices_names_the_file_and_the_key(capsys, tmp_path):
    """argparse checks a flag's choices, not a --config value's."""
    cfg = tmp_path / "c.yaml"
    out = ["--output_dir", str(tmp_path / "o")]
    schedulers = ("'linear', 'cosine', 'cosine_with_restarts', 'polynomial', 'constant', 'constant_with_warmup', "
                  "'inverse_sqrt', 'reduce_lr_on_plateau', 'cosine_with_min_lr', 'cosine_warmup_with_min_lr', "
                  "'warmup_stable_decay', 'greedy'")
    cfg.write_text("lr_scheduler_type: foo\n")
    assert main(["train", LETTERS, "--config", str(cfg), *out]) == 2
    assert error_line(capsys) == (f"error: --config {cfg}: lr_scheduler_type: invalid choice 'foo' (choose from "
                                  f"{schedulers})")
    assert main(["train", LETTERS, "--lr_scheduler_type", "foo", *out]) == 2
    assert error_line(capsys) == (f"error: argument --lr_scheduler_type: invalid choice: 'foo' (choose from "
                                  f"{schedulers}) (all options: mrtpo-sdk train TASK --help)")
    cfg.write_text("eval_strategy: false\n")
    assert main(["train", LETTERS, "--config", str(cfg), *out]) == 2
    assert error_line(capsys) == (f"error: --config {cfg}: eval_strategy: invalid choice false (choose from 'no', "
                                  "'steps', 'epoch')")
    cfg.write_text("log_level: 3\n")
    assert main(["train", LETTERS, "--config", str(cfg), *out]) == 2
    assert error_line(capsys) == (f"error: --config {cfg}: log_level: invalid choice 3 (choose from 'detail', 'debug', "
                                  "'info', 'warning', 'error', 'critical', 'passive')")
    assert not (tmp_path / "o").exists()


def test_trls_own_check_says_which_flags_and_config_keys_set_the_settings_it_names(capsys, tmp_path):
    """TRL's GRPOConfig check keeps its text; the settings it names (and, for one left at its default, those its
    help derives it from) are attributed to the flag or the --config key that set them."""
    out = ["--output_dir", str(tmp_path / "o")]
    assert main(["train", LETTERS, "--num_generations", "6", *out]) == 2
    assert error_line(capsys) == ("error: generation_batch_size (32) must be divisible by num_generations (6). (set "
                                  "by --num_generations 6; generation_batch_size left at its default)")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("num_generations: 6\n")
    assert main(["train", LETTERS, "--config", str(cfg), "--per_device_train_batch_size", "16", *out]) == 2
    assert error_line(capsys) == (
        f"error: generation_batch_size (16) must be divisible by num_generations (6). (set by num_generations: 6 in "
        f"--config {cfg} and --per_device_train_batch_size 16; generation_batch_size left at its default)"
    )


def test_a_config_file_cannot_name_another(capsys, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("config: other.yaml\nmax_steps: 2\n")
    assert main(["train", LETTERS, "--config", str(cfg), "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == (f"error: --config {cfg}: config: a --config file cannot name another one (copy the "
                                  "settings of other.yaml into this file)")


def test_a_config_folder_or_a_config_key_that_is_no_name_is_one_line(capsys, tmp_path):
    assert main(["train", LETTERS, "--config", str(tmp_path), "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == (f"error: --config {tmp_path}: is a folder; give a YAML or JSON file, e.g. "
                                  f"--config {tmp_path}/run.yaml")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("max_steps: 2\n1: 2\n")
    assert main(["train", LETTERS, "--config", str(cfg), "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == (f"error: --config {cfg}: key 1 is not a setting's name; keys are the flags' names "
                                  "without the dashes (max_steps: 10)")


@pytest.mark.parametrize(
    "yaml_text, expected",
    [
        ("seed: 010\n", ":1: seed: 010 is 8 in YAML 1.1 but 10 in YAML 1.2; write 8 or 10"),
        ("max_steps: 2\ntop_k: 1:30\n",
         ':2: top_k: 1:30 is 90 in YAML 1.1 but the text "1:30" in YAML 1.2; write 90 for the number, or "1:30" for '
         "the text"),
        ("run_name: no\n",
         ':1: run_name: no is false in YAML 1.1 but the text "no" in YAML 1.2; write false for the boolean, or "no" '
         "for the text"),
        ("model_init_kwargs: {use_cache: off}\n",
         ':1: model_init_kwargs.use_cache: off is false in YAML 1.1 but the text "off" in YAML 1.2; write false for '
         'the boolean, or "off" for the text'),
        ("reward_weights: [1, 1_000, 1]\n",
         ':1: reward_weights[1]: 1_000 is 1000 in YAML 1.1 but the text "1_000" in YAML 1.2; write 1000 for the '
         'number, or "1_000" for the text'),
        ("seed: 1\nmax_steps: 2\nseed: 3\n", ":3: seed is given twice (lines 1 and 3); keep one"),
        ('{"seed": 1, "seed": 2}\n', ":1: seed is given twice (line 1, columns 2 and 13); keep one"),
        ('seed: !!int "010"\n', ":1: seed: !!int 010 is 8 in YAML 1.1 but 10 in YAML 1.2; write 8 or 10"),
        ("seed: !!int 0b11\n", ":1: seed: 0b11 is not an integer in YAML 1.2; write 3 (YAML 1.1's value)"),
        ("run_name: =\n", ":1: run_name: = cannot be read by YAML 1.1, which TRL's parser uses (it takes it for a "
         '\'value\', which it cannot build); write "=" for the text'),
        ("max_steps: 2\nrun_name: 2024-13-45\n", ":2: run_name: 2024-13-45 cannot be read by YAML 1.1, which TRL's "
         'parser uses (month must be in 1..12); write "2024-13-45" for the text'),
        ("lr_scheduler_kwargs: &x {a: *x}\n",
         ":1: lr_scheduler_kwargs.a: an alias names the mapping or list that holds it; a setting's value cannot "
         "contain itself"),
        ('env: {"A=B": a}\n',
         ': env: "A=B" is not an environment variable\'s name (a non-empty name without = or NUL, e.g. WANDB_MODE)'),
    ],
)
def test_a_config_value_yaml_versions_read_differently_is_refused_with_both_readings(capsys, tmp_path, yaml_text,
                                                                                     expected):
    """TRL's parser reads the file as YAML 1.1, where 010 is octal and no is false; YAML 1.2 (JSON, editors) reads
    10 and the text "no". A value the two read differently (or one only YAML 1.2 reads), a repeated key, an alias
    inside itself or an environment variable with no valid name is refused with its line."""
    cfg, line = _refused_config(capsys, tmp_path, yaml_text)
    assert line == f"error: --config {cfg}{expected}"


def test_config_numbers_are_yaml_1_2_numbers_at_any_depth(tmp_path):
    """YAML 1.1 keeps 1e-6 (no dot) as text: a top-level setting converts it, a nested one (a scheduler's min_lr, a
    list of weights) would reach the trainer as text. Read as YAML 1.2, it is the number everywhere."""
    from mrtpo_sdk.trainer import MRTPOConfig
    from mrtpo_sdk.trainer.arguments import train_parser

    cfg = tmp_path / "c.yaml"
    cfg.write_text("learning_rate: 1e-5\nreward_weights: [1e-5, 1, 2E+1]\nlr_scheduler_type: cosine_with_min_lr\n"
                   "lr_scheduler_kwargs: {min_lr: 1e-6}\nseed: 0o17\nrun_name: !!str 010\nweight_decay: !!float 1\n")
    _, config, _ = train_parser(MRTPOConfig).parse_args_and_config(
        ["--config", str(cfg), "--output_dir", str(tmp_path / "o"), "--use_cpu", "true", "--bf16", "false"])
    assert (config.learning_rate, config.reward_weights, config.seed, config.run_name) == (1e-5, [1e-5, 1, 20.0], 15,
                                                                                           "010")
    assert config.lr_scheduler_kwargs == {"min_lr": 1e-6} and isinstance(config.lr_scheduler_kwargs["min_lr"], float)
    assert config.weight_decay == 1.0 and isinstance(config.weight_decay, float)


def test_a_config_file_that_is_not_utf8_or_whose_env_is_no_mapping_names_the_file(capsys, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_bytes(b"run_name: caf\xe9\n")
    assert main(["train", LETTERS, "--config", str(cfg), "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == f"error: --config {cfg}: not UTF-8 text (byte 0xe9 at offset 13); save it as UTF-8"
    cfg.write_text("env: [WANDB_MODE]\n")
    assert main(["train", LETTERS, "--config", str(cfg), "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == (f"error: --config {cfg}: env: expected a mapping of environment variables to values "
                                  '(env: {WANDB_MODE: offline}), got ["WANDB_MODE"]')
    cfg.write_text("[max_steps, 2]\n")
    assert main(["train", LETTERS, "--config", str(cfg), "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == f"error: --config {cfg}: the file must be a mapping of settings (max_steps: 10), got a list"


def test_a_check_of_a_setting_the_config_file_set_names_the_file_and_key(capsys, tmp_path):
    """Settings read before TRL's parser (algo, model) and after it (report_to's trackers) name the key of the
    --config file that set them, and the flag when the command line did."""
    cfg, out = tmp_path / "c.yaml", ["--output_dir", str(tmp_path / "o")]
    cfg.write_text("algo: foo\n")
    assert main(["train", LETTERS, "--config", str(cfg), *out]) == 2
    assert error_line(capsys) == f"error: --config {cfg}: algo must be one of mrtpo, gdpo, grpo, got 'foo'"
    assert main(["train", LETTERS, "--config", str(cfg), "--algo", "bar", *out]) == 2
    assert error_line(capsys) == "error: --algo must be one of mrtpo, gdpo, grpo, got 'bar'"
    missing = tmp_path / "no_such_model"
    cfg.write_text(f"model: {missing}\n")
    assert main(["train", LETTERS, "--config", str(cfg), *out]) == 2
    assert error_line(capsys).startswith(f"error: --config {cfg}: model {missing}: no such folder; ")
    trackers = ("azure_ml, comet_ml, mlflow, neptune, tensorboard, trackio, wandb, codecarbon, clearml, dagshub, flyte, "
                "dvclive, swanlab, kubeflow")
    cfg.write_text("report_to: false\n")
    assert main(["train", LETTERS, "--config", str(cfg), *out]) == 2
    assert error_line(capsys) == (f"error: --config {cfg}: report_to must be none, all or trackers among {trackers}, "
                                  "got false; write none for no tracker")
    assert main(["train", LETTERS, "--report_to", "tensorbord", *out]) == 2
    assert error_line(capsys) == (f"error: --report_to must be none, all or trackers among {trackers}, got "
                                  "'tensorbord' (did you mean tensorboard?)")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("value", ["-1", "0", "-0.5", "nan"])
def test_non_positive_eval_steps_are_one_line(capsys, tmp_path, value):
    """TrainingArguments runs with --eval_steps -1 (no evaluation but the first and the last) and replaces 0 with
    logging_steps, silently; MRTPOConfig refuses them, so a flag, a YAML key and Python get the same check, the
    flag's line naming the flag and the YAML key's the file and the key."""
    letters = str(ROOT / "tests" / "fixtures" / "letters_task.py")
    expected = (f"error: eval_steps must be a number of steps >= 1 or a fraction of the run in (0, 1) (e.g. 0.25: "
                f"every quarter), got {value}")
    assert main(["train", letters, "--eval_steps", value, "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == expected.replace("eval_steps", "--eval_steps")
    assert main(["train", letters, "--eval-steps", value, "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == expected.replace("eval_steps", "--eval_steps")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"save_steps: {value}\n")
    assert main(["train", letters, "--config", str(cfg), "--output_dir", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == expected.replace("error: eval_steps", f"error: --config {cfg}: save_steps")
    assert not (tmp_path / "o").exists()
    from mrtpo_sdk.trainer import MRTPOConfig

    with pytest.raises(ValueError) as info:
        MRTPOConfig(output_dir=str(tmp_path / "o"), report_to="none", bf16=False, logging_steps=float(value))
    assert str(info.value) == expected.removeprefix("error: ").replace("eval_steps", "logging_steps")


def _letters_with_length(tmp_path, length):
    """The letters fixture task with Task(max_completion_length=length)."""
    src = (ROOT / "tests" / "fixtures" / "letters_task.py").read_text()
    path = tmp_path / "letters_len.py"
    path.write_text(src.replace('    name="letters",', f'    name="letters",\n    max_completion_length={length},'))
    return str(path)


def test_help_with_a_task_shows_the_tasks_max_completion_length(tmp_path, capsys):
    task = _letters_with_length(tmp_path, 7)
    assert main(["train", task, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Maximum length of the generated completion. The task file " in text  # argparse wraps the path
    assert "letters_len.py sets it. (default: 7)" in text
    assert main(["train", "--help"]) == 0
    assert "Maximum length of the generated completion. (default: 64)" in " ".join(capsys.readouterr().out.split())


def test_the_banner_names_the_tasks_max_completion_length_unless_a_flag_set_it(tmp_path, local_model, capsys):
    task = _letters_with_length(tmp_path, 7)
    small = ["--model", str(local_model), "--per_device_train_batch_size", "8", "--max_steps", "1",
             "--report_to", "none", "--save_policy", "false"]
    assert main(["train", task, *small, "--output_dir", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out.splitlines()
    banner = next(i for i, line in enumerate(out) if line.startswith("task: letters"))
    assert out[banner + 1] == "max_completion_length 7 (from the task)"
    assert json.loads((tmp_path / "a" / "run.json").read_text())["args"]["max_completion_length"] == 7
    assert main(["train", task, *small, "--max_completion_length", "5", "--output_dir", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "(from the task)" not in out
    assert json.loads((tmp_path / "b" / "run.json").read_text())["args"]["max_completion_length"] == 5


def test_the_dev_summary_marks_headline_metrics_in_words_not_markdown(capsys):
    from mrtpo_sdk.trainer.summary import print_eval_change

    before = {"step": 0, "eval/prompt_level_strict_acc": 0.08, "eval/follows": 0.5, "eval/all_rewards": 0.1}
    after = {"step": 4, "eval/prompt_level_strict_acc": 0.1, "eval/follows": 0.625, "eval/all_rewards": 0.2}
    print_eval_change(before, after, ["prompt_level_strict_acc"], ["follows", "all_rewards", "missing"])
    assert capsys.readouterr().out.splitlines() == [
        "  prompt_level_strict_acc: 0.080 -> 0.100 (headline)",
        "  follows: 0.500 -> 0.625",
        "  all_rewards: 0.100 -> 0.200",
    ]


def test_the_dev_summary_marks_only_the_tasks_first_metric_as_the_headline(capsys):
    from mrtpo_sdk.trainer.summary import print_eval_change

    names = ["prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc"]
    before = {"step": 0, **{f"eval/{n}": 0.1 for n in names}, "eval/constraint_1": 0.5}
    after = {"step": 4, **{f"eval/{n}": 0.2 for n in names}, "eval/constraint_1": 0.75}
    print_eval_change(before, after, names, ["constraint_1"])
    assert capsys.readouterr().out.splitlines() == [
        "  prompt_level_strict_acc: 0.100 -> 0.200 (headline)",
        "  inst_level_strict_acc: 0.100 -> 0.200",
        "  prompt_level_loose_acc: 0.100 -> 0.200",
        "  inst_level_loose_acc: 0.100 -> 0.200",
        "  constraint_1: 0.500 -> 0.750",
    ]
    del before["eval/prompt_level_strict_acc"]  # not evaluated: the next task metric is the headline
    print_eval_change(before, after, names, ["constraint_1"])
    assert capsys.readouterr().out.splitlines()[0] == "  inst_level_strict_acc: 0.100 -> 0.200 (headline)"


def _help_text(argv, capsys) -> str:
    assert main(argv) == 0
    return " ".join(capsys.readouterr().out.split())


def _flag_help(text: str, flag: str, next_flag: str) -> str:
    """The help of ``flag`` (its line in the options list, e.g. ``--eval_steps EVAL_STEPS, --eval-steps ...``)."""
    return text.split(f" {flag}, ", 1)[1].split(f" {next_flag}, ", 1)[0]


EVAL_FLAGS = [("--eval_strategy {no,steps,epoch}", "--eval_steps EVAL_STEPS"), ("--eval_steps EVAL_STEPS",
              "--eval_delay EVAL_DELAY"), ("--eval_on_start [true|false]", "--eval_do_concat_batches [true|false]")]


def test_train_help_says_what_train_does_with_the_evaluation_settings(capsys):
    text = _help_text(["train", "--help"], capsys)
    strategy, steps, on_start = (_flag_help(text, flag, after) for flag, after in EVAL_FLAGS)
    assert ("When to run evaluation. Options: 'no', 'steps', 'epoch'. mrtpo-sdk train: 'steps' (with --eval_steps "
            "0.25 and --eval_on_start true) when the task declares a held-out split (Task(eval_split=...))") in strategy
    assert strategy.endswith("(`mrtpo-sdk train TASK --help` shows the task's defaults). (default: no)")
    assert steps.endswith("--eval_steps alone also sets --eval_strategy steps. (default: None)")
    sql = _help_text(["train", str(ROOT / "tasks" / "sql.py"), "--help"], capsys)  # a task with a dev split
    assert [_flag_help(sql, flag, after).rpartition(" (default: ")[2] for flag, after in EVAL_FLAGS] == [
        "steps)", "0.25)", "True)"]
    letters = _help_text(["train", LETTERS, "--help"], capsys)  # no held-out split: TRL's
    assert [_flag_help(letters, flag, after).rpartition(" (default: ")[2] for flag, after in EVAL_FLAGS] == [
        "no)", "None)", "False)"]


def test_train_help_states_the_policy_presets_default_once(capsys):
    text = _help_text(["train", "--help"], capsys)
    assert ("--policy_preset POLICY_PRESET, --policy-preset POLICY_PRESET Size of the embedded policy: 'small' or "
            "'tiny' (seconds to build; smoke tests). (default: small)") in text


def test_train_help_spells_a_boolean_flag_as_true_or_false(tmp_path, capsys):
    text = _help_text(["train", "--help"], capsys)
    assert ("--save_policy [true|false], --save-policy [true|false] Save the final policy (model + tokenizer) to "
            "OUTPUT_DIR/policy, loadable by --model and from_pretrained. (`--save_policy false`, or "
            "`--no_save_policy`, turns it off.) (default: True)") in text
    assert "--no_save_policy, --no-save-policy" not in text  # named above, not listed with the same help
    from mrtpo_sdk.trainer import MRTPOConfig
    from mrtpo_sdk.trainer.arguments import train_parser

    for flags, saved in ((["--save_policy", "false"], False), (["--no_save_policy"], False), (["--save_policy"], True)):
        _, config, _ = train_parser(MRTPOConfig).parse_args_and_config(
            [*flags, "--output_dir", str(tmp_path), "--report_to", "none", "--bf16", "false"])
        assert config.save_policy is saved, flags


def test_policy_loads_show_no_transformers_progress_bar(tmp_path, local_model, capsys):
    from transformers.utils import logging as hf_logging

    letters = str(ROOT / "tests" / "fixtures" / "letters_task.py")
    assert hf_logging.is_progress_bar_enabled()
    assert main(["eval", letters, "--model", str(local_model), "--split", "train", "--max_examples", "2",
                 "--max_completion_length", "4", "--output_dir", str(tmp_path / "e")]) == 0
    captured = capsys.readouterr()
    assert "Loading weights" not in captured.err + captured.out
    assert "letters / train: 2 examples" in captured.out
    assert hf_logging.is_progress_bar_enabled()  # restored: the user's own setting stands
    hf_logging.disable_progress_bar()
    try:
        from mrtpo_sdk.policy.pretrained import quiet_loading

        with quiet_loading():
            pass
        assert not hf_logging.is_progress_bar_enabled()  # a user's disable_progress_bar() is kept
    finally:
        hf_logging.enable_progress_bar()


def test_a_bad_model_is_reported_before_a_previous_run_in_the_output_folder(tmp_path, capsys):
    """The README's main command leaves runs/sql-mrtpo behind: a --model typo is still the one line the user sees."""
    out = tmp_path / "runs" / "sql-mrtpo"
    out.mkdir(parents=True)
    (out / "metrics.jsonl").write_text('{"step": 1}\n')
    (out / "run.json").write_text('{"task": "sql", "finished": true}\n')
    assert main(["train", SQL_TASK, "--model", "/no/such/model-folder", "--output_dir", str(out), "--max_steps", "1"]) == 2
    assert "--model /no/such/model-folder: no such folder" in error_line(capsys)
    assert (out / "metrics.jsonl").read_text() == '{"step": 1}\n'  # the previous run is untouched
