"""Paired differences between MRTPO and a baseline over seeds: mean, 95% interval, verdict, detectable difference.

For a pair of groups (MRTPO, or an MRTPO variant, and a baseline) and a metric, each seed both groups ran gives one
difference ``d_i = MRTPO_i - baseline_i`` in the metric's own unit. Over the ``n`` seeds with a difference:

* the paired Student-t interval of the mean difference, ``mean(d) ± t_{0.975, n-1} · sd(d) / sqrt(n)`` with the
  sample standard deviation ``sd`` (ddof 1) — Student (1908), "The probable error of a mean", *Biometrika* 6(1);
  any textbook's paired t-test, e.g. Casella and Berger, *Statistical Inference* (2002), 8.3 and 9.2;
* the verdict: ``"better"`` or ``"worse"`` for MRTPO when the interval excludes 0 (a two-sided paired t-test at
  α = 0.05 rejects "no difference"), ``"no detectable difference"`` when it holds 0;
* the minimum detectable difference (MDE) at 80% power, two-sided α = 0.05: ``(t_{0.975, n-1} + t_{0.80, n-1}) ·
  sd(d) / sqrt(n)``, the smallest true mean difference these seeds would find 80% of the time if the spread stays
  ``sd(d)`` — Bloom (1995), "Minimum detectable effects: a simple way to report the statistical power of
  experimental designs", *Evaluation Review* 19(5); the same bound as Cohen (1988), *Statistical Power Analysis for
  the Behavioral Sciences*, ch. 2, with t quantiles for the normal ones.

One seed gives a difference but no interval and no MDE (verdict ``"no interval"``); no seed gives verdict
``"no pairs"``. With zero spread (every seed's difference alike) the interval is that value and the MDE is 0.

Nothing here imports the rest of :mod:`mrtpo_sdk.compare`; :func:`~mrtpo_sdk.compare.stats.compare_runs` calls
:func:`paired_differences` with its per-group numbers.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Iterable, Sequence

from .student_t import t_ppf

__all__ = [
    "ALPHA",
    "POWER",
    "VERDICTS",
    "minimum_detectable_difference",
    "paired_difference",
    "paired_differences",
    "seeds_needed",
]

#: Two-sided significance level of the verdicts and of the MDE.
ALPHA = 0.05

#: The power at which :func:`minimum_detectable_difference` states the smallest detectable difference.
POWER = 0.80

#: The verdicts of :func:`paired_difference`, in ``compare.json``'s words.
VERDICTS = ("better", "worse", "no detectable difference", "no interval", "no pairs")

#: :func:`seeds_needed` gives up (``None``) above this many seeds.
MAX_SEEDS = 100_000


def _check_levels(alpha: float, power: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must lie strictly between 0 and 1, got {power!r}")


def minimum_detectable_difference(sd: float, n: int, *, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The smallest true mean paired difference that ``n`` seeds detect with probability ``power`` in a two-sided
    paired t-test at level ``alpha``: ``(t_{1-alpha/2, n-1} + t_{power, n-1}) · sd / sqrt(n)`` (Bloom 1995), in the
    unit of ``sd`` (the sample standard deviation of the per-seed differences). ``None`` for ``n < 2`` (no spread
    is measured); 0 for ``sd == 0``.

    >>> round(minimum_detectable_difference(0.1, 5), 6)  # (2.776445 + 0.940965) * 0.1 / sqrt(5)
    0.166248

    Raises:
        ValueError: ``sd`` is negative or not finite, ``n`` is not an integer, or ``alpha``/``power`` is not
            strictly between 0 and 1.
    """
    _check_levels(alpha, power)
    if not (math.isfinite(sd) and sd >= 0):
        raise ValueError(f"sd must be a finite number >= 0, got {sd!r}")
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"n must be an integer, got {n!r}")
    if n < 2:
        return None
    df = n - 1
    return (t_ppf(1 - alpha / 2, df) + t_ppf(power, df)) * sd / math.sqrt(n)


def seeds_needed(
    sd: float, target: float, *, alpha: float = ALPHA, power: float = POWER, max_seeds: int = MAX_SEEDS
) -> int | None:
    """The fewest seeds ``n >= 2`` whose :func:`minimum_detectable_difference` at spread ``sd`` is at most
    ``target`` (both in the metric's unit): the seeds a matrix needs to detect a true mean difference of ``target``
    with probability ``power``. Found by stepping ``n`` up from the normal approximation ``((z_{1-alpha/2} +
    z_{power}) · sd / target)²``, a lower bound since each t quantile exceeds its normal one. 2 when ``sd == 0``;
    ``None`` when more than ``max_seeds`` would be needed.

    >>> seeds_needed(0.1, 0.1)  # the MDE at 10 seeds is 0.0993, at 9 seeds 0.1058
    10

    Raises:
        ValueError: ``target`` is not a finite number > 0, ``sd`` is negative or not finite, or ``alpha``/``power``
            is not strictly between 0 and 1.
    """
    _check_levels(alpha, power)
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"target must be a finite number > 0, got {target!r}")
    if not (math.isfinite(sd) and sd >= 0):
        raise ValueError(f"sd must be a finite number >= 0, got {sd!r}")
    if sd == 0:
        return 2
    z = statistics.NormalDist()
    bound = ((z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)) * sd / target) ** 2
    if bound > max_seeds:
        return None
    n = max(2, math.floor(bound))
    while n <= max_seeds:
        mde = minimum_detectable_difference(sd, n, alpha=alpha, power=power)
        if mde is not None and mde <= target:
            return n
        n += 1
    return None


