"""The TRL drop-in: a plain GRPOTrainer script runs with MRTPOTrainer after changing only the import (and, to get
per-token credit, returning Results from its reward functions). Also datasets in, reward-function contracts."""

import logging
import textwrap

import pytest
import torch

from mrtpo_sdk import MRTPOError, Result, load_task
from mrtpo_sdk.reward_functions import RewardFunction, rows_with_ids, task_from_trl
from mrtpo_sdk.trainer import MRTPOConfig, MRTPOTrainer
from mrtpo_sdk.trainer.callbacks import read_metrics

from ..helpers import LETTERS, tiny_policy


# A plain TRL script: a local model folder, a datasets.Dataset with an extra column, two reward functions.
SCRIPT = '''
from datasets import Dataset
from trl import GRPOConfig
{import_line}

WORDS = ["apple", "river", "stone", "cloud", "green", "table", "light", "music"]
dataset = Dataset.from_list([{{"prompt": [{{"role": "user", "content": f"Spell the word {{w}}."}}], "word": w}}
                             for w in WORDS])

def even(completions, word, **kwargs):
    texts = [c[0]["content"] for c in completions]
    return [{reward_a} for t, w in zip(texts, word)]

def short(completions, **kwargs):
    return [float(len(c[0]["content"]) < 20) for c in completions]

args = GRPOConfig(output_dir=OUTPUT_DIR, max_steps=2, per_device_train_batch_size=8, num_generations=4,
                  max_completion_length=8, logging_steps=1, report_to="none", bf16=False, use_cpu=True,
                  save_strategy="no", disable_tqdm=True, seed=0)
trainer = GRPOTrainer(model=MODEL, reward_funcs=[even, short], args=args, train_dataset=dataset)
trainer.train()
RESULT = trainer
'''


def run_script(import_line, reward_a, model, output_dir):
    code = SCRIPT.format(import_line=import_line, reward_a=reward_a)
    scope = {"MODEL": str(model), "OUTPUT_DIR": str(output_dir)}
    exec(compile(code, "trl_script.py", "exec"), scope)
    return scope["RESULT"]


def test_a_trl_script_runs_with_grpo_trainer_and_with_mrtpo_trainer(tmp_path, local_model, caplog):
    grpo = run_script("from trl import GRPOTrainer", "float(len(t) % 2 == 0)", local_model, tmp_path / "grpo")
    assert grpo.state.global_step == 2
    # the same script, only the import changed: plain float rewards (no blocks) train, with a one-time warning
    with caplog.at_level(logging.WARNING, logger="mrtpo_sdk.reward_functions"):
        plain = run_script("from mrtpo_sdk import MRTPOTrainer as GRPOTrainer", "float(len(t) % 2 == 0)", local_model,
                           tmp_path / "plain")
    assert type(plain).__name__ == "MRTPOTrainer" and plain.state.global_step == 2 and plain.args.algo == "mrtpo"
    warned = [r.getMessage() for r in caplog.records if "without a block" in r.getMessage()]
    assert len(warned) == 2  # once per reward function, not once per batch
    rows = read_metrics(tmp_path / "plain" / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2]
    assert all(r["mrtpo/replayed_fraction"] == 0.0 for r in rows)  # no block: nothing replayed (= GDPO)
    # ... and returning Results puts the blocks in the replay
    blocks = run_script("from mrtpo_sdk import MRTPOTrainer as GRPOTrainer\nfrom mrtpo_sdk import Result",
                        "Result(float(len(t) % 2 == 0), f'The answer spells {w} in {len(w)} letters.')",
                        local_model, tmp_path / "blocks")
    rows = read_metrics(tmp_path / "blocks" / "metrics.jsonl")
    assert any(r["mrtpo/replayed_fraction"] > 0 for r in rows)
    assert {r["rewards/even/mean"] for r in rows} <= {i / 8 for i in range(9)}
    assert blocks.task.verifier_names == ["even", "short"]


def test_reward_function_gets_columns_and_trl_kwargs(tmp_path, local_model):
    seen = {}

    def spy(prompts, completions, completion_ids, word, trainer_state, **kwargs):
        seen.update(n=len(completions), words=list(word), step=trainer_state.global_step,
                    ids=len(completion_ids), prompt=prompts[0][0]["role"])
        return [Result(1.0 if w in c[0]["content"] else 0.0, f"The word is {w}.") for c, w in zip(completions, word)]

    rows = [{"prompt": [{"role": "user", "content": f"Say {w}."}], "word": w} for w in "ab cd ef gh ij kl mn op".split()]
    args = MRTPOConfig(output_dir=str(tmp_path / "o"), max_steps=1, per_device_train_batch_size=8, num_generations=4,
                       max_completion_length=6, report_to="none", bf16=False, use_cpu=True, disable_tqdm=True)
    MRTPOTrainer(model=str(local_model), reward_funcs=spy, args=args, train_dataset=rows).train()
    assert seen["n"] == 8 and seen["ids"] == 8 and seen["prompt"] == "user" and seen["step"] == 0
    assert len(set(seen["words"])) == 2 and all(seen["words"].count(w) == 4 for w in set(seen["words"]))


