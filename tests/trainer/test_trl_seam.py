"""The TRL seam (mrtpo_sdk/trainer/trl_seam.py): the declared TRL internals match the installed TRL, by signature and
by behaviour on a tiny model, and a change is reported in one line naming the method and the TRL version."""

import math
import re
from collections import defaultdict

import pytest
import torch
import trl
from trl import GRPOTrainer

from mrtpo_sdk import Result, Task, load_task, verifier
from mrtpo_sdk.policy import DefaultPolicyConfig, build_model, build_tokenizer
from mrtpo_sdk.prompting import encode_prompts
from mrtpo_sdk.trainer import MRTPOConfig, MRTPOTrainer
from mrtpo_sdk.trainer.trl_seam import SEAM, Attribute, Method, SourceMarker, _signature_params, check_trl_seam

from ..helpers import FIXTURES, ROOT, TINY_POLICY

PACKAGE = ROOT / "mrtpo_sdk"
TINY = TINY_POLICY  # tests/helpers.py
PREFIX = f"trl {trl.__version__}: "


# ---------------------------------------------------------------------------------------------- the declared list
def test_seam_matches_installed_trl():
    assert check_trl_seam() == []


def test_overrides_have_the_declared_parameters():
    """Each TRL method MRTPOTrainer overrides takes the parameters the seam declares (and forwards to super())."""
    overridden = [m for m in SEAM if isinstance(m, Method) and m.owner == "GRPOTrainer" and m.exact
                  and m.name in vars(MRTPOTrainer)]
    assert {m.name for m in overridden} >= {"_generate_and_score_completions", "_calculate_rewards", "_generate"}
    for m in overridden:
        assert _signature_params(vars(MRTPOTrainer)[m.name]) == list(m.params), m.name


def _trl_private_names() -> set[str]:
    """Private names GRPOTrainer defines (``def _x`` or ``self._x =``) in the installed TRL."""
    import inspect

    source = inspect.getsource(inspect.getmodule(GRPOTrainer))
    return set(re.findall(r"def (_[a-z]\w*)\(", source)) | set(re.findall(r"self\.(_[a-z]\w*)\s*[:=]", source))


def test_every_trl_private_name_we_use_is_declared():
    """A new use of a TRL private method/attribute in the SDK must be added to SEAM (so the check covers it)."""
    declared = {item.name for item in SEAM if isinstance(item, (Method, Attribute))}
    declared |= {item.where.split(".", 1)[1] for item in SEAM if isinstance(item, SourceMarker) and "." in item.where
                 and not item.where.startswith("module:")}
    ours = set()
    for path in PACKAGE.rglob("*.py"):
        if "lint" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        ours |= set(re.findall(r"(?:self|trainer|super\(\))\.(_[a-z]\w*)", text))
    used = ours & _trl_private_names()
    # names that are ours although TRL also has them: none (a collision would shadow TRL's)
    assert used - declared == set(), f"TRL private names used but not in trl_seam.SEAM: {sorted(used - declared)}"


# ------------------------------------------------------------------------------------------- the one-line reports
def test_a_changed_signature_is_one_line_naming_method_and_version(monkeypatch):
    def _calculate_rewards(self, inputs, prompts, completions):  # a future TRL dropping completion_ids_list
        return None

    monkeypatch.setattr(GRPOTrainer, "_calculate_rewards", _calculate_rewards)
    problems = check_trl_seam()
    changed = [p for p in problems if "._calculate_rewards(" in p and "changed: parameters" in p]
    assert len(changed) == 1, problems
    line = changed[0]
    assert "\n" not in line
    assert line.startswith(
        PREFIX + "GRPOTrainer._calculate_rewards(inputs, prompts, completions, completion_ids_list) changed: "
        "parameters are now (inputs, prompts, completions) (used by MRTPOTrainer._calculate_rewards"
    ), line


