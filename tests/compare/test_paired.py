"""Paired differences, Student's t and the detectable difference, checked against published and hand-worked values."""

from __future__ import annotations

import doctest
import json
import math

import pytest

from mrtpo_sdk.compare import paired, power, student_t
from mrtpo_sdk.compare.paired import minimum_detectable_difference, paired_difference, seeds_needed
from mrtpo_sdk.compare.report import render_markdown
from mrtpo_sdk.compare.stats import T_975, compare_runs, load_run
from mrtpo_sdk.compare.student_t import t_cdf, t_ppf

from .conftest import EXPERIMENT, step_curve, write_run

#: t_{0.80, df} from published t tables (the one-sided 0.20 column), 3 decimals.
T_80 = {1: 1.376, 2: 1.061, 3: 0.978, 4: 0.941, 5: 0.920, 10: 0.879, 20: 0.860, 30: 0.854}


# ------------------------------------------------------------------------------------------------- Student's t


def test_t_quantiles_match_the_published_tables():
    for df, value in T_975.items():
        assert t_ppf(0.975, df) == pytest.approx(value, abs=1e-6), df
    for df, value in T_80.items():
        assert t_ppf(0.80, df) == pytest.approx(value, abs=5e-4), df
    # closed forms: df 1 is Cauchy, t = tan(pi (p - 1/2)); df 2: t = (2p - 1) / sqrt(2p(1 - p))
    for p in (0.6, 0.8, 0.975, 0.999):
        assert t_ppf(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-11)
        assert t_ppf(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-11)
    assert t_ppf(0.5, 9) == 0.0 and t_ppf(0.2, 9) == -t_ppf(0.8, 9)


def test_t_distribution_matches_the_incomplete_beta_function():
    mpmath = pytest.importorskip("mpmath")  # an independent reference: P(|T| > x) = I_{df/(df+x²)}(df/2, 1/2)
    mpmath.mp.dps = 30

    def cdf(x, df):
        tail = mpmath.betainc(mpmath.mpf(df) / 2, 0.5, 0, df / (df + mpmath.mpf(x) ** 2), regularized=True) / 2
        return 1 - tail if x > 0 else tail

    for df in (1, 2, 3, 4, 7, 30, 31, 99, 1000, 1001, 50_000):
        for x in (-4.0, -0.7, 0.3, 1.0, 2.5):
            assert t_cdf(x, df) == pytest.approx(float(cdf(x, df)), abs=1e-12), (df, x)
        for p in (0.8, 0.975):  # above 1000 df: the asymptotic expansion, not the series
            assert float(cdf(t_ppf(p, df), df)) == pytest.approx(p, abs=1e-12), (df, p)


def test_t_rejects_what_it_cannot_compute():
    for df in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="df must be an integer >= 1"):
            t_ppf(0.9, df)
    for p in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            t_ppf(p, 3)
    with pytest.raises(ValueError, match="NaN"):
        t_cdf(float("nan"), 3)
    assert t_cdf(math.inf, 3) == 1.0 and t_cdf(-math.inf, 3) == 0.0


def test_the_docstring_examples_hold():
    for module in (student_t, paired):
        assert doctest.testmod(module).failed == 0, module.__name__


# ------------------------------------------------------------------------------------------ paired differences


def test_paired_difference_of_students_sleep_data():
    # Cushny and Peebles' sleep data (Student 1908; R's `sleep`): extra hours, drug 2 minus drug 1 per patient.
    # R: t.test(extra ~ group, data = sleep, paired = TRUE) gives mean difference 1.58, 95% CI [0.7001142, 2.4598858]
    d = paired_difference([1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4])
    assert d["n"] == 10 and d["mean"] == pytest.approx(1.58)
    assert d["sd"] == pytest.approx(1.229995, abs=1e-6)
    assert d["ci"] == pytest.approx([0.7001142, 2.4598858], abs=1e-7)
    assert d["verdict"] == "better"
    # MDE = (t_{0.975, 9} + t_{0.80, 9}) · sd / sqrt(10), t_{0.80, 9} = 0.883 in published tables
    assert d["detectable"] == pytest.approx((2.262157 + 0.883) * 1.229995 / math.sqrt(10), abs=2e-4)
    assert paired_difference([1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4],
                             higher_is_better=False)["verdict"] == "worse"


