"""Evaluation: the metrics by hand, the headline metrics of each bundled family, generation vs the model's own
generate, prompt encoding vs TRL's, `mrtpo-sdk eval`, and training that saves its policy and evaluates on the way."""

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from mrtpo_sdk import MRTPOError, Result, Task, load_task, verifier
from mrtpo_sdk.cli import main
from mrtpo_sdk.evaluation import (
    EvalRecord,
    bfcl_ast_accuracy,
    evaluate_policy,
    execution_accuracy,
    generate_completions,
    ifeval_accuracy,
    summarize,
)
from mrtpo_sdk.prompting import encode_prompts
from mrtpo_sdk.trainer import MRTPOConfig, MRTPOTrainer
from mrtpo_sdk.trainer.callbacks import read_metrics

from ..helpers import FIXTURES, ROOT, config, tiny_policy

#: A stand-in tokenizer with a chat template (the prompts stay chat messages; no plain-text note).
_CHAT_TOKENIZER = type("ChatTokenizer", (), {"chat_template": "{{ messages }}"})()



@pytest.fixture(autouse=True)
def isolated_cache(shared_cache):
    """The run's shared cache (tests/conftest.py): each embedded policy is built once per run."""


@verifier
def a(example, completion):
    return Result(float("a" in completion), "a")


@verifier
def b(example, completion):
    return None if example["id"] == "x2" else Result(float("b" in completion), "b")


def split_task(**kw):
    data = {"train": [{"id": f"t{i}"} for i in range(4)], "dev": [{"id": "x1"}, {"id": "x2"}]}
    return Task(name="ab", examples=lambda split: data[split], prompt=lambda ex: "p", verifiers=[a, b], **kw)


def rec(eid, sample, a_, b_):
    return EvalRecord(eid, sample, "", {"a": a_, "b": b_}, 3)


def test_summarize_by_hand():
    task = split_task()
    # x1: (a=1, b=1), (a=0, b=1); x2: b not applicable: (a=1), (a=0)
    records = [rec("x1", 0, 1.0, 1.0), rec("x1", 1, 0.0, 1.0), rec("x2", 0, 1.0, None), rec("x2", 1, 0.0, None)]
    m, headline = summarize(task, records, num_generations=2)
    assert headline == []
    assert m["a"] == 0.5 and m["b"] == 1.0
    assert m["all_rewards"] == 0.5  # x1/0 and x2/0 earn every reward that applies
    assert m["pass@2/all_rewards"] == 1.0 and m["mean@2/all_rewards"] == 0.5
    assert m["pass@2/b"] == 1.0 and m["mean@2/b"] == 1.0  # x2 has no b: only x1 counts
    assert m["pass@2/a"] == 1.0 and m["mean@2/a"] == 0.5
    assert m["completion_length"] == 3.0
    m1, _ = summarize(task, records[:1], num_generations=1)
    assert not any(k.startswith(("pass@", "mean@")) for k in m1)


def test_a_partial_reward_is_not_earned_and_a_completion_nobody_scores_earns_nothing():
    task = split_task()
    m, _ = summarize(task, [rec("x1", 0, 0.999, 1.0), rec("x2", 0, None, None)], 1)
    assert m["all_rewards"] == 0.0
    assert math.isclose(m["a"], 0.999)


def test_task_metrics_are_merged_and_checked():
    task = split_task(metrics=lambda records: {"acc": sum(r.rewards["a"] for r in records) / len(records)})
    m, headline = summarize(task, [rec("x1", 0, 1.0, 0.0), rec("x2", 0, 0.0, None)], 1)
    assert headline == ["acc"] and m["acc"] == 0.5
    with pytest.raises(MRTPOError, match="reward's name"):
        summarize(split_task(metrics=lambda r: {"a": 1.0}), [rec("x1", 0, 1.0, 0.0)], 1)
    with pytest.raises(MRTPOError, match="must be numbers"):
        summarize(split_task(metrics=lambda r: {"acc": "high"}), [rec("x1", 0, 1.0, 0.0)], 1)
    with pytest.raises(MRTPOError, match="ZeroDivisionError"):
        summarize(split_task(metrics=lambda r: {"acc": 1 / 0}), [rec("x1", 0, 1.0, 0.0)], 1)


def test_a_fixed_example_list_has_no_held_out_split():
    task = Task(name="t", examples=[{"id": "1"}], prompt=lambda ex: "p", verifiers=[a])
    assert task.eval_split is None
    with pytest.raises(MRTPOError, match="needs a held-out split"):
        Task(name="t", examples=[{"id": "1"}], prompt=lambda ex: "p", verifiers=[a], eval_split="test")


