"""Every command runs what train runs and says the same thing about the same task file.

* An error in the task file's own functions (its loader, prompt, prompt_without, reference) is one line naming
  the function, its file:line, the example and the exception, in check, lint, train, eval and explain; check
  builds every prompt train builds.
* lint, check and train agree: a file with two tasks is refused; a verifier whose reward never changes is a
  warning; a verifier that changes its example is an error.
* Every subcommand's command-line mistakes are one `error:` line, with "did you mean" for an unknown option.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field

import pytest

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.cli import main
from mrtpo_sdk.loader import load_task

WORDS = ["apple", "river", "stone", "cloud", "grass", "flame", "ocean", "maple"]

TASK = '''\
from mrtpo_sdk import Result, Task, verifier

@verifier(kind="format")
def tags(example, completion):
    ok = completion.startswith("<w>") and completion.endswith("</w>")
    return Result(float(ok), "The answer is one word between <w> and </w>.")

@verifier(kind="reference")
def word(example, completion):
    return Result(float(completion == "<w>" + example["word"] + "</w>"), "<w>" + example["word"] + "</w>")

def load(split="train"):
    if split != "train":
        return []
    return [{"id": f"ex-{i}", "word": w} for i, w in enumerate(WORDS)]

def prompt(example):
    return "Write the word " + example["word"] + " between <w> and </w>."

def reference(example):
    return "<w>" + example["word"] + "</w>"

task = Task(name="words", examples=load, prompt=prompt, verifiers=[tags, word], reference=reference, eval_split=None)
'''


def write_task(tmp_path, monkeypatch, *, replace: dict[str, str] | None = None, extra: str = "", name="words.py"):
    """The words task as ``name`` in the working folder (tmp_path); returns (file name, text)."""
    monkeypatch.chdir(tmp_path)
    text = f"WORDS = {WORDS!r}\n" + TASK
    for old, new in (replace or {}).items():
        assert old in text
        text = text.replace(old, new)
    text += extra
    (tmp_path / name).write_text(text)
    return name, text


def line_of(text: str, fragment: str) -> int:
    (n,) = [i for i, line in enumerate(text.splitlines(), start=1) if fragment in line]
    return n


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


BROKEN_PROMPT = {
    '    return "Write the word "': '    if example["id"] == "ex-3":\n'
    '        raise ValueError("no prompt for " + example["word"])\n'
    '    return "Write the word "'
}


# ------------------------------------------------------------------- errors in the task file's functions
def test_check_runs_prompt_for_every_example_and_says_one_line(tmp_path, monkeypatch, capsys):
    path, text = write_task(tmp_path, monkeypatch, replace=BROKEN_PROMPT)
    n = line_of(text, "raise ValueError")
    assert run(capsys, "check", path) == (
        2,
        "",
        f"error: words.py:{n}: prompt() raised ValueError('no prompt for cloud') on example 'ex-3'\n",
    )
    # lint says the same, at the same line
    rc, out, _ = run(capsys, "lint", path, "-q")
    assert (rc, out) == (
        2,
        f"words.py:{n}:1: error: task 'words' (task): prompt() raised ValueError('no prompt for cloud') on "
        f"example 'ex-3'\n",
    )


def test_a_broken_loader_is_one_line_in_check_and_lint(tmp_path, monkeypatch, capsys):
    path, text = write_task(
        tmp_path, monkeypatch, replace={'    if split != "train":': '    open("rows.json")\n    if split != "train":'}
    )
    n = line_of(text, 'open("rows.json")')
    message = (
        f"words.py:{n}: examples() raised FileNotFoundError(\"[Errno 2] No such file or directory: 'rows.json'\") "
        f"loading split 'train'"
    )
    assert run(capsys, "check", path) == (2, "", f"error: {message}\n")
    rc, out, _ = run(capsys, "lint", path, "-q")
    assert (rc, out) == (2, message.replace(f":{n}: ", f":{n}:1: error: task 'words' (task): ", 1) + "\n")


def test_a_broken_reference_is_one_line(tmp_path, monkeypatch, capsys):
    broken = {'example["word"] + "</w>"\n\ntask': 'example["wrd"] + "</w>"\n\ntask'}
    path, text = write_task(tmp_path, monkeypatch, replace=broken)
    n = line_of(text, 'example["wrd"]')
    message = f"error: words.py:{n}: reference() raised KeyError('wrd') on example 'ex-0'\n"
    assert run(capsys, "check", path) == (2, "", message)


def test_check_builds_prompt_without_of_in_prompt_tasks(tmp_path, monkeypatch, capsys):
    extra = textwrap.dedent(
        '''
        def without(example, name):
            return {"tags": "Write the word " + example["word"] + ".", "word": None}[name].strip()

        task = Task(name="words", examples=load, prompt=prompt, verifiers=[tags, word], reference=reference,
                    eval_split=None, block_placement="in-prompt", prompt_without=without)
        '''
    )
    path, text = write_task(tmp_path, monkeypatch, replace={"task = Task(": "_first = Task("}, extra=extra)
    n = line_of(text, '"word": None')
    assert run(capsys, "check", path) == (
        2,
        "",
        f"error: words.py:{n}: prompt_without() raised AttributeError(\"'NoneType' object has no attribute "
        f"'strip'\") on example 'ex-0' (verifier 'word')\n",
    )


def test_task_function_error_keeps_the_cause_and_the_location(tmp_path, monkeypatch):
    from mrtpo_sdk.task import TaskFunctionError

    path, text = write_task(tmp_path, monkeypatch, replace=BROKEN_PROMPT)
    task = load_task(path)
    with pytest.raises(TaskFunctionError) as info:
        [task.rollout_prompt(ex) for ex in task.load_examples()]
    err = info.value
    assert (err.function, err.example_id, err.line, err.location) == (
        "prompt",
        "ex-3",
        line_of(text, "raise ValueError"),
        f"words.py:{line_of(text, 'raise ValueError')}",
    )
    assert isinstance(err.__cause__, ValueError)


def test_an_mrtpo_error_from_the_task_file_passes_through_unchanged():
    from mrtpo_sdk import MRTPOError

    def load(split):
        raise MRTPOError("rows.json: no such file; run make_data.py")

    task = Task(name="t", examples=load, prompt=lambda ex: "x", verifiers=[_always_one], eval_split=None)
    with pytest.raises(MRTPOError) as info:
        task.load_examples()
    assert type(info.value) is MRTPOError and str(info.value) == "rows.json: no such file; run make_data.py"


@pytest.mark.parametrize(
    "command",
    [
        ["train", "--policy_preset", "tiny", "--max_steps", "1", "--per_device_train_batch_size", "8",
         "--output_dir", "run"],
        ["eval", "--policy_preset", "tiny", "--split", "train"],
        ["explain", "--policy_preset", "tiny"],
    ],
    ids=["train", "eval", "explain"],
)
def test_train_eval_explain_say_the_same_line(command, tmp_path, monkeypatch, capsys):
    path, text = write_task(tmp_path, monkeypatch, replace=BROKEN_PROMPT)
    n = line_of(text, "raise ValueError")
    rc, _, err = run(capsys, command[0], path, *command[1:])
    assert rc == 2
    assert err.splitlines()[-1] == f"error: words.py:{n}: prompt() raised ValueError('no prompt for cloud') on " \
                                   f"example 'ex-3'"
    assert "Traceback" not in err


# --------------------------------------------------------------------------------- a file with two tasks
def test_two_tasks_lint_check_and_train_refuse_alike(tmp_path, monkeypatch, capsys):
    path, _ = write_task(
        tmp_path, monkeypatch, extra="other = Task(name='other', examples=load, prompt=prompt, verifiers=[tags], "
        "reference=reference, eval_split=None)\n"
    )
    message = (
        "words.py: declares 2 tasks, variable 'other' (Task name 'other'), variable 'task' (Task name 'words'); pick "
        "one by either name: words.py@other, words.py@task, words.py@words"
    )
    assert run(capsys, "check", path) == (2, "", f"error: {message}\n")
    rc, _, err = run(capsys, "train", path, "--max_steps", "1")
    assert (rc, err.splitlines()[-1]) == (2, f"error: {message}")
    rc, out, _ = run(capsys, "lint", path, "-q")
    assert (rc, out) == (2, f"words.py:1:1: error: {message.removeprefix('words.py: ')}\n")
    assert run(capsys, "lint", f"{path}@task", "-q") == (0, "", "")  # one picked: as check and train


# ------------------------------------------------------------------------------------- a constant reward
CONSTANT = (
    "returned the same reward (1) for every completion probed (40 completions of 8 examples: reference, empty, "
    "no-markup, truncated, other-reference); a reward that does not change with the completion gives every "
    "completion of a group the same advantage (0) and teaches nothing: make it depend on the completion, or give "
    "it weight=0 to only log it"
)


READS_COMPLETION = 'completion.startswith("<w>") and completion.endswith("</w>")'
READS_EXAMPLE = 'reference(example).startswith("<w>")'  # a tags verifier that reads the example, not the completion


def constant_task(tmp_path, monkeypatch):
    return write_task(
        tmp_path,
        monkeypatch,
        replace={READS_COMPLETION: READS_EXAMPLE},
    )


def test_a_constant_verifier_is_a_warning_in_lint_check_and_preflight(tmp_path, monkeypatch, capsys):
    from mrtpo_sdk.authoring.verifier_checks import preflight

    path, text = constant_task(tmp_path, monkeypatch)
    rc, out, _ = run(capsys, "lint", path, "-q")
    assert (rc, out) == (1, f"words.py:{line_of(text, 'def tags')}:5: MRT014 the verifier {CONSTANT} [verifier=tags]\n")
    rc, out, _ = run(capsys, "lint", path, "--format", "sarif")
    (result,) = json.loads(out)["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("MRT014", "warning")
    rc, out, _ = run(capsys, "lint", path, "--format", "github")
    assert out.startswith("::warning title=mrtpo-sdk (MRT014),file=words.py,")

    rc, out, _ = run(capsys, "check", path)  # a warning: check still passes
    assert rc == 0
    assert [line for line in out.splitlines() if line.startswith("WARN")] == [f"WARN tags: {CONSTANT}"]
    rc, out, _ = run(capsys, "check", path, "--format", "json")
    data = json.loads(out)
    assert (rc, data["ok"], data["warnings"]) == (0, True, [f"tags: {CONSTANT}"])

    task = load_task(path)  # what train can print before it builds a model
    assert preflight(task, task.load_examples(), task_file=path) == [f"task 'words', verifier 'tags': {CONSTANT}"]


LINT_FINDINGS = {
    '"The answer is one word between <w> and </w>."': '"Write one word between <w> and </w>."',
    '"<w>" + example["word"] + "</w>")\n': '"<w>" + example["word"].upper() + "</w>")\n',
}


def test_train_prints_each_lint_finding_as_a_warning_line_that_says_how_to_silence_it(tmp_path, monkeypatch, capsys):
    from mrtpo_sdk.lint.preflight import lint_warnings

    path, text = write_task(tmp_path, monkeypatch, replace=LINT_FINDINGS)
    imperative, reference = line_of(text, '"Write one word'), line_of(text, "def word")
    expected = [
        f"warning: words.py:{imperative}:30: MRT003 the block gives an instruction to the model (starts with the "
        f"imperative 'Write'); state the information instead [verifier=tags] (lint; silence it with '# noqa: "
        f"MRT003' on line {imperative}, or ignore = [\"MRT003\"] under [tool.mrtpo-sdk.lint] in pyproject.toml)",
        f"warning: words.py:{reference}:5: MRT007 the reference in the block earns 0 from its own verifier (full "
        f"reward is 1); the block must hold the answer the verifier accepts [verifier=word, example=ex-0 +7 more, "
        f"probe=reference] (lint; silence it with '# noqa: MRT007' on line {reference}, or ignore = [\"MRT007\"] "
        f"under [tool.mrtpo-sdk.lint] in pyproject.toml)",
    ]
    # --warm_start_steps without --model stops train right after the preflight, before any model is built
    rc, out, err = run(capsys, "train", path, "--max_steps", "1", "--warm_start_steps", "1")
    assert rc == 2 and "--warm_start_steps warm-starts a --model" in err
    assert [line for line in out.splitlines() if line.startswith("warning: ")] == expected

    # each way the warning names silences its finding, as in lint
    line = '"Write one word between <w> and </w>.")'
    silenced = text.replace(line, line + "  # noqa: MRT003")
    (tmp_path / "silenced.py").write_text(silenced)
    task = load_task("silenced.py")
    assert [line.split(": ")[1][:6] for line in lint_warnings(task, task.load_examples(), "silenced.py")] == ["MRT007"]
    (tmp_path / "pyproject.toml").write_text('[tool.mrtpo-sdk.lint]\nignore = ["MRT007"]\n')
    assert lint_warnings(task, task.load_examples(), "silenced.py") == []
    (tmp_path / "pyproject.toml").write_text('[tool.mrtpo-sdk.lint]\nignore = ["MRT99"]\n')
    (line,) = lint_warnings(task, task.load_examples(), "silenced.py")
    assert line.startswith("the lint rules were not run: ") and "MRT99" in line


def test_a_rule_that_fails_in_the_preflight_is_a_warning_line_too(tmp_path, monkeypatch):
    from mrtpo_sdk.lint.preflight import lint_warnings
    from mrtpo_sdk.lint.rules.mrt012_verifier_without_kind import VerifierWithoutKind

    def broken(self, ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(VerifierWithoutKind, "check", broken)
    path, text = write_task(tmp_path, monkeypatch)
    task = load_task(path)
    assert lint_warnings(task, task.load_examples(), path) == [
        f"words.py:{line_of(text, 'task = Task(')}:1: internal error in rule MRT012 (verifier-without-kind) on task "
        "'task': RuntimeError: boom; please report it"
    ]


def test_a_verifier_that_varies_or_is_logged_only_is_not_constant(tmp_path, monkeypatch, capsys):
    from mrtpo_sdk.authoring.verifier_checks import preflight

    path, _ = write_task(tmp_path, monkeypatch)
    task = load_task(path)
    assert preflight(task, task.load_examples()) == []
    rc, out, _ = run(capsys, "check", path, "--format", "json")
    assert (rc, json.loads(out)["warnings"]) == (0, [])
    path, _ = write_task(
        tmp_path,
        monkeypatch,
        replace={
            READS_COMPLETION: READS_EXAMPLE,
            '@verifier(kind="format")': '@verifier(kind="format", weight=0)',
        },
        name="logged.py",
    )
    assert run(capsys, "lint", path, "-q", "--select", "MRT014") == (0, "", "")


# ------------------------------------------------------------------- a verifier that changes its example
SCORES = '    return Result(float(completion == "<w>"'
MUTATES = {SCORES: '    example["checked"] = True\n' + SCORES}  # the word verifier writes into its example
MUTATION = (
    "changed its example (example['checked'] was missing, now True); a verifier must only read the example: every "
    "completion of a group is scored against the same example, so copy what you need to change"
)


def test_a_verifier_that_changes_its_example_fails_lint_check_and_preflight(tmp_path, monkeypatch, capsys):
    from mrtpo_sdk.authoring.verifier_checks import preflight
    from mrtpo_sdk.example_mutation import ExampleMutatedError

    path, text = write_task(tmp_path, monkeypatch, replace=MUTATES)
    rc, out, _ = run(capsys, "lint", path, "-q")
    (line,) = out.splitlines()
    assert rc == 1
    written = line_of(text, 'example["checked"] = True')  # the finding points at the statement that wrote
    assert line.startswith(f"words.py:{written}:5: MRT009 on the reference probe the verifier {MUTATION}")
    assert line.endswith("[verifier=word, example=ex-0 +7 more, probe=reference]")

    rc, out, _ = run(capsys, "check", path, "--format", "json")
    data = json.loads(out)
    assert (rc, data["ok"]) == (1, False)
    (failure,) = data["failures"]
    assert failure.startswith(f"word, example ex-0 (and 7 more): {MUTATION}")
    mutations = data["verifiers"]["word"]["probes"]["reference"]["mutations"]
    assert [m["example_id"] for m in mutations] == [f"ex-{i}" for i in range(8)]
    assert data["verifiers"]["word"]["probes"]["reference"]["reward_mean"] == 1.0  # its result still counts

    task = load_task(path)
    with pytest.raises(ExampleMutatedError) as info:
        preflight(task, task.load_examples())
    assert str(info.value).startswith(f"task 'words', verifier 'word', example 'ex-0': {MUTATION}")


@verifier(kind="format")
def _always_one(example, completion):
    return Result(1.0, "x")


@dataclass
class _Example:
    id: str
    tags: list = field(default_factory=list)


class _Plain:
    def __init__(self):
        self.id = "p1"
        self.rows = {"a": [1, 2]}


def test_changed_names_the_first_difference():
    from mrtpo_sdk.authoring.verifier_checks import score_unmutated
    from mrtpo_sdk.example_mutation import ExampleMutatedError, changed, snapshot

    ex = _Example("e1", ["a"])
    before = snapshot(ex)
    assert changed(before, ex) is None
    ex.tags.append("b")
    assert changed(before, ex) == "len(example.tags) was 1, now 2"
    plain = _Plain()
    before = snapshot(plain)
    plain.rows["a"][1] = 3
    assert changed(before, plain) == "example.rows['a'][1] was 2, now 3"
    d = {"id": 1, "x": float("nan")}
    assert changed(snapshot(d), d) is None  # nan is nan

    @verifier(kind="format")
    def pops(example, completion):
        example.pop("answer")
        return Result(1.0, "x")

    with pytest.raises(ExampleMutatedError) as info:
        score_unmutated(pops, {"id": "e1", "answer": "42"}, "c", task="t", example_id="e1")
    assert str(info.value).startswith("task 't', verifier 'pops', example 'e1': changed its example "
                                      "(example['answer'] was '42', now missing)")
    assert info.value.result == Result(1.0, "x")
    assert score_unmutated(_always_one, {"id": "e1"}, "c") == Result(1.0, "x")


# --------------------------------------------------------------------------------- command-line mistakes
@pytest.mark.parametrize(
    "argv, message",
    [
        (["lint", "--selct", "MRT001"], "unknown option: --selct (did you mean --select?)"),
        (["lint", "--examples", "x"], "argument --examples: invalid int value: 'x'"),
        (["rule", "--formt", "json"], "unknown option: --formt (did you mean --format?)"),
        (["new", "x", "--dri", "d"], "unknown option: --dri (did you mean --dir?)"),
        (["new"], "the following arguments are required: NAME"),
        (["check", "t.py", "--limt", "3"], "unknown option: --limt (did you mean --limit?)"),
        (["check", "t.py", "--limit", "x"], "argument --limit: invalid int value: 'x'"),
        (["check", "t.py", "u.py"], "unexpected argument: u.py"),
        (["explain", "t.py", "--exmple", "e1"], "unknown option: --exmple (did you mean --example?)"),
        (["explain", "t.py", "--mrtpo_beta", "high"], "argument --mrtpo_beta: invalid float value: 'high'"),
        (["eval", "t.py", "--num_generation", "2"],
         "unknown option: --num_generation (did you mean --num_generations?)"),
        (["eval", "t.py", "--seed", "x"], "argument --seed: invalid int value: 'x'"),
        (["compare", "runs/a", "--smooth", "x"], "argument --smooth: invalid int value: 'x'"),
    ],
)
def test_every_subcommand_says_one_line_for_a_bad_flag(argv, message, capsys):
    assert run(capsys, *argv) == (2, "", f"error: {message} (all options: mrtpo-sdk {argv[0]} --help)\n")


def test_help_still_prints_and_exits_0(capsys):
    for command in ("lint", "rule", "new", "check", "explain", "eval", "compare"):
        try:
            rc = main([command, "--help"])
        except SystemExit as exc:  # a command may let argparse exit after the help
            rc = exc.code
        out = capsys.readouterr().out
        assert rc == 0 and out.startswith(f"usage: mrtpo-sdk {command}"), command
