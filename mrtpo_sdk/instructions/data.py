"""Instruction-following examples: a base instruction plus constraint sentences, and the IFEval / RLVR-IF loader.

An :class:`IFExample` holds the rollout prompt ``P_0`` as text and, for each constraint, the character span of its
sentence in that text. ``P_\\k`` (spec §3, information already in the prompt) is the prompt with span k cut out:

* composed examples (:func:`compose_example`): ``P_0 = base + " " + sentence_1 + " " + ... + sentence_K`` where each
  sentence is rendered from its kwargs by :func:`~mrtpo_sdk.instructions.describe`, so ``P_\\k`` is exactly the
  composition without sentence k;
* loaded free-text prompts (:func:`load_ifeval_jsonl`): the span is found in the text — first the rendered sentence
  verbatim, else the one sentence of the prompt that carries the constraint's anchors (its kwargs: keywords, numbers,
  markers; and its cue words: "comma", "paragraph", "bullet", ...). Constraints it cannot place (no such sentence, or
  a sentence shared with another constraint) are listed in the load report; their ``P_\\k`` is ``P_0`` unchanged, so
  that reward gets uniform token weights (no replay signal) instead of a wrong one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MRTPOError
from ..jsonl import JSONLineError, read_jsonl
from ._registry import LANGUAGE_NAMES, describe, get_constraint, normalize_kwargs
from ._text import sentence_spans

__all__ = [
    "Constraint",
    "IFExample",
    "InstructionDataError",
    "LoadReport",
    "compose_example",
    "example_from_json",
    "example_to_json",
    "locate_constraint",
    "load_examples_jsonl",
    "load_ifeval_jsonl",
    "FILE_SPLITS",
    "SEPARATOR",
    "split_file_examples",
]

SEPARATOR = " "
"""What joins the base instruction and the constraint sentences in a composed prompt."""


FILE_SPLITS = ("train", "validation", "all")
"""The splits of one data file (:func:`split_file_examples`)."""


class InstructionDataError(MRTPOError, ValueError):
    """A data file or row is malformed; the message names the file, line and field."""


@dataclass(frozen=True)
class Constraint:
    """One constraint of an example.

    Attributes:
        id: the constraint type's id (``"keywords:existence"``).
        kwargs: its normalized kwargs.
        span: ``(start, end)`` of its sentence in the example's prompt, or ``None`` when it could not be located.
    """

    id: str
    kwargs: Mapping[str, Any]
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class IFExample:
    """An instruction-following example.

    Attributes:
        id: unique id within its split.
        prompt: the rollout prompt ``P_0`` (text).
        constraints: its constraints, in order (verifier ``constraint_j`` scores ``constraints[j-1]``).
        base: the base instruction without constraints (``None`` for free-text prompts).
        meta: free-form extras (e.g. the topic, the source file).
    """

    id: str
    prompt: str
    constraints: tuple[Constraint, ...]
    base: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def sentence(self, k: int) -> str:
        """The prompt sentence of constraint ``k`` (0-based); ``""`` when it was not located."""
        span = self.constraints[k].span
        return "" if span is None else self.prompt[span[0] : span[1]]

    def prompt_without(self, k: int) -> str:
        """``P_\\k``: the prompt with constraint ``k``'s sentence (0-based) cut out, with one adjoining separator.

        Returns the prompt unchanged when the constraint's sentence was not located.
        """
        span = self.constraints[k].span
        if span is None:
            return self.prompt
        s, e = span
        before, after = self.prompt[:s], self.prompt[e:]
        if before.endswith(SEPARATOR) and (not after or after[0] in " \n"):
            before = before[: -len(SEPARATOR)]  # "a. X. b." -> "a. b."; "a. X.\n" -> "a.\n"
        elif (not before or before.endswith("\n")) and after[:1] in (" ", "\n"):
            after = after[1:]  # a whole line (or the first sentence) goes with one separator
        elif before.endswith("\n") and not after:
            before = before[:-1]  # the last line
        return before + after


def compose_example(id: str, base: str, constraints: Sequence[tuple[str, Mapping[str, Any]]], **meta: Any) -> IFExample:
    """An example whose prompt is ``base`` followed by each constraint's rendered sentence.

    Raises:
        UnknownConstraintError / ConstraintKwargsError: a bad constraint id or kwargs.
    """
    text = base.strip()
    out = []
    for cid, kwargs in constraints:
        kw = normalize_kwargs(cid, kwargs)
        sentence = describe(cid, kw)
        text += SEPARATOR
        out.append(Constraint(cid, kw, (len(text), len(text) + len(sentence))))
        text += sentence
    return IFExample(id=str(id), prompt=text, constraints=tuple(out), base=base.strip(), meta=dict(meta))


# ============================================================================================ JSON rows
def example_to_json(ex: IFExample) -> dict[str, Any]:
    """The JSONL row of an example (IFEval field names plus ``id``, ``base``, ``spans``, ``meta``)."""
    return {
        "id": ex.id,
        "prompt": ex.prompt,
        "instruction_id_list": [c.id for c in ex.constraints],
        "kwargs": [dict(c.kwargs) for c in ex.constraints],
        "spans": [list(c.span) if c.span else None for c in ex.constraints],
        "base": ex.base,
        "meta": dict(ex.meta),
    }


def example_from_json(row: Mapping[str, Any], where: str = "row") -> IFExample:
    """Parse one row written by :func:`example_to_json` (spans given, checked against the prompt).

    Raises:
        InstructionDataError: a missing or malformed field; UnknownConstraintError: an unknown constraint id.
    """
    ex, problems = _parse_row(row, where, locate=False)
    if problems:
        raise InstructionDataError(f"{where}: {problems[0]}")
    return ex


def _parse_row(row: Any, where: str, *, locate: bool, fallback_id: str | None = None) -> tuple[IFExample, list[str]]:
    if not isinstance(row, Mapping):
        raise InstructionDataError(f"{where}: a row must be a JSON object, got {type(row).__name__}")
    prompt = row.get("prompt")
    if prompt is None and isinstance(row.get("messages"), list):  # RLVR-IF rows carry chat messages
        users = [m.get("content") for m in row["messages"] if isinstance(m, Mapping) and m.get("role") == "user"]
        prompt = users[-1] if users else None
    if not isinstance(prompt, str) or not prompt.strip():
        raise InstructionDataError(f"{where}: field 'prompt' must be a non-empty string")
    ids = row.get("instruction_id_list")
    kwargs_list = row.get("kwargs")
    if ids is None and "ground_truth" in row:  # RLVR-IF: ground_truth = JSON {"instruction_id": [...], "kwargs": [...]}
        ids, kwargs_list = _from_ground_truth(row["ground_truth"], where)
    if isinstance(kwargs_list, str):  # RLVR-IF stores kwargs as a JSON string
        try:
            kwargs_list = json.loads(kwargs_list)
        except ValueError as exc:
            raise InstructionDataError(f"{where}: field 'kwargs' is a string but not JSON ({exc})") from None
    if not isinstance(ids, list) or not ids:
        raise InstructionDataError(f"{where}: field 'instruction_id_list' must be a non-empty list of constraint ids")
    if not isinstance(kwargs_list, list) or len(kwargs_list) != len(ids):
        raise InstructionDataError(
            f"{where}: field 'kwargs' must be a list with one object per instruction id ({len(ids)})"
        )
    rid = row.get("id", row.get("key", fallback_id))
    if rid is None:
        raise InstructionDataError(f"{where}: the row has no 'id' (or IFEval 'key')")
    spans = row.get("spans")
    constraints: list[Constraint] = []
    problems: list[str] = []
    for j, (cid, kw) in enumerate(zip(ids, kwargs_list)):
        try:
            get_constraint(cid)
            nkw = normalize_kwargs(cid, kw)
        except MRTPOError as exc:
            raise type(exc)(f"{where}: instruction {j + 1}: {exc}") from None
        span: tuple[int, int] | None = None
        if spans is not None and not locate:
            sp = spans[j] if isinstance(spans, list) and j < len(spans) else None
            if sp is not None:
                if not (
                    isinstance(sp, list)
                    and len(sp) == 2
                    and all(isinstance(x, int) for x in sp)
                    and 0 <= sp[0] < sp[1] <= len(prompt)
                ):
                    raise InstructionDataError(f"{where}: spans[{j}]={sp!r} is not a [start, end] inside the prompt")
                span = (sp[0], sp[1])
        constraints.append(Constraint(cid, nkw, span))
    if locate:
        constraints, problems = _locate_all(prompt, constraints)
    base = row.get("base") if isinstance(row.get("base"), str) else None
    meta = row.get("meta") if isinstance(row.get("meta"), Mapping) else {}
    return IFExample(str(rid), prompt, tuple(constraints), base, dict(meta)), problems


def _from_ground_truth(gt: Any, where: str) -> tuple[Any, Any]:
    if isinstance(gt, str):
        try:
            gt = json.loads(gt)
        except ValueError as exc:
            raise InstructionDataError(f"{where}: field 'ground_truth' is not JSON ({exc})") from None
    if isinstance(gt, list) and len(gt) == 1:
        gt = gt[0]
    if not isinstance(gt, Mapping) or "instruction_id" not in gt:
        hint = (
            " (rows with 'func_name' are not in the IFEval instruction-id format)"
            if isinstance(gt, Mapping) and "func_name" in gt
            else ""
        )
        raise InstructionDataError(
            f'{where}: field \'ground_truth\' must hold {{"instruction_id": [...], "kwargs": [...]}}{hint}'
        )
    return gt.get("instruction_id"), gt.get("kwargs")


# ============================================================================================ locating spans
_NUMBER_WORDS = {
    1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten",
    11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen", 16: "sixteen", 17: "seventeen",
    18: "eighteen", 19: "nineteen", 20: "twenty", 30: "thirty", 40: "forty", 50: "fifty", 100: "hundred",
}  # fmt: skip

# cue words per constraint type: a sentence must contain one of each group (case-insensitive substrings)
_CUES: dict[str, list[tuple[str, ...]]] = {
    "keywords:existence": [],
    "keywords:frequency": [],
    "keywords:forbidden_words": [],
    "keywords:letter_frequency": [("letter",)],
    "language:response_language": [],
    "length_constraints:number_sentences": [("sentence",)],
    "length_constraints:number_paragraphs": [("paragraph", "section", "part")],
    "length_constraints:number_words": [("word",)],
    "length_constraints:nth_paragraph_first_word": [("paragraph",)],
    "detectable_content:number_placeholders": [("placeholder", "square bracket", "[")],
    "detectable_content:postscript": [("p.s", "p.p.s", "postscript")],
    "detectable_format:number_bullet_lists": [("bullet",)],
    "detectable_format:constrained_response": [("my answer is",)],
    "detectable_format:number_highlighted_sections": [("highlight",)],
    "detectable_format:multiple_sections": [("section", "part", "chapter", "paragraph")],
    "detectable_format:json_format": [("json",)],
    "detectable_format:title": [("title",)],
    "combination:two_responses": [("two", "2", "******")],
    "combination:repeat_prompt": [("repeat",)],
    "startend:end_checker": [("end", "finish", "conclude", "last")],
    "startend:quotation": [("quot", '"')],
    "change_case:capital_word_frequency": [("capital", "uppercase", "upper case", "all caps")],
    "change_case:english_capital": [("capital", "uppercase", "upper case", "all caps")],
    "change_case:english_lowercase": [("lowercase", "lower case", "small letters")],
    "punctuation:no_comma": [("comma",)],
}


def _anchors(cid: str, kw: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """Groups of alternatives; a sentence carries the constraint if it contains one alternative of every group."""
    groups = list(_CUES.get(cid, []))
    for name, value in kw.items():
        if name in ("relation", "let_relation", "capital_relation", "prompt_to_repeat"):
            continue
        if isinstance(value, list):
            groups.extend((str(v).strip(),) for v in value)
        elif isinstance(value, int):
            alts = [str(value)]
            if value in _NUMBER_WORDS:
                alts.append(_NUMBER_WORDS[value])
            if name == "nth_paragraph":
                alts += [{1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}.get(value, str(value))]
            groups.append(tuple(alts))
        elif name == "language":
            groups.append((LANGUAGE_NAMES.get(value, value), value))
        elif isinstance(value, str):
            groups.append((value.strip(),))
    if not get_constraint(cid).kwargs and not groups:
        groups = [("",)]
    return groups


_MARKER_ONLY = re.compile(r"\s*(?:\d{1,3}[.)]|[-*\u2022])?\s*")
_LIST_ITEM = re.compile(r"[ \t]*(?:\d{1,3}[.)]|[-*\u2022])[ \t]+\S")


def _sentences(prompt: str) -> list[tuple[int, int]]:
    """Units a constraint can occupy: a whole line for list-item lines (``1. ...``, ``- ...``), else the Punkt
    sentences of the line, with fragments of one or two words (Punkt ends a sentence after "i.e.") joined to the
    sentence before them."""
    out: list[tuple[int, int]] = []
    offset = 0
    for line in prompt.split("\n"):
        if line.strip():
            if _LIST_ITEM.match(line):
                lead = len(line) - len(line.lstrip())
                out.append((offset + lead, offset + len(line.rstrip())))
            else:
                first = True
                for s, e in sentence_spans(line):
                    if not first and len(line[s:e].split()) <= 2:
                        out[-1] = (out[-1][0], offset + e)
                    else:
                        out.append((offset + s, offset + e))
                    first = False
        offset += len(line) + 1
    return out


def locate_constraint(prompt: str, cid: str, kwargs: Mapping[str, Any]) -> tuple[int, int] | None:
    """The span of constraint ``cid``'s sentence in ``prompt``, or ``None`` when no single sentence carries it.

    First the rendered sentence verbatim; else the last prompt sentence containing every anchor (kwarg values, cue
    words; case-insensitive).
    """
    kw = normalize_kwargs(cid, kwargs)
    rendered = describe(cid, kw)
    i = prompt.rfind(rendered)
    if i != -1:
        span = (i, i + len(rendered))
        for s, e in _sentences(prompt):  # a list item "2. <sentence>" goes whole, marker included
            if s <= span[0] and span[1] <= e and _MARKER_ONLY.fullmatch(prompt[s : span[0]] + prompt[span[1] : e]):
                return (s, e)
        return span
    groups = _anchors(cid, kw)
    if not groups or groups == [("",)]:
        return None
    low = prompt.lower()
    found = None
    for s, e in _sentences(prompt):
        text = low[s:e]
        if all(any(alt.lower() in text for alt in group) for group in groups):
            found = (s, e)
    return found


def _locate_all(prompt: str, constraints: list[Constraint]) -> tuple[list[Constraint], list[str]]:
    located = []
    for c in constraints:
        located.append(Constraint(c.id, c.kwargs, locate_constraint(prompt, c.id, c.kwargs)))
    problems = []
    spans = [c.span for c in located]
    out = []
    for j, c in enumerate(located):
        if c.span is None:
            problems.append(f"instruction {j + 1} ({c.id}): no sentence of the prompt carries it")
            out.append(c)
            continue
        shared = [i + 1 for i, sp in enumerate(spans) if i != j and sp is not None and _overlap(sp, c.span)]
        if shared:
            problems.append(f"instruction {j + 1} ({c.id}): its sentence also carries instruction(s) {shared}")
            out.append(Constraint(c.id, c.kwargs, None))
        else:
            out.append(c)
    return out, problems


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


# ============================================================================================ loaders
@dataclass
class LoadReport:
    """What :func:`load_ifeval_jsonl` could not place.

    Attributes:
        path: the file read.
        examples: number of examples loaded.
        unlocated: ``(example id, problem)`` for each constraint whose sentence was not located; those constraints
            keep ``span=None`` (``P_\\k == P_0``).
    """

    path: str
    examples: int = 0
    unlocated: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        ids = sorted({i for i, _ in self.unlocated})
        return (
            f"{self.path}: {self.examples} examples; {len(self.unlocated)} constraint(s) in {len(ids)} example(s) "
            f"could not be located in their prompt" + (f" (e.g. {ids[:5]})" if ids else "")
        )


def _read_jsonl(path: str | Path) -> list[tuple[int, Any]]:
    p = Path(path)
    if not p.is_file():
        raise InstructionDataError(f"{p}: no such file (expected a JSONL file, one example per line)")
    try:
        rows = read_jsonl(p)
    except JSONLineError as exc:
        raise InstructionDataError(f"{p}:{exc.line}: not valid JSON ({exc.cause})") from None
    if not rows:
        raise InstructionDataError(f"{p}: the file holds no examples")
    return rows


def load_examples_jsonl(path: str | Path) -> list[IFExample]:
    """Load a file written by :func:`example_to_json` rows (the bundled data: spans stored).

    Raises:
        InstructionDataError: missing file, bad JSON, malformed row, duplicate id (names file and line).
    """
    out, seen = [], set()
    for lineno, row in _read_jsonl(path):
        ex = example_from_json(row, f"{path}:{lineno}")
        if ex.id in seen:
            raise InstructionDataError(f"{path}:{lineno}: id {ex.id!r} appears twice")
        seen.add(ex.id)
        out.append(ex)
    return out


def load_ifeval_jsonl(path: str | Path) -> tuple[list[IFExample], LoadReport]:
    """Load the IFEval / RLVR-IF JSONL format and locate each constraint's sentence in the free-text prompt.

    Rows: ``{"key" or "id", "prompt" (or RLVR-IF "messages"), "instruction_id_list", "kwargs"}``; ``kwargs`` may be a
    list of objects or a JSON string of one (RLVR-IF); ``null`` kwarg values are dropped as IFEval does. Rows with
    ``spans`` keep them. A row without an id gets ``"line<N>"``.

    Returns:
        ``(examples, report)``; ``report.unlocated`` lists the constraints whose sentence was not found.

    Raises:
        InstructionDataError / UnknownConstraintError / ConstraintKwargsError: naming file, line and field.
    """
    report = LoadReport(str(path))
    out, seen = [], set()
    for lineno, row in _read_jsonl(path):
        where = f"{path}:{lineno}"
        has_spans = isinstance(row, Mapping) and row.get("spans") is not None
        ex, problems = _parse_row(row, where, locate=not has_spans, fallback_id=f"line{lineno}")
        if ex.id in seen:
            raise InstructionDataError(f"{where}: id {ex.id!r} appears twice")
        seen.add(ex.id)
        report.unlocated.extend((ex.id, p) for p in problems)
        out.append(ex)
    report.examples = len(out)
    return out, report


def split_file_examples(examples: Sequence[Any], split: str, validation_percent: int, *, source: str = "") -> list[Any]:
    """The ``split`` of the examples of one data file, which has no splits of its own: ``validation`` holds the
    examples whose id falls under ``validation_percent`` (the SHA-256 of the id, mod 100), ``train`` the others,
    ``all`` every one. An id lands in the same split whatever else the file holds.

    Args:
        examples: the file's examples (each with an ``id``).
        split: one of :data:`FILE_SPLITS`.
        validation_percent: 0 to 100.
        source: names the file in messages.

    Raises:
        InstructionDataError: another split, or ``validation_percent`` outside 0..100.
    """
    where = f"{source}: " if source else ""
    if not 0 <= validation_percent <= 100:
        raise InstructionDataError(f"{where}validation_percent is 0 to 100, got {validation_percent}")
    if split not in FILE_SPLITS:
        raise InstructionDataError(
            f"{where}a data file has the splits {', '.join(FILE_SPLITS)} (validation: {validation_percent}% of its "
            f"rows, by a hash of each id), not {split!r}"
        )
    if split == "all":
        return list(examples)

    def held_out(ex: Any) -> bool:
        eid = str(ex["id"] if isinstance(ex, Mapping) else ex.id)
        return int.from_bytes(hashlib.sha256(eid.encode("utf-8")).digest()[:8], "big") % 100 < validation_percent

    return [ex for ex in examples if held_out(ex) == (split == "validation")]
