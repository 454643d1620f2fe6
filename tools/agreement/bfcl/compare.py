"""Compare our checker's verdicts with the official BFCL checker's (step 3; project venv, offline).

    python tools/agreement/bfcl/compare.py [--verdicts tests/data/bfcl_agreement_verdicts.jsonl.gz]
        [--semantics official|training]

Prints the agreement overall, per category and per perturbation kind, and every disagreement (id, kind, both
verdicts, our reason). The agreement is reported for the ``official`` semantics (the default here: the one meant
to reproduce the official checker); ``--semantics training`` lists where the training semantics (the rewards'
default) departs from it, each a row of the table in ``docs/bfcl.md``. ``tests/toolcall/test_bfcl_agreement.py``
asserts the same figures in CI.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter
from pathlib import Path

from mrtpo_sdk.toolcall import CATEGORIES, SEMANTICS, check_calls, load_bfcl, parse_tool_response

ROOT = Path(__file__).resolve().parents[3]
VERDICTS = ROOT / "tests" / "data" / "bfcl_agreement_verdicts.jsonl.gz"


def our_verdict(example, response: str, semantics: str = "official") -> tuple[bool, str]:
    """``(correct, reason)`` by our parser and checker; an unparseable call part is incorrect."""
    parsed = parse_tool_response(response)
    if parsed.calls is None:
        return False, parsed.error
    check = check_calls(example.functions, parsed.calls, example.possible_answer, semantics)
    return check.correct, check.error


def compare(
    verdicts: Path = VERDICTS, data: Path = ROOT / "tasks" / "data" / "bfcl", semantics: str = "official"
) -> dict:
    """Agreement figures: ``{"n", "agree", "rows": [...], "disagreements": [...]}``."""
    examples = {e.id: e for e in load_bfcl(data, CATEGORIES, split="all")}
    with gzip.open(verdicts, "rt", encoding="utf-8") as fh:
        header, *rows = [json.loads(line) for line in fh]
    out, dis = [], []
    for row in rows:
        ours, reason = our_verdict(examples[row["id"]], row["response"], semantics)
        row = {**row, "ours": ours, "our_reason": reason}
        out.append(row)
        if ours != row["official_valid"]:
            dis.append(row)
    return {"header": header, "semantics": semantics, "n": len(out), "agree": len(out) - len(dis), "rows": out, "disagreements": dis}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verdicts", type=Path, default=VERDICTS)
    ap.add_argument("--data", type=Path, default=ROOT / "tasks" / "data" / "bfcl")
    ap.add_argument("--semantics", choices=SEMANTICS, default="official")
    args = ap.parse_args(argv)
    res = compare(args.verdicts, args.data, args.semantics)
    print(f"official checker: {res['header']}; our semantics: {res['semantics']}")
    print(f"agreement: {res['agree']}/{res['n']} = {res['agree'] / res['n']:.4f}")
    valid = sum(r["official_valid"] for r in res["rows"])
    print(f"official valid: {valid}, ours valid: {sum(r['ours'] for r in res['rows'])}")
    for key in ("category", "kind"):
        tot, bad = Counter(r[key] for r in res["rows"]), Counter(r[key] for r in res["disagreements"])
        print(f"\nby {key}: " + ", ".join(f"{k} {tot[k] - bad[k]}/{tot[k]}" for k in sorted(tot)))
    print(f"\n{len(res['disagreements'])} disagreements:")
    for r in res["disagreements"]:
        print(f"- {r['id']} [{r['kind']}] official={r['official_valid']} ({r.get('official_error_type', '')}) "
              f"ours={r['ours']} ({r['our_reason']})")
        print("    " + r["response"].split("</think>")[-1].strip().replace("\n", " ")[:300])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
