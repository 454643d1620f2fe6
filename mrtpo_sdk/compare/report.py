"""Writing the comparison: ``compare.json`` (every number), ``compare.md`` (tables), ``compare.png`` (curves) and
the compact terminal table. Input: the dict of :func:`mrtpo_sdk.compare.stats.compare_runs`."""

from __future__ import annotations

import json
import math
import sys
import textwrap
from pathlib import Path
from typing import Any, Sequence

from .stats import T_975, TIME_PARTS, Run, curve, display_name, group_runs

__all__ = [
    "format_steps",
    "format_summary",
    "held_out_markdown",
    "interval_note",
    "paired_differences_markdown",
    "plot_comparison",
    "print_table",
    "pairs_tables",
    "render_markdown",
    "group_looks",
    "variants_note",
    "write_report",
]


def _num(v: float | None, digits: int = 3) -> str:
    if v is None:
        return "–"
    return f"{v:.{digits}f}"


def format_summary(s: dict[str, Any], digits: int = 3) -> str:
    """``"0.200 [-0.048, 0.448]"`` (mean and 95% t-interval), ``"0.200"`` for one seed, ``"–"`` for none."""
    if not s or s.get("mean") is None:
        return "–"
    text = _num(s["mean"], digits)
    if s.get("ci"):
        lo, hi = s["ci"]
        text += f" [{_num(lo, digits)}, {_num(hi, digits)}]"
    return text


def interval_note(report: dict[str, Any]) -> str | None:
    """The warning for algos with 2 seeds (fewer than 3): their t-interval is very wide (t = 12.71 for 1 degree
    of freedom); ``None`` when every algo has 1 or at least 3 seeds."""
    few = [a for a, s in report["algos"].items() if len(s["runs"]) == 2]
    if not few:
        return None
    return (
        f"{', '.join(few)}: 2 seeds only, so {'its' if len(few) == 1 else 'their'} intervals are very wide "
        f"(t(0.975, 1) = {T_975[1]:.2f}, clipped to the metric's range where it has one) and say little beyond the "
        f"two values; run 3 or more seeds for a usable interval."
    )


def variants_note(report: dict[str, Any]) -> str | None:
    """The line that says which algos are compared as variants and by which settings (``compare.json``'s
    ``variants``), and, where a variant's name shows a value cut short (``…``) or is numbered (``#2``), every
    variant's values whole (``variant_values``); ``None`` when no algo is split."""
    variants = report.get("variants") or {}
    if not variants:
        return None
    parts = [f"{algo} by {', '.join(f'`{k}`' for k in keys)}" for algo, keys in variants.items()]
    note = (
        f"Variants: runs of one algo and seed that differ in their settings are compared as variants of it, each "
        f"named by its values of those settings ({'; '.join(parts)}); each MRTPO variant is paired with every other "
        f"group's run of the same seed."
    )
    values = report.get("variant_values") or {}
    if any("…" in name or " #" in name for name in values):
        note += " Their values in full: " + "; ".join(
            f"{name}: " + ", ".join(f"{k.removeprefix('args.')}={v}" for k, v in settings.items())
            for name, settings in values.items()
        ) + "."
    return note


def _step(v: float | None, last: int) -> str:
    if v is None:
        return f">{last}"
    return str(int(v)) if float(v).is_integer() else f"{v:.1f}"


def format_steps(entry: dict[str, Any]) -> str:
    """Steps to threshold over seeds: ``"12 (10–20)"`` (median, range), ``">100"`` when the median never reached;
    a never-reached seed shows as ``">N"`` (N: the last logged step)."""
    last = entry["last_step"]
    text = _step(entry["median"], last)
    if entry["n"] > 1 and entry["reached"]:
        text += f" ({_step(entry['min'], last)}–{_step(entry['max'], last)})"
    return text


