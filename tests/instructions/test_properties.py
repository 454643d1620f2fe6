"""Model output is untrusted: no checker raises or hangs on arbitrary text, up to 100 kB."""

from __future__ import annotations

import signal
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from .if_kwargs_examples import EXAMPLE_KWARGS

from mrtpo_sdk.instructions import check, constraint_ids

IDS = constraint_ids()
HANG_S = 30  # a hang, not a speed target: every checker is linear; 100 kB takes well under a few seconds

# pieces that stress the checkers' patterns: runs of blank lines, brackets, stars, dividers, abbreviations
PIECES = ["*", "**", "***", "-", "\n", "\n\n", " ", "\t", "[", "]", "<<", ">>", "\"", "P.S.", "p. p. s", "Section 1",
          "A. ", "Dr. ", "U.S.", "{", "}", "[[", "```json", "```", "******", "İ", "ß", "😀", "\u2028", "\x0b", "1.",
          "ABC", "word ", ",", "!", "?", "..."]  # fmt: skip
chunk = st.one_of(st.sampled_from(PIECES), st.text(max_size=20))
big_text = st.tuples(st.lists(chunk, min_size=1, max_size=6), st.sampled_from([1_000, 30_000, 100_000])).map(
    lambda t: ("".join(t[0]) * (t[1] // max(1, len("".join(t[0]))) + 1))[: t[1]]
)


@contextmanager
def no_hang(seconds: int):
    def fail(signum, frame):
        raise AssertionError(f"checker still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=3000))
def test_every_checker_returns_a_bool_on_arbitrary_text(text: str) -> None:
    for cid in IDS:
        with no_hang(HANG_S):
            assert check(cid, EXAMPLE_KWARGS[cid], text) in (True, False)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=big_text)
def test_no_checker_raises_or_hangs_on_100kb_text(text: str) -> None:
    assert len(text) <= 100_000
    for cid in IDS:
        with no_hang(HANG_S):
            assert check(cid, EXAMPLE_KWARGS[cid], text) in (True, False)


@pytest.mark.parametrize(
    "text",
    [
        " " * 100_000,
        "\n" * 100_000,
        " \n" * 50_000,
        "[" * 100_000,
        "<<" * 50_000,
        "*\n" * 50_000,
        "[" * 50_000 + "]" * 50_000,
        '{"a":' * 20_000,
        "A. " * 33_333,
    ],
    ids=["spaces", "newlines", "blank-lines", "brackets", "angles", "star-lines", "deep-json", "open-json", "initials"],
)
def test_known_worst_cases_for_the_reference_patterns(text: str) -> None:
    # ^\s*\* over blank lines, \[.*?\] over '[', <<[^\n]+>> over '<<' backtrack quadratically in the reference
    for cid in (
        "detectable_format:number_bullet_lists",
        "detectable_content:number_placeholders",
        "detectable_format:title",
        "detectable_format:json_format",
        "detectable_content:postscript",
        "detectable_format:number_highlighted_sections",
        "length_constraints:number_paragraphs",
    ):
        with no_hang(HANG_S):
            assert check(cid, EXAMPLE_KWARGS[cid], text) in (True, False)
