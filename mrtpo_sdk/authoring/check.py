"""``mrtpo-sdk check``: run every verifier over the examples' reference completions and a few corrupted ones.

A task is ready to train when each reference completion earns its full reward from every verifier that applies
(an author's reference that fails its own verifier means a bug in one of them, or a reference in the wrong format)
and no verifier raises or changes its example. The corrupted completions (the linter's probes: ``empty``,
``no-markup`` with fences and tags stripped, ``truncated`` to its first half, ``other-reference`` from another
example) show how the rewards and blocks behave on wrong answers: a verifier that gives them full reward checks
nothing, and one whose reward is the same on every completion teaches nothing (a warning, as ``lint``'s MRT014). Every prompt training builds
(``prompt``, and ``prompt_without`` for an in-prompt task) is built too: an error in the task file's own
functions is one line naming the function, its file:line, the example and the exception.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import MRTPOError, VerifierError
from ..example_mutation import ExampleMutatedError, snapshot
from ..task import Task, example_id
from .verifier_checks import score_unmutated

__all__ = ["CheckReport", "ProbeStats", "VerifierStats", "check_prompts", "render_report", "report_json", "run_check"]

PROBE_ORDER = ("reference", "empty", "no-markup", "truncated", "other-reference")


@dataclass
class ProbeStats:
    """One verifier on one kind of completion (probe label) across the examples."""

    rewards: list[tuple[str, float]] = field(default_factory=list)  # (example id, reward)
    not_applicable: int = 0
    empty_blocks: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)  # (example id, message)
    mutations: list[tuple[str, str]] = field(default_factory=list)  # (example id, message): changed its example

    @property
    def count(self) -> int:
        return len(self.rewards) + self.not_applicable + len(self.errors)


@dataclass
class VerifierStats:
    """A verifier's outcomes, per probe label (``reference`` first)."""

    name: str
    kind: str | None
    weight: float
    probes: dict[str, ProbeStats] = field(default_factory=dict)

    def full_reward(self) -> float:
        """1.0, or the largest reward seen when the verifier uses a larger scale."""
        return max([1.0, *(r for p in self.probes.values() for _, r in p.rewards)])

    @property
    def missed(self) -> list[tuple[str, float]]:
        """(example id, reward) of the reference completions below full reward."""
        ref = self.probes.get("reference")
        full = self.full_reward()
        return [(eid, r) for eid, r in (ref.rewards if ref else []) if r < full - 1e-9]


@dataclass
class CheckReport:
    """Result of :func:`run_check`. ``ok`` is False when a reference missed full reward, a verifier raised or
    changed its example; ``warnings`` names the verifiers whose reward never changed with the completion."""

    task: str
    examples: int
    verifiers: list[VerifierStats]
    seconds: float

    @property
    def failures(self) -> list[str]:
        out = []
        for v in self.verifiers:
            if v.missed:
                ids = ", ".join(f"{eid} ({r:g})" for eid, r in v.missed[:5])
                more = f" and {len(v.missed) - 5} more" if len(v.missed) > 5 else ""
                out.append(
                    f"{v.name}: the reference completion does not earn full reward on {len(v.missed)} example(s): "
                    f"{ids}{more}; fix the verifier or the reference (they must agree)"
                )
            applied = [p for p in v.probes.values() if p.rewards or p.errors]
            if v.probes and not applied:
                out.append(
                    f"{v.name}: returned None (not applicable) for every completion of every example checked; a reward "
                    f"that never applies is never trained — return a Result where it applies"
                )
            for label in v.probes:
                errs = v.probes[label].errors
                if errs:
                    eid, msg = errs[0]
                    more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
                    out.append(f"{v.name} raised on the {label} completion of example {eid}{more}: {msg}")
            mutated = [m for p in v.probes.values() for m in p.mutations]
            if mutated:
                eid, msg = mutated[0]
                more = f" (and {len(mutated) - 1} more)" if len(mutated) > 1 else ""
                rest = msg.split(f"example {eid!r}: ", 1)[-1]  # the message without "task ..., example ...: "
                out.append(f"{v.name}, example {eid}{more}: {rest}")
        return out

    @property
    def warnings(self) -> list[str]:
        """One line per verifier whose reward never changed with the completion (``lint``'s MRT014); they do
        not make the check fail."""
        from .verifier_checks import constant_reward_message, probe_description

        out = []
        for v in self.verifiers:
            if v.weight == 0:
                continue
            by_example: dict[str, list[float]] = {}
            for cell in v.probes.values():
                for eid, r in cell.rewards:
                    by_example.setdefault(eid, []).append(r)
            msg = constant_reward_message(list(by_example.values()), probe_description(list(v.probes)))
            if msg:
                out.append(f"{v.name}: {msg}")
        return out

    @property
    def ok(self) -> bool:
        return not self.failures


