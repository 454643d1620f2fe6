"""`mrtpo-sdk new`: each template, as written, lints clean, passes check and its own test; never overwrites."""

import subprocess
import sys

import pytest

from mrtpo_sdk.authoring.check import run_check
from mrtpo_sdk.authoring.new import TEMPLATES, scaffold
from mrtpo_sdk.cli import main
from mrtpo_sdk.lint.cli import lint_command
from mrtpo_sdk.loader import load_task


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_template_is_lint_clean_and_passes_check(tmp_path, template, capsys):
    written = scaffold("my_task", template, tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in written}
    assert {"my_task.py", "test_my_task.py"} <= names
    assert any(n.startswith("my_task") and not n.endswith(".py") for n in names)  # a data file or folder
    task_file = tmp_path / "my_task.py"
    text = task_file.read_text()
    assert "template_task" not in text and 'name="my_task"' in text
    assert "docs/writing-blocks.md" in text  # points the author at the block rules

    assert lint_command([str(task_file), "--isolated", "--quiet"]) == 0, capsys.readouterr().out

    task = load_task(task_file)
    report = run_check(task, task.load_examples("train"))
    assert report.ok, report.failures
    assert report.examples >= 4
    # corrupted completions lose reward somewhere: an empty completion never earns every reward
    empty_full = [
        all(r >= 1.0 for _, r in v.probes["empty"].rewards) and v.probes["empty"].rewards for v in report.verifiers
    ]
    assert not all(empty_full)


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_generated_test_passes(tmp_path, template):
    scaffold("my_task", template, tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_task.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert " passed" in run.stdout


def test_refuses_to_overwrite(tmp_path, capsys):
    assert main(["new", "my_task", "--dir", str(tmp_path)]) == 0
    before = (tmp_path / "my_task.py").read_text()
    (tmp_path / "my_task.py").write_text(before + "# edited\n")
    assert main(["new", "my_task", "--dir", str(tmp_path), "--template", "sql"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "already exists" in err and err.count("\n") == 1
    assert (tmp_path / "my_task.py").read_text().endswith("# edited\n")  # untouched
    assert not (tmp_path / "my_task_data").exists()  # nothing of the sql template was written


@pytest.mark.parametrize("name", ["My-Task", "1task", "class", "a b"])
def test_bad_names(tmp_path, capsys, name):
    assert main(["new", name, "--dir", str(tmp_path)]) == 2
    assert "lower-case Python identifier" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_unknown_template(tmp_path, capsys):
    assert main(["new", "x", "--template", "nope", "--dir", str(tmp_path)]) == 2
    assert "invalid choice" in capsys.readouterr().err
