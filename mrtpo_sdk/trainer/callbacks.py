"""Training callbacks: ``metrics.jsonl``, the reward curves PNG, and a compact progress bar."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from ..jsonl import read_jsonl
from ..progress import StepClock, eta_text
from .runs import truncate_logs

__all__ = [
    "EvaluateAtEndCallback",
    "MetricsJSONLCallback",
    "RewardPlotCallback",
    "RichProgressCallback",
    "StepClock",
    "dev_curve_styles",
    "eta_text",
    "plot_rewards",
    "read_metrics",
]


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a ``metrics.jsonl`` file (one JSON object per logged step)."""
    return [row for _, row in read_jsonl(path)]


class MetricsJSONLCallback(TrainerCallback):
    """Appends every training log (one per ``logging_steps``) to ``OUTPUT_DIR/metrics.jsonl`` on the main process.

    A new run starts the file (and the sample logs) afresh; a run resumed from the checkpoint of step N keeps the
    rows of steps <= N and drops later ones (:func:`~mrtpo_sdk.trainer.runs.truncate_logs`).

    Each row holds ``step`` and TRL's metrics: ``rewards/<verifier>/mean``, ``reward``, ``mrtpo/replayed_fraction``,
    ``mrtpo/beta_n``, ``mrtpo/cap_factor``, ``time/generation``, ``time/scoring``, ``time/replay``, ``time/update``
    (seconds), ``loss``, ...
    """

    def __init__(self, output_dir: Path) -> None:
        self.path = Path(output_dir) / "metrics.jsonl"

    def on_train_begin(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if state.global_step > 0:  # resumed from a checkpoint: keep the rows up to it, drop the killed run's later ones
            dropped = truncate_logs(self.path.parent, state.global_step)
            gone = ", ".join(f"{n} {what}" for what, n in dropped.items() if n)
            if gone:  # never silent: these steps of the killed run are trained again
                print(f"note: resuming at step {state.global_step}: dropped the killed run's later log rows "
                      f"({gone})", flush=True)
            self.path.touch()
        else:  # a new run (MRTPOTrainer.train refused a folder holding a previous one unless overwrite_output_dir)
            self.path.write_text("", encoding="utf-8")
            (self.path.parent / "samples.jsonl").unlink(missing_ok=True)
            for page in self.path.parent.glob("credit-step*.html"):
                page.unlink()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return
        if not any(k.startswith(("rewards/", "eval/")) for k in logs):
            return  # the final train summary (train_runtime, ...) is not a step row
        # Trackers get the metrics that have a value (MRTPOTrainer drops None); the file keeps every key, as
        # Trainer's log_history does (None = no value this step).
        last = state.log_history[-1] if getattr(state, "log_history", None) else {}
        if set(logs) <= set(last):
            logs = {k: v for k, v in last.items() if k != "step"}
        row = {"step": state.global_step, **{k: _jsonable(v) for k, v in logs.items()}}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


class EvaluateAtEndCallback(TrainerCallback):
    """Evaluates after the last step too, whatever ``eval_steps`` is (the "after" of before -> after)."""

    def on_step_end(self, args, state, control, **kwargs):
        if state.max_steps and state.global_step >= state.max_steps:
            control.should_evaluate = True
        return control


class RewardPlotCallback(TrainerCallback):
    """At the end of training, writes ``OUTPUT_DIR/rewards.png``: each reward's mean vs step (matplotlib)."""

    def __init__(self, output_dir: Path, reward_names: list[str]) -> None:
        self.output_dir = Path(output_dir)
        self.reward_names = reward_names

    def on_train_end(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        metrics = self.output_dir / "metrics.jsonl"
        if metrics.exists():
            plot_rewards(read_metrics(metrics), self.reward_names, self.output_dir / "rewards.png")


_MARKERS = ("s", "o", "^", "D", "v", "P")
_LINESTYLES = ("--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 3)), (0, (8, 2)))


def dev_curve_styles(rows: list[dict[str, Any]], keys: list[str]) -> list[dict[str, Any]]:
    """How each ``eval/`` curve of the dev panel is drawn: its own marker and line style, and, for a curve equal
    to an earlier one at every step, the legend label ``"<name> (same as <earlier>)"`` and a larger hollow marker
    drawn around the earlier curve's (one size up per copy) and beneath it (``zorder`` 2, the others 3), so
    coincident curves stay visible and say why they look like one."""
    styles: list[dict[str, Any]] = []
    originals: list[tuple[str, list[tuple[Any, float]]]] = []  # (name, points) of the curves equal to no earlier one
    copies: dict[str, int] = {}
    for i, key in enumerate(keys):
        name = key[5:]
        pts = [(r["step"], float(r[key])) for r in rows if r.get(key) is not None]
        same = next((n for n, other in originals if pts and _same_points(pts, other)), None)
        if same is None:
            originals.append((name, pts))
        else:
            copies[same] = copies.get(same, 0) + 1
        styles.append(
            {
                "key": key,
                "label": name if same is None else f"{name} (same as {same})",
                "marker": _MARKERS[i % len(_MARKERS)],
                "linestyle": _LINESTYLES[i % len(_LINESTYLES)],
                "markersize": 3.0 if same is None else 3.0 + 2.5 * copies[same],
                "markerfacecolor": None if same is None else "none",
                "zorder": 3 if same is None else 2,
            }
        )
    return styles


def _same_points(a: list[tuple[Any, float]], b: list[tuple[Any, float]]) -> bool:
    return len(a) == len(b) and all(p[0] == q[0] and math.isclose(p[1], q[1], abs_tol=1e-9) for p, q in zip(a, b))


def plot_rewards(rows: list[dict[str, Any]], reward_names: list[str], path: Path) -> Path:
    """Plot ``rewards/<name>/mean`` of each reward vs ``step`` into ``path`` (PNG); evaluation rows add the dev
    value of each reward (``eval/<name>``, squares) and one panel of the other ``eval/`` metrics (the task's
    headline metrics and ``all_rewards``; equal curves are marked, see :func:`dev_curve_styles`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    skip = {"eval/seconds", "eval/completion_length"}
    extra = sorted(
        {k for r in rows for k in r if k.startswith("eval/") and k[5:] not in reward_names and k not in skip}
    )
    extra = [k for k in extra if "@" not in k][:6]
    panels = len(reward_names) + (1 if extra else 0)
    fig, axes = plt.subplots(1, panels, figsize=(4 * panels, 3.2), squeeze=False)
    for ax, name in zip(axes[0], reward_names):
        key = f"rewards/{name}/mean"
        pts = [(r["step"], r[key]) for r in rows if r.get(key) is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label="train")
        dev = [(r["step"], r[f"eval/{name}"]) for r in rows if r.get(f"eval/{name}") is not None]
        if dev:
            ax.plot([p[0] for p in dev], [p[1] for p in dev], marker="s", linestyle="--", color="black", label="dev")
            ax.legend(fontsize=7)
        ax.set_title(name)
        ax.set_xlabel("step")
        ax.set_ylabel("mean reward")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    if extra:
        ax = axes[0][-1]
        for style in dev_curve_styles(rows, extra):
            pts = [(r["step"], r[style["key"]]) for r in rows if r.get(style["key"]) is not None]
            ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                marker=style["marker"],
                linestyle=style["linestyle"],
                markersize=style["markersize"],
                markerfacecolor=style["markerfacecolor"],
                zorder=style["zorder"],
                label=style["label"],
            )
        ax.set_title("dev metrics")
        ax.set_xlabel("step")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


class RichProgressCallback(TrainerCallback):
    """A one-line progress bar (rich) with the latest mean of each reward and the replayed fraction, and the time
    left (:class:`StepClock`: none before the second step, then ``ETA ~m:ss``).

    When standard output is not a terminal (a log file, CI), it prints one plain line every 5% of the steps instead.
    """

    def __init__(self, reward_names: list[str], clock: Any = None) -> None:
        self.reward_names = reward_names
        self.progress = None
        self.task_id = None
        self.plain = False
        self.eta = StepClock(clock)

    def on_train_begin(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        import sys

        if not sys.stdout.isatty():
            self.plain = True
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("[bold]train"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[eta]}"),
            TextColumn("{task.description}"),
            transient=False,
        )
        self.progress.start()
        self.task_id = self.progress.add_task("", total=state.max_steps, eta="")

    def on_step_end(self, args, state, control, **kwargs):
        self.eta.first_step_done(state.global_step)
        if self.progress is not None:
            eta = eta_text(self.eta.remaining(state.global_step, state.max_steps))
            self.progress.update(self.task_id, completed=state.global_step, eta=eta)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not logs or not state.is_world_process_zero or (self.progress is None and not self.plain):
            return
        parts = []
        for name in self.reward_names:
            v = logs.get(f"rewards/{name}/mean")
            if isinstance(v, (int, float)):
                parts.append(f"{name}={v:.2f}")
        if isinstance(logs.get("mrtpo/replayed_fraction"), (int, float)):
            parts.append(f"replayed={logs['mrtpo/replayed_fraction']:.0%}")
        if not parts:
            return
        if self.plain:
            every = max(1, state.max_steps // 20)
            if state.global_step % every == 0 or state.global_step == state.max_steps:
                eta = eta_text(self.eta.remaining(state.global_step, state.max_steps))
                print(
                    f"step {state.global_step}/{state.max_steps} " + " ".join(parts) + (f" ({eta})" if eta else ""),
                    flush=True,
                )
        else:
            self.progress.update(self.task_id, description=" ".join(parts))

    def on_train_end(self, args, state, control, **kwargs):
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
