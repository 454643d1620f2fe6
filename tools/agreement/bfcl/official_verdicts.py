"""Get the official BFCL checker's verdict on each perturbed response (step 2; runs in a SEPARATE venv).

``bfcl_eval``'s checker cannot be imported beside our stack (it pins ``numpy==1.26.4`` and imports every model
handler's API client), so this script runs in its own environment — see ``make_verdicts.sh`` — and imports nothing
from ``mrtpo_sdk``. It evaluates each response exactly as BFCL evaluates the Qwen3 FC handler
(``Qwen/Qwen3-8B-FC``, whose output format is ours): the text after the last ``</think>`` is decoded by
``QwenFCHandler.decode_ast`` and judged by ``eval_runner._evaluate_single_ast_entry`` (``ast_checker``), or by
``_evaluate_single_relevance_entry`` for the irrelevance categories.

    /tmp/bfcl-official/bin/python tools/agreement/bfcl/official_verdicts.py \\
        --responses /tmp/bfcl_agreement/responses.jsonl --out tests/data/bfcl_agreement_verdicts.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
from importlib import metadata, resources
from pathlib import Path

from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker.eval_runner import _evaluate_single_ast_entry, _evaluate_single_relevance_entry
from bfcl_eval.model_handler.local_inference.qwen_fc import QwenFCHandler

MODEL = "Qwen/Qwen3-8B-FC"


def _read(path: Path) -> dict[str, dict]:
    return {row["id"]: row for row in (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--responses", type=Path, default=Path("/tmp/bfcl_agreement/responses.jsonl"))
    verdicts = Path(__file__).resolve().parents[3] / "tests" / "data" / "bfcl_agreement_verdicts.jsonl.gz"
    ap.add_argument("--out", type=Path, default=verdicts)
    args = ap.parse_args(argv)
    data = Path(str(resources.files("bfcl_eval") / "data"))
    handler = object.__new__(QwenFCHandler)  # decode_ast needs no model, tokenizer or server
    questions: dict[str, dict[str, dict]] = {}
    answers: dict[str, dict[str, dict]] = {}
    rows = [json.loads(line) for line in args.responses.read_text(encoding="utf-8").splitlines() if line.strip()]
    n_valid = 0
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as fh:
        fh.write(json.dumps({"bfcl_eval": metadata.version("bfcl_eval"), "model_name": MODEL}) + "\n")
        for row in rows:
            cat = row["category"]
            if cat not in questions:
                questions[cat] = _read(data / f"BFCL_v4_{cat}.json")
                pa = data / "possible_answer" / f"BFCL_v4_{cat}.json"
                answers[cat] = _read(pa) if pa.is_file() else {}
            prompt = questions[cat][row["id"]]
            text = row["response"]
            model_responses = text.split("</think>")[-1].lstrip("\n") if "</think>" in text else text
            if "irrelevance" in cat:
                res = _evaluate_single_relevance_entry(handler, row["id"], model_responses, prompt, MODEL, cat)
            else:
                res = _evaluate_single_ast_entry(
                    handler, row["id"], model_responses, answers[cat][row["id"]]["ground_truth"], prompt, MODEL, cat,
                    language=Language.PYTHON, return_format=ReturnFormat.PYTHON, has_tool_call_tag=False,
                )
            valid = bool(res["valid"])
            n_valid += valid
            out = {**row, "official_valid": valid}
            if not valid:
                out["official_error_type"] = res.get("error_type", "")
            fh.write(json.dumps(out, ensure_ascii=False) + "\n")
    print(f"{len(rows)} responses, {n_valid} valid by the official checker -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