def test_execution_accuracy():
    records = [EvalRecord("1", 0, "", {"result_match": 1.0}, 1), EvalRecord("2", 0, "", {"result_match": 0.0}, 1)]
    assert execution_accuracy()(records) == {"execution_accuracy": 0.5}


def test_ifeval_prompt_and_instruction_level_accuracy():
    # prompt 1: 2 of 3 followed; prompt 2: 1 of 1 -> prompt-level 1/2, instruction-level pooled 3/4 (not mean 5/6)
    records = [
        EvalRecord("1", 0, "", {"constraint_1": 1.0, "constraint_2": 0.0, "constraint_3": 1.0, "constraint_4": None}, 1),
        EvalRecord("2", 0, "", {"constraint_1": 1.0, "constraint_2": None, "constraint_3": None, "constraint_4": None}, 1),
    ]
    out = ifeval_accuracy()(records)
    assert out == {"prompt_level_strict_acc": 0.5, "inst_level_strict_acc": 0.75}


def test_bfcl_ast_accuracy_per_category_and_irrelevance():
    def r(cat, args, choice):
        return EvalRecord(cat, 0, "", {"tool_format": 1.0, "function_choice": choice, "arguments": args}, 1,
                          example=SimpleNamespace(category=cat))

    records = [r("simple", 1.0, 1.0), r("simple", 0.0, 1.0), r("irrelevance", None, 1.0), r("multiple", 0.0, 0.0)]
    out = bfcl_ast_accuracy()(records)
    assert out == {
        "ast_accuracy": 0.5,
        "ast_accuracy/irrelevance": 1.0,
        "ast_accuracy/multiple": 0.0,
        "ast_accuracy/simple": 0.5,
    }


