"""The calibration table of the replay rules (MRT015-MRT017): what `lint --replay` measures per verifier on the bad
fixture blocks (``tests/lint/fixtures/replay/``) and the bundled tasks, and what it flags.

    python benchmarks/lint_replay_calibration.py                          # smollm2, 8 examples, the default
    python benchmarks/lint_replay_calibration.py --model embedded --examples 4 tasks/sql.py

Per verifier: the completions replayed, the median of the largest ``q`` on the response, how many are below the
MRT015 threshold, the median share of tokens holding 80% of the distance (over the completions the block moves),
how many are above the MRT016 threshold, the highest median top-token overlap with another verifier (MRT017), and
the findings. The replays are ``lint --replay``'s, read from its cache when a run already made them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PATHS = [ROOT / "tests" / "lint" / "fixtures" / "replay", ROOT / "tasks"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", default=None, help="task files or folders (default: the fixtures, tasks/)")
    p.add_argument("--model", default=None, help="as lint's --model (default: smollm2)")
    p.add_argument("--examples", type=int, default=8)
    p.add_argument("--samples", type=int, default=0)
    a = p.parse_args(argv)

    from mrtpo_sdk.lint import Layer
    from mrtpo_sdk.lint.replay import REPLAY_CODES, ReplayOptions, default_model, max_q, share_for_mass, top_overlap
    from mrtpo_sdk.lint.rules._replay import Q_MIN
    from mrtpo_sdk.lint.rules.mrt016_block_moves_everything_alike import SHARE_MAX
    from mrtpo_sdk.lint.runner import _replay as replay_of
    from mrtpo_sdk.lint.runner import build_context, lint_paths, settings_for
    from mrtpo_sdk.lint.static import source_file
    from mrtpo_sdk.loader import find_tasks, import_task_module

    options = ReplayOptions(model=a.model or default_model(), examples=a.examples, samples=a.samples)
    paths = [Path(x).resolve() for x in a.paths] if a.paths else DEFAULT_PATHS
    start = time.perf_counter()
    report = lint_paths(paths, isolated=True, cli=Layer(select=sorted(REPLAY_CODES)), replay=options)
    seconds = time.perf_counter() - start
    by_verifier: dict[tuple[str, str], list[str]] = {}
    for f in report.findings:
        by_verifier.setdefault((str(f.path), f.verifier or ""), []).append(f.code or "error")
    print(f"policy {options.model}, {a.examples} examples, {a.samples} samples; {seconds:.0f} s "
          f"({report.tasks} tasks; replays read from the cache count ~0 s)")
    print("| task file | verifier | completions | max q (median) | max q < %.2f | share80 (median) | share80 > %.0f%% "
          "| top-token overlap (best pair) | findings |" % (Q_MIN, SHARE_MAX * 100))
    print("|---|---|---|---|---|---|---|---|---|")
    files = sorted({f.resolve() for x in paths for f in ([x] if x.is_file() else x.glob("*.py"))
                    if not f.name.startswith("_")})
    settings = settings_for(None, Layer())
    for path in files:
        tasks = find_tasks(path)
        for var, task in tasks.items():
            ctx = build_context(path, source_file(path), import_task_module(path), var, task, settings)
            data = replay_of(path, var, task, ctx, settings, options, len(tasks) > 1)
            name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            for k, v in enumerate(task.verifiers):
                rows = [c.q[k] for c in data.completions if c.q[k] is not None]
                if not rows:
                    print(f"| {name} | {v.name} | 0 (empty block) | | | | | | |")
                    continue
                mq = [max_q(q) for q in rows]
                moved = [q for q in rows if max_q(q) >= Q_MIN]
                shares = [s for s in (share_for_mass(q) for q in moved) if s is not None]
                best = "-"
                for j in range(len(task.verifiers)):
                    pairs = [top_overlap(c.q[k], c.q[j]) for c in data.completions
                             if j != k and c.q[k] is not None and c.q[j] is not None
                             and max_q(c.q[k]) >= Q_MIN and max_q(c.q[j]) >= Q_MIN]
                    if pairs and (best == "-" or statistics.median(pairs) > float(best.split()[0])):
                        best = f"{statistics.median(pairs):.2f} ({task.verifiers[j].name})"
                found = ", ".join(by_verifier.get((str(path), v.name), [])) or "-"
                share = f"{statistics.median(shares):.2f} | {sum(s > SHARE_MAX for s in shares)}/{len(shares)}" \
                    if shares else "- | -"
                print(f"| {name} | {v.name} | {len(rows)} | {statistics.median(mq):.2f} | "
                      f"{sum(m < Q_MIN for m in mq)}/{len(rows)} | {share} | {best} | {found} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
