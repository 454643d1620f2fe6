"""Verifiable instruction constraints: IFEval's 25 types, 12 held-out IFBench-style types, prompts, data, verifiers.

* :func:`check` / :func:`describe` — a constraint's checker (pure function of kwargs and response; ``semantics=
  "training"`` by default, ``"official"`` for IFEval's verdicts; ``loose=True`` for IFEval's loose mode) and the
  sentence the prompt carries; :func:`constraint_ids`, :func:`get_constraint` — the registry, keyed by IFEval
  instruction ids (``"keywords:existence"``, ``"length_constraints:number_words"``, ...). Unknown ids raise
  :class:`UnknownConstraintError`.
* :class:`Constraint`, :class:`IFExample` and :func:`compose_prompt` — an example is a base instruction plus 1-4
  constraint sentences; leaving sentence k out gives ``P_\\k`` (spec §3, in-prompt blocks).
* :func:`load_ifeval_jsonl` — the IFEval / RLVR-IF JSONL format (``prompt``, ``instruction_id_list``, ``kwargs``),
  locating each constraint's sentence in free-text prompts and reporting where it cannot.
* :func:`constraint_verifiers` — K verifiers ``constraint_1..constraint_K``; verifier j scores an example's j-th
  constraint, ``None`` when the example has fewer.
* :func:`build_reference` — a completion that satisfies all of an example's constraints (warm start, lint).

See ``docs/instruction_following.md``.
"""

from mrtpo_sdk.instructions._registry import (
    CONSTRAINTS,
    LANGUAGE_NAMES,
    RELATIONS,
    SCOPES,
    SEMANTICS,
    ConstraintKwargsError,
    ConstraintType,
    UnknownConstraintError,
    constraint_ids,
    describe,
    get_constraint,
    normalize_kwargs,
)
from mrtpo_sdk.instructions import _training, ifeval, unseen  # noqa: F401  (the checkers register themselves)
from mrtpo_sdk.instructions._check import check
from mrtpo_sdk.instructions.data import (
    Constraint,
    IFExample,
    InstructionDataError,
    LoadReport,
    compose_example,
    example_from_json,
    example_to_json,
    load_examples_jsonl,
    load_ifeval_jsonl,
    split_file_examples,
    locate_constraint,
)
from mrtpo_sdk.instructions.reference import ReferenceError, build_reference, reference_for
from mrtpo_sdk.instructions._training import remove_echoes
from mrtpo_sdk.instructions.verifiers import (
    constraint_type_verifier,
    constraint_verifier,
    constraint_verifiers,
    echoes_of,
    prompt_without,
    slot_of,
)


__all__ = [
    "CONSTRAINTS",
    "Constraint",
    "IFExample",
    "InstructionDataError",
    "LoadReport",
    "ReferenceError",
    "build_reference",
    "compose_example",
    "constraint_type_verifier",
    "constraint_verifier",
    "constraint_verifiers",
    "echoes_of",
    "example_from_json",
    "example_to_json",
    "load_examples_jsonl",
    "load_ifeval_jsonl",
    "split_file_examples",
    "locate_constraint",
    "prompt_without",
    "remove_echoes",
    "reference_for",
    "slot_of",
    "LANGUAGE_NAMES",
    "RELATIONS",
    "SCOPES",
    "SEMANTICS",
    "ConstraintKwargsError",
    "ConstraintType",
    "UnknownConstraintError",
    "check",
    "constraint_ids",
    "describe",
    "get_constraint",
    "normalize_kwargs",
]
