"""``mrtpo-sdk compare ... --also_eval SPLIT[,SPLIT]``: score every run's final policy and the runs' initial policies
on more held-out splits, and summarize them over seeds like the dev metrics.

Each evaluation is ``mrtpo_sdk.evaluation.cli.eval_command([TASK, <policy>, "--split", SPLIT, "--output_dir", D,
...])``, in-process, greedy:

* a run's final policy: ``--model RUN_DIR`` (eval reuses the run's task options, ``--data``, completion budget, eval
  batch size and precision from its ``run.json``), into ``RUN_DIR/eval-<split>/eval.json``;
* the runs' initial policy, once per distinct one (``run.json``'s ``initial_policy``): ``--model <initial_policy>``
  (a model name such as ``smollm2``, a folder, or the warm-started folder a run with ``warm_start`` started from), or
  for the embedded bootstrap policy eval's own embedded path ``--seed N --policy_preset P`` (the policy train built
  for that seed), with the runs' ``-T`` options, ``--data``, ``max_completion_length`` and eval batch size, into
  ``REPORT_DIR/initial-<label>/eval-<split>/eval.json``.

``--also_eval_batch_size`` and ``--also_eval_max_examples`` go to every evaluation as ``--batch_size`` /
``--max_examples``. Beside each ``eval.json`` :data:`SETTINGS_FILE` records what it was asked with (split, the
policy: the run's ``run.json`` digest or the initial policy and its settings, max examples, batch size); a finished
``eval.json`` whose recorded settings match (and whose own ``split``, ``batch_size``, ``max_completion_length`` and
``num_examples`` agree) is reused, not recomputed. Reading ``eval.json`` files imports no torch; only an evaluation
that must be computed imports ``mrtpo_sdk.evaluation.cli``'s machinery.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import MRTPOError
from .stats import (
    Run,
    _is_number,
    _paired_entry,
    group_runs,
    mrtpo_pairs,
    one_per_measurement,
    paired_outcome,
    summarize,
    unit_range,
)

__all__ = [
    "SETTINGS_FILE",
    "EvalJob",
    "check_splits",
    "held_out_report",
    "parse_splits",
    "plan_evals",
    "reuse_status",
    "run_evals",
]

#: Written beside each ``eval.json`` that ``--also_eval`` computes: the settings it was asked with (the reuse check).
SETTINGS_FILE = "compare_eval.json"

#: eval.json metrics that are not higher-is-better: kept in compare.json, left out of compare.md's rows and pairs.
NOT_COMPARED = ("completion_length",)

#: compare.md shows the per-type rows (names with a ``/``, e.g. ``inst_level_strict_acc/<type>``) up to this many.
MAX_PER_TYPE_ROWS = 40


@dataclass
class EvalJob:
    """One evaluation: ``argv`` for ``eval_command`` (without ``--output_dir``), its output ``folder`` and the
    ``settings`` recorded in :data:`SETTINGS_FILE`. ``runs``: the labels (``<algo>-seed<N>``) it scores (one run,
    or every run that starts from this initial policy)."""

    kind: str  # "final" or "initial"
    label: str
    split: str
    folder: Path
    argv: list[str]
    settings: dict[str, Any]
    runs: list[Run] = field(default_factory=list)

    @property
    def eval_json(self) -> Path:
        return self.folder / "eval.json"


def parse_splits(value: str) -> list[str]:
    """``"unseen,validation"`` -> ``["unseen", "validation"]``.

    Raises:
        MRTPOError: an empty item or a split given twice (one line naming ``--also_eval``).
    """
    items = [v.strip() for v in str(value).split(",")]
    if not all(items):
        raise MRTPOError(f"--also_eval: expected a comma-separated list of splits (e.g. unseen), got {value!r}")
    dupes = sorted({v for v in items if items.count(v) > 1})
    if dupes:
        raise MRTPOError(f"--also_eval: {', '.join(dupes)} given more than once")
    return items


def check_splits(task: Any, splits: Sequence[str], data: str | None) -> None:
    """Every split loads (the task's ``load_examples`` raises for an unknown one, naming the valid ones).

    A task whose examples have no splits (a fixed list or file, a function without a ``split`` parameter) returns
    the same examples for any name, its training data: that is an error too.

    Raises:
        MRTPOError: ``--also_eval SPLIT: <the task's reason>``.
    """
    import inspect
    from collections.abc import Mapping

    source = task.examples
    has_splits = isinstance(source, Mapping) or (
        callable(source) and "split" in inspect.signature(source).parameters
    )
    if not has_splits and splits:
        raise MRTPOError(
            f"--also_eval {splits[0]}: task {task.name!r} has one set of examples, no splits: there is no held-out "
            f"split to score (give the task examples={{'train': ..., {splits[0]!r}: ...}})"
        )
    for split in splits:
        try:
            task.load_examples(split, data)
        except MRTPOError as exc:
            raise MRTPOError(f"--also_eval {split}: {exc}") from None


def task_spec_of(runs: Sequence[Run]) -> str:
    """The task file to evaluate run folders with: ``run.json``'s ``task_file`` where it exists, else the bundled
    task of that name.

    Raises:
        MRTPOError: neither is found.
    """
    from ..resources import bundled_task_file

    for run in runs:
        task_file = run.info.get("task_file")
        if isinstance(task_file, str) and Path(task_file.split("@", 1)[0]).is_file():
            return task_file
    for run in runs:
        if run.task and bundled_task_file(run.task) is not None:
            return run.task
    where = runs[0].path if runs else "the runs"
    raise MRTPOError(
        f"--also_eval: cannot find the task file of {where} (run.json's task_file does not exist from here and "
        f"{runs[0].task if runs else 'the task'!r} is no bundled task); run compare from the folder train ran in"
    )


def run_task_setting(run: Run) -> tuple[dict[str, Any], str | None]:
    """``(task options, --data)`` a run trained with (``run.json``)."""
    options = run.info.get("task_options")
    data = run.info.get("data", (run.info.get("script_args") or {}).get("data"))
    return (dict(options) if isinstance(options, dict) else {}), (None if data is None else str(data))


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _initial_policy(run: Run) -> dict[str, Any]:
    """How to score the policy ``run`` started from: ``{"source", "embedded", "seed", "policy_preset"}``.

    ``source`` is ``run.json``'s ``initial_policy`` (for a warm start, the warm-started folder). The embedded
    bootstrap policy (no ``--model``) is scored through eval's embedded path with the run's policy seed
    (``--policy_seed``, else its seed) and preset, which loads the same cached folder train built."""
    info = run.info
    script = info.get("script_args") or {}
    warm = info.get("warm_start")
    source = info.get("initial_policy")
    if isinstance(warm, dict) and warm.get("folder"):
        source = warm["folder"]
    label = info.get("policy")
    embedded = not warm and (
        ("model" in script and script.get("model") is None)
        or (isinstance(label, str) and label.startswith("embedded bootstrap policy"))
    )
    if not embedded and not source:
        raise MRTPOError(
            f"--also_eval: {run.path}/run.json does not say which policy the run started from (no initial_policy); "
            f"its initial policy cannot be scored"
        )
    return {
        "source": None if source is None else str(source),
        "embedded": bool(embedded),
        "seed": (run.seed if script.get("policy_seed") is None else int(script["policy_seed"])) if embedded else None,
        "policy_preset": (script.get("policy_preset") or "small") if embedded else None,
    }


def _initial_label(policy: dict[str, Any]) -> str:
    if policy["embedded"]:
        preset = policy["policy_preset"]
        return f"seed{policy['seed']}" if preset == "small" else f"{preset}-seed{policy['seed']}"
    name = Path(str(policy["source"]).rstrip("/")).name or str(policy["source"])
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def plan_evals(
    runs: Sequence[Run],
    splits: Sequence[str],
    report_dir: Path,
    *,
    task: Any,
    task_spec: str,
    batch_size: int | None = None,
    max_examples: int | None = None,
) -> list[EvalJob]:
    """Every evaluation to have: per split, each run's final policy, then each distinct initial policy.

    Args:
        task: the loaded task (its option defaults: only the runs' non-default ``-T`` options are passed).
        task_spec: the task file or bundled name given to eval.
    """
    common = []
    if batch_size is not None:
        common += ["--batch_size", str(batch_size)]
    if max_examples is not None:
        common += ["--max_examples", str(max_examples)]
    jobs: list[EvalJob] = []
    initials: dict[str, tuple[dict[str, Any], list[str], dict[str, Any], list[Run]]] = {}
    labels: dict[str, str] = {}
    defaults = {name: option.default for name, option in getattr(task, "options", {}).items()}
    from ..task_options import format_value

    for run in runs:
        policy = _initial_policy(run)
        options, data = run_task_setting(run)
        options = {k: v for k, v in options.items() if k in defaults and v != defaults[k]}
        args = run.info.get("args") or {}
        length = args.get("max_completion_length")
        eval_batch = batch_size if batch_size is not None else args.get("per_device_eval_batch_size")
        argv = ["--seed", str(policy["seed"]), "--policy_preset", policy["policy_preset"]] if policy["embedded"] \
            else ["--model", policy["source"]]
        for k, v in options.items():
            argv += ["-T", f"{k}={format_value(v)}"]
        if data is not None:
            argv += ["--data", data]
        if length is not None:
            argv += ["--max_completion_length", str(length)]
        if eval_batch is not None:
            argv += ["--batch_size", str(eval_batch)]
        if max_examples is not None:
            argv += ["--max_examples", str(max_examples)]
        settings = {
            "initial_policy": policy,
            "run_initial_policy": run.info.get("initial_policy"),  # the embedded policy's cache folder
            "task_options": {k: format_value(v) for k, v in options.items()},
            "data": data,
            "max_completion_length": length,
            "batch_size": eval_batch,
            "max_examples": max_examples,
        }
        key = json.dumps(settings, sort_keys=True, default=str)
        if key not in initials:
            label = _initial_label(policy)
            n = 2
            while label in labels.values():
                label = f"{_initial_label(policy)}-{n}"
                n += 1
            labels[key] = label
            initials[key] = (settings, argv, policy, [])
        initials[key][3].append(run)

    for split in splits:
        for run in runs:
            settings = {
                "split": split,
                "model": "run folder",
                "run_json_sha256": _digest(run.path / "run.json"),
                "batch_size": batch_size,
                "max_examples": max_examples,
            }
            argv = [task_spec, "--model", str(run.path), "--split", split, *common]
            jobs.append(EvalJob("final", run.path.name, split, run.path / f"eval-{split}", argv, settings, [run]))
        for key, (settings, argv, _policy, group) in initials.items():
            folder = Path(report_dir) / f"initial-{labels[key]}" / f"eval-{split}"
            jobs.append(EvalJob(
                "initial", f"initial {labels[key]}", split, folder, [task_spec, *argv, "--split", split],
                {"split": split, **settings}, list(group),
            ))
    return jobs


def read_eval(path: Path) -> dict[str, Any] | None:
    """An ``eval.json`` as a dict with a ``metrics`` mapping, or ``None`` when missing or unreadable."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("metrics"), dict) else None


def reuse_status(job: EvalJob) -> tuple[bool, str]:
    """Whether ``job``'s ``eval.json`` is finished with the same settings, and the one-line reason when it is
    computed again (empty for a folder without one)."""
    report = read_eval(job.eval_json)
    if report is None:
        return False, "" if not job.eval_json.exists() else "recomputing: its eval.json is not readable"
    try:
        recorded = json.loads((job.folder / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False, f"recomputing: the settings of its eval.json are unknown (no {SETTINGS_FILE})"
    if not isinstance(recorded, dict) or recorded.get("settings") != json.loads(json.dumps(job.settings)):
        old = recorded.get("settings") if isinstance(recorded, dict) else None
        changed = sorted(
            k for k in set(job.settings) | set(old or {})
            if (old or {}).get(k) != json.loads(json.dumps(job.settings.get(k)))
        )
        return False, f"recomputing: its eval.json was scored with other settings ({', '.join(changed)})"
    if report.get("split") != job.split or report.get("num_generations", 1) != 1:
        return False, "recomputing: its eval.json is of another split or not greedy"
    for key in ("batch_size", "max_completion_length"):
        want = job.settings.get(key)
        if want is not None and report.get(key) not in (None, want):
            return False, f"recomputing: its eval.json has {key} {report.get(key)}, not {want}"
    limit = job.settings.get("max_examples")
    if limit is not None and not (isinstance(report.get("num_examples"), int) and report["num_examples"] <= limit):
        return False, f"recomputing: its eval.json scored {report.get('num_examples')} examples, not at most {limit}"
    return True, "reused"


def run_evals(
    jobs: Sequence[EvalJob],
    *,
    log: Callable[[str], None] = lambda line: print(line, flush=True),
    clock: Callable[[], float] = time.monotonic,
) -> dict[tuple[str, str], dict[str, Any]]:
    """Compute (or reuse) every job's ``eval.json``; one progress line per evaluation (scored / reused, seconds).

    Returns:
        ``{(split, folder as str): eval.json dict}`` for every job.

    Raises:
        MRTPOError: an evaluation failed (naming it and its folder).
    """
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for i, job in enumerate(jobs, 1):
        head = f"[eval {i}/{len(jobs)}] {job.split}: {job.label} -> {job.eval_json}"
        began = clock()
        reuse, note = reuse_status(job)
        if not reuse:
            from ..evaluation import cli as eval_cli  # looked up at call time: tests replace eval_command

            if note:
                log(f"      {note}")
            argv = [*job.argv, "--output_dir", str(job.folder)]
            try:
                code = eval_cli.eval_command(argv)
            except MRTPOError as exc:
                raise MRTPOError(f"--also_eval {job.split}, {job.label} ({job.folder}): {exc}") from exc
            if code != 0:
                raise MRTPOError(
                    f"--also_eval {job.split}: evaluating {job.label} stopped with exit status {code} "
                    f"(mrtpo-sdk eval {' '.join(argv)})"
                )
            record = {"settings": job.settings, "argv": argv}
            job.folder.mkdir(parents=True, exist_ok=True)
            (job.folder / SETTINGS_FILE).write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
        report = read_eval(job.eval_json)
        if report is None:
            raise MRTPOError(f"--also_eval {job.split}: {job.eval_json} was not written by eval")
        seconds = clock() - began if not reuse else float(report.get("seconds") or 0.0)
        log(f"{head}: {'reused (scored in' if reuse else 'scored in'} {seconds:.0f}s{')' if reuse else ''}")
        out[(job.split, str(job.folder))] = report
    return out


def _metric_order(reports: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """``(metrics, headlines)``: the headline metrics first, then the rewards, ``all_rewards``, the other keys (per
    type) in eval.json order; numeric values only."""
    headlines: list[str] = []
    rewards: list[str] = []
    rest: list[str] = []
    for rep in reports:
        for name in rep.get("headline_names") or []:
            if name not in headlines:
                headlines.append(name)
        for name in rep.get("reward_names") or []:
            if name not in rewards:
                rewards.append(name)
        for key, value in rep["metrics"].items():
            if _is_number(value) and key not in rest:
                rest.append(key)
    numeric = set(rest)
    ordered: list[str] = []
    for key in (*headlines, *rewards, "all_rewards", *rest):
        if key in numeric and key not in ordered:
            ordered.append(key)
    return ordered, [h for h in headlines if h in numeric]


def held_out_report(
    runs: Sequence[Run],
    jobs: Sequence[EvalJob],
    results: dict[tuple[str, str], dict[str, Any]],
    *,
    batch_size: int | None,
    max_examples: int | None,
) -> dict[str, Any]:
    """``compare.json``'s ``held_out``: per split, per group of runs (an algo, or a variant of one:
    :func:`~mrtpo_sdk.compare.stats.group_runs`), per eval metric, the initial value and the final value over seeds
    (:func:`~mrtpo_sdk.compare.stats.summarize`, the interval clipped to [0, 1] when every value lies there), and
    each MRTPO group's paired per-seed outcome against each other group (higher is better). An initial
    policy's score counts once per algo, however many of its runs started from it (keyed by the first such run's
    label): one score of one policy has no spread, so it shows as the value alone, not as ``[x, x]``.

    Returns:
        ``{split: {"metrics", "headlines", "compared", "settings", "initial_policies", "algos", "paired"}}``.
    """
    algos = group_runs(runs)
    out: dict[str, Any] = {}
    for split in dict.fromkeys(job.split for job in jobs):
        final: dict[str, dict[str, Any]] = {}  # run path -> metrics
        initial: dict[str, tuple[str, dict[str, Any]]] = {}  # run path -> (its initial policy's eval, metrics)
        initials = []
        reports = []
        for job in (j for j in jobs if j.split == split):
            rep = results[(split, str(job.folder))]
            reports.append(rep)
            for run in job.runs:
                if job.kind == "final":
                    final[str(run.path)] = rep["metrics"]
                else:
                    initial[str(run.path)] = (str(job.eval_json), rep["metrics"])
            if job.kind == "initial":
                initials.append({"label": job.label.removeprefix("initial "), "eval_json": str(job.eval_json),
                                 "policy": rep.get("policy"), "runs": [str(r.path) for r in job.runs]})
        metrics, headlines = _metric_order(reports)
        compared = [k for k in metrics if k not in NOT_COMPARED]
        bounds = {}
        for k in metrics:
            values = [m.get(k) for m in (*final.values(), *(m for _, m in initial.values())) if _is_number(m.get(k))]
            bounds[k] = (0.0, None) if k == "completion_length" else unit_range(values)
        per_algo: dict[str, Any] = {}
        for algo, group in algos.items():
            scored = one_per_measurement(  # one evaluation of one policy counts once however many runs share it
                {r.label: initial[str(r.path)][1] for r in group if str(r.path) in initial},
                {r.label: initial[str(r.path)][0] for r in group if str(r.path) in initial},
            )
            per_algo[algo] = {
                "runs": [str(r.path) for r in group],
                "initial": {k: summarize({label: m.get(k) for label, m in scored.items()}, bounds[k])
                            for k in metrics},
                "final": {k: summarize({r.label: final.get(str(r.path), {}).get(k) for r in group}, bounds[k])
                          for k in metrics},
            }
        paired = []
        for name, other, mine, theirs, seeds in mrtpo_pairs(algos):
            for k in compared:
                a = per_algo[name]["final"][k]["values"]
                b = per_algo[other]["final"][k]["values"]
                outcomes = {
                    str(s): paired_outcome(a[mine[s].label], b[theirs[s].label], lower_is_better=False)
                    for s in seeds
                }
                outcomes = {s: o for s, o in outcomes.items() if o is not None}
                if outcomes:
                    paired.append(_paired_entry(name, other, f"held_out/{split}/{k}", outcomes))
        sizes = sorted({rep.get("num_examples") for rep in reports if isinstance(rep.get("num_examples"), int)})
        batches = sorted({rep.get("batch_size") for rep in reports if isinstance(rep.get("batch_size"), int)})
        lengths = sorted({rep.get("max_completion_length") for rep in reports
                          if isinstance(rep.get("max_completion_length"), int)})
        out[split] = {
            "metrics": metrics,
            "headlines": headlines,
            "compared": compared,
            "settings": {
                "greedy": all(rep.get("greedy", True) for rep in reports),
                "batch_size_flag": batch_size,
                "max_examples_flag": max_examples,
                "batch_size": batches,
                "num_examples": sizes,
                "max_completion_length": lengths,
            },
            "initial_policies": initials,
            "evals": [str(job.eval_json) for job in jobs if job.split == split],
            "algos": per_algo,
            "paired": paired,
        }
    return out
