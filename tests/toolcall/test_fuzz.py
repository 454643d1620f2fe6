"""Fuzz the tool-calling verifiers with hostile model output: no raise, no hang, finite rewards.

Hypothesis draws a bundled question, a kind of hostile completion and a seed for the generators of
``tests/toolcall/fuzz_inputs.py`` (huge texts and strings, deep JSON, thousands of tags, NUL bytes, lone surrogates,
mutated references, huge numbers, tag soup, random Unicode); every verifier and the official verdict must return a
finite reward in [0, 1] within a second. The ≥10,000-completion run is ``python benchmarks/bfcl_fuzz.py``.
"""

import time
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import fuzz_inputs as FUZZ
from .adversarial_search import load_examples


TASK, EXAMPLES = load_examples()
OFFICIAL = [replace(e, semantics="official") for e in EXAMPLES[::7]]
LIMIT_S = 10.0  # one scoring past this is a stall, not a slow moment of a loaded machine
FUZZ_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _official_verdict(example, completion):
    from mrtpo_sdk.toolcall import ast_correct

    return ast_correct(example.functions, example.possible_answer, completion, "official")


def _check(example, text):
    t0 = time.perf_counter()
    bad = FUZZ.score_one(TASK, example, text, _official_verdict)
    elapsed = time.perf_counter() - t0
    assert bad == "", (example.id, bad, text[:200])
    assert elapsed < LIMIT_S, (example.id, elapsed, text[:200])


@FUZZ_SETTINGS
@given(st.sampled_from(EXAMPLES), st.sampled_from(FUZZ.KINDS), st.randoms(use_true_random=False))
def test_hostile_completions_never_raise_hang_or_give_non_finite_rewards(example, kind, rng):
    _check(example, FUZZ.hostile(rng, TASK, example, kind))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(OFFICIAL), st.sampled_from(FUZZ.KINDS), st.randoms(use_true_random=False))
def test_official_semantics_on_hostile_completions(example, kind, rng):
    _check(example, FUZZ.hostile(rng, TASK, example, kind))


SURROGATES = st.sampled_from(["\ud800", "\udfff", "\x00", "\ufeff", "\u2028", "<tool_call>", "</tool_call>", "<think>",
                              "</think>", '{"name": "f", "arguments": {', "}", "]", "["])


@FUZZ_SETTINGS
@given(st.sampled_from(EXAMPLES), st.lists(st.text(max_size=20) | SURROGATES, max_size=80).map("".join))
def test_arbitrary_text_with_surrogates_and_nul_bytes(example, text):
    _check(example, text)


def test_every_kind_is_generated_and_the_worst_cases_are_bounded():
    import random

    rng = random.Random(0)
    worst = {"huge_text": 150_000, "deep_json": 40_000, "many_tags": 3000, "many_open_tags": 8000}
    for kind in FUZZ.KINDS:
        text = FUZZ.hostile(rng, TASK, EXAMPLES[0], kind)
        assert isinstance(text, str)
    e = next(e for e in EXAMPLES if e.id == "simple_python_0")
    ref = TASK.reference_completion(e).split("</think>")[1].strip()
    for text in ("x" * worst["huge_text"], "<think>x</think>" + '{"a": ' * worst["deep_json"],
                 "<think>x</think>\n" + "\n".join([ref] * worst["many_tags"]),
                 "<think>x</think>" + "<tool_call>\n{" * worst["many_open_tags"], "\ud800" * 99_000):
        _check(e, text)