def _last_step_of(entry: dict[str, Any], label: str) -> int:
    """The last logged step of one run (of a run that logged none, or in a ``compare.json`` without ``last_steps``:
    its algo's last step)."""
    own = entry.get("last_steps", {}).get(label)
    return entry["last_step"] if own is None else own


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}%"


def render_markdown(report: dict[str, Any]) -> str:
    """``compare.md``: one section per kind of number, one row per algo, then the paired comparisons."""
    algos: dict[str, Any] = report["algos"]
    rewards: list[str] = report["rewards"]
    thr, smooth = report["threshold"], report["smooth"]
    title = f"# Comparison{': ' + report['task'] if report.get('task') else ''} — " + ", ".join(
        f"{a} ({len(s['runs'])} run{'s' if len(s['runs']) != 1 else ''})" for a, s in algos.items()
    )
    out = [title, ""]
    out += [
        "Intervals are 95% Student-t intervals over seeds (mean [lo, hi]); one seed shows the value alone. The "
        "interval of a metric whose values all lie in [0, 1] (rewards, accuracies) is clipped to [0, 1].",
        "",
    ]
    note = interval_note(report)
    if note:
        out += [f"**{note}**", ""]
    variants = variants_note(report)
    if variants:
        out += [variants, ""]
    if report.get("notes"):
        out += ["**Not like for like:**", ""]
        out += [f"- {n}" for n in report["notes"]]
        out += [""]

    out += [f"## Steps to threshold {thr:g}", ""]
    out += [
        f"First step at which the trailing mean of the last {smooth} logged values of `rewards/<r>/mean` (at the "
        f"start, of the values logged so far) reaches {thr:g}; median over seeds (range). `>N`: not reached by the "
        f"last step N.",
        "",
    ]
    out += _table(["algo", "seeds", *rewards], [
        [a, str(len(s["runs"])), *(format_steps(s["steps_to_threshold"][r]) for r in rewards)]
        for a, s in algos.items()
    ])
    out += ["", "Per seed:", ""]
    rows = []
    for a, s in algos.items():
        labels = list(s["steps_to_threshold"][rewards[0]]["values"]) if rewards else []
        for lab in labels:
            rows.append([a, lab, *(
                _step(s["steps_to_threshold"][r]["values"][lab], _last_step_of(s["steps_to_threshold"][r], lab))
                for r in rewards
            )])
    out += _table(["algo", "run", *rewards], rows)

    out += ["", "## Area under the reward curve", ""]
    out += ["Trapezoid area under `rewards/<r>/mean` divided by the step span: the mean reward over the run.", ""]
    out += _table(["algo", *rewards], [[a, *(format_summary(s["auc"][r]) for r in rewards)] for a, s in algos.items()])

    out += ["", "## Final train reward", "", "Mean of the last 10 logged steps of each run.", ""]
    out += _table(
        ["algo", *rewards], [[a, *(format_summary(s["final_train"][r]) for r in rewards)] for a, s in algos.items()]
    )

    if report["dev_metrics"]:
        out += ["", "## Dev metrics", ""]
        out += [
            "Held-out dev split, greedy decoding: the last evaluation row (final) and the row at step 0 (before; runs "
            "that start from one policy and score alike there count once).",
            "",
        ]
        rows = []
        for a, s in algos.items():
            for k in report["dev_metrics"]:
                name = k.removeprefix("eval/") + (" (headline)" if k == report["headline"] else "")
                rows.append([a, name, format_summary(s["dev_initial"][k]), format_summary(s["dev_final"][k])])
        out += _table(["algo", "metric", "before training", "final"], rows)

    for split, section in (report.get("held_out") or {}).items():
        out += ["", *held_out_markdown(split, section)]

    out += ["", "## Length and time per step", ""]
    base = report.get("baseline")
    out += [
        "Mean completion length (tokens) and mean seconds per step by part; replay % = replay / step time"
        + (f"; vs {base}: replay as % of {base}'s step time, and the step-time ratio." if base else "."),
        "",
    ]
    header = ["algo", "length", *(f"{p} s" for p in TIME_PARTS), "step s", "replay %"]
    if base:
        header += [f"replay / {base} step", f"step / {base} step"]
    rows = []
    for a, s in algos.items():
        t = s["time_per_step"]
        row = [a, _num(s["completion_length"]["mean"], 1), *(_num(t[p], 2) for p in TIME_PARTS), _num(t["total"], 2)]
        row.append(_pct(s["replay_overhead_pct"]))
        if base:
            ratio = s["step_time_vs_baseline"]
            row += [_pct(s["replay_vs_baseline_step_pct"]), "–" if ratio is None else f"×{ratio:.2f}"]
        rows.append(row)
    out += _table(header, rows)

    out += ["", "## MRTPO vs baselines, paired by seed", ""]
    differences = paired_differences_markdown(report)
    if differences:
        out += [*differences, ""]
    if report["paired"]:
        out += [
            "Wins per seed. Steps to threshold: fewer wins, never reached loses to any reached step. Dev metrics: "
            "higher wins.",
            "",
        ]
        for p in report["paired"]:
            kind, _, name = p["metric"].partition("/")
            what = f"steps to {thr:g} on {name}" if kind == "steps_to_threshold" else f"dev {name}"
            per_seed = ", ".join(f"seed {s}: {o}" for s, o in p["seeds"].items())
            out.append(f"- {what}: {p['summary']} ({per_seed})")
    else:
        out.append("No pairs: it needs an mrtpo run and another algo's run of the same seed.")
    out += ["", "## Runs", ""]
    out += _table(["algo", "seed", "last step", "finished", "folder"], [
        [r.get("group", r["algo"]), "–" if r["seed"] is None else str(r["seed"]), str(r["last_step"]),
         {True: "yes", False: "no", None: "?"}[r["finished"]], f"`{r['path']}`"]
        for r in report["runs"]
    ])
    return "\n".join(out) + "\n"


