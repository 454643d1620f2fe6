"""The train matrix of ``mrtpo-sdk compare TASK_FILE``: every (seed, algo) pair trained in-process.

For each seed, for each algo (in the order given), the run goes to ``OUTPUT_DIR/<algo>-seed<N>`` through
``mrtpo_sdk.trainer.cli.train_command([task, "--algo", algo, "--seed", N, "--output_dir", folder, *train_flags])``. All
algos of one seed start from the same initial policy (the embedded policy is built deterministically from
``--seed``; with ``--model`` it is the same checkpoint) and see the same prompts in the same order (TRL's sampler is
seeded by ``--seed``), so the runs of a seed differ only by the algorithm.

A folder whose ``run.json`` says ``finished: true`` for the same task, algo and seed (and the same ``max_steps`` when
the train flags set ``--max_steps``), trained by the matrix with the same train flags and ``--config`` file values
(``compare_flags.json``) and,
on the embedded policy, started from the policy this seed starts from with the current task data and build (its
cache folder, whose name carries the key of everything the build reads: other task data or another build gives
another folder) is reused, not retrained; any other run in the folder (unfinished, no ``run.json``, other settings, another initial policy) is
trained again, which the progress output says in one line.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import MRTPOError

__all__ = ["MatrixRun", "format_duration", "plan_matrix", "reuse_status", "run_matrix"]


@dataclass
class MatrixRun:
    """One cell of the matrix: ``reuse`` tells whether its folder already holds the finished run; ``note`` is the
    one-line reason (empty for a new folder)."""

    algo: str
    seed: int
    path: Path
    reuse: bool
    note: str = ""


def format_duration(seconds: float) -> str:
    """``"42s"``, ``"6m12s"``, ``"1h02m"``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


#: Written into each run folder the matrix trains: the train flags it was trained with (the reuse check).
FLAGS_FILE = "compare_flags.json"


def reuse_status(
    path: Path,
    *,
    task: str,
    algo: str,
    seed: int,
    max_steps: int | None,
    train_flags: Sequence[str] | None = None,
    initial_policy: Callable[[int], str | None] | None = None,
) -> tuple[bool, str]:
    """Whether ``path`` already holds this finished run, and the one-line reason when it is (re)trained.

    ``initial_policy(seed)``: the folder of the embedded policy this seed's run starts from with the current task
    data and policy build (``None``: not the embedded policy); a finished run that started from another one (other
    task data or another build) is trained again. Called only for a run that passes every other check."""
    run_json = path / "run.json"
    if not path.exists() or not any(path.iterdir()):
        return False, ""
    if not run_json.is_file():
        return False, "re-running: the folder has no run.json, so whether its run finished is unknown"
    try:
        info: dict[str, Any] = json.loads(run_json.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, OSError):
        return False, "re-running: its run.json is not readable"
    if not isinstance(info, dict):
        return False, "re-running: its run.json is not a JSON object"
    seed_of = info.get("seed", (info.get("args") or {}).get("seed"))
    if info.get("algo") != algo or seed_of != seed:
        return False, f"re-running: the folder holds a run of {info.get('algo')} seed {seed_of}"
    if info.get("task") not in (None, task):
        return False, f"re-running: the folder holds a run of task {info.get('task')!r}"
    if not info.get("finished"):
        done = info.get("global_step")
        of = info.get("max_steps")
        at = f" (step {done} of {of})" if done is not None and of is not None else ""
        return False, f"re-running: the folder holds an unfinished run{at}"
    if max_steps is not None and info.get("max_steps") != max_steps:
        return False, f"re-running: the folder holds a finished run of {info.get('max_steps')} steps, not {max_steps}"
    if not (path / "metrics.jsonl").is_file():
        return False, "re-running: the folder has no metrics.jsonl"
    if train_flags is not None:
        try:
            recorded = json.loads((path / FLAGS_FILE).read_text(encoding="utf-8"))
            stored = recorded.get("train_flags")
        except (OSError, ValueError, AttributeError):
            recorded, stored = {}, None
        if stored is None and list(train_flags):
            return False, f"re-running: the train flags of that run are unknown (no {FLAGS_FILE})"
        if stored is not None and list(stored) != list(train_flags):
            return False, f"re-running: it was trained with other train flags ({' '.join(stored) or 'none'})"
        config_text = _config_text(train_flags)
        if config_text is not None and recorded.get("config") != config_text:
            return False, "re-running: its --config file says something else now (or what it said is unknown)"
    expected = initial_policy(seed) if initial_policy is not None else None
    if expected is not None:
        started = _started_from(info)
        if started is None:
            return False, "re-running: its run.json does not say which initial policy it started from"
        if Path(started).name != Path(expected).name:
            return False, (
                f"re-running: it started from the policy {Path(started).name}, not {Path(expected).name} (the task's "
                f"data or the policy build changed since)"
            )
    return True, f"finished run reused ({info.get('global_step', info.get('max_steps'))} steps)"


def _config_text(train_flags: Sequence[str]) -> str | None:
    """What the train flags' ``--config`` file says, as canonical JSON of its YAML values (read as train reads it:
    comments, order and layout do not count); ``None`` when no file is given."""
    from ..trainer.arguments import config_file_values, train_flag_value

    if not train_flag_value(list(train_flags), "config"):
        return None
    return json.dumps(config_file_values(list(train_flags)), sort_keys=True, default=str)


