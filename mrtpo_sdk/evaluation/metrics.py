"""Headline metrics of the bundled task families, under their fields' names, for ``Task(metrics=...)``.

Each factory returns ``fn(records) -> {name: value}`` over :class:`~mrtpo_sdk.evaluation.EvalRecord` s:

* :func:`execution_accuracy` — text-to-SQL (Spider/BIRD "EX"): the share of completions whose query returns the
  reference result;
* :func:`ifeval_accuracy` — instruction following (IFEval, strict): ``prompt_level_strict_acc`` (all of a prompt's
  instructions followed) and ``inst_level_strict_acc`` (instructions followed / instructions, pooled);
* :func:`bfcl_ast_accuracy` — BFCL AST accuracy: a completion is correct when its calls match the possible answers
  (``arguments``) or, for a question whose right answer is no call, when it calls nothing (``function_choice``);
  ``ast_accuracy`` over all completions and ``ast_accuracy/<category>`` per BFCL category.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["bfcl_ast_accuracy", "execution_accuracy", "ifeval_accuracy"]

Metrics = Callable[[Sequence[Any]], dict[str, float | None]]


def _mean(vals: list[float]) -> float | None:
    return sum(vals) / len(vals) if vals else None


def execution_accuracy(reward: str = "result_match", official: Callable[[Any, str], bool | None] | None = None) -> Metrics:
    """``{"execution_accuracy": mean of reward ``reward`` over the completions it applies to}``.

    Args:
        official: ``fn(example, completion) -> bool`` giving the ``official`` (Spider/BIRD) execution-match verdict
            (``tasks/sql.py`` passes its ``official_verdict``); when some record's example is scored under another
            semantics (``example.semantics != "official"``), ``execution_accuracy_official`` is reported too, for
            numbers comparable with the official evaluation.
    """

    def metrics(records: Sequence[Any]) -> dict[str, float | None]:
        out = {"execution_accuracy": _mean([r.rewards[reward] for r in records if r.rewards.get(reward) is not None])}
        if official is not None and any(
            getattr(getattr(r, "example", None), "semantics", "training") != "official" for r in records
        ):
            verdicts = [official(r.example, r.completion) for r in records if r.rewards.get(reward) is not None]
            out["execution_accuracy_official"] = _mean([float(bool(v)) for v in verdicts if v is not None])
        return out

    return metrics


def ifeval_accuracy(prefix: str = "constraint_") -> Metrics:
    """IFEval's accuracies over the slot rewards ``constraint_1..K`` (those that apply to each prompt).

    ``prompt_level_strict_acc`` / ``inst_level_strict_acc`` come from the rewards (``training`` semantics with the
    bundled verifiers). When the records carry their :class:`~mrtpo_sdk.instructions.IFExample`, the instruction-level
    strict accuracy is also reported per constraint type (``inst_level_strict_acc/<instruction id>``, e.g.
    ``inst_level_strict_acc/startend:end_checker``: the share of that type's instructions followed, over the records'
    constraints of that type) and per scope (``inst_level_strict_acc/local``: constraints a few tokens decide, such as
    an end phrase, a title or a keyword; ``.../global``: those every token takes part in, such as no commas, lower
    case or a word count; :attr:`~mrtpo_sdk.instructions.ConstraintType.scope`), and the completions are scored in
    IFEval's loose mode (``*_loose_acc``) and with IFEval's own verdicts (``*_acc_official``, strict and loose), the
    numbers comparable with published IFEval results.
    """

    def metrics(records: Sequence[Any]) -> dict[str, float | None]:
        prompt_level, followed, total = [], 0, 0
        for r in records:
            flags = [v >= 1.0 - 1e-9 for k, v in r.rewards.items() if k.startswith(prefix) and v is not None]
            if flags:
                prompt_level.append(float(all(flags)))
                followed += sum(flags)
                total += len(flags)
        out: dict[str, float | None] = {
            "prompt_level_strict_acc": _mean(prompt_level),
            "inst_level_strict_acc": followed / total if total else None,
        }
        from mrtpo_sdk.instructions import IFExample, check, echoes_of

        scored = [r for r in records if isinstance(r.example, IFExample) and r.example.constraints]
        if not scored:
            return out
        by_type: dict[str, list[float]] = {}  # the example's j-th constraint is reward f"{prefix}{j}"
        for r in scored:
            for j, c in enumerate(r.example.constraints, 1):
                value = r.rewards.get(f"{prefix}{j}")
                if value is not None:
                    by_type.setdefault(c.id, []).append(float(value >= 1.0 - 1e-9))
        from mrtpo_sdk.instructions import SCOPES, get_constraint

        for scope in SCOPES:  # local: a few tokens decide it (end phrase, title, keyword); global: every token
            flags = [f for type_id, fs in by_type.items() if get_constraint(type_id).scope == scope for f in fs]
            if flags:
                out[f"inst_level_strict_acc/{scope}"] = _mean(flags)
        for type_id in sorted(by_type):
            out[f"inst_level_strict_acc/{type_id}"] = _mean(by_type[type_id])
        for name, semantics, loose in (
            ("loose_acc", "training", True),
            ("strict_acc_official", "official", False),
            ("loose_acc_official", "official", True),
        ):
            prompts, inst = [], []
            for r in scored:
                echoes = echoes_of(r.example) if semantics == "training" else ()
                flags = [
                    check(c.id, c.kwargs, r.completion, semantics=semantics, loose=loose, echoes=echoes)
                    for c in r.example.constraints
                ]
                prompts.append(float(all(flags)))
                inst.extend(float(f) for f in flags)
            out[f"prompt_level_{name}"] = _mean(prompts)
            out[f"inst_level_{name}"] = _mean(inst)
        return out

    return metrics


def bfcl_ast_accuracy(
    arguments: str = "arguments",
    function_choice: str = "function_choice",
    official: Callable[[Any, str], bool | None] | None = None,
) -> Metrics:
    """BFCL AST accuracy overall and per category (``example.category``).

    Args:
        official: ``fn(example, completion) -> bool`` giving the official BFCL checker's verdict, when the rewards
            use another semantics (``tasks/bfcl.py`` passes its ``official_verdict``); then ``ast_accuracy_official``
            and ``ast_accuracy_official/<category>`` are reported too, for numbers comparable with BFCL's.
    """

    def metrics(records: Sequence[Any]) -> dict[str, float | None]:
        overall: list[float] = []
        by_category: dict[str, list[float]] = {}
        off_overall: list[float] = []
        off_by_category: dict[str, list[float]] = {}
        for r in records:
            value = r.rewards.get(arguments)
            if value is None:  # no call is right (irrelevance): correct when it calls nothing
                value = r.rewards.get(function_choice)
            if value is None:
                continue
            ok = float(value >= 1.0 - 1e-9)
            overall.append(ok)
            category = getattr(r.example, "category", None)
            if category:
                by_category.setdefault(str(category), []).append(ok)
            if official is not None:
                verdict = official(r.example, r.completion)
                if verdict is not None:
                    off_overall.append(float(bool(verdict)))
                    if category:
                        off_by_category.setdefault(str(category), []).append(float(bool(verdict)))
        out: dict[str, float | None] = {"ast_accuracy": _mean(overall)}
        for category in sorted(by_category):
            out[f"ast_accuracy/{category}"] = _mean(by_category[category])
        if official is not None:
            out["ast_accuracy_official"] = _mean(off_overall)
            for category in sorted(off_by_category):
                out[f"ast_accuracy_official/{category}"] = _mean(off_by_category[category])
        return out

    return metrics