def test_paired_difference_by_hand():
    # d = 0.10, 0.12, ..., 0.18: mean 0.14, sd = sqrt(0.004 / 4) = 0.0316228, half = 2.776445 · sd / sqrt(5)
    d = paired_difference([0.10, 0.12, 0.14, 0.16, 0.18])
    assert d["mean"] == pytest.approx(0.14) and d["sd"] == pytest.approx(math.sqrt(0.001))
    assert d["ci"] == pytest.approx([0.14 - 0.039265, 0.14 + 0.039265], abs=1e-6)
    assert d["detectable"] == pytest.approx((2.776445 + 0.940965) * math.sqrt(0.001) / math.sqrt(5), abs=1e-6)
    assert d["verdict"] == "better"
    # fewer steps is better: an interval below 0 is MRTPO better, above it worse
    assert paired_difference([-3, -2, -4], higher_is_better=False)["verdict"] == "better"
    assert paired_difference([3, 2, 4], higher_is_better=False)["verdict"] == "worse"
    assert paired_difference([0.1, 0.2, 0.3])["verdict"] == "no detectable difference"  # [-0.048, 0.448]


def test_one_seed_has_no_interval_and_none_has_no_pairs():
    assert paired_difference([0.25]) == {"n": 1, "mean": 0.25, "sd": None, "ci": None, "detectable": None,
                                         "verdict": "no interval"}
    assert paired_difference([]) == {"n": 0, "mean": None, "sd": None, "ci": None, "detectable": None,
                                     "verdict": "no pairs"}


def test_zero_spread():
    same = paired_difference([0.05, 0.05, 0.05, 0.05])  # every seed moved by 0.05: the interval is that value
    assert same["sd"] == 0.0 and same["ci"] == pytest.approx([0.05, 0.05]) and same["detectable"] == 0.0
    assert same["verdict"] == "better"
    zero = paired_difference([0.0, 0.0, 0.0])
    assert zero["ci"] == [0.0, 0.0] and zero["detectable"] == 0.0 and zero["verdict"] == "no detectable difference"
    assert seeds_needed(0.0, 0.01) == 2


def test_paired_difference_rejects_non_finite_values():
    with pytest.raises(ValueError, match="finite"):
        paired_difference([0.1, math.nan])


# ------------------------------------------------------------------------------------------------------- power


def test_minimum_detectable_difference_by_hand():
    assert minimum_detectable_difference(0.1, 5) == pytest.approx((2.776445 + 0.940965) * 0.1 / math.sqrt(5), abs=1e-6)
    assert minimum_detectable_difference(0.1, 2) == pytest.approx((12.706205 + 1.376382) * 0.1 / math.sqrt(2),
                                                                  abs=1e-6)
    assert minimum_detectable_difference(0.1, 1) is None
    assert minimum_detectable_difference(0.0, 4) == 0.0
    # another power: t_{0.90, 4} = 1.533206
    assert minimum_detectable_difference(0.1, 5, power=0.9) == pytest.approx(
        (2.776445 + 1.533206) * 0.1 / math.sqrt(5), abs=1e-6)
    with pytest.raises(ValueError, match="sd must be"):
        minimum_detectable_difference(-0.1, 5)
    with pytest.raises(ValueError, match="power must"):
        minimum_detectable_difference(0.1, 5, power=1.0)


def test_seeds_needed_is_the_first_n_whose_mde_reaches_the_target():
    assert seeds_needed(0.1, 0.1) == 10
    assert minimum_detectable_difference(0.1, 9) > 0.1 >= minimum_detectable_difference(0.1, 10)
    for sd, target in ((0.02, 0.01), (0.07, 0.02), (1.0, 0.3), (0.3, 1.0)):
        n = seeds_needed(sd, target)
        assert minimum_detectable_difference(sd, n) <= target, (sd, target)
        assert n == 2 or minimum_detectable_difference(sd, n - 1) > target, (sd, target)
    # the normal approximation undercounts: ((1.96 + 0.8416) · 0.07 / 0.02)² = 96.1, the t answer is larger
    assert seeds_needed(0.07, 0.02) == 99
    assert seeds_needed(1.0, 1e-4) is None  # ~785 million seeds
    with pytest.raises(ValueError, match="target must"):
        seeds_needed(0.1, 0.0)


