"""Checking a response against a constraint: :func:`check` (``training`` / ``official`` semantics, loose mode).

Above the registry (:mod:`._registry`, a leaf the checker modules register into) and the training checkers
(:mod:`._training`): this module looks constraint types up in the one and calls the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._registry import SEMANTICS, ConstraintType, get_constraint, normalize_kwargs
from ._training import MAX_TRAINING_CHARS, check_training, has_word_char, remove_echoes

__all__ = ["OFFICIAL_NLP_CHARS", "check"]


OFFICIAL_NLP_CHARS = 100_000
"""``official``: Punkt-based checks on a longer response are not followed (the reference runs for seconds there and
raises NLTK's regex ``TimeoutError`` a little further on)."""


def _loose_variants(response: str) -> list[str]:
    # IFEval's loose mode (lm-eval ``test_instruction_following_loose``): the response, without its first and/or
    # last line, each also with every "*" removed
    r = response.split("\n")
    first = "\n".join(r[1:]).strip()
    last = "\n".join(r[:-1]).strip()
    both = "\n".join(r[1:-1]).strip()
    return [
        response,
        response.replace("*", ""),
        first,
        last,
        both,
        first.replace("*", ""),
        last.replace("*", ""),
        both.replace("*", ""),
    ]


def _check_one(
    ctype: ConstraintType, kw: Mapping[str, Any], response: str, semantics: str, echoes, answer: str | None = None
) -> bool:
    if not response.strip():
        return False
    if semantics == "official":
        if ctype.id in _NLP_IDS and len(response) > OFFICIAL_NLP_CHARS:
            return False
        return bool(ctype.check_fn(kw, response))

    if len(response) > MAX_TRAINING_CHARS:
        return False
    full = _lines(response)
    if answer is None:
        answer = remove_echoes(full, echoes) if echoes else full
    if not has_word_char(answer):
        return False  # empty, markup only, or the prompt pasted back: no attempt at the task
    return check_training(ctype.id, kw, full, answer)


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


_NLP_IDS = frozenset({"length_constraints:number_sentences", "change_case:capital_word_frequency"})


def check(
    id: str,
    kwargs: Mapping[str, Any] | None,
    response: str,
    *,
    semantics: str = "training",
    loose: bool = False,
    echoes: Sequence[str] = (),
) -> bool:
    """Whether ``response`` follows constraint ``id`` with ``kwargs``.

    Args:
        semantics: ``"training"`` (default; the checker agrees with the constraint's prompt sentence, see
            ``docs/instruction_following.md``) or ``"official"`` (IFEval's reference verdicts, strict).
        loose: IFEval's loose mode: followed when the response, or it without its first and/or last line, or any of
            those with every ``*`` removed, follows.
        echoes: texts of the prompt (the prompt, the base instruction, the constraint sentences); under ``training``,
            copies of them in the response earn nothing. The verifiers pass the example's.

    An empty or whitespace-only response follows nothing (as in IFEval's strict evaluation). Pure; never raises on
    any response text.

    Raises:
        UnknownConstraintError / ConstraintKwargsError: bad id or kwargs (never because of the response).
        ValueError: unknown ``semantics``.
        TypeError: ``response`` is not a str.
    """
    ctype = get_constraint(id)
    kw = normalize_kwargs(id, kwargs)
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {list(SEMANTICS)}, got {semantics!r}")
    if not isinstance(response, str):
        raise TypeError(f"response must be str, got {type(response).__name__}")
    try:
        if not loose:
            return _check_one(ctype, kw, response, semantics, echoes)
        if semantics == "official" or not echoes:
            return any(_check_one(ctype, kw, r, semantics, echoes) for r in _loose_variants(response))
        # training: copies of the prompt are cut before the variants are made (a variant must not cut a copy short)
        answers = _loose_variants(remove_echoes(_lines(response), echoes))
        return any(
            _check_one(ctype, kw, r, semantics, echoes, answer=a) for r, a in zip(_loose_variants(response), answers)
        )
    except (TimeoutError, RecursionError):
        # NLTK's regex time limit (Punkt on a slow or loaded machine), Python's recursion limit: never a crash
        return False