def test_batched_greedy_generation_equals_one_prompt_at_a_time():
    task = load_task(FIXTURES / "letters_task.py")
    model, tok = tiny_policy(task)
    model.eval()
    prompts = [task.rollout_prompt(ex) for ex in task.load_examples()[:5]]
    ids = encode_prompts(tok, prompts)
    assert len({len(i) for i in ids}) > 1  # lengths differ, so the batch is padded
    batched = generate_completions(model, tok, ids, max_new_tokens=8, batch_size=5)
    for row, out in zip(ids, batched):
        with torch.no_grad():
            gen = model.generate(torch.tensor([row]), max_new_tokens=8, do_sample=False,
                                 pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
        new = gen[0, len(row):].tolist()
        if tok.eos_token_id in new:
            new = new[: new.index(tok.eos_token_id) + 1]
        assert out == [(tok.decode(new, skip_special_tokens=True), len(new))]


def test_sampled_generation_gives_k_completions_each():
    task = load_task(FIXTURES / "letters_task.py")
    model, tok = tiny_policy(task)
    ids = encode_prompts(tok, [task.rollout_prompt(ex) for ex in task.load_examples()[:3]])
    torch.manual_seed(0)
    out = generate_completions(model, tok, ids, num_generations=4, temperature=1.0, max_new_tokens=6, batch_size=8)
    assert [len(o) for o in out] == [4, 4, 4]
    assert all(1 <= n <= 6 for o in out for _, n in o)


@pytest.mark.parametrize("task_file", ["sql.py", "instruction_following.py", "bfcl.py"])
def test_prompt_encoding_is_trls(task_file, tmp_path):
    """eval's encoding (mrtpo_sdk.prompting) gives the ids TRL's GRPOTrainer samples after, on every bundled task."""
    task = load_task(ROOT / "tasks" / task_file)
    examples = task.load_examples("train")[:3]
    from mrtpo_sdk.policy import DefaultPolicyConfig, build_model, build_tokenizer
    from mrtpo_sdk.policy.for_task import policy_corpus

    texts, _ = policy_corpus(task, examples)
    tok = build_tokenizer(texts, vocab_size=400)
    model = build_model(tok, DefaultPolicyConfig(vocab_size=400, hidden_size=16, num_hidden_layers=1,
                                                 intermediate_size=32, num_attention_heads=2, num_key_value_heads=1))
    trainer = MRTPOTrainer(task, model, config(tmp_path, max_steps=1), examples=examples, processing_class=tok)
    prompts = [task.rollout_prompt(ex) for ex in examples]
    assert encode_prompts(tok, prompts) == [list(p) for p in trainer._tokenize_prompts(prompts)[0]]


def test_trainer_evaluates_at_start_and_end_and_logs_rows(tmp_path):
    task = load_task(FIXTURES / "letters_task.py")
    task_with_dev = Task(
        name="letters-dev",
        examples=lambda split: task.load_examples()[:6] if split == "train" else task.load_examples()[6:],
        prompt=task.prompt,
        verifiers=task.verifiers,
        metrics=lambda records: {"all_a": sum(r.rewards["has_a"] for r in records) / len(records)},
    )
    model, tok = tiny_policy(task)
    args = config(tmp_path, max_steps=3, eval_strategy="steps", eval_steps=2, eval_on_start=True,
                  eval_max_examples=2)
    trainer = MRTPOTrainer(task_with_dev, model, args, processing_class=tok)
    assert [e["id"] for e in trainer.eval_examples] == [e["id"] for e in task.load_examples()[6:8]]
    trainer.train()
    rows = read_metrics(Path(args.output_dir) / "metrics.jsonl")
    evals = [r for r in rows if "eval/all_rewards" in r]
    assert [r["step"] for r in evals] == [0, 2, 3]  # start, eval_steps, and after the last step
    for r in evals:
        assert 0.0 <= r["eval/all_a"] <= 1.0 and "eval/has_a" in r
        assert not any(k.startswith("rewards/") for k in r)  # eval rows never swallow the step's train metrics
    assert [r["step"] for r in rows if "rewards/has_a/mean" in r] == [1, 2, 3]
    report = trainer.last_eval_report
    assert report.num_examples == 2 and report.greedy
    returned = trainer.evaluate()  # Trainer's names too, for metric_for_best_model / EarlyStoppingCallback
    assert returned["eval_all_a"] == returned["eval/all_a"] == pytest.approx(report.metrics["all_a"])
    assert evals[-1]["eval/all_a"] == pytest.approx(report.metrics["all_a"])


def test_eval_strategy_without_a_held_out_split_is_an_error(tmp_path):
    task = load_task(FIXTURES / "letters_task.py")
    model, tok = tiny_policy(task)
    with pytest.raises(MRTPOError, match="declares no eval_split"):
        MRTPOTrainer(task, model, config(tmp_path, eval_strategy="steps", eval_steps=1), processing_class=tok)


def test_num_generations_eval_defaults_to_greedy(tmp_path):
    assert config(tmp_path).num_generations_eval == 1
    assert config(tmp_path, num_generations_eval=4).num_generations_eval == 4


@pytest.mark.slow
def test_train_saves_the_policy_and_eval_scores_it(tmp_path, capsys):
    run = tmp_path / "run"
    rc = main(["train", str(ROOT / "tasks" / "sql.py"), "--policy_preset", "tiny", "--max_steps", "2",
               "--output_dir", str(run), "--per_device_train_batch_size", "8"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "dev (dev, 42 examples, greedy), step 0 -> step 2:" in out
    assert re.search(r"^  execution_accuracy: \d\.\d{3} -> \d\.\d{3} \(headline\)$", out, re.M)
    assert "**" not in out
    info = json.loads((run / "run.json").read_text())
    assert info["finished"] and info["global_step"] == 2 and info["algo"] == "mrtpo"
    assert Path(info["initial_policy"]).name.startswith("sql-seed42-")  # compare's reuse check reads it
    # training semantics rewards; the official (Spider) execution accuracy is reported beside it
    assert info["headline_metrics"] == ["execution_accuracy", "execution_accuracy_official"]
    assert set(info["eval_before"]) >= {"sql_format", "executes", "result_match", "execution_accuracy",
                                        "execution_accuracy_official"}
    assert (run / "policy" / "config.json").is_file() and (run / "policy" / "tokenizer.json").is_file()
    rows = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in rows if "eval/execution_accuracy" in r] == [0, 1, 2]
    after = info["eval_after"]

    # the saved policy reloads with from_pretrained and scores the same greedy completions
    assert main(["eval", str(ROOT / "tasks" / "sql.py"), "--model", str(run)]) == 0
    capsys.readouterr()
    report = json.loads((run / "eval.json").read_text())
    assert report["num_examples"] == 42 and report["greedy"] and report["batch_size"] == info["args"]["per_device_eval_batch_size"]
    for key in ("sql_format", "executes", "result_match", "execution_accuracy", "all_rewards"):
        assert report["metrics"][key] == pytest.approx(after[key]), key
    # the numbers are the records' means
    recs = report["records"]
    assert report["metrics"]["executes"] == pytest.approx(sum(r["rewards"]["executes"] for r in recs) / len(recs))


def test_eval_command_errors(capsys, tmp_path):
    assert main(["eval", str(ROOT / "tasks" / "sql.py"), "--num_generations", "0"]) == 2
    assert "--num_generations must be >= 1" in capsys.readouterr().err
    assert main(["eval", str(ROOT / "tasks" / "sql.py"), "--model", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["eval", str(ROOT / "tasks" / "sql.py"), "--model", str(tmp_path / "empty")]) == 2
    assert "has no config.json" in capsys.readouterr().err
    assert main(["eval", str(FIXTURES / "letters_task.py")]) == 2
    assert "declares no eval_split" in capsys.readouterr().err


def test_evaluate_policy_requires_examples():
    task = split_task()
    with pytest.raises(MRTPOError, match="no examples"):
        evaluate_policy(task, None, None, [])


@pytest.mark.slow
@pytest.mark.parametrize(
    "flags, eval_steps",
    [
        (["--eval_strategy", "no"], []),  # off: no eval rows, no dev block
        (["--eval_steps", "2"], [0, 2, 3]),  # --eval_steps alone takes effect (TRL's default strategy is "no")
        (["--eval_on_start", "false", "--eval_steps", "5"], [3]),  # only after the last step
    ],
)
def test_train_eval_flags_take_effect(tmp_path, capsys, flags, eval_steps):
    run = tmp_path / "run"
    rc = main(["train", str(ROOT / "tasks" / "sql.py"), "--policy_preset", "tiny", "--max_steps", "3",
               "--per_device_train_batch_size", "8", "--output_dir", str(run), "--save_policy", "false", *flags])
    out = capsys.readouterr().out
    assert rc == 0, out
    rows = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in rows if "eval/execution_accuracy" in r] == eval_steps
    assert ("dev (dev, 42 examples, greedy)" in out) == (len(eval_steps) > 1)
    assert not (run / "policy").exists() and "policy:  not saved (--save_policy false)" in out


def test_a_saved_embedded_policy_reloads_with_the_tokenizer_it_was_trained_with(tmp_path):
    from mrtpo_sdk.policy import DefaultPolicyConfig, build_model, build_tokenizer
    from mrtpo_sdk.policy.pretrained import load_pretrained

    texts = ["SELECT count(*) FROM t WHERE x > 2000000 AND y = 12"] * 20 + ["plays 100000 and 2024"] * 20
    tok = build_tokenizer(texts, vocab_size=400)
    model = build_model(tok, DefaultPolicyConfig(vocab_size=400, hidden_size=16, num_hidden_layers=1,
                                                 intermediate_size=32, num_attention_heads=2, num_key_value_heads=1))
    run = tmp_path / "run"
    model.save_pretrained(run / "policy")
    tok.save_pretrained(run / "policy")
    _, loaded, path = load_pretrained(str(run))  # a run folder: its policy/
    assert path == str(run / "policy")
    for text in texts[:1] + texts[-1:]:
        assert loaded(text)["input_ids"] == tok(text)["input_ids"], text  # digit runs stay as trained
    assert loaded.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True) == \
        tok.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True)