def test_a_missing_method_attribute_or_behaviour_is_reported(monkeypatch):
    monkeypatch.delattr(GRPOTrainer, "_tokenize_prompts")

    def _compute_loss(self, model, inputs):
        advantages = inputs["advantages"].unsqueeze(1)  # a future TRL that only takes (B,) advantages
        return advantages.sum()

    monkeypatch.setattr(GRPOTrainer, "_compute_loss", _compute_loss)

    def __init__(self, model, reward_funcs, args=None, train_dataset=None, eval_dataset=None, processing_class=None,
                 callbacks=None, optimizers=(None, None), quantization_config=None, peft_config=None):
        self._tokenizer = processing_class  # _metrics is never set
        self.reward_weights = self.num_generations = self.num_generations_eval = None
        self.temperature = self.top_p = self.max_completion_length = None

    monkeypatch.setattr(GRPOTrainer, "__init__", __init__)
    problems = check_trl_seam()
    assert all(p.startswith(PREFIX) and "\n" not in p for p in problems), problems
    assert PREFIX + "GRPOTrainer._tokenize_prompts(prompts) is gone (used by MRTPOTrainer.evaluate" in "\n".join(problems)
    assert any(p.startswith(PREFIX + "GRPOTrainer._compute_loss changed: it no longer accepts (B, T) advantages")
               for p in problems), problems
    assert any(p.startswith(PREFIX + "GRPOTrainer._metrics is no longer set in GRPOTrainer.__init__") for p in problems)
    assert len(problems) == 3, problems


def test_a_removed_keyword_of_the_constructor_is_reported(monkeypatch):
    def __init__(self, model, reward_funcs, args=None, train_dataset=None, processing_class=None, callbacks=None):
        self._metrics = self._tokenizer = self.reward_weights = self.num_generations = None
        self.num_generations_eval = self.temperature = self.top_p = self.max_completion_length = None

    monkeypatch.setattr(GRPOTrainer, "__init__", __init__)
    assert check_trl_seam() == [
        PREFIX + "GRPOTrainer.__init__(model, reward_funcs, args, train_dataset, eval_dataset, processing_class, "
        "callbacks, optimizers, quantization_config, peft_config) changed: no longer accepts eval_dataset, "
        "optimizers, quantization_config, peft_config; parameters are now (model, "
        "reward_funcs, args, train_dataset, processing_class, callbacks) (used by MRTPOTrainer.__init__ "
        "(super().__init__ with these keywords))"
    ]


# -------------------------------------------------------------------------------- return shapes, on a tiny model
@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    base = load_task(FIXTURES / "letters_task.py")

    @verifier
    def never(example, completion):
        return None

    @verifier
    def has_e(example, completion):
        return None if example["id"].endswith(("0", "1")) else Result(float("e" in completion), "e")

    task = Task(name="seam", examples=base.examples, prompt=base.prompt, verifiers=[never, has_e])
    examples = task.load_examples()
    texts = [m["content"] for e in examples for m in task.rollout_prompt(e)] + [
        base.reference_completion(e) for e in examples
    ]
    tok = build_tokenizer(texts * 4, vocab_size=300)
    model = build_model(tok, DefaultPolicyConfig(**TINY))
    args = MRTPOConfig(
        output_dir=str(tmp_path_factory.mktemp("seam")), max_steps=1, per_device_train_batch_size=8,
        num_generations=4, max_completion_length=6, logging_steps=1, report_to="none", save_strategy="no",
        bf16=False, disable_tqdm=True, seed=0, log_samples_steps=0, plot_rewards=False, use_cpu=True,
    )
    t = MRTPOTrainer(task, model, args, processing_class=tok)
    t.model.train()
    return t


def _inputs(trainer, n_prompts=2):
    rows = [trainer.train_dataset[i] for i in range(n_prompts)]
    return [dict(row) for row in rows for _ in range(trainer.num_generations)]


def test_metrics_is_a_dict_of_mode_to_defaultdict_list(trainer):
    assert set(trainer._metrics) == {"train", "eval"}
    for mode in ("train", "eval"):
        assert isinstance(trainer._metrics[mode], defaultdict)
        assert trainer._metrics[mode].default_factory is list


