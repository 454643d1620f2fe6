"""Synthetic run folders for the compare tests: known curves, evaluation rows, timings and run.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

STEPS = 12  # logged training steps 1..12


def compare_in_fresh_python(args: list[str], cwd: Path) -> tuple[str, list[str]]:
    """Run ``mrtpo-sdk compare ARGS`` in a new interpreter: its stdout (ending in the exit code) and which of torch,
    transformers and trl it imported."""
    code = (
        "import sys; from mrtpo_sdk.cli import main; "
        f"code = main(['compare', *{args!r}]); "
        "print(code); print(','.join(m for m in ('torch', 'transformers', 'trl') if m in sys.modules))"
    )
    src = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd,
                          env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    *out, heavy = done.stdout.splitlines()
    return "\n".join(out), [m for m in heavy.split(",") if m]


def step_curve(reach: int | None, spike: int | None = None) -> list[float]:
    """Values of steps 1..STEPS. ``reach``: 0 before step reach-2, 1 from there on, so the 3-step trailing mean
    first reaches 0.8 at step ``reach`` when reach >= 4; reach 3 is 1 from step 1, reached at step 1. ``spike``: a
    single 1.0 at that step (after step 2), 0 elsewhere (never reached with smooth 3)."""
    if spike is not None:
        return [1.0 if s == spike else 0.0 for s in range(1, STEPS + 1)]
    if reach is None:
        return [0.5] * STEPS
    return [1.0 if s >= reach - 2 else 0.0 for s in range(1, STEPS + 1)]


def write_run(
    folder: Path,
    *,
    algo: str,
    seed: int | None,
    curves: dict[str, list[float | None]],
    dev_final: dict[str, float] | None = None,
    dev_initial: dict[str, float] | None = None,
    times: dict[str, float] | None = None,
    length: float = 20.0,
    task: str = "sql",
    finished: bool = True,
    run_json: bool = True,
    max_steps: int = STEPS,
    final_eval_in_train_row: bool = False,
    initial_policy: str | None = None,
) -> Path:
    """Write ``metrics.jsonl`` (+ ``run.json``) as ``mrtpo-sdk train`` does: a step-0 evaluation row, one training row
    per step, a last evaluation row (a separate row, or merged into the last training row)."""
    folder.mkdir(parents=True, exist_ok=True)
    rewards = list(curves)
    times = times or {"generation": 1.0, "scoring": 0.2, "update": 0.3}
    rows = []
    if dev_initial is not None:
        rows.append({"step": 0, "eval/seconds": 4.0, **{f"eval/{k}": v for k, v in dev_initial.items()}})
    n = len(next(iter(curves.values())))
    for i in range(n):
        row = {"step": i + 1, "loss": 0.1}
        for r in rewards:
            row[f"rewards/{r}/mean"] = curves[r][i]
        row["reward"] = sum(v or 0.0 for v in (curves[r][i] for r in rewards))
        row["completions/mean_length"] = length
        row.update({f"time/{k}": v for k, v in times.items()})
        if algo == "mrtpo":
            row["mrtpo/replayed_fraction"] = 0.5
        rows.append(row)
    if dev_final is not None:
        final = {f"eval/{k}": v for k, v in dev_final.items()}
        final["eval/seconds"] = 4.0
        if final_eval_in_train_row:
            rows[-1].update(final)
        else:
            rows.append({"step": n, **final})
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if run_json:
        info = {
            "task": task,
            "task_file": f"tasks/{task}.py",
            "algo": algo,
            "seed": seed,
            "max_steps": max_steps,
            "global_step": n if finished else n // 2,
            "finished": finished,
            "reward_names": rewards,
            "headline_metrics": ["execution_accuracy"],
            "elapsed_s": 12.0,
            "policy_dir": str(folder / "policy"),
            "args": {"seed": seed, "max_steps": max_steps},
        }
        if initial_policy is not None:
            info["initial_policy"] = initial_policy
        (folder / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return folder


# The reference experiment of the tests: 2 algos x 3 seeds, rewards fmt and exec.
#   fmt  reached at: mrtpo 4, 5, never (a spike at 6); gdpo 6, 5, 8   -> MRTPO won 1, tied 1, lost 1
#   exec reached at: mrtpo 1, 1, 1 (1.0 from step 1);  gdpo never x3  -> MRTPO won 3
#   dev execution_accuracy final: mrtpo 0.1, 0.2, 0.3;  gdpo 0.05, 0.1, 0.4 -> won 2, lost 1
#   time/step: mrtpo 1.0 + 0.2 + 0.6 + 0.2 = 2.0 s (replay 30%); gdpo 1.0 + 0.2 + 0 + 0.3 = 1.5 s
EXPERIMENT = {
    "mrtpo": {
        "fmt": [step_curve(4), step_curve(5), step_curve(None, spike=6)],
        "exec": [step_curve(3)] * 3,
        "acc": [0.1, 0.2, 0.3],
        "times": {"generation": 1.0, "scoring": 0.2, "replay": 0.6, "update": 0.2},
        "length": 20.0,
    },
    "gdpo": {
        "fmt": [step_curve(6), step_curve(5), step_curve(8)],
        "exec": [step_curve(None)] * 3,
        "acc": [0.05, 0.1, 0.4],
        "times": {"generation": 1.0, "scoring": 0.2, "update": 0.3},
        "length": 30.0,
    },
}


@pytest.fixture
def experiment(tmp_path) -> list[Path]:
    """The six run folders of EXPERIMENT under tmp_path/runs, as ``<algo>-seed<N>``."""
    folders = []
    for algo, spec in EXPERIMENT.items():
        for i, seed in enumerate((1, 2, 3)):
            folders.append(
                write_run(
                    tmp_path / "runs" / f"{algo}-seed{seed}",
                    algo=algo,
                    seed=seed,
                    curves={"fmt": spec["fmt"][i], "exec": spec["exec"][i]},
                    dev_initial={"fmt": 0.0, "exec": 0.0, "all_rewards": 0.0, "execution_accuracy": 0.0},
                    dev_final={"fmt": 0.9, "exec": 0.5, "all_rewards": 0.4, "execution_accuracy": spec["acc"][i]},
                    times=spec["times"],
                    length=spec["length"],
                    final_eval_in_train_row=(algo == "gdpo"),
                )
            )
    return folders
