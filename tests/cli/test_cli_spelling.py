"""One flag style for every subcommand: snake_case as TRL spells it; the dashed spelling is accepted with a one-line
deprecation note (silently for lint's ruff names); a typo is one line naming the closest flag."""

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


def test_explain_takes_mrtpo_beta_and_names_it_for_beta(capsys):
    from mrtpo_sdk.authoring.cli import explain_parser

    assert explain_parser().parse_args(["t.py", "--mrtpo_beta", "0.3"]).mrtpo_beta == 0.3
    assert capsys.readouterr().err == ""
    with pytest.raises(UsageError) as info:
        explain_parser().parse_args(["t.py", "--beta", "0.2"])
    assert str(info.value).startswith("unknown option: --beta (did you mean --mrtpo_beta?)")


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
    from mrtpo_sdk.trainer.arguments import snake_case_flags, train_parser

    flags = snake_case_flags(["t.py", "--max-steps", "3", "--mrtpo-beta=0.2", "--seed", "1"], train_parser(MRTPOConfig))
    assert flags == ["t.py", "--max_steps", "3", "--mrtpo_beta=0.2", "--seed", "1"]
    assert capsys.readouterr().err.splitlines() == [
        "note: --max-steps is deprecated; use --max_steps",
        "note: --mrtpo-beta is deprecated; use --mrtpo_beta",
    ]



def test_train_help_says_dashed_spellings_are_deprecated(capsys):
    from mrtpo_sdk.cli import main

    assert main(["train", "--help"]) == 0
    assert ("Flags are spelled with underscores (--max_steps), the canonical form; the dashed spelling (--max-steps) "
            "is accepted but deprecated (a note on stderr).") in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    "message, expected",
    [
        ("argument --max_steps/--max-steps: invalid int value: 'x'", "argument --max_steps: invalid int value: 'x'"),
        ("argument --max-steps/--max_steps: invalid int value: 'x'", "argument --max_steps: invalid int value: 'x'"),
        ("argument -h/--help: ignored explicit argument 'x'", "argument -h/--help: ignored explicit argument 'x'"),
        ("argument --limit: invalid int value: 'x'", "argument --limit: invalid int value: 'x'"),
        ("the following arguments are required: TASK", "the following arguments are required: TASK"),
    ],
)
def test_a_flag_registered_in_both_spellings_is_named_once_in_snake_case(message, expected):
    from mrtpo_sdk._argparse import one_spelling

    assert one_spelling(message) == expected
