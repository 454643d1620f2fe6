"""Helpers shared by the replay rules (MRT015-MRT017): their thresholds and their message parts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..model import TaskContext

__all__ = ["MOST", "Q_MIN", "flagged_verifiers", "is_most", "look", "measured_with"]

#: A block "moves" a completion when its largest ``q`` on the response reaches this (JS distance, in [0, 1]).
Q_MIN = 0.25
#: "On most examples": on more than this share of the completions measured.
MOST = 0.5


def is_most(count: int, total: int) -> bool:
    """Whether ``count`` of ``total`` completions is "most" of them (more than :data:`MOST`)."""
    return total > 0 and count > MOST * total


def measured_with(ctx: TaskContext) -> str:
    """``"policy smollm2, reference completions of 8 examples"``: what the numbers were measured on."""
    data = ctx.replay
    what = "reference completions" + (f" + {data.samples} samples each" if data.samples else "")
    return f"policy {data.policy}, {what} of {len({c.example_id for c in data.completions})} examples"


def look(ctx: TaskContext, example_id: str) -> str:
    """``"look: mrtpo-sdk explain FILE --example ID --model smollm2"``, for the worst example."""
    from ..replay import explain_command

    return f"look: `{explain_command(ctx.replay, example_id)}`"


def flagged_verifiers(ctx: TaskContext, measure: Callable[[Sequence[Any]], Any]) -> Iterator[tuple[int, Any, Any]]:
    """``(k, result, worst completion)`` for each weighted verifier ``k`` on which ``measure`` fires.

    ``measure(q_per_completion)`` gets verifier ``k``'s per-token distances on every replayed completion and returns
    ``None`` (nothing to report) or a result with ``.worst``, the index of the completion to show. Nothing is
    yielded without ``--replay``."""
    data = ctx.replay
    if data is None:
        return
    for k, v in enumerate(ctx.verifiers):
        if v.weight == 0:
            continue
        got = measure([c.q[k] for c in data.completions])
        if got is not None:
            yield k, got, data.completions[got.worst]
