"""Helpers shared by the replay rules (MRT015-MRT017): their thresholds and their message parts."""

from __future__ import annotations

from ..model import TaskContext

__all__ = ["MOST", "Q_MIN", "is_most", "look", "measured_with"]

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
