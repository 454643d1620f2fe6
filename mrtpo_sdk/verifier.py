"""Verifiers: one reward and one information block per call.

A verifier is a plain function ``fn(example, completion) -> Result | None`` wrapped by :func:`verifier`:

.. code-block:: python

    from mrtpo_sdk import Result, verifier

    @verifier(kind="feedback")
    def executes(example, completion):
        run = execute(example.db_path, extract_sql(completion).query)
        return Result(reward=float(run.ok), block=run.error)   # "" when the query ran: no information

Contract (spec "Setting"; the paper's "Writing a block", docs/writing-blocks.md):

* it returns exactly one :class:`Result` (or a ``(reward, block)`` pair), whose ``reward`` is a finite float
  and whose ``block`` is a ``str`` (``""`` means "no information");
* it returns ``None`` when the reward does not apply to this example: the pair is skipped in that reward's group
  statistics (as TRL does with ``None``), never scored 0;
* an exception inside it is surfaced as :class:`~mrtpo_sdk.errors.VerifierError` naming the task, the verifier, the
  example id and the file:line where it raised, never silently turned into a 0 reward; the error keeps the
  completion and the traceback (``mrtpo-sdk train`` and ``eval`` write them to ``OUTPUT_DIR/errors/``).

A verifier may also say which characters of a completion decide its reward (``deciding=``, :meth:`Verifier.locate`):
``mrtpo-sdk explain`` and ``benchmarks/credit_concentration.py`` then report how much of the reward's JS distance
lands on those tokens (:func:`mrtpo_sdk.algorithms.concentration.credit_lift`). Training never calls it.
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from .deadline import DeadlineExceeded, call_with_deadline
from .errors import DecidingError, MRTPOError, VerifierContractError, VerifierError, VerifierTimeout
from .errors import display_path as _display_path

__all__ = [
    "DEFAULT_TIME_LIMIT_S",
    "MAX_BLOCK_CHARS",
    "VERIFIER_KINDS",
    "Result",
    "Verifier",
    "Spans",
    "cap_block",
    "normalize_result",
    "normalize_spans",
    "verifier",
]

#: Seconds one verifier call may take unless ``Verifier(time_limit=...)`` says otherwise.
DEFAULT_TIME_LIMIT_S = 5.0
#: Characters a block keeps unless ``Verifier(max_block_chars=...)`` says otherwise.
MAX_BLOCK_CHARS = 2000
#: After this many time-outs in a row a verifier is not waited for again (its calls fail at once) ...
TIMEOUTS_BEFORE_SKIPPING = 3
#: ... except every this-many-th call, which runs it again (a call that returns resets the count).
SKIPPED_BETWEEN_RETRIES = 50

Spans = list[tuple[int, int]]
"""Character spans ``[start, end)`` of a completion, sorted, non-empty and not overlapping."""
DecidingFn = Callable[[Any, str], "Sequence[tuple[int, int]] | None"]

VerifierKind = Literal["format", "feedback", "reference", "constraint"]
VERIFIER_KINDS: tuple[str, ...] = ("format", "feedback", "reference", "constraint")
"""Roles a verifier can declare; the linter and the docs use them.

* ``format``: checks the shape of the output; its block states the concrete format (tags, fences) it checks.
* ``feedback``: its block is the verifier's own output for this response (e.g. the SQLite error), ``""`` if none.
* ``reference``: its block is the example's reference answer, written in the policy's output format.
* ``constraint``: one instruction constraint; with ``block_placement="in-prompt"`` the block is the constraint's
  sentence in the prompt.