def test_log_averages_metrics_skipping_nan_and_clears_them(trainer):
    trainer._metrics["train"]["seam/probe"].extend([1.0, math.nan, 3.0])
    trainer.log({})
    assert trainer.state.log_history[-1]["seam/probe"] == 2.0
    assert "seam/probe" not in trainer._metrics["train"]


def test_tokenizer_attribute_is_the_processing_class(trainer):
    assert trainer._tokenizer is trainer.processing_class
    assert isinstance(trainer._tokenizer.pad_token_id, int)


def test_tokenize_prompts_gives_the_chat_templated_ids(trainer):
    prompts = [trainer.train_dataset[i]["prompt"] for i in range(3)]
    ids = trainer._tokenize_prompts(prompts)[0]
    assert [list(p) for p in ids] == encode_prompts(trainer.processing_class, prompts)
    assert all(isinstance(t, int) for p in ids for t in p)


def test_trl_attributes_we_read(trainer):
    assert trainer.num_generations == 4 and trainer.num_generations_eval == 1
    assert trainer.temperature == trainer.args.temperature and trainer.top_p == trainer.args.top_p
    assert trainer.max_completion_length == 6
    assert isinstance(trainer.reward_weights, torch.Tensor) and trainer.reward_weights.shape == (2,)
    assert trainer.args.generation_batch_size == 8 and trainer.args.steps_per_generation == 1


def test_calculate_rewards_is_n_by_k_float_with_nan_for_none(trainer):
    inputs = _inputs(trainer)
    prompts = [x["prompt"] for x in inputs]
    completions = [[{"role": "assistant", "content": text}] for text in ["e", "x", "ee", "a"] * 2]
    ids = [[5, 6]] * len(inputs)
    rewards = GRPOTrainer._calculate_rewards(trainer, inputs, prompts, completions, ids)
    assert isinstance(rewards, torch.Tensor) and rewards.dtype == torch.float32
    assert rewards.shape == (len(inputs), 2)
    assert torch.isnan(rewards[:, 0]).all()  # `never` returned None everywhere
    e_rows = [i for i, x in enumerate(inputs) if not x["example_id"].endswith(("0", "1"))]
    for i in range(len(inputs)):
        if i in e_rows:
            assert rewards[i, 1].item() == float("e" in completions[i][0]["content"])
        else:
            assert torch.isnan(rewards[i, 1])


def test_generate_returns_prompt_and_completion_ids_first(trainer):
    inputs = _inputs(trainer)
    prompts = [x["prompt"] for x in inputs]
    out = GRPOTrainer._generate(trainer, prompts)
    assert isinstance(out, tuple)
    prompt_ids, completion_ids = out[0], out[1]
    assert [list(p) for p in prompt_ids] == [list(p) for p in trainer._tokenize_prompts(prompts)[0]]
    assert len(completion_ids) == len(prompts)
    assert all(1 <= len(c) <= trainer.max_completion_length for c in completion_ids)
    # the override passes it through unchanged
    torch.manual_seed(0)
    a = MRTPOTrainer._generate(trainer, prompts)
    torch.manual_seed(0)
    b = GRPOTrainer._generate(trainer, prompts)
    assert len(a) == len(b) and [list(c) for c in a[1]] == [list(c) for c in b[1]]


def test_generate_and_score_completions_output_and_loss_accepts_token_advantages(trainer):
    inputs = _inputs(trainer)
    output = GRPOTrainer._generate_and_score_completions(trainer, inputs)
    ids, mask = output["completion_ids"], output["completion_mask"]
    assert ids.dim() == 2 and mask.shape == ids.shape and ids.shape[0] == len(inputs)
    assert output["advantages"].shape == (len(inputs),)  # TRL's own, replaced by ours
    assert trainer._pending["rewards"].shape == (len(inputs), 2)  # our _calculate_rewards override was called
    # TRL's loss takes (B, T) advantages as they are (MRTPO)
    output["advantages"] = torch.randn(mask.shape) * mask
    trainer.current_gradient_accumulation_steps = 1  # Trainer sets it inside its training loop
    loss = trainer.compute_loss(trainer.model, output)
    assert loss.dim() == 0 and torch.isfinite(loss)