# ------------------------------------------------------------------------------------------------ in the report


def test_compare_runs_has_the_paired_differences_of_the_reference_experiment(experiment):
    report = compare_runs([load_run(p) for p in experiment], threshold=0.8, smooth=3)
    rows = {p["metric"]: p for p in report["paired_differences"]}
    assert list(rows) == ["auc/fmt", "auc/exec", "dev/fmt", "dev/exec", "dev/all_rewards",
                          "dev/execution_accuracy", "steps_to_threshold/fmt", "steps_to_threshold/exec"]
    assert {(p["algo"], p["baseline"]) for p in report["paired_differences"]} == {("mrtpo", "gdpo")}

    # dev accuracy: 0.1 - 0.05, 0.2 - 0.1, 0.3 - 0.4 = 0.05, 0.1, -0.1; mean 1/60, sd 0.1040833
    acc = rows["dev/execution_accuracy"]
    assert acc["differences"] == pytest.approx({"1": 0.05, "2": 0.1, "3": -0.1})
    assert acc["mean"] == pytest.approx(1 / 60) and acc["sd"] == pytest.approx(0.1040833, abs=1e-7)
    half = 4.302653 * 0.1040833 / math.sqrt(3)
    assert acc["ci"] == pytest.approx([1 / 60 - half, 1 / 60 + half], abs=1e-6)
    assert acc["detectable"] == pytest.approx((4.302653 + 1.060660) * 0.1040833 / math.sqrt(3), abs=1e-6)
    assert acc["verdict"] == "no detectable difference" and acc["higher_is_better"] and acc["left_out"] == []

    # fmt reached at 4, 5, never (MRTPO) vs 6, 5, 8 (GDPO): seeds 1 and 2 give -2 and 0, seed 3 is left out
    fmt = rows["steps_to_threshold/fmt"]
    assert fmt["differences"] == {"1": -2.0, "2": 0.0} and fmt["left_out"] == ["3"] and fmt["n"] == 2
    assert fmt["mean"] == -1.0 and fmt["sd"] == pytest.approx(math.sqrt(2))
    assert fmt["ci"] == pytest.approx([-1 - 12.706205, -1 + 12.706205], abs=1e-6)  # t · sqrt(2) / sqrt(2)
    assert fmt["detectable"] == pytest.approx(12.706205 + 1.376382, abs=1e-6)
    assert not fmt["higher_is_better"]
    # exec: GDPO never reached it, so no seed has a difference
    assert rows["steps_to_threshold/exec"]["verdict"] == "no pairs"
    assert rows["steps_to_threshold/exec"]["left_out"] == ["1", "2", "3"]

    # exec's area: MRTPO's curve is 1.0 from step 1, GDPO's 0.5 throughout: +0.5 on every seed, zero spread
    auc = rows["auc/exec"]
    assert auc["differences"] == pytest.approx({"1": 0.5, "2": 0.5, "3": 0.5})
    assert auc["ci"] == pytest.approx([0.5, 0.5]) and auc["detectable"] == 0.0 and auc["verdict"] == "better"
    # dev fmt is 0.9 everywhere: zero difference, zero spread
    assert rows["dev/fmt"]["verdict"] == "no detectable difference" and rows["dev/fmt"]["detectable"] == 0.0

    md = render_markdown(report)
    assert "| pair | metric | MRTPO − baseline [95% CI] | n | detectable ≥ | verdict |" in md
    assert ("| MRTPO vs GDPO | dev execution_accuracy (headline) | +0.017 [-0.242, +0.275] | 3 | 0.322 | "
            "no detectable difference |") in md
    assert "| MRTPO vs GDPO | area under curve: exec | +0.500 [+0.500, +0.500] | 3 | 0.000 | MRTPO better |" in md
    assert "| MRTPO vs GDPO | steps to 0.8: fmt | -1.0 [-13.7, +11.7] | 2 | 14.1 | no detectable difference |" in md
    assert "| MRTPO vs GDPO | steps to 0.8: exec | – | 0 | – | no seed where both reached 0.8 |" in md