#: compare.md's table of paired differences shows the per-category dev metrics (names with a ``/``) of a pair when
#: it has at most this many of them (compare.json has all).
MAX_PER_CATEGORY_DIFFERENCES = 40

#: What compare.md's table of paired differences shows for each verdict of
#: :func:`mrtpo_sdk.compare.paired.paired_difference` but "better" and "worse".
VERDICT_TEXT = {
    "no detectable difference": "no detectable difference",
    "no interval": "no interval (1 seed)",
    "no pairs": "no seed to pair",
}


def _signed(v: float | None, digits: int) -> str:
    """``"+0.033"``, ``"-0.016"``; ``"0.000"`` for a value that rounds to zero; ``"–"`` for none."""
    if v is None:
        return "–"
    return f"{0.0:.{digits}f}" if round(v, digits) == 0 else f"{v:+.{digits}f}"


def paired_differences_markdown(report: dict[str, Any]) -> list[str]:
    """The lines of compare.md's table of paired differences (``compare.json``'s ``paired_differences``): per pair
    and metric, the mean of ``MRTPO - baseline`` over seeds with its 95% paired t-interval, the seeds it is over,
    the smallest difference these seeds detect at 80% power (``detectable ≥``) and the verdict. Areas and dev
    metrics show 3 decimals, steps 1. Per-category dev metrics are shown for a pair with at most
    :data:`MAX_PER_CATEGORY_DIFFERENCES` of them. ``[]`` when the report has no paired differences."""
    rows = report.get("paired_differences") or []
    if not rows:
        return []
    thr = report["threshold"]
    per_category: dict[tuple[str, str], int] = {}
    for p in rows:
        if p["metric"].startswith("dev/") and "/" in p["metric"].removeprefix("dev/"):
            key = (p["algo"], p["baseline"])
            per_category[key] = per_category.get(key, 0) + 1
    hidden = 0
    table = []
    for p in rows:
        kind, _, name = p["metric"].partition("/")
        if kind == "dev" and "/" in name and per_category[(p["algo"], p["baseline"])] > MAX_PER_CATEGORY_DIFFERENCES:
            hidden += 1
            continue
        if kind == "auc":
            label = f"area under curve: {name}"
        elif kind == "steps_to_threshold":
            label = f"steps to {thr:g}: {name}"
        else:
            label = f"dev {name}" + (" (headline)" if f"eval/{name}" == report.get("headline") else "")
        digits = 1 if kind == "steps_to_threshold" else 3
        text = _signed(p["mean"], digits)
        if p["ci"]:
            lo, hi = p["ci"]
            text += f" [{_signed(lo, digits)}, {_signed(hi, digits)}]"
        if p["verdict"] in ("better", "worse"):
            verdict = f"{display_name(p['algo'])} {p['verdict']}"
        elif p["verdict"] == "no pairs" and kind == "steps_to_threshold":
            verdict = f"no seed where both reached {thr:g}"
        else:
            verdict = VERDICT_TEXT.get(p["verdict"], p["verdict"])
        detectable = "–" if p["detectable"] is None else f"{p['detectable']:.{digits}f}"
        table.append([f"{display_name(p['algo'])} vs {display_name(p['baseline'])}", label, text, str(p["n"]),
                      detectable, verdict])
    lines = [
        "MRTPO minus the baseline, paired by seed: the mean difference over seeds and its 95% Student-t interval "
        "(`mean ± t(0.975, n−1) · sd / √n`, sd of the per-seed differences). Higher is better for areas and dev "
        "metrics; fewer steps is better. A verdict of better or worse means the interval excludes 0. `n` counts the "
        "seeds with a difference: for steps to threshold, those where both runs reached it. `detectable ≥` is the "
        "smallest true difference these seeds find 80% of the time at two-sided α = 0.05, "
        "`(t(0.975, n−1) + t(0.80, n−1)) · sd / √n`: a difference below it can hide behind \"no detectable "
        "difference\".",
        "",
        *_table(["pair", "metric", "MRTPO − baseline [95% CI]", "n", "detectable ≥", "verdict"], table),
    ]
    if hidden:
        lines += ["", f"{hidden} per-category dev metrics are in compare.json (`paired_differences`)."]
    return lines


