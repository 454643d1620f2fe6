"""The numbers of `mrtpo-sdk compare`, checked against values worked out by hand."""

from __future__ import annotations

import json
import re
import math
import statistics

import pytest

from mrtpo_sdk.compare import stats
from mrtpo_sdk.compare.stats import (
    area_under_curve,
    compare_runs,
    load_run,
    paired_outcome,
    series,
    steps_to_threshold,
    t_interval,
)
from mrtpo_sdk.compare.report import render_markdown
from mrtpo_sdk.errors import MRTPOError

from .conftest import step_curve, write_run

ALGOS = ("mrtpo", "gdpo", "grpo")


def pts(values, start=1):
    return [(start + i, v) for i, v in enumerate(values)]


# ------------------------------------------------------------------------------------------ steps to threshold


def test_a_single_spike_is_not_reached_with_smooth_3():
    curve = pts([0.5, 0.9, 0.5, 0.5, 0.5])
    assert steps_to_threshold(curve, 0.8, smooth=3) is None
    assert steps_to_threshold(curve, 0.8, smooth=1) == 2  # unsmoothed, the spike counts


def test_the_first_windows_average_the_steps_logged_so_far():
    # a reward at 1.0 from step 1 reaches 0.8 at step 1, not at the first full window (step 3)
    assert steps_to_threshold(pts([1.0] * 5), 0.8, smooth=3) == 1
    assert steps_to_threshold(pts([1.0, 1.0]), 0.8, smooth=3) == 1  # shorter than the window
    assert steps_to_threshold(pts([0.8, 0.8, 0.8]), 0.8, smooth=3) == 1
    # step 1: 0; step 2: (0 + 1) / 2; step 3: (0 + 1 + 1) / 3 = 0.667; step 4: (1, 1, 1) reaches it
    assert steps_to_threshold(pts([0.0, 1.0, 1.0, 1.0]), 0.8, smooth=3) == 4
    # from step 3 on the window is full: (0.5, 0.5, 1.0) at step 5 is 0.667, then (0.5, 1.0, 1.0) = 0.833
    assert steps_to_threshold(pts([0.5, 0.5, 0.5, 0.5, 1.0, 1.0]), 0.8, smooth=3) == 6


def test_the_threshold_itself_counts_as_reached():
    # (0.6 + 0.9 + 0.9) / 3 = 0.8 exactly in arithmetic, 0.7999999999999999 in floating point.
    assert steps_to_threshold(pts([0.6, 0.9, 0.9, 0.2]), 0.8, smooth=3) == 3
    assert steps_to_threshold(pts([0.6, 0.9, 0.89]), 0.8, smooth=3) is None


def test_steps_are_the_logged_steps_and_nulls_are_skipped():
    rows = [{"step": 5 * i, "rewards/r/mean": v} for i, v in enumerate([0.0, None, 0.9, 0.9, 0.9])]
    rows.append({"step": 1, "eval/r": 1.0})  # an evaluation row: no train value
    assert series(rows, "rewards/r/mean") == [(0, 0.0), (10, 0.9), (15, 0.9), (20, 0.9)]
    assert steps_to_threshold(series(rows, "rewards/r/mean"), 0.8, smooth=3) == 20


# ------------------------------------------------------------------------------------------------------- AUC


def test_area_under_curve_is_the_mean_reward_over_the_step_span():
    assert area_under_curve([(0, 0.0), (10, 1.0)]) == pytest.approx(0.5)
    assert area_under_curve([(0, 0.0), (5, 1.0), (10, 1.0)]) == pytest.approx(0.75)
    # uneven steps: (2 * 0.3 + 8 * 0.4) / 10
    assert area_under_curve([(0, 0.2), (2, 0.4), (10, 0.4)]) == pytest.approx(0.38)
    assert area_under_curve([(3, 0.7)]) == pytest.approx(0.7)
    assert area_under_curve([]) is None


# ------------------------------------------------------------------------------------------------ intervals


def test_t_interval_of_three_values():
    lo, hi = t_interval([0.1, 0.2, 0.3])
    t = 0.95 / math.sqrt(2 * 0.975 * 0.025)  # t_{p, 2} = (2p - 1) / sqrt(2p(1 - p)) in closed form: 4.302653
    half = t * 0.1 / math.sqrt(3)  # t_{0.975,2} * s / sqrt(n), s = 0.1
    assert lo == pytest.approx(0.2 - half, abs=1e-9)
    assert hi == pytest.approx(0.2 + half, abs=1e-9)
    assert hi - 0.2 == pytest.approx(0.248414, abs=1e-6)


def test_t_interval_edges():
    assert t_interval([0.5]) is None
    assert t_interval([]) is None
    lo, hi = t_interval([1.0, 3.0])  # df 1: 12.706205 * sqrt(2) / sqrt(2)
    assert (lo, hi) == pytest.approx((2.0 - 12.706205, 2.0 + 12.706205))
    values = [0.0, 1.0] * 20  # n = 40, df 39: t_{0.975, 39} = 2.022691 (published tables), not the normal 1.96
    lo, hi = t_interval(values)
    s = math.sqrt(sum((v - 0.5) ** 2 for v in values) / 39)
    assert hi - 0.5 == pytest.approx(2.022691 * s / math.sqrt(40), rel=1e-6)
    assert stats.t_quantile(30) == pytest.approx(2.042272, abs=1e-6)
    assert stats.t_quantile(31) == pytest.approx(2.039513, abs=1e-6)


def test_median_of_steps_ranks_never_above_every_step():
    assert stats._median_steps([10, 20, None]) == 20
    assert stats._median_steps([10, None, None]) is None
    assert stats._median_steps([10, 20]) == 15
    assert stats._median_steps([10, None]) is None  # (10 + never) / 2 is never


def test_paired_outcome():
    assert paired_outcome(4, 6, lower_is_better=True) == "won"
    assert paired_outcome(5, 5, lower_is_better=True) == "tied"
    assert paired_outcome(None, 100, lower_is_better=True) == "lost"  # never reached loses to any step
    assert paired_outcome(100, None, lower_is_better=True) == "won"
    assert paired_outcome(None, None, lower_is_better=True) == "tied"
    assert paired_outcome(0.3, 0.2, lower_is_better=False) == "won"
    assert paired_outcome(0.2, None, lower_is_better=False) is None


# ------------------------------------------------------------------------------------------------ the report


