"""Every rule has a fixture task file that triggers exactly that rule (expected findings marked `# expect: CODE`
on their lines) and a clean counterpart; the linter's findings must match the marks exactly.

The replay rules' fixtures (``fixtures/replay/``) need a policy: ``tests/lint/test_replay.py`` runs them with
``--replay``; here, without it, they must give no replay finding."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from mrtpo_sdk.lint import CODES, lint_paths
from mrtpo_sdk.lint.replay import REPLAY_CODES

FIXTURES = Path(__file__).parent / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*(MRT\d{3}(?:\s*,\s*MRT\d{3})*)")
FILES = sorted(p for p in FIXTURES.glob("mrt*.py"))
REPLAY_FILES = sorted(p for p in (FIXTURES / "replay").glob("mrt*.py"))


def expected(path: Path) -> Counter:
    marks: Counter = Counter()
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        m = _EXPECT.search(line)
        if m:
            for code in m.group(1).split(","):
                marks[(lineno, code.strip())] += 1
    return marks


def found(path: Path) -> Counter:
    report = lint_paths([path], isolated=True)
    assert not report.errors, [f.message for f in report.errors]
    return Counter((f.line, f.code) for f in report.findings)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_fixture_findings_match_marks(path):
    assert found(path) == expected(path)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_fixture_triggers_only_its_rule(path):
    code = "MRT" + path.stem[3:6]
    marks = expected(path)
    if path.stem.endswith("_clean"):
        assert not marks
    else:
        assert marks, f"{path.name} marks no expected finding"
        assert {c for _, c in marks} == {code}


@pytest.mark.parametrize("code", list(CODES))
def test_every_rule_has_a_trigger_and_a_clean_fixture(code):
    module = CODES[code]
    folder = FIXTURES / "replay" if code in REPLAY_CODES else FIXTURES
    assert (folder / f"{module}.py").is_file()
    assert (folder / f"{module}_clean.py").is_file()


@pytest.mark.parametrize("path", REPLAY_FILES, ids=[p.stem for p in REPLAY_FILES])
def test_replay_fixture_gives_no_replay_finding_without_replay(path):
    marks = expected(path)
    assert {c for _, c in marks} <= REPLAY_CODES and (marks or path.stem.endswith("_clean"))
    report = lint_paths([path], isolated=True)
    assert not report.errors, [f.message for f in report.errors]
    assert [f.code for f in report.findings if f.code in REPLAY_CODES | {"MRT013"}] == []


def test_every_fixture_names_a_rule_module():
    stems = {p.stem for p in FILES + REPLAY_FILES}
    for stem in stems:
        base = stem.removesuffix("_clean").removesuffix("_in_prompt").split("__")[0]  # variants: module__what.py
        assert base in CODES.values(), stem