def test_one_seed_is_reported_without_an_interval(tmp_path):
    runs = []
    for algo, acc in (("mrtpo", 0.3), ("gdpo", 0.2)):
        runs.append(load_run(write_run(tmp_path / f"{algo}-seed1", algo=algo, seed=1,
                                       curves={"r": step_curve(4)}, dev_final={"acc": acc})))
    report = compare_runs(runs, threshold=0.8, smooth=3)
    rows = {p["metric"]: p for p in report["paired_differences"]}
    assert rows["dev/acc"]["mean"] == pytest.approx(0.1) and rows["dev/acc"]["verdict"] == "no interval"
    assert rows["steps_to_threshold/r"]["differences"] == {"1": 0.0}
    md = render_markdown(report)
    assert "| MRTPO vs GDPO | dev acc (headline) | +0.100 | 1 | – | no interval (1 seed) |" in md
    json.dumps(report)  # compare.json holds it as it is


def test_a_report_without_mrtpo_has_no_paired_differences(tmp_path):
    runs = [load_run(write_run(tmp_path / f"{a}-seed1", algo=a, seed=1, curves={"r": step_curve(4)}))
            for a in ("gdpo", "grpo")]
    report = compare_runs(runs)
    assert report["paired_differences"] == []
    assert "MRTPO − baseline" not in render_markdown(report)


# ------------------------------------------------------------------- the command of benchmarks/power.py


def test_power_script_reads_a_compare_json_or_the_runs(experiment, tmp_path, capsys):
    report = compare_runs([load_run(p) for p in experiment], threshold=0.8, smooth=3)
    pilot = tmp_path / "compare.json"
    pilot.write_text(json.dumps(report), encoding="utf-8")
    assert power.main([str(pilot), "--target", "0.1", "--target_steps", "3", "--json", str(tmp_path / "p.json")]) == 0
    out = capsys.readouterr().out
    rows = {r["metric"]: r for r in json.loads((tmp_path / "p.json").read_text())}
    acc = rows["dev/execution_accuracy"]
    assert acc["n"] == 3 and acc["mde"] == pytest.approx((4.302653 + 1.060660) * 0.1040833 / math.sqrt(3), abs=1e-6)
    # seeds needed at sd 0.1040833 for 0.1: the first n with (t_.975 + t_.80) · sd / sqrt(n) <= 0.1
    assert acc["seeds_needed"] == seeds_needed(0.1040833, 0.1) == 11
    assert rows["steps_to_threshold/fmt"]["target"] == 3 and rows["auc/fmt"]["target"] == 0.1
    assert rows["steps_to_threshold/exec"]["mde"] is None and rows["steps_to_threshold/exec"]["seeds_needed"] is None
    assert "dev/execution_accuracy" in out and "steps_to_0.8/fmt" in out
    # the run folders give the same rows; so does a compare.json without paired_differences (read from its algos)
    assert power.main([str(experiment[0].parent), "--target", "0.1", "--target_steps", "3",
                       "--json", str(tmp_path / "q.json")]) == 0
    assert json.loads((tmp_path / "q.json").read_text()) == json.loads((tmp_path / "p.json").read_text())
    del report["paired_differences"]
    pilot.write_text(json.dumps(report), encoding="utf-8")
    assert power.main([str(pilot), "--target", "0.1", "--target_steps", "3", "--json", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text()) == json.loads((tmp_path / "p.json").read_text())
    assert power.main([str(tmp_path / "nothing.json")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_the_experiment_is_the_one_the_numbers_above_assume():
    assert EXPERIMENT["mrtpo"]["acc"] == [0.1, 0.2, 0.3] and EXPERIMENT["gdpo"]["acc"] == [0.05, 0.1, 0.4]
