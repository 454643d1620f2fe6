"""Where the credit goes: how concentrated each reward's JS distance is on completions the policy sampled.

The paper's figure ("Reported results" in the spec): 80 % of a reward's distance lies on 26–29 % of the tokens in
SQL and 13–15 % in tool calling, and an end-phrase constraint puts 40 % of its distance on the top 4 % of tokens.
This script measures the same two numbers for a task and a policy: it samples completions of N seeded examples with
the policy (at T = 1), replays each completion under ``P_all`` and every ``P_\\k`` with a non-empty block, as
``mrtpo-sdk explain`` does (:func:`mrtpo_sdk.authoring.explain.explain`), and reports per reward (per constraint type
for tasks whose examples name their constraints, e.g. ``startend:end_checker``):

* ``share80``: the smallest share of the completion's tokens holding 80 % of that reward's distance (median over the
  completions; :func:`mrtpo_sdk.algorithms.token_share_for_mass`);
* ``top4``: the share of the distance on the top 4 % of tokens (at least one token; mean);
* ``deciding_share`` and ``lift``: for a verifier that locates the tokens deciding its reward (``deciding=``), the
  share of the reward's distance on those tokens and that share divided by their share of the tokens
  (:func:`mrtpo_sdk.algorithms.concentration.credit_lift`; 1 = uniform credit); ``None`` when not located. The
  summary gives their medians over the ``located`` pairs (those with a lift).

A share near 1 means the block moves every token alike (or nothing at all); a small one means it speaks about a
few tokens, the case MRTPO is built for. A lift well above 1 means those few tokens are the ones that decide the
reward.

    python benchmarks/credit_concentration.py --task instruction_following --model smollm2 --json out.json
    python benchmarks/credit_concentration.py --task instruction_following            # the embedded policy
    python benchmarks/credit_concentration.py --figure docs/results/credit_concentration.png \
        docs/results/credit_concentration_*.json                                       # the figure of the JSONs

The figure: per task, the share of tokens holding 80 % of a reward's distance (median over the replayed
response–reward pairs) for each policy beside the paper's (uniform credit: 0.8); for end-phrase constraints, the
share of the distance on the top 4 % of tokens; and per task the median lift on the deciding tokens (lines at 1,
uniform credit, and 3, the target). JSONs written before lift was measured draw without it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

PAPER = {"sql": "80 % on 26–29 % of tokens", "bfcl": "80 % on 13–15 % of tokens",
         "startend:end_checker": "40 % of the distance on the top 4 % of tokens"}


def _args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="instruction_following", help="a bundled task name or a task file")
    p.add_argument("--model", default=None, help="anything --model takes (default: the embedded policy)")
    p.add_argument("--label", default=None,
                   help="the policy's name in the JSON and the figure (default: --model as given, e.g. smollm2; "
                        "name a warm-started folder, e.g. smollm2+warm40)")
    p.add_argument("--split", default="train")
    p.add_argument("--examples", type=int, default=16, help="examples (a seeded choice)")
    p.add_argument("--samples", type=int, default=2, help="sampled completions per example (T=1)")
    p.add_argument("--max_completion_length", type=int, default=128)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=None, help="write the per-completion rows and the summary here")
    p.add_argument("--figure", default=None, metavar="OUT.png",
                   help="draw the figure of the JSON files given after it (written by --json) instead of measuring")
    p.add_argument("jsons", nargs="*", help="with --figure: the JSON files to draw")
    return p.parse_args(argv)


#: The paper's figures, as (low, high) shares, for the figure.
PAPER_SHARE80 = {"sql": (0.26, 0.29), "bfcl": (0.13, 0.15)}
PAPER_END_TOP4 = 0.40
#: The lift on the deciding tokens a block should reach (1 is uniform credit).
TARGET_LIFT = 3.0


def figure(paths: list[str], out: str) -> None:
    """Draw the concentration of every JSON in ``paths`` (one per task and policy) into ``out`` (PNG): left, the
    median share of tokens holding 80 % of a reward's distance per task and policy, with the paper's range and the
    uniform 0.8; middle, the mean share of an end-phrase constraint's distance on its top 4 % of tokens; right, the
    median lift on the deciding tokens per task and policy (JSONs without ``lift_median`` are left out of it).

    Raises:
        SystemExit: no JSON given.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not paths:
        raise SystemExit("error: --figure needs the JSON files written by --json")
    data = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    tasks = sorted({d["task"] for d in data})
    name = lambda d: "embedded" if d["policy"].startswith("embedded") else d["policy"]  # noqa: E731
    policies = sorted({name(d) for d in data})
    colour = {pol: f"C{j}" for j, pol in enumerate(policies)}
    fig, (ax, bx, cx) = plt.subplots(1, 3, figsize=(15, 4), gridspec_kw={"width_ratios": [3, 1, 2]})
    width = 0.8 / max(1, max(sum(d["task"] == t for d in data) for t in tasks))
    for i, t in enumerate(tasks):  # each task's bars side by side, only the policies measured on it
        here = sorted((d for d in data if d["task"] == t), key=lambda d: policies.index(name(d)))
        left = i - width * (len(here) - 1) / 2
        for j, d in enumerate(here):
            ax.bar(left + j * width, d["summary"]["(all)"]["share80_median"], width, color=colour[name(d)],
                   label=name(d))
        if t in PAPER_SHARE80:
            lo, hi = PAPER_SHARE80[t]
            ax.plot([left - width / 2, left + (len(here) - 0.5) * width], [(lo + hi) / 2] * 2, "k--", lw=1.5,
                    label="paper")
    ax.axhline(0.8, color="grey", lw=1, ls=":", label="uniform credit")
    ax.set_xticks(range(len(tasks)), tasks)
    ax.set_ylabel("share of tokens holding 80 % of the distance")
    ax.set_ylim(0, 1)
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=8)
    ax.set_title("all rewards, sampled completions (lower: more concentrated)", fontsize=9)
    ends = {}  # every end-phrase pair of every task, per policy that has one (the mean over the pairs)
    for pol in policies:
        tops = [r["top4"] for d in data if name(d) == pol
                for r in d["rows"] if r["label"] == "startend:end_checker" and r["top4"] is not None]
        if tops:
            ends[pol] = statistics.mean(tops)
    bx.bar(range(len(ends)), list(ends.values()), color=[colour[pol] for pol in ends])
    bx.axhline(PAPER_END_TOP4, color="k", ls="--", lw=1.5, label="paper")
    bx.axhline(0.04, color="grey", ls=":", lw=1, label="uniform credit")
    bx.set_xticks(range(len(ends)), list(ends), rotation=20, ha="right", fontsize=8)
    bx.set_ylim(0, 1)
    bx.set_ylabel("share of the distance on the top 4 % of tokens")
    bx.set_title("end-phrase constraints (all tasks)", fontsize=9)
    bx.legend(fontsize=8)
    _lift_panel(cx, data, tasks, policies, colour, name)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _lift_panel(cx, data, tasks, policies, colour, name) -> None:
    """Per task, the median lift of each policy that has one (``summary["(all)"]["lift_median"]``)."""
    lifted = [d for d in data if d["summary"].get("(all)", {}).get("lift_median") is not None]
    width = 0.8 / max(1, max((sum(d["task"] == t for d in lifted) for t in tasks), default=1))
    for i, t in enumerate(tasks):
        here = sorted((d for d in lifted if d["task"] == t), key=lambda d: policies.index(name(d)))
        left = i - width * (len(here) - 1) / 2
        for j, d in enumerate(here):
            cx.bar(left + j * width, d["summary"]["(all)"]["lift_median"], width, color=colour[name(d)],
                   label=name(d))
    cx.axhline(1.0, color="grey", lw=1, ls=":", label="uniform credit")
    cx.axhline(TARGET_LIFT, color="k", lw=1.5, ls="--", label=f"target ({TARGET_LIFT:g})")
    cx.set_xticks(range(len(tasks)), tasks)
    cx.set_ylabel("lift on the deciding tokens (median)")
    cx.set_ylim(bottom=0)
    handles, labels = cx.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    cx.legend(uniq.values(), uniq.keys(), fontsize=8)
    cx.set_title("distance share on deciding tokens / their token share" if lifted else "no lift in these JSONs",
                 fontsize=9)


