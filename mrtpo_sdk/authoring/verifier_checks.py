"""Contract checks that ``lint``, ``check`` and ``train`` share, so that they reach the same verdict on a task.

* :func:`score_unmutated`: score one completion and fail with :class:`ExampleMutatedError` when the verifier
  changed its example (a deep copy taken before is compared with the example after). The trainer scores every
  completion of a group against the same example object, so a verifier that writes into it scores the later
  completions against a different example. ``lint`` reports it as MRT009, ``check`` as a failure.
* :func:`constant_reward_message`: a verifier that gave the same reward to every completion probed (the
  reference, the empty string, the markup stripped, its first half, another example's reference, the declared
  probes) has a zero advantage in every group and teaches nothing. ``lint`` reports it as MRT014, ``check`` as a
  warning.
* :func:`preflight`: both checks on a sample of the training examples, before any model is built; returns the
  warning lines (for ``train``) and raises on a mutated example.

Nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import MRTPOError, VerifierError
from ..example_mutation import ExampleMutatedError, changed, mutation_message, snapshot
from ..task import Task, example_id
from ..verifier import Result, Verifier

__all__ = ["constant_reward_message", "preflight", "probe_description", "score_unmutated"]

def score_unmutated(
    verifier: Verifier,
    example: Any,
    completion: str,
    *,
    task: str = "?",
    example_id: str = "?",
    before: Any = None,
) -> Result | None:
    """:meth:`Verifier.score`, then check the verifier left its example as it was.

    Args:
        before: a :func:`snapshot` of the example taken earlier (default: one taken now); after a call that
            leaves the example unchanged it stays valid for the next call.

    Raises:
        VerifierError / VerifierContractError: see :meth:`Verifier.score`.
        ExampleMutatedError: the verifier changed the example; the message names task, verifier, example and
            the first difference, and ``.result`` holds what it returned.
    """
    if before is None:
        before = snapshot(example)
    result = verifier.score(example, completion, task=task, example_id=example_id)
    diff = changed(before, example)
    if diff is not None:
        where = f"task {task!r}, verifier {verifier.name!r}, example {example_id!r}"
        at = getattr(verifier, "location", None)
        error = ExampleMutatedError(
            mutation_message(where, diff, at),
            task=task,
            verifier=verifier.name,
            example_id=example_id,
        )
        error.result, error.change = result, diff
        raise error
    return result


def constant_reward_message(rewards: Sequence[Sequence[float]], probes: str = "") -> str | None:
    """The warning for a verifier whose reward never changed with the completion, or ``None``.

    Args:
        rewards: per example, the rewards the verifier gave to its probe completions (``None`` results and
            raises left out).
        probes: how the completions were made, for the message (e.g. ``"the reference, empty, ..."``).

    Returns:
        ``None`` unless some example has two or more rewards and every example's rewards are all equal.
    """
    rows = [list(r) for r in rewards if r]
    if not rows or max(len(r) for r in rows) < 2:
        return None
    if any(max(r) - min(r) > 1e-9 for r in rows):
        return None
    n = sum(len(r) for r in rows)
    values = sorted({r[0] for r in rows})
    what = f"the same reward ({values[0]:g})" if max(values) - min(values) <= 1e-9 else "one reward per example"
    made = f": {probes}" if probes else ""
    return (
        f"returned {what} for every completion probed ({n} completions of {len(rows)} examples{made}); a reward "
        f"that does not change with the completion gives every completion of a group the same advantage (0) and "
        f"teaches nothing: make it depend on the completion, or give it weight=0 to only log it"
    )


def probe_description(labels: Sequence[str]) -> str:
    """``"reference, empty, no-markup, truncated, other-reference"``: the probe kinds seen, in order."""
    seen: list[str] = []
    for label in labels:
        kind = "declared" if label.startswith("declared-") else label
        if kind not in seen:
            seen.append(kind)
    return ", ".join(seen)


def preflight(task: Task, examples: Sequence[Any], *, task_file: str | None = None, sample: int = 20) -> list[str]:
    """The contract checks ``lint`` runs, on ``sample`` examples spread over ``examples`` (as lint samples
    them), before a model is built: returns one warning line per verifier whose reward never changed with the
    completion (empty when the task has no ``reference``, which the probes are made from).

    Args:
        task_file: the task file (``FILE.py`` or ``FILE.py@name``): the completions it declares for the linter
            (``lint_probes(example)``, ``PROBES``) are probed too.

    Raises:
        ExampleMutatedError: a verifier changed its example.
        TaskFunctionError: the task's reference function raised.
    """
    from ..lint.probes import author_probes, make_probes, sample_indexes

    if task.reference is None or not examples:
        return []
    module = None
    if task_file is not None:
        from ..loader import import_task_module, split_task_spec

        try:
            module = import_task_module(split_task_spec(str(task_file))[0])
        except MRTPOError:
            module = None
    chosen = [examples[i] for i in sample_indexes(len(examples), sample)]
    ids = [example_id(ex) for ex in chosen]
    references: list[str | None] = [task.reference_completion(ex) for ex in chosen]
    extra = [author_probes(module, ex, f"task {task.name!r}, example {eid!r}") if module else [] for ex, eid in
             zip(chosen, ids)]
    probes = make_probes(references, extra)
    table: list[list[list[float]]] = [[[] for _ in chosen] for _ in task.verifiers]
    for i, (ex, eid) in enumerate(zip(chosen, ids)):
        before = snapshot(ex)
        for probe in probes[i]:
            for k, v in enumerate(task.verifiers):
                try:
                    out = score_unmutated(v, ex, probe.text, task=task.name, example_id=eid, before=before)
                except ExampleMutatedError:
                    raise
                except VerifierError:  # surfaced by lint (MRT009) and by training when it happens there
                    before = snapshot(ex)  # a verifier that raised may have changed it: not the next one's doing
                    continue
                if out is not None:
                    table[k][i].append(out.reward)
    labels = probe_description([p.label for row in probes for p in row])
    lines = []
    for k, v in enumerate(task.verifiers):
        if v.weight == 0:
            continue
        msg = constant_reward_message(table[k], labels)
        if msg:
            lines.append(f"task {task.name!r}, verifier {v.name!r}: {msg}")
    return lines
