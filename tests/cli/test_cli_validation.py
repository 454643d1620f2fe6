"""Bad values on the command line are one `error:` line (exit 2) before anything loads: the task, the policy."""

from __future__ import annotations

from pathlib import Path

import pytest

import mrtpo_sdk.loader
from mrtpo_sdk.cli import main

ROOT = Path(__file__).resolve().parents[2]  # the repository
SQL = str(ROOT / "tasks" / "sql.py")


@pytest.fixture
def nothing_loads(monkeypatch):
    """Fail the test if the task (and so the policy) would load."""

    def boom(*args, **kwargs):
        raise AssertionError("the task was loaded before the bad value was reported")

    monkeypatch.setattr(mrtpo_sdk.loader, "load_task", boom)


@pytest.mark.parametrize(
    "args, line",
    [
        (["--temperature", "0"], "error: --temperature must be a finite number > 0, got 0"),
        (["--temperature", "-2"], "error: --temperature must be a finite number > 0, got -2"),
        (["--temperature", "nan"], "error: --temperature must be a finite number > 0, got nan"),
        (["--mrtpo_beta", "1.5"], "error: --mrtpo_beta must be in [0, 1] (as train's), got 1.5"),
    ],
)
def test_explain_bad_sampling_values_are_one_line_before_anything_loads(args, line, nothing_loads, capsys):
    assert main(["explain", SQL, *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [line]
    assert captured.out == ""


@pytest.mark.parametrize(
    "args, line",
    [
        (["--top_p", "5"], "error: --top_p must be in (0, 1] (the probability mass sampled from; 1 = all), got 5"),
        (["--top_p", "0"], "error: --top_p must be in (0, 1] (the probability mass sampled from; 1 = all), got 0"),
        (["--top_p", "-0.5"], "error: --top_p must be in (0, 1] (the probability mass sampled from; 1 = all), "
                              "got -0.5"),
        (["--temperature", "0"], "error: --temperature must be > 0, got 0.0"),
    ],
)
def test_eval_bad_sampling_values_are_one_line_before_anything_loads(args, line, nothing_loads, capsys):
    assert main(["eval", SQL, *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [line]
    assert captured.out == ""
