"""Instruction following with verifiable constraints: one reward and one in-prompt block per constraint.

Each prompt is a base instruction plus 1-4 constraint sentences (IFEval's 25 types in train/validation; 12 held-out
IFBench-style types in the ``unseen`` split). Verifier ``constraint_j`` scores the example's j-th constraint with the
``training`` semantics (strict; each checker agrees with its prompt sentence, copies of the prompt earn nothing) and
returns ``None`` when the example has fewer than j constraints; ``ifeval_accuracy`` also reports IFEval's own
(``official``) verdicts, strict and loose. The
information is already in the prompt (spec §3): ``P_all = P_0`` and ``P_\\k`` is the prompt with constraint k's
sentence left out. The prompt is one user message, so that a chat model (and the embedded policy) reads it through
its chat template.

Data: ``tasks/data/instruction_following/{train,validation,unseen}.jsonl`` (made by ``make_data.py`` there);
``--data FILE.jsonl`` reads the IFEval / RLVR-IF format (``prompt``, ``instruction_id_list``, ``kwargs``) and locates
each constraint's sentence in the prompt. Such a file has no splits of its own: 10% of its rows (by a hash of each
id; ``-T validation_percent=N``) form its ``validation`` split, the others ``train``, and ``--split all`` reads every
row (e.g. ``eval --data ifeval.jsonl --split all`` scores all of IFEval). See ``docs/instruction_following.md``.
"""

import sys
from pathlib import Path

from mrtpo_sdk import MRTPOError, Task
from mrtpo_sdk.evaluation import ifeval_accuracy
from mrtpo_sdk.instructions import (
    constraint_verifiers,
    load_examples_jsonl,
    load_ifeval_jsonl,
    prompt_without,
    reference_for,
    split_file_examples,
)

DATA = Path(__file__).parent / "data" / "instruction_following"
SPLITS = ("train", "validation", "unseen")
FILE_VALIDATION_PERCENT = 10  # the share of a --data file held out as its validation split
MAX_CONSTRAINTS = 4


def examples(split: str = "train", data: str | None = None, validation_percent: int | None = None):
    """The examples of ``split``: the bundled ``train``, ``validation`` and ``unseen`` files, or, with ``--data
    FILE.jsonl`` (IFEval / RLVR-IF format), that file split by id: ``train``, ``validation`` (the held-out share)
    and ``all``.

    Args:
        validation_percent: with --data FILE: the percent of the file's rows held out as the validation split,
            chosen by a hash of each row's id (none: 10; 0: no validation split, every row trains).
    """
    if data is not None:
        loaded, report = load_ifeval_jsonl(data)
        if report.unlocated:
            print(f"warning: {report.summary()}; those constraints get uniform token weights", file=sys.stderr)
        percent = FILE_VALIDATION_PERCENT if validation_percent is None else validation_percent
        return split_file_examples(loaded, split, percent, source=str(data))
    if validation_percent is not None:
        raise MRTPOError(
            "-T validation_percent splits a --data file; the bundled data has its own splits "
            f"({', '.join(SPLITS)}): drop it, or pass --data FILE.jsonl"
        )
    if split not in SPLITS:
        raise MRTPOError(f"unknown split {split!r}; the bundled splits: {', '.join(SPLITS)}")
    return load_examples_jsonl(DATA / f"{split}.jsonl")


def prompt(example):
    return [{"role": "user", "content": example.prompt}]


def prompt_without_constraint(example, verifier_name):
    """``P_\\k``: the prompt (one user message) without the sentence of constraint slot ``verifier_name``."""
    return [{"role": "user", "content": prompt_without(example, verifier_name)}]


def reference(example):
    return reference_for(example)


task = Task(
    name="instruction_following",
    description="Instruction following: IFEval-semantics constraints, one reward and one in-prompt block each",
    examples=examples,
    prompt=prompt,
    verifiers=constraint_verifiers(MAX_CONSTRAINTS),
    reference=reference,
    block_placement="in-prompt",
    prompt_without=prompt_without_constraint,
    metrics=ifeval_accuracy(),
    eval_split="validation",
)
