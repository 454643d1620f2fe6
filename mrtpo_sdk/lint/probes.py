"""Probes: the completions that lint (MRT rules) and ``mrtpo-sdk check`` score besides the references.

Per sampled example: the reference, ``empty``, ``no-markup``, ``truncated``, ``other-reference``, and the probes
the task file declares (``lint_probes(example)`` and/or ``PROBES``). Public: :mod:`mrtpo_sdk.lint.runner`,
:mod:`mrtpo_sdk.authoring.check` and :mod:`mrtpo_sdk.authoring.verifier_checks` use the same ones.
"""

from __future__ import annotations

from typing import Any

from ..errors import MRTPOError
from . import text as T
from .model import Probe

__all__ = ["PROBES_CONSTANT", "PROBES_FUNCTION", "author_probes", "make_probes", "sample_indexes"]

PROBES_FUNCTION = "lint_probes"
PROBES_CONSTANT = "PROBES"


def sample_indexes(n: int, k: int) -> list[int]:
    """``k`` indexes spread evenly over ``range(n)`` (all of them when ``n <= k``); deterministic."""
    if n <= k:
        return list(range(n))
    return sorted({(i * n) // k for i in range(k)})


def author_probes(module: Any, example: Any, where: str) -> list[str]:
    """Probes declared in the task file: ``lint_probes(example) -> list[str]`` and/or ``PROBES = [str, ...]``.

    Raises:
        MRTPOError: they are not a list of strings.
    """
    out: list[str] = []
    fn = getattr(module, PROBES_FUNCTION, None)
    if callable(fn):
        try:
            got = fn(example)
        except Exception as exc:
            raise MRTPOError(f"{where}: {PROBES_FUNCTION}(example) raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(got, (list, tuple)) or not all(isinstance(s, str) for s in got):
            raise MRTPOError(f"{where}: {PROBES_FUNCTION}(example) must return a list of completion strings")
        out.extend(got)
    const = getattr(module, PROBES_CONSTANT, None)
    if const is not None:
        if not isinstance(const, (list, tuple)) or not all(isinstance(s, str) for s in const):
            raise MRTPOError(f"{where}: {PROBES_CONSTANT} must be a list of completion strings")
        out.extend(const)
    return out


def make_probes(references: list[str | None], extra: list[list[str]]) -> list[list[Probe]]:
    """Per example: the reference, ``empty``, ``no-markup`` (fences/tags stripped), ``truncated`` (first half),
    ``other-reference`` (the next sampled example's reference that differs: right format, wrong content), then
    the probes the task file declares (``declared-1``, ...)."""
    probes: list[list[Probe]] = []
    n = len(references)
    for i, ref in enumerate(references):
        cand: list[Probe] = []
        if ref is not None:
            cand.append(Probe("reference", ref))
        cand.append(Probe("empty", ""))
        if ref:
            cand.append(Probe("no-markup", T.strip_markup(ref)))
            cand.append(Probe("truncated", ref[: len(ref) // 2]))
            for j in range(1, n):
                other = references[(i + j) % n]
                if other is not None and other.strip() != ref.strip():
                    cand.append(Probe("other-reference", other))
                    break
        cand.extend(Probe(f"declared-{j + 1}", s) for j, s in enumerate(extra[i]))
        seen: set[str] = set()
        unique = []
        for p in cand:
            if p.text not in seen:
                seen.add(p.text)
                unique.append(p)
        probes.append(unique)
    return probes
