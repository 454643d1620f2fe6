"""The run folder (``output_dir``): what a run writes, what counts as a previous run, resuming from a checkpoint,
keeping the logs whole.

A run folder holds ``run.json``, ``metrics.jsonl``, ``samples.jsonl``, ``credit-step<N>.html``, ``rewards.png``,
``policy/`` (or ``adapter/``), ``errors/`` and Trainer's ``checkpoint-<step>/`` folders, written by
:class:`~mrtpo_sdk.trainer.MRTPOTrainer` whether ``mrtpo-sdk train`` or a Python script started it. Rules (a run is
never lost or silently replaced):

* a new run into a folder that holds a previous run is refused unless ``overwrite_output_dir`` is set (then the old
  run's files are removed, with a note naming them) or the run resumes from a checkpoint;
* a resumed run keeps every log row up to the checkpoint's step and drops the killed run's rows after it (those
  steps are trained again), so ``metrics.jsonl`` ends with every step exactly once;
* a checkpoint is complete when Trainer wrote its ``trainer_state.json`` (written last); ``resume`` skips an
  incomplete one with a note.

``run.json`` (:func:`run_record`, :func:`end_of_run`) is written when training starts and completed when it ends,
however it ends. Keys: ``task``, ``task_file``, ``task_options`` (every option's value), ``data`` (the dataset
passed to the task's examples function, ``null``: its bundled data), ``algo``, ``seed``, ``max_steps``, ``status`` (``"running"``, then
``"finished"``; ``"stopped"`` when a callback ended it before ``max_steps``; ``"interrupted"`` on Ctrl-C;
``"error"``), ``global_step`` (optimizer steps done; a run stopped by an error failed in step ``global_step + 1``),
``finished`` (``status == "finished"``), ``error`` (the error's one line, ``null`` otherwise), ``reward_names``,
``policy`` (the initial policy, in words), ``initial_policy`` (its id or folder), ``warm_start``, ``policy_dir``
(where the trained policy was saved, ``null`` when it was not), ``resumed_from``, ``args`` (every
:class:`~mrtpo_sdk.trainer.MRTPOConfig` field), and at the end ``elapsed_s``, ``eval_before`` / ``eval_after`` (the
first and last held-out evaluation, when there were two), ``headline_metrics``; the CLI adds ``script_args`` and
``model_args``.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import MRTPOError

__all__ = [
    "RUN_FILES",
    "absolute_step_settings",
    "check_resume_matches",
    "complete_checkpoints",
    "end_of_run",
    "prepare_output_dir",
    "previous_run_files",
    "quiet_saving",
    "resolve_checkpoint",
    "run_record",
    "truncate_logs",
    "write_run_json",
]

#: Files and folders of a run (globs relative to the run folder).
RUN_FILES = (
    "run.json",
    "metrics.jsonl",
    "samples.jsonl",
    "credit-step*.html",
    "rewards.png",
    "policy",
    "adapter",
    "errors",
    "checkpoint-*",
)
TRAINER_STATE = "trainer_state.json"
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def previous_run_files(output_dir: str | Path) -> list[Path]:
    """The files of a previous run in ``output_dir`` (empty list: the folder is new, empty or holds none)."""
    out = Path(output_dir)
    if not out.is_dir():
        return []
    found: list[Path] = []
    for pattern in RUN_FILES:
        found.extend(sorted(out.glob(pattern)))
    return [p for p in found if not (p.name == "metrics.jsonl" and p.stat().st_size == 0)]


def prepare_output_dir(
    output_dir: str | Path, *, overwrite: bool, log: Callable[[str], None] = print
) -> None:
    """Check that a new (not resumed) run may write into ``output_dir``.

    Raises:
        MRTPOError: the folder holds a previous run and ``overwrite`` is False (one line: the files found and the
            three ways on: ``--overwrite_output_dir true``, ``--resume_from_checkpoint true``, another folder).
    """
    found = previous_run_files(output_dir)
    if not found:
        return
    if _took_no_step(Path(output_dir), found):  # e.g. a bad setting stopped it before step 1: nothing to lose
        for path in found:
            if path.name == "errors":
                continue  # its details files stay (they never overwrite each other)
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        log(f"note: {output_dir} held a run that stopped before its first step; starting over")
        return
    names = ", ".join(p.name + ("/" if p.is_dir() else "") for p in found[:6]) + (", ..." if len(found) > 6 else "")
    if not overwrite:
        raise MRTPOError(
            f"{output_dir} holds a previous run ({names}); pass --overwrite_output_dir true to replace it, "
            f"--resume_from_checkpoint true to continue it, or another --output_dir (from Python: "
            f"overwrite_output_dir=True, train(resume_from_checkpoint=True))"
        )
    for path in found:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    log(f"note: --overwrite_output_dir: removed the previous run in {output_dir} ({names})")


def _took_no_step(out: Path, found: list[Path]) -> bool:
    """The folder's run stopped before its first optimizer step: no checkpoint, no policy, no training row, and
    ``run.json`` says ``global_step`` 0."""
    names = {p.name for p in found}
    if any(n.startswith("checkpoint-") or n in ("policy", "adapter") for n in names):
        return False
    info = out / "run.json"
    if info.is_file():
        try:
            if json.loads(info.read_text(encoding="utf-8")).get("global_step", 0) != 0:
                return False
        except (ValueError, OSError):  # not JSON, not UTF-8, unreadable
            return False
    metrics = out / "metrics.jsonl"
    if metrics.is_file():
        for line in metrics.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and any(k.startswith("rewards/") for k in row):
                return False
    return True


def complete_checkpoints(folder: str | Path, log: Callable[[str], None] | None = None) -> list[Path]:
    """``checkpoint-<step>`` folders of ``folder`` with their ``trainer_state.json``, latest first; an incomplete
    one (the run was killed while saving it) is skipped, with a note through ``log``."""
    found = []
    for path in Path(folder).iterdir() if Path(folder).is_dir() else []:
        m = _CHECKPOINT.match(path.name)
        if m and path.is_dir():
            found.append((int(m.group(1)), path))
    complete = []
    for _, path in sorted(found, reverse=True):
        if (path / TRAINER_STATE).is_file():
            complete.append(path)
        elif log is not None:
            log(f"note: skipping {path}: incomplete checkpoint (no {TRAINER_STATE}; the run stopped while saving it)")
    return complete


def resolve_checkpoint(
    value: str | bool | None, output_dir: str | Path, log: Callable[[str], None] = print
) -> str | None:
    """The checkpoint folder that ``resume_from_checkpoint=value`` names, or ``None`` for no resume.

    ``value``: ``None`` / ``False`` / ``"false"`` / ``""`` = no resume; ``True`` / ``"true"`` = the latest complete
    checkpoint of ``output_dir``; a path = that checkpoint, or, for a run folder, its latest complete checkpoint.

    Raises:
        MRTPOError: no such folder, no complete checkpoint in it, or an incomplete checkpoint named explicitly.
    """
    if value is None or value is False or (isinstance(value, str) and value.strip().lower() in ("", "false", "no")):
        return None
    if value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "latest")):
        where = Path(output_dir)
        label = f"--resume_from_checkpoint true: output_dir {output_dir}"
    else:
        where = Path(str(value)).expanduser()
        label = f"--resume_from_checkpoint {value}"
        if not where.is_dir():
            raise MRTPOError(f"{label}: no such folder")
        if _CHECKPOINT.match(where.name):
            if not (where / TRAINER_STATE).is_file():
                raise MRTPOError(
                    f"{label}: incomplete checkpoint (no {TRAINER_STATE}; the run stopped while saving it); resume "
                    f"from an earlier one or from the run folder (its latest complete checkpoint)"
                )
            return str(where)
    latest = complete_checkpoints(where, log)
    if not latest:
        raise MRTPOError(
            f"{label} has no complete checkpoint-<step> folder to resume from (save them with --save_strategy steps "
            f"--save_steps N)"
        )
    return str(latest[0])


def truncate_logs(output_dir: str | Path, step: int) -> dict[str, int]:
    """Keep the log rows of steps ``<= step`` (a resumed run's checkpoint) and drop the rest: ``metrics.jsonl`` and
    ``samples.jsonl`` rows, ``credit-step<N>.html`` pages with N > step. Returns the number of rows/pages dropped per
    file."""
    out = Path(output_dir)
    dropped: dict[str, int] = {}
    for name in ("metrics.jsonl", "samples.jsonl"):
        path = out / name
        if not path.is_file():
            continue
        kept, gone = [], 0
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                row_step = json.loads(line).get("step")
            except (json.JSONDecodeError, AttributeError):
                gone += 1  # a line cut by the kill
                continue
            if isinstance(row_step, int) and row_step > step:
                gone += 1
            else:
                kept.append(line)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
        tmp.replace(path)
        dropped[name] = gone
    pages = 0
    for page in out.glob("credit-step*.html"):
        m = re.match(r"credit-step(\d+)\.html$", page.name)
        if m and int(m.group(1)) > step:
            page.unlink()
            pages += 1
    dropped["credit pages"] = pages
    return dropped


def jsonable(value: Any) -> Any:
    """``value`` when JSON can write it, else its ``str``."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def run_record(trainer: Any, *, resumed_from: str | None) -> dict[str, Any]:
    """``run.json`` as a run starts: what was run (task, algo, seed, every setting, the initial policy) and
    ``status: "running"``. ``trainer.run_info`` (the constructor's ``run_info``) adds to it."""
    info = dict(trainer.run_info)
    args = trainer.args
    record: dict[str, Any] = {
        "task": trainer.task.name,
        "task_file": info.pop("task_file", None),
        "task_options": {k: jsonable(v) for k, v in getattr(trainer.task, "option_values", {}).items()},
        "data": jsonable(info.pop("data", None)),
        "algo": args.algo,
        "seed": args.seed,
        "max_steps": args.max_steps,
        "status": "running",
        "global_step": 0,
        "finished": False,
        "error": None,
        "reward_names": list(trainer.task.verifier_names),
        "policy": info.pop("policy", None),
        "initial_policy": info.pop("initial_policy", None),
        "model_folder": info.pop("model_folder", None),
        "warm_start": info.pop("warm_start", None),
        "policy_dir": None,
        "resumed_from": resumed_from,
        "args": {k: jsonable(v) for k, v in args.to_dict().items()},
    }
    record.update({k: jsonable(v) for k, v in info.items()})
    return record


def end_of_run(trainer: Any, status: str, *, error: str | None, policy_dir: Path | None,
               elapsed_s: float) -> dict[str, Any]:
    """The keys ``run.json`` gets when a run ends: ``status``, ``global_step``, ``finished``, ``error``,
    ``elapsed_s``, ``policy_dir``, the first and last evaluations and the headline metrics' names."""
    from ..jsonl import read_jsonl

    metrics = Path(trainer.args.output_dir) / "metrics.jsonl"
    rows = [row for _, row in read_jsonl(metrics)] if metrics.is_file() else []
    evals = [{k[5:]: v for k, v in r.items() if k.startswith("eval/")} | {"step": r.get("step")}
             for r in rows if any(k.startswith("eval/") for k in r)]
    report = getattr(trainer, "last_eval_report", None)
    return {
        "status": status,
        "global_step": trainer.state.global_step,
        "finished": status == "finished",
        "error": error,
        "elapsed_s": round(elapsed_s, 2),
        "policy_dir": str(policy_dir) if policy_dir is not None else None,
        "eval_before": {k: v for k, v in evals[0].items() if k != "step"}
        if evals and evals[0]["step"] == 0 else None,
        "eval_after": {k: v for k, v in evals[-1].items() if k != "step"} if len(evals) > 1 else None,
        "headline_metrics": list(report.headline_names) if report is not None else [],
    }


def write_run_json(output_dir: str | Path, info: dict[str, Any]) -> None:
    """Write ``OUTPUT_DIR/run.json`` whole (a temporary file, then renamed): a reader never sees half of it."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "run.json.tmp"
    tmp.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / "run.json")


def absolute_step_settings(args: Any) -> dict[str, float]:
    """Replace ``eval_steps`` / ``save_steps`` / ``logging_steps`` given as a fraction of the run (0.25) by the
    steps they stand for (``ceil(max_steps * fraction)``, as Trainer's state stores them), so that a resumed run
    with the same settings compares equal to its checkpoint's ``trainer_state.json``. Returns the values replaced
    (to put back); nothing when ``max_steps`` is not set (training by epochs)."""
    replaced: dict[str, float] = {}
    if not args.max_steps or args.max_steps <= 0:
        return replaced
    for name in ("eval_steps", "save_steps", "logging_steps"):
        value = getattr(args, name, None)
        if value is not None and 0 < value < 1:
            replaced[name] = value
            setattr(args, name, math.ceil(args.max_steps * value))
    return replaced


@contextlib.contextmanager
def quiet_saving() -> Iterator[None]:
    """transformers' progress bars ("Writing model shards") off while a checkpoint or the policy is saved, so they
    do not break into the training progress lines; a user's own setting is put back."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    if enabled:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


def check_resume_matches(output_dir: str | Path, checkpoint: str, *, task: str, algo: str,
                         model_args: dict[str, Any] | None = None,
                         task_options: dict[str, Any] | None = None) -> None:
    """A resumed run continues the same task, task options, algorithm and LoRA settings (the folder's ``run.json``
    says which; no ``run.json``: nothing to compare). ``model_args``: TRL's ``ModelConfig`` as ``run.json`` records
    it (the CLI's), ``None`` to skip the LoRA comparison. ``task_options``: the task's option values
    (``Task.option_values``), ``None`` to skip that comparison.

    Raises:
        MRTPOError: the run folder's task, task options (``-T``), algo, or LoRA settings (use_peft, lora_r,
            lora_alpha, lora_target_modules) differ from this run's.
    """
    path = Path(output_dir) / "run.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, json.JSONDecodeError):
        return
    if not isinstance(info, dict):
        return
    for key, value, flag in (("task", task, "the task file"), ("algo", algo, "--algo")):
        if info.get(key) not in (None, value):
            raise MRTPOError(
                f"--resume_from_checkpoint {checkpoint}: that run trained {key} {info[key]!r}, this command "
                f"{key} {value!r}; resume with the same {flag}, or train into another --output_dir"
            )
    saved_options = info.get("task_options")
    if task_options is not None and isinstance(saved_options, dict):
        now = {k: jsonable(v) for k, v in task_options.items()}
        differ = sorted(k for k in {*saved_options, *now} if saved_options.get(k) != now.get(k))
        if differ:
            said = ", ".join(f"{k}={saved_options.get(k)!r} there, {now.get(k)!r} here" for k in differ)
            raise MRTPOError(
                f"--resume_from_checkpoint {checkpoint}: that run trained with other task options ({said}); "
                f"resume with the same -T KEY=VALUE options, or train into another --output_dir"
            )
    saved = info.get("model_args") or {}
    if model_args is not None and saved:
        for key in ("use_peft", "lora_r", "lora_alpha", "lora_target_modules"):
            if key in saved and saved[key] != model_args.get(key):
                raise MRTPOError(
                    f"--resume_from_checkpoint {checkpoint}: that run trained with --{key} {saved[key]}, this "
                    f"command has {model_args.get(key)}; resume with the same LoRA settings"
                )
