"""BFCL v4 single-turn data: the installed ``bfcl_eval`` package first, else a BFCL-layout directory.

A BFCL data directory holds ``BFCL_v4_<category>.json`` (one JSON object per line: ``id``, ``question`` — a
list of turns, each a list of ``{"role", "content"}`` messages — and ``function``, the function docs) and
``possible_answer/BFCL_v4_<category>.json`` (``id``, ``ground_truth``). Irrelevance categories have no possible
answer file: the right answer is no call.

Sources, in order (see ``docs/bfcl.md``):

1. an explicit directory (``--data PATH``);
2. the installed ``bfcl_eval`` package (``pip install --no-deps bfcl-eval==2026.3.23``), read with
   :mod:`importlib.resources` — only its data files, none of its code;
3. the subset committed under ``tasks/data/bfcl`` (built by ``tools/data/bfcl/extract_subset.py``).
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from mrtpo_sdk.errors import MRTPOError
from mrtpo_sdk.jsonl import JSONLineError, read_jsonl

__all__ = [
    "AST_CATEGORIES",
    "CATEGORIES",
    "IRRELEVANCE_CATEGORIES",
    "BFCLDataError",
    "BFCLExample",
    "installed_data_dir",
    "is_held_out",
    "load_bfcl",
    "resolve_categories",
]

AST_CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
IRRELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance")
CATEGORIES = AST_CATEGORIES + IRRELEVANCE_CATEGORIES
"""The single-turn Python categories this loader reads (Java/JavaScript and multi-turn are not supported)."""
_ALIASES = {"simple": "simple_python"}
SPLITS = ("train", "test", "all")
HELD_OUT_PERCENT = 10
"""Share of each category held out as ``test``, chosen by a hash of the example id (fixed forever)."""


class BFCLDataError(MRTPOError):
    """A BFCL data file is missing or malformed; the message names the file and line."""


@dataclass(frozen=True)
class BFCLExample:
    """One BFCL question.

    Attributes:
        id: the BFCL id, e.g. ``"simple_python_0"``.
        category: its category, e.g. ``"simple_python"``.
        messages: the question's single turn: ``[{"role": "system"|"user"|"assistant", "content": str}, ...]``.
        functions: the function docs offered (BFCL JSON: ``name``, ``description``, ``parameters``).
        possible_answer: one ``{function_name: {parameter: [acceptable values]}}`` per expected call; ``[]``
            when the right answer is no call.
        semantics: how the rewards check this example's answers: ``"training"`` (default) or ``"official"`` (the
            BFCL AST checker's verdicts); chosen with ``-T semantics=official`` (see ``docs/bfcl.md``).
    """

    id: str
    category: str
    messages: list[dict[str, str]] = field(repr=False)
    functions: list[dict[str, Any]] = field(repr=False)
    possible_answer: list[dict[str, dict[str, list[Any]]]] = field(repr=False)
    semantics: str = "training"

    @property
    def expects_no_call(self) -> bool:
        return not self.possible_answer


def is_held_out(example_id: str) -> bool:
    """Whether ``example_id`` belongs to the held-out ``test`` split (sha256 of the id, mod 100 < 10)."""
    digest = hashlib.sha256(example_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % 100 < HELD_OUT_PERCENT


def installed_data_dir() -> Path | None:
    """The data directory of the installed ``bfcl_eval`` package, or ``None`` if it is not installed.

    Only :mod:`importlib.resources` is used: the package's data files are read, none of its modules run (its
    ``__init__`` is empty).
    """
    try:
        root = resources.files("bfcl_eval") / "data"
    except (ModuleNotFoundError, TypeError):
        return None
    path = Path(str(root))
    return path if (path / "possible_answer").is_dir() else None


def resolve_categories(categories: Iterable[str]) -> tuple[str, ...]:
    """Normalize category names (``simple`` = ``simple_python``, ``all`` = every one of :data:`CATEGORIES`), in
    order, without repeats.

    Raises:
        BFCLDataError: an unknown category (naming the closest), or none.
    """
    out = []
    for c in categories:
        for one in CATEGORIES if c == "all" else (_ALIASES.get(c, c),):
            if one not in CATEGORIES:
                close = difflib.get_close_matches(one, [*CATEGORIES, *_ALIASES, "all"], n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise BFCLDataError(
                    f"unknown BFCL category {one!r}{hint}; choose from {', '.join(CATEGORIES)} (or 'simple', 'all')"
                )
            if one not in out:
                out.append(one)
    if not out:
        raise BFCLDataError("no BFCL category selected")
    return tuple(out)


def load_bfcl(
    directory: str | Path | None,
    categories: Sequence[str] = CATEGORIES,
    split: str = "train",
) -> list[BFCLExample]:
    """Load BFCL single-turn examples.

    Args:
        directory: a BFCL-layout data directory (module docstring), or ``None`` for the installed package.
        categories: category names (:data:`CATEGORIES`; ``"simple"`` means ``"simple_python"``, ``"all"`` every
            category).
        split: ``"train"`` (ids not held out), ``"test"`` (the fixed held-out 10%), or ``"all"``.

    Returns:
        the examples, category by category, in file order.

    Raises:
        BFCLDataError: unknown split/category, no data directory, a missing file, a malformed line, or a
            question without its possible answer (the message names file and line).
    """
    if split not in SPLITS:
        raise BFCLDataError(f"unknown split {split!r}; the BFCL splits: {', '.join(SPLITS)}")
    cats = resolve_categories(categories)
    root = Path(directory) if directory is not None else installed_data_dir()
    if root is None:
        raise BFCLDataError(
            "the bfcl_eval package is not installed; run `pip install --no-deps bfcl-eval==2026.3.23` or pass a "
            "BFCL data directory"
        )
    if not root.is_dir():
        raise BFCLDataError(f"{root}: not a directory; pass a BFCL data directory (BFCL_v4_*.json, possible_answer/)")
    out: list[BFCLExample] = []
    for cat in cats:
        questions = _read_jsonl(root / f"BFCL_v4_{cat}.json")
        answers: dict[str, Any] = {}
        if cat not in IRRELEVANCE_CATEGORIES:
            answer_file = root / "possible_answer" / f"BFCL_v4_{cat}.json"
            for line, row in _read_jsonl(answer_file):
                if not isinstance(row.get("ground_truth"), list):
                    raise BFCLDataError(f"{answer_file}:{line}: 'ground_truth' is not a list")
                answers[str(row.get("id"))] = row["ground_truth"]
        for line, row in questions:
            where = f"{root / f'BFCL_v4_{cat}.json'}:{line}"
            eid = row.get("id")
            if not isinstance(eid, str):
                raise BFCLDataError(f"{where}: no string 'id'")
            if split != "all" and is_held_out(eid) != (split == "test"):
                continue
            q = row.get("question")
            if not (isinstance(q, list) and len(q) == 1 and isinstance(q[0], list) and q[0]):
                raise BFCLDataError(f"{where}: 'question' is not one turn of messages (multi-turn is not supported)")
            funcs = row.get("function")
            if not (isinstance(funcs, list) and all(isinstance(f, dict) and "name" in f for f in funcs)):
                raise BFCLDataError(f"{where}: 'function' is not a list of function docs")
            if cat in IRRELEVANCE_CATEGORIES:
                answer: list = []
            elif eid in answers:
                answer = answers[eid]
            else:
                raise BFCLDataError(f"{where}: id {eid!r} has no possible answer in possible_answer/BFCL_v4_{cat}.json")
            messages = [{"role": str(m.get("role")), "content": str(m.get("content"))} for m in q[0]]
            out.append(BFCLExample(eid, cat, messages, funcs, answer))
    return out


def _read_jsonl(path: Path) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise BFCLDataError(f"{path}: missing BFCL data file")
    try:
        return read_jsonl(path, objects=True)
    except JSONLineError as exc:  # "<path>:<line>: not JSON (...)" / "... not a JSON object"
        raise BFCLDataError(str(exc)) from None
