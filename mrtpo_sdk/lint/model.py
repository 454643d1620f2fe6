"""Core types of the linter: findings, rules, probes and the per-task context the rules read.

A rule is a class in its own module under :mod:`mrtpo_sdk.lint.rules` with a ``code``, a ``name`` (the pattern it
flags, e.g. ``merged-blocks``), ``kinds`` (the verifier kinds it applies to, for its docs page), a docstring with
the sections *What it does / Why is this bad? / Example / Use instead / References*, and a ``check(ctx)`` method
that yields :class:`Finding` s. Static parts read ``ctx.sites`` (the syntax tree); dynamic parts read the
verifiers' outcomes on the probe completions (``ctx.outcome``), or call :meth:`TaskContext.score`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..errors import VerifierError
from ..task import Task
from ..verifier import Result, Verifier
from .static import SourceFile, VerifierSite

__all__ = ["Finding", "Rule", "Probe", "TaskContext", "Outcome"]

Outcome = Any  # Result | None (not applicable) | VerifierError (raised or broke its contract)


@dataclass
class Finding:
    """One problem found by a rule (or, with ``code=None``, a file that could not be linted).

    Attributes:
        code: the rule code (``"MRT003"``), or ``None`` for a load error (exit status 2).
        message: one line saying what is wrong and what to do.
        path: the task file; ``line``/``col`` are 1-based.
        verifier: the verifier's name, when the finding is about one.
        examples: ids of the examples where it was seen (first one is shown).
        probe: label of the probe completion that showed it (``reference``, ``empty``, ...), if any.
        noqa_lines: extra lines whose ``# noqa`` suppresses it (the verifier's decorator and ``def`` lines).
        key: what identifies the finding when merging repeats over examples (defaults to the message).
    """

    code: str | None
    message: str
    path: Path
    line: int = 1
    col: int = 1
    verifier: str | None = None
    examples: list[str] = field(default_factory=list)
    probe: str | None = None
    noqa_lines: set[int] = field(default_factory=set)
    key: str | None = None
    sampled: int = 0  # examples sampled from the task (for "on 3 of 20 examples")

    @property
    def is_error(self) -> bool:
        return self.code is None

    def merge_key(self) -> tuple:
        return (self.code, str(self.path), self.line, self.col, self.verifier, self.key or self.message)

    def context(self) -> str:
        parts = []
        if self.verifier:
            parts.append(f"verifier={self.verifier}")
        if self.examples:
            more = f" +{len(self.examples) - 1} more" if len(self.examples) > 1 else ""
            parts.append(f"example={self.examples[0]}{more}")
        if self.probe:
            parts.append(f"probe={self.probe}")
        return f" [{', '.join(parts)}]" if parts else ""


class Rule:
    """Base class of a lint rule; see the module docstring."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    kinds: ClassVar[str] = "all verifiers"
    checks: ClassVar[str] = "dynamic"  # "static", "dynamic" or "static + dynamic"
    severity: ClassVar[str] = "error"  # "warning": SARIF level and GitHub annotation (any finding exits 1)

    def check(self, ctx: "TaskContext") -> Iterator[Finding]:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Probe:
    """A completion the verifiers are run on: ``label`` says how it was made, ``text`` is the completion."""

    label: str
    text: str


