"""A task's options: declared as parameters of its examples function, set with -T KEY=VALUE, checked by the SDK."""

from __future__ import annotations

import json
from typing import Literal

import pytest

from mrtpo_sdk import MRTPOError, Task, load_task
from mrtpo_sdk.cli import main
from mrtpo_sdk.task_options import TaskOptionError, declared_options, describe_options, parse_assignments
from mrtpo_sdk.verifier import Result, verifier

WORDS_TASK = '''
from typing import Literal

from mrtpo_sdk import Result, Task, verifier

WORDS = ["apple", "river", "stone", "cloud", "green", "table", "light", "music"]


@verifier(kind="reference")
def has_a(example, completion):
    word = example["word"].lower()
    return Result(float(("a" in completion) == ("a" in word)), f"The word {word} is spelled with an a: {'a' in word}.")


@verifier(kind="reference")
def has_e(example, completion):
    word = example["word"].lower()
    return Result(float(("e" in completion) == ("e" in word)), f"The word {word} is spelled with an e: {'e' in word}.")


def examples(split="train", repeat: int = 1, shout: bool = False, style: Literal["plain", "fancy"] = "plain"):
    """Words to spell.

    Args:
        repeat: how many times each word appears.
        shout: upper-case every word.
        style: how the prompt asks
            (plain or fancy).
    """
    words = [w.upper() if shout else w for w in WORDS] * repeat
    return [{"id": f"{split}-{i}", "word": w, "style": style} for i, w in enumerate(words)]


task = Task(
    name="words",
    examples=examples,
    eval_split=None,
    prompt=lambda ex: [{"role": "user", "content": f"Spell the word {ex['word']}."}],
    verifiers=[has_a, has_e],
    reference=lambda ex: " ".join(ex["word"]).lower(),
)
'''

TINY_RUN = ["--policy_preset", "tiny", "--per_device_train_batch_size", "8", "--max_completion_length", "8"]


@pytest.fixture
def words(tmp_path):
    path = tmp_path / "words.py"
    path.write_text(WORDS_TASK)
    return str(path)


def error_lines(capsys) -> list[str]:
    err = capsys.readouterr().err.strip().splitlines()
    return [line for line in err if line.startswith("error: ")]


@verifier
def _ok(example, completion):
    return Result(1.0, "")


def _task(examples) -> Task:
    return Task(name="t", examples=examples, prompt=lambda ex: "p", verifiers=[_ok])


# ---------------------------------------------------------------- declaring options


def test_parameters_beyond_split_and_data_are_the_options_with_types_defaults_and_help():
    def examples(split="train", data=None, *, n: int = 3, rate: float = 0.5, tag: str = "x", on: bool = True,
                 mode: Literal["a", "b"] = "a", cats: tuple[str, ...] = ("p", "q"), maybe: bool | None = None):
        """Rows.

        Args:
            n: how many
                rows.
            mode: which mode.

        Returns:
            the rows.
        """
        return [{"id": 1}]

    options = declared_options(examples)
    assert list(options) == ["n", "rate", "tag", "on", "mode", "cats", "maybe"]
    assert [o.type_text for o in options.values()] == [
        "int", "float", "str", "bool", "a|b", "comma-separated str", "bool"]
    assert options["n"].help == "how many rows." and options["mode"].help == "which mode."
    assert options["tag"].help == ""  # no docstring entry
    assert options["cats"].default_text == "p,q" and options["maybe"].default_text == "none"
    assert describe_options(options)[:2] == ["  -T n=int", "        how many rows. (default: 3)"]
    assert describe_options(options)[4:6] == ["  -T tag=str", "        (default: x)"]


