"""`.pre-commit-hooks.yaml`: the hook a project adds with `repo: https://github.com/mrtpo-sdk/mrtpo-sdk`, checked
against pre-commit's manifest fields (pre_commit.clientlib.MANIFEST_HOOK_DICT, pre-commit 4.x), and its entry run
the way pre-commit runs it (the changed files as arguments)."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from mrtpo_sdk.cli import main
from mrtpo_sdk.lint.cli import lint_parser

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / ".pre-commit-hooks.yaml"

REQUIRED = {"id", "name", "entry", "language"}
OPTIONAL = {
    "alias", "files", "exclude", "types", "types_or", "exclude_types", "additional_dependencies", "args",
    "always_run", "fail_fast", "pass_filenames", "description", "language_version", "log_file",
    "minimum_pre_commit_version", "require_serial", "stages", "verbose",
}  # fmt: skip
LANGUAGES = {
    "conda", "coursier", "dart", "docker", "docker_image", "dotnet", "fail", "golang", "haskell", "julia", "lua",
    "node", "perl", "pygrep", "python", "r", "ruby", "rust", "script", "swift", "system", "unsupported",
    "unsupported_script",
}  # fmt: skip


def hooks() -> list[dict]:
    data = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def test_manifest_has_the_mrtpo_lint_hook_with_pre_commits_fields():
    (hook,) = hooks()
    assert REQUIRED <= set(hook) and set(hook) <= REQUIRED | OPTIONAL, set(hook) - REQUIRED - OPTIONAL
    assert hook["id"] == "mrtpo-lint"
    assert hook["name"] == "mrtpo-sdk lint"
    assert hook["entry"] == "mrtpo-sdk lint --force-exclude"
    assert hook["language"] == "python" and hook["language"] in LANGUAGES
    assert hook["types_or"] == ["python", "pyi"]
    files = re.compile(hook["files"])
    assert files.search("tasks/sql.py") and files.search("my_task.py") and not files.search("README.md")
    assert all(isinstance(hook.get(k, False), bool) for k in ("require_serial", "pass_filenames", "always_run"))


def test_entry_is_the_packages_console_script_and_its_flags_parse():
    (hook,) = hooks()
    program, command, *flags = shlex.split(hook["entry"])
    assert program in _scripts() and command == "lint"
    args = lint_parser().parse_args([*flags, "tasks/sql.py"])  # pre-commit appends the file names
    assert (args.force_exclude, args.paths) == (True, ["tasks/sql.py"])


def _scripts() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]


def test_the_hook_passes_on_this_repository_as_pre_commit_runs_it(capsys, monkeypatch):
    """pre-commit passes the changed files that match `files`/`types_or`: task files, helpers, and (here) test
    fixtures that the repository's [tool.mrtpo-sdk.lint] excludes."""
    (hook,) = hooks()
    monkeypatch.chdir(REPO)
    changed = [
        "tasks/sql.py",
        "tasks/bfcl.py",
        "mrtpo_sdk/lint/runner.py",  # no Task in it: skipped without being imported
        "tests/lint/fixtures/mrt004_invented_feedback.py",  # flawed on purpose, excluded by the config
    ]
    argv = shlex.split(hook["entry"])[1:] + [f for f in changed if re.search(hook["files"], f)]
    rc = main(argv)
    out, err = capsys.readouterr()
    assert (rc, err) == (0, "")
    assert out.startswith("All checks passed! (2 tasks in 2 files,")


def test_manifest_is_valid_for_pre_commit_itself():
    clientlib = pytest.importorskip("pre_commit.clientlib", reason="pre-commit is not installed")
    from cfgv import load_from_filename

    loaded = load_from_filename(str(MANIFEST), clientlib.MANIFEST_SCHEMA, yaml.safe_load, clientlib.InvalidManifestError)
    assert [h["id"] for h in loaded] == ["mrtpo-lint"]