def _started_from(info: dict[str, Any]) -> str | None:
    """The initial policy folder a run recorded (``initial_policy``; a ``run.json`` without that key: the end of its
    ``policy`` label, "embedded bootstrap policy (...) from <folder>")."""
    if isinstance(info.get("initial_policy"), str):
        return info["initial_policy"]
    label = info.get("policy")
    if isinstance(label, str) and label.startswith("embedded bootstrap policy") and " from " in label:
        return label.rsplit(" from ", 1)[1]
    return None


def embedded_policy_dirs(task_spec: str, train_flags: Sequence[str]) -> Callable[[int], str | None] | None:
    """``seed -> folder`` of the embedded policy a ``train`` with these flags starts from (computed on first use, the
    task's corpus once; ``--data``, ``-T``, ``--policy_preset`` and ``--policy_seed`` from the flags or their
    ``--config`` file), or
    ``None`` when they give ``--model`` (a checkpoint or model the user names)."""
    from ..trainer.arguments import train_setting, train_task_options

    flags = list(train_flags)
    if train_setting(flags, "model") is not None or train_setting(flags, "model_name_or_path") is not None:
        return None
    corpus: dict[str, Any] = {}

    def folder(seed: int) -> str | None:
        from ..loader import load_task
        from ..policy.for_task import task_policy_dir

        if "task" not in corpus:
            try:
                task = load_task(task_spec, options=train_task_options(flags))
                corpus["task"], corpus["examples"] = task, task.load_examples("train", train_setting(flags, "data"))
            except MRTPOError:
                return None  # train reports it
        preset = train_setting(flags, "policy_preset") or "small"
        policy_seed = train_setting(flags, "policy_seed")
        try:
            policy_seed = seed if policy_seed is None else int(policy_seed)
        except (TypeError, ValueError):
            return None  # train reports the bad value in its own line
        try:
            return str(task_policy_dir(corpus["task"], corpus["examples"], seed=policy_seed, preset=preset))
        except MRTPOError:
            return None  # no embedded policy can be built (e.g. no reference): train says so in its own line

    return folder


def plan_matrix(
    output_dir: Path,
    task: str,
    algos: Sequence[str],
    seeds: Sequence[int],
    max_steps: int | None,
    train_flags: Sequence[str] | None = None,
    initial_policy: Callable[[int], str | None] | None = None,
) -> list[MatrixRun]:
    """The matrix cells in training order: seeds outer, algos inner (``initial_policy``: as :func:`reuse_status`)."""
    cells = []
    for seed in seeds:
        for algo in algos:
            path = Path(output_dir) / f"{algo}-seed{seed}"
            reuse, note = reuse_status(
                path,
                task=task,
                algo=algo,
                seed=seed,
                max_steps=max_steps,
                train_flags=train_flags,
                initial_policy=initial_policy,
            )
            cells.append(MatrixRun(algo, seed, path, reuse, note))
    return cells


def run_matrix(
    task_spec: str,
    task: str,
    algos: Sequence[str],
    seeds: Sequence[int],
    output_dir: str | Path,
    train_flags: Sequence[str] = (),
    *,
    log: Callable[[str], None] = lambda line: print(line, flush=True),
    clock: Callable[[], float] = time.monotonic,
) -> list[MatrixRun]:
    """Train (or reuse) every cell; return the cells in order. A training that fails stops the matrix with an error
    naming the run (the finished runs before it are reused by the next call)."""
    from ..trainer import cli  # looked up at call time: tests replace trainer.cli.train_command

    output_dir = Path(output_dir)
    from ..trainer.arguments import train_flag_value
    from ..trainer.runs import previous_run_files

    raw_steps = train_flag_value(list(train_flags), "max_steps")
    try:
        max_steps = int(raw_steps) if raw_steps is not None else None
    except ValueError:
        max_steps = None  # train reports the bad value
    cells = plan_matrix(
        output_dir, task, algos, seeds, max_steps, list(train_flags), embedded_policy_dirs(task_spec, train_flags)
    )
    start = clock()
    durations: list[float] = []
    to_train = sum(not c.reuse for c in cells)
    for i, cell in enumerate(cells, 1):
        head = f"[{i}/{len(cells)}] {cell.algo} seed {cell.seed} -> {cell.path}"
        if cell.reuse:
            log(f"{head}: {cell.note}")
            continue
        timing = f"elapsed {format_duration(clock() - start)}"
        if durations:
            timing += f", ETA ~{format_duration(sum(durations) / len(durations) * (to_train - len(durations)))}"
        log(f"{head} ({timing})")
        if cell.note:
            log(f"      {cell.note}")
        began = clock()
        argv = [task_spec, "--algo", cell.algo, "--seed", str(cell.seed), "--output_dir", str(cell.path), *train_flags]
        if previous_run_files(cell.path) and train_flag_value(list(train_flags), "overwrite_output_dir") is None:
            argv += ["--overwrite_output_dir", "true"]  # the note above said why this run is trained again
        try:
            code = cli.train_command(argv)
        except MRTPOError as exc:
            raise MRTPOError(f"{cell.algo} seed {cell.seed} ({cell.path}): {exc}") from exc
        if code != 0:
            raise MRTPOError(
                f"training {cell.algo} seed {cell.seed} ({cell.path}) stopped with exit status {code}; the runs "
                f"finished before it are reused when compare is run again"
            )
        if cell.path.is_dir():
            recorded = {"train_flags": list(train_flags), "config": _config_text(train_flags)}
            (cell.path / FLAGS_FILE).write_text(json.dumps(recorded) + "\n", encoding="utf-8")
        durations.append(clock() - began)
    return cells
