"""template_task: instructions with checkable constraints, one reward and one in-prompt block per constraint.

Written by `mrtpo-sdk new` from the instruction-following template (the setting of the bundled
tasks/instruction_following.py, with three hand-written constraint types to read and extend):

* ``keyword``    — the response uses a given word;
* ``max_words``  — the response has at most N words;
* ``end_phrase`` — the response ends with a given phrase.

Each constraint is one sentence of the prompt. The information is already in the prompt (spec §3), so the task
uses ``block_placement="in-prompt"``: ``P_all`` is the prompt and ``P_\\k`` is the prompt with constraint k's
sentence left out (``prompt_without``). Each verifier's block is its constraint's sentence, exactly as it appears in
the prompt, and it returns ``None`` (not applicable) when the example has no such constraint.

Data: template_task.jsonl, one JSON object per line: "id", "instruction", "constraints" (an object with any of
"keyword", "max_words", "end_phrase") and "reference" (a completion that meets every constraint); "split" is
optional (default "train"). Block rules: docs/writing-blocks.md; checks: `mrtpo-sdk lint`, `mrtpo-sdk check`.
"""

import json
import re
from pathlib import Path

from mrtpo_sdk import MRTPOError, Result, Task, verifier

DATA = Path(__file__).with_name("template_task.jsonl")
KINDS = ("keyword", "max_words", "end_phrase")  # one verifier each, in this order


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
        if not isinstance(row, dict) or not {"id", "instruction", "constraints", "reference"} <= row.keys():
            raise MRTPOError(f'{path}:{number}: each line needs "id", "instruction", "constraints" and "reference"')
        unknown = set(row["constraints"]) - set(KINDS)
        if unknown:
            raise MRTPOError(f"{path}:{number}: unknown constraint {sorted(unknown)}; use {list(KINDS)}")
        if row.get("split", "train") == split:
            rows.append(row)
    return rows


def sentence(kind, value):
    """The prompt sentence of one constraint (also its block: the constraint as the prompt states it)."""
    if kind == "keyword":
        return f"Use the word '{value}' in your response."
    if kind == "max_words":
        return f"Answer in at most {value} words."
    return f'End your response with the exact phrase "{value}"'


def _prompt(example, leave_out=None):
    parts = [example["instruction"]]
    parts += [sentence(k, v) for k, v in example["constraints"].items() if k != leave_out]
    return " ".join(parts)


def prompt(example):
    return _prompt(example)


def prompt_without(example, verifier_name):
    # P_\k: the same prompt with this constraint's sentence left out (block rule 6: consistent with the prompt).
    return _prompt(example, leave_out=verifier_name)


def reference(example):
    return example["reference"]


def _words(text):
    return re.findall(r"[A-Za-z0-9']+", text)


@verifier(kind="constraint")
def keyword(example, completion):
    value = example["constraints"].get("keyword")
    if value is None:
        return None  # not applicable: this example has no keyword constraint
    used = value.casefold() in (w.casefold() for w in _words(completion))
    return Result(float(used), sentence("keyword", value))


@verifier(kind="constraint")
def max_words(example, completion):
    value = example["constraints"].get("max_words")
    if value is None:
        return None
    return Result(float(0 < len(_words(completion)) <= value), sentence("max_words", value))


@verifier(kind="constraint")
def end_phrase(example, completion):
    value = example["constraints"].get("end_phrase")
    if value is None:
        return None
    return Result(float(completion.strip().endswith(value)), sentence("end_phrase", value))


task = Task(
    name="template_task",
    description="Instructions with keyword, length and end-phrase constraints (one reward each)",
    examples=examples,
    prompt=prompt,
    verifiers=[keyword, max_words, end_phrase],
    reference=reference,
    block_placement="in-prompt",
    prompt_without=prompt_without,
    eval_split="validation",  # the held-out lines: `mrtpo-sdk eval` and evaluation during training score them
)