def held_out_markdown(split: str, section: dict[str, Any]) -> list[str]:
    """The lines of compare.md's "Held-out split `<split>`" section (``--also_eval``): how it was scored, then per
    algo and metric the initial policy's value and the final value over seeds, then MRTPO's paired outcomes. The
    per-type rows (metric names with a ``/``) are shown when there are at most 40 of them (compare.json has all)."""
    from .also_eval import MAX_PER_TYPE_ROWS

    settings = section["settings"]
    sizes = "/".join(str(n) for n in settings["num_examples"]) or "?"
    batches = "/".join(str(n) for n in settings["batch_size"]) or "eval's default"
    lengths = "/".join(str(n) for n in settings["max_completion_length"]) or "?"
    how = (
        f"Scored with `mrtpo-sdk eval --split {split}`: {'greedy' if settings['greedy'] else 'sampled'}, "
        f"{sizes} examples"
        + (f" (--also_eval_max_examples {settings['max_examples_flag']})" if settings["max_examples_flag"] else "")
        + f", batch size {batches}"
        + (" (--also_eval_batch_size)" if settings["batch_size_flag"] else "")
        + f", at most {lengths} new tokens; the same for every run and the initial policy"
        + (" (" + ", ".join(f"`{p['label']}`" for p in section["initial_policies"]) + ")"
           if section["initial_policies"] else "")
        + ". *initial*: the policy the runs started from; *final*: each run's saved policy."
    )
    lines = [f"## Held-out split `{split}`", "", how, ""]
    shown = [k for k in section["compared"] if "/" not in k]
    per_type = [k for k in section["compared"] if "/" in k]
    if len(per_type) <= MAX_PER_TYPE_ROWS:
        shown += per_type
    rows = []
    for a, s in section["algos"].items():
        for k in shown:
            name = k + (" (headline)" if k in section["headlines"] else "")
            rows.append([a, name, format_summary(s["initial"][k]), format_summary(s["final"][k])])
    lines += _table(["algo", "metric", "initial", "final"], rows)
    if len(per_type) > MAX_PER_TYPE_ROWS:
        lines += ["", f"{len(per_type)} per-type metrics (e.g. `{per_type[0]}`) are in compare.json "
                      f"(`held_out.{split}.algos.<algo>.final`)."]
    paired = [p for p in section["paired"] if p["metric"].split("/", 2)[2] in shown]
    if paired:
        lines += ["", "Paired by seed (final, higher wins):", ""]
        for p in paired:
            per_seed = ", ".join(f"seed {s}: {o}" for s, o in p["seeds"].items())
            lines.append(f"- {p['metric'].split('/', 2)[2]}: {p['summary']} ({per_seed})")
    return lines


