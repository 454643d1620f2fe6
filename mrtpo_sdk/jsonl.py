"""Reading JSON-lines files: one home for the SDK's data files, run logs and BFCL files.

:func:`read_jsonl` returns ``(line number, value)`` per non-empty line; a bad line raises :class:`JSONLineError`
naming the file and the line, and each caller turns it into its own error (``InstructionDataError``,
``BFCLDataError``, ``MRTPOError``) with its own wording.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["JSONLineError", "read_jsonl"]


class JSONLineError(ValueError):
    """A line of a JSON-lines file that is not JSON, or not a JSON object where objects are required.

    Attributes:
        path: the file; ``line``: the 1-based line number.
        cause: the :class:`json.JSONDecodeError`, or the :class:`UnicodeDecodeError` of a line that is not UTF-8
            (``None`` when the line is JSON but not an object).
    """

    def __init__(self, path: str | Path, line: int, cause: ValueError | None) -> None:
        what = f"not JSON ({cause})" if cause is not None else "not a JSON object"
        super().__init__(f"{path}:{line}: {what}")
        self.path, self.line, self.cause = path, line, cause


def read_jsonl(path: str | Path, *, objects: bool = False) -> list[tuple[int, Any]]:
    """``(line number, value)`` for every non-empty line of a JSON-lines file (UTF-8), in order.

    Args:
        path: the file (it must exist: callers say what a missing file means).
        objects: every value must be a JSON object (a dict).

    Raises:
        JSONLineError: a line is not JSON, or with ``objects`` not a JSON object.
        OSError: the file cannot be opened.
    """
    rows = []
    with Path(path).open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:  # decoded per line, so a line that is not UTF-8 is named like one that is not JSON
                value = json.loads(raw.decode("utf-8"))
            except ValueError as exc:  # UnicodeDecodeError is a ValueError
                raise JSONLineError(path, lineno, exc) from None
            if objects and not isinstance(value, dict):
                raise JSONLineError(path, lineno, None)
            rows.append((lineno, value))
    return rows
