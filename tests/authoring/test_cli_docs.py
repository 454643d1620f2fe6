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