"""


@dataclass(frozen=True, slots=True)
class Result:
    """What a verifier returns for one (example, completion).

    Attributes:
        reward: the reward, a finite float (usually in [0, 1]).
        block: the information block ``Z_k(i)``: a short plain-text statement of what this verifier checks for
            this example and this response. ``""`` means no information (the pair is then never replayed).
    """

    reward: float
    block: str = ""


class Verifier:
    """One reward of a task: a function ``fn(example, completion) -> Result | None`` plus its metadata.

    Args:
        fn: the scoring function. Called with the example (as the task's ``examples`` yields it) and the sampled
            completion text.
        name: the reward's name in logs and metrics; defaults to ``fn.__name__``.
        weight: ``w_k`` in spec §1; ``0`` means logged, not rewarded (never replayed either).
        kind: the verifier's role, one of :data:`VERIFIER_KINDS` (or ``None``).
        time_limit: seconds one call may take (default :data:`DEFAULT_TIME_LIMIT_S`; ``None`` = no limit). Past
            it, :meth:`score` raises :class:`~mrtpo_sdk.errors.VerifierTimeout`; in training the completion gets
            ``failure_reward`` and a block saying so, and the run goes on.
        failure_reward: the reward of a completion the verifier could not score in time (default 0.0).
        max_block_chars: blocks longer than this are cut to this many characters, the last one "…"
            (:func:`cap_block`; default :data:`MAX_BLOCK_CHARS`): model output copied into a block (an error
            message quoting a 50 KB query) must not make the replay run 50 KB contexts.
        deciding: optional ``fn(example, completion) -> list[tuple[int, int]] | None``: the character spans
            ``[start, end)`` of ``completion`` (Python string indices) that decide this reward, e.g. the tokens of a
            query that differ from the reference, or the end phrase. ``None`` or ``[]``: nothing can be located in
            this completion. Spans may come in any order and overlap; :meth:`locate` sorts and merges them. The
            credit diagnostics (``mrtpo-sdk explain``, ``benchmarks/credit_concentration.py``) use it; training
            does not. Model output is untrusted: it must return for any string (``time_limit`` applies).

    Raises:
        TypeError: ``fn`` (or ``deciding``) is not callable.
        ValueError: a non-finite or negative weight, an unknown ``kind``, a non-positive limit.
    """

    def __init__(
        self,
        fn: Callable[[Any, str], Any],
        *,
        name: str | None = None,
        weight: float = 1.0,
        kind: VerifierKind | None = None,
        time_limit: float | None = None,
        failure_reward: float = 0.0,
        max_block_chars: int | None = None,
        deciding: DecidingFn | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"a verifier wraps a function fn(example, completion); got {type(fn).__name__}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", type(fn).__name__)
        if not self.name.isidentifier():
            raise ValueError(f"verifier name {self.name!r} must be a Python identifier (it names a metric)")
        if not isinstance(weight, numbers.Real) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"verifier {self.name!r}: weight must be a finite float >= 0, got {weight!r}")
        self.weight = float(weight)
        if kind is not None and kind not in VERIFIER_KINDS:
            raise ValueError(f"verifier {self.name!r}: kind must be one of {VERIFIER_KINDS}, got {kind!r}")
        self.kind = kind
        self.time_limit = DEFAULT_TIME_LIMIT_S if time_limit is None else float(time_limit)
        if not math.isfinite(self.time_limit) or self.time_limit <= 0:
            raise ValueError(f"verifier {self.name!r}: time_limit must be > 0 seconds, got {time_limit!r}")
        if not isinstance(failure_reward, numbers.Real) or not math.isfinite(failure_reward):
            raise ValueError(f"verifier {self.name!r}: failure_reward must be a finite float, got {failure_reward!r}")
        self.failure_reward = float(failure_reward)
        self.max_block_chars = MAX_BLOCK_CHARS if max_block_chars is None else int(max_block_chars)
        if deciding is not None and not callable(deciding):
            raise TypeError(
                f"verifier {self.name!r}: deciding must be a function fn(example, completion) -> spans or None; "
                f"got {type(deciding).__name__}"
            )
        self.deciding = deciding
        self._timeouts_in_a_row = 0
        self._skipped = 0
        if self.max_block_chars < 1:
            raise ValueError(f"verifier {self.name!r}: max_block_chars must be >= 1, got {max_block_chars!r}")
        self.__doc__ = getattr(fn, "__doc__", None)
        try:
            self.source_file: str | None = inspect.getsourcefile(fn)
            self.source_line: int | None = inspect.getsourcelines(fn)[1]
        except (TypeError, OSError):
            self.source_file, self.source_line = None, None

    @property
    def location(self) -> str | None:
        """``"FILE:LINE"`` where the verifier function is defined (FILE relative to the working folder when it is
        under it), ``None`` when unknown (e.g. a builtin)."""
        if self.source_file is None:
            return None
        return f"{_display_path(self.source_file)}:{self.source_line}"

    def __repr__(self) -> str:
        return f"Verifier({self.name!r}, weight={self.weight}, kind={self.kind!r})"

    def __call__(self, example: Any, completion: str) -> Any:
        """Call the wrapped function as is (no validation); use :meth:`score` in the trainer."""
        return self.fn(example, completion)

    def score(self, example: Any, completion: str, *, task: str = "?", example_id: str = "?") -> Result | None:
        """Run the verifier and check its contract.

        Returns:
            a :class:`Result` with a finite float reward and a str block, or ``None`` (not applicable).

        Raises:
            VerifierError: the verifier raised; the message names task, verifier and example id.
            VerifierContractError: it returned several rewards/blocks, a non-finite reward, or a non-str block.
        """
        where = f"task {task!r}, verifier {self.name!r}, example {example_id!r}"
        ids = dict(task=task, verifier=self.name, example_id=example_id, completion=completion, source=self.location)
        # A verifier that ran past its limit on its last TIMEOUTS_BEFORE_SKIPPING calls is not waited for again
        # (a hanging verifier would otherwise cost time_limit on every probe of check/lint and every completion of
        # a step); every SKIPPED_BETWEEN_RETRIES-th call tries it again, and a call that returns resets the count.
        if self._timeouts_in_a_row >= TIMEOUTS_BEFORE_SKIPPING:
            self._skipped += 1
            if self._skipped % SKIPPED_BETWEEN_RETRIES:
                raise VerifierTimeout(
                    f"{where}: not run: the verifier ran past its {self.time_limit:g} s time limit on its last "
                    f"{self._timeouts_in_a_row} calls (make it faster, or raise Verifier(time_limit=...))",
                    seconds=self.time_limit,
                    **ids,
                )
        try:
            out = call_with_deadline(self.fn, (example, completion), seconds=self.time_limit)
        except DeadlineExceeded:
            self._timeouts_in_a_row += 1
            raise VerifierTimeout(
                f"{where}: the verifier ran past its {self.time_limit:g} s time limit on a completion of "
                f"{len(completion)} characters (make it faster, or raise Verifier(time_limit=...))",
                seconds=self.time_limit,
                **ids,
            ) from None
        except MRTPOError:
            raise  # already one actionable line (e.g. a broken reference in the user's data)
        except Exception as exc:  # surfaced, never scored 0
            raised_at = _raised_at(exc, self.source_file)
            what = " ".join(str(exc).split())
            what = what[:300] + " ..." if len(what) > 300 else what
            raise VerifierError(
                f"{where}: the verifier raised {type(exc).__name__}{': ' + what if what else ''}"
                f"{' at ' + raised_at if raised_at else ''} "
                f"(fix the verifier, or return None when the reward does not apply)",
                raised_at=raised_at,
                **ids,
            ) from exc
        self._timeouts_in_a_row = self._skipped = 0  # it returned in time
        try:
            result = normalize_result(out, where, **ids)
        except VerifierContractError as exc:
            if self.location:
                exc.args = (f"{exc.args[0]} (verifier at {self.location})",)
            raise
        return self.cap_block(result)

    def locate(self, example: Any, completion: str, *, task: str = "?", example_id: str = "?") -> Spans | None:
        """The character spans of ``completion`` that decide this verifier's reward (its ``deciding`` function).

        Returns:
            sorted, merged, non-empty ``[start, end)`` spans with ``0 <= start < end <= len(completion)``; ``None``
            when the verifier has no ``deciding`` function or it located nothing (returned ``None``, ``[]`` or
            only empty spans).

        Raises:
            DecidingError: the function raised, ran past ``time_limit``, or returned something other than spans
                of the completion; the one-line message names task, verifier, example and where it raised.
        """
        if self.deciding is None:
            return None
        where = f"task {task!r}, verifier {self.name!r}, example {example_id!r}: its deciding function"
        ids = dict(task=task, verifier=self.name, example_id=example_id, completion=completion, source=self.location)
        try:
            out = call_with_deadline(self.deciding, (example, completion), seconds=self.time_limit)
        except DeadlineExceeded:
            raise DecidingError(
                f"{where} ran past the {self.time_limit:g} s time limit on a completion of {len(completion)} "
                f"characters",
                **ids,
            ) from None
        except Exception as exc:
            raised_at = _raised_at(exc, getattr(getattr(self.deciding, "__code__", None), "co_filename", None))
            what = " ".join(str(exc).split())
            what = what[:300] + " ..." if len(what) > 300 else what
            raise DecidingError(
                f"{where} raised {type(exc).__name__}{': ' + what if what else ''}"
                f"{' at ' + raised_at if raised_at else ''} (fix it, or return None when nothing can be located)",
                raised_at=raised_at,
                **ids,
            ) from exc
        try:
            return normalize_spans(out, len(completion))
        except ValueError as exc:
            raise DecidingError(f"{where} {exc}", **ids) from None

    def cap_block(self, result: Result | None) -> Result | None:
        """``result`` with its block cut to ``max_block_chars`` characters (:func:`cap_block`)."""
        if result is None or len(result.block) <= self.max_block_chars:
            return result
        return Result(result.reward, cap_block(result.block, self.max_block_chars))

    def timeout_result(self, exc: VerifierTimeout) -> Result:
        """What training scores a completion that ran past the time limit: ``failure_reward`` and a block that
        says what happened."""
        return Result(self.failure_reward, f"Checking this answer took longer than {exc.seconds:g} s; it was stopped.")


def cap_block(text: str, limit: int = MAX_BLOCK_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked by a last character "…"; unchanged when it fits.

    The one length cap of block text: :meth:`Verifier.score` applies it with the verifier's ``max_block_chars``;
    verifiers that quote model output in their blocks (a SQLite error naming a token, a parameter value) apply it
    with a smaller ``limit`` to that part.

    Raises:
        ValueError: ``limit`` < 1.
    """
    if limit < 1:
        raise ValueError(f"cap_block: limit must be >= 1 character, got {limit!r}")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _raised_at(exc: BaseException, source_file: str | None) -> str | None:
    """``"FILE:LINE"`` of the innermost traceback frame in the verifier's own file (where its code failed, even
    inside a library call), else of the innermost frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return None
    own = [f for f in frames if source_file and os.path.abspath(f.filename) == os.path.abspath(source_file)]
    frame = (own or frames)[-1]
    return f"{_display_path(frame.filename)}:{frame.lineno}"


def normalize_result(out: Any, where: str, **ids: str) -> Result | None:
    """A verifier's return value as a :class:`Result` with a float reward (``None`` stays ``None``).

    Args:
        out: what the verifier returned: a :class:`Result`, a ``(reward, block)`` pair or ``None``.
        where: the message prefix naming task, verifier and example.
        ids: ``task``, ``verifier``, ``example_id`` ... for the error.

    Raises:
        VerifierContractError: several values, a non-float or non-finite reward, a block that is not a ``str``.
    """
    if out is None:
        return None
    if isinstance(out, Result):
        reward, block = out.reward, out.block
    elif isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], str):
        reward, block = out
    elif isinstance(out, (list, tuple, dict, set)):
        raise VerifierContractError(
            f"{where}: returned a {type(out).__name__} of {len(out)} values; a verifier returns one "
            f"Result(reward, block) (or None when not applicable) — split several rewards into several verifiers",
            **ids,
        )
    else:
        raise VerifierContractError(
            f"{where}: returned {type(out).__name__} {out!r:.60}; a verifier returns Result(reward, block) or None",
            **ids,
        )
    if isinstance(reward, bool):
        reward = float(reward)
    if not isinstance(reward, numbers.Real):
        raise VerifierContractError(
            f"{where}: reward is {type(reward).__name__} {reward!r:.60}; it must be one float "
            f"(a verifier may not return several rewards)",
            **ids,
        )
    reward = float(reward)
    if not math.isfinite(reward):
        raise VerifierContractError(
            f"{where}: reward is {reward}; rewards must be finite (return None when the reward does not apply)",
            **ids,
        )
    if not isinstance(block, str):
        raise VerifierContractError(
            f"{where}: block is {type(block).__name__}, not str; a verifier returns one block "
            f"(\"\" when it has no information)",
            **ids,
        )
    return Result(reward=reward, block=block)


def normalize_spans(spans: Any, length: int) -> Spans | None:
    """``spans`` (character spans ``[start, end)`` of a text of ``length`` characters) sorted and merged, empty ones
    dropped; ``None`` when nothing is left (or ``spans`` is ``None``).

    Raises:
        ValueError: ``spans`` is not a sequence of ``(start, end)`` integer pairs with
            ``0 <= start <= end <= length``; the message reads after "its deciding function".
    """
    if spans is None:
        return None
    if isinstance(spans, (str, bytes)) or not isinstance(spans, Sequence):
        raise ValueError(
            f"returned {type(spans).__name__} {spans!r:.60}; it returns a list of (start, end) pairs or None"
        )
    pairs = []
    for span in spans:
        ok = isinstance(span, Sequence) and not isinstance(span, (str, bytes)) and len(span) == 2 and all(
            isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in span
        )
        if not ok:
            raise ValueError(f"returned the span {span!r:.60}; a span is a pair of ints (start, end)")
        start, end = int(span[0]), int(span[1])
        if not 0 <= start <= end <= length:
            raise ValueError(
                f"returned the span ({start}, {end}), outside the completion's {length} characters "
                f"(a span is [start, end) with 0 <= start <= end <= len(completion))"
            )
        if start < end:
            pairs.append((start, end))
    merged: Spans = []
    for start, end in sorted(pairs):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged or None


@overload
def verifier(fn: Callable[[Any, str], Any], /) -> Verifier: ...
@overload
def verifier(
    *, name: str | None = None, weight: float = 1.0, kind: VerifierKind | None = None,
    time_limit: float | None = None, failure_reward: float = 0.0, max_block_chars: int | None = None,
    deciding: DecidingFn | None = None,
) -> Callable[[Callable[[Any, str], Any]], Verifier]: ...


def verifier(fn=None, /, *, name=None, weight=1.0, kind=None, time_limit=None, failure_reward=0.0,
             max_block_chars=None, deciding=None):
    """Decorator turning ``fn(example, completion)`` into a :class:`Verifier`; works bare or with arguments.

    ``@verifier`` or ``@verifier(kind="reference", weight=1.0, name="match", time_limit=2.0, deciding=spans_fn)``;
    the arguments are :class:`Verifier`'s.
    """

    def wrap(f: Callable[[Any, str], Any]) -> Verifier:
        return Verifier(f, name=name, weight=weight, kind=kind, time_limit=time_limit,
                        failure_reward=failure_reward, max_block_chars=max_block_chars, deciding=deciding)

    return wrap(fn) if fn is not None else wrap
