"""template_task: short factual answers inside <answer> tags, with two rewards.

Written by `mrtpo-sdk new` from the blank template. Replace the examples, the prompt and the verifiers with your
own; keep one verifier per reward, and let each return ``Result(reward, block)``: the reward, and a short plain
statement of what this verifier knows about this example and this response (the information block). The rules for
writing a block are in docs/writing-blocks.md; `mrtpo-sdk lint template_task.py` checks them, `mrtpo-sdk check
template_task.py` checks that the reference completions earn full reward, and `mrtpo-sdk explain template_task.py`
shows where each reward's credit lands.

Data: template_task.jsonl, one JSON object per line with an "id", a "question" and an "answer" (and optionally a
"split"; lines without one are training examples). `--data FILE.jsonl` reads another file of the same shape.
"""

import json
from pathlib import Path

from mrtpo_sdk import MRTPOError, Result, Task, verifier

DATA = Path(__file__).with_name("template_task.jsonl")
# Block rule 2 and 5: the format block states the concrete format, with the same tags the policy must produce.
FORMAT_RULE = "The answer is one line that opens with <answer> and closes with </answer>."


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
        if not isinstance(row, dict) or not {"id", "question", "answer"} <= row.keys():
            raise MRTPOError(f'{path}:{number}: each line needs "id", "question" and "answer"')
        if row.get("split", "train") == split:
            rows.append(row)
    return rows


def prompt(example):
    # The rollout prompt P_0: the policy samples from this alone; blocks are only seen in the replay.
    return [
        {"role": "system", "content": "You answer questions briefly."},
        {"role": "user", "content": f"{example['question']}\n\nWrite the answer between <answer> and </answer>."},
    ]


def reference(example):
    # A reference completion in exactly the format the policy is asked to produce (block rule 5).
    return f"<answer>{example['answer']}</answer>"


def _inner(completion: str) -> str | None:
    text = completion.strip()
    if text.startswith("<answer>") and text.endswith("</answer>") and text.count("<answer>") == 1:
        return text[len("<answer>") : -len("</answer>")].strip()
    return None


@verifier(kind="format")
def answer_format(example, completion):
    # Block rule 1: one reward, one block. This block is only about the format.
    if _inner(completion) is not None:
        return Result(1.0, FORMAT_RULE)
    return Result(0.0, f"{FORMAT_RULE} This response does not have that form.")


@verifier(kind="reference")
def correct_answer(example, completion):
    # Block rule 2: the information itself, specific to this example: the reference answer, built from its label.
    inner = _inner(completion)
    correct = inner is not None and inner.casefold() == example["answer"].casefold()
    return Result(float(correct), reference(example))


task = Task(
    name="template_task",
    description="Short factual answers in <answer> tags (format, correct answer)",
    examples=examples,
    prompt=prompt,
    verifiers=[answer_format, correct_answer],
    reference=reference,
    eval_split="validation",  # the held-out lines: `mrtpo-sdk eval` and evaluation during training score them
)
