"""template_task: function calling, one <think> block then one <tool_call> block per call; three rewards.

Written by `mrtpo-sdk new` from the tool-calling template (the format of the bundled BFCL task, tasks/bfcl.py):

* ``tool_format``     — one leading <think> block, then only well-formed <tool_call> blocks; the block states that
  format (and this response's flaw);
* ``function_choice`` — the response calls the expected functions (any order), or, when the right answer is no call
  (``"possible_answer": []``), declines in the format (a think block of reasoning, no call); the block is a
  response naming the right functions, with empty arguments;
* ``arguments``       — the calls match the possible answers (names, required parameters, types, acceptable
  values; documented defaults count as left out, ``5.0`` is an integer — the ``training`` semantics of
  ``check_calls``, see docs/bfcl.md); the block is the reference response in exactly the format the policy must
  produce.

Data: template_task.jsonl, one JSON object per line: "id", "question", "functions" (BFCL function docs) and
"possible_answer" (BFCL form: a list of {function: {parameter: [acceptable values]}}, "" marks an optional
parameter that may be left out); "split" is optional (default "train"). Model output is untrusted: it is parsed as
JSON, never executed. Block rules: docs/writing-blocks.md; checks: `mrtpo-sdk lint`, `mrtpo-sdk check`.
"""

import json
from pathlib import Path

from mrtpo_sdk import MRTPOError, Result, Task, verifier
from mrtpo_sdk.toolcall import (
    FORMAT_RULE,
    ast_correct,
    check_calls,
    function_choice_block,
    parse_tool_response,
    reference_response,
    response_calls,
    rollout_messages,
)

DATA = Path(__file__).with_name("template_task.jsonl")
FIELDS = {"id", "question", "functions", "possible_answer"}


def examples(split: str = "train", data: str | None = None):
    path = Path(data) if data else DATA
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MRTPOError(f"{path}:{number}: not valid JSON ({exc.msg}); fix that line") from None
        if not isinstance(row, dict) or not FIELDS <= row.keys():
            raise MRTPOError(f"{path}:{number}: each line needs {sorted(FIELDS)}")
        if row.get("split", "train") == split:
            rows.append(row)
    return rows


def prompt(example):
    # The rollout prompt P_0: the function docs and the output format, then the question.
    return rollout_messages([{"role": "user", "content": example["question"]}], example["functions"])


def reference(example):
    return reference_response(example["functions"], example["possible_answer"])


@verifier(kind="format")
def tool_format(example, completion):
    parsed = parse_tool_response(completion)
    if parsed.ok:
        return Result(1.0, FORMAT_RULE)
    return Result(0.0, f"{FORMAT_RULE} This response has {parsed.error}.")


@verifier(kind="reference")
def function_choice(example, completion):
    # Block rule 1: only what this reward checks (which functions), not the arguments too.
    if not example["possible_answer"]:  # no call is right: only a well-formed, reasoned decline earns 1
        chosen = ast_correct(example["functions"], [], completion)
    else:
        calls = response_calls(completion)
        chosen = (
            calls is not None
            and check_calls(example["functions"], calls, example["possible_answer"]).functions_correct
        )
    return Result(float(chosen), function_choice_block(example["possible_answer"]))


@verifier(kind="reference")
def arguments(example, completion):
    # Block rule 5: the reference in the policy's format: same tags, JSON argument types as the docs declare.
    # ast_correct: the calls match; for a no-call answer, a well-formed decline (never empty or junk text)
    correct = ast_correct(example["functions"], example["possible_answer"], completion)
    return Result(float(correct), reference(example))


task = Task(
    name="template_task",
    description="Function calling in <tool_call> blocks (format, function choice, arguments)",
    examples=examples,
    prompt=prompt,
    verifiers=[tool_format, function_choice, arguments],
    reference=reference,
    eval_split="validation",  # the held-out lines: `mrtpo-sdk eval` and evaluation during training score them
)