def test_values_are_parsed_by_type():
    def examples(split, n: int = 1, rate: float = 0.5, on: bool = False, cats: list[str] = ["a"],
                 mode: Literal["x", "y"] = "x", maybe: int | None = None):  # noqa: B006
        return []

    opts = declared_options(examples)
    assert opts["n"].parse("-12") == -12 and opts["rate"].parse("1e-3") == 0.001
    truths = [opts["on"].parse(v) for v in ("TRUE", "yes", "On", "1", "false", "NO", "off", "0")]
    assert truths == [True] * 4 + [False] * 4
    assert opts["cats"].parse("a, b,c") == ["a", "b", "c"] and opts["mode"].parse("y") == "y"
    assert opts["maybe"].parse("4") == 4 and opts["maybe"].check(None) is None
    for name, bad, why in [("n", "1.5", "a whole number"), ("rate", "fast", "a number"), ("on", "maybe", "a bool"),
                           ("mode", "X", "one of x, y (did you mean x?)"),
                           ("mode", "z", "one of x, y"),
                           ("cats", "a,,b", "a comma-separated list of str without empty items")]:
        with pytest.raises(ValueError, match="^" + why.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
            opts[name].parse(bad)
    assert opts["n"].check(3) == 3 and opts["rate"].check(2) == 2.0
    with pytest.raises(ValueError, match="a whole number"):
        opts["n"].check(True)  # a bool is no int
    with pytest.raises(ValueError, match="a bool"):
        opts["on"].check(1)


def test_a_badly_declared_option_is_one_line_at_the_task():
    def no_default(split, n: int):
        return []

    with pytest.raises(MRTPOError, match=r"task 't': examples parameter 'n' has no default; .* \(e\.g\. n: bool ="):
        _task(no_default)

    def odd_type(split, n: dict = {}):  # noqa: B006
        return []

    with pytest.raises(MRTPOError, match="examples parameter 'n' has type <class 'dict'>; a task option is bool, int"):
        _task(odd_type)

    def bad_default(split, mode: Literal["a", "b"] = "c"):
        return []

    with pytest.raises(MRTPOError, match="examples parameter 'mode': its default 'c' is not one of a, b"):
        _task(bad_default)


def test_the_keywords_a_partial_binds_are_no_options():
    import functools
    from pathlib import Path

    def rows(split, data=None, path: Path = Path("x"), limit: int = 2):
        return [{"id": i} for i in range(limit)]

    task = _task(functools.partial(rows, path=Path("rows.jsonl")))
    assert list(task.options) == ["limit"] and len(task.with_options(limit="3").load_examples("train")) == 3


def test_fixed_examples_and_a_loader_without_options_declare_none():
    assert _task([{"id": 1}]).options == {} and _task(lambda split, data=None: [{"id": 1}]).option_values == {}
    with pytest.raises(TaskOptionError, match=r"^-T n=\.\.\.: task 't' takes no options$"):
        _task([{"id": 1}]).with_options(n=1)


# ---------------------------------------------------------------- setting them


def test_with_options_passes_them_to_the_examples_function_and_leaves_the_task_as_it_was(words):
    task = load_task(words)
    assert task.option_values == {"repeat": 1, "shout": False, "style": "plain"}
    loud = task.with_options({"shout": "true"}, repeat=2)
    assert loud.option_values == {"repeat": 2, "shout": True, "style": "plain"}
    rows = loud.load_examples("train")
    assert len(rows) == 16 and rows[0]["word"] == "APPLE"
    assert task.load_examples("train")[0]["word"] == "apple" and len(task.load_examples("train")) == 8
    assert load_task(words, options={"style": "fancy"}).load_examples("dev")[0]["style"] == "fancy"
    assert loud.with_options(style="fancy").option_values == {"repeat": 2, "shout": True, "style": "fancy"}


def test_unknown_and_ill_typed_options_name_the_option_and_the_tasks_options(words):
    task = load_task(words)
    with pytest.raises(TaskOptionError) as info:
        task.with_options(shuot="true")
    assert str(info.value) == (
        "-T shuot=...: task 'words' has no option 'shuot' (did you mean shout?); its options: repeat, shout, style")
    with pytest.raises(TaskOptionError) as info:
        task.with_options(repeat="twice")
    assert str(info.value) == "-T repeat=twice: option 'repeat' of task 'words' is a whole number"
    with pytest.raises(TaskOptionError, match="option 'style' of task 'words' is one of plain, fancy"):
        task.with_options(style="Fancy")


def test_assignments_are_key_value_and_a_key_given_twice_must_agree():
    assert parse_assignments(["a=1", "b=x=y", "a=1"]) == {"a": "1", "b": "x=y"}
    with pytest.raises(TaskOptionError, match=r"^-T a=1 and -T a=2 disagree; give the option once$"):
        parse_assignments(["a=1", "a=2"])
    with pytest.raises(TaskOptionError, match=r"^-T shout: give KEY=VALUE, e.g. -T semantics=official$"):
        parse_assignments(["shout"])


def test_an_option_given_as_data_points_at_T(words):
    sql = load_task("sql")
    with pytest.raises(MRTPOError, match=r"^--data semantics=official: --data is the dataset path; the task's options "
                                         r"are set with -T KEY=VALUE \(-T semantics=official\)$"):
        sql.load_examples("dev", "semantics=official")


# ---------------------------------------------------------------- the command line


@pytest.mark.parametrize("command", ["train", "check", "explain", "eval", "compare"])
def test_every_command_that_takes_a_task_gives_one_line_for_an_unknown_option(command, words, capsys, tmp_path):
    out = [] if command == "check" else ["--output_dir", str(tmp_path / "out")]
    assert main([command, words, "-T", "shuot=1", *out]) == 2
    assert error_lines(capsys) == [
        "error: -T shuot=...: task 'words' has no option 'shuot' (did you mean shout?); its options: repeat, shout, "
        "style"
    ]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["train", "check", "eval"])
