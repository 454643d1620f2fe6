"""How differently two algorithms moved the policy: the direction and size of each run's whole update.

For the runs of one seed (same initial policy, same prompts in the same order), the update of a run is
``d = theta_final - theta_initial`` over every saved tensor (float64). For each pair of algorithms of a seed it
reports

* ``cos``: the cosine of the two updates (1: the same direction; 0: unrelated);
* ``rel``: ``|d_a - d_b| / sqrt(|d_a| |d_b|)``, how far apart the two final policies are, in units of an update;
* ``|d_a|``, ``|d_b|``: the size of each update (L2 over all parameters).

It answers "did MRTPO's per-token credit change what was learned, or only re-weight a nearly identical update?"
when a comparison of held-out scores is a tie. Adam bounds each parameter's step by about ``learning_rate``
whatever the advantages' scale, so update sizes differ little between algorithms; the directions carry the
difference.

    python benchmarks/update_alignment.py runs/smollm2/sql                       # a compare matrix folder
    python benchmarks/update_alignment.py runs/a/mrtpo-seed1 runs/a/gdpo-seed1 --json out.json

Each run folder needs ``run.json`` (its ``algo``, ``seed`` and ``initial_policy``) and its final policy saved in
full (``RUN_DIR/policy/model.safetensors``, the default of ``train``); a run saved only as a LoRA adapter, or whose
initial policy cannot be loaded, a run without a seed, and two runs of one task, seed and algo are listed as
skipped with the reason. ``--model`` initial policies given by name (``smollm2``) resolve to their dequantized
folder as ``train`` does (dequantizing it if it is not cached). Policies are compared in the dtype they were saved
in, which must be the same for the initial and final policies.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mrtpo_sdk.compare.updates import align_runs, json_safe


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
    unique: dict[Path, Path] = {}
    for p in out:
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


def markdown(result: dict[str, Any]) -> str:
    lines = ["| task | seed | pair | cos(d_a, d_b) | \\|d_a − d_b\\| / update | \\|d_a\\| | \\|d_b\\| | parameters |",
             "|---|---|---|---|---|---|---|---|"]
    for p in result["pairs"]:
        left = f" ({p['tensors_left_out']} tensors not in all three)" if p["tensors_left_out"] else ""
        lines.append(f"| {p['task']} | {p['seed']} | {p['a']} vs {p['b']} | {p['cos']:.3f} | {p['rel']:.3f} | "
                     f"{p['norm_a']:.4g} | {p['norm_b']:.4g} | {p['parameters']:,}{left} |")
    if result["skipped"]:
        lines += ["", *(f"skipped: {s['run']}: {s['why']}" for s in result["skipped"])]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="run folders, or folders holding run folders (a compare matrix)")
    p.add_argument("--json", type=Path, help="also write the pairs as JSON here (a zero update's cos and rel: null)")
    a = p.parse_args(argv)
    result = align_runs(_run_folders(a.runs))
    print(markdown(result))
    if a.json:
        a.json.write_text(json.dumps(json_safe(result), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
