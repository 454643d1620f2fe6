"""The numbers of ``mrtpo-sdk compare``: pure functions over the metric rows of finished runs (no torch import).

A run is a folder written by ``mrtpo-sdk train``: ``metrics.jsonl`` (training rows with ``rewards/<r>/mean``,
``time/*``, ``completions/mean_length``; evaluation rows with ``eval/<metric>``; a row may hold both kinds) and
``run.json`` (task, algo, seed, reward and headline names, whether it finished). :func:`load_run` reads one;
:func:`compare_runs` turns a list of them into the report that :mod:`mrtpo_sdk.compare.report` writes.

Confidence intervals are Student-t 95% intervals over seeds, ``mean ± t_{0.975, n-1} · s / sqrt(n)`` with the
sample standard deviation ``s`` (ddof 1). scipy is not a dependency of mrtpo-sdk, so the quantile comes from
:mod:`mrtpo_sdk.compare.student_t` (exact for every integer degree of freedom); one seed gives no interval. The
interval of a bounded metric is clipped to its range: [0, 1] for a reward or dev metric whose every logged value
lies in [0, 1] (rewards, accuracies, shares), [0, ∞) for the completion length. Paired differences between MRTPO
and each baseline are in :mod:`mrtpo_sdk.compare.paired`.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from .. import jsonl
from ..errors import MRTPOError
from ..trainer.algos import ALGORITHMS, aggregation_of, unused_settings
from .paired import paired_differences
from .student_t import t_ppf

__all__ = [
    "Run",
    "T_975",
    "NOT_DEV_METRICS",
    "UNIT_RANGE",
    "TIME_PARTS",
    "area_under_curve",
    "check_run_folder",
    "compare_runs",
    "curve",
    "display_name",
    "eval_rows",
    "final_eval",
    "group_runs",
    "final_mean",
    "infer_identity",
    "initial_eval",
    "load_run",
    "one_per_measurement",
    "paired_outcome",
    "run_notes",
    "setting_differences",
    "read_jsonl",
    "series",
    "steps_to_threshold",
    "summarize",
    "t_interval",
    "t_quantile",
    "time_per_step",
    "unit_range",
    "variant_settings",
    "variant_values",
]

#: Two-sided 95% Student-t quantiles t_{0.975, df} for df = 1..30, to 6 decimals (:func:`t_quantile` computes any).
T_975: dict[int, float] = {
    1: 12.706205, 2: 4.302653, 3: 3.182446, 4: 2.776445, 5: 2.570582, 6: 2.446912, 7: 2.364624, 8: 2.306004,
    9: 2.262157, 10: 2.228139, 11: 2.200985, 12: 2.178813, 13: 2.160369, 14: 2.144787, 15: 2.131450,
    16: 2.119905, 17: 2.109816, 18: 2.100922, 19: 2.093024, 20: 2.085963, 21: 2.079614, 22: 2.073873,
    23: 2.068658, 24: 2.063899, 25: 2.059539, 26: 2.055529, 27: 2.051831, 28: 2.048407, 29: 2.045230,
    30: 2.042272,
}

#: The parts of a training step's wall time logged as ``time/<part>`` (seconds).
TIME_PARTS = ("generation", "scoring", "replay", "update")

#: Final train metric: the mean of this many last logged steps.
FINAL_WINDOW = 10


def _numbered_objects(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        return jsonl.read_jsonl(path, objects=True)
    except jsonl.JSONLineError as exc:
        why = "" if exc.cause is None else f" ({getattr(exc.cause, 'msg', exc.cause)})"
        raise MRTPOError(f"{path}:{exc.line}: not a JSON object{why}") from None


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, one per non-empty line (a bad line is an error naming it)."""
    return [row for _, row in _numbered_objects(path)]