def test_a_missing_relative_run_folder_is_not_a_hub_id(tmp_path, monkeypatch, capsys):
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["eval", str(ROOT / "tasks" / "sql.py"), "--model", "runs/sql-mrtpo"]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_max_steps_zero_is_one_line(capsys):
    assert main(["train", str(ROOT / "tasks" / "sql.py"), "--max_steps", "0", "--policy_preset", "tiny"]) == 2
    assert "error: --max_steps must be a positive number of steps (or -1 to train by --num_train_epochs), got 0" in (
        capsys.readouterr().err)


def test_sampled_evaluation_does_not_move_the_training_trajectory(tmp_path):
    task = load_task(FIXTURES / "letters_task.py")
    with_dev = Task(name="letters-dev", examples=lambda split: task.load_examples()[:6] if split == "train"
                    else task.load_examples()[6:], prompt=task.prompt, verifiers=task.verifiers)

    def run(name, **kw):
        model, tok = tiny_policy(task)
        args = config(tmp_path / name, max_steps=3, **kw)
        MRTPOTrainer(with_dev, model, args, processing_class=tok).train()
        rows = read_metrics(Path(args.output_dir) / "metrics.jsonl")
        return [(r["step"], r["loss"], r["rewards/has_a/mean"]) for r in rows if "loss" in r]

    plain = run("plain")
    evaluated = run("evaluated", eval_strategy="steps", eval_steps=1, eval_on_start=True, num_generations_eval=2)
    assert plain == evaluated and len(plain) == 3