def constraint_labels(example, k: int) -> list[str]:
    """A label per verifier: the example's constraint ids when it names them (instruction following, long_form),
    else ``None`` (the verifier's own name is used)."""
    ids = None
    if isinstance(example, dict):
        ids = example.get("instruction_id_list")
    elif hasattr(example, "constraints"):
        ids = [getattr(c, "id", None) for c in example.constraints]
    ids = list(ids or [])
    return [ids[j] if j < len(ids) and ids[j] else None for j in range(k)]


def top_share(q: list[float], frac: float = 0.04) -> float | None:
    """The share of the total distance on the top ``frac`` of tokens (at least one)."""
    total = sum(q)
    if not q or total <= 0:
        return None
    n = max(1, math.ceil(frac * len(q)))
    return sum(sorted(q, reverse=True)[:n]) / total


def _median(values: list, digits: int = 3) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), digits) if values else None


def _mean(values: list, digits: int = 3) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.mean(values), digits) if values else None


def summarize(rows: list[dict]) -> dict[str, dict]:
    """Per label (and ``"(all)"``): ``n`` pairs, ``share80_median``, ``top4_mean``, ``tokens_mean``, and over the
    ``located`` pairs (those with a lift) ``lift_median`` and ``deciding_share_median`` (``None`` when none)."""
    by = defaultdict(list)
    for r in rows:
        by[r["label"]].append(r)
    groups = {**dict(sorted(by.items())), "(all)": rows}
    summary = {}
    for lab, rs in groups.items():
        located = [r for r in rs if r.get("lift") is not None]
        summary[lab] = {"n": len(rs), "share80_median": _median([r["share80"] for r in rs]),
                        "top4_mean": _mean([r["top4"] for r in rs]),
                        "tokens_mean": _mean([r["tokens"] for r in rs], 1),
                        "located": len(located), "lift_median": _median([r["lift"] for r in located]),
                        "deciding_share_median": _median([r["deciding_share"] for r in located])}
    return summary