def group_looks(algo_of: dict[str, str]) -> dict[str, tuple[int, str, str]]:
    """How ``compare.png`` draws each group (name -> its algo, in report order): ``(colour index in matplotlib's
    tab10, line style, marker)``. An algo has one colour in every plot (MRTPO 0, GDPO 1, GRPO 2, others after them
    in order); its variants differ in line style, then marker: 24 variants of one algo look different."""
    styles = ("-", "--", ":", "-.")
    markers = ("o", "s", "^", "D", "v", "P")
    known = ("mrtpo", "gdpo", "grpo")
    others = [algo for algo in dict.fromkeys(algo_of.values()) if algo not in known]
    look: dict[str, tuple[int, str, str]] = {}
    for name, algo in algo_of.items():
        color = known.index(algo) if algo in known else (len(known) + others.index(algo)) % 10
        i = sum(v[0] == color for v in look.values())
        look[name] = (color, styles[i % len(styles)], markers[(i // len(styles)) % len(markers)])
    return look


#: A legend entry longer than this many characters is wrapped, and the legend goes below the panels.
LEGEND_CHARS = 40


def plot_comparison(report: dict[str, Any], runs: Sequence[Run], path: Path) -> Path:
    """``compare.png``: one panel per reward (train curve) and per ``eval/*`` metric; per algo the mean over seeds
    with a min–max band; the threshold as a dashed line on the reward panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(f"rewards/{r}/mean", f"train: {r}", True) for r in report["rewards"]]
    # per-category breakdowns (eval/ast_accuracy/simple, ...) stay in compare.md: one panel per top-level metric
    panels += [(k, f"dev: {k.removeprefix('eval/')}", False) for k in report["dev_metrics"] if k.count("/") == 1]
    ncols = min(4, max(1, len(panels)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    groups = group_runs(runs)
    look = group_looks({name: group[0].algo for name, group in groups.items()})
    labels = {name: f"{name} (n={len(groups[name])})" for name in report["algos"] if name in groups}
    # a few short names fit in the first panel; more, or longer ones, go in one legend below all panels
    below = len(labels) > 4 or any(len(label) > LEGEND_CHARS for label in labels.values())
    legend_cols = max(1, min(len(labels), ncols))
    lines_per_label = max((len(textwrap.wrap(label, LEGEND_CHARS)) for label in labels.values()), default=1)
    entries = len(labels) + bool(report["rewards"])  # and the threshold's dashed line
    legend_inches = 0.18 * lines_per_label * math.ceil(entries / legend_cols) + 0.2 if below else 0.0
    height = 3.2 * nrows + legend_inches
    fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, height), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    for i, (key, title, is_reward) in enumerate(panels):
        ax = axes[i // ncols][i % ncols]
        for name in report["algos"]:
            pts = curve(groups.get(name, []), key)
            if not pts:
                continue
            steps = [p[0] for p in pts]
            color, style, marker = look[name]
            color = colors[color]
            ax.plot(steps, [p[1] for p in pts], color=color, linestyle=style,
                    marker=None if is_reward and len(pts) > 20 else marker, markersize=3,
                    label=textwrap.fill(labels[name], LEGEND_CHARS) if below else labels[name])
            if any(p[4] > 1 for p in pts):
                ax.fill_between(steps, [p[2] for p in pts], [p[3] for p in pts], color=color, alpha=0.2, linewidth=0)
        if is_reward:
            ax.axhline(report["threshold"], color="grey", linestyle="--", linewidth=1,
                       label=f"threshold {report['threshold']:g}")
            ax.set_ylim(min(-0.05, report["threshold"] - 0.05), max(1.05, report["threshold"] + 0.05))
        else:
            ax.set_ylim(-0.05, 1.05)  # dev metrics are shares in [0, 1]
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if i == 0 and not below:
            ax.legend(fontsize=8)
    for k in range(len(panels), nrows * ncols):
        axes[k // ncols][k % ncols].axis("off")
    fig.suptitle(
        f"{report.get('task') or 'runs'}: mean over seeds, band = min–max (train: rewards/<r>/mean; dev: eval/*)",
        fontsize=10,
    )
    if below and panels:
        entries: dict[str, Any] = {}  # every group once, from whichever panel drew it
        for ax in axes.flat:
            for handle, name in zip(*ax.get_legend_handles_labels()):
                entries.setdefault(name, handle)
        fig.legend(list(entries.values()), list(entries), loc="lower center", ncol=legend_cols, fontsize=8,
                   frameon=False)
    fig.tight_layout(rect=(0, legend_inches / height, 1, 0.97))  # room for the title above, the legend below
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def write_report(report: dict[str, Any], runs: Sequence[Run], output_dir: str | Path) -> dict[str, Path]:
    """Write ``compare.json``, ``compare.md`` and ``compare.png`` into ``output_dir``; return their paths."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "compare.json", "md": out / "compare.md", "png": out / "compare.png"}
    paths["json"].write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    paths["md"].write_text(render_markdown(report), encoding="utf-8")
    plot_comparison(report, runs, paths["png"])
    return paths


def pairs_tables(report: dict[str, Any], width: int = 160) -> tuple[list[Any], list[str], int]:
    """The paired comparisons as ``rich`` tables of at most ``width`` characters: a row per metric (steps to threshold
    per reward, each top-level dev metric, then each held-out split's headline), a column per pair of groups, each
    cell MRTPO's seeds won–tied–lost (``"2–1–0"``; empty where the pair has no value). Columns that do not fit go to
    the next table, rows repeated. Columns are headed by the pair (``MRTPO vs GDPO``) where every header is short;
    otherwise by number (``[1]``), and the key lines returned second name each (``[1] MRTPO (mrtpo_beta=1) vs GDPO``).
    Third, how many pairs (per-category and held-out ones, all in ``compare.md``) no table shows. ``([], [], n)``
    when no pair is shown."""
    from rich.table import Table

    shown = [p for p in report["paired"] if p["metric"].count("/") == 1]
    held_out = [p for section in (report.get("held_out") or {}).values() for p in section["paired"]]
    for split, section in (report.get("held_out") or {}).items():
        key = (section["headlines"] or section["compared"] or [None])[0]
        shown += [p for p in section["paired"] if key is not None and p["metric"] == f"held_out/{split}/{key}"]
    hidden = len(report["paired"]) + len(held_out) - len(shown)
    if not shown:
        return [], [], hidden
    pairs = list(dict.fromkeys((p["algo"], p["baseline"]) for p in shown))
    names = [f"{display_name(mine)} vs {display_name(theirs)}" for mine, theirs in pairs]
    keyed = any(len(name) > PAIR_HEADER_CHARS for name in names)
    headers = [f"[{i}]" for i in range(1, len(pairs) + 1)] if keyed else names
    key_lines = [f"{header} {name}" for header, name in zip(headers, names)] if keyed else []
    rows = list(dict.fromkeys(p["metric"] for p in shown))
    cells = {(p["metric"], (p["algo"], p["baseline"])): f"{p['won']}–{p['tied']}–{p['lost']}" for p in shown}
    labels = {}
    for metric in rows:
        kind, _, name = metric.partition("/")
        labels[metric] = {"steps_to_threshold": f"steps to {report['threshold']:g}: {name}",
                          "held_out": "held-out " + name.replace("/", " ", 1)}.get(kind, f"{kind} {name}")
    seeds = sorted({len(p["seeds"]) for p in shown})
    first = max(len("metric"), *(len(label) for label in labels.values()))
    cell = max(9, *(len(header) for header in headers))
    per_table = max(1, (width - first - 4) // (cell + 3))  # a column costs its text, two spaces of padding, a rule
    tables = []
    for start in range(0, len(pairs), per_table):
        table = Table(title=f"MRTPO paired: won–tied–lost of {' or '.join(map(str, seeds))} seeds")
        table.add_column("metric", style="bold", no_wrap=True)
        for header in headers[start:start + per_table]:
            table.add_column(header, justify="center", no_wrap=True)
        for metric in rows:
            table.add_row(labels[metric], *(cells.get((metric, pair), "") for pair in pairs[start:start + per_table]))
        tables.append(table)
    return tables, key_lines, hidden


#: A pair's name longer than this heads its column of the paired table by number, with a key below.
PAIR_HEADER_CHARS = 24


def print_table(report: dict[str, Any], paths: dict[str, Path] | None = None) -> None:
    """The compact terminal table: per algo the median steps to threshold of each reward, the final dev headline
    metric with its interval and the replay overhead; then the held-out scores, the paired comparisons
    (:func:`pairs_tables`), the notes and the files written."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 160, markup=False)  # paths and settings are text
    headline = report.get("headline")
    table = Table(title=f"steps to {report['threshold']:g} (median over seeds, smooth {report['smooth']})")
    table.add_column("algo", style="bold")
    table.add_column("runs", justify="right")
    for r in report["rewards"]:
        table.add_column(r, justify="right")
    if headline:
        table.add_column(f"dev {headline.removeprefix('eval/')}", justify="right")
    table.add_column("replay %", justify="right")
    for algo, s in report["algos"].items():
        row = [algo, str(len(s["runs"]))]
        row += [format_steps(s["steps_to_threshold"][r]) for r in report["rewards"]]
        if headline:
            row.append(format_summary(s["dev_final"].get(headline, {})))
        row.append(_pct(s["replay_overhead_pct"]))
        table.add_row(*row)
    console.print(table)
    note = interval_note(report)
    if note:
        console.print(f"note: {note}", highlight=False, soft_wrap=True)
    variants = variants_note(report)
    if variants:
        console.print(variants, highlight=False, soft_wrap=True)
    for split, section in (report.get("held_out") or {}).items():
        key = (section["headlines"] or section["compared"] or [None])[0]
        if key is None:
            continue
        values = "; ".join(
            f"{a} {format_summary(s['final'][key])} (initial {format_summary(s['initial'][key])})"
            for a, s in section["algos"].items()
        )
        console.print(f"{split} {key}: {values}", highlight=False, soft_wrap=True)
    tables, key_lines, hidden = pairs_tables(report, console.width)
    for table in tables:
        console.print(table)
    for line in key_lines:
        console.print(line, highlight=False, soft_wrap=True)
    if hidden:
        console.print(f"(+{hidden} per-category and held-out paired results in compare.md)", highlight=False)
    for text in report.get("notes") or ():
        console.print(f"note: {text}", highlight=False, soft_wrap=True)
    for name, path in (paths or {}).items():
        console.print(f"{name + ':':6}{path}", highlight=False, soft_wrap=True)
