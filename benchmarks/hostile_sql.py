"""Hostile SQL battery: every query must end within 2 s and 512 MB, stopped by a limit that the error names.

    OMP_NUM_THREADS=1 python benchmarks/hostile_sql.py            # the whole battery, one fresh process per query
    OMP_NUM_THREADS=1 python benchmarks/hostile_sql.py NAME ...   # some queries

Each query runs in a fresh Python process (so the peak-memory figures are its own): the caller's peak RSS and the
sandbox worker's peak RSS (``RUSAGE_CHILDREN`` after the worker is closed) are printed with the wall time, the
``limit`` that stopped it and the start of its error. Exit status 1 when a query breaks a target. The queries run
against the bundled ``university`` database; the battery is ``tests/sql/hostile_battery.py``, and
``tests/sql/test_hostile.py`` runs a sample of it in CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.sql.hostile_battery import HOSTILE  # noqa: E402  (the queries; also read by benchmarks/sql_fuzz.py)

TIME_TARGET_S = 2.0
MEMORY_TARGET_MB = 512


def _one(name: str) -> dict:
    """Run HOSTILE[name] in this process (called in a fresh child) and return the figures."""
    import resource

    sys.path.insert(0, str(ROOT))
    from mrtpo_sdk.sql import execute_sql, load_spider
    from mrtpo_sdk.sql.sandbox import close_worker

    db = next(e.db_path for e in load_spider(ROOT / "tasks" / "data" / "sql", "dev") if e.db_id == "university")
    execute_sql(db, "SELECT 1")  # worker started, connection open
    start = time.monotonic()
    res = execute_sql(db, HOSTILE[name])
    elapsed = time.monotonic() - start
    close_worker()
    per_mb = 2**20 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
    return {
        "name": name,
        "seconds": round(elapsed, 3),
        "caller_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / per_mb, 1),
        "worker_peak_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / per_mb, 1),
        "ok": res.ok,
        "limit": res.limit,
        "error": res.error[:110],
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(_one(argv[1])))
        return 0
    names = argv or list(HOSTILE)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    rows, failures = [], 0
    for name in names:
        start = time.monotonic()
        proc = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True, env=env,
                              timeout=60)
        wall = time.monotonic() - start
        try:
            row = json.loads(proc.stdout.strip().splitlines()[-1])
        except Exception:
            row = {"name": name, "seconds": wall, "caller_peak_mb": -1, "worker_peak_mb": -1, "ok": False,
                   "limit": "?", "error": (proc.stderr or "no output")[-110:]}
        bad = (row["seconds"] > TIME_TARGET_S or max(row["caller_peak_mb"], row["worker_peak_mb"]) > MEMORY_TARGET_MB
               or row["caller_peak_mb"] < 0)
        failures += bad
        rows.append(row)
        print(f"{'FAIL' if bad else 'ok  '} {name:32s} {row['seconds']:6.2f} s  caller {row['caller_peak_mb']:6.1f} MB  "
              f"worker {row['worker_peak_mb']:6.1f} MB  {'runs' if row['ok'] else row['limit'] or 'error'}: {row['error'][:70]}",
              flush=True)
    worst_s = max(r["seconds"] for r in rows)
    worst_mb = max(max(r["caller_peak_mb"], r["worker_peak_mb"]) for r in rows)
    stopped = sum(1 for r in rows if r["limit"])
    print(f"{len(rows)} queries: slowest {worst_s:.2f} s, largest peak {worst_mb:.0f} MB, {stopped} stopped by a limit, "
          f"{sum(r['ok'] for r in rows)} ran, {failures} broke a target (2 s, 512 MB)")
    try:
        print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    except OSError:
        pass
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