@dataclass
class Run:
    """One training run: its folder, identity and metric rows.

    ``seed`` is ``None`` when neither ``run.json`` nor the folder name tells it (such a run is not paired);
    ``task`` is ``None`` when unknown. ``info`` is the ``run.json`` object (``{}`` without one).
    """

    path: Path
    algo: str
    seed: int | None
    task: str | None
    rows: list[dict[str, Any]]
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``"seed<N>"``, or the folder name when the seed is unknown."""
        return f"seed{self.seed}" if self.seed is not None else self.path.name

    @property
    def reward_names(self) -> list[str]:
        names = self.info.get("reward_names")
        if isinstance(names, list) and names:
            return [str(n) for n in names]
        found: list[str] = []
        for row in self.rows:
            for key in row:
                m = re.fullmatch(r"rewards/(.+)/mean", key)
                if m and m.group(1) not in found:
                    found.append(m.group(1))
        return found

    @property
    def headline_metrics(self) -> list[str]:
        names = self.info.get("headline_metrics")
        return [str(n) for n in names] if isinstance(names, list) else []

    @property
    def initial_policy(self) -> str | None:
        """The policy the run started from (``run.json``'s ``initial_policy``); ``None`` when not recorded."""
        value = self.info.get("initial_policy")
        return str(value) if value is not None else None

    @property
    def finished(self) -> bool | None:
        value = self.info.get("finished")
        return bool(value) if value is not None else None

    @property
    def last_step(self) -> int | None:
        steps = [r["step"] for r in self.rows if _is_number(r.get("step"))]
        return int(max(steps)) if steps else None


def infer_identity(name: str, algorithms: Sequence[str]) -> tuple[str | None, str, int | None] | None:
    """``(task, algo, seed)`` from a folder name ``<algo>-seed<N>`` or ``<task>-<algo>``; ``None`` if neither.

    >>> infer_identity("gdpo-seed2", ["mrtpo", "gdpo"])
    (None, 'gdpo', 2)
    >>> infer_identity("sql-mrtpo", ["mrtpo", "gdpo"])
    ('sql', 'mrtpo', None)
    """
    m = re.fullmatch(r"(.+)-seed(\d+)", name)
    if m and m.group(1) in algorithms:
        return None, m.group(1), int(m.group(2))
    task, sep, algo = name.rpartition("-")
    if sep and task and algo in algorithms:
        return task, algo, None
    return None


def check_run_folder(path: Path) -> None:
    """Raise :class:`MRTPOError` naming ``path`` unless it is a folder holding a ``metrics.jsonl`` file."""
    if not path.exists():
        raise MRTPOError(f"{path}: no such run folder")
    if not path.is_dir():
        raise MRTPOError(f"{path}: not a folder; give run folders (the --output_dir of `mrtpo-sdk train`)")
    if not (path / "metrics.jsonl").is_file():
        raise MRTPOError(f"{path}: no metrics.jsonl (not a run folder written by `mrtpo-sdk train`)")


#: The largest step number a ``metrics.jsonl`` row may hold.
MAX_STEP = 10**9


def _metric_rows(metrics: Path) -> list[dict[str, Any]]:
    """The rows of a ``metrics.jsonl``; a row whose ``step`` is not an integer in [0, :data:`MAX_STEP`]
    (``mrtpo-sdk train`` writes one in every row) is an error naming its line, not a row left out."""
    numbered = _numbered_objects(metrics)
    for line, row in numbered:
        step = row.get("step")
        if not (_is_number(step) and float(step).is_integer() and 0 <= step <= MAX_STEP):
            raise MRTPOError(
                f"{metrics}:{line}: \"step\" is {json.dumps(step)[:40]}, not a step number (an integer from 0 to "
                f"{MAX_STEP:.0e}, as in every row `mrtpo-sdk train` writes): mend or remove the line"
            )
    return [row for _, row in numbered]


def load_run(path: str | Path, algorithms: Sequence[str] = ()) -> Run:
    """Read a run folder: ``metrics.jsonl`` and, if present, ``run.json``.

    Without ``run.json`` the algo (and seed) come from the folder name (:func:`infer_identity`, with
    ``algorithms`` the valid algo names); a folder whose name tells neither is an error naming it.

    Raises:
        MRTPOError: ``path`` is missing or not a folder, has no ``metrics.jsonl``, a line of it is not a JSON
            object or has no step number, ``run.json`` is not a JSON object or its ``algo``, ``task`` or ``seed``
            has the wrong type, or the algo cannot be told.
    """
    path = Path(path)
    check_run_folder(path)
    metrics = path / "metrics.jsonl"
    rows = _metric_rows(metrics)
    info: dict[str, Any] = {}
    run_json = path / "run.json"
    if run_json.is_file():
        try:
            info = json.loads(run_json.read_text(encoding="utf-8"))
        except ValueError as exc:  # not JSON, or not UTF-8
            raise MRTPOError(f"{run_json}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(info, dict):
            raise MRTPOError(f"{run_json}: not a JSON object")
    for key, kind, what in (("algo", str, "an algorithm name"), ("task", str, "a task name"),
                            ("seed", int, "an integer")):
        value = info.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise MRTPOError(f"{run_json}: \"{key}\" must be {what}, got {json.dumps(value)[:80]}")
    inferred = infer_identity(path.resolve().name, algorithms)
    algo = info.get("algo") or (inferred[1] if inferred else None)
    if not algo:
        known = f" (algorithms: {', '.join(algorithms)})" if algorithms else ""
        why = "run.json records no \"algo\"" if run_json.is_file() else "no run.json"
        raise MRTPOError(
            f"{path}: cannot tell the algorithm: {why}, and the folder name is neither <task>-<algo> nor "
            f"<algo>-seed<N>{known}"
        )
    seed = info.get("seed")
    args = info.get("args")
    if seed is None and isinstance(args, dict):
        seed = args.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise MRTPOError(f"{run_json}: \"args.seed\" must be an integer, got {json.dumps(seed)[:80]}")
    if seed is None and inferred and info.get("algo") in (None, inferred[1]):
        seed = inferred[2]
    task = info.get("task") or (inferred[0] if inferred else None)
    return Run(path=path, algo=str(algo), seed=None if seed is None else int(seed), task=task, rows=rows, info=info)


# --------------------------------------------------------------------------------------------------- series


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def series(rows: Iterable[dict[str, Any]], key: str) -> list[tuple[int, float]]:
    """``(step, value)`` of every row holding a finite number under ``key``, in step order (nulls are skipped)."""
    pts = [(int(r["step"]), float(r[key])) for r in rows if _is_number(r.get(key)) and _is_number(r.get("step"))]
    return sorted(pts, key=lambda p: p[0])


def eval_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows holding at least one ``eval/`` key, in step order."""
    found = [r for r in rows if any(k.startswith("eval/") for k in r) and _is_number(r.get("step"))]
    return sorted(found, key=lambda r: r["step"])


def _eval_values(row: dict[str, Any] | None) -> dict[str, float]:
    if row is None:
        return {}
    return {k: float(v) for k, v in row.items() if k.startswith("eval/") and _is_number(v)}


def final_eval(rows: Iterable[dict[str, Any]]) -> dict[str, float]:
    """``eval/*`` values of the last evaluation row (``{}`` when the run has none)."""
    found = eval_rows(rows)
    return _eval_values(found[-1] if found else None)


def initial_eval(rows: Iterable[dict[str, Any]]) -> dict[str, float]:
    """``eval/*`` values of the evaluation row at step 0, before training (``{}`` when there is none)."""
    return _eval_values(next((r for r in eval_rows(rows) if r["step"] == 0), None))


def one_per_measurement(
    values: dict[str, dict[str, float]], sources: dict[str, Any], ignore: Sequence[str] = ("eval/seconds",)
) -> dict[str, dict[str, float]]:
    """The entries of ``values`` (run label -> scores) left once copies of one measurement are merged: two runs
    with the same source (``sources``: run label -> what was scored, e.g. ``run.json``'s ``initial_policy`` or the
    ``eval.json`` of the initial policy; ``None`` when not recorded) whose scores agree on every key both have (but
    those in ``ignore``: the evaluation's wall-clock seconds) hold one score of one policy, so they count once,
    under the first run's label, with the keys only the later one logged added. An interval over copies of one
    value would be ``[x, x]``, a spread that was never measured; a run whose source is not recorded always counts.

    >>> one_per_measurement({"seed1": {"a": 0.1, "eval/seconds": 9.0}, "seed2": {"a": 0.1, "b": 1.0},
    ...                      "seed3": {"a": 0.2}}, {"seed1": "smollm2", "seed2": "smollm2", "seed3": "smollm2"})
    {'seed1': {'a': 0.1, 'eval/seconds': 9.0, 'b': 1.0}, 'seed3': {'a': 0.2}}
    """
    out: dict[str, dict[str, float]] = {}
    for label, scores in values.items():
        source = sources.get(label)
        copy_of = None
        if source is not None:
            for kept, kept_scores in out.items():
                shared = [k for k in scores if k in kept_scores and k not in ignore]
                if sources.get(kept) == source and shared and all(scores[k] == kept_scores[k] for k in shared):
                    copy_of = kept
                    break
        if copy_of is None:
            out[label] = dict(scores)
        else:
            out[copy_of].update({k: v for k, v in scores.items() if k not in out[copy_of]})
    return out


def steps_to_threshold(points: Sequence[tuple[int, float]], threshold: float, smooth: int = 1) -> int | None:
    """The first step at which the trailing mean of the last ``smooth`` logged values reaches ``threshold``.

    Before the ``smooth``-th logged point the window holds the points logged so far (the first point alone, then
    the first two, ...), so a reward at 1.0 from the first step reaches any threshold at that step; later a single
    spike is averaged with the ``smooth - 1`` values before it. ``None``: never reached.
    """
    if smooth < 1:
        raise ValueError("smooth must be >= 1")
    values = [v for _, v in points]
    for i in range(len(points)):
        window = values[max(0, i - smooth + 1) : i + 1]
        if sum(window) / len(window) >= threshold - 1e-12:
            return points[i][0]
    return None


def area_under_curve(points: Sequence[tuple[int, float]]) -> float | None:
    """Trapezoid area under the curve divided by its step span: the curve's mean value over the run.

    One point: its value. No point: ``None``. For rewards in [0, 1] the result is in [0, 1].
    """
    if not points:
        return None
    if len(points) == 1 or points[-1][0] == points[0][0]:
        return sum(v for _, v in points) / len(points)
    area = sum((s1 - s0) * (v0 + v1) / 2 for (s0, v0), (s1, v1) in zip(points, points[1:]))
    return area / (points[-1][0] - points[0][0])


def final_mean(points: Sequence[tuple[int, float]], window: int = FINAL_WINDOW) -> float | None:
    """The mean of the last ``window`` logged values (``None`` without any)."""
    if not points:
        return None
    tail = [v for _, v in points[-window:]]
    return sum(tail) / len(tail)


def time_per_step(rows: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Mean seconds per training step of each part of :data:`TIME_PARTS`, plus ``total`` (their sum).

    A part a run never logs (``time/replay`` of GDPO/GRPO) counts as 0.
    """
    rows = list(rows)
    out = {}
    for part in TIME_PARTS:
        vals = [v for _, v in series(rows, f"time/{part}")]
        out[part] = sum(vals) / len(vals) if vals else 0.0
    out["total"] = sum(out[p] for p in TIME_PARTS)
    return out


def curve(
    runs: Sequence[Run], key: str
) -> list[tuple[int, float, float, float, int]]:
    """Across runs, per step: ``(step, mean, min, max, n)`` over the runs that logged ``key`` at that step."""
    by_step: dict[int, list[float]] = {}
    for run in runs:
        for step, v in series(run.rows, key):
            by_step.setdefault(step, []).append(v)
    return [(s, sum(vs) / len(vs), min(vs), max(vs), len(vs)) for s, vs in sorted(by_step.items())]


# -------------------------------------------------------------------------------------------------- over seeds


def t_quantile(df: int, p: float = 0.975) -> float:
    """t_{p, df}, the p-quantile of Student's t with ``df`` degrees of freedom (:func:`~.student_t.t_ppf`).

    >>> round(t_quantile(2), 6), round(t_quantile(4, 0.80), 6)
    (4.302653, 0.940965)

    Raises:
        ValueError: ``df`` is not an integer >= 1, or ``p`` is not strictly between 0 and 1.
    """
    return t_ppf(p, df)


def t_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """The two-sided 95% Student-t interval ``[lo, hi]`` of the mean; ``None`` for fewer than 2 values.

    >>> lo, hi = t_interval([0.1, 0.2, 0.3]); round(hi - 0.2, 6)  # 4.302653 * 0.1 / sqrt(3)
    0.248414
    """
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    half = t_quantile(n - 1) * statistics.stdev(values) / math.sqrt(n)
    return mean - half, mean + half


#: The range of a metric that lies in [0, 1] (a reward, an accuracy, a share).
UNIT_RANGE = (0.0, 1.0)


def unit_range(values: Iterable[float]) -> tuple[float, float] | None:
    """:data:`UNIT_RANGE` when every value lies in [0, 1] (and there is one), else ``None`` (unbounded)."""
    values = list(values)
    return UNIT_RANGE if values and all(0.0 <= v <= 1.0 for v in values) else None


def summarize(
    values: dict[str, float | None], bounds: tuple[float | None, float | None] | None = None
) -> dict[str, Any]:
    """``{"mean", "ci": [lo, hi] | None, "n", "values"}`` over the runs' values (``None`` values are left out).

    Args:
        bounds: the metric's range ``(lo, hi)`` (``None``: no limit on that side); the interval is clipped to it,
            since the mean of a bounded metric cannot leave its range (with 2 seeds the t-interval of a [0, 1]
            metric easily spans [-1.5, 2]).
    """
    present = [v for v in values.values() if v is not None]
    ci = t_interval(present)
    if ci is not None and bounds is not None:
        lo, hi = ci
        if bounds[0] is not None:
            lo = max(lo, bounds[0])
        if bounds[1] is not None:
            hi = min(hi, bounds[1])
        ci = (lo, hi)
    return {
        "mean": sum(present) / len(present) if present else None,
        "ci": list(ci) if ci else None,
        "n": len(present),
        "values": dict(values),
    }


def _median_steps(values: Sequence[int | None]) -> float | None:
    """Median where "never reached" ranks above every step; ``None`` when the median itself is never reached."""
    ranked = sorted((math.inf if v is None else float(v)) for v in values)
    if not ranked:
        return None
    n = len(ranked)
    mid = ranked[n // 2] if n % 2 else (ranked[n // 2 - 1] + ranked[n // 2]) / 2
    return None if math.isinf(mid) else mid


def paired_outcome(ours: float | None, theirs: float | None, *, lower_is_better: bool) -> str | None:
    """``"won"``, ``"tied"`` or ``"lost"`` for one seed.

    With ``lower_is_better`` (steps to threshold) ``None`` means never reached, worse than any step, and two
    ``None`` tie. Otherwise (dev metrics, higher is better) a ``None`` on either side gives ``None`` (not compared).
    """
    if lower_is_better:
        a = math.inf if ours is None else ours
        b = math.inf if theirs is None else theirs
        return "tied" if a == b else ("won" if a < b else "lost")
    if ours is None or theirs is None:
        return None
    return "tied" if ours == theirs else ("won" if ours > theirs else "lost")


# ----------------------------------------------------------------------------------------------------- report


def _ordered_union(lists: Iterable[Iterable[str]]) -> list[str]:
    out: list[str] = []
    for items in lists:
        for item in items:
            if item not in out:
                out.append(item)
    return out


#: ``eval/`` keys that are not higher-is-better metrics: kept in ``compare.json``, left out of tables, plots and pairs.
NOT_DEV_METRICS = ("eval/seconds", "eval/completion_length")


def mrtpo_pairs(
    algos: dict[str, Sequence[Run]],
) -> Iterator[tuple[str, str, dict[int, Run], dict[int, Run], list[int]]]:
    """MRTPO against each other group of :func:`group_runs`, paired by seed: ``(mrtpo group, other group, the MRTPO
    group's runs by seed, the other's runs by seed, the seeds both have)``. Each MRTPO group (the algo, or each of
    its variants) is paired with every group of another algo that shares a seed with it, then with each MRTPO
    variant after it (nothing without MRTPO runs)."""
    mrtpo = [name for name, group in algos.items() if group and group[0].algo == "mrtpo"]
    others = [name for name, group in algos.items() if group and group[0].algo != "mrtpo"]
    for i, name in enumerate(mrtpo):
        mine = {run.seed: run for run in algos[name] if run.seed is not None}
        for other in [*others, *mrtpo[i + 1:]]:
            theirs = {run.seed: run for run in algos[other] if run.seed is not None}
            seeds = sorted(set(mine) & set(theirs))
            if seeds:
                yield name, other, mine, theirs, seeds


#: A setting's value is shown with at most this many characters in a variant's name (:func:`group_runs`).
VARIANT_VALUE_CHARS = 24


def _setting_label(key: str, value: str) -> str:
    """``"mrtpo_beta=1"`` for ``("args.mrtpo_beta", "1")``: ``args.`` dropped, a JSON string shown unquoted."""
    name = key.removeprefix("args.")
    if value.startswith('"'):
        try:
            value = str(json.loads(value))
        except ValueError:
            pass
    if len(value) > VARIANT_VALUE_CHARS:
        value = value[: VARIANT_VALUE_CHARS - 1] + "…"
    return f"{name}={value}"


def variant_settings(runs: Sequence[Run]) -> dict[str, list[str]]:
    """The algos :func:`group_runs` splits into variants, each with the settings (``run.json`` keys, as in
    :func:`setting_differences`) in which its runs differ: ``{"mrtpo": ["args.beta_warmup_steps",
    "args.mrtpo_beta"]}``: those that two runs of one seed record with two values (a setting that differs only
    between seeds, or that one of them does not record, splits nothing). An algo is split only when two of its runs
    share a seed; ``{}`` when none does."""
    by_algo: dict[str, list[Run]] = {}
    for run in runs:
        by_algo.setdefault(run.algo, []).append(run)
    out: dict[str, list[str]] = {}
    for algo, group in by_algo.items():
        seeds = [run.seed for run in group if run.seed is not None]
        if len(seeds) == len(set(seeds)):
            continue
        # only what tells two runs of one seed apart names variants: a setting that differs between seeds alone
        # stays a note (run_notes); a setting some runs do not record (an older run.json) splits nothing by that alone
        differ_set: set[str] = set()
        for seed in {s for s in seeds if seeds.count(s) > 1}:
            twins = [run for run in group if run.info and run.seed == seed]
            settings = [_settings(run, mark_implied=algo in ALGORITHMS) for run in twins]
            differ_set |= {k for k in _ordered_union(settings) if len({s[k] for s in settings if k in s}) > 1}
        differ = sorted(differ_set)
        if differ:
            out[algo] = differ
    return out


def variant_values(runs: Sequence[Run], split: dict[str, list[str]] | None = None) -> dict[str, dict[str, str]]:
    """Each variant's values of the settings that name it: ``{"mrtpo (mrtpo_beta=1)": {"args.mrtpo_beta": "1"}}``
    (JSON text as in :func:`setting_differences`, whole: a name shows at most :data:`VARIANT_VALUE_CHARS` characters
    of each; a reward aggregation that follows the algo as the algo's own). Only the groups :func:`group_names` names
    by settings; ``{}`` when no algo is split."""
    split = variant_settings(runs) if split is None else split
    return {name: values for name, values in _variant_groups(runs, split) if values is not None}


def group_names(runs: Sequence[Run], split: dict[str, list[str]] | None = None) -> list[str]:
    """Each run's group name in :func:`group_runs`, in the order of ``runs``: its algo, or for an algo that
    :func:`variant_settings` (``split``, computed when ``None``) splits, ``"<algo> (<setting>=<value>, ...)"`` (a run
    without ``run.json`` keeps its algo's name). Two combinations of values shortened to one name are told apart by
    ``" #2"``, ``" #3"``, ... (:func:`variant_values` has them whole); nothing is checked here."""
    split = variant_settings(runs) if split is None else split
    return [name for name, _ in _variant_groups(runs, split)]


def _variant_groups(runs: Sequence[Run], split: dict[str, list[str]]) -> list[tuple[str, dict[str, str] | None]]:
    out: list[tuple[str, dict[str, str] | None]] = []
    combos: dict[str, tuple[str, ...]] = {}
    # a setting some runs of an algo record as null and others do not record is unset in both (setting_differences)
    nulls = {(run.algo, key) for run in runs if run.algo in split and run.info
             for key, value in _settings(run, mark_implied=run.algo in ALGORITHMS).items() if value == "null"}
    for run in runs:
        if not (run.algo in split and run.info):
            out.append((run.algo, None))
            continue
        settings = _settings(run, mark_implied=run.algo in ALGORITHMS)
        if settings.get(AGGREGATION) == FOLLOWS_ALGO:  # a name shows the value, not where it came from
            settings[AGGREGATION] = json.dumps(aggregation_of(run.algo))
        values = tuple(settings.get(k, "null" if (run.algo, k) in nulls else NOT_RECORDED) for k in split[run.algo])
        name = f"{run.algo} ({', '.join(_setting_label(k, v) for k, v in zip(split[run.algo], values))})"
        base, n = name, 2
        while combos.setdefault(name, values) != values:  # two combinations shortened to one name
            name = f"{base} #{n}"
            n += 1
        out.append((name, dict(zip(split[run.algo], values))))
    return out


def group_runs(runs: Sequence[Run]) -> dict[str, list[Run]]:
    """The groups a comparison reports, by name, in the order their first runs come; each sorted by seed.

    A group is the runs of one algo (its seeds), named by the algo. An algo with two runs of one seed is split into
    *variants*, one per combination of the settings in which its runs differ (:func:`variant_settings`), each named
    ``"<algo> (<setting>=<value>, ...)"``, e.g. ``"mrtpo (beta_warmup_steps=0, mrtpo_beta=1)"`` (``args.`` dropped,
    values of at most :data:`VARIANT_VALUE_CHARS` characters): MRTPO at two values of ``mrtpo_beta`` beside GDPO's
    runs of the same seeds. An algo whose runs have one seed each stays one group whatever its settings
    (:func:`run_notes` names the settings that differ).

    Raises:
        MRTPOError: two runs of one algo and seed that no recorded setting tells apart, or of which one has no
            ``run.json``.
    """
    split = variant_settings(runs)
    for run in runs:
        if run.algo in split and not run.info:
            twin = next((other for other in runs if other is not run and other.algo == run.algo
                         and other.seed is not None and other.seed == run.seed), None)
            if twin is not None:
                raise MRTPOError(
                    f"two {run.algo} runs of seed {run.seed}: {twin.path} and {run.path} ({run.path} has no "
                    f"run.json, so its settings cannot tell the two apart); compare one of them"
                )
    groups: dict[str, list[Run]] = {}
    for run, name in zip(runs, group_names(runs, split)):
        groups.setdefault(name, []).append(run)
    for name, group in groups.items():
        seen: dict[int, Run] = {}
        for run in group:
            if run.seed is not None and run.seed in seen:
                why = _twins_why(seen[run.seed], run)
                raise MRTPOError(
                    f"two {run.algo} runs of seed {run.seed}: {seen[run.seed].path} and {run.path} ({why}); "
                    f"compare one of them"
                )
            if run.seed is not None:
                seen[run.seed] = run
        group.sort(key=lambda r: (r.seed is None, r.seed or 0, str(r.path)))
    return groups


def _twins_why(a: Run, b: Run) -> str:
    """Why two runs of one algo and seed fall into one group (:func:`group_runs`)."""
    if not (a.info and b.info):
        return f"{(a if not a.info else b).path} has no run.json, so its settings cannot tell the two apart"
    sa = _settings(a, mark_implied=a.algo in ALGORITHMS)
    sb = _settings(b, mark_implied=b.algo in ALGORITHMS)
    one_sided = sorted(k for k in set(sa) ^ set(sb) if sa.get(k, sb.get(k)) != "null")  # null: unset, as absent
    if not one_sided:
        raw_a, raw_b = _settings(a, mark_implied=False), _settings(b, mark_implied=False)
        unread = sorted(k for k in set(raw_a) | set(raw_b) if raw_a.get(k) != raw_b.get(k) and sa.get(k) == UNUSED)
        if unread:
            return (f"they differ only in {', '.join(k.removeprefix('args.') for k in unread)}, which "
                    f"{a.algo.upper()} does not read, so no setting it reads tells them apart")
        return "no setting they record tells them apart"
    shown = ", ".join(k.removeprefix("args.") for k in one_sided[:MAX_DIFFERENCES_SHOWN])
    more = f" and {len(one_sided) - MAX_DIFFERENCES_SHOWN} more" if len(one_sided) > MAX_DIFFERENCES_SHOWN else ""
    lacking = " and ".join(
        f"{run.path} does not record {', '.join(k.removeprefix('args.') for k in keys)}"
        for run, keys in ((a, [k for k in one_sided if k not in sa]), (b, [k for k in one_sided if k not in sb]))
        if keys
    )
    return (f"they differ only in {shown}{more}, which only one of them records ({lacking}: a run.json written by "
            f"an older version), so no recorded setting tells them apart")


def compare_runs(runs: Sequence[Run], *, threshold: float = 0.8, smooth: int = 3) -> dict[str, Any]:
    """The whole comparison as a JSON-able dict (what ``compare.json`` holds; see ``docs/compare.md``).

    Runs are grouped by algo, an algo with two runs of one seed by variant (:func:`group_runs`; the seeds of a group
    are its runs); paired comparisons match each MRTPO group's run of a seed with each other group's run of the same
    seed (:func:`mrtpo_pairs`), on steps to threshold per reward and on each dev metric (every ``eval/`` key but
    :data:`NOT_DEV_METRICS`, higher is better); ``paired_differences`` holds, for the same pairs, MRTPO minus the
    baseline per seed on each reward's area under the curve, each dev metric's final value and steps to threshold,
    with the paired t-interval, verdict and detectable difference of each (:func:`~.paired.paired_differences`).

    Raises:
        MRTPOError: no runs, runs of different tasks, or two runs of one algo and seed that no setting tells apart.
    """
    if not runs:
        raise MRTPOError("no runs to compare")
    tasks = sorted({run.task for run in runs if run.task})
    if len(tasks) > 1:
        where = "; ".join(f"{run.path}: {run.task}" for run in runs if run.task)
        raise MRTPOError(f"the runs are of different tasks ({where}); compare runs of one task")
    algos = group_runs(runs)

    rewards = _ordered_union(run.reward_names for run in runs)
    eval_keys = _ordered_union(
        (k for row in eval_rows(run.rows) for k, v in row.items() if k.startswith("eval/") and _is_number(v))
        for run in runs
    )
    dev_keys = [k for k in eval_keys if k not in NOT_DEV_METRICS]
    headlines = [f"eval/{h}" for h in _ordered_union(run.headline_metrics for run in runs)]
    headline = next((k for k in headlines if k in eval_keys), None)
    if headline is None:
        headline = "eval/all_rewards" if "eval/all_rewards" in eval_keys else (dev_keys or [None])[0]

    # a metric is bounded to [0, 1] when every value any run logged of it lies there
    reward_range = {r: unit_range(v for run in runs for _, v in series(run.rows, f"rewards/{r}/mean")) for r in rewards}
    eval_range = {k: unit_range(v for run in runs for _, v in series(eval_rows(run.rows), k)) for k in eval_keys}

    per_algo: dict[str, Any] = {}
    for algo, group in algos.items():
        stt: dict[str, Any] = {}
        auc: dict[str, Any] = {}
        final: dict[str, Any] = {}
        for r in rewards:
            key = f"rewards/{r}/mean"
            reached = {run.label: steps_to_threshold(series(run.rows, key), threshold, smooth) for run in group}
            last = max((run.last_step or 0) for run in group)
            steps = [v for v in reached.values() if v is not None]
            stt[r] = {
                "values": reached,
                "median": _median_steps(list(reached.values())),
                "min": min(steps) if steps else None,
                "max": max(steps) if len(steps) == len(reached) and steps else None,
                "reached": len(steps),
                "n": len(reached),
                "last_step": last,
                "last_steps": {run.label: run.last_step for run in group},
            }
            bounds = reward_range[r]
            auc[r] = summarize({run.label: area_under_curve(series(run.rows, key)) for run in group}, bounds)
            final[r] = summarize({run.label: final_mean(series(run.rows, key)) for run in group}, bounds)
        finals = {run.label: final_eval(run.rows) for run in group}
        initials = one_per_measurement(
            {run.label: initial_eval(run.rows) for run in group}, {run.label: run.initial_policy for run in group}
        )
        dev_final = {k: summarize({lab: f.get(k) for lab, f in finals.items()}, eval_range[k]) for k in eval_keys}
        dev_initial = {
            k: summarize({lab: f.get(k) for lab, f in initials.items()}, eval_range[k]) for k in eval_keys
        }
        lengths = {}
        for run in group:
            vals = [v for _, v in series(run.rows, "completions/mean_length")]
            lengths[run.label] = sum(vals) / len(vals) if vals else None
        times = {run.label: time_per_step(run.rows) for run in group}
        mean_time = {p: sum(t[p] for t in times.values()) / len(times) for p in (*TIME_PARTS, "total")}
        per_algo[algo] = {
            "algo": group[0].algo,
            "runs": [str(run.path) for run in group],
            "seeds": [run.seed for run in group],
            "steps_to_threshold": stt,
            "auc": auc,
            "final_train": final,
            "dev_final": dev_final,
            "dev_initial": dev_initial,
            "completion_length": summarize(lengths, (0.0, None)),
            "time_per_step": mean_time,
            "time_per_step_by_run": times,
            "replay_overhead_pct": 100 * mean_time["replay"] / mean_time["total"] if mean_time["total"] else None,
        }

    # GDPO's runs, or its first variant's, are the step-time baseline
    baseline = next((name for name, stats in sorted(per_algo.items(), key=lambda kv: kv[0] != "gdpo")
                     if stats["algo"] == "gdpo"), None)
    for algo, stats in per_algo.items():
        base_total = per_algo[baseline]["time_per_step"]["total"] if baseline else 0.0
        ours = stats["time_per_step"]
        stats["replay_vs_baseline_step_pct"] = 100 * ours["replay"] / base_total if base_total else None
        stats["step_time_vs_baseline"] = ours["total"] / base_total if base_total else None

    differences = setting_differences(runs)
    paired = []
    for name, other, mine, theirs, seeds in mrtpo_pairs(algos):
        for r in rewards:
            a = per_algo[name]["steps_to_threshold"][r]["values"]
            b = per_algo[other]["steps_to_threshold"][r]["values"]
            outcomes = {
                str(s): paired_outcome(a[mine[s].label], b[theirs[s].label], lower_is_better=True) for s in seeds
            }
            paired.append(_paired_entry(name, other, f"steps_to_threshold/{r}", outcomes))
        for k in dev_keys:
            a = per_algo[name]["dev_final"][k]["values"]
            b = per_algo[other]["dev_final"][k]["values"]
            outcomes = {
                str(s): paired_outcome(a[mine[s].label], b[theirs[s].label], lower_is_better=False) for s in seeds
            }
            outcomes = {s: o for s, o in outcomes.items() if o is not None}
            if outcomes:
                paired.append(_paired_entry(name, other, f"dev/{k.removeprefix('eval/')}", outcomes))

    group_of = {id(run): name for name, group in algos.items() for run in group}
    return {
        "task": tasks[0] if tasks else None,
        "threshold": threshold,
        "smooth": smooth,
        "rewards": rewards,
        "eval_keys": eval_keys,
        "dev_metrics": dev_keys,
        "headline": headline,
        "baseline": baseline,
        "runs": [
            {
                "path": str(run.path),
                "resolved_path": str(Path(run.path).resolve()),  # which runs a compare.json is of, from any folder
                "algo": run.algo,
                "group": group_of[id(run)],
                "seed": run.seed,
                "task": run.task,
                "finished": run.finished,
                "last_step": run.last_step,
            }
            for run in runs
        ],
        "algos": per_algo,
        "paired": paired,
        "paired_differences": paired_differences(per_algo, mrtpo_pairs(algos), rewards, dev_keys),
        "setting_differences": differences,
        "variants": variant_settings(runs),
        "variant_values": variant_values(runs),
        "notes": run_notes(runs, differences),
    }


#: ``run.json`` settings (``<section>.<name>``) that differ between the runs of one comparison by design: where a
#: run wrote (output folder), which run it is (seed, algo) and how its folder was made (overwritten, resumed, policy
#: rebuilt). ``args.multi_objective_aggregation`` is compared only where it departs from what the algo implies.
PER_RUN_SETTINGS = frozenset({
    "args.output_dir", "args.logging_dir", "args.run_name", "args.seed", "args.algo", "args.overwrite_output_dir",
    "args.resume_from_checkpoint", "args.hub_token", "script_args.rebuild_policy",
})

#: The ``run.json`` sections whose entries are compared between runs (:func:`setting_differences`).
SETTING_SECTIONS = ("args", "script_args", "model_args", "task_options")

#: The reward aggregation setting, compared only where it departs from the one the run's algo implies.
AGGREGATION = "args.multi_objective_aggregation"

#: What a reward aggregation that is the one the run's algo implies shows as in :func:`setting_differences`.
FOLLOWS_ALGO = "(follows algo)"

#: What a setting a run does not record shows as in :func:`setting_differences`.
NOT_RECORDED = "(not recorded)"

#: What a setting the run's algo does not read (MRTPO's own, on a GDPO or GRPO run) shows as in
#: :func:`setting_differences`.
UNUSED = "(unused by algo)"

#: A setting's value is shown with at most this many characters in a note (``compare.json`` has it whole).
MAX_VALUE_CHARS = 80


def _canonical(value: Any) -> Any:
    """``value`` with integral floats as ints (``1.0`` and ``1`` are one setting), recursively."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def _setting_text(value: Any) -> str:
    return json.dumps(_canonical(value), sort_keys=True, default=str, ensure_ascii=False)


def _settings(run: Run, *, mark_implied: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for section in SETTING_SECTIONS:
        values = run.info.get(section)
        if isinstance(values, dict):
            out.update({f"{section}.{name}": _setting_text(value) for name, value in values.items()})
        elif section in run.info:
            out[section] = _setting_text(values)  # not a mapping: compared whole
    if "data" in run.info:
        out["data"] = _setting_text(run.info["data"])
    if mark_implied and out.get(AGGREGATION) == json.dumps(aggregation_of(run.algo)):
        out[AGGREGATION] = FOLLOWS_ALGO
    if mark_implied:
        out.update({f"args.{name}": UNUSED for name in unused_settings(run.algo)})
    return {k: v for k, v in out.items() if k not in PER_RUN_SETTINGS}


def setting_differences(runs: Sequence[Run]) -> dict[str, dict[str, list[str]]]:
    """The settings the runs do not share: ``{"args.learning_rate": {"1e-05": ["mrtpo seed1", ...], "1e-06":
    [...]}}`` (each run named by its group, :func:`group_names`, and its seed) over the entries of ``run.json``'s :data:`SETTING_SECTIONS` and ``data`` of every run with a
    ``run.json``, but :data:`PER_RUN_SETTINGS`. Values are JSON text (integral floats as ints: ``1.0`` is ``1``);
    a setting one run records and another does not shows as :data:`NOT_RECORDED` for the latter (no difference where
    every run that records it records ``null``: unset either way); a reward
    aggregation that follows the run's algo shows as ``(follows algo)``, and a setting the run's algo does not read
    (:func:`~mrtpo_sdk.trainer.algos.unused_settings`: MRTPO's own, on a GDPO or GRPO run) as :data:`UNUSED`, which
    differs from no value: a setting only MRTPO runs read, on which they agree, is no difference. Both only when
    every run's algo is one of :data:`~mrtpo_sdk.trainer.algos.ALGORITHMS` (otherwise each run's value is shown as
    recorded). Runs without ``run.json`` are left out (:func:`run_notes` names them)."""
    named = [(run, name) for run, name in zip(runs, group_names(runs)) if run.info]
    known = all(run.algo in ALGORITHMS for run, _ in named)
    recorded = [(f"{name} {run.label}", _settings(run, mark_implied=known)) for run, name in named]
    if len(recorded) < 2:
        return {}
    keys = _ordered_union(settings for _, settings in recorded)
    out: dict[str, dict[str, list[str]]] = {}
    for key in sorted(keys):
        by_value: dict[str, list[str]] = {}
        for label, settings in recorded:
            by_value.setdefault(settings.get(key, NOT_RECORDED), []).append(label)
        values = set(by_value) - {UNUSED}
        if len(values) > 1 and values != {NOT_RECORDED, "null"}:  # unset either way: no key, or null
            out[key] = by_value
    return out


def _policy_name(policy: str) -> str:
    """A recorded ``initial_policy`` without its folder (a cache folder's name holds its hash; the home it sits in
    differs between machines)."""
    return Path(policy).name or policy


def run_notes(runs: Sequence[Run], differences: dict[str, dict[str, list[str]]] | None = None) -> list[str]:
    """What makes the comparison of ``runs`` less than like for like, one sentence each: a run without
    ``run.json`` (its settings cannot be checked), an unfinished run, a run that logged no training step, runs of
    one seed that started from different policies (``run.json``'s ``initial_policy``, compared by folder name), and
    settings that differ between runs (:func:`setting_differences`, passed in when already computed) but those
    that tell an algo's variants apart (:func:`variant_settings`) and no run of another algo reads: the variants'
    names show them, and pairs of variants with other algos' runs are like for like."""
    notes = []
    for run in runs:
        if not run.info:
            notes.append(f"{run.path} has no run.json: its settings cannot be checked against the others'.")
        if not run.last_step:
            notes.append(
                f"{run.path} logged no training step: it counts as never reaching a threshold, and its dev score, if "
                f"any, is its evaluation before training."
            )
        elif run.finished is False:
            planned = run.info.get("max_steps")
            of = f" of {planned}" if _is_number(planned) else ""
            notes.append(f"{run.path} is unfinished (last step {run.last_step}{of}): it is compared on the steps it "
                         f"logged.")
    names = {id(run): name for run, name in zip(runs, group_names(runs))}
    by_seed: dict[int, list[Run]] = {}
    for run in runs:
        if run.seed is not None and run.initial_policy is not None:
            by_seed.setdefault(run.seed, []).append(run)
    for seed, group in sorted(by_seed.items()):
        if len({_policy_name(run.initial_policy or "") for run in group}) > 1:
            starts = "; ".join(f"{names[id(run)]}: {_short(run.initial_policy or '')}" for run in group)
            notes.append(f"seed {seed}: the runs started from different policies ({starts}), so its pairs compare "
                         f"different starting points.")
    differences = setting_differences(runs) if differences is None else differences
    split = variant_settings(runs)
    if split:
        known = all(run.algo in ALGORITHMS for run in runs if run.info)
        for algo, keys in split.items():
            outside = [_settings(run, mark_implied=known) for run in runs if run.info and run.algo != algo]
            for key in keys:  # a setting only the split algo reads is what tells its variants apart, no more
                if all(settings.get(key) == UNUSED for settings in outside):
                    differences = {k: v for k, v in differences.items() if k != key}
    if differences:
        shown = []
        for key, by_value in list(differences.items())[:MAX_DIFFERENCES_SHOWN]:
            values = " vs ".join(f"{_short(value)} ({', '.join(labels)})" for value, labels in by_value.items())
            shown.append(f"{key}: {values}")
        more = len(differences) - len(shown)
        notes.append(
            "the runs were trained with different settings, so their differences are not the algorithms' alone: "
            + "; ".join(shown) + (f"; and {more} more (compare.json: setting_differences)" if more > 0 else "")
            + "."
        )
    return notes


def _short(text: str) -> str:
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


#: At most this many differing settings are spelled out in a note (compare.json lists every one).
MAX_DIFFERENCES_SHOWN = 4


def display_name(name: str) -> str:
    """A group's name with its algo in capitals: ``"MRTPO (mrtpo_beta=1)"``."""
    algo, sep, rest = name.partition(" ")
    return algo.upper() + sep + rest


def _paired_entry(name: str, baseline: str, metric: str, outcomes: dict[str, str]) -> dict[str, Any]:
    won = sum(o == "won" for o in outcomes.values())
    tied = sum(o == "tied" for o in outcomes.values())
    lost = sum(o == "lost" for o in outcomes.values())
    return {
        "algo": name,
        "baseline": baseline,
        "metric": metric,
        "seeds": outcomes,
        "won": won,
        "tied": tied,
        "lost": lost,
        "summary": f"{display_name(name)} beat {display_name(baseline)} on {won}/{len(outcomes)} seeds, tied {tied}, "
                   f"lost {lost}",
    }
