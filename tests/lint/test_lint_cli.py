"""`mrtpo-sdk lint` / `mrtpo-sdk rule` user experience: exit codes, output formats, selection, suppression,
config, load errors, determinism, and that lint stays light (no torch/trl import)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from mrtpo_sdk.cli import main
from mrtpo_sdk.lint import CODES

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
LINE = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>MRT\d{3}) (?P<msg>.+?)(?: \[(?P<ctx>[^\]]*)\])?$"
)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A temporary project folder (the working directory) with the fixtures' shared helpers."""
    shutil.copy(FIXTURES / "_toolcall.py", tmp_path / "_toolcall.py")
    shutil.copy(FIXTURES / "_instructions.py", tmp_path / "_instructions.py")
    monkeypatch.chdir(tmp_path)

    def add(fixture: str, name: str | None = None, edit=None) -> Path:
        text = (FIXTURES / f"{fixture}.py").read_text()
        if edit:
            text = edit(text)
        path = tmp_path / (name or f"{fixture}.py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return add


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def finding_lines(out: str) -> list[re.Match]:
    return [m for m in map(LINE.match, out.splitlines()) if m]


# ----------------------------------------------------------------------------------------------- exit codes, text
def test_clean_file_exits_0_with_summary(project, capsys):
    project("mrt004_invented_feedback_clean")
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback_clean.py")
    assert rc == 0
    assert out.startswith("All checks passed!")


def test_findings_exit_1_in_ruff_format(project, capsys):
    project("mrt004_invented_feedback")
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback.py")
    assert rc == 1
    lines = finding_lines(out)
    assert [(m["path"], int(m["line"]), m["code"]) for m in lines] == [
        ("mrt004_invented_feedback.py", 17, "MRT004"),
        ("mrt004_invented_feedback.py", 22, "MRT004"),
    ]
    assert lines[0]["col"] == "5"  # the verifier's name on its def line
    assert "verifier=arguments_valid" in lines[0]["ctx"] and "example=w1" in lines[0]["ctx"]
    assert out.splitlines()[-1].startswith("Found 2 findings")


def test_default_path_is_cwd_and_folders_are_scanned(project, capsys):
    project("mrt012_verifier_without_kind", "tasks/a.py")
    project("mrt012_verifier_without_kind_clean", "tasks/b.py")
    (Path("tasks") / "helper.py").write_text("X = 1\n")  # not a task file: skipped
    shutil.copy("_toolcall.py", "tasks/_toolcall.py")
    rc, out, _ = run(capsys, "lint")
    assert rc == 1
    assert [m["path"] for m in finding_lines(out)] == ["tasks/a.py"]
    assert "2 tasks in 2 files" in out


def test_task_that_fails_to_import_exits_2_and_others_are_still_linted(project, capsys):
    project("mrt012_verifier_without_kind", "a_bad_kind.py")
    Path("b_broken.py").write_text("from mrtpo_sdk import Task\nimport does_not_exist\ntask = Task()\n")
    rc, out, _ = run(capsys, "lint", ".")
    assert rc == 2
    assert "b_broken.py:2:1: error: importing the task file raised ModuleNotFoundError" in out
    assert any(m["code"] == "MRT012" for m in finding_lines(out))
    assert "1 file could not be linted" in out


def test_verifier_that_raises_is_reported_and_linting_goes_on(project, capsys):
    project("mrt009_verifier_error")
    project("mrt012_verifier_without_kind")
    rc, out, _ = run(capsys, "lint", "mrt009_verifier_error.py", "mrt012_verifier_without_kind.py")
    assert rc == 1
    codes = {(m["path"], m["code"]) for m in finding_lines(out)}
    assert codes == {("mrt009_verifier_error.py", "MRT009"), ("mrt012_verifier_without_kind.py", "MRT012")}
    m = next(m for m in finding_lines(out) if m["code"] == "MRT009")
    assert "IndexError" in m["msg"] and "verifier=arguments_valid" in m["ctx"] and "probe=empty" in m["ctx"]


def test_verifier_error_points_at_the_line_that_raised_or_wrote(project, capsys):
    path = project("mrt009_verifier_error")
    lines = path.read_text().splitlines()
    raising = next(i for i, line in enumerate(lines, 1) if 'completion.split("<tool_call>")[1]' in line)
    (m,) = finding_lines(run(capsys, "lint", path.name, "--select", "MRT009")[1])
    assert (int(m["line"]), int(m["col"])) == (raising, 5)

    # the raise is in a helper of the task file: the helper's line, where the code failed
    project(
        "mrt009_verifier_error",
        name="helper.py",
        edit=lambda t: t.replace('    inner = completion.split("<tool_call>")[1]', "    inner = _after_tag(completion)")
        + '\n\ndef _after_tag(text):\n    return text.split("<tool_call>")[1]\n',
    )
    lines = Path("helper.py").read_text().splitlines()
    (m,) = finding_lines(run(capsys, "lint", "helper.py", "--select", "MRT009")[1])
    assert lines[int(m["line"]) - 1] == '    return text.split("<tool_call>")[1]' and m["col"] == "5"

    path = project(
        "mrt009_verifier_error__mutates",
        edit=lambda t: t.replace('example["checked"] = True', 'example.setdefault("checked", True)'),
    )
    lines = path.read_text().splitlines()
    (m,) = finding_lines(run(capsys, "lint", path.name, "--select", "MRT009")[1])
    assert lines[int(m["line"]) - 1].startswith('    example.setdefault("checked", True)') and m["col"] == "5"
    assert "example['checked'] was missing, now True" in m["msg"]


def test_syntax_error_and_missing_path_exit_2(project, capsys):
    Path("broken.py").write_text("from mrtpo_sdk import Task\ntask = Task(\n")
    rc, out, _ = run(capsys, "lint", "broken.py", "nope.py")
    assert rc == 2
    assert "broken.py:2:" in out and "syntax error" in out
    assert "no such file or folder: nope.py" in out


def test_usage_errors_exit_2(project, capsys):
    project("mrt012_verifier_without_kind_clean")
    assert run(capsys, "lint", "--select", "XYZ9")[0] == 2
    assert run(capsys, "lint", "--examples", "0")[0] == 2
    assert run(capsys, "lint", "--format", "xml")[0] == 2
    rc, out, err = run(capsys, "lint", "--bogus")
    assert (rc, out, err) == (2, "", "error: unknown option: --bogus (all options: mrtpo-sdk lint --help)\n")


# ----------------------------------------------------------------------------------------------- selection
def test_select_and_ignore_use_prefixes(project, capsys):
    project("mrt004_invented_feedback")
    project("mrt012_verifier_without_kind")
    both = ["mrt004_invented_feedback.py", "mrt012_verifier_without_kind.py"]
    rc, out, _ = run(capsys, "lint", *both, "--select", "MRT01")
    assert rc == 1 and {m["code"] for m in finding_lines(out)} == {"MRT012"}
    rc, out, _ = run(capsys, "lint", *both, "--ignore", "MRT00")
    assert {m["code"] for m in finding_lines(out)} == {"MRT012"}
    rc, out, _ = run(capsys, "lint", *both, "--select", "ALL", "--ignore", "MRT0", "--extend-select", "MRT004")
    assert {m["code"] for m in finding_lines(out)} == {"MRT004"}  # the more specific selector wins
    rc, out, _ = run(capsys, "lint", *both, "--ignore", "MRT004,MRT012")
    assert rc == 0


# ----------------------------------------------------------------------------------------------- suppression
def test_noqa_on_the_verifier_line(project, capsys):
    project("mrt012_verifier_without_kind", edit=lambda t: t.replace("# expect: MRT012", "# noqa: MRT012"))
    assert run(capsys, "lint", "mrt012_verifier_without_kind.py")[0] == 0
    project("mrt012_verifier_without_kind", edit=lambda t: t.replace("# expect: MRT012", "# noqa"))
    assert run(capsys, "lint", "mrt012_verifier_without_kind.py")[0] == 0
    project("mrt012_verifier_without_kind", edit=lambda t: t.replace("# expect: MRT012", "# noqa: MRT003"))
    assert run(capsys, "lint", "mrt012_verifier_without_kind.py")[0] == 1  # another code does not suppress
    project("mrt012_verifier_without_kind", edit=lambda t: t.replace("@verifier\n", "@verifier  # noqa: MRT012\n"))
    assert run(capsys, "lint", "mrt012_verifier_without_kind.py")[0] == 0  # the decorator line counts too


def test_noqa_on_a_static_finding_line(project, capsys):
    project(
        "mrt004_invented_feedback",
        edit=lambda t: t.replace('schema.")  # expect: MRT004\n    return', 'schema.")  # noqa: MRT004\n    return'),
    )
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback.py")
    assert [int(m["line"]) for m in finding_lines(out)] == [17]


def test_file_level_suppression(project, capsys):
    project("mrt004_invented_feedback", edit=lambda t: "# mrtpo-sdk: noqa\n" + t)
    assert run(capsys, "lint", "mrt004_invented_feedback.py")[0] == 0
    project("mrt004_invented_feedback", edit=lambda t: "# mrtpo-sdk: noqa: MRT012\n" + t)
    assert run(capsys, "lint", "mrt004_invented_feedback.py")[0] == 1
    project("mrt004_invented_feedback", edit=lambda t: "# mrtpo-sdk: noqa: MRT004, MRT012\n" + t)
    assert run(capsys, "lint", "mrt004_invented_feedback.py")[0] == 0


# ----------------------------------------------------------------------------------------------- config
def test_config_from_nearest_pyproject(project, capsys):
    project("mrt004_invented_feedback", "tasks/a.py")
    project("mrt012_verifier_without_kind", "tasks/legacy_b.py")
    shutil.copy("_toolcall.py", "tasks/_toolcall.py")
    Path("pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.mrtpo-sdk.lint]\nignore = ["MRT004"]\n'
        'per-file-ignores = { "tasks/legacy_*.py" = ["MRT01"] }\nexamples = 2\n'
    )
    rc, out, _ = run(capsys, "lint", "tasks")
    assert rc == 0, out
    rc, out, _ = run(capsys, "lint", "tasks", "--isolated")
    assert {m["code"] for m in finding_lines(out)} == {"MRT004", "MRT012"}
    rc, out, _ = run(capsys, "lint", "tasks", "--select", "MRT004")  # the command line replaces select...
    assert {m["code"] for m in finding_lines(out)} == {"MRT004"}
    rc, out, _ = run(capsys, "lint", "tasks/a.py", "--format", "json")
    assert rc == 0


def test_config_examples_limits_the_sample(project, capsys):
    project("mrt004_invented_feedback")
    Path("pyproject.toml").write_text('[tool.mrtpo-sdk.lint]\nexamples = 2\nselect = ["MRT004"]\n')
    rc, out, _ = run(capsys, "lint", "--format", "json")
    data = json.loads(out)
    assert {d["sampled_examples"] for d in data} == {2}
    rc, out, _ = run(capsys, "lint", "--format", "json", "--examples", "3")
    assert {d["sampled_examples"] for d in json.loads(out)} == {3}


def test_bad_config_is_a_usage_error(project, capsys):
    project("mrt004_invented_feedback_clean")
    Path("pyproject.toml").write_text('[tool.mrtpo-sdk.lint]\nselekt = ["MRT004"]\n')
    rc, _, err = run(capsys, "lint")
    assert rc == 2 and "unknown key 'selekt'" in err and "pyproject.toml" in err
    Path("pyproject.toml").write_text('[tool.mrtpo-sdk.lint]\nignore = ["NOPE1"]\n')
    rc, _, err = run(capsys, "lint")
    assert rc == 2 and "unknown rule selector 'NOPE1'" in err


def test_config_examples_true_is_not_a_count(project, capsys):
    project("mrt004_invented_feedback_clean")
    Path("pyproject.toml").write_text("[tool.mrtpo-sdk.lint]\nexamples = true\n")
    rc, _, err = run(capsys, "lint")
    assert rc == 2 and "examples must be a positive integer, got True" in err


def test_every_unknown_config_key_is_named_in_one_line(project, capsys):
    project("mrt004_invented_feedback_clean")
    Path("pyproject.toml").write_text('[tool.mrtpo-sdk.lint]\nselekt = ["MRT004"]\nexamples = 3\nignor = []\nzzz = 1\n')
    rc, _, err = run(capsys, "lint")
    assert rc == 2
    assert [line for line in err.splitlines() if "unknown key" in line] == [
        f"error: {Path('pyproject.toml').resolve()}: [tool.mrtpo-sdk.lint]: unknown keys 'selekt' (did you mean "
        "'select'?), 'ignor' (did you mean 'ignore'?), 'zzz'; known keys: examples, exclude, extend-exclude, "
        "extend-select, ignore, per-file-ignores, select, split"
    ]



@pytest.mark.parametrize(
    "header", ["[tool.mrtpo_sdk.lint]", "[tool.mrtpo-sdk-lint]", "[tool.mrtpo.lint]", "[tool.mrtpo-sdk.lints]"]
)
def test_misspelled_lint_table_is_named_with_the_table_to_use(project, capsys, header):
    project("mrt004_invented_feedback")
    Path("pyproject.toml").write_text(f'{header}\nselect = ["MRT012"]\n')
    rc, out, err = run(capsys, "lint")
    assert (rc, out) == (2, "")
    assert err.splitlines() == [
        f"error: {Path('pyproject.toml').resolve()}: {header} is not read; rename it to [tool.mrtpo-sdk.lint]"
    ]


def test_misspelled_tool_table_says_where_lint_settings_go(project, capsys):
    project("mrt004_invented_feedback")
    Path("pyproject.toml").write_text('[tool.mrtpo_sdk]\nselect = ["MRT012"]\n')
    rc, _, err = run(capsys, "lint")
    assert rc == 2
    assert err.splitlines() == [
        f"error: {Path('pyproject.toml').resolve()}: [tool.mrtpo_sdk] is not read; lint settings go in "
        "[tool.mrtpo-sdk.lint]"
    ]


def test_lint_keys_directly_under_the_tool_table_are_named(project, capsys):
    project("mrt004_invented_feedback")
    Path("pyproject.toml").write_text('[tool.mrtpo-sdk]\nselect = ["MRT012"]\nignore = ["MRT004"]\n')
    rc, _, err = run(capsys, "lint")
    assert rc == 2
    assert err.splitlines() == [
        f"error: {Path('pyproject.toml').resolve()}: [tool.mrtpo-sdk]: 'select', 'ignore' are lint keys, not read "
        "there; move them under [tool.mrtpo-sdk.lint]"
    ]
    Path("pyproject.toml").write_text('[tool.mrtpo-sdk]\nexamples = 2\n\n[tool.mrtpo-sdk.lint]\nselect = ["MRT004"]\n')
    rc, _, err = run(capsys, "lint")
    assert rc == 2
    assert err.splitlines() == [
        f"error: {Path('pyproject.toml').resolve()}: [tool.mrtpo-sdk]: 'examples' is a lint key, not read there; "
        "move it under [tool.mrtpo-sdk.lint]"
    ]


def test_empty_select_passes_with_a_warning_that_nothing_is_checked(project, capsys):
    project("mrt004_invented_feedback")
    Path("pyproject.toml").write_text("[tool.mrtpo-sdk.lint]\nselect = []\n")
    warning = (
        f"warning: {Path('pyproject.toml').resolve()}: [tool.mrtpo-sdk.lint] select = [] selects no rule; nothing is "
        'checked (list codes, e.g. select = ["MRT004"], or remove select to check every rule)'
    )
    rc, out, err = run(capsys, "lint")
    assert (rc, out.startswith("All checks passed!"), err.splitlines()) == (0, True, [warning])
    rc, out, err = run(capsys, "lint", "-q", "--format", "json")  # stdout stays parseable; -q keeps the warning
    assert (rc, json.loads(out), err.splitlines()) == (0, [], [warning])
    rc, out, err = run(capsys, "lint", "mrt004_invented_feedback.py", "--extend_select", "MRT004", "--format", "json")
    assert (rc, {d["code"] for d in json.loads(out)}, err) == (1, {"MRT004"}, "")
    Path("pyproject.toml").unlink()
    rc, _, err = run(capsys, "lint", "--ignore", "ALL")
    assert (rc, err.splitlines()) == (
        0,
        ["warning: --select/--ignore leave no rule selected; nothing is checked (select more codes or ignore fewer)"],
    )


# ----------------------------------------------------------------------------------------------- formats
def test_json_format(project, capsys):
    project("mrt004_invented_feedback")
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback.py", "--format", "json")
    assert rc == 1
    data = json.loads(out)
    assert [(d["code"], d["location"]["row"]) for d in data] == [("MRT004", 17), ("MRT004", 22)]
    assert data[0]["name"] == "invented-feedback"
    assert data[0]["verifier"] == "arguments_valid"
    assert data[0]["examples"] == ["w1", "c1", "t1", "w2"] or sorted(data[0]["examples"]) == ["c1", "t1", "w1", "w2"]
    assert Path(data[0]["filename"]).name == "mrt004_invented_feedback.py"


def test_github_format(project, capsys):
    project("mrt012_verifier_without_kind")
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind.py", "--format", "github")
    assert rc == 1
    (line,) = out.strip().splitlines()
    assert line.startswith(
        "::error title=mrtpo-sdk (MRT012),file=mrt012_verifier_without_kind.py,line=17,col=5::"
        "mrt012_verifier_without_kind.py:17:5: MRT012 the verifier declares no kind"
    )


# The parts of the SARIF 2.1.0 schema (json.schemastore.org/sarif-2.1.0.json) that a consumer such as GitHub
# code scanning relies on.
SARIF_SHAPE = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name", "rules"],
                                "properties": {
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id", "shortDescription"],
                                            "properties": {"shortDescription": {"required": ["text"]}},
                                        },
                                    }
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["ruleId", "message", "locations", "level"],
                            "properties": {
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {"type": "object", "required": ["text"]},
                                "locations": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {
                                        "type": "object",
                                        "required": ["physicalLocation"],
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "required": ["artifactLocation", "region"],
                                                "properties": {
                                                    "artifactLocation": {"required": ["uri"]},
                                                    "region": {
                                                        "type": "object",
                                                        "required": ["startLine", "startColumn"],
                                                        "properties": {
                                                            "startLine": {"type": "integer", "minimum": 1},
                                                            "startColumn": {"type": "integer", "minimum": 1},
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_sarif_format(project, capsys):
    project("mrt004_invented_feedback")
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback.py", "--format", "sarif")
    assert rc == 1
    doc = json.loads(out)
    jsonschema.validate(doc, SARIF_SHAPE)
    run0 = doc["runs"][0]
    assert [r["id"] for r in run0["tool"]["driver"]["rules"]] == list(CODES)
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in run0["results"]] == [
        ("MRT004", 17),
        ("MRT004", 22),
    ]
    for r in run0["results"]:
        assert run0["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"]


def test_statistics(project, capsys):
    project("mrt004_invented_feedback")
    project("mrt012_verifier_without_kind")
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback.py", "mrt012_verifier_without_kind.py", "--statistics")
    assert rc == 1
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert [[c.strip() for c in r] for r in rows] == [
        ["2", "MRT004", "invented-feedback"],
        ["1", "MRT012", "verifier-without-kind"],
    ]


def test_output_file_and_exit_zero(project, capsys, tmp_path):
    project("mrt012_verifier_without_kind")
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind.py", "--exit-zero", "-o", "report.txt")
    assert rc == 0 and out == ""
    assert "MRT012" in Path("report.txt").read_text()


def test_output_is_deterministic(project, capsys):
    for name in ("mrt001_merged_blocks", "mrt004_invented_feedback", "mrt009_verifier_error"):
        project(name)
    first = run(capsys, "lint", ".", "--format", "json")[1]
    second = run(capsys, "lint", ".", "--format", "json")[1]
    assert first == second and json.loads(first)


# ----------------------------------------------------------------------------------------------- rule command
def test_rule_command_prints_the_docs(capsys):
    rc, out, _ = run(capsys, "rule", "MRT003")
    assert rc == 0
    assert out.startswith("# instruction-or-meta-in-block (MRT003)")
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## References"):
        assert section in out
    assert run(capsys, "rule", "invented-feedback")[1].startswith("# invented-feedback (MRT004)")
    assert run(capsys, "rule", "mrt005")[1].startswith("# reference-not-in-policy-format (MRT005)")


def test_rule_all_and_errors(capsys):
    rc, out, _ = run(capsys, "rule", "--all")
    assert rc == 0 and [line for line in out.splitlines() if line.startswith("# ")] == [
        line for line in out.splitlines() if re.match(r"# [a-z-]+ \(MRT\d{3}\)$", line)
    ]
    assert out.count("## What it does") == len(CODES)
    rc, _, err = run(capsys, "rule", "MRT999")
    assert rc == 2 and "no rule 'MRT999'" in err
    assert run(capsys, "rule")[0] == 2
    data = json.loads(run(capsys, "rule", "MRT001", "--format", "json")[1])
    assert data["code"] == "MRT001" and data["name"] == "merged-blocks"


# ----------------------------------------------------------------------------------------------- speed / imports
def test_lint_does_not_import_torch_or_trl():
    code = (
        "import sys\nfrom mrtpo_sdk.cli import main\n"
        f"rc = main(['lint', {str(REPO / 'tasks' / 'sql.py')!r}, '-q'])\n"
        "heavy = sorted(m for m in ('torch', 'trl', 'transformers') if m in sys.modules)\n"
        "print('HEAVY', heavy, 'RC', rc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert "HEAVY [] RC 0" in out.stdout, out.stdout + out.stderr


# ----------------------------------------------------------------------------------------------- task functions
def test_task_whose_reference_raises_is_a_load_error_naming_the_example(project, capsys):
    project(
        "mrt012_verifier_without_kind_clean",
        edit=lambda t: t.replace("reference=reference)", "reference=lambda example: example['missing'])"),
    )
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind_clean.py")
    assert rc == 2
    (line,) = out.splitlines()[:1]
    # at the line of the task file that raised (the lambda), in the words check and train use
    assert line == (
        "mrt012_verifier_without_kind_clean.py:32:1: error: task 'tools' (task): "
        "reference() raised KeyError('missing') on example 'w1'"
    )


def test_declared_probes_reach_the_verifiers(project, capsys):
    def edit(text):
        text = text.replace("PROBES = [BAD_ARGUMENT]\n", "")
        text = text.replace(
            "errors = schema_errors(call)\n", "errors = schema_errors(call)\n    assert call['name'] != 'crash'\n"
        )
        return (
            text
            + "\n\ndef lint_probes(example):\n"
            + '    return [\'<tool_call>{"name": "crash", "arguments": {}}</tool_call>\']\n'
        )

    project("mrt012_verifier_without_kind_clean", edit=edit)
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind_clean.py")
    assert rc == 1
    (m,) = finding_lines(out)
    assert m["code"] == "MRT009" and "AssertionError" in m["msg"] and "probe=declared-1" in m["ctx"]


def test_bad_declared_probes_are_a_load_error(project, capsys):
    project("mrt012_verifier_without_kind_clean", edit=lambda t: t.replace("PROBES = [BAD_ARGUMENT]", "PROBES = 3"))
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind_clean.py")
    assert rc == 2 and "PROBES must be a list of completion strings" in out


def test_file_without_task_given_explicitly_is_an_error(project, capsys):
    Path("helper.py").write_text("X = 1\n")
    rc, out, _ = run(capsys, "lint", "helper.py")
    assert rc == 2 and "helper.py:1:1: error: declares no Task" in out


def test_unused_noqa_ignores_other_tools_codes_and_bare_noqa(project, capsys):
    project(
        "mrt012_verifier_without_kind_clean",
        edit=lambda t: t.replace(
            "def call_format(example, completion):", "def call_format(example, completion):  # noqa: E501"
        ).replace("def call_match(example, completion):", "def call_match(example, completion):  # noqa"),
    )
    assert run(capsys, "lint", "mrt012_verifier_without_kind_clean.py")[0] == 0
    project(
        "mrt012_verifier_without_kind_clean",
        edit=lambda t: t.replace(
            "def call_match(example, completion):", "def call_match(example, completion):  # noqa: MRT005"
        ),
    )
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind_clean.py")
    assert rc == 1 and [m["code"] for m in finding_lines(out)] == ["MRT013"]
    # not judged when the code is not enabled
    assert run(capsys, "lint", "mrt012_verifier_without_kind_clean.py", "--ignore", "MRT005")[0] == 0


def test_file_at_name_lints_one_task(project, capsys):
    project(
        "mrt012_verifier_without_kind",
        edit=lambda t: (
            t + "\nclean = Task(name='tools2', examples=EXAMPLES, "
            "prompt=prompt, verifiers=[call_format, call_match], reference=reference)\n"
        ),
    )
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind.py@clean")
    assert rc == 0 and "(1 task in 1 file" in out
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind.py@tools")  # the task's name works too
    assert rc == 1 and [m["code"] for m in finding_lines(out)] == ["MRT012"]
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind.py@nope")
    assert rc == 2 and (
        "no task named 'nope'; it declares variable 'clean' (Task name 'tools2'), variable 'task' (Task name "
        "'tools'); select by either name: mrt012_verifier_without_kind.py@clean" in out
    )


def test_show_files_lists_task_files_without_importing(project, capsys):
    project("mrt012_verifier_without_kind", "tasks/a.py")
    Path("tasks/helper.py").write_text("from mrtpo_sdk import Task\n\ndef make():\n    return Task()\n")
    Path("tasks/boom.py").write_text("from mrtpo_sdk import Task\nraise SystemExit('imported!')\ntask = Task()\n")
    Path(".venv/lib").mkdir(parents=True)
    Path(".venv/lib/t.py").write_text("from mrtpo_sdk import Task\ntask = Task()\n")
    rc, out, _ = run(capsys, "lint", "--show-files")
    assert rc == 0 and out.splitlines() == ["tasks/a.py", "tasks/boom.py"]
    rc, out, _ = run(capsys, "lint", "--show-files", "--extend-exclude", "boom.py")
    assert out.splitlines() == ["tasks/a.py"]


def test_color_only_when_asked_or_on_a_terminal(project, capsys):
    project("mrt012_verifier_without_kind")
    out = run(capsys, "lint", "mrt012_verifier_without_kind.py")[1]
    assert "\x1b[" not in out  # captured output is not a terminal
    out = run(capsys, "lint", "mrt012_verifier_without_kind.py", "--color", "always")[1]
    assert "\x1b[1m\x1b[31mMRT012\x1b[0m" in out


def test_task_files_that_print_do_not_corrupt_json(project, capsys):
    project(
        "mrt012_verifier_without_kind",
        edit=lambda t: t.replace("PROBES = [BAD_ARGUMENT]", "PROBES = [BAD_ARGUMENT]\nprint('loading tools')"),
    )
    rc, out, err = run(capsys, "lint", "mrt012_verifier_without_kind.py", "--format", "json")
    assert rc == 1 and [d["code"] for d in json.loads(out)] == ["MRT012"]
    assert "loading tools" in err


def test_a_crashing_rule_is_reported_and_the_others_still_run(project, capsys, monkeypatch):
    from mrtpo_sdk.lint.codes import get_rule

    rule = get_rule("MRT004")
    monkeypatch.setattr(type(rule), "check", lambda self, ctx: 1 / 0)
    project("mrt012_verifier_without_kind")
    rc, out, _ = run(capsys, "lint", "mrt012_verifier_without_kind.py")
    assert rc == 2
    assert "error: internal error in rule MRT004 (invented-feedback) on task 'task': ZeroDivisionError" in out
    assert [m["code"] for m in finding_lines(out)] == ["MRT012"]


def test_logged_only_verifiers_are_exempt_from_block_rules(project, capsys):
    project(
        "mrt004_invented_feedback",
        edit=lambda t: t.replace('@verifier(kind="feedback")', '@verifier(kind="feedback", weight=0)'),
    )
    assert run(capsys, "lint", "mrt004_invented_feedback.py")[0] == 0
    project(
        "mrt009_verifier_error",
        edit=lambda t: t.replace('@verifier(kind="feedback")', '@verifier(kind="feedback", weight=0)'),
    )
    rc, out, _ = run(capsys, "lint", "mrt009_verifier_error.py")  # a crash still matters
    assert rc == 1 and [m["code"] for m in finding_lines(out)] == ["MRT009"]


def test_load_errors_in_json_have_no_code(project, capsys):
    Path("b_broken.py").write_text("from mrtpo_sdk import Task\nimport does_not_exist\ntask = Task()\n")
    rc, out, _ = run(capsys, "lint", "b_broken.py", "--format", "json")
    (entry,) = json.loads(out)
    assert rc == 2 and entry["code"] is None and entry["location"] == {"row": 2, "column": 1}
    assert "ModuleNotFoundError" in entry["message"]


def test_full_format_shows_the_source_with_the_token_underlined(project, capsys):
    project("mrt004_invented_feedback")
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback.py", "--format", "full")
    assert rc == 1
    first = out.split("\n\n")[0].splitlines()
    assert first[0].startswith("mrt004_invented_feedback.py:17:5: MRT004 the feedback block is non-empty")
    assert "[verifier" not in first[0]
    assert first[1:6] == [
        "   |",
        '16 | @verifier(kind="feedback")',
        "17 | def arguments_valid(example, completion):  # expect: MRT004",
        "   |     ^^^^^^^^^^^^^^^ MRT004",
        "18 |     call, _ = parse(completion)",
    ]
    assert first[-1] == "   = verifier=arguments_valid, example=w1 +3 more, probe=reference"
    assert out.rstrip().splitlines()[-1].startswith("Found 2 findings")
    concise = run(capsys, "lint", "mrt004_invented_feedback.py", "--format", "concise")[1].splitlines()
    assert len(concise) == 4  # two findings, the rule's help line, the summary
    assert concise[2] == (
        "help: MRT004 (invented-feedback): https://github.com/mrtpo-sdk/mrtpo-sdk/blob/main/docs/rules/MRT004.md "
        "(offline: mrtpo-sdk rule MRT004)"
    )


# ----------------------------------------------------------------------------------------------- in the ecosystem
DOCS = "https://github.com/mrtpo-sdk/mrtpo-sdk/blob/main/docs/rules/"
REGISTRY = (  # a helper module: it calls Task( at module level (so a folder scan imports it) but holds no Task
    "from mrtpo_sdk import Task\n\nNAMES = []\nREGISTRY = {n: Task(name=n, examples=[], prompt=str, verifiers=[]) "
    "for n in NAMES}\n"
)
SKIPPED = (
    "tasks/registry.py:1:1: note: declares no Task at module level: skipped as a helper module (pass the file "
    "explicitly to lint it as a task file)"
)


def test_bundled_tasks_are_linted_by_name(project, capsys):
    rc, out, err = run(capsys, "lint", "sql")  # the working directory has no file or folder named sql
    assert (rc, err) == (0, "")
    assert out.startswith("All checks passed! (1 task in 1 file,")
    rc, out, _ = run(capsys, "lint", "bfcl", "instruction_following")
    assert rc == 0 and out.startswith("All checks passed! (2 tasks in 2 files,")
    rc, out, _ = run(capsys, "lint", "sqll")
    assert rc == 2
    assert out.splitlines()[0] == (
        "sqll:1:1: error: no such file or folder: sqll; pass a task file, a folder, or a bundled task's name "
        "(sql, instruction_following, bfcl, long_form)"
    )


def test_rule_doc_urls_are_absolute_and_configured_once(project, capsys):
    from mrtpo_sdk.lint.codes import DOCS_URL, rule_url

    assert DOCS_URL == DOCS and rule_url("MRT004") == DOCS + "MRT004.md"
    project("mrt004_invented_feedback")
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback.py", "--format", "json")
    assert rc == 1 and [d["url"] for d in json.loads(out)] == [DOCS + "MRT004.md"] * 2
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback.py", "--format", "github")
    assert [line.rsplit(" ", 1)[1] for line in out.splitlines()] == [f"({DOCS}MRT004.md)"] * 2
    rc, out, _ = run(capsys, "lint", "mrt004_invented_feedback.py", "--format", "sarif")
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    assert [r["helpUri"] for r in rules] == [f"{DOCS}{code}.md" for code in CODES]
    rc, out, _ = run(capsys, "rule", "MRT004")
    assert rc == 0 and out.splitlines()[-1] == f"Online: {DOCS}MRT004.md"
    rc, out, _ = run(capsys, "rule", "MRT004", "--format", "json")
    assert json.loads(out)["url"] == DOCS + "MRT004.md"


def test_rule_prints_its_page_from_the_package_alone(tmp_path):
    """An installed wheel has no docs/ folder: `mrtpo-sdk rule` reads the rule's docstring from the package."""
    from mrtpo_sdk.lint.docs import pages

    shutil.copytree(REPO / "mrtpo_sdk", tmp_path / "mrtpo_sdk", ignore=shutil.ignore_patterns("__pycache__"))
    code = "import sys; from mrtpo_sdk.cli import main; sys.exit(main(['rule', 'MRT004']))"
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "docs").exists()
    assert done.stdout == pages()["MRT004.md"] + f"\nOnline: {DOCS}MRT004.md\n"


def test_folder_lint_skips_a_file_that_declares_no_task_with_a_note(project, capsys):
    project("mrt012_verifier_without_kind_clean", "tasks/a.py")
    shutil.copy("_toolcall.py", "tasks/_toolcall.py")
    Path("tasks/registry.py").write_text(REGISTRY)
    rc, out, err = run(capsys, "lint", "tasks")
    assert rc == 0 and out.startswith("All checks passed! (1 task in 1 file,")
    assert err.splitlines() == [SKIPPED]
    rc, out, err = run(capsys, "lint", "tasks", "--format", "json")
    assert (rc, json.loads(out), err.splitlines()) == (0, [], [SKIPPED])  # the note never enters the json
    assert run(capsys, "lint", "tasks", "-q")[2] == ""
    rc, out, err = run(capsys, "lint", "tasks/registry.py")  # named explicitly: still an error
    assert rc == 2 and err == ""
    assert out.splitlines()[0] == (
        "tasks/registry.py:1:1: error: declares no Task; assign one at module level, e.g. task = Task(...)"
    )


def test_force_exclude_judges_given_files_like_a_folder_scan(project, capsys):
    """What the pre-commit hook runs: every changed .py file is passed explicitly."""
    project("mrt012_verifier_without_kind_clean", "tasks/a.py")
    shutil.copy("_toolcall.py", "tasks/_toolcall.py")
    Path("tasks/registry.py").write_text(REGISTRY)
    project("mrt012_verifier_without_kind", "tests/flawed.py")
    Path("pyproject.toml").write_text('[tool.mrtpo-sdk.lint]\nextend-exclude = ["tests"]\n')
    given = ["tasks/a.py", "tasks/_toolcall.py", "tasks/registry.py", "tests/flawed.py"]
    rc, out, err = run(capsys, "lint", "--force-exclude", *given)
    assert rc == 0 and out.startswith("All checks passed! (1 task in 1 file,")
    assert err.splitlines() == [SKIPPED]
    rc, out, _ = run(capsys, "lint", *given)  # without it, each file given is linted as a task file
    assert rc == 2
    assert [m["path"] for m in finding_lines(out)] == ["tests/flawed.py"]
    assert "tasks/_toolcall.py:1:1: error: declares no Task" in out


def test_lint_reads_the_source_from_stdin(project, capsys, monkeypatch):
    import io

    project("mrt004_invented_feedback")
    source = Path("mrt004_invented_feedback.py").read_text()
    before = sorted(p.name for p in Path(".").iterdir())
    monkeypatch.setattr(sys, "stdin", io.StringIO(source))
    rc, out, _ = run(capsys, "lint", "-", "--stdin-filename", "buffer.py")  # not on disk: the text is linted
    assert rc == 1
    assert [(m["path"], int(m["line"]), int(m["col"]), m["code"]) for m in finding_lines(out)] == [
        ("buffer.py", 17, 5, "MRT004"),
        ("buffer.py", 22, 16, "MRT004"),
    ]
    assert sorted(p.name for p in Path(".").iterdir()) == before  # nothing written next to the user's files
    monkeypatch.setattr(sys, "stdin", io.StringIO(source))
    rc, out, _ = run(capsys, "lint", "--stdin-filename", "buffer.py", "--format", "json")  # implies -
    assert rc == 1 and [d["filename"] for d in json.loads(out)] == [str(Path("buffer.py").resolve())] * 2
    monkeypatch.setattr(sys, "stdin", io.StringIO("from mrtpo_sdk import Task\nimport does_not_exist\ntask = Task()\n"))
    rc, out, _ = run(capsys, "lint", "-", "--format", "json")
    (entry,) = json.loads(out)
    assert rc == 2 and (entry["filename"], entry["location"]["row"]) == ("-", 2)
    assert entry["message"] == (
        "importing the task file raised ModuleNotFoundError: No module named 'does_not_exist'"
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO("X = 1\n"))
    rc, out, _ = run(capsys, "lint", "-")
    assert rc == 2 and out.splitlines()[0] == (
        "-:1:1: error: declares no Task; assign one at module level, e.g. task = Task(...)"
    )
    rc, out, err = run(capsys, "lint", "-", "mrt004_invented_feedback.py")
    assert (rc, out, err) == (2, "", "error: - (read the source from stdin) cannot be combined with other paths\n")


def test_stdin_filename_sees_the_files_next_to_it(capsys, monkeypatch):
    """A bundled task reads its data next to ``__file__``: linted from stdin under its own name, it finds it."""
    import io

    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sys, "stdin", io.StringIO((REPO / "tasks" / "sql.py").read_text()))
    rc, out, _ = run(capsys, "lint", "--stdin-filename", "tasks/sql.py")
    assert rc == 0 and out.startswith("All checks passed! (1 task in 1 file,")


def test_a_task_built_by_a_factory_is_linted_in_a_folder_and_by_the_hook(tmp_path, monkeypatch, capsys):
    (tmp_path / "factory.py").write_text(
        "from mrtpo_sdk import Result, Task, verifier\n\n"
        "@verifier(kind='format')\n"
        "def tagged(example, completion):\n"
        "    ok = completion.startswith('<a>')\n"
        "    return Result(float(ok), '' if ok else 'The answer is written between <a> and </a>.')\n\n"
        "def make_task(name):\n"
        "    return Task(name=name, examples=[{'id': str(i), 'w': w} for i, w in enumerate('abcdefgh')],\n"
        "                prompt=lambda ex: 'Say ' + ex['w'], verifiers=[tagged],\n"
        "                reference=lambda ex: '<a>' + ex['w'] + '</a>')\n"
    )
    (tmp_path / "via_factory.py").write_text("from factory import make_task\n\ntask = make_task('via')\n")
    monkeypatch.chdir(tmp_path)
    from mrtpo_sdk.cli import main

    assert main(["lint", "."]) == 0
    assert "(1 task in 1 file" in capsys.readouterr().out
    assert main(["lint", "--force-exclude", "via_factory.py"]) == 0
    assert "(1 task in 1 file" in capsys.readouterr().out
