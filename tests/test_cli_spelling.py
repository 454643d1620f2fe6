"""One flag style for every subcommand: snake_case as TRL spells it; the dashed spelling is accepted with a one-line
deprecation note (silently for lint's ruff names); a deprecated alias of a flag works with a note; a typo is one line
naming the closest flag."""

from __future__ import annotations

import pytest

from mrtpo_sdk._argparse import UsageError


def test_a_dashed_flag_acts_as_its_snake_case_name_with_a_note(capsys):
    from mrtpo_sdk.evaluation.cli import eval_parser

    args = eval_parser().parse_args(["t.py", "--max-examples", "3", "--output-dir=out"])
    assert (args.max_examples, args.output_dir) == (3, "out")
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "note: --max-examples is deprecated; use --max_examples",
        "note: --output-dir is deprecated; use --output_dir",
    ]


def test_lint_takes_ruff_spellings_silently(capsys):
    from mrtpo_sdk.lint.cli import lint_parser

    args = lint_parser().parse_args(["--extend-select", "MRT004", "--output-format", "json", "--force-exclude"])
    assert (args.extend_select, args.format, args.force_exclude) == (["MRT004"], "json", True)
    args = lint_parser().parse_args(["--extend_select", "MRT004", "--output_format", "json", "--force_exclude"])
    assert (args.extend_select, args.format, args.force_exclude) == (["MRT004"], "json", True)
    assert capsys.readouterr().err == ""


def test_explain_mrtpo_beta_and_its_deprecated_alias_beta(capsys):
    from mrtpo_sdk.authoring.cli import explain_parser

    assert explain_parser().parse_args(["t.py", "--mrtpo_beta", "0.3"]).mrtpo_beta == 0.3
    assert capsys.readouterr().err == ""
    assert explain_parser().parse_args(["t.py", "--beta", "0.2"]).mrtpo_beta == 0.2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("note: --beta is deprecated; use --mrtpo_beta")


def test_a_typo_names_the_snake_case_flag():
    from mrtpo_sdk.evaluation.cli import eval_parser

    with pytest.raises(UsageError, match=r"unknown option: --max_exampels \(did you mean --max_examples\?\)"):
        eval_parser().parse_args(["t.py", "--max_exampels", "3"])


def test_nothing_after_double_dash_is_respelled(capsys):
    from mrtpo_sdk._argparse import ArgumentParser

    p = ArgumentParser(prog="x")
    p.add_argument("--output_dir")
    p.add_argument("rest", nargs="*")
    assert p.parse_args(["--", "--output-dir"]).rest == ["--output-dir"]
    assert capsys.readouterr().err == ""


def test_train_respells_dashed_flags_with_a_note(capsys):
    from mrtpo_sdk.trainer import MRTPOConfig
    from mrtpo_sdk.trainer.cli import _snake_case_flags, _train_parser

    flags = _snake_case_flags(["t.py", "--max-steps", "3", "--mrtpo-beta=0.2", "--seed", "1"], _train_parser(MRTPOConfig))
    assert flags == ["t.py", "--max_steps", "3", "--mrtpo_beta=0.2", "--seed", "1"]
    assert capsys.readouterr().err.splitlines() == [
        "note: --max-steps is deprecated; use --max_steps",
        "note: --mrtpo-beta is deprecated; use --mrtpo_beta",
    ]


def test_a_deprecated_alias_and_its_flag_that_disagree_are_one_line(capsys):
    from mrtpo_sdk.authoring.cli import explain_parser

    with pytest.raises(UsageError) as info:
        explain_parser().parse_args(["t.py", "--beta", "0.3", "--mrtpo_beta", "0.9"])
    assert str(info.value) == "--beta 0.3 and --mrtpo_beta 0.9 disagree: --beta is the old name of --mrtpo_beta; " \
                              "give --mrtpo_beta only"
    with pytest.raises(UsageError, match=r"^--beta 0\.3 and --mrtpo_beta 0\.9 disagree"):
        explain_parser().parse_args(["t.py", "--mrtpo_beta=0.9", "--beta=0.3"])
    capsys.readouterr()
    # the same value under both names: no conflict (0.30 is 0.3), the deprecation note only
    assert explain_parser().parse_args(["t.py", "--beta", "0.30", "--mrtpo_beta", "0.3"]).mrtpo_beta == 0.3
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("note: --beta is deprecated; use --mrtpo_beta")


def test_explain_beta_and_mrtpo_beta_disagreeing_is_one_error_line(capsys):
    from mrtpo_sdk.cli import main

    assert main(["explain", "tasks/sql.py", "--beta", "0.3", "--mrtpo_beta", "0.9"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["error: --beta 0.3 and --mrtpo_beta 0.9 disagree: --beta is the old name of --mrtpo_beta; "
                   "give --mrtpo_beta only"]
