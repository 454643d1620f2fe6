"""``Verifier(deciding=...)``: the character spans that decide a reward; ``locate`` sorts and merges them and turns
every failure of the user's function into one DecidingError line."""

import time

import pytest

from mrtpo_sdk import Result, Verifier, verifier
from mrtpo_sdk.errors import DecidingError, MRTPOError, VerifierError
from mrtpo_sdk.verifier import normalize_spans


def _score(example, completion):
    return Result(1.0, "block")


def test_the_decorator_and_the_class_take_a_deciding_function():
    def spans(example, completion):
        return [(4, 6), (0, 2), (1, 3), (6, 6)]

    @verifier(kind="reference", deciding=spans)
    def decorated(example, completion):
        return Result(1.0, "b")

    plain = Verifier(_score, deciding=spans)
    for v in (decorated, plain):
        assert v.deciding is spans
        # sorted, (0, 2) and (1, 3) merged, (4, 6) apart, the empty (6, 6) dropped
        assert v.locate({}, "abcdefgh") == [(0, 3), (4, 6)]
    assert Verifier(_score).deciding is None and Verifier(_score).locate({}, "abc") is None


@pytest.mark.parametrize("out", [None, [], (), [(2, 2)]])
def test_nothing_located_is_none(out):
    assert Verifier(_score, deciding=lambda e, c: out).locate({}, "abc") is None


def test_touching_spans_merge_and_numpy_ints_are_ints():
    np = pytest.importorskip("numpy")
    v = Verifier(_score, deciding=lambda e, c: [(np.int64(0), np.int64(2)), (2, 3)])
    assert v.locate({}, "abcd") == [(0, 3)]


def test_a_deciding_function_that_is_not_callable_is_refused():
    with pytest.raises(TypeError, match="deciding must be a function"):
        Verifier(_score, name="v", deciding=[(0, 1)])


def test_a_deciding_function_that_raises_is_one_line_naming_the_verifier():
    def broken(example, completion):
        return [(0, completion.index("zzz"))]

    v = Verifier(_score, name="match", deciding=broken)
    with pytest.raises(DecidingError) as info:
        v.locate({}, "abc", task="sql", example_id="train-0003")
    err = info.value
    msg = str(err)
    assert "\n" not in msg
    assert msg.startswith("task 'sql', verifier 'match', example 'train-0003': its deciding function raised ValueError")
    assert f"test_verifier_deciding.py:{broken.__code__.co_firstlineno + 1}" in msg  # the line that raised
    assert err.raised_at.endswith(f"test_verifier_deciding.py:{broken.__code__.co_firstlineno + 1}")
    assert isinstance(err, VerifierError) and isinstance(err, MRTPOError)
    assert (err.verifier, err.example_id, err.completion) == ("match", "train-0003", "abc")


@pytest.mark.parametrize(
    ("out", "says"),
    [
        ("0,1", "returned str"),
        (5, "returned int"),
        ([(0, 1, 2)], "a span is a pair of ints"),
        ([(0.0, 1.0)], "a span is a pair of ints"),
        ([(True, 2)], "a span is a pair of ints"),
        ([(0, 4)], "outside the completion's 3 characters"),
        ([(-1, 2)], "outside the completion's 3 characters"),
        ([(2, 1)], "outside the completion's 3 characters"),
    ],
)
def test_a_deciding_function_returning_no_spans_is_a_clear_error(out, says):
    v = Verifier(_score, name="fmt", deciding=lambda e, c: out)
    with pytest.raises(DecidingError, match=says) as info:
        v.locate({}, "abc", task="t", example_id="e1")
    assert str(info.value).startswith("task 't', verifier 'fmt', example 'e1': its deciding function returned")


def test_a_hanging_deciding_function_stops_at_the_time_limit():
    def hang(example, completion):
        while True:
            time.sleep(0.01)

    v = Verifier(_score, name="slow", deciding=hang, time_limit=0.2)
    start = time.monotonic()
    with pytest.raises(DecidingError, match=r"ran past the 0.2 s time limit on a completion of 3 characters"):
        v.locate({}, "abc")
    assert time.monotonic() - start < 2


def test_normalize_spans():
    assert normalize_spans([(3, 5), (0, 1), (4, 9)], 9) == [(0, 1), (3, 9)]
    assert normalize_spans([[0, 0]], 0) is None
    assert normalize_spans(None, 3) is None
    with pytest.raises(ValueError, match="outside"):
        normalize_spans([(0, 1)], 0)
