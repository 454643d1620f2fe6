"""The time left in a long loop (training steps, warm-start steps): an estimate from the steps measured so far.

No heavy imports: the trainer's progress line and the policy's warm start both use it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["StepClock", "eta_text"]


def eta_text(seconds: float | None) -> str:
    """``"ETA ~7:40"`` (minutes:seconds; ``"ETA ~1:02:05"`` past an hour), or ``""`` when nothing is measured yet.
    The ``~`` marks an estimate: the mean time per step so far times the steps left."""
    if seconds is None:
        return ""
    s = int(round(seconds))
    h, m, sec = s // 3600, s // 60 % 60, s % 60
    return f"ETA ~{h}:{m:02d}:{sec:02d}" if h else f"ETA ~{m}:{sec:02d}"


class StepClock:
    """The time left in a run, from the steps measured so far.

    The clock starts at the end of the first step of this process (:meth:`first_step_done`): the evaluation at
    step 0, loading, and the first step's warm-up are one-off costs, so a count that included them would promise a
    run several times longer than it takes. :meth:`remaining` is ``None`` until one more step has finished; after
    that it is ``(seconds since the first step) / (steps since) * (steps left)``, in seconds; later evaluations and
    checkpoints are in the mean. ``clock``: seconds, monotonic (default :func:`time.monotonic`).
    """

    def __init__(self, clock: Any = None) -> None:
        import time

        self.clock = clock or time.monotonic
        self._start: tuple[float, int] | None = None

    def first_step_done(self, step: int) -> None:
        if self._start is None:
            self._start = (self.clock(), step)

    def remaining(self, step: int, max_steps: int) -> float | None:
        if self._start is None or step <= self._start[1] or step >= max_steps:
            return None
        t0, s0 = self._start
        return (self.clock() - t0) / (step - s0) * (max_steps - step)
