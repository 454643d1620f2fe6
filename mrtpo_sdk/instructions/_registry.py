"""The registry of constraint types: id -> (checker, sentence renderer, kwargs schema).

A constraint type is keyed by its IFEval instruction id (``"keywords:existence"``,
``"length_constraints:number_words"``, ...). Its checker is a pure function ``check(kwargs, response) -> bool`` (the
``official`` semantics: IFEval's verdicts; the ``training`` checkers are in :mod:`._training`) and its renderer a pure
function ``describe(kwargs) -> str`` (the sentence the prompt carries). :func:`check` applies the IFEval *strict*
rule on top: an empty or whitespace-only response follows no instruction.
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MRTPOError
from ..semantics import SEMANTICS

__all__ = [
    "ConstraintType",
    "UnknownConstraintError",
    "ConstraintKwargsError",
    "CONSTRAINTS",
    "SCOPES",
    "register",
    "get_constraint",
    "constraint_ids",
    "normalize_kwargs",
    "check",
    "describe",
    "SEMANTICS",
    "RELATIONS",
    "LANGUAGE_NAMES",
]

RELATIONS = ("less than", "at least")
"""The two comparison relations of IFEval's counting constraints: ``count < n`` and ``count >= n``."""

LANGUAGE_NAMES: dict[str, str] = {
    "en": "English", "es": "Spanish", "pt": "Portuguese", "ar": "Arabic", "hi": "Hindi", "fr": "French",
    "ru": "Russian", "de": "German", "ja": "Japanese", "it": "Italian", "bn": "Bengali", "uk": "Ukrainian",
    "th": "Thai", "ur": "Urdu", "ta": "Tamil", "te": "Telugu", "bg": "Bulgarian", "ko": "Korean", "pl": "Polish",
    "he": "Hebrew", "fa": "Persian", "vi": "Vietnamese", "ne": "Nepali", "sw": "Swahili", "kn": "Kannada",
    "mr": "Marathi", "gu": "Gujarati", "pa": "Punjabi", "ml": "Malayalam", "fi": "Finnish",
}  # fmt: skip
"""The response languages IFEval's ``language:response_language`` accepts (ISO 639-1 code -> name)."""


class UnknownConstraintError(MRTPOError, KeyError):
    """A constraint id that is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class ConstraintKwargsError(MRTPOError, ValueError):
    """A constraint's kwargs are missing, of the wrong type, or out of range."""


# ----------------------------------------------------------------------------------------------- kwarg kinds
def _positive_int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
        raise ValueError("must be an integer >= 1")
    return int(v)


def _relation(v: Any) -> str:
    if v not in RELATIONS:
        raise ValueError(f"must be one of {list(RELATIONS)}")
    return v


