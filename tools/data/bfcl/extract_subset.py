"""Extract the small BFCL v4 subset committed under ``tasks/data/bfcl`` from an installed ``bfcl_eval``.

BFCL (gorilla / berkeley-function-call-leaderboard) is Apache-2.0; the subset keeps the original files' layout and
lines unchanged, only fewer of them. Run in any environment where ``bfcl_eval`` is installed (data only is enough:
``pip install --no-deps bfcl-eval==2026.3.23``)::

    python tools/data/bfcl/extract_subset.py [--source DIR] [--out tasks/data/bfcl]

Selection (deterministic): per category, the examples whose function docs take at most ``MAX_FUNCTION_CHARS``
characters of JSON, ordered by the sha256 of their id, the first ``PER_CATEGORY[category]`` of them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from importlib import resources
from pathlib import Path

PER_CATEGORY = {
    "simple_python": 60,
    "multiple": 40,
    "parallel": 40,
    "parallel_multiple": 40,
    "live_simple": 40,
    "live_multiple": 40,
    "live_parallel": 16,
    "live_parallel_multiple": 24,
    "irrelevance": 30,
    "live_irrelevance": 30,
}
MAX_FUNCTION_CHARS = 3000
ALSO = {"parallel_178"}
"""Kept on purpose: a question whose possible answers overlap, where the official greedy matching of parallel
calls rejects some orderings of a right response (see docs/bfcl.md, "Disagreements")."""
VERSION = "bfcl-eval 2026.3.23"


def _key(eid: str) -> str:
    return hashlib.sha256(eid.encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=None, help="BFCL data dir (default: the installed bfcl_eval)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[3] / "tasks" / "data" / "bfcl")
    args = ap.parse_args(argv)
    src = args.source or Path(str(resources.files("bfcl_eval") / "data"))
    (args.out / "possible_answer").mkdir(parents=True, exist_ok=True)
    total = 0
    for cat, k in PER_CATEGORY.items():
        lines = (src / f"BFCL_v4_{cat}.json").read_text(encoding="utf-8").splitlines()
        rows = [(json.loads(line), line) for line in lines if line.strip()]
        rows = [r for r in rows if len(json.dumps(r[0]["function"])) <= MAX_FUNCTION_CHARS and len(r[0]["question"]) == 1]
        keep = {r[0]["id"] for r in sorted(rows, key=lambda r: _key(r[0]["id"]))[:k]}
        keep |= {r[0]["id"] for r in rows if r[0]["id"] in ALSO}
        chosen = [line for row, line in rows if row["id"] in keep]  # file order
        (args.out / f"BFCL_v4_{cat}.json").write_text("\n".join(chosen) + "\n", encoding="utf-8")
        pa = src / "possible_answer" / f"BFCL_v4_{cat}.json"
        if pa.is_file():
            answers = [ln for ln in pa.read_text(encoding="utf-8").splitlines() if ln.strip() and json.loads(ln)["id"] in keep]
            (args.out / "possible_answer" / f"BFCL_v4_{cat}.json").write_text("\n".join(answers) + "\n", encoding="utf-8")
        total += len(chosen)
        print(f"{cat:24s} {len(chosen):4d} of {len(rows)} (docs <= {MAX_FUNCTION_CHARS} chars)")
    (args.out / "SOURCE.md").write_text(
        f"# BFCL v4 subset\n\n{total} questions and their possible answers, copied line for line from the data "
        f"files of `{VERSION}` (PyPI; https://github.com/ShishirPatil/gorilla, berkeley-function-call-leaderboard),\n"
        "licensed Apache-2.0 (Copyright the Gorilla / BFCL authors, UC Berkeley Sky Computing Lab).\n\n"
        "Rebuild with `python tools/data/bfcl/extract_subset.py` where `bfcl_eval` is installed.\n"
        "Selection: per category, examples whose function docs are at most "
        f"{MAX_FUNCTION_CHARS} characters of JSON, first by sha256 of the id, plus {sorted(ALSO)}; counts: "
        + ", ".join(f"{c} {n}" for c, n in PER_CATEGORY.items())
        + ".\n",
        encoding="utf-8",
    )
    print(f"{total} questions -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
