#!/usr/bin/env bash
# Rebuild tests/data/bfcl_agreement_verdicts.jsonl.gz: perturbed responses (project venv), the official BFCL
# checker's verdicts (a separate venv under /tmp: bfcl_eval pins numpy==1.26.4 and imports every API client), then
# our agreement figures. Needs PyPI for the separate venv; the result is committed and CI only runs the comparison.
set -euo pipefail
cd "$(dirname "$0")/../../.."
OFFICIAL=${BFCL_OFFICIAL_VENV:-/tmp/bfcl-official}
if [ ! -x "$OFFICIAL/bin/python" ]; then
  python3 -m venv "$OFFICIAL"
  "$OFFICIAL/bin/pip" install -q --no-deps bfcl-eval==2026.3.23
  # bfcl_eval's own requirements, less sentence-transformers and faiss-cpu (only its agentic categories use them)
  "$OFFICIAL/bin/pip" install -q requests tqdm numpy==1.26.4 pandas pydantic python-dotenv tree_sitter==0.21.3 \
    tree-sitter-java==0.21.0 tree-sitter-javascript==0.21.4 openai mistralai==1.7.0 anthropic cohere==5.18.0 typer \
    tabulate datamodel-code-generator==0.25.7 google-genai qwen-agent mpmath==1.3.0 tenacity writer-sdk overrides \
    boto3 beautifulsoup4 html2text rank_bm25==0.2.2 google-search-results networkx==3.3 filelock==3.20.0 \
    huggingface_hub soundfile
fi
python tools/agreement/bfcl/build_responses.py --out /tmp/bfcl_agreement/responses.jsonl
"$OFFICIAL/bin/python" tools/agreement/bfcl/official_verdicts.py \
  --responses /tmp/bfcl_agreement/responses.jsonl --out tests/data/bfcl_agreement_verdicts.jsonl.gz
python tools/agreement/bfcl/compare.py