def run_check(task: Task, examples: list[Any], limit: int | None = None, module: Any = None) -> CheckReport:
    """Score the reference and corrupted completions of ``examples`` (the first ``limit``) with every verifier.

    Args:
        task: the task; ``examples`` its examples.
        limit: check only the first ``limit`` examples (``None``: all).
        module: the task file's module; completions it declares for the linter (``lint_probes(example)`` and/or
            ``PROBES``) are checked too, labelled ``declared-1``, ``declared-2``, ...

    Raises:
        MRTPOError: the task has no ``reference=`` function, no examples, its reference, prompt or
            prompt_without function raised (:class:`~mrtpo_sdk.task.TaskFunctionError`), or the declared probes
            are not lists of strings.
    """
    from ..lint.probes import author_probes, make_probes

    if task.reference is None:
        raise MRTPOError(
            f"task {task.name!r} has no reference=...; check scores the reference completions, so declare "
            f"reference=fn(example) -> completion in the policy's output format"
        )
    start = time.perf_counter()
    chosen = list(examples)[: limit if limit else None]
    if not chosen:
        raise MRTPOError(f"task {task.name!r} has no examples to check")
    ids = [example_id(ex) for ex in chosen]
    references = [task.reference_completion(ex) for ex in chosen]
    check_prompts(task, chosen)
    extra = [
        author_probes(module, ex, f"task {task.name!r}, example {eid!r}") if module else []
        for ex, eid in zip(chosen, ids)
    ]
    probes = make_probes(references, extra)
    stats = [VerifierStats(v.name, v.kind, float(v.weight)) for v in task.verifiers]
    for ex, eid, ex_probes in zip(chosen, ids, probes):
        before = snapshot(ex)
        for probe in ex_probes:
            for v, st in zip(task.verifiers, stats):
                cell = st.probes.setdefault(probe.label, ProbeStats())
                try:
                    result = score_unmutated(v, ex, probe.text, task=task.name, example_id=eid, before=before)
                except ExampleMutatedError as exc:  # a failure; its result still counts in the table
                    cell.mutations.append((eid, str(exc)))
                    before = snapshot(ex)
                    result = exc.result
                except VerifierError as exc:
                    cell.errors.append((eid, str(exc)))
                    before = snapshot(ex)
                    continue
                if result is None:
                    cell.not_applicable += 1
                    continue
                cell.rewards.append((eid, result.reward))
                cell.empty_blocks += not result.block
    return CheckReport(task.name, len(chosen), stats, time.perf_counter() - start)


def check_prompts(task: Task, examples: list[Any]) -> None:
    """Build every prompt training builds for ``examples``: the rollout prompt ``P_0`` and, for an in-prompt task,
    each ``prompt_without(example, verifier)`` (the replay contexts).

    Raises:
        TaskFunctionError: ``prompt`` or ``prompt_without`` raised (one line: file:line, example id, exception);
            MRTPOError: one returned something that is not a prompt.
    """
    for ex in examples:
        task.rollout_prompt(ex)
        if task.block_placement == "in-prompt":
            blocks = [""] * len(task.verifiers)
            for k in range(len(task.verifiers)):
                task.replay_prompts(ex, blocks, k)


def _dist(rewards: list[float]) -> str:
    if not rewards:
        return "-"
    return f"{statistics.fmean(rewards):.2f} [{min(rewards):g}, {max(rewards):g}]"


