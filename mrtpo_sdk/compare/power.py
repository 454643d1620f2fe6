"""How many seeds a comparison needs: per paired metric of a pilot, the detectable difference and the seeds needed.

The command is ``benchmarks/power.py`` (it calls :func:`main`)::

    python benchmarks/power.py runs/m41/sql-today/compare.json --target 0.02
    python benchmarks/power.py runs/m41/sql-today --target 0.02 --target_steps 10   # the run folders themselves
    python benchmarks/power.py docs/results/sql.json --target 0.05 --alpha 0.05 --power 0.8 --json power.json

The pilot is a ``compare.json`` (its ``paired_differences``; one without them is read from its ``algos``), or a
folder of run folders (``<algo>-seed<N>``, compared here with ``--threshold`` and ``--smooth`` as ``mrtpo-sdk
compare`` does). For each pair (MRTPO vs a baseline) and metric it prints the pilot's n and the spread of the
per-seed differences ``sd``, the minimum detectable difference at the pilot's n (``(t_{1-α/2, n-1} + t_{power,
n-1}) · sd / √n``, :func:`~mrtpo_sdk.compare.paired.minimum_detectable_difference`), and the seeds needed to detect
a true mean difference of the target at the same spread (:func:`~mrtpo_sdk.compare.paired.seeds_needed`, stepping
n up since t depends on n). ``--target`` applies to areas under the curve and dev metrics (their unit: a share),
``--target_steps`` to steps to threshold (steps); a row without a target shows its MDE only. A row with fewer than
2 differences has no spread: it shows none. Nothing here imports torch.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Sequence

from ..errors import MRTPOError
from ..trainer.algos import ALGORITHMS
from .paired import MAX_SEEDS, minimum_detectable_difference, paired_differences, seeds_needed
from .stats import compare_runs, display_name, load_run, mrtpo_pairs

__all__ = ["load_pilot", "main", "power_rows"]


def _from_report(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's paired differences; for a ``compare.json`` without them, worked out from its ``algos``."""
    if "paired_differences" in report:
        return report["paired_differences"]
    groups = {name: [SimpleNamespace(algo=s.get("algo", name), seed=seed, label=f"seed{seed}")
                     for seed in s.get("seeds", []) if seed is not None] for name, s in report["algos"].items()}
    return paired_differences(report["algos"], mrtpo_pairs(groups), report["rewards"], report["dev_metrics"])


def load_pilot(path: Path, threshold: float, smooth: int) -> tuple[list[dict[str, Any]], float]:
    """``(paired differences, threshold)`` of a ``compare.json`` or of a folder of run folders.

    Raises:
        MRTPOError: the path is neither, or a run folder cannot be read.
    """
    if path.is_dir():
        folders = sorted(p for p in path.iterdir() if (p / "metrics.jsonl").is_file())
        if folders:
            runs = [load_run(p, tuple(ALGORITHMS)) for p in folders]
            return compare_runs(runs, threshold=threshold, smooth=smooth)["paired_differences"], threshold
        if (path / "compare.json").is_file():
            path = path / "compare.json"
        else:
            raise MRTPOError(f"{path}: neither run folders (with metrics.jsonl) nor a compare.json in it")
    if not path.is_file():
        raise MRTPOError(f"{path}: no such file or folder")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise MRTPOError(f"{path}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(report, dict) or "algos" not in report:
        raise MRTPOError(f"{path}: not a compare.json written by `mrtpo-sdk compare`")
    return _from_report(report), report["threshold"]


def power_rows(rows: list[dict[str, Any]], *, target: float | None, target_steps: float | None, alpha: float,
               power: float) -> list[dict[str, Any]]:
    """Per paired difference: ``pair``, ``metric``, ``n``, ``sd``, ``mde`` at n, ``target`` and ``seeds_needed``
    (``None`` where there is no target or no spread; :data:`~mrtpo_sdk.compare.paired.MAX_SEEDS` + 1 stands for
    "more than that")."""
    out = []
    for p in rows:
        goal = target_steps if p["metric"].startswith("steps_to_threshold/") else target
        sd = p["sd"]
        mde = None if sd is None else minimum_detectable_difference(sd, p["n"], alpha=alpha, power=power)
        needed = None
        if sd is not None and goal is not None:
            needed = seeds_needed(sd, goal, alpha=alpha, power=power)
            needed = MAX_SEEDS + 1 if needed is None else needed
        out.append({"pair": f"{display_name(p['algo'])} vs {display_name(p['baseline'])}", "metric": p["metric"],
                    "n": p["n"], "sd": sd, "mde": mde, "target": goal, "seeds_needed": needed})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``benchmarks/power.py``: parse ``argv``, print the table (and write ``--json``); 0 done, 2 an error (one
    ``error:`` line: a pilot that cannot be read)."""
    p = argparse.ArgumentParser(prog="benchmarks/power.py", description=__doc__.split("\n\n")[0],
                                epilog="See the docstring of mrtpo_sdk/compare/power.py.")
    p.add_argument("pilot", type=Path, help="a compare.json, or a folder of run folders")
    p.add_argument("--target", type=float, default=None,
                   help="the true mean difference to detect on areas under the curve and dev metrics (e.g. 0.02)")
    p.add_argument("--target_steps", type=float, default=None,
                   help="the true mean difference to detect on steps to threshold, in steps")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided significance level (0.05)")
    p.add_argument("--power", type=float, default=0.80, help="the chance of detecting the target (0.80)")
    p.add_argument("--threshold", type=float, default=0.8, help="runs folder: the reward threshold (0.8)")
    p.add_argument("--smooth", type=int, default=3, help="runs folder: the trailing window in logged steps (3)")
    p.add_argument("--json", type=Path, default=None, help="also write the rows to this JSON file")
    args = p.parse_args(argv)

    for name in ("target", "target_steps"):
        value = getattr(args, name)
        if value is not None and not value > 0:
            p.error(f"--{name} must be > 0, got {value}")
    try:
        rows, threshold = load_pilot(args.pilot, args.threshold, args.smooth)
        table = power_rows(rows, target=args.target, target_steps=args.target_steps, alpha=args.alpha,
                           power=args.power)
    except (MRTPOError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"pilot {args.pilot}: detectable difference at {args.power:.0%} power, two-sided alpha {args.alpha:g}")
    header = ("pair", "metric", "n", "sd", "detectable >=", "target", "seeds needed")
    lines = [header]
    for r in table:
        digits = 1 if r["metric"].startswith("steps_to_threshold/") else 4
        metric = r["metric"].replace("steps_to_threshold/", f"steps_to_{threshold:g}/")
        fmt = (lambda v: "-" if v is None else f"{v:.{digits}f}")
        needed = r["seeds_needed"]
        lines.append((r["pair"], metric, str(r["n"]), fmt(r["sd"]), fmt(r["mde"]),
                      "-" if r["target"] is None else f"{r['target']:g}",
                      "-" if needed is None else (f">{MAX_SEEDS}" if needed > MAX_SEEDS else str(needed))))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))))
    if args.json:
        args.json.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
        print(f"json: {args.json}")
    return 0