def test_compare_runs_on_the_reference_experiment(experiment):
    report = compare_runs([load_run(p) for p in experiment], threshold=0.8, smooth=3)
    assert report["task"] == "sql"
    assert report["rewards"] == ["fmt", "exec"]
    assert report["headline"] == "eval/execution_accuracy"
    assert "eval/seconds" in report["eval_keys"] and "eval/seconds" not in report["dev_metrics"]
    m, g = report["algos"]["mrtpo"], report["algos"]["gdpo"]
    assert m["seeds"] == [1, 2, 3]

    fmt = m["steps_to_threshold"]["fmt"]
    assert fmt["values"] == {"seed1": 4, "seed2": 5, "seed3": None}
    assert (fmt["median"], fmt["min"], fmt["max"], fmt["reached"], fmt["last_step"]) == (5, 4, None, 2, 12)
    assert g["steps_to_threshold"]["fmt"]["values"] == {"seed1": 6, "seed2": 5, "seed3": 8}
    assert (g["steps_to_threshold"]["fmt"]["median"], g["steps_to_threshold"]["fmt"]["max"]) == (6, 8)
    assert m["steps_to_threshold"]["exec"]["median"] == 1  # 1.0 from step 1: reached at step 1
    assert g["steps_to_threshold"]["exec"]["median"] is None

    # AUC, steps 1..12 (span 11): 1 from step 2 -> (0.5 + 10) / 11; from step 3 -> 9.5 / 11; a spike -> 1 / 11
    auc = m["auc"]["fmt"]
    assert auc["values"] == pytest.approx({"seed1": 10.5 / 11, "seed2": 9.5 / 11, "seed3": 1 / 11})
    assert auc["mean"] == pytest.approx(21 / 33)
    assert g["auc"]["exec"]["mean"] == pytest.approx(0.5)
    # final train: the last 10 steps (3..12) -> 1.0, 1.0 and 0.1 (the spike)
    assert m["final_train"]["fmt"]["values"] == pytest.approx({"seed1": 1.0, "seed2": 1.0, "seed3": 0.1})
    assert m["final_train"]["fmt"]["mean"] == pytest.approx(0.7)

    acc = m["dev_final"]["eval/execution_accuracy"]
    half = 4.302653 * 0.1 / math.sqrt(3)
    assert acc["mean"] == pytest.approx(0.2)
    assert acc["ci"] == pytest.approx([0.0, 0.2 + half])  # 0.2 - half = -0.048, clipped to [0, 1]
    assert m["dev_initial"]["eval/execution_accuracy"]["mean"] == 0.0
    # gdpo's last evaluation is merged into its last training row: still found
    gdpo_acc = g["dev_final"]["eval/execution_accuracy"]["values"]
    assert gdpo_acc == pytest.approx({"seed1": 0.05, "seed2": 0.1, "seed3": 0.4})

    assert m["completion_length"]["mean"] == pytest.approx(20.0)
    assert m["time_per_step"] == pytest.approx(
        {"generation": 1.0, "scoring": 0.2, "replay": 0.6, "update": 0.2, "total": 2.0}
    )
    assert m["replay_overhead_pct"] == pytest.approx(30.0)
    assert g["replay_overhead_pct"] == pytest.approx(0.0)
    assert report["baseline"] == "gdpo"
    assert m["replay_vs_baseline_step_pct"] == pytest.approx(40.0)  # 0.6 s of a 1.5 s GDPO step
    assert m["step_time_vs_baseline"] == pytest.approx(2.0 / 1.5)

    paired = {p["metric"]: p for p in report["paired"]}
    assert paired["steps_to_threshold/fmt"]["seeds"] == {"1": "won", "2": "tied", "3": "lost"}
    assert paired["steps_to_threshold/fmt"]["summary"] == "MRTPO beat GDPO on 1/3 seeds, tied 1, lost 1"
    assert paired["steps_to_threshold/exec"]["summary"] == "MRTPO beat GDPO on 3/3 seeds, tied 0, lost 0"
    assert paired["dev/execution_accuracy"]["summary"] == "MRTPO beat GDPO on 2/3 seeds, tied 0, lost 1"
    assert paired["dev/fmt"]["summary"] == "MRTPO beat GDPO on 0/3 seeds, tied 3, lost 0"
    assert "dev/seconds" not in paired
    json.dumps(report)  # JSON-able


def test_pairs_use_only_the_seeds_both_algos_have(tmp_path):
    runs = [
        write_run(tmp_path / "a", algo="mrtpo", seed=1, curves={"r": [1.0] * 4}),
        write_run(tmp_path / "b", algo="mrtpo", seed=2, curves={"r": [1.0] * 4}),
        write_run(tmp_path / "c", algo="grpo", seed=2, curves={"r": [0.0] * 4}),
    ]
    report = compare_runs([load_run(p) for p in runs])
    (pair,) = report["paired"]
    assert (pair["baseline"], pair["seeds"]) == ("grpo", {"2": "won"})
    assert report["baseline"] is None and report["algos"]["mrtpo"]["step_time_vs_baseline"] is None


def test_one_seed_has_no_interval(tmp_path):
    run = write_run(tmp_path / "x", algo="gdpo", seed=1, curves={"r": [0.5] * 3}, dev_final={"all_rewards": 0.25})
    report = compare_runs([load_run(run)])
    assert report["algos"]["gdpo"]["dev_final"]["eval/all_rewards"] == {
        "mean": 0.25, "ci": None, "n": 1, "values": {"seed1": 0.25}
    }
    assert report["headline"] == "eval/all_rewards"  # the named headline is not in the rows
    assert report["paired"] == []


