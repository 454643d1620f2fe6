"""Wall time of `mrtpo-sdk lint tasks/` (target: under 3 s on a laptop-class CPU), side by side with the target.

Two measurements, each repeated (median reported):

* cold: the console command in a fresh process (interpreter start, imports, task loading, probes, rules), as a
  user or CI runs it;
* warm: ``lint_paths`` again inside one process (task modules and data caches already loaded): the linter's
  own work.

Also: the time per task file (cold, one process each), the number of verifier calls, and whether the run
imported torch/trl (it must not). Not part of the tests.

    python benchmarks/bench_lint.py                 # tasks/, 20 examples per task, 3 repeats
    python benchmarks/bench_lint.py --examples 50 --repeats 5 PATH ...
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 3.0


def _cold(paths: list[str], examples: int) -> tuple[float, int, str]:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "mrtpo_sdk.cli", "lint", *paths, "--examples", str(examples), "--isolated"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - start, out.returncode, (out.stdout + out.stderr).strip().splitlines()[-1:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=["tasks/"])
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    cold = []
    for _ in range(args.repeats):
        seconds, rc, last = _cold(args.paths, args.examples)
        cold.append(seconds)
    cold_med = statistics.median(cold)

    # warm, in this process; count verifier calls
    from mrtpo_sdk.lint import lint_paths
    from mrtpo_sdk.verifier import Verifier

    calls = 0
    original = Verifier.score

    def counting(self, *a, **k):
        nonlocal calls
        calls += 1
        return original(self, *a, **k)

    Verifier.score = counting  # type: ignore[method-assign]
    first = time.perf_counter()
    report = lint_paths([REPO / p for p in args.paths], examples=args.examples, isolated=True)
    first = time.perf_counter() - first
    per_run_calls = calls
    warm = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        lint_paths([REPO / p for p in args.paths], examples=args.examples, isolated=True)
        warm.append(time.perf_counter() - start)
    Verifier.score = original  # type: ignore[method-assign]
    heavy = [m for m in ("torch", "trl", "transformers") if m in sys.modules]

    files = sorted({f for p in args.paths for f in ((REPO / p).glob("*.py") if (REPO / p).is_dir() else [REPO / p])})
    print(
        f"lint {' '.join(args.paths)}: {report.tasks} tasks in {report.files} files, {args.examples} examples per "
        f"task, {per_run_calls} verifier calls per run, exit {report.exit_code}"
    )
    print(f"{'measurement':<34}{'seconds':>10}{'target':>10}{'ratio':>10}")
    print(f"{'cold (fresh process, median)':<34}{cold_med:>10.2f}{TARGET_S:>10.2f}{cold_med / TARGET_S:>10.2f}")
    print(f"{'in-process, first run':<34}{first:>10.2f}{TARGET_S:>10.2f}{first / TARGET_S:>10.2f}")
    print(
        f"{'in-process, warm (median)':<34}{statistics.median(warm):>10.2f}{TARGET_S:>10.2f}"
        f"{statistics.median(warm) / TARGET_S:>10.2f}"
    )
    for f in files:
        src = f.read_text(encoding="utf-8", errors="replace")
        if "Task(" not in src:
            continue
        seconds, rc, _ = _cold([str(f.relative_to(REPO))], args.examples)
        print(f"  {str(f.relative_to(REPO)):<32}{seconds:>10.2f}  (cold, exit {rc})")
    print(f"cold runs: {', '.join(f'{s:.2f}' for s in cold)} s; torch/trl imported by lint: {heavy or 'no'}")
    print("PASS" if cold_med < TARGET_S else "FAIL", f"(cold median {cold_med:.2f} s vs target {TARGET_S:.0f} s)")


if __name__ == "__main__":
    main()
