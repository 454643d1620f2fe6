"""`mrtpo-sdk compare ... --also_eval SPLIT`: every run's final policy and the runs' initial policy scored on more
held-out splits (with `eval_command` replaced by a recorder that writes known eval.json files), reused when the
settings match, and summarized over seeds in compare.json and compare.md."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import mrtpo_sdk.compare.matrix
import mrtpo_sdk.evaluation.cli
import mrtpo_sdk.trainer.cli
from mrtpo_sdk.cli import main
from mrtpo_sdk.compare.also_eval import plan_evals
from mrtpo_sdk.compare.stats import load_run
from mrtpo_sdk.loader import load_task

from .conftest import compare_in_fresh_python, write_run

TOY_TASK = str(Path(__file__).resolve().parents[1] / "fixtures" / "toy_task.py")  # fixed examples: no splits

SPLIT_TASK = '''
from mrtpo_sdk import Result, Task, verifier

WORDS = ["apple", "river", "stone", "cloud", "green", "table", "light", "music", "bread", "chair"]


@verifier(kind="format")
def tags(example, completion):
    ok = completion.strip().startswith("<w>") and completion.strip().endswith("</w>")
    return Result(float(ok), "" if ok else "Write the answer between <w> and </w>.")


def rows(words, split):
    return [{"id": f"{split}-{i}", "word": w} for i, w in enumerate(words)]


task = Task(
    name="splits",
    examples={"train": rows(WORDS[:6], "train"), "dev": rows(WORDS[6:8], "dev"), "unseen": rows(WORDS[8:], "unseen")},
    prompt=lambda ex: [{"role": "user", "content": f"Write the word {ex['word']} in tags."}],
    verifiers=[tags],
    reference=lambda ex: f"<w>{ex['word']}</w>",
    eval_split="dev",
)
'''

PT = "inst_level_strict_acc/startend:end_checker"  # a per-type key, as instruction following reports them

# final policies on `unseen`, by run folder name: (prompt_level_strict_acc, per-type, completion_length)
#   prompt: mrtpo 0.2, 0.4, 0.6; grpo 0.1, 0.4, 0.7      -> MRTPO won seed 1, tied seed 2, lost seed 3
#   per-type: mrtpo 0.5, 0.5, 0.5; grpo 0.0, 1.0, 0.5    -> won, lost, tied
FINAL = {
    "mrtpo-seed1": (0.2, 0.5, 10.0), "mrtpo-seed2": (0.4, 0.5, 20.0), "mrtpo-seed3": (0.6, 0.5, 30.0),
    "grpo-seed1": (0.1, 0.0, 12.0), "grpo-seed2": (0.4, 1.0, 14.0), "grpo-seed3": (0.7, 0.5, 16.0),
}
INITIAL = (0.1, 0.25, 50.0)  # smollm2 before training


def write_split_task(tmp_path: Path) -> Path:
    path = tmp_path / "splits_task.py"
    path.write_text(SPLIT_TASK, encoding="utf-8")
    return path


def write_split_run(folder: Path, algo: str, seed: int, task_file: Path, *, model: str | None = "smollm2",
                    warm_start: dict | None = None) -> Path:
    """A finished synthetic run of the `splits` task, started from ``model`` (None: the embedded policy)."""
    write_run(folder, algo=algo, seed=seed, task="splits", curves={"tags": [0.5, 1.0]}, max_steps=2,
              dev_final={"tags": 1.0}, dev_initial={"tags": 0.0})
    info = json.loads((folder / "run.json").read_text())
    info.update(
        task_file=str(task_file),
        task_options={},
        data=None,
        initial_policy=model if model is not None else f"/cache/policies/splits-small-seed{seed}-abc",
        warm_start=warm_start,
        policy=f"{model}" if model else "embedded bootstrap policy (0.10M parameters) from /cache/...",
        script_args={"model": model, "policy_preset": "small", "data": None},
        args={"seed": seed, "max_steps": 2, "max_completion_length": 12, "per_device_eval_batch_size": 8},
    )
    (folder / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return folder


@pytest.fixture
def runs(tmp_path) -> list[Path]:
    task_file = write_split_task(tmp_path)
    return [write_split_run(tmp_path / "m" / f"{algo}-seed{seed}", algo, seed, task_file)
            for seed in (1, 2, 3) for algo in ("mrtpo", "grpo")]


@pytest.fixture
def evaluator(monkeypatch):
    """Replace eval_command: record each argv and write the eval.json of FINAL / INITIAL into its --output_dir."""
    calls: list[list[str]] = []

    def fake_eval(argv):
        calls.append(list(argv))

        def value(flag, default=None):
            return argv[argv.index(flag) + 1] if flag in argv else default

        model = value("--model")
        prompt, per_type, length = FINAL.get(Path(model).name if model else "", INITIAL)  # a run, else initial
        n = min(2, int(value("--max_examples", 2)))
        report = {
            "task": "splits", "split": value("--split"), "policy": model or f"embedded seed {value('--seed')}",
            "num_examples": n, "num_generations": 1, "greedy": True, "temperature": None,
            "max_completion_length": int(value("--max_completion_length", 12)), "reward_names": ["tags"],
            "headline_names": ["prompt_level_strict_acc"],
            "metrics": {"tags": prompt, "all_rewards": prompt, "prompt_level_strict_acc": prompt, PT: per_type,
                        "completion_length": length},
            "seconds": 3.0, "batch_size": int(value("--batch_size", 8)), "autocast": None, "records": [],
        }
        out = Path(value("--output_dir"))
        out.mkdir(parents=True, exist_ok=True)
        (out / "eval.json").write_text(json.dumps(report), encoding="utf-8")
        return 0

    monkeypatch.setattr(mrtpo_sdk.evaluation.cli, "eval_command", fake_eval)
    return calls


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("error: ")]
    assert len(errors) == 1, err
    return errors[0]


# ------------------------------------------------------------------------------------------------ the flags


@pytest.mark.parametrize(
    "args, message",
    [
        (["--also_eval", "unseen,"], r"error: --also_eval: expected a comma-separated list of splits .*'unseen,'"),
        (["--also_eval", "unseen,unseen"], r"error: --also_eval: unseen given more than once"),
        (["--also_eval", "unseen", "--also_eval_batch_size", "0"], r"error: --also_eval_batch_size must be >= 1, got 0"),
        (
            ["--also_eval", "unseen", "--also_eval_max_examples", "many"],
            r"error: argument --also_eval_max_examples: invalid int value: 'many'.*",
        ),
        (["--also_eval_max_examples", "5"], r"error: --also_eval_max_examples applies only with --also_eval SPLIT"),
        (
            ["--also_eval", "nope"],
            r"error: --also_eval nope: task 'splits' has no split 'nope'; its examples= dict has 'train', 'dev', "
            r"'unseen'",
        ),
    ],
)
def test_flag_mistakes_are_one_error_line(args, message, runs, evaluator, tmp_path, capsys):
    assert main(["compare", *map(str, runs), *args]) == 2
    assert re.fullmatch(message, error_line(capsys))
    assert evaluator == [] and not (tmp_path / "m" / "compare.json").exists()


def test_an_unknown_split_stops_the_matrix_before_any_training(tmp_path, monkeypatch, capsys):
    trained = []
    monkeypatch.setattr(mrtpo_sdk.trainer.cli, "train_command", lambda argv: trained.append(argv) or 0)
    task_file = write_split_task(tmp_path)
    out = str(tmp_path / "o")
    assert main(["compare", str(task_file), "--algos", "mrtpo", "--seeds", "1", "--output_dir", out,
                 "--also_eval", "unseen,test", "--max_steps", "2"]) == 2
    assert error_line(capsys) == (
        "error: --also_eval test: task 'splits' has no split 'test'; its examples= dict has 'train', 'dev', 'unseen'"
    )
    assert main(["compare", TOY_TASK, "--algos", "mrtpo", "--seeds", "1", "--output_dir", out,
                 "--also_eval", "unseen"]) == 2
    assert error_line(capsys).startswith(
        "error: --also_eval unseen: task 'toy' has one set of examples, no splits: there is no held-out split"
    )
    assert trained == []


# ------------------------------------------------------------------------------------------------ the report


def test_the_held_out_section_summarizes_final_and_initial_over_seeds(runs, evaluator, tmp_path, capsys):
    report_dir = tmp_path / "m"
    assert main(["compare", *map(str, runs), "--also_eval", "unseen"]) == 0

    # 6 run folders, then the one initial policy they all share (smollm2), scored as the runs were
    assert [Path(c[c.index("--output_dir") + 1]) for c in evaluator] == [
        *(r / "eval-unseen" for r in runs), report_dir / "initial-smollm2" / "eval-unseen"
    ]
    assert evaluator[0] == [str(runs[0].parents[1] / "splits_task.py"), "--model", str(runs[0]), "--split", "unseen",
                            "--output_dir", str(runs[0] / "eval-unseen")]
    assert evaluator[-1][1:] == ["--model", "smollm2", "--max_completion_length", "12", "--batch_size", "8",
                                 "--split", "unseen", "--output_dir", str(report_dir / "initial-smollm2" / "eval-unseen")]

    section = json.loads((report_dir / "compare.json").read_text())["held_out"]["unseen"]
    assert section["metrics"] == ["prompt_level_strict_acc", "tags", "all_rewards", PT, "completion_length"]
    assert section["headlines"] == ["prompt_level_strict_acc"]
    m, g = section["algos"]["mrtpo"], section["algos"]["grpo"]
    prompt = "prompt_level_strict_acc"
    assert m["final"][prompt]["values"] == pytest.approx({"seed1": 0.2, "seed2": 0.4, "seed3": 0.6})
    assert m["final"][prompt]["mean"] == pytest.approx(0.4)
    assert m["final"][prompt]["ci"] == pytest.approx([0.0, 0.4 + 4.302653 * 0.2 / math.sqrt(3)])  # clipped at 0
    assert g["final"][prompt]["ci"] == pytest.approx([0.0, 1.0])  # 0.4 ± 0.745: clipped to [0, 1]
    # the three seeds started from one policy (smollm2), scored once: one value, no interval over copies of it
    assert m["initial"][prompt] == {"mean": pytest.approx(0.1), "ci": None, "n": 1, "values": {"seed1": 0.1}}
    assert m["final"][PT]["mean"] == pytest.approx(0.5) and m["initial"][PT]["mean"] == pytest.approx(0.25)
    # the length is unbounded above: 20 ± 4.302653 · 10 / √3 = [-4.84, 44.84], clipped at 0
    assert m["final"]["completion_length"]["ci"] == pytest.approx([0.0, 20 + 4.302653 * 10 / math.sqrt(3)])
    paired = {p["metric"]: p for p in section["paired"]}
    assert set(paired) == {f"held_out/unseen/{k}" for k in (prompt, "tags", "all_rewards", PT)}
    assert paired[f"held_out/unseen/{prompt}"]["seeds"] == {"1": "won", "2": "tied", "3": "lost"}
    assert paired[f"held_out/unseen/{PT}"]["seeds"] == {"1": "won", "2": "lost", "3": "tied"}
    assert paired[f"held_out/unseen/{prompt}"]["summary"] == "MRTPO beat GRPO on 1/3 seeds, tied 1, lost 1"
    assert section["settings"]["num_examples"] == [2] and section["settings"]["batch_size"] == [8]

    md = (report_dir / "compare.md").read_text()
    assert "## Held-out split `unseen`" in md
    assert "Scored with `mrtpo-sdk eval --split unseen`: greedy, 2 examples, batch size 8, at most 12 new tokens; " \
           "the same for every run and the initial policy (`smollm2`)." in md
    assert "| mrtpo | prompt_level_strict_acc (headline) | 0.100 | 0.400 [0.000, 0.897] |" in md
    assert f"| grpo | {PT} | 0.250 | 0.500 [0.000, 1.000] |" in md
    assert "| mrtpo | completion_length |" not in md
    assert "- prompt_level_strict_acc: MRTPO beat GRPO on 1/3 seeds, tied 1, lost 1 (seed 1: won, seed 2: tied, " \
           "seed 3: lost)" in md
    text = capsys.readouterr().out
    assert "unseen prompt_level_strict_acc: mrtpo 0.400 [0.000, 0.897] (initial 0.100); " in text
    # the held-out headline's pairs are the paired table's last row: won–tied–lost against GRPO
    assert re.search(r"│ held-out unseen prompt_level_strict_acc\s*│\s*1–1–1\s*│", text)
    assert "(+3 per-category and held-out paired results in compare.md)" in text  # tags, all_rewards, PT
    assert len(re.findall(r"\[eval \d/7\] unseen: .*: scored in \d+s", text)) == 7


def test_more_than_40_per_type_metrics_stay_in_compare_json(tmp_path):
    from mrtpo_sdk.compare.report import held_out_markdown

    keys = [f"inst_level_strict_acc/t{i}" for i in range(41)]
    summary = {"mean": 0.5, "ci": None, "n": 1, "values": {"seed1": 0.5}}
    section = {
        "metrics": ["acc", *keys], "headlines": ["acc"], "compared": ["acc", *keys],
        "settings": {"greedy": True, "batch_size_flag": 4, "max_examples_flag": 50, "batch_size": [4],
                     "num_examples": [50], "max_completion_length": [128]},
        "initial_policies": [{"label": "smollm2"}],
        "algos": {"mrtpo": {"initial": {k: summary for k in ["acc", *keys]},
                            "final": {k: summary for k in ["acc", *keys]}}},
        "paired": [],
    }
    lines = held_out_markdown("unseen", section)
    assert "| mrtpo | acc (headline) | 0.500 | 0.500 |" in lines
    assert not any("t0 |" in line for line in lines)
    assert "41 per-type metrics (e.g. `inst_level_strict_acc/t0`) are in compare.json " \
           "(`held_out.unseen.algos.<algo>.final`)." in lines
    assert lines[2].startswith("Scored with `mrtpo-sdk eval --split unseen`: greedy, 50 examples "
                               "(--also_eval_max_examples 50), batch size 4 (--also_eval_batch_size), ")


# ------------------------------------------------------------------------------------------------ reuse


def test_a_matching_eval_json_is_reused_and_another_setting_recomputes(runs, evaluator, tmp_path, capsys):
    args = ["compare", *map(str, runs), "--also_eval", "unseen"]
    assert main(args) == 0
    assert len(evaluator) == 7
    capsys.readouterr()
    assert main(args) == 0
    assert len(evaluator) == 7  # nothing recomputed
    text = capsys.readouterr().out
    assert len(re.findall(r"\[eval \d/7\] unseen: .*: reused \(scored in 3s\)", text)) == 7

    assert main([*args, "--also_eval_max_examples", "1", "--also_eval_batch_size", "4"]) == 0
    again = evaluator[7:]
    assert len(again) == 7 and all(c[-6:-2] == ["--batch_size", "4", "--max_examples", "1"] for c in again[:6])
    assert again[-1][again[-1].index("--batch_size") + 1] == "4"  # the initial policy with the same batch size
    text = capsys.readouterr().out
    assert text.count("recomputing: its eval.json was scored with other settings (batch_size, max_examples)") == 7
    md = (tmp_path / "m" / "compare.md").read_text()
    assert "greedy, 1 examples (--also_eval_max_examples 1), batch size 4 (--also_eval_batch_size)" in md

    # a retrained run (another run.json) and an eval.json written by hand (settings unknown) are scored again
    info = json.loads((runs[0] / "run.json").read_text())
    (runs[0] / "run.json").write_text(json.dumps({**info, "elapsed_s": 99.0}))
    (runs[1] / "eval-unseen" / "compare_eval.json").unlink()
    assert main([*args, "--also_eval_max_examples", "1", "--also_eval_batch_size", "4"]) == 0
    assert [c[c.index("--model") + 1] for c in evaluator[14:]] == [str(runs[0]), str(runs[1])]
    text = capsys.readouterr().out
    assert "recomputing: its eval.json was scored with other settings (run_json_sha256)" in text
    assert "recomputing: the settings of its eval.json are unknown (no compare_eval.json)" in text


def test_reading_existing_eval_json_files_imports_no_torch(runs, evaluator, tmp_path):
    assert main(["compare", *map(str, runs), "--also_eval", "unseen"]) == 0
    out, heavy = compare_in_fresh_python([*map(str, runs), "--also_eval", "unseen"], tmp_path)
    assert heavy == [] and out.splitlines()[-1] == "0"
    assert out.count(": reused (scored in 3s)") == 7


# ------------------------------------------------------------------------------------------------ initial policies


def test_the_embedded_policy_is_scored_per_seed_and_a_warm_start_from_its_folder(tmp_path):
    task_file = write_split_task(tmp_path)
    task = load_task(str(task_file))
    embedded = [write_split_run(tmp_path / f"{a}-seed{s}", a, s, task_file, model=None)
                for s in (1, 2) for a in ("mrtpo", "gdpo")]
    jobs = plan_evals([load_run(p) for p in embedded], ["unseen"], tmp_path / "r", task=task, task_spec="T")
    initial = [j for j in jobs if j.kind == "initial"]
    assert [(j.label, j.folder) for j in initial] == [
        ("initial seed1", tmp_path / "r" / "initial-seed1" / "eval-unseen"),
        ("initial seed2", tmp_path / "r" / "initial-seed2" / "eval-unseen"),
    ]
    assert initial[0].argv == ["T", "--seed", "1", "--policy_preset", "small", "--max_completion_length", "12",
                               "--batch_size", "8", "--split", "unseen"]
    assert [r.path.name for r in initial[1].runs] == ["mrtpo-seed2", "gdpo-seed2"]

    warm = {"folder": "/cache/warm/smollm2-ws5-1e-05-seed1-abc", "steps": 5}
    ws = write_split_run(tmp_path / "w" / "mrtpo-seed1", "mrtpo", 1, task_file, model="smollm2", warm_start=warm)
    (job,) = [j for j in plan_evals([load_run(ws)], ["unseen"], tmp_path / "r", task=task, task_spec="T")
              if j.kind == "initial"]
    assert job.label == "initial smollm2-ws5-1e-05-seed1-abc"
    assert job.argv[1:3] == ["--model", "/cache/warm/smollm2-ws5-1e-05-seed1-abc"]


def test_the_matrix_scores_its_runs_after_training(tmp_path, monkeypatch, evaluator, capsys):
    task_file = write_split_task(tmp_path)
    trained = []

    def fake_train(argv):
        trained.append(argv)
        out = Path(argv[argv.index("--output_dir") + 1])
        write_split_run(out, argv[argv.index("--algo") + 1], int(argv[argv.index("--seed") + 1]), task_file)
        return 0

    monkeypatch.setattr(mrtpo_sdk.trainer.cli, "train_command", fake_train)
    monkeypatch.setattr(mrtpo_sdk.compare.matrix, "embedded_policy_dirs", lambda task_spec, flags: None)
    out = tmp_path / "mx"
    assert main(["compare", str(task_file), "--algos", "mrtpo,grpo", "--seeds", "1", "--output_dir", str(out),
                 "--also_eval", "unseen,dev", "--model", "smollm2"]) == 0
    assert len(trained) == 2
    assert [(c[0], c[c.index("--split") + 1], Path(c[c.index("--output_dir") + 1])) for c in evaluator] == [
        (str(task_file), "unseen", out / "mrtpo-seed1" / "eval-unseen"),
        (str(task_file), "unseen", out / "grpo-seed1" / "eval-unseen"),
        (str(task_file), "unseen", out / "initial-smollm2" / "eval-unseen"),
        (str(task_file), "dev", out / "mrtpo-seed1" / "eval-dev"),
        (str(task_file), "dev", out / "grpo-seed1" / "eval-dev"),
        (str(task_file), "dev", out / "initial-smollm2" / "eval-dev"),
    ]
    report = json.loads((out / "compare.json").read_text())
    assert list(report["held_out"]) == ["unseen", "dev"]
    assert report["held_out"]["dev"]["algos"]["grpo"]["final"]["prompt_level_strict_acc"]["mean"] == pytest.approx(0.1)
    md = (out / "compare.md").read_text()
    assert md.index("## Held-out split `unseen`") < md.index("## Held-out split `dev`")


# ------------------------------------------------------------------------------------------------ end to end


@pytest.mark.slow
def test_a_tiny_real_matrix_scores_its_runs_and_the_embedded_policy(tmp_path, shared_cache, capsys):
    """Two 2-step runs of the tiny embedded policy, then eval on `unseen` for real (the shared test cache)."""
    task_file = write_split_task(tmp_path)
    out = tmp_path / "mx"
    assert main(["compare", str(task_file), "--algos", "mrtpo,grpo", "--seeds", "1", "--output_dir", str(out),
                 "--also_eval", "unseen", "--policy_preset", "tiny", "--max_steps", "2",
                 "--per_device_train_batch_size", "8", "--max_completion_length", "8"]) == 0
    for folder in (out / "mrtpo-seed1", out / "grpo-seed1", out / "initial-tiny-seed1"):  # preset tiny
        report = json.loads((folder / "eval-unseen" / "eval.json").read_text())
        assert (report["split"], report["num_examples"], report["greedy"]) == ("unseen", 2, True)
        assert report["max_completion_length"] == 8 and 0.0 <= report["metrics"]["tags"] <= 1.0
    section = json.loads((out / "compare.json").read_text())["held_out"]["unseen"]
    initial = json.loads((out / "initial-tiny-seed1" / "eval-unseen" / "eval.json").read_text())["metrics"]["tags"]
    assert section["algos"]["grpo"]["initial"]["tags"]["values"] == {"seed1": initial}
    assert section["initial_policies"][0]["policy"].startswith("embedded bootstrap policy (tiny, seed 1)")
    capsys.readouterr()
    assert main(["compare", str(out / "mrtpo-seed1"), str(out / "grpo-seed1"), "--also_eval", "unseen"]) == 0
    assert capsys.readouterr().out.count(": reused (scored in") == 3


def test_variants_of_mrtpo_are_paired_on_the_held_out_split(runs, evaluator, tmp_path):
    # the grpo runs become MRTPO at beta 1: two MRTPO runs per seed, told apart by mrtpo_beta
    for folder in runs:
        info = json.loads((folder / "run.json").read_text())
        if info["algo"] == "grpo":
            info["algo"] = "mrtpo"
        info["args"]["mrtpo_beta"] = 1.0 if folder.name.startswith("grpo") else 0.5
        (folder / "run.json").write_text(json.dumps(info), encoding="utf-8")
    assert main(["compare", *map(str, runs), "--also_eval", "unseen"]) == 0
    section = json.loads((tmp_path / "m" / "compare.json").read_text())["held_out"]["unseen"]
    assert list(section["algos"]) == ["mrtpo (mrtpo_beta=0.5)", "mrtpo (mrtpo_beta=1)"]
    paired = {p["metric"]: p for p in section["paired"]}["held_out/unseen/prompt_level_strict_acc"]
    assert (paired["algo"], paired["baseline"]) == ("mrtpo (mrtpo_beta=0.5)", "mrtpo (mrtpo_beta=1)")
    assert paired["seeds"] == {"1": "won", "2": "tied", "3": "lost"}  # 0.2/0.4/0.6 vs 0.1/0.4/0.7