def test_the_score_before_training_counts_once_per_initial_policy(tmp_path):
    def run(name, seed, policy, acc, seconds=4.0):
        return load_run(write_run(tmp_path / name, algo="mrtpo", seed=seed, curves={"r": [0.5] * 3},
                                  dev_initial={"acc": acc, "seconds": seconds}, dev_final={"acc": 0.5},
                                  initial_policy=policy))

    # three seeds from one policy, scored alike at step 0 (in 4, 5 and 6 s): one measurement, shown alone
    shared = compare_runs([run(f"s{i}", i, "smollm2", 0.1, 3.0 + i) for i in (1, 2, 3)])["algos"]["mrtpo"]
    assert shared["dev_initial"]["eval/acc"] == {"mean": 0.1, "ci": None, "n": 1, "values": {"seed1": 0.1}}
    assert shared["dev_final"]["eval/acc"]["n"] == 3  # the trained policies are three
    # one warm-started policy per seed: two measurements, the interval over them (0.3 ± 12.706 · sd / √2)
    warm = compare_runs([run("w1", 1, "/c/warm-seed1", 0.29), run("w2", 2, "/c/warm-seed2", 0.31)])["algos"]["mrtpo"]
    assert warm["dev_initial"]["eval/acc"]["values"] == {"seed1": 0.29, "seed2": 0.31}
    half = 12.706205 * statistics.stdev([0.29, 0.31]) / math.sqrt(2)
    assert warm["dev_initial"]["eval/acc"]["ci"] == pytest.approx([0.3 - half, 0.3 + half])
    # one policy scoring differently (other evaluation settings) is two measurements; unrecorded policies count
    differ = compare_runs([run("d1", 1, "smollm2", 0.1), run("d2", 2, "smollm2", 0.2)])["algos"]["mrtpo"]
    assert differ["dev_initial"]["eval/acc"]["n"] == 2
    # a run that logged one more metric of the same policy's scores: still one measurement, the metric kept
    one = write_run(tmp_path / "k1", algo="mrtpo", seed=1, curves={"r": [0.5] * 3}, dev_initial={"acc": 0.1},
                    dev_final={"acc": 0.5}, initial_policy="smollm2")
    more = write_run(tmp_path / "k2", algo="mrtpo", seed=2, curves={"r": [0.5] * 3},
                     dev_initial={"acc": 0.1, "acc/local": 0.4}, dev_final={"acc": 0.5}, initial_policy="smollm2")
    merged = compare_runs([load_run(one), load_run(more)])["algos"]["mrtpo"]["dev_initial"]
    assert (merged["eval/acc"]["n"], merged["eval/acc/local"]["values"]) == (1, {"seed1": 0.4})
    unknown = compare_runs([run("u1", 1, None, 0.1), run("u2", 2, None, 0.1)])["algos"]["mrtpo"]
    assert unknown["dev_initial"]["eval/acc"]["values"] == {"seed1": 0.1, "seed2": 0.1}


# -------------------------------------------------------------------------------------------------- load_run


def test_algo_and_seed_from_the_folder_name_without_run_json(tmp_path):
    a = load_run(write_run(tmp_path / "gdpo-seed2", algo="gdpo", seed=2, curves={"r": [1.0]}, run_json=False), ALGOS)
    assert (a.algo, a.seed, a.task, a.info) == ("gdpo", 2, None, {})
    b = load_run(write_run(tmp_path / "sql-mrtpo", algo="mrtpo", seed=None, curves={"r": [1.0]}, run_json=False), ALGOS)
    assert (b.algo, b.seed, b.task) == ("mrtpo", None, "sql")
    assert b.reward_names == ["r"]  # from the metric keys


def test_a_folder_name_that_tells_nothing_is_an_error(tmp_path):
    folder = write_run(tmp_path / "compare-sql", algo="mrtpo", seed=1, curves={"r": [1.0]}, run_json=False)
    with pytest.raises(MRTPOError, match=r"compare-sql: cannot tell the algorithm: no run.json.*mrtpo, gdpo, grpo"):
        load_run(folder, ALGOS)


def test_different_tasks_and_duplicate_seeds_are_errors(tmp_path):
    a = write_run(tmp_path / "a", algo="mrtpo", seed=1, curves={"r": [1.0]}, task="sql")
    b = write_run(tmp_path / "b", algo="gdpo", seed=1, curves={"r": [1.0]}, task="bfcl")
    c = write_run(tmp_path / "c", algo="mrtpo", seed=1, curves={"r": [1.0]}, task="sql")
    with pytest.raises(MRTPOError, match=r"different tasks .*a: sql; .*b: bfcl"):
        compare_runs([load_run(a), load_run(b)])
    with pytest.raises(MRTPOError, match=r"two mrtpo runs of seed 1: .*a and .*c"):
        compare_runs([load_run(a), load_run(c)])


def test_a_bad_metrics_line_is_an_error_naming_it(tmp_path):
    (tmp_path / "metrics.jsonl").write_text('{"step": 1}\n{"step": 2\n', encoding="utf-8")
    with pytest.raises(MRTPOError, match=r"metrics.jsonl:2: not a JSON object"):
        stats.read_jsonl(tmp_path / "metrics.jsonl")


