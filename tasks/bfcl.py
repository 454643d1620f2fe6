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
decline); ``--data semantics=official`` scores with the official checker's verdicts. ``eval`` reports
``ast_accuracy`` (the rewards' semantics) and ``ast_accuracy_official``. Every difference: docs/bfcl.md.

Data: the installed ``bfcl_eval`` package (``pip install --no-deps bfcl-eval==2026.3.23``), else the subset committed
under ``tasks/data/bfcl``. ``--data`` selects categories, a prompt-length limit, the semantics and/or a data
directory, e.g. ``--data live_simple,live_multiple,max_prompt_chars=0,semantics=official``. Defaults keep the
embedded CPU run feasible: every single-turn Python category, prompts of at most 2,000 characters. ``test`` is the
fixed held-out 10% (by id hash). See ``docs/bfcl.md``.
"""

from dataclasses import replace
from pathlib import Path

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.evaluation import bfcl_ast_accuracy
from mrtpo_sdk.toolcall import (
    CATEGORIES,
    FORMAT_RULE,
    ast_correct,
    check_calls,
    function_choice_block,
    installed_data_dir,
    load_bfcl,
    parse_data_option,
    parse_tool_response,
    reference_calls,
    reference_response,
    response_calls,
    rollout_messages,
)

BUNDLED = Path(__file__).parent / "data" / "bfcl"
MAX_PROMPT_CHARS = 2000


def examples(split: str = "train", data: str | None = None):
    option = parse_data_option(data)
    directory = option.directory or installed_data_dir() or BUNDLED
    limit = MAX_PROMPT_CHARS if option.max_prompt_chars is None else option.max_prompt_chars
    chosen = load_bfcl(directory, option.categories or CATEGORIES, split)
    semantics = option.semantics or "training"
    return [
        replace(ex, semantics=semantics)
        for ex in chosen
        if (not limit or _prompt_chars(ex) <= limit) and _answerable(ex)
    ]


def prompt(example):
    return rollout_messages(example.messages, example.functions)


def reference(example):
    return reference_response(example.functions, example.possible_answer)


@verifier(kind="format")
def tool_format(example, completion):
    parsed = parse_tool_response(completion)
    if parsed.ok:
        return Result(1.0, FORMAT_RULE)
    return Result(0.0, f"{FORMAT_RULE} This response has {parsed.error}.")


@verifier(kind="reference")
def function_choice(example, completion):
    if not example.possible_answer:  # irrelevance: the response must decline (training) / call nothing (official)
        chosen = ast_correct(example.functions, example.possible_answer, completion, _semantics(example))
    else:
        calls = response_calls(completion)
        chosen = calls is not None and check_calls(
            example.functions, calls, example.possible_answer, _semantics(example)
        ).functions_correct
    return Result(float(chosen), function_choice_block(example.possible_answer))


@verifier(kind="reference")
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
