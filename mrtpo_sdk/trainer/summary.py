"""What ``mrtpo-sdk train`` prints after a run (:func:`print_summary`): steps and time, each reward first -> last
steps, the held-out metrics before -> after (:func:`print_eval_change`), and where the run's files are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["print_eval_change", "print_summary"]


def print_summary(trainer, *, task_file: str | None = None) -> None:
    """What ``train`` prints after a run: steps and time, each reward's mean first -> last steps, the dev metrics
    before -> after, and where the run's files are (from ``run.json`` and ``metrics.jsonl``)."""
    from ..policy.pretrained import ADAPTER_SUBDIR
    from .callbacks import read_metrics
    from .credit_logging import credit_pages_line

    task, config, info = trainer.task, trainer.args, trainer.run_record
    out = Path(config.output_dir)
    rows = read_metrics(out / "metrics.jsonl") if (out / "metrics.jsonl").exists() else []
    train_rows = [r for r in rows if any(k.startswith("rewards/") for k in r)]
    eval_rows = [r for r in rows if any(k.startswith("eval/") for k in r)]
    resumed = f" (resumed from {info['resumed_from']})" if info.get("resumed_from") else ""
    steps = trainer.state.global_step
    print(f"trained {steps} step{'' if steps == 1 else 's'} in {info.get('elapsed_s') or 0:.0f} s{resumed}")
    window = max(1, min(10, len(train_rows) // 2))
    if train_rows:
        print("mean reward, first step -> last step:" if window == 1
              else f"mean reward, first {window} -> last {window} steps:")
    else:
        print(f"no step was logged (logging_steps={config.logging_steps}); see {out / 'metrics.jsonl'}")
    for name in task.verifier_names if train_rows else []:
        key = f"rewards/{name}/mean"
        vals = [r[key] for r in train_rows if r.get(key) is not None]
        if vals:
            first, last = vals[:window], vals[-window:]
            print(f"  {name}: {sum(first) / len(first):.3f} -> {sum(last) / len(last):.3f}")
        else:
            print(f"  {name}: never applied (the verifier returned None for every completion)")
    if len(eval_rows) > 1:
        before, after = eval_rows[0], eval_rows[-1]
        n = len(trainer.eval_examples or [])
        k = config.num_generations_eval or 1
        mode = "greedy" if k == 1 else f"{k} samples each at T={config.temperature:g}"
        print(f"dev ({task.eval_split}, {n} examples, {mode}), step {before['step']} -> step {after['step']}:")
        task_metrics = [k for k in info.get("headline_metrics") or [] if "/" not in k]  # per-category: run.json
        print_eval_change(before, after, task_metrics, [*task.verifier_names, "all_rewards"])
    print(f"metrics: {out / 'metrics.jsonl'}")
    if (out / "rewards.png").exists():
        print(f"curves:  {out / 'rewards.png'}")
    if (out / "samples.jsonl").exists():
        print(f"samples: {out / 'samples.jsonl'}")
    credit_line = credit_pages_line(out)
    if credit_line:
        print(credit_line)
    policy_dir = info.get("policy_dir")
    if policy_dir:
        print(f"policy:  {policy_dir} (mrtpo-sdk eval {task_file or 'TASK'} --model {out})")
        if Path(policy_dir).name == ADAPTER_SUBDIR:
            print(f"         (the LoRA adapter alone, --save_merged_policy false: --model {out} loads it on "
                  f"its base model)")
        elif (out / ADAPTER_SUBDIR).is_dir():
            print(f"adapter: {out / ADAPTER_SUBDIR} (the LoRA adapter; policy/ holds the merged model)")
    else:
        print("policy:  not saved (--save_policy false)")



def print_eval_change(before: dict[str, Any], after: dict[str, Any], task_metrics: list[str],
                      others: list[str]) -> None:
    """The dev metrics before -> after training, one line each: the task's metrics first (``Task(metrics=...)``, in
    the order it returns them), then ``others`` (the rewards). The first task metric that both rows hold is the
    headline, as in ``compare``'s report: marked ``(headline)`` (and bold on a terminal); e.g. instruction following's
    ``prompt_level_strict_acc``, not its five other accuracies."""
    from rich.console import Console

    console = Console(soft_wrap=True, highlight=False)  # plain text when stdout is not a terminal
    shown = [k for k in [*task_metrics, *(k for k in others if k not in task_metrics)]
             if before.get(f"eval/{k}") is not None and after.get(f"eval/{k}") is not None]
    headline = next((k for k in shown if k in task_metrics), None)
    for key in shown:
        b, a = before[f"eval/{key}"], after[f"eval/{key}"]
        if key == headline:
            console.print(f"  {key}: {b:.3f} -> {a:.3f} (headline)", style="bold", markup=False)
        else:
            console.print(f"  {key}: {b:.3f} -> {a:.3f}", markup=False)