def test_a_metrics_line_that_is_not_utf8_is_an_error_naming_it(tmp_path):
    (tmp_path / "metrics.jsonl").write_bytes(b'{"step": 1}\n\xff\xfe\x00garbage\n{"step": 3}\n')
    with pytest.raises(MRTPOError, match=r"metrics.jsonl:2: not .*utf-8"):
        stats.read_jsonl(tmp_path / "metrics.jsonl")
    run = write_run(tmp_path / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [0.5]})
    (run / "run.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(MRTPOError, match=r"run.json: not valid JSON \('utf-8' codec"):
        load_run(run)
    (tmp_path / "ok.jsonl").write_bytes('{"step": 1, "name": "héllo"}\r\n\n{"step": 2}'.encode())
    assert stats.read_jsonl(tmp_path / "ok.jsonl") == [{"step": 1, "name": "héllo"}, {"step": 2}]


def test_two_seeds_clip_bounded_intervals_and_the_report_says_they_are_wide(tmp_path):
    from mrtpo_sdk.compare.report import render_markdown

    runs = [
        write_run(tmp_path / "a", algo="mrtpo", seed=1, curves={"r": [1.0] * 4, "score": [-1.0] * 4},
                  dev_final={"execution_accuracy": 0.1}),
        write_run(tmp_path / "b", algo="mrtpo", seed=2, curves={"r": [0.5] * 4, "score": [2.0] * 4},
                  dev_final={"execution_accuracy": 0.384}),
    ]
    m = compare_runs([load_run(p) for p in runs])["algos"]["mrtpo"]
    acc = m["dev_final"]["eval/execution_accuracy"]
    assert acc["mean"] == pytest.approx(0.242)
    half = 12.706205 * 0.284 / math.sqrt(2) / math.sqrt(2)
    assert (0.242 - half, 0.242 + half) == pytest.approx((-1.562, 2.046), abs=1e-3)  # unclipped: outside [0, 1]
    assert acc["ci"] == [0.0, 1.0]
    assert m["final_train"]["r"]["ci"] == [0.0, 1.0]  # 0.75 ± 3.18 in a reward whose values lie in [0, 1]
    # a reward with values outside [0, 1] is not bounded: its interval is the t-interval
    half = 12.706205 * statistics.stdev([-1.0, 2.0]) / math.sqrt(2)
    assert m["final_train"]["score"]["ci"] == pytest.approx([0.5 - half, 0.5 + half])
    assert m["completion_length"]["ci"] == [20.0, 20.0]

    md = render_markdown(compare_runs([load_run(p) for p in runs]))
    assert "| mrtpo | execution_accuracy (headline) | – | 0.242 [0.000, 1.000] |" in md
    assert (
        "**mrtpo: 2 seeds only, so its intervals are very wide (t(0.975, 1) = 12.71, clipped to the metric's range "
        "where it has one) and say little beyond the two values; run 3 or more seeds for a usable interval.**"
    ) in md


def test_three_seeds_get_no_wide_interval_note(experiment):
    from mrtpo_sdk.compare.report import interval_note, render_markdown

    report = compare_runs([load_run(p) for p in experiment])
    assert interval_note(report) is None and "2 seeds only" not in render_markdown(report)


def test_a_reward_at_one_from_step_1_reaches_the_threshold_at_step_1(tmp_path):
    run = write_run(tmp_path / "a", algo="mrtpo", seed=1, curves={"r": [1.0] * 12})
    stt = compare_runs([load_run(run)], threshold=0.8, smooth=3)["algos"]["mrtpo"]["steps_to_threshold"]["r"]
    assert stt["values"] == {"seed1": 1} and stt["median"] == 1


# ------------------------------------------------------------------------------------------- like for like


def _edit_run_json(folder, **changes):
    info = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    for key, value in changes.items():
        section, _, name = key.partition("__")
        if name:
            info.setdefault(section, {})[name] = value
        else:
            info[key] = value
    (folder / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return folder


def test_mrtpo_only_settings_differ_only_between_runs_that_read_them(tmp_path):
    folders = []
    for algo, seed, beta in (("mrtpo", 1, 1), ("gdpo", 1, 0.5), ("grpo", 1, 0.25), ("mrtpo", 2, 1)):
        folder = write_run(tmp_path / f"{algo}-seed{seed}", algo=algo, seed=seed, curves={"r": [0.5] * 3})
        folders.append(_edit_run_json(folder, args__mrtpo_beta=beta, args__beta_warmup_steps=0 if algo == "mrtpo"
                                      else 3, args__algo=algo, args__output_dir=str(folder)))
    report = compare_runs([load_run(f) for f in folders])
    # GDPO and GRPO read neither: the MRTPO runs agree, so the runs were trained alike
    assert (report["setting_differences"], report["notes"]) == ({}, [])
    _edit_run_json(folders[3], args__mrtpo_beta=0.5)
    differences = compare_runs([load_run(f) for f in folders])["setting_differences"]
    assert differences == {"args.mrtpo_beta": {
        "1": ["mrtpo seed1"], "(unused by algo)": ["gdpo seed1", "grpo seed1"], "0.5": ["mrtpo seed2"]}}
    # a GDPO run's recorded value is never compared, even where an MRTPO run records none
    _edit_run_json(folders[3], args__mrtpo_beta=1)
    info = json.loads((folders[0] / "run.json").read_text(encoding="utf-8"))
    del info["args"]["beta_warmup_steps"]
    (folders[0] / "run.json").write_text(json.dumps(info), encoding="utf-8")
    assert compare_runs([load_run(f) for f in folders])["setting_differences"] == {"args.beta_warmup_steps": {
        "(not recorded)": ["mrtpo seed1"], "(unused by algo)": ["gdpo seed1", "grpo seed1"], "0": ["mrtpo seed2"]}}
    # an algo this version does not know: every value as recorded
    _edit_run_json(folders[2], algo="dapo")
    unknown = compare_runs([load_run(f) for f in folders])["setting_differences"]
    assert unknown["args.mrtpo_beta"] == {"1": ["mrtpo seed1", "mrtpo seed2"], "0.5": ["gdpo seed1"],
                                          "0.25": ["dapo seed1"]}


def test_settings_that_differ_between_runs_are_named_with_their_runs(tmp_path):
    folders = {}
    for algo, lr, agg in (("mrtpo", 1e-5, "normalize_then_sum"), ("gdpo", 1e-6, "normalize_then_sum"),
                          ("grpo", 1e-5, "sum_then_normalize")):
        folder = write_run(tmp_path / f"{algo}-seed1", algo=algo, seed=1, curves={"r": [0.5] * 3})
        folders[algo] = _edit_run_json(folder, args__learning_rate=lr, args__multi_objective_aggregation=agg,
                                       args__output_dir=str(folder), args__algo=algo,
                                       model_args__dtype="float32", task_options={"semantics": "training"})
    _edit_run_json(folders["grpo"], task_options={"semantics": "official"})
    report = compare_runs([load_run(f) for f in folders.values()])
    # what the algo implies (aggregation), the seed, algo and output folder differ by design: not listed
    assert report["setting_differences"] == {
        "args.learning_rate": {"1e-05": ["mrtpo seed1", "grpo seed1"], "1e-06": ["gdpo seed1"]},
        "task_options.semantics": {'"training"': ["mrtpo seed1", "gdpo seed1"], '"official"': ["grpo seed1"]},
    }
    assert report["notes"] == [
        "the runs were trained with different settings, so their differences are not the algorithms' alone: "
        "args.learning_rate: 1e-05 (mrtpo seed1, grpo seed1) vs 1e-06 (gdpo seed1); task_options.semantics: "
        '"training" (mrtpo seed1, gdpo seed1) vs "official" (grpo seed1).'
    ]
    markdown = render_markdown(report)
    assert "**Not like for like:**\n\n- the runs were trained with different settings" in markdown
    # an aggregation that departs from its algo's, a setting one run does not record, a section that is not a
    # mapping: each is a difference; 1 and 1.0 are one setting
    _edit_run_json(folders["mrtpo"], args__multi_objective_aggregation="sum_then_normalize", args__max_grad_norm=1,
                   model_args=[1, 2], script_args={"model": "日本"})
    _edit_run_json(folders["gdpo"], args__max_grad_norm=1.0)
    odd = compare_runs([load_run(f) for f in folders.values()])["setting_differences"]
    assert odd["args.multi_objective_aggregation"] == {
        '"sum_then_normalize"': ["mrtpo seed1"], "(follows algo)": ["gdpo seed1", "grpo seed1"]}
    assert odd["args.max_grad_norm"] == {"1": ["mrtpo seed1", "gdpo seed1"], "(not recorded)": ["grpo seed1"]}
    assert odd["model_args"] == {"[1, 2]": ["mrtpo seed1"], "(not recorded)": ["gdpo seed1", "grpo seed1"]}
    assert odd["script_args.model"] == {'"日本"': ["mrtpo seed1"], "(not recorded)": ["gdpo seed1", "grpo seed1"]}
    # null where recorded, no key elsewhere: unset either way, no difference; null against a value is one
    _edit_run_json(folders["mrtpo"], data=None)
    assert "data" not in compare_runs([load_run(f) for f in folders.values()])["setting_differences"]
    _edit_run_json(folders["gdpo"], data={"train": "x.jsonl"})
    assert compare_runs([load_run(f) for f in folders.values()])["setting_differences"]["data"] == {
        "null": ["mrtpo seed1"], '{"train": "x.jsonl"}': ["gdpo seed1"], "(not recorded)": ["grpo seed1"]}
    info = json.loads((folders["gdpo"] / "run.json").read_text(encoding="utf-8"))
    info.pop("data"), (folders["gdpo"] / "run.json").write_text(json.dumps(info), encoding="utf-8")
    for folder in folders.values():  # back to the same settings everywhere: nothing to say
        info = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        info["args"].pop("max_grad_norm", None)
        info.pop("model_args", None), info.pop("script_args", None)
        (folder / "run.json").write_text(json.dumps(info), encoding="utf-8")
    _edit_run_json(folders["mrtpo"], args__multi_objective_aggregation="normalize_then_sum")
    _edit_run_json(folders["gdpo"], args__learning_rate=1e-5)
    _edit_run_json(folders["grpo"], task_options={"semantics": "training"})
    same = compare_runs([load_run(f) for f in folders.values()])
    assert (same["setting_differences"], same["notes"]) == ({}, [])
    assert "Not like for like" not in render_markdown(same)
    # an algo this version does not know implies nothing: every run's aggregation is shown as recorded
    _edit_run_json(folders["grpo"], algo="dapo", args__multi_objective_aggregation="normalize_then_sum")
    unknown = compare_runs([load_run(f) for f in folders.values()])
    assert (unknown["setting_differences"], unknown["notes"]) == ({}, [])
    _edit_run_json(folders["grpo"], args__multi_objective_aggregation="sum_then_normalize")
    assert compare_runs([load_run(f) for f in folders.values()])["setting_differences"] == {
        "args.multi_objective_aggregation": {
            '"normalize_then_sum"': ["mrtpo seed1", "gdpo seed1"], '"sum_then_normalize"': ["dapo seed1"]}}


def test_many_differing_settings_are_counted_beyond_the_first_few(tmp_path):
    a = _edit_run_json(write_run(tmp_path / "a", algo="mrtpo", seed=1, curves={"r": [0.5]}),
                       args={f"k{i}": 0 for i in range(6)})
    b = _edit_run_json(write_run(tmp_path / "b", algo="gdpo", seed=1, curves={"r": [0.5]}),
                       args={f"k{i}": 1 for i in range(6)})
    report = compare_runs([load_run(a), load_run(b)])
    assert len(report["setting_differences"]) == 6
    assert report["notes"][0].endswith("args.k3: 0 (mrtpo seed1) vs 1 (gdpo seed1); and 2 more (compare.json: "
                                       "setting_differences).")


def test_runs_of_one_seed_from_different_policies_are_noted(tmp_path):
    a = write_run(tmp_path / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [0.5]}, initial_policy="/c/warm-1")
    b = write_run(tmp_path / "gdpo-seed1", algo="gdpo", seed=1, curves={"r": [0.5]}, initial_policy="smollm2")
    c = write_run(tmp_path / "gdpo-seed2", algo="gdpo", seed=2, curves={"r": [0.5]}, initial_policy="/c/warm-2")
    notes = compare_runs([load_run(a), load_run(b), load_run(c)])["notes"]
    assert notes == ["seed 1: the runs started from different policies (mrtpo: /c/warm-1; gdpo: smollm2), so its "
                     "pairs compare different starting points."]
    # one cached policy under another home folder is the same policy
    d = write_run(tmp_path / "grpo-seed2", algo="grpo", seed=2, curves={"r": [0.5]}, initial_policy="/home/a/warm-2")
    assert compare_runs([load_run(c), load_run(d)])["notes"] == []


def test_a_run_that_logged_no_training_step_is_noted(tmp_path):
    trained = write_run(tmp_path / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [1.0] * 3},
                        dev_initial={"acc": 0.1}, dev_final={"acc": 0.3})
    only_eval = write_run(tmp_path / "gdpo-seed1", algo="gdpo", seed=1, curves={"r": []}, dev_initial={"acc": 0.1})
    empty = write_run(tmp_path / "grpo-seed1", algo="grpo", seed=1, curves={"r": []})
    assert (empty / "metrics.jsonl").read_text(encoding="utf-8") == ""
    short = write_run(tmp_path / "grpo-seed2", algo="grpo", seed=2, curves={"r": [0.5] * 3}, finished=False,
                      max_steps=12)
    report = compare_runs([load_run(p) for p in (trained, only_eval, empty, short)])
    assert report["notes"] == [
        f"{only_eval} logged no training step: it counts as never reaching a threshold, and its dev score, if any, "
        f"is its evaluation before training.",
        f"{empty} logged no training step: it counts as never reaching a threshold, and its dev score, if any, is its "
        f"evaluation before training.",
        f"{short} is unfinished (last step 3 of 12): it is compared on the steps it logged.",
    ]
    assert report["algos"]["gdpo"]["dev_final"]["eval/acc"]["values"] == {"seed1": 0.1}  # the step-0 score


def test_an_unfinished_run_that_never_reached_shows_its_own_last_step(tmp_path):
    done = write_run(tmp_path / "grpo-seed1", algo="grpo", seed=1, curves={"r": [0.5] * 12})
    short = write_run(tmp_path / "grpo-seed2", algo="grpo", seed=2, curves={"r": [0.5] * 3}, finished=False,
                      max_steps=12)
    report = compare_runs([load_run(done), load_run(short)], threshold=0.8)
    entry = report["algos"]["grpo"]["steps_to_threshold"]["r"]
    assert entry["last_step"] == 12 and entry["last_steps"] == {"seed1": 12, "seed2": 3}
    text = render_markdown(report)
    assert "| grpo | 2 | >12 |" in text  # the median: not reached within the longest run
    assert "| grpo | seed1 | >12 |" in text and "| grpo | seed2 | >3 |" in text


def test_a_file_given_as_a_run_folder_and_a_row_without_a_step_are_errors(tmp_path):
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(MRTPOError, match=r"notes.txt: not a folder; give run folders"):
        load_run(tmp_path / "notes.txt")
    run = write_run(tmp_path / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [0.5, 0.6]})
    with (run / "metrics.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"step": "3", "rewards/r/mean": 0.7}\n')
    for bad in ('"3"', "null", "true", "1.5", "-5", "1e20", "NaN"):
        lines = (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
        lines[2] = '{"step": %s, "rewards/r/mean": 0.7}' % bad
        (run / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(MRTPOError, match=r'metrics.jsonl:3: "step" is .*, not a step number'):
            load_run(run)
    lines[2] = '{"step": 3.0, "rewards/r/mean": 0.7}'  # an integral float is a step number
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert load_run(run).last_step == 3


def test_run_json_fields_of_the_wrong_type_are_errors_naming_them(tmp_path):
    run = write_run(tmp_path / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [0.5]})
    for key, value, what in (("seed", "abc", "an integer"), ("seed", True, "an integer"), ("seed", 1.7, "an integer"),
                             ("task", ["sql"], "a task name"), ("algo", ["mrtpo"], "an algorithm name")):
        _edit_run_json(run, **{key: value})
        with pytest.raises(MRTPOError, match=rf'run.json: "{key}" must be {what}, got'):
            load_run(run)
        _edit_run_json(run, **{key: {"seed": 1, "task": "sql", "algo": "mrtpo"}[key]})
    _edit_run_json(run, seed=None, args=[1, 2])  # args not a mapping: no seed from it, no crash
    assert load_run(run, ALGOS).seed == 1  # from the folder name
    (run / "run.json").write_text("{}", encoding="utf-8")
    with pytest.raises(MRTPOError, match=r'cannot tell the algorithm: run.json records no "algo"'):
        load_run(run)


def test_notes_print_brackets_in_paths_and_settings_as_written(tmp_path, capsys):
    from mrtpo_sdk.compare.report import print_table

    a = write_run(tmp_path / "[exp]" / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [0.5]})
    b = write_run(tmp_path / "[exp]" / "gdpo-seed1", algo="gdpo", seed=1, curves={"r": [0.5]})
    _edit_run_json(b, task_options={"semantics": "[/tmp/x]"})
    _edit_run_json(a, task_options={"semantics": "[bold]x[red]y"})
    print_table(compare_runs([load_run(a), load_run(b)]), {"md": tmp_path / "[exp]" / "compare.md"})
    out = capsys.readouterr().out
    assert 'task_options.semantics: "[bold]x[red]y" (mrtpo seed1) vs "[/tmp/x]" (gdpo seed1).' in out
    assert f"md:   {tmp_path / '[exp]' / 'compare.md'}" in out


# ------------------------------------------------------------------------------------------------ variants


def _variant_runs(tmp_path):
    """MRTPO at beta 0.5 (warmed up over 3 steps) and at beta 1 (from step 1), and GDPO, seeds 1 and 2; dev
    execution_accuracy: beta 1 0.30, 0.20; beta 0.5 0.10, 0.20; GDPO 0.20, 0.20."""
    folders = []
    for name, algo, beta, warmup, accs in (("mrtpo", "mrtpo", 0.5, 3, (0.1, 0.2)),
                                           ("beta1", "mrtpo", 1.0, 0, (0.3, 0.2)),
                                           ("gdpo", "gdpo", 0.5, 3, (0.2, 0.2))):
        for seed, acc in zip((1, 2), accs):
            folder = write_run(tmp_path / name / f"{algo}-seed{seed}", algo=algo, seed=seed,
                               curves={"r": step_curve(4 if name == "beta1" else 6)},
                               dev_final={"execution_accuracy": acc})
            folders.append(_edit_run_json(folder, args__mrtpo_beta=beta, args__beta_warmup_steps=warmup,
                                          args__learning_rate=1e-5, args__algo=algo, args__output_dir=str(folder)))
    return folders


def test_runs_of_one_algo_and_seed_with_other_settings_are_compared_as_variants(tmp_path):
    from mrtpo_sdk.compare.report import render_markdown, write_report

    runs = [load_run(f) for f in _variant_runs(tmp_path)]
    report = compare_runs(runs)
    beta1, warmed = "mrtpo (beta_warmup_steps=0, mrtpo_beta=1)", "mrtpo (beta_warmup_steps=3, mrtpo_beta=0.5)"
    assert list(report["algos"]) == [warmed, beta1, "gdpo"]
    assert report["variants"] == {"mrtpo": ["args.beta_warmup_steps", "args.mrtpo_beta"]}
    assert report["algos"][beta1]["algo"] == "mrtpo" and report["algos"][beta1]["seeds"] == [1, 2]
    assert report["algos"][beta1]["dev_final"]["eval/execution_accuracy"]["mean"] == pytest.approx(0.25)
    assert [r["group"] for r in report["runs"]] == [warmed, warmed, beta1, beta1, "gdpo", "gdpo"]
    # each variant against GDPO, then the variants against each other
    dev = {(p["algo"], p["baseline"]): p for p in report["paired"] if p["metric"] == "dev/execution_accuracy"}
    assert list(dev) == [(warmed, "gdpo"), (warmed, beta1), (beta1, "gdpo")]
    assert dev[(beta1, "gdpo")]["seeds"] == {"1": "won", "2": "tied"}
    assert dev[(warmed, "gdpo")]["seeds"] == {"1": "lost", "2": "tied"}
    assert dev[(warmed, beta1)]["summary"] == (
        "MRTPO (beta_warmup_steps=3, mrtpo_beta=0.5) beat MRTPO (beta_warmup_steps=0, mrtpo_beta=1) on 0/2 seeds, "
        "tied 1, lost 1")
    steps = {(p["algo"], p["baseline"]): p["seeds"] for p in report["paired"] if p["metric"] == "steps_to_threshold/r"}
    assert steps[(beta1, "gdpo")] == {"1": "won", "2": "won"}  # 0.8 at step 4 vs 6
    # GDPO reads neither setting: the pairs are like for like, and the variants' names say what differs
    assert report["notes"] == [] and report["baseline"] == "gdpo"
    assert report["setting_differences"]["args.mrtpo_beta"] == {
        "0.5": [f"{warmed} seed1", f"{warmed} seed2"], "1": [f"{beta1} seed1", f"{beta1} seed2"],
        "(unused by algo)": ["gdpo seed1", "gdpo seed2"]}
    assert set(report["setting_differences"]) == {"args.beta_warmup_steps", "args.mrtpo_beta"}
    md = render_markdown(report)
    assert "Variants: runs of one algo and seed that differ in their settings are compared as variants of it, " \
           "each named by its values of those settings (mrtpo by `args.beta_warmup_steps`, `args.mrtpo_beta`)" in md
    assert f"| {beta1} | 2 | 4 (4–4) |" in md
    assert f"| {beta1} | 2 | 12 | yes |" in md
    assert "Not like for like" not in md
    assert write_report(report, runs, tmp_path / "report")["png"].stat().st_size > 0
    # a setting one run of a variant does not record (an older run.json), with one value elsewhere, splits nothing
    folders = _variant_runs(tmp_path / "older")
    _edit_run_json(folders[0], data=None)
    assert list(compare_runs([load_run(f) for f in folders])["algos"]) == [warmed, beta1, "gdpo"]
    # a setting that differs between seeds only (logging on seed 2 of the warmed-up runs) splits nothing
    _edit_run_json(folders[1], args__logging_steps=5)
    report = compare_runs([load_run(f) for f in folders])
    assert list(report["algos"]) == [warmed, beta1, "gdpo"] and "args.logging_steps" in report["notes"][0]


def test_a_variant_setting_another_algo_reads_is_still_named_as_a_difference(tmp_path):
    folders = _variant_runs(tmp_path)
    for folder in folders[2:4]:  # MRTPO at beta 1 also at another learning rate, which GDPO reads too
        _edit_run_json(folder, args__learning_rate=1e-6)
    report = compare_runs([load_run(f) for f in folders])
    assert report["variants"] == {"mrtpo": ["args.beta_warmup_steps", "args.learning_rate", "args.mrtpo_beta"]}
    assert "mrtpo (beta_warmup_steps=0, learning_rate=1e-06, mrtpo_beta=1)" in report["algos"]
    [note] = report["notes"]
    assert note.startswith("the runs were trained with different settings") and "args.learning_rate" in note
    assert "args.mrtpo_beta" not in note


def test_two_runs_of_one_algo_and_seed_that_no_setting_tells_apart_are_an_error(tmp_path):
    a = write_run(tmp_path / "a" / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [1.0]})
    b = write_run(tmp_path / "b" / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [1.0]}, run_json=False)
    with pytest.raises(MRTPOError, match=r"two mrtpo runs of seed 1: .*a/mrtpo-seed1 and .*b/mrtpo-seed1 \(.*b/mrtpo-"
                                         r"seed1 has no run.json, so its settings cannot tell the two apart\)"):
        compare_runs([load_run(a), load_run(b, ALGOS)])
    _edit_run_json(a, args__mrtpo_beta=1.0)
    _edit_run_json(write_run(b, algo="mrtpo", seed=1, curves={"r": [1.0]}), args__mrtpo_beta=1)
    with pytest.raises(MRTPOError, match=r"\(no setting they record tells them apart\); compare one of them"):
        compare_runs([load_run(a), load_run(b)])
    # a setting only one of them records (an older run.json) tells them apart no better; the error names it
    _edit_run_json(b, args__data_seed=3)
    with pytest.raises(MRTPOError, match=r"\(they differ only in data_seed, which only one of them records \(.*a/"
                                         r"mrtpo-seed1 does not record data_seed: a run.json written by an older "
                                         r"version\), so no recorded setting tells them apart\); compare one of them"):
        compare_runs([load_run(a), load_run(b)])
    # variants of MRTPO, and a run without run.json that shares a seed with one of them
    c = write_run(tmp_path / "c" / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [1.0]})
    _edit_run_json(c, args__mrtpo_beta=0.5)
    d = write_run(tmp_path / "d" / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": [1.0]}, run_json=False)
    with pytest.raises(MRTPOError, match=r"\(.*d/mrtpo-seed1 has no run.json, so its settings cannot tell the two "
                                         r"apart\)"):
        compare_runs([load_run(a), load_run(c), load_run(d, ALGOS)])
    assert list(compare_runs([load_run(a), load_run(c)])["algos"]) == ["mrtpo (mrtpo_beta=1)", "mrtpo (mrtpo_beta=0.5)"]


def test_a_variant_named_by_its_reward_aggregation_shows_the_value_its_algo_implies(tmp_path):
    folders = _variant_runs(tmp_path)
    for i, folder in enumerate(folders):  # beta 1 sums then normalizes; the others aggregate as their algo implies
        _edit_run_json(folder, args__multi_objective_aggregation="sum_then_normalize" if i in (2, 3) else
                       "normalize_then_sum")
    report = compare_runs([load_run(f) for f in folders])
    assert list(report["algos"]) == [
        "mrtpo (beta_warmup_steps=3, mrtpo_beta=0.5, multi_objective_aggregation=normalize_then_sum)",
        "mrtpo (beta_warmup_steps=0, mrtpo_beta=1, multi_objective_aggregation=sum_then_normalize)", "gdpo"]
    assert report["setting_differences"]["args.multi_objective_aggregation"]["(follows algo)"][0] == (
        "mrtpo (beta_warmup_steps=3, mrtpo_beta=0.5, multi_objective_aggregation=normalize_then_sum) seed1")


def test_variant_values_cut_to_one_name_are_numbered_and_spelled_out_in_full(tmp_path):
    from mrtpo_sdk.compare.report import render_markdown
    from mrtpo_sdk.compare.stats import VARIANT_VALUE_CHARS

    stem = "x" * VARIANT_VALUE_CHARS
    folders = _variant_runs(tmp_path)
    for folder, tag in zip(folders[:4], ("a", "a", "b", "b")):
        _edit_run_json(folder, args__mrtpo_beta=0.5, args__beta_warmup_steps=3, script_args__tag=stem + tag)
    report = compare_runs([load_run(f) for f in folders])
    short = f"mrtpo (script_args.tag={stem[:VARIANT_VALUE_CHARS - 1]}…)"
    assert list(report["algos"]) == [short, f"{short} #2", "gdpo"]
    assert report["variant_values"] == {short: {"script_args.tag": f'"{stem}a"'},
                                        f"{short} #2": {"script_args.tag": f'"{stem}b"'}}
    md = render_markdown(report)
    assert f'Their values in full: {short}: script_args.tag="{stem}a"; {short} #2: script_args.tag="{stem}b".' in md
    # names shown whole need no spelling out
    assert "in full" not in render_markdown(compare_runs([load_run(f) for f in _variant_runs(tmp_path / "whole")]))


def test_different_initial_policies_are_named_by_variant(tmp_path):
    folders = _variant_runs(tmp_path)
    _edit_run_json(folders[0], initial_policy="/cache/warm-a")
    _edit_run_json(folders[2], initial_policy="/cache/warm-b")
    report = compare_runs([load_run(f) for f in folders])
    [note] = [n for n in report["notes"] if "different policies" in n]
    assert note == ("seed 1: the runs started from different policies (mrtpo (beta_warmup_steps=3, mrtpo_beta=0.5): "
                    "/cache/warm-a; mrtpo (beta_warmup_steps=0, mrtpo_beta=1): /cache/warm-b), so its pairs compare "
                    "different starting points.")


def test_each_variant_of_an_algo_is_drawn_in_its_algos_colour_with_a_look_of_its_own():
    from mrtpo_sdk.compare.report import group_looks

    names = {f"mrtpo (v={i})": "mrtpo" for i in range(6)} | {"gdpo": "gdpo", "grpo": "grpo", "mine": "mine"}
    look = group_looks(names)
    assert [look[f"mrtpo (v={i})"][0] for i in range(6)] == [0] * 6
    assert len({look[f"mrtpo (v={i})"][1:] for i in range(6)}) == 6
    assert look["mrtpo (v=4)"] == (0, "-", "s")
    assert (look["gdpo"], look["grpo"], look["mine"]) == ((1, "-", "o"), (2, "-", "o"), (3, "-", "o"))
    assert group_looks({"grpo": "grpo", "mrtpo": "mrtpo"}) == {"grpo": (2, "-", "o"), "mrtpo": (0, "-", "o")}


def test_many_variants_plot_one_legend_below_the_panels(tmp_path):
    from matplotlib.image import imread

    from mrtpo_sdk.compare.report import plot_comparison

    folders = []
    for i in range(6):
        folder = write_run(tmp_path / f"v{i}" / "mrtpo-seed1", algo="mrtpo", seed=1, curves={"r": step_curve(3 + i)},
                           dev_final={"acc": 0.1 * i})
        folders.append(_edit_run_json(folder, args__mrtpo_beta=0.1 * (i + 1)))
    runs = [load_run(f) for f in folders]
    report = compare_runs(runs)
    assert len(report["algos"]) == 6
    few = plot_comparison(compare_runs(runs[:2]), runs[:2], tmp_path / "few.png")
    many = plot_comparison(report, runs, tmp_path / "many.png")
    # same panels; the legend below makes the figure taller by its rows
    assert imread(many).shape[1] == imread(few).shape[1] and imread(many).shape[0] > imread(few).shape[0]


def test_a_run_that_does_not_record_a_setting_joins_the_variant_that_records_it_null(tmp_path):
    folders = _variant_runs(tmp_path)
    _edit_run_json(folders[0], data=None)  # warmed-up seed 1: null, seed 2: no key; "beta 1": a data file
    for folder in folders[2:4]:
        _edit_run_json(folder, args__mrtpo_beta=0.5, args__beta_warmup_steps=3, data={"train": "x.jsonl"})
    report = compare_runs([load_run(f) for f in folders])
    assert list(report["algos"]) == ["mrtpo (data=null)", 'mrtpo (data={"train": "x.jsonl"})', "gdpo"]
    assert report["algos"]["mrtpo (data=null)"]["seeds"] == [1, 2]
    assert report["variant_values"]["mrtpo (data=null)"] == {"data": "null"}


def test_twins_that_differ_only_in_what_their_algo_does_not_read_are_an_error_saying_so(tmp_path):
    a = write_run(tmp_path / "a" / "gdpo-seed1", algo="gdpo", seed=1, curves={"r": [1.0]})
    b = write_run(tmp_path / "b" / "gdpo-seed1", algo="gdpo", seed=1, curves={"r": [1.0]})
    _edit_run_json(a, args__mrtpo_beta=0.5)
    _edit_run_json(b, args__mrtpo_beta=1.0)
    with pytest.raises(MRTPOError, match=r"\(they differ only in mrtpo_beta, which GDPO does not read, so no setting "
                                         r"it reads tells them apart\); compare one of them"):
        compare_runs([load_run(a), load_run(b)])
    _edit_run_json(a, args__mrtpo_beta=1.0, data=None)  # null against no key: unset in both
    with pytest.raises(MRTPOError, match=r"\(no setting they record tells them apart\)"):
        compare_runs([load_run(a), load_run(b)])


def test_the_paired_tables_show_every_pair_within_the_width(tmp_path):
    import io

    from rich.console import Console

    from mrtpo_sdk.compare.report import pairs_tables

    folders = []
    for i, beta in enumerate((0.1, 0.2, 0.5, 1.0, 2.0)):
        for seed in (1, 2):
            folder = write_run(tmp_path / f"v{i}" / f"mrtpo-seed{seed}", algo="mrtpo", seed=seed,
                               curves={"r": step_curve(3 + i)}, dev_final={"acc": 0.1 * i})
            folders.append(_edit_run_json(folder, args__mrtpo_beta=beta))
    for seed in (1, 2):
        folders.append(write_run(tmp_path / "g" / f"gdpo-seed{seed}", algo="gdpo", seed=seed,
                                 curves={"r": step_curve(5)}, dev_final={"acc": 0.2}))
    report = compare_runs([load_run(f) for f in folders])
    pairs = list(dict.fromkeys((p["algo"], p["baseline"]) for p in report["paired"]))
    assert len(pairs) == 5 + 4 + 3 + 2 + 1  # each variant against GDPO and the variants after it
    tables, keys, hidden = pairs_tables(report, width=80)
    assert hidden == 0 and len(tables) > 1
    assert keys[0] == "[1] MRTPO (mrtpo_beta=0.1) vs GDPO" and len(keys) == len(pairs)
    out = io.StringIO()
    console = Console(file=out, width=80)
    for table in tables:
        console.print(table)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert all(f"[{i}]" in text for i in range(1, len(pairs) + 1))
    # every cell as compare.json has it: MRTPO at beta 0.1 (acc 0.0) lost seed 1 and 2 against GDPO (0.2)
    assert re.search(r"│ dev acc\s*│\s*0–0–2\s*│", text)
    # a held-out split named like the dev rows has rows of its own
    report["held_out"] = {"dev": {"headlines": ["acc"], "compared": ["acc"], "paired": [
        {**p, "metric": "held_out/dev/acc"} for p in report["paired"] if p["metric"] == "dev/acc"]}}
    tables, keys, hidden = pairs_tables(report, width=200)
    assert [row for row in tables[0].columns[0]._cells if "acc" in row] == ["dev acc", "held-out dev acc"]