@dataclass
class TaskContext:
    """Everything the rules need about one task: its code, its sampled examples and the verifier outcomes.

    Attributes:
        path, src, var, task: the task file, its parsed source, the variable holding the task, the task.
        sites: report location and block templates of verifier ``k`` (same order as ``task.verifiers``).
        examples, ids: the sampled examples and their ids.
        references: the reference completion of each sampled example (``None`` when the task has none).
        probes: the probe completions of each example (``probes[i][0]`` is the reference when there is one).
        outcomes: ``outcomes[i][p][k]``: verifier ``k`` on probe ``p`` of example ``i`` (first call).
        repeats: the same, from a second pass in reverse order (for determinism).
        prompts: ``P_0`` of each example as text (chat messages joined by newlines); ``prompts2`` a second call.
        without: for in-prompt tasks, ``without[i][k]`` = ``prompt_without(example, name_k)`` as text.
        split_examples: every example of the split the sampled ones come from (``lint --replay`` chooses its own).
        replay: what the blocks do to a policy (``lint --replay``; :mod:`mrtpo_sdk.lint.replay`), else ``None``:
            the replay rules (MRT015-MRT017) find nothing without it.
    """

    path: Path
    src: SourceFile
    var: str
    task: Task
    sites: list[VerifierSite]
    examples: list[Any]
    ids: list[str]
    references: list[str | None]
    probes: list[list[Probe]]
    outcomes: list[list[list[Outcome]]]
    repeats: list[list[list[Outcome]]]
    prompts: list[str]
    prompts2: list[str]
    without: list[list[str | None]]
    extra_errors: list[VerifierError] = field(default_factory=list)
    split_examples: list[Any] = field(default_factory=list)
    replay: Any = None  # ReplayData | None
    _cache: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ views
    @property
    def verifiers(self) -> list[Verifier]:
        return list(self.task.verifiers)

    @property
    def in_prompt(self) -> bool:
        return self.task.block_placement == "in-prompt"

    def kinds(self, *kinds: str) -> list[int]:
        """Indexes of the verifiers of the given kinds."""
        return [k for k, v in enumerate(self.task.verifiers) if v.kind in kinds]

    def result(self, i: int, p: int, k: int) -> Result | None:
        """The :class:`Result` of verifier ``k`` on probe ``p`` of example ``i``; ``None`` if n/a or it raised."""
        out = self.outcomes[i][p][k]
        return out if isinstance(out, Result) else None

    def reference_probe(self, i: int) -> int | None:
        """Index of the reference completion among example ``i``'s probes, or ``None``."""
        for p, probe in enumerate(self.probes[i]):
            if probe.label == "reference":
                return p
        return None

    def full_reward(self, k: int) -> float | None:
        """Full reward of verifier ``k``: 1.0, or the highest reward it gave on any probe when that is above 1
        (a verifier on another scale); ``None`` when it never returned a result."""
        if ("full", k) not in self._cache:
            rewards = [o.reward for rows in self.outcomes for row in rows for o in [row[k]] if isinstance(o, Result)]
            self._cache[("full", k)] = max(1.0, *rewards) if rewards else None
        return self._cache[("full", k)]

    def score(self, i: int, k: int, completion: str) -> Result | None:
        """Verifier ``k`` on an extra completion for example ``i`` (cached); a raise is recorded for MRT009."""
        key = ("score", i, k, completion)
        if key not in self._cache:
            try:
                self._cache[key] = self.task.verifiers[k].score(
                    self.examples[i], completion, task=self.task.name, example_id=self.ids[i]
                )
            except VerifierError as exc:
                exc.probe = "block-as-completion"  # type: ignore[attr-defined]
                self.extra_errors.append(exc)
                self._cache[key] = None
        return self._cache[key]

    # ------------------------------------------------------------------ findings
    def finding(
        self,
        code: str,
        k: int | None,
        message: str,
        *,
        example: int | None = None,
        probe: str | None = None,
        at: tuple[int, int] | None = None,
        key: str | None = None,
    ) -> Finding:
        """A finding about verifier ``k`` (``None``: the task), at its site unless ``at=(line, col)`` is given."""
        if k is not None:
            site = self.sites[k]
            line, col = at or (site.line, site.col)
            noqa = set(site.header_lines)
            name = self.task.verifiers[k].name
        else:
            line, col = at or self.task_site()
            noqa, name = set(), None
        return Finding(
            code=code,
            message=message,
            path=self.path,
            line=line,
            col=col,
            verifier=name,
            examples=[self.ids[example]] if example is not None else [],
            probe=probe,
            noqa_lines=noqa,
            key=key,
            sampled=len(self.examples),
        )

    def task_site(self) -> tuple[int, int]:
        """``(line, col)`` of the ``Task(...)`` assignment of this task in its file (1, 1 if not found)."""
        import ast

        tree = self.src.tree
        if tree is not None:
            for node in tree.body:
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if any(isinstance(t, ast.Name) and t.id == self.var for t in targets):
                        return node.lineno, node.col_offset + 1
        return 1, 1