def paired_difference(differences: Sequence[float], *, higher_is_better: bool = True) -> dict[str, Any]:
    """The summary of per-seed differences ``MRTPO - baseline`` (in the metric's unit): ``{"n", "mean", "sd",
    "ci": [lo, hi] | None, "detectable": MDE | None, "verdict"}``. ``sd`` is the sample standard deviation (``None``
    below 2 values), ``ci`` the paired Student-t 95% interval of the mean, ``detectable`` the
    :func:`minimum_detectable_difference`; ``verdict`` is one of :data:`VERDICTS`: ``"better"`` when the interval
    lies on MRTPO's good side of 0 (above it when ``higher_is_better``, below it for steps to threshold),
    ``"worse"`` on the other side, ``"no detectable difference"`` when it holds 0, ``"no interval"`` for one value,
    ``"no pairs"`` for none.

    >>> d = paired_difference([0.1, 0.2, 0.3]); [round(x, 6) for x in d["ci"]], d["verdict"]
    ([-0.048414, 0.448414], 'no detectable difference')

    Raises:
        ValueError: a difference is not a finite number.
    """
    values = [float(v) for v in differences]
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"differences must be finite numbers, got {list(differences)!r}")
    n = len(values)
    out: dict[str, Any] = {"n": n, "mean": None, "sd": None, "ci": None, "detectable": None}
    if n == 0:
        return {**out, "verdict": "no pairs"}
    mean = math.fsum(values) / n
    out["mean"] = mean
    if n == 1:
        return {**out, "verdict": "no interval"}
    sd = statistics.stdev(values) if len(set(values)) > 1 else 0.0
    half = t_ppf(1 - ALPHA / 2, n - 1) * sd / math.sqrt(n)
    lo, hi = mean - half, mean + half
    if lo > 0 or hi < 0:
        verdict = "better" if (lo > 0) == higher_is_better else "worse"
    else:
        verdict = "no detectable difference"
    return {**out, "sd": sd, "ci": [lo, hi], "detectable": minimum_detectable_difference(sd, n),
            "verdict": verdict}


def _row(
    name: str, baseline: str, metric: str, ours: dict[str, Any], theirs: dict[str, Any],
    mine: dict[int, Any], other: dict[int, Any], seeds: Sequence[int], *, higher_is_better: bool,
) -> dict[str, Any]:
    differences: dict[str, float] = {}
    left_out: list[str] = []
    for seed in seeds:
        a, b = ours.get(mine[seed].label), theirs.get(other[seed].label)
        if a is None or b is None:
            left_out.append(str(seed))
        else:
            differences[str(seed)] = float(a) - float(b)
    return {
        "algo": name,
        "baseline": baseline,
        "metric": metric,
        "higher_is_better": higher_is_better,
        **paired_difference(list(differences.values()), higher_is_better=higher_is_better),
        "differences": differences,
        "left_out": left_out,
    }


def paired_differences(
    per_algo: dict[str, dict[str, Any]],
    pairs: Iterable[tuple[str, str, dict[int, Any], dict[int, Any], Sequence[int]]],
    rewards: Sequence[str],
    dev_keys: Sequence[str],
) -> list[dict[str, Any]]:
    """``compare.json``'s ``paired_differences``: per pair of groups (``pairs``, as
    :func:`~mrtpo_sdk.compare.stats.mrtpo_pairs` yields them: MRTPO group, baseline group, each one's runs by seed —
    anything with a ``label`` — and the seeds both have), one row for

    * ``auc/<reward>``: area under the reward's curve (mean reward over the run, higher is better), per reward;
    * ``dev/<metric>``: the final value of each dev metric (``dev_keys``, ``eval/`` names; higher is better);
    * ``steps_to_threshold/<reward>``: steps to threshold (lower is better), over the seeds where both runs reached
      it;

    each with :func:`paired_difference`'s numbers, ``higher_is_better``, ``differences`` (seed -> ``MRTPO -
    baseline``) and ``left_out`` (the seeds with no difference: a run that never reached the threshold, or has no
    value of the metric). ``per_algo`` is ``compare.json``'s ``algos``: each group's ``auc``, ``dev_final`` and
    ``steps_to_threshold`` with per-run ``values``.
    """
    rows: list[dict[str, Any]] = []
    for name, baseline, mine, theirs, seeds in pairs:
        ours, other = per_algo[name], per_algo[baseline]
        for r in rewards:
            rows.append(_row(name, baseline, f"auc/{r}", ours["auc"][r]["values"], other["auc"][r]["values"],
                             mine, theirs, seeds, higher_is_better=True))
        for k in dev_keys:
            rows.append(_row(name, baseline, f"dev/{k.removeprefix('eval/')}", ours["dev_final"][k]["values"],
                             other["dev_final"][k]["values"], mine, theirs, seeds, higher_is_better=True))
        for r in rewards:
            rows.append(_row(name, baseline, f"steps_to_threshold/{r}", ours["steps_to_threshold"][r]["values"],
                             other["steps_to_threshold"][r]["values"], mine, theirs, seeds, higher_is_better=False))
    return rows
