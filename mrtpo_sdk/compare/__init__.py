"""``mrtpo-sdk compare``: compare runs of MRTPO, GDPO and GRPO over seeds (see ``docs/compare.md``).

Public API::

    from mrtpo_sdk.compare import load_run, compare_runs, write_report
    runs = [load_run(p) for p in ["runs/compare-sql/mrtpo-seed1", "runs/compare-sql/gdpo-seed1"]]
    report = compare_runs(runs, threshold=0.8, smooth=3)   # the dict of compare.json
    write_report(report, runs, "runs/compare-sql")          # compare.json, compare.md, compare.png

Nothing here imports torch; the matrix (:func:`run_matrix`) calls ``mrtpo_sdk.trainer.cli.train_command``.
"""

from __future__ import annotations

from .cli import compare_command
from .matrix import MatrixRun, run_matrix
from .paired import minimum_detectable_difference, paired_difference, seeds_needed
from .report import print_table, render_markdown, write_report
from .stats import (
    Run,
    area_under_curve,
    compare_runs,
    load_run,
    read_jsonl,
    steps_to_threshold,
    t_interval,
)

__all__ = [
    "MatrixRun",
    "Run",
    "area_under_curve",
    "compare_command",
    "compare_runs",
    "load_run",
    "minimum_detectable_difference",
    "paired_difference",
    "print_table",
    "read_jsonl",
    "render_markdown",
    "run_matrix",
    "seeds_needed",
    "steps_to_threshold",
    "t_interval",
    "write_report",
]
