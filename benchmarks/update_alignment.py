"""How differently two algorithms moved the policy: the direction and size of each run's whole update.

For the runs of one seed (same initial policy, same prompts in the same order), the update of a run is
``d = theta_final - theta_initial`` over every saved tensor (float64). For each pair of algorithms of a seed it
reports

* ``cos``: the cosine of the two updates (1: the same direction; 0: unrelated);
* ``rel``: ``|d_a - d_b| / sqrt(|d_a| |d_b|)``, how far apart the two final policies are, in units of an update;
* ``|d_a|``, ``|d_b|``: the size of each update (L2 over all parameters).

It answers "did MRTPO's per-token credit change what was learned, or only re-weight a nearly identical update?"
when a comparison of held-out scores is a tie. Adam's step is ~``learning_rate`` per parameter whatever the
advantage's scale, so update sizes are alike by construction; the directions carry the difference.

    python benchmarks/update_alignment.py runs/smollm2/sql                       # a compare matrix folder
    python benchmarks/update_alignment.py runs/a/mrtpo-seed1 runs/a/gdpo-seed1 --json out.json

Each run folder needs ``run.json`` (its ``algo``, ``seed`` and ``initial_policy``) and its final policy saved in
full (``RUN_DIR/policy/model.safetensors``, the default of ``train``); a run saved only as a LoRA adapter, or whose
initial policy is no longer on disk, is listed as skipped with the reason. ``--model`` initial policies given by
name (``smollm2``) resolve to their dequantized folder as ``train`` does.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

from mrtpo_sdk.compare.updates import update_alignment

ALGO_ORDER = ("mrtpo", "gdpo", "grpo")


def _run_folders(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if (p / "run.json").is_file():
            out.append(p)
        elif p.is_dir():
            out += sorted(q for q in p.iterdir() if (q / "run.json").is_file())
        else:
            raise SystemExit(f"error: {p}: not a run folder nor a folder of runs")
    if not out:
        raise SystemExit(f"error: no run folder (a folder with run.json) in {', '.join(map(str, paths))}")
    return out


def _initial_folder(spec: str) -> Path:
    from mrtpo_sdk.policy.gguf import materialize
    from mrtpo_sdk.policy.pretrained import resolve_model

    return Path(materialize(resolve_model(spec)))


def measure(folders: list[Path]) -> dict[str, Any]:
    """``{"pairs": [{task, seed, a, b, cos, rel, norm_a, norm_b}], "skipped": [{run, why}]}`` for the runs in
    ``folders``: every pair of algorithms among the finished runs of one task and seed."""
    from safetensors.torch import load_file

    by_seed: dict[tuple[Any, Any], dict[str, tuple[Path, str]]] = {}  # (task, seed) -> algo -> (run, initial)
    skipped = []
    for f in folders:
        info = json.loads((f / "run.json").read_text(encoding="utf-8"))
        final = f / "policy" / "model.safetensors"
        if not info.get("finished"):
            skipped.append({"run": str(f), "why": "unfinished"})
            continue
        if not final.is_file():
            skipped.append({"run": str(f), "why": "no full final policy (policy/model.safetensors)"})
            continue
        start = info.get("initial_policy")
        if not isinstance(start, str):
            skipped.append({"run": str(f), "why": "run.json names no initial_policy"})
            continue
        by_seed.setdefault((info.get("task"), info.get("seed")), {})[info.get("algo")] = (f, start)
    pairs = []
    for (task, seed), runs in sorted(by_seed.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        algos = sorted(runs, key=lambda a: ALGO_ORDER.index(a) if a in ALGO_ORDER else len(ALGO_ORDER))
        starts = {runs[a][1] for a in algos}
        if len(starts) > 1:
            skipped += [{"run": str(runs[a][0]), "why": f"{task} seed {seed}: runs start from different policies"}
                        for a in algos]
            continue
        if len(algos) < 2:
            continue
        initial_file = _initial_folder(starts.pop()) / "model.safetensors"
        if not initial_file.is_file():
            skipped += [{"run": str(runs[a][0]), "why": f"initial policy {initial_file} is not on disk"} for a in algos]
            continue
        initial = load_file(str(initial_file))
        finals = {a: load_file(str(runs[a][0] / "policy" / "model.safetensors")) for a in algos}
        for a, b in itertools.combinations(algos, 2):
            pairs.append({"task": task, "seed": seed, "a": a, "b": b, **update_alignment(initial, finals[a], finals[b])})
    return {"pairs": pairs, "skipped": skipped}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| task | seed | pair | cos(d_a, d_b) | \\|d_a − d_b\\| / update | \\|d_a\\| | \\|d_b\\| |", "|---|---|---|---|---|---|---|"]
    for p in result["pairs"]:
        lines.append(f"| {p['task']} | {p['seed']} | {p['a']} vs {p['b']} | {p['cos']:.3f} | {p['rel']:.3f} | {p['norm_a']:.4g} | "
                     f"{p['norm_b']:.4g} |")
    if result["skipped"]:
        lines += ["", *(f"skipped: {s['run']}: {s['why']}" for s in result["skipped"])]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="run folders, or folders holding run folders (a compare matrix)")
    p.add_argument("--json", type=Path, help="also write the pairs as JSON here")
    a = p.parse_args(argv)
    result = measure(_run_folders(a.runs))
    print(markdown(result))
    if a.json:
        a.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
