"""Fuzz the BFCL tool-calling verifiers (tasks/bfcl.py) with hostile model output; time every completion.

    OMP_NUM_THREADS=1 python benchmarks/bfcl_fuzz.py [--n 12000] [--seed 0] [--semantics training]

Each completion is built from a bundled question by one of :data:`KINDS` (huge texts and string arguments, deep
JSON nesting, thousands of ``<tool_call>`` tags, NUL bytes, lone surrogates, mutated references, huge and tiny
numbers, tag soup, random Unicode) and scored by the three verifiers and the official verdict of ``eval``'s
``ast_accuracy_official``. Any exception, a reward that is not a finite number in [0, 1], or a ``None`` where the
reward applies is a failure. Prints the failures, the time per completion (all verifiers together: mean, p50, p99,
max) and the slowest kinds. The generators are ``tests/toolcall/fuzz_inputs.py``; ``tests/toolcall/test_fuzz.py``
draws from them with hypothesis in CI.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.toolcall.fuzz_inputs import KINDS, hostile, score_one  # noqa: E402

def main(argv: list[str] | None = None) -> int:
    from tests.toolcall.adversarial_search import load_examples
    from tasks.bfcl import official_verdict

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=12_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--semantics", default="training", choices=("training", "official"))
    args = ap.parse_args(argv)
    task, examples = load_examples(semantics=args.semantics)
    rng = random.Random(args.seed)
    times: list[float] = []
    by_kind: dict[str, list[float]] = defaultdict(list)
    failures: Counter = Counter()
    shown = 0
    start = time.perf_counter()
    for i in range(args.n):
        example, kind = examples[i % len(examples)], KINDS[(i // len(examples) + i) % len(KINDS)]
        text = hostile(rng, task, example, kind)
        t0 = time.perf_counter()
        bad = score_one(task, example, text, official_verdict)
        dt = time.perf_counter() - t0
        times.append(dt)
        by_kind[kind].append(dt)
        if bad:
            failures[(kind, bad)] += 1
            if shown < 10:
                print(f"FAIL {example.id} [{kind}] {bad}: {text[:100]!r}")
                shown += 1
    wall = time.perf_counter() - start
    times.sort()
    print(f"{args.n} completions ({args.semantics}) on {len(examples)} questions, {len(KINDS)} kinds, seed {args.seed}: "
          f"{sum(failures.values())} failures; scoring {sum(times):.1f} s, wall {wall:.1f} s")
    print(f"time per completion (3 verifiers + official verdict): mean {1e3 * statistics.fmean(times):.2f} ms, "
          f"p50 {1e3 * times[len(times) // 2]:.2f} ms, p99 {1e3 * times[int(len(times) * 0.99)]:.2f} ms, "
          f"max {1e3 * times[-1]:.1f} ms")
    for kind in sorted(by_kind, key=lambda k: -max(by_kind[k])):
        ts = by_kind[kind]
        print(f"  {kind:22} n={len(ts):5}  mean {1e3 * statistics.fmean(ts):7.2f} ms  max {1e3 * max(ts):7.1f} ms")
    for (kind, bad), n in failures.most_common():
        print(f"  {n:5} x [{kind}] {bad}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
