"""How two runs of one initial policy moved it: the cosine and distance of their whole updates.

:func:`update_alignment` takes two runs' final state dicts and their initial one; :func:`align_runs` pairs the
finished runs of one task and seed found in run folders and measures each pair (``benchmarks/update_alignment.py``
is its command line). Torch loads only when a policy is read, so ``mrtpo_sdk.compare`` stays torch-free.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..trainer.algos import ALGORITHMS

__all__ = ["align_runs", "json_safe", "update_alignment"]


def update_alignment(
    initial: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any]
) -> dict[str, float]:
    """How alike the updates ``d_a = a - initial`` and ``d_b = b - initial`` are, over the tensors all three
    name -> tensor mappings hold (state dicts of one architecture, one float dtype per tensor; computed in float64):

    * ``cos``: ``<d_a, d_b> / (|d_a| |d_b|)`` in [-1, 1]; NaN when either update is zero;
    * ``rel``: ``|d_a - d_b| / sqrt(|d_a| |d_b|)`` (>= 0): the distance of the two final policies in units of an
      update; NaN when either update is zero;
    * ``norm_a``, ``norm_b``: ``|d_a|``, ``|d_b|`` (L2 over all shared parameters);
    * ``parameters``: how many parameters were compared; ``tensors_left_out``: how many tensor names not all three
      hold.

    Raises:
        ValueError: no tensor name is shared by all three, or a shared tensor's shapes or dtypes differ (a policy
            saved in bf16 against a float32 one would measure the rounding, not the update).
    """
    aa = bb = ab = dd = 0.0
    shared = [k for k in initial if k in a and k in b]
    if not shared:
        raise ValueError("the policies share no tensor name")
    parameters = 0
    for k in shared:
        if not (initial[k].shape == a[k].shape == b[k].shape):
            raise ValueError(f"tensor {k}: shapes {tuple(initial[k].shape)}, {tuple(a[k].shape)}, {tuple(b[k].shape)}")
        if not (initial[k].dtype == a[k].dtype == b[k].dtype):
            raise ValueError(f"tensor {k}: dtypes {initial[k].dtype}, {a[k].dtype}, {b[k].dtype}; compare policies "
                             f"saved in one dtype")
        parameters += initial[k].numel()
        x = a[k].double() - initial[k].double()
        y = b[k].double() - initial[k].double()
        aa += float((x * x).sum())
        bb += float((y * y).sum())
        ab += float((x * y).sum())
        dd += float(((x - y) ** 2).sum())
    norm_a, norm_b = math.sqrt(aa), math.sqrt(bb)
    counts = {"parameters": parameters, "tensors_left_out": len(set(initial) | set(a) | set(b)) - len(shared)}
    if norm_a == 0 or norm_b == 0:
        return {"cos": math.nan, "rel": math.nan, "norm_a": norm_a, "norm_b": norm_b, **counts}
    return {"cos": ab / (norm_a * norm_b), "rel": math.sqrt(dd) / math.sqrt(norm_a * norm_b), "norm_a": norm_a,
            "norm_b": norm_b, **counts}


def _initial_file(spec: str) -> Path:
    """The ``model.safetensors`` of an initial policy as ``run.json`` names it (a folder, or a ``--model`` value).

    Raises:
        ValueError: it cannot be resolved or holds no full ``model.safetensors``.
    """
    from ..errors import MRTPOError
    from ..policy.gguf import materialize
    from ..policy.pretrained import resolve_model

    try:
        folder = Path(materialize(resolve_model(spec)))
    except MRTPOError as exc:
        raise ValueError(f"initial policy {spec}: {exc}") from None
    if not (folder / "model.safetensors").is_file():
        raise ValueError(f"initial policy {spec}: no {folder / 'model.safetensors'} (a hub id, a LoRA adapter or a "
                         f"sharded checkpoint is not read here)")
    return (folder / "model.safetensors").resolve()


def align_runs(folders: Sequence[Path]) -> dict[str, Any]:
    """``{"pairs": [{task, seed, a, b, cos, rel, norm_a, norm_b, parameters, tensors_left_out}], "skipped":
    [{run, why}]}`` for the runs in ``folders``: every pair of algorithms among the finished runs of one task and
    seed that start from one initial policy."""
    from safetensors.torch import load_file

    order = {a: i for i, a in enumerate(ALGORITHMS)}

    groups: dict[tuple[Any, Any], dict[str, list[tuple[Path, str]]]] = {}  # (task, seed) -> algo -> [(run, initial)]
    skipped: list[dict[str, str]] = []
    for f in folders:
        try:
            info = json.loads((f / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            skipped.append({"run": str(f), "why": f"run.json is not readable JSON ({exc})"})
            continue
        why = None
        seed = info.get("seed") if isinstance(info, dict) else None
        if not isinstance(info, dict):
            why = "run.json is not a JSON object"
        elif not info.get("finished"):
            why = "unfinished"
        elif "seed" not in info:
            why = "run.json names no seed, so its pair is unknown"
        elif not isinstance(seed, int) or isinstance(seed, bool):
            why = f"run.json's seed {seed!r} is not an integer"
        elif not (f / "policy" / "model.safetensors").is_file():
            why = "no full final policy (policy/model.safetensors)"
        elif not isinstance(info.get("initial_policy"), str):
            why = "run.json names no initial_policy"
        if why:
            skipped.append({"run": str(f), "why": why})
            continue
        groups.setdefault((info.get("task"), info["seed"]), {}).setdefault(info.get("algo"), []).append(
            (f, info["initial_policy"]))
    pairs = []
    for (task, seed), by_algo in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):  # seeds: ints
        runs: dict[str, tuple[Path, str]] = {}
        for algo, found in by_algo.items():
            if len(found) > 1:
                others = ", ".join(str(r) for r, _ in found)
                skipped += [{"run": str(r), "why": f"{len(found)} runs of {algo} {task} seed {seed} ({others})"}
                            for r, _ in found]
            else:
                runs[algo] = found[0]
        algos = sorted(runs, key=lambda a: (order.get(a, len(order)), str(a)))
        starts: dict[str, Path] = {}
        for algo in list(algos):
            try:
                starts[algo] = _initial_file(runs[algo][1])
            except ValueError as exc:
                skipped.append({"run": str(runs[algo][0]), "why": str(exc)})
                algos.remove(algo)
        if len(set(starts.values())) > 1:
            skipped += [{"run": str(runs[a][0]), "why": f"{task} seed {seed}: runs start from different policies"}
                        for a in algos]
            continue
        if len(algos) < 2:
            skipped += [{"run": str(runs[a][0]), "why": f"no run of another algorithm of {task} seed {seed} to pair "
                         f"with"} for a in algos]
            continue
        try:
            initial = load_file(str(starts[algos[0]]))
        except Exception as exc:  # safetensors raises its own error type for a truncated or foreign file
            skipped += [{"run": str(runs[a][0]), "why": f"cannot read {starts[algos[0]]}: {exc}"} for a in algos]
            continue
        finals = {}
        for a in list(algos):
            try:
                finals[a] = load_file(str(runs[a][0] / "policy" / "model.safetensors"))
            except Exception as exc:
                skipped.append({"run": str(runs[a][0]), "why": f"cannot read policy/model.safetensors: {exc}"})
                algos.remove(a)
        for a, b in itertools.combinations(algos, 2):
            try:
                pairs.append({"task": task, "seed": seed, "a": a, "b": b,
                              **update_alignment(initial, finals[a], finals[b])})
            except ValueError as exc:
                skipped.append({"run": f"{runs[a][0]} vs {runs[b][0]}", "why": str(exc)})
    return {"pairs": pairs, "skipped": skipped}


def json_safe(value: Any) -> Any:
    """NaN (a zero update) as ``null``: strict JSON has no NaN."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value