def _text(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError("must be a non-empty string")
    return v


def _words(v: Any) -> list[str]:
    if isinstance(v, str) or not isinstance(v, (list, tuple)) or not v:
        raise ValueError("must be a non-empty list of strings")
    out = []
    for w in v:
        if not isinstance(w, str) or not w.strip():
            raise ValueError("must be a non-empty list of non-empty strings")
        out.append(w)
    return out


def _letter(v: Any) -> str:
    # IFEval picks a random letter for anything else (e.g. " a"); here that is an error
    if not isinstance(v, str) or len(v) != 1 or not ("a" <= v.lower() <= "z"):
        raise ValueError("must be exactly one ASCII letter a-z (no spaces)")
    return v.lower()


def _language(v: Any) -> str:
    if v not in LANGUAGE_NAMES:
        raise ValueError(f"must be one of the ISO 639-1 codes {sorted(LANGUAGE_NAMES)}")
    return v


KWARG_KINDS: dict[str, Callable[[Any], Any]] = {
    "int": _positive_int,
    "relation": _relation,
    "text": _text,
    "words": _words,
    "letter": _letter,
    "language": _language,
}


# ----------------------------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class ConstraintType:
    """One constraint type.

    Attributes:
        id: the instruction id, ``"group:name"`` (IFEval's ids for the 25 IFEval types).
        check_fn: ``fn(kwargs, response) -> bool``, pure; kwargs already normalized.
        describe_fn: ``fn(kwargs) -> str``: the constraint's sentence for the prompt.
        kwargs: kwarg name -> kind (``int``, ``relation``, ``text``, ``words``, ``letter``, ``language``).
        unseen: ``True`` for the held-out IFBench-style types (never used in training data).
        scope: ``"local"`` when a few tokens at an identifiable place decide the constraint (an end phrase, a
            title, a keyword, a marker, a word at a given position); ``"global"`` when every token takes part (a
            character class, a count or length over the whole text, the case, the language). The paper's claim
            that MRTPO's credit lands on the tokens a reward concerns bears on the local ones; evaluation reports
            instruction-level accuracy per scope (``inst_level_strict_acc/local``, ``.../global``).
        doc: one line on what is checked (the checker's docstring).
    """

    id: str
    check_fn: Callable[[Mapping[str, Any], str], bool]
    describe_fn: Callable[[Mapping[str, Any]], str]
    kwargs: Mapping[str, str] = field(default_factory=dict)
    unseen: bool = False
    scope: str = "global"
    doc: str = ""
    extra_check: Callable[[Mapping[str, Any]], None] | None = None


SCOPES = ("local", "global")
"""The values of :attr:`ConstraintType.scope`."""

CONSTRAINTS: dict[str, ConstraintType] = {}
"""Every registered constraint type, by id."""


def register(
    id: str,
    *,
    kwargs: Mapping[str, str] | None = None,
    describe: Callable[[Mapping[str, Any]], str],
    unseen: bool = False,
    scope: str = "global",
    validate: Callable[[Mapping[str, Any]], None] | None = None,
) -> Callable[[Callable[[Mapping[str, Any], str], bool]], Callable[[Mapping[str, Any], str], bool]]:
    """Decorator registering ``fn(kwargs, response) -> bool`` as the checker of constraint ``id``.

    ``scope``: ``"local"`` or ``"global"`` (:class:`ConstraintType`).

    Raises:
        ValueError: ``id`` is registered twice, a kwarg kind is unknown, or ``scope`` is neither ``"local"`` nor
            ``"global"``.
    """
    if scope not in SCOPES:
        raise ValueError(f"constraint {id!r}: scope must be one of {', '.join(SCOPES)}, got {scope!r}")

    def wrap(fn: Callable[[Mapping[str, Any], str], bool]) -> Callable[[Mapping[str, Any], str], bool]:
        if id in CONSTRAINTS:
            raise ValueError(f"constraint {id!r} registered twice")
        for name, kind in (kwargs or {}).items():
            if kind not in KWARG_KINDS:
                raise ValueError(f"constraint {id!r}: kwarg {name!r} has unknown kind {kind!r}")
        CONSTRAINTS[id] = ConstraintType(
            id=id,
            check_fn=fn,
            describe_fn=describe,
            kwargs=dict(kwargs or {}),
            unseen=unseen,
            scope=scope,
            doc=(fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else "",
            extra_check=validate,
        )
        return fn

    return wrap


def constraint_ids(*, unseen: bool | None = None) -> list[str]:
    """The registered ids, sorted; ``unseen=True/False`` selects the held-out / the training types."""
    return sorted(i for i, c in CONSTRAINTS.items() if unseen is None or c.unseen == unseen)


def get_constraint(id: str) -> ConstraintType:
    """The constraint type ``id``.

    Raises:
        UnknownConstraintError: ``id`` is not registered; the message lists the closest known ids.
    """
    try:
        return CONSTRAINTS[id]
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(id), list(CONSTRAINTS), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownConstraintError(
            f"unknown constraint id {id!r}{hint} (known ids: mrtpo_sdk.instructions.constraint_ids())"
        ) from None


def normalize_kwargs(id: str, kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate and normalize the kwargs of constraint ``id``.

    Keys whose value is ``None`` are dropped first (IFEval's JSONL rows carry the union of all kwarg names, unused
    ones set to null). Every kwarg the type declares is then required.

    Returns:
        a new dict with exactly the declared kwargs, normalized (letters lower-cased, texts as given).

    Raises:
        UnknownConstraintError: ``id`` is unknown.
        ConstraintKwargsError: a kwarg is missing, unexpected, or of the wrong type/range; the message names it.
    """
    ctype = get_constraint(id)
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, Mapping):
        raise ConstraintKwargsError(f"constraint {id!r}: kwargs must be a mapping, got {type(kwargs).__name__}")
    given = {k: v for k, v in kwargs.items() if v is not None}
    extra = sorted(set(given) - set(ctype.kwargs))
    if extra:
        raise ConstraintKwargsError(
            f"constraint {id!r}: unexpected kwargs {extra}; it takes {sorted(ctype.kwargs) or 'none'}"
        )
    out: dict[str, Any] = {}
    for name, kind in ctype.kwargs.items():
        if name not in given:
            raise ConstraintKwargsError(f"constraint {id!r}: kwarg {name!r} is missing (takes {sorted(ctype.kwargs)})")
        try:
            out[name] = KWARG_KINDS[kind](given[name])
        except ValueError as exc:
            raise ConstraintKwargsError(f"constraint {id!r}: kwarg {name!r}={given[name]!r} {exc}") from None
    if ctype.extra_check is not None:
        try:
            ctype.extra_check(out)
        except ValueError as exc:
            raise ConstraintKwargsError(f"constraint {id!r}: {exc}") from None
    return out



def describe(id: str, kwargs: Mapping[str, Any] | None) -> str:
    """The sentence stating constraint ``id`` with ``kwargs`` (what the prompt carries, and the replay block).

    Raises:
        UnknownConstraintError / ConstraintKwargsError: bad id or kwargs.
    """
    ctype = get_constraint(id)
    return ctype.describe_fn(normalize_kwargs(id, kwargs))
