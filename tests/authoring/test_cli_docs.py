"""docs/cli.md is generated from the parsers; this fails when a parser changed and the page was not regenerated."""

from pathlib import Path

from mrtpo_sdk.authoring.docs import cli_markdown

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_cli_reference_in_sync():
    assert PAGE.read_text(encoding="utf-8") == cli_markdown(), (
        "docs/cli.md is stale: run `python -m mrtpo_sdk.authoring.docs`"
    )


def test_cli_reference_lists_every_command_and_flag():
    text = cli_markdown()
    for command in ("new", "lint", "rule", "check", "explain", "train"):
        assert f"## `mrtpo-sdk {command}`" in text
    for flag in ("--template", "--completion", "--policy_preset", "--mrtpo_beta", "--max_steps", "--select"):
        assert f"`{flag}`" in text


def test_every_bundled_task_name_is_listed_in_lint_help_and_the_docs(capsys):
    from mrtpo_sdk.cli import main
    from mrtpo_sdk.resources import BUNDLED_TASKS

    assert main(["lint", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
    names = ", ".join(BUNDLED_TASKS)
    assert f"bundled task names ({names})" in help_text
    assert f"bundled task names ({names})" in cli_markdown()
    index = (PAGE.parent / "index.md").read_text(encoding="utf-8")
    row = next(line for line in index.splitlines() if line.startswith("| [bundled-tasks.md]"))
    assert all(f"`{name}`" in row for name in BUNDLED_TASKS), row
