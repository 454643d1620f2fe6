"""Verifiers for instruction constraints: one reward and one in-prompt block per constraint.

A :class:`~mrtpo_sdk.Task` has a fixed list of verifiers (reward index k), while examples carry 1-4 constraints of
varying types. :func:`constraint_verifiers` therefore makes K *slot* verifiers ``constraint_1 .. constraint_K``:
``constraint_j`` scores the example's j-th constraint (reward 1.0 if followed, else 0.0; IFEval strict) with that
constraint's prompt sentence as its block, and returns ``None`` (not applicable) when the example has fewer than j
constraints. :func:`prompt_without` gives ``P_\\k`` for ``block_placement="in-prompt"``: the prompt with slot k's
sentence left out. :func:`constraint_type_verifier` is the alternative keyed by type (one verifier per constraint
id, ``None`` for examples without it), for tasks with a small fixed set of types.

Both locate the tokens that decide their constraint (``Verifier(deciding=...)``) with
:func:`~mrtpo_sdk.instructions.deciding.deciding_spans`, dispatching on the constraint's id.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import MRTPOError
from ..verifier import Result, Verifier
from ._check import check
from ._registry import SEMANTICS, get_constraint
from .data import IFExample
from .deciding import deciding_spans

__all__ = [
    "constraint_verifier",
    "constraint_verifiers",
    "constraint_type_verifier",
    "echoes_of",
    "prompt_without",
    "slot_of",
]

_SLOT = re.compile(r"constraint_([1-9][0-9]*)")


def _as_example(example: Any, where: str) -> IFExample:
    if not isinstance(example, IFExample):
        raise MRTPOError(
            f"{where}: expected an IFExample (mrtpo_sdk.instructions), got {type(example).__name__}; load examples "
            f"with load_examples_jsonl / load_ifeval_jsonl or build them with compose_example"
        )
    return example


def echoes_of(example: IFExample) -> tuple[str, ...]:
    """The example's own prompt texts (the prompt, its base instruction, each located constraint sentence): under
    ``training`` semantics a completion earns nothing for pasting them back."""
    texts = [example.prompt, example.base or ""]
    texts += [example.sentence(k) for k in range(len(example.constraints))]
    return tuple(t for t in texts if t)


def _semantics(semantics: str) -> str:
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {list(SEMANTICS)}, got {semantics!r}")
    return semantics


def _score(ex: IFExample, k: int, completion: str, semantics: str, loose: bool) -> Result:
    c = ex.constraints[k]
    echoes = echoes_of(ex) if semantics == "training" else ()
    followed = check(c.id, c.kwargs, completion, semantics=semantics, loose=loose, echoes=echoes)
    return Result(float(followed), ex.sentence(k))


def constraint_verifier(j: int, *, weight: float = 1.0, semantics: str = "training", loose: bool = False) -> Verifier:
    """The verifier ``constraint_j`` (1-based) for an example's j-th constraint.

    ``semantics``: ``"training"`` (default) or ``"official"`` (IFEval's verdicts); ``loose``: IFEval's loose mode.

    Returns ``Result(1.0 | 0.0, block)`` with the block = the constraint's sentence in the prompt (``""`` when the
    loader could not locate it), or ``None`` when the example has fewer than ``j`` constraints. Its ``deciding``
    function gives the spans of the completion that decide that constraint
    (:func:`~mrtpo_sdk.instructions.deciding.deciding_spans`).

    Raises:
        ValueError: ``j < 1``.
    """
    if not isinstance(j, int) or j < 1:
        raise ValueError(f"constraint slot must be an integer >= 1, got {j!r}")
    _semantics(semantics)

    def score(example: Any, completion: str) -> Result | None:
        ex = _as_example(example, f"constraint_{j}")
        if j > len(ex.constraints):
            return None
        return _score(ex, j - 1, completion, semantics, loose)

    def deciding(example: Any, completion: str) -> list[tuple[int, int]] | None:
        ex = _as_example(example, f"constraint_{j}")
        if j > len(ex.constraints):
            return None
        c = ex.constraints[j - 1]
        return deciding_spans(c.id, c.kwargs, completion)

    score.__name__ = f"constraint_{j}"
    score.__doc__ = f"Reward 1 if the completion follows the example's constraint {j} ({semantics} semantics), else 0."
    return Verifier(score, name=f"constraint_{j}", weight=weight, kind="constraint", deciding=deciding)


def constraint_verifiers(
    k: int = 4, *, weight: float = 1.0, semantics: str = "training", loose: bool = False
) -> list[Verifier]:
    """``[constraint_1, ..., constraint_k]`` (see :func:`constraint_verifier`)."""
    return [constraint_verifier(j, weight=weight, semantics=semantics, loose=loose) for j in range(1, k + 1)]


def slot_of(verifier_name: str) -> int:
    """The 0-based constraint index of verifier ``constraint_j``.

    Raises:
        MRTPOError: the name is not ``constraint_<j>``.
    """
    m = _SLOT.fullmatch(verifier_name)
    if not m:
        raise MRTPOError(f"verifier {verifier_name!r} is not a constraint slot (expected 'constraint_<j>')")
    return int(m.group(1)) - 1


def prompt_without(example: Any, verifier_name: str) -> str:
    """``P_\\k`` for slot verifier ``verifier_name``: the prompt without that constraint's sentence.

    An example with fewer constraints than the slot (the verifier returned ``None``) gets its prompt unchanged.
    """
    ex = _as_example(example, "prompt_without")
    k = slot_of(verifier_name)
    return ex.prompt if k >= len(ex.constraints) else ex.prompt_without(k)


def constraint_type_verifier(
    cid: str, *, weight: float = 1.0, name: str | None = None, semantics: str = "training", loose: bool = False
) -> Verifier:
    """A verifier for constraint type ``cid``: scores the example's constraint of that type, ``None`` if it has none.

    Raises:
        UnknownConstraintError: ``cid`` is not registered.
    """
    get_constraint(cid)
    _semantics(semantics)
    vname = name or re.sub(r"\W", "_", cid)

    def score(example: Any, completion: str) -> Result | None:
        ex = _as_example(example, vname)
        for k, c in enumerate(ex.constraints):
            if c.id == cid:
                return _score(ex, k, completion, semantics, loose)
        return None

    def deciding(example: Any, completion: str) -> list[tuple[int, int]] | None:
        ex = _as_example(example, vname)
        c = next((c for c in ex.constraints if c.id == cid), None)
        return None if c is None else deciding_spans(c.id, c.kwargs, completion)

    score.__name__ = vname
    return Verifier(score, name=vname, weight=weight, kind="constraint", deciding=deciding)