def test_an_ill_typed_option_is_one_line(command, words, capsys):
    assert main([command, words, "--task_option", "repeat=twice"]) == 2
    assert error_lines(capsys) == ["error: -T repeat=twice: option 'repeat' of task 'words' is a whole number"]


def test_check_runs_with_the_options(words, capsys):
    assert main(["check", words, "-T", "shout=yes", "-T", "repeat=2", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["examples"] == 16


def test_train_help_lists_the_tasks_options(words, capsys):
    assert main(["train", words, "--help"]) == 0
    out = capsys.readouterr().out
    tail = out[out.index("task options of"):].splitlines()
    assert tail[0] == f"task options of {words} (task 'words'; set with -T KEY=VALUE):"
    assert tail[1:] == WORDS_OPTIONS_HELP
    assert "--task_option KEY=VALUE, --task-option KEY=VALUE, -T KEY=VALUE" in out
    assert main(["train", "long_form", "--help"]) == 0
    assert "task options: long_form declares none" in capsys.readouterr().out


WORDS_OPTIONS_HELP = [
    "  -T repeat=int", "        how many times each word appears. (default: 1)",
    "  -T shout=bool", "        upper-case every word. (default: false)",
    "  -T style=plain|fancy", "        how the prompt asks (plain or fancy). (default: plain)",
]


@pytest.mark.parametrize("command", ["eval", "check", "explain", "compare"])
def test_every_command_that_takes_options_lists_them_after_its_help(command, words, capsys):
    assert main([command, words, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: mrtpo-sdk {command}")
    tail = out[out.index("\ntask options of") + 1:].splitlines()
    assert tail == [f"task options of {words} (task 'words'; set with -T KEY=VALUE):", *WORDS_OPTIONS_HELP]
    assert main([command, "--help"]) == 0  # no task: the help alone
    assert "\ntask options of" not in capsys.readouterr().out


def test_help_after_a_task_that_does_not_load_says_why_in_one_note(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "missing.py"), "--help"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: mrtpo-sdk eval") and "\ntask options of" not in captured.out
    (note,) = captured.err.strip().splitlines()
    assert note.startswith("note: no task options shown (") and "missing.py" in note


def test_train_records_the_options_in_run_json(words, tmp_path, monkeypatch, shared_cache):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text("task_option:\n  style: fancy\n  repeat: 3\n")
    assert main(["train", words, *TINY_RUN, "--max_steps", "1", "--output_dir", "run", "-T", "shout=true",
                 "--config", "run.yaml", "-Trepeat=2"]) == 0
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["task_options"] == {"repeat": 2, "shout": True, "style": "fancy"}  # a flag wins over --config


def test_resume_refuses_other_task_options(words, tmp_path, monkeypatch, shared_cache, capsys):
    monkeypatch.chdir(tmp_path)
    run = ["train", words, *TINY_RUN, "--output_dir", "run", "--save_strategy", "steps", "--save_steps", "1"]
    assert main([*run, "--max_steps", "1", "-T", "repeat=2"]) == 0
    capsys.readouterr()
    assert main([*run, "--max_steps", "2", "-T", "repeat=3", "--resume_from_checkpoint", "true"]) == 2
    (line,) = error_lines(capsys)
    assert "that run trained with other task options (repeat=2 there, 3 here)" in line
    assert main([*run, "--max_steps", "2", "-T", "repeat=2", "--resume_from_checkpoint", "true"]) == 0
    assert json.loads((tmp_path / "run" / "run.json").read_text())["global_step"] == 2
