"""Rule docstrings have the fixed sections, and docs/rules/ is generated from them (kept in sync)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mrtpo_sdk.lint import CODES, all_rules, get_rule
from mrtpo_sdk.lint.codes import REMOVED
from mrtpo_sdk.lint.docs import DEFAULT_DIR, main, pages, stale

SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead", "## References"]


def test_docs_rules_folder_is_in_sync_with_the_docstrings():
    assert DEFAULT_DIR == Path(__file__).resolve().parents[2] / "docs" / "rules"
    assert stale() == [], "run: python -m mrtpo_sdk.lint.docs"
    assert main(["--check"]) == 0


def test_check_detects_a_stale_page(tmp_path):
    for name, text in pages().items():
        (tmp_path / name).write_text(text)
    assert stale(tmp_path) == []
    (tmp_path / "MRT003.md").write_text("old text\n")
    assert stale(tmp_path) == ["MRT003.md"]
    assert main([str(tmp_path), "--check"]) == 1


@pytest.mark.parametrize("code", list(CODES))
def test_rule_docstring_has_the_sections_in_order(code):
    doc = get_rule(code).__doc__
    positions = [doc.find(s) for s in SECTIONS]
    assert all(p >= 0 for p in positions), [s for s, p in zip(SECTIONS, positions) if p < 0]
    assert positions == sorted(positions)
    refs = doc[positions[-1] :]
    assert re.search(r"^\s*- \S", refs, re.M), "References lists at least one source"
    if code <= "MRT008":  # the block-writing rules cite the rule as users can read it (in the repo, not a spec file)
        assert "docs/writing-blocks.md" in refs
        assert "spec/MRTPO.md" not in refs


def test_rule_examples_come_from_the_papers_tasks():
    text = "\n".join(r.__doc__ for r in all_rules())
    for task_word in ("sql", "tool_call", "constraint"):
        assert task_word in text


def test_codes_are_unique_stable_and_named():
    rules = all_rules()
    assert [r.code for r in rules] == sorted(CODES)
    assert all(re.fullmatch(r"MRT\d{3}", r.code) for r in rules)
    assert len({r.name for r in rules}) == len(rules)
    assert all(re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", r.name) for r in rules)
    assert not set(REMOVED) & set(CODES)
    for code, module in CODES.items():
        assert module.startswith(code.lower() + "_") and module.endswith(get_rule(code).name.replace("-", "_"))
