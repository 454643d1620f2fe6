"""Print per-type agreement between our checkers and the committed lm-eval IFEval verdicts.

python tools/agreement/ifeval/compare.py [tests/data/ifeval_agreement.jsonl]
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from mrtpo_sdk.instructions import check

DEFAULT = Path(__file__).parents[3] / "tests" / "data" / "ifeval_agreement.jsonl"


def main(path: Path) -> None:
    lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line]
    meta, rows = json.loads(lines[0])["_meta"], [json.loads(line) for line in lines[1:]]
    total, agree, by_dev, training_differs = Counter(), Counter(), Counter(), Counter()
    sides = Counter()
    start = time.perf_counter()
    for r in rows:
        ours = check(r["id"], r["kwargs"], r["response"], semantics="official")
        total[r["id"]] += 1
        sides[(r["id"], r["reference"])] += 1
        if ours == r["reference"]:
            agree[r["id"]] += 1
        else:
            by_dev[r["deviation"]] += 1
        if check(r["id"], r["kwargs"], r["response"]) != ours:  # training semantics (the rewards' default)
            training_differs[r["id"]] += 1
    elapsed = time.perf_counter() - start
    print(f"reference: {meta['reference']} (nltk {meta['nltk']}, langdetect {meta['langdetect']}, seed 0)")
    print("agree: semantics='official' vs the reference; training differs: pairs where semantics='training' differs")
    print(f"{'constraint':48} {'pairs':>6} {'T/F':>9} {'agree':>6} {'training differs':>17}")
    for cid in sorted(total):
        tf = f"{sides[(cid, True)]}/{sides[(cid, False)]}"
        print(f"{cid:48} {total[cid]:>6} {tf:>9} {agree[cid] / total[cid]:>6.1%} {training_differs[cid]:>17}")
    n, a = sum(total.values()), sum(agree.values())
    print(f"training semantics differs from official on {sum(training_differs.values())}/{n} pairs")
    print(f"all: {a}/{n} agree ({a / n:.2%}); disagreements by documented deviation: {dict(by_dev)}; {elapsed:.1f} s")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