def render_report(report: CheckReport, console: Any = None) -> None:
    """Print one table per verifier (rich): per completion kind, the reward distribution (mean [min, max]), the
    number at full reward, not-applicable count, empty-block rate and errors; then the failures."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console(highlight=False)
    console.print(
        f"[bold]{report.task}[/bold]: {report.examples} examples, {len(report.verifiers)} verifiers, "
        f"checked in {report.seconds:.1f} s"
    )
    console.print(
        "reward = mean [min, max] over the examples; at full = completions at full reward; n/a = the verifier "
        'returned None; empty block = share of results with block ""',
        style="dim",
        markup=False,
    )
    for v in report.verifiers:
        full = v.full_reward()
        table = Table(title=f"{v.name} (kind={v.kind}, weight={v.weight:g})", title_justify="left", expand=False)
        for col, just in [
            ("completion", "left"),
            ("n", "right"),
            ("reward [min, max]", "right"),
            ("at full", "right"),
            ("n/a", "right"),
            ("empty block", "right"),
            ("errors", "left"),
        ]:
            table.add_column(col, justify=just, no_wrap=col == "completion")  # type: ignore[arg-type]
        labels = [p for p in PROBE_ORDER if p in v.probes] + [p for p in v.probes if p not in PROBE_ORDER]
        for label in labels:
            cell = v.probes[label]
            values = [r for _, r in cell.rewards]
            at_full = sum(r >= full - 1e-9 for r in values)
            full_txt = f"{at_full}/{len(values)}" if values else "-"
            if label == "reference" and values and at_full < len(values):
                full_txt = f"[red]{full_txt}[/red]"
            empty = f"{cell.empty_blocks / len(values):.0%}" if values else "-"
            errs = ""
            if cell.errors:
                shown = ", ".join(eid for eid, _ in cell.errors[:3])
                errs = f"[red]{len(cell.errors)} ({shown}{', …' if len(cell.errors) > 3 else ''})[/red]"
            if cell.mutations:
                shown = ", ".join(eid for eid, _ in cell.mutations[:3])
                more = ", …" if len(cell.mutations) > 3 else ""
                errs += f"{' ' if errs else ''}[red]mutated {len(cell.mutations)} ({shown}{more})[/red]"
            table.add_row(label, str(cell.count), _dist(values), full_txt, str(cell.not_applicable), empty, errs)
        console.print(table)
    if report.ok:
        console.print("[green]ok[/green]: every reference completion earns full reward and no verifier raised")
    else:
        for line in report.failures:
            console.print(f"[red]FAIL[/red] {line}", soft_wrap=True)
    for line in report.warnings:
        console.print(f"[yellow]WARN[/yellow] {escape(line)}", soft_wrap=True)


def replay_hint(report: CheckReport, spec: str) -> str | None:
    """The line pointing to ``lint --replay`` when it applies: the check passed and some verifier gave a non-empty
    block on a reference completion (a block a replay would read); else ``None``."""
    blocks = any(
        len(p.rewards) > p.empty_blocks for v in report.verifiers if v.weight for label, p in v.probes.items()
        if label == "reference"
    )
    if not report.ok or not blocks:
        return None
    return (
        f"next: mrtpo-sdk lint {spec} --replay  (checks what each block does to a policy: a block that moves no "
        f"token, one that moves every token alike, two blocks on the same tokens; MRT015-MRT017)"
    )


def report_json(report: CheckReport) -> dict[str, Any]:
    """The report as plain data (for ``--format json``)."""

    def cell(c: ProbeStats) -> dict[str, Any]:
        values = [r for _, r in c.rewards]
        return {
            "n": c.count,
            "reward_mean": statistics.fmean(values) if values else None,
            "reward_min": min(values) if values else None,
            "reward_max": max(values) if values else None,
            "not_applicable": c.not_applicable,
            "empty_block_rate": (c.empty_blocks / len(values)) if values else None,
            "errors": [{"example_id": e, "message": m} for e, m in c.errors],
            "mutations": [{"example_id": e, "message": m} for e, m in c.mutations],
        }

    return {
        "task": report.task,
        "examples": report.examples,
        "seconds": report.seconds,
        "ok": report.ok,
        "failures": report.failures,
        "warnings": report.warnings,
        "verifiers": {
            v.name: {
                "kind": v.kind,
                "weight": v.weight,
                "full_reward": v.full_reward(),
                "missed": [{"example_id": e, "reward": r} for e, r in v.missed],
                "probes": {label: cell(c) for label, c in v.probes.items()},
            }
            for v in report.verifiers
        },
    }