def main(argv=None) -> int:
    a = _args(argv)
    if a.figure:
        figure(a.jsons, a.figure)
        print(f"figure: {a.figure}")
        return 0
    import torch

    from mrtpo_sdk.authoring.explain import explain
    from mrtpo_sdk.credit_page import NO_DECIDING, NOT_DECODED, NOTHING_LOCATED
    from mrtpo_sdk.evaluation.core import generate_completions
    from mrtpo_sdk.loader import load_task
    from mrtpo_sdk.prompting import encode_prompts

    task = load_task(a.task)
    examples = task.load_examples(a.split)
    random.Random(a.seed).shuffle(examples)
    examples = examples[: a.examples]
    torch.manual_seed(a.seed)
    if a.model is None:
        from mrtpo_sdk.policy.for_task import task_policy

        model, tokenizer, path = task_policy(task, task.load_examples("train"), seed=42,
                                             log=lambda m: print(m, file=sys.stderr))
        label = a.label or f"embedded policy ({path.name})"
        autocast = None
    else:
        from mrtpo_sdk.policy.presets import model_machine_defaults
        from mrtpo_sdk.policy.pretrained import load_pretrained

        model, tokenizer, path = load_pretrained(a.model)
        label = a.label or a.model
        autocast = torch.bfloat16 if model_machine_defaults().get("bf16") else None
    start = time.perf_counter()
    prompt_ids = encode_prompts(tokenizer, [task.rollout_prompt(ex) for ex in examples])
    generated = generate_completions(model, tokenizer, prompt_ids, num_generations=a.samples, temperature=1.0,
                                     max_new_tokens=a.max_completion_length, batch_size=8, autocast_dtype=autocast)
    rows = []
    failures: dict[str, list[str]] = defaultdict(list)  # per reward, the deciding functions' errors
    for ex, outs in zip(examples, generated):
        labels = constraint_labels(ex, len(task.verifiers))
        for text, _n in outs:
            if not text.strip():
                continue
            exp = explain(task, ex, text, model, tokenizer)
            for k, row in enumerate(exp.rows):
                if row.deciding is None and row.deciding_note not in (NO_DECIDING, NOTHING_LOCATED, NOT_DECODED):
                    failures[row.name].append(row.deciding_note)
                if not row.replayed or row.share is None:
                    continue
                rows.append({"example": exp.example_id, "reward": row.name, "label": labels[k] or row.name,
                             "tokens": len(row.q), "share80": row.share, "top4": top_share(row.q),
                             "value": row.reward, "deciding_share": row.deciding_share, "lift": row.lift})
    for reward, notes in failures.items():  # once per reward, not once per completion
        print(f"warning: {reward}: the deciding function failed on {len(notes)} completion(s), counted as not "
              f"located; the first: {notes[0]}", file=sys.stderr)
    summary = summarize(rows)
    print(f"{task.name} / {a.split}: {len(examples)} examples x {a.samples} sampled completions (<= "
          f"{a.max_completion_length} tokens, T=1), policy {label}; {time.perf_counter() - start:.0f} s")
    print("| reward / constraint | replayed pairs | tokens (mean) | share of tokens holding 80 % (median) | "
          "share on the top 4 % of tokens (mean) | located | distance share on deciding tokens (median) | "
          "lift (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for lab, s in summary.items():
        print(f"| {lab} | {s['n']} | {s['tokens_mean']} | {s['share80_median']} | {s['top4_mean']} | "
              f"{s['located']} | {s['deciding_share_median']} | {s['lift_median']} |")
    if a.json:
        Path(a.json).write_text(json.dumps({"task": task.name, "policy": label, "split": a.split,
                                            "examples": a.examples, "samples": a.samples,
                                            "max_completion_length": a.max_completion_length, "seed": a.seed,
                                            "summary": summary, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
