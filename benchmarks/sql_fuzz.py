"""Fuzz the bundled SQL task's verifiers with generated completions; measure throughput and memory.

    OMP_NUM_THREADS=1 python benchmarks/sql_fuzz.py [N]      # N completions (default 10000)

Completions mix the references (and rewrites), other examples' references, junk, fences, hostile queries of
benchmarks/hostile_sql.py (one in 50), huge strings, NUL bytes and lone surrogates. Every completion is scored by
``sql_format``, ``executes`` and ``result_match`` (training semantics); the script checks that nothing raises and
every reward is 0 or 1, and reports completions scored per second (wall clock, one thread; the worker process runs
beside it), the caller's RSS after each tenth of the run (flat = bounded caches) and the worker's peak RSS.
"""

from __future__ import annotations

import math
import os
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main(n: int) -> int:
    import importlib.util

    spec = importlib.util.spec_from_file_location("sql_task", ROOT / "tasks" / "sql.py")
    task = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(task)
    spec = importlib.util.spec_from_file_location("hostile", ROOT / "benchmarks" / "hostile_sql.py")
    hostile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hostile)
    from mrtpo_sdk.sql import score
    from mrtpo_sdk.sql.sandbox import worker_pid

    examples = task.examples("train") + task.examples("dev")
    rnd = random.Random(0)
    fast_hostile = [q for k, q in hostile.HOSTILE.items() if not k.startswith(("printf_huge", "printf_three", "instr",
                    "replace_huge", "replace_many", "recursive_unb", "recursive_ord", "recursive_dis", "recursive_fan",
                    "cross_join", "join_64_tables", "window", "sort_", "distinct_", "group_", "many_functions",
                    "randomblob", "printf_cols", "result_"))]
    slow_hostile = [q for q in hostile.HOSTILE.values() if q not in fast_hostile]

    def completion(ex) -> str:
        r = rnd.random()
        fence = lambda q: f"```sql\n{q}\n```"  # noqa: E731
        if r < 0.30:
            return fence(ex.query + rnd.choice(["", ";", ";;", " ", "\n-- done"]))
        if r < 0.45:
            return fence(rnd.choice(examples).query)
        if r < 0.55:
            q = ex.query
            i = rnd.randrange(len(q))
            return fence(q[:i] + rnd.choice(["", "x", "'", "(", ")", " OR 1", "\x00", "\udcff"]) + q[i + 1 :])
        if r < 0.62:
            return fence(rnd.choice(fast_hostile))
        if r < 0.64:
            return fence(rnd.choice(slow_hostile))
        if r < 0.72:
            return "".join(rnd.choice("```sql SELECT FROM ( ) ' ; \n\x00\udcff") for _ in range(rnd.randrange(1, 400)))
        if r < 0.78:
            return "```sql\n" * rnd.randrange(1, 50) + "x" * rnd.randrange(0, 60_000)
        if r < 0.84:
            return fence("SELECT " + "(" * rnd.randrange(1, 3000) + "1" + ")" * rnd.randrange(1, 3000))
        if r < 0.90:
            return rnd.choice(["", " ", task.FORMAT_RULE, fence("SELECT 1"), fence("SELECT count(*) FROM student")])
        return f"Reasoning.\n{fence(ex.query)}\nDone." if rnd.random() < 0.5 else fence(ex.query.lower())

    verifiers = task.task.verifiers
    marks, raised, bad = [], 0, 0
    slow = []
    scored = 0
    t0 = time.perf_counter()
    for i in range(n):
        ex = rnd.choice(examples)
        text = completion(ex)
        start = time.perf_counter()
        for v in verifiers:
            try:
                res = v.fn(ex, text)
            except Exception as exc:  # a finding
                raised += 1
                print("raised:", type(exc).__name__, str(exc)[:120], repr(text[:80]))
                continue
            if not (math.isfinite(res.reward) and res.reward in (0.0, 1.0)):
                bad += 1
        slow.append(time.perf_counter() - start)
        scored += 1
        if (i + 1) % max(1, n // 10) == 0:
            marks.append(round(_rss_mb(), 1))
    wall = time.perf_counter() - t0
    slow.sort()
    worker = worker_pid()
    from mrtpo_sdk.sql.sandbox import close_worker

    close_worker()
    worker_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    # throughput on ordinary completions only (no hostile query): the rate a training run sees
    # each query text distinct (a numbered comment), so that no result comes from the cache
    ordinary = [(ex, f"```sql\n{rnd.choice(examples).query} -- {k}\n```")
                for k, ex in enumerate(rnd.choice(examples) for _ in range(2000))]
    score.RESULT_CACHE.clear()
    t1 = time.perf_counter()
    for ex, text in ordinary:
        for v in verifiers:
            v.fn(ex, text)
    rate = len(ordinary) / (time.perf_counter() - t1)
    # and on correct answers only (each example's own reference, text made distinct): result_match's training checks
    # (ties, constants, typed-in filter values) run on every one of them
    for ex in examples:
        for v in verifiers:
            v.fn(ex, f"```sql\n{ex.query}\n```")  # the references' results and ties computed once, as in training
    correct = [(ex, f"```sql\n{ex.query} -- {k}\n```") for k, ex in enumerate(rnd.choice(examples) for _ in range(2000))]
    score.RESULT_CACHE.clear()
    t2 = time.perf_counter()
    for ex, text in correct:
        for v in verifiers:
            v.fn(ex, text)
    correct_rate = len(correct) / (time.perf_counter() - t2)
    print(f"{scored} completions x {len(verifiers)} verifiers in {wall:.1f} s ({scored / wall:.0f}/s with hostile ones): "
          f"{raised} raised, {bad} non-finite/odd rewards; slowest {slow[-1]:.2f} s, p99 {slow[int(len(slow) * .99)]*1e3:.1f} ms")
    print(f"caller RSS (MB) after each tenth: {marks}")
    print(f"worker peak RSS {worker_peak:.0f} MB (pid {worker}); result cache {score.RESULT_CACHE.nbytes / 1e6:.1f} MB")
    print(f"throughput on ordinary completions (fresh cache, 2000 completions): {rate:.0f} responses/s")
    print(f"throughput on correct completions (fresh cache, 2000 references as answers): {correct_rate:.0f} responses/s")
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 1 if raised or bad else 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if sys.argv[1:] else 10_000))
