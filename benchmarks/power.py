"""How many seeds a comparison needs: per paired metric of a pilot, the detectable difference and the seeds needed.

    python benchmarks/power.py runs/m41/sql-today/compare.json --target 0.02
    python benchmarks/power.py runs/m41/sql-today --target 0.02 --target_steps 10   # the run folders themselves
    python benchmarks/power.py docs/results/sql.json --target 0.05 --alpha 0.05 --power 0.8 --json power.json

The pilot is a ``compare.json`` or a folder of run folders; ``--target`` is the true mean difference to detect on
areas under the curve and dev metrics, ``--target_steps`` on steps to threshold. Per pair and metric it prints the
pilot's n, the spread of the per-seed differences, the smallest difference detectable at 80% power (two-sided
α = 0.05) and the seeds needed for the target. The logic and its references are in :mod:`mrtpo_sdk.compare.power`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mrtpo_sdk.compare.power import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