def test_task_form_and_trl_form_share_one_path(tmp_path):
    task = load_task(LETTERS)
    model, tok = tiny_policy(task)
    args = MRTPOConfig(output_dir=str(tmp_path / "t"), max_steps=1, per_device_train_batch_size=8,
                       num_generations=4, max_completion_length=6, report_to="none", bf16=False, use_cpu=True)
    by_task = MRTPOTrainer(task, model, args, processing_class=tok)
    assert by_task.task is task and isinstance(by_task.reward_funcs, list) and len(by_task.reward_funcs) == 3
    by_trl = MRTPOTrainer(model, [lambda completions, **kw: [0.0] * len(completions)], args,
                          [{"prompt": f"p{i}"} for i in range(8)], processing_class=tok)
    assert by_trl.task.verifier_names == ["reward_0"] and type(by_trl)._reward_function is MRTPOTrainer._reward_function


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"reward_funcs": ["some/reward-model"]}, "reward models are not supported"),
        ({"reward_funcs": [len], "train_dataset": [{"text": "x"}] * 8}, "row 0 has no 'prompt' column"),
        ({"reward_funcs": [len], "train_dataset": [{"prompt": "x", "id": 1}, {"prompt": "y", "id": 1}]},
         "rows 0 and 1 have the same id '1'"),
        ({"reward_funcs": [len], "tools": [len]}, "does not take tools="),
    ],
)
def test_trl_form_errors_are_one_line(tmp_path, kwargs, fragment):
    kwargs.setdefault("train_dataset", [{"prompt": f"p{i}"} for i in range(8)])
    args = MRTPOConfig(output_dir=str(tmp_path), report_to="none", bf16=False)
    with pytest.raises(MRTPOError, match=fragment.replace("(", r"\(")):
        MRTPOTrainer(model="unused", args=args, **kwargs)


def test_reward_function_contract():
    fn = RewardFunction(lambda completions, **kw: [1.0, None, Result(0.5, "b")], name="f")
    rows = [{"prompt": "p", "id": str(i)} for i in range(3)]
    out = fn.score_batch(rows, ["p"] * 3, ["a", "b", "c"], example_ids=["0", "1", "2"])
    assert out == [Result(1.0, ""), None, Result(0.5, "b")]
    wrong_length = RewardFunction(lambda completions, **kw: [1.0], name="g")
    with pytest.raises(MRTPOError, match="returned a list of 1; a reward function returns one value per completion"):
        wrong_length.score_batch(rows, ["p"] * 3, ["a", "b", "c"])
    single = RewardFunction(lambda prompts, completions, **kw: [float(c[0]["content"] == "yes") for c in completions])
    assert single.score({"prompt": [{"role": "user", "content": "q"}], "id": "x"}, "yes") == Result(1.0, "")


def test_rows_get_stable_ids():
    rows = [{"prompt": "a"}, {"prompt": "b"}]
    first, again = rows_with_ids(rows), rows_with_ids([dict(r) for r in rows])
    assert [r["id"] for r in first] == [r["id"] for r in again]
    assert first[0]["id"].startswith("0-") and first[1]["id"].startswith("1-") and first[0]["id"] != first[1]["id"]
    assert rows_with_ids([{"prompt": "a", "id": "x"}])[0]["id"] == "x"


def test_grpo_config_is_converted_keeping_the_users_settings(tmp_path):
    from trl import GRPOConfig

    trl_args = GRPOConfig(output_dir=str(tmp_path), report_to="none", bf16=False, learning_rate=1e-3,
                          num_generations=4, per_device_train_batch_size=8, reward_weights=[2.0])
    args = MRTPOConfig.from_grpo_config(trl_args)
    assert isinstance(args, MRTPOConfig) and args.learning_rate == 1e-3 and args.num_generations == 4
    assert args.algo == "mrtpo" and args.mrtpo_beta == 0.5 and args.multi_objective_aggregation == "normalize_then_sum"
    assert args.reward_weights == [2.0] and args.generation_batch_size == trl_args.generation_batch_size
    assert MRTPOConfig.from_grpo_config(trl_args, algo="grpo").multi_objective_aggregation == "sum_then_normalize"
    with pytest.raises(ValueError, match="scale_rewards='none' is not supported"):
        MRTPOConfig.from_grpo_config(GRPOConfig(output_dir=str(tmp_path), report_to="none", bf16=False,
                                                scale_rewards="none"))
