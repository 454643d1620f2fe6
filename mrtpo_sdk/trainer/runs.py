"""The run folder (``output_dir``): what counts as a previous run, resuming from a checkpoint, keeping the logs whole.

A run folder holds ``run.json`` (CLI), ``metrics.jsonl``, ``samples.jsonl``, ``credit-step<N>.html``, ``rewards.png``,
``policy/``, ``errors/`` and Trainer's ``checkpoint-<step>/`` folders. Rules (a run is never lost or silently
replaced):

* a new run into a folder that holds a previous run is refused unless ``overwrite_output_dir`` is set (then the old
  run's files are removed, with a note naming them) or the run resumes from a checkpoint;
* a resumed run keeps every log row up to the checkpoint's step and drops the killed run's rows after it (those
  steps are trained again), so ``metrics.jsonl`` ends with every step exactly once;
* a checkpoint is complete when Trainer wrote its ``trainer_state.json`` (written last); ``resume`` skips an
  incomplete one with a note.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from ..errors import MRTPOError

__all__ = [
    "RUN_FILES",
    "complete_checkpoints",
    "prepare_output_dir",
    "previous_run_files",
    "resolve_checkpoint",
    "truncate_logs",
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
        except (json.JSONDecodeError, OSError):
            return False
    metrics = out / "metrics.jsonl"
    if metrics.is_file():
        for line in metrics.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if any(k.startswith("rewards/") for k in row):
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
