"""Agreement with the official BFCL AST checker on the committed verdict file (built by benchmarks/bfcl_agreement).

The verdicts were produced once, in a separate environment, by ``bfcl_eval``'s own decoder and checker; here our
parser + checker judge the same responses offline. Every disagreement must be listed in docs/bfcl.md.
"""

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def result():
    spec = importlib.util.spec_from_file_location("bfcl_compare", ROOT / "benchmarks" / "bfcl_agreement" / "compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compare()


def test_verdict_file_covers_the_perturbations(result):
    assert result["header"] == {"bfcl_eval": "2026.3.23", "model_name": "Qwen/Qwen3-8B-FC"}
    assert result["n"] >= 2000
    kinds = Counter(r["kind"] for r in result["rows"])
    for kind in ("reference", "wrong_function_other", "missing_required", "extra_parameter", "renamed_parameter",
                 "int_as_string", "int_as_float", "float_as_int", "bool_as_string", "reorder_reverse",
                 "reorder_permutation", "omit_optional", "string_upper", "string_spacing", "no_call", "call_anyway"):
        assert kinds[kind] > 0, kind
    valid = sum(r["official_valid"] for r in result["rows"])
    assert 0.2 < valid / result["n"] < 0.6  # both verdicts are well represented
    assert set(Counter(r["category"] for r in result["rows"])) == {
        "simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple", "live_parallel",
        "live_parallel_multiple", "irrelevance", "live_irrelevance"}


def test_agreement_at_least_99_percent(result):
    assert result["agree"] / result["n"] >= 0.99


def test_every_disagreement_is_documented(result):
    doc = (ROOT / "docs" / "bfcl.md").read_text(encoding="utf-8")
    listed = Counter(re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", doc, flags=re.MULTILINE))
    found = Counter((r["id"], r["kind"]) for r in result["disagreements"])
    assert found == listed