def test_eval_generates_in_trains_eval_batch_size_unless_told(tmp_path, monkeypatch, capsys):
    """Greedy decoding of a small policy can change with the batch's padding: ``eval`` of a run folder defaults to
    the run's ``per_device_eval_batch_size`` (so it reproduces the dev numbers training printed), else train's."""
    import mrtpo_sdk.evaluation.core as core
    import mrtpo_sdk.policy.pretrained as pretrained

    seen = []

    def fake_evaluate(task, model, tokenizer, examples, **kw):
        seen.append(kw["batch_size"])
        raise MRTPOError("stop here")

    monkeypatch.setattr(pretrained, "load_pretrained", lambda path, device: (object(), _CHAT_TOKENIZER, "fake"))
    monkeypatch.setattr(core, "evaluate_policy", fake_evaluate)
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"args": {"per_device_eval_batch_size": 3}}))
    plain = tmp_path / "model"
    plain.mkdir()
    task = str(FIXTURES / "letters_task.py")
    for argv in (["--model", str(run)], ["--model", str(plain)], ["--model", str(run), "--batch_size", "5"]):
        assert main(["eval", task, "--split", "train", *argv]) == 2
        assert "stop here" in capsys.readouterr().err
    assert seen == [3, 8, 5]


SIZED_TASK = '''
from typing import Literal

from mrtpo_sdk import Result, Task, verifier


@verifier(kind="reference")
def has_a(example, completion):
    return Result(float("a" in completion), "The word apple is spelled with an a.")


def examples(split="train", data=None, size: Literal["small", "large"] = "small"):
    """Words.

    Args:
        size: how many words.
    """
    n = 2 if size == "small" else 4
    return [{"id": f"{data or 'bundled'}-{split}-{i}", "word": "apple"} for i in range(n)]


task = Task(name="sized", examples=examples, prompt=lambda ex: f"Spell {ex['word']}.", verifiers=[has_a],
            reference=lambda ex: ex["word"])
'''


@pytest.fixture
def run_of_sized(tmp_path, monkeypatch):
    """``(task file, run folder, seen)``: a run folder whose ``run.json`` says it trained task ``sized`` with
    ``-T size=large --data theirs``; ``eval`` stops at scoring, recording ``(option values, example ids)`` in
    ``seen``."""
    import mrtpo_sdk.evaluation.core as core
    import mrtpo_sdk.policy.pretrained as pretrained

    seen = []

    def fake_evaluate(task, model, tokenizer, examples, **kw):
        seen.append((task.option_values, [ex["id"] for ex in examples]))
        raise MRTPOError("stop here")

    monkeypatch.setattr(pretrained, "load_pretrained", lambda path, device: (object(), _CHAT_TOKENIZER, "fake"))
    monkeypatch.setattr(core, "evaluate_policy", fake_evaluate)
    task_file = tmp_path / "sized.py"
    task_file.write_text(SIZED_TASK)
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"task": "sized", "task_options": {"size": "large"}, "data": "theirs",
                                              "args": {}}))
    return str(task_file), run, seen


def test_eval_of_a_run_folder_uses_the_runs_task_options_and_data_and_says_so(run_of_sized, capsys):
    task_file, run, seen = run_of_sized
    assert main(["eval", task_file, "--model", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert seen == [({"size": "large"}, [f"theirs-dev-{i}" for i in range(4)])]
    assert err == [
        f"note: evaluating with the run's -T size=large, --data theirs (from {run / 'run.json'}; -T KEY=VALUE or "
        f"--data PATH overrides)",
        "error: stop here",
    ]


def test_eval_options_given_win_over_the_runs_with_a_note(run_of_sized, capsys):
    task_file, run, seen = run_of_sized
    assert main(["eval", task_file, "--model", str(run), "-T", "size=small", "--data", "mine"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert seen == [({"size": "small"}, ["mine-dev-0", "mine-dev-1"])]
    assert err == [
        f"note: this evaluation differs from the run's settings (-T size=small here, large in the run; --data mine "
        f"here, theirs in the run; {run / 'run.json'})",
        "error: stop here",
    ]
    assert main(["eval", task_file, "--model", str(run), "-T", "size=large"]) == 2  # as the run: no difference
    err = capsys.readouterr().err.strip().splitlines()
    assert seen[-1] == ({"size": "large"}, [f"theirs-dev-{i}" for i in range(4)])
    assert err[0].startswith("note: evaluating with the run's --data theirs (") and len(err) == 2


def test_eval_of_a_run_of_another_task_keeps_the_tasks_defaults(run_of_sized, capsys):
    task_file, run, seen = run_of_sized
    (run / "run.json").write_text(json.dumps({"task": "words", "task_options": {"size": "large"}, "data": "x"}))
    assert main(["eval", task_file, "--model", str(run)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == ["error: stop here"]
    assert seen == [({"size": "small"}, ["bundled-dev-0", "bundled-dev-1"])]
