"""A time limit on one call of user code (a verifier): never let model output hang a run.

In the main thread on a POSIX system the limit is a ``SIGALRM`` interval timer (the call is interrupted at the
next Python bytecode once the limit passes); elsewhere (another thread, Windows) the call runs in a daemon
thread that is abandoned at the limit. Either way :func:`call_with_deadline` returns or raises
:class:`DeadlineExceeded` within about ``seconds`` — except inside one long C call in the main thread (one huge
regular-expression match, one SQLite statement), which Python cannot interrupt; the SQL sandbox bounds its own
statements (``mrtpo_sdk.sql.sandbox``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["DeadlineExceeded", "call_with_deadline"]

T = TypeVar("T")


class DeadlineExceeded(Exception):
    """The call ran past its time limit (``seconds``: the limit)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran past the {seconds:g} s time limit")
        self.seconds = seconds


def call_with_deadline(fn: Callable[..., T], args: tuple = (), kwargs: dict | None = None,
                       seconds: float | None = None) -> T:
    """``fn(*args, **kwargs)``, stopped after ``seconds`` (``None`` or ``<= 0``: no limit).

    Raises:
        DeadlineExceeded: the limit passed first.
    """
    kwargs = kwargs or {}
    if seconds is None or seconds <= 0:
        return fn(*args, **kwargs)
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        previous_timer = signal.getitimer(signal.ITIMER_REAL)
        if previous_timer[0] > 0:  # someone else's timer is running: do not steal it
            return _in_thread(fn, args, kwargs, seconds)

        def _expired(signum, frame):
            raise DeadlineExceeded(seconds)

        previous = signal.signal(signal.SIGALRM, _expired)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return fn(*args, **kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return _in_thread(fn, args, kwargs, seconds)


def _in_thread(fn: Callable[..., T], args: tuple, kwargs: dict, seconds: float) -> T:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # re-raised in the caller
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="mrtpo-verifier")
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise DeadlineExceeded(seconds)
    if "error" in box:
        raise box["error"]
    return box["value"]
