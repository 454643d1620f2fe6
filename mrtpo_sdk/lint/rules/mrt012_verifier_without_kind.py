"""MRT012 verifier-without-kind."""

from __future__ import annotations

from collections.abc import Iterator

from ...verifier import VERIFIER_KINDS
from ..model import Finding, Rule, TaskContext


class VerifierWithoutKind(Rule):
    """## What it does
    Flags a verifier declared without ``kind=`` (``@verifier`` instead of ``@verifier(kind="format")``).

    ## Why is this bad?
    The kind says what the block is, and which block rules apply: a ``format`` block states the concrete format
    (MRT002), a ``feedback`` block is the verifier's own output and empty when it found nothing (MRT004), a
    ``reference`` block is the answer in the policy's format that the verifier itself accepts (MRT005,
    MRT007), a ``constraint`` block is one instruction constraint. Without a kind those checks are skipped.

    ## Example
    ```python
    @verifier
    def executes(example, completion): ...

    @verifier(weight=1.0)                                    # BFCL
    def call_match(example, completion): ...
    ```

    ## Use instead
    ```python
    @verifier(kind="feedback")
    def executes(example, completion): ...

    @verifier(kind="reference", weight=1.0)
    def call_match(example, completion): ...
    ```

    ## References
    - `mrtpo_sdk.verifier.VERIFIER_KINDS`: format, feedback, reference, constraint.
    - The MRTPO paper (Zhai et al., arXiv:2610.21439): a block is what reward k checks: "the format rule, the
      response's own SQLite error, the reference query, or one constraint of the instruction".
    """

    code = "MRT012"
    name = "verifier-without-kind"
    summary = "a verifier declares no kind"
    checks = "static"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        for k, v in enumerate(ctx.verifiers):
            if v.kind is None:
                yield ctx.finding(
                    self.code,
                    k,
                    f"the verifier declares no kind; pass kind= one of {', '.join(VERIFIER_KINDS)} so "
                    f"the block rules for its kind apply",
                    key="no-kind",
                )
