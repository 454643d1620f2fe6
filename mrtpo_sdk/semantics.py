"""The two semantics of the bundled verifier machinery (SQL, instruction following, tool calls).

* ``training`` (the default for rewards): each checker agrees with what the prompt asks, and the known false
  positives and negatives of the official checker are closed;
* ``official``: the official evaluation's verdicts (Spider/BIRD execution match, IFEval, BFCL's AST checker), for
  numbers comparable with published ones.

A task offers the choice as an option typed :data:`Semantics` (``-T semantics=official``, see
:mod:`mrtpo_sdk.task_options`); :mod:`mrtpo_sdk.sql`, :mod:`mrtpo_sdk.instructions` and :mod:`mrtpo_sdk.toolcall`
check ``semantics=`` against :data:`SEMANTICS`.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["DEFAULT_SEMANTICS", "SEMANTICS", "Semantics"]

Semantics = Literal["training", "official"]
"""The type of a ``semantics`` argument or task option."""

SEMANTICS: tuple[str, ...] = get_args(Semantics)
"""``("training", "official")``: the semantics every checker takes."""

DEFAULT_SEMANTICS: Semantics = "training"
