"""MRT013 unused-noqa."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ..codes import CODES
from ..model import Finding, Rule, TaskContext
from ..static import SourceFile

_COMMENT = re.compile(r"#\s*noqa", re.I)


class UnusedNoqa(Rule):
    """## What it does
    Flags a ``# noqa: MRT…`` comment in a task file that suppresses nothing: none of the codes it names produced
    a finding on that line (or for the verifier whose ``def``/decorator line it is on). Codes of other tools
    (``# noqa: E501``) and a bare ``# noqa`` are left alone, since other linters read them too; codes that are
    not enabled for the file are not judged. An unknown ``MRT`` code is reported.

    ## Why is this bad?
    A suppression outlives the problem it was written for: the block was fixed, the verifier renamed, the rule
    changed. Left in place, it silently hides the next real problem on that line, such as a new instruction in
    a BFCL format block or an invented SQL feedback block.

    ## Example
    ```python
    @verifier(kind="feedback")  # noqa: MRT004
    def executes(example, completion):
        ...
        return Result(float(run.ok), run.error)   # fixed long ago: the block is the SQLite error
    ```

    The same holds for a ``# noqa: MRT003`` left on an instruction-following constraint verifier after its block
    was rewritten as a plain statement.

    ## Use instead
    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        ...
        return Result(float(run.ok), run.error)
    ```

    ## References
    - ruff's ``RUF100`` (unused-noqa), the model for this rule.
    - `docs/lint.md`, "Suppressing findings".
    """

    code = "MRT013"
    name = "unused-noqa"
    summary = "a `# noqa: MRT…` comment suppresses nothing"
    kinds = "the task file"
    checks = "static"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        return iter(())  # needs every other finding first: see check_file, called by the runner

    def check_file(self, path: Path, src: SourceFile, used: set[tuple[int, str]], enabled: set[str]) -> list[Finding]:
        """Findings for the ``# noqa`` comments of ``src`` whose codes suppressed nothing.

        Args:
            used: ``(line, code)`` pairs of the comments that suppressed a finding.
            enabled: the codes enabled for this file.
        """
        out = []
        lines = src.text.splitlines()
        for line, codes in sorted(src.noqa.items()):
            if not codes or self.code in codes:
                continue
            unknown = sorted(c for c in codes if c.startswith("MRT") and c not in CODES)
            unused = sorted(c for c in codes if c in CODES and c in enabled and (line, c) not in used)
            if not unknown and not unused:
                continue
            parts = []
            if unused:
                parts.append(f"unused: {', '.join(unused)}")
            if unknown:
                parts.append(f"unknown: {', '.join(unknown)}")
            text = lines[line - 1] if line - 1 < len(lines) else ""
            m = _COMMENT.search(text)
            col = m.start() + 1 if m else 1
            out.append(
                Finding(
                    self.code,
                    f"`# noqa` suppresses nothing ({'; '.join(parts)}); remove it",
                    path,
                    line,
                    col,
                    key=f"noqa:{line}",
                )
            )
        return out
