"""Fuzz: no constraint verifier raises, hangs or returns a non-finite reward on generated model output.

Both semantics, strict and loose, through the task's verifiers (echo removal included): huge strings, deep nesting,
many fences and tags, NUL bytes, lone surrogates, long digit runs, runs of ". ", and mutated reference completions.
Bounded to seconds; benchmarks/ifeval_fuzz.py runs the same generator on >= 10,000 completions.
"""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrtpo_sdk.instructions import check, compose_example, constraint_ids, constraint_verifier, reference_for

from .if_kwargs_examples import EXAMPLE_KWARGS

IDS = constraint_ids()
SLOW_S = 50.0  # one check past this is a stall (the slowest checker takes ~1 s on the worst 100 kB input)

PIECES = ["\x00", "\ud800", "\udfff", "```", "```json\n", "<<", ">>", "[", "]", "{", "}", "[[", "{\"a\":", "*", "***",
          "******", "- ", "\n", "\n\n", "\r\n", ". ", "P.S.", "Section 1", "1.", "9" * 50, ",", "\uff0c", "!", "\"",
          "\u201c", "My answer is yes.", "<tag>", "</tag>", "(", ")", "İ", "ß", "😀", "\u2028", "\ufeff",
          " "]  # fmt: skip
chunk = st.one_of(st.sampled_from(PIECES), st.text(max_size=12))
generated = st.one_of(
    st.lists(chunk, max_size=40).map("".join),
    st.tuples(st.lists(chunk, min_size=1, max_size=5), st.sampled_from([2_000, 20_000, 60_000])).map(
        lambda t: ("".join(t[0]) * (t[1] // max(1, len("".join(t[0]))) + 1))[: t[1]]
    ),
    st.integers(1, 3000).map(lambda n: "[" * n + "x" + "]" * n),
    st.integers(1, 3000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.integers(1, 500).map(lambda n: "```json\n{}\n```\n" * n),
)


@pytest.fixture(scope="module")
def examples():
    return [compose_example(f"fz{i}", "Write a note about the river.", [(c, EXAMPLE_KWARGS[c])], topic="river")
            for i, c in enumerate(IDS)]  # fmt: skip


def _assert_bounded_bool(cid: str, text: str, **kw) -> None:
    start = time.perf_counter()
    ok = check(cid, EXAMPLE_KWARGS[cid], text, **kw)
    assert ok in (True, False)
    assert time.perf_counter() - start < SLOW_S, (cid, kw, len(text))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=generated, semantics=st.sampled_from(["training", "official"]), loose=st.booleans())
def test_fuzz_every_checker_returns_a_bool_quickly(text: str, semantics: str, loose: bool) -> None:
    for cid in IDS:
        _assert_bounded_bool(cid, text, semantics=semantics, loose=loose)


def _mutate(text: str, data) -> str:
    for _ in range(data.draw(st.integers(0, 4))):
        i = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["insert", "delete", "duplicate"]))
        if op == "insert":
            text = text[:i] + data.draw(chunk) + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + data.draw(st.integers(1, 20)) :]
        else:
            text = text[:i] * data.draw(st.integers(1, 50)) + text[i:]
    return text


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_fuzz_mutated_references_through_the_verifiers(examples, data) -> None:
    ex = data.draw(st.sampled_from(examples))
    try:
        ref = reference_for(ex)
    except Exception:
        ref = ex.prompt
    completion = _mutate(ref, data)
    for semantics in ("training", "official"):
        result = constraint_verifier(1, semantics=semantics).score(ex, completion)
        assert math.isfinite(result.reward) and result.reward in (0.0, 1.0)


@pytest.mark.parametrize(
    "text",
    [". " * 300_000, "1" * 5_000 + ". item", "\x00" * 50_000, "\ud800" * 50_000, "(" * 100_000, "```" * 30_000,
     "<a>" * 30_000, "ABC DEF. " * 11_000, "\r\n" * 50_000],
    ids=["600kB-dots", "digit-run", "nul", "lone-surrogates", "parens", "fences", "tags", "caps-100kB", "crlf"],
)  # fmt: skip
def test_inputs_that_stall_nltk_or_overflow_int_give_a_bool_in_time(text: str) -> None:
    # on ". " * 300_000 NLTK's Punkt raises TimeoutError after ~10 s (number_sentences, capital_word_frequency), and
    # int() raises ValueError on a 5,000-digit item number (format:numbered_list): every check gives a bool in time
    for cid in IDS:
        for semantics in ("training", "official"):
            _assert_bounded_bool(cid, text, semantics=semantics)
