"""The verifier contract: one finite reward and one block, None = not applicable, errors surfaced."""

import math

import pytest

from mrtpo_sdk import Result, Verifier, VerifierContractError, VerifierError, verifier


def test_decorator_bare_and_with_arguments():
    @verifier
    def plain(example, completion):
        return Result(1.0, "b")

    @verifier(kind="format", weight=0.0, name="fmt")
    def other(example, completion):
        return Result(0.5, "")

    assert isinstance(plain, Verifier) and plain.name == "plain" and plain.weight == 1.0 and plain.kind is None
    assert other.name == "fmt" and other.weight == 0.0 and other.kind == "format"
    assert plain.source_line is not None and plain.source_file.endswith("test_verifier.py")


@pytest.mark.parametrize(
    "returned, expected",
    [
        (Result(1.0, "block"), Result(1.0, "block")),
        ((0.25, "why"), Result(0.25, "why")),
        ((1, ""), Result(1.0, "")),
        (Result(True, "x"), Result(1.0, "x")),
        (None, None),
    ],
)
def test_valid_returns_are_normalized(returned, expected):
    v = Verifier(lambda ex, c: returned, name="v")
    got = v.score({"id": 1}, "text", task="t", example_id="1")
    assert got == expected
    if got is not None:
        assert type(got.reward) is float


@pytest.mark.parametrize(
    "returned, fragment",
    [
        ([1.0, 0.0], "list of 2 values"),
        ((1.0, 0.0, "b"), "tuple of 3 values"),
        ((1.0, 2.0), "tuple of 2 values"),
        ((Result(1.0, "a"), Result(0.0, "b")), "tuple of 2 values"),
        (Result(float("nan"), ""), "must be finite"),
        (Result(float("inf"), ""), "must be finite"),
        (Result("1.0", ""), "must be one float"),
        (Result(1.0, ["a", "b"]), "block is list"),
        (Result(1.0, None), "block is NoneType"),
        (0.5, "returned float"),
    ],
)
def test_contract_violations_name_task_verifier_example(returned, fragment):
    v = Verifier(lambda ex, c: returned, name="bad")
    with pytest.raises(VerifierContractError) as info:
        v.score({"id": 7}, "text", task="sql", example_id="train-0007")
    msg = str(info.value)
    assert fragment in msg
    assert "'sql'" in msg and "'bad'" in msg and "'train-0007'" in msg
    assert "\n" not in msg
    assert info.value.verifier == "bad" and info.value.example_id == "train-0007"


def test_user_errors_raised_inside_a_verifier_pass_through_unchanged():
    from mrtpo_sdk import MRTPOError

    def data_problem(example, completion):
        raise MRTPOError("data/train.json: example 3's reference query fails; fix the query")

    with pytest.raises(MRTPOError) as info:
        Verifier(data_problem).score({}, "x", task="sql", example_id="e3")
    assert not isinstance(info.value, VerifierError)
    assert str(info.value) == "data/train.json: example 3's reference query fails; fix the query"


def test_raising_verifier_is_an_error_not_zero():
    def boom(example, completion):
        raise KeyError("db_path")

    v = Verifier(boom)
    with pytest.raises(VerifierError) as info:
        v.score({}, "x", task="sql", example_id="e1")
    assert "raised KeyError" in str(info.value) and "'boom'" in str(info.value) and "'e1'" in str(info.value)
    assert isinstance(info.value.__cause__, KeyError)


@pytest.mark.parametrize("weight", [-1.0, math.nan, math.inf])
def test_bad_weight(weight):
    with pytest.raises(ValueError, match="weight"):
        Verifier(lambda e, c: None, name="w", weight=weight)


def test_bad_kind_and_name():
    with pytest.raises(ValueError, match="kind"):
        Verifier(lambda e, c: None, name="k", kind="rubric")
    with pytest.raises(ValueError, match="identifier"):
        Verifier(lambda e, c: None, name="has space")
    with pytest.raises(TypeError):
        Verifier("not callable")
