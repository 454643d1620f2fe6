"""BFCL v4 tool calling: one think block, then one ``<tool_call>`` block per call; three rewards.

* ``tool_format``     — exactly one leading ``<think>`` block, then only well-formed ``<tool_call>`` blocks; the block
  states that format (and this response's flaw);
* ``function_choice`` — the response calls the expected functions (any order), or, for irrelevance, declines: a
  well-formed response with a think block of reasoning and no call; the block is a response naming the right
  functions, calls with names only (``"arguments": {}``), or the think block of a response that calls nothing;
* ``arguments``       — the calls match BFCL's possible answers (names, required parameters, types, acceptable
  values; parallel calls in any order); the block is the reference response (think block + calls) in exactly the
  format the policy must produce. Not applicable to irrelevance questions.

Semantics: ``training`` (default) fixes the official AST checker's known false positives and negatives (documented
defaults, integral floats, numbers inside strings, greedy pairing of parallel calls, no-call answers that do not
decline); ``-T semantics=official`` scores with the official checker's verdicts. ``eval`` reports
``ast_accuracy`` (the rewards' semantics) and ``ast_accuracy_official``. Every difference: docs/bfcl.md.

Data: the installed ``bfcl_eval`` package (``pip install --no-deps bfcl-eval==2026.3.23``), else the subset committed
under ``tasks/data/bfcl``; ``--data PATH`` reads a BFCL data directory. Options select categories, a prompt-length
limit and the semantics, e.g. ``-T categories=live_simple,live_multiple -T max_prompt_chars=0 -T
semantics=official``. Defaults keep the embedded CPU run feasible: every single-turn Python category, prompts of at
most 2,000 characters. ``test`` is the fixed held-out 10% (by id hash). See ``docs/bfcl.md``.
"""

from dataclasses import replace
from pathlib import Path

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.evaluation import bfcl_ast_accuracy
from mrtpo_sdk.semantics import Semantics
from mrtpo_sdk.toolcall import (
    CATEGORIES,
    FORMAT_RULE,
    BFCLDataError,
    ast_correct,
    check_calls,
    function_choice_block,
    installed_data_dir,
    load_bfcl,
    parse_tool_response,
    reference_calls,
    reference_response,
    response_calls,
    rollout_messages,
)
from mrtpo_sdk.toolcall.deciding import argument_spans, format_spans, name_spans

BUNDLED = Path(__file__).parent / "data" / "bfcl"
MAX_PROMPT_CHARS = 2000


def examples(split: str = "train", data: str | None = None, categories: tuple[str, ...] = ("all",),
             max_prompt_chars: int = MAX_PROMPT_CHARS, semantics: Semantics = "training"):
    """The BFCL questions of ``split`` (``train``, ``test``: the fixed held-out 10% by id hash, ``all``): from a BFCL
    data directory (``--data PATH``), else the installed ``bfcl_eval`` package, else the committed subset.

    Args:
        categories: the BFCL categories to read (simple_python, multiple, parallel, parallel_multiple, live_simple,
            live_multiple, live_parallel, live_parallel_multiple, irrelevance, live_irrelevance; simple; all).
        max_prompt_chars: keep the questions whose rollout prompt has at most this many characters (0: all).
        semantics: how the rewards check answers: training fixes the official AST checker's known false verdicts;
            official gives its verdicts (docs/bfcl.md).
    """
    if max_prompt_chars < 0:
        raise BFCLDataError(f"-T max_prompt_chars is a number of characters (0: no limit), got {max_prompt_chars}")
    if data is not None and not Path(data).expanduser().exists() and any(
        item.strip() in (*CATEGORIES, "simple", "all") for item in str(data).split(",")
    ):
        raise BFCLDataError(f"--data {data}: --data is a BFCL data directory; choose categories with -T categories=...")
    directory = Path(data).expanduser() if data is not None else installed_data_dir() or BUNDLED
    chosen = load_bfcl(directory, categories, split)
    return [
        replace(ex, semantics=semantics)
        for ex in chosen
        if (not max_prompt_chars or _prompt_chars(ex) <= max_prompt_chars) and _answerable(ex)
    ]


def prompt(example):
    return rollout_messages(example.messages, example.functions)


def reference(example):
    return reference_response(example.functions, example.possible_answer)


@verifier(kind="format", deciding=lambda example, completion: format_spans(completion))
def tool_format(example, completion):
    parsed = parse_tool_response(completion)
    if parsed.ok:
        return Result(1.0, FORMAT_RULE)
    return Result(0.0, f"{FORMAT_RULE} This response has {parsed.error}.")


@verifier(kind="reference", deciding=lambda example, completion: name_spans(completion))
def function_choice(example, completion):
    if not example.possible_answer:  # irrelevance: the response must decline (training) / call nothing (official)
        chosen = ast_correct(example.functions, example.possible_answer, completion, _semantics(example))
    else:
        calls = response_calls(completion)
        chosen = calls is not None and check_calls(
            example.functions, calls, example.possible_answer, _semantics(example)
        ).functions_correct
    return Result(float(chosen), function_choice_block(example.possible_answer))


@verifier(kind="reference", deciding=lambda example, completion: argument_spans(completion))
def arguments(example, completion):
    if not example.possible_answer:
        return None  # irrelevance: no call is right, so there are no arguments to check
    correct = ast_correct(example.functions, example.possible_answer, completion, _semantics(example))
    return Result(float(correct), reference(example))


def _semantics(example) -> str:
    return getattr(example, "semantics", "training")


def _prompt_chars(example) -> int:
    return sum(len(m["content"]) for m in prompt(example))


def _answerable(example) -> bool:
    # a handful of BFCL questions have possible answers no call can meet (docs/bfcl.md lists them)
    calls = reference_calls(example.functions, example.possible_answer)
    return check_calls(example.functions, calls, example.possible_answer, "official").correct


def official_verdict(example, completion) -> bool:
    """The official BFCL AST checker's verdict on a completion (``ast_accuracy_official`` in ``eval``)."""
    return ast_correct(example.functions, example.possible_answer, completion, "official")


task = Task(
    name="bfcl",
    description="BFCL v4 tool calling (format, function choice, arguments)",
    examples=examples,
    prompt=prompt,
    verifiers=[tool_format, function_choice, arguments],
    reference=reference,
    metrics=bfcl_ast_accuracy(official=official_verdict),
    eval_split="test",
)
