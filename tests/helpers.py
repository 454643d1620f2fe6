"""Helpers shared by test files in several folders: the tiny embedded policy the trainer tests train, their
``MRTPOConfig``, the repository's paths, and a task file whose verifier raises in step 2.

Test files import them relatively (``from .helpers import config`` at the top level, ``from ..helpers import config``
one folder down); fixtures shared by every test (the run's cache, a tiny model folder) live in ``tests/conftest.py``.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent  # the repository: tasks/, docs/, mrtpo_sdk/
FIXTURES = TESTS / "fixtures"
LETTERS = str(FIXTURES / "letters_task.py")

# The one tiny embedded-policy configuration the trainer tests build their policy from
# (``DefaultPolicyConfig(**TINY_POLICY)``); tests that need other sizes (the replay's architecture sweep, the
# policy's own tests) keep theirs next to the test.
TINY_POLICY = dict(
    vocab_size=300, hidden_size=32, num_hidden_layers=1, intermediate_size=64, num_attention_heads=2,
    num_key_value_heads=1, seed=0,
)


def tiny_policy(task):
    """A tiny Qwen2 model and a tokenizer trained on ``task``'s prompts and references: ``(model, tokenizer)``."""
    from mrtpo_sdk.policy import DefaultPolicyConfig, build_model, build_tokenizer

    examples = task.load_examples()
    texts = [m["content"] for e in examples for m in task.rollout_prompt(e)] + [
        task.reference_completion(e) for e in examples
    ]
    tok = build_tokenizer(texts * 4, vocab_size=300)
    return build_model(tok, DefaultPolicyConfig(**TINY_POLICY)), tok


def config(tmp_path, algo="mrtpo", **kw):
    """An ``MRTPOConfig`` for a 3-step CPU run of a tiny policy in ``tmp_path / algo``; ``kw`` overrides fields."""
    from mrtpo_sdk.trainer import MRTPOConfig

    base = dict(
        output_dir=str(tmp_path / algo), algo=algo, max_steps=3, per_device_train_batch_size=8, num_generations=4,
        max_completion_length=12, logging_steps=1, report_to="none", save_strategy="no", bf16=False,
        disable_tqdm=True, beta_warmup_steps=2, seed=0, log_samples_steps=1, use_cpu=True,
    )
    base.update(kw)
    return MRTPOConfig(**base)


# The verifier `fragile` raises only from step 2 on (once step 1's metrics row is written), on the first completion it
# sees then; just before raising it writes that completion to SEEN, so the test knows which one triggered it.
FRAGILE_TASK = '''
from pathlib import Path

from mrtpo_sdk import Result, Task, verifier

OUT = Path({out!r})
SEEN = Path({seen!r})


@verifier(kind="reference")
def has_e(example, completion):
    return Result(float("e" in completion), "The answer contains an e.")


@verifier(kind="reference")
def fragile(example, completion):
    if (OUT / "metrics.jsonl").is_file() and (OUT / "metrics.jsonl").read_text().strip():
        SEEN.write_text(repr(completion))  # exactly, whatever characters it holds
        table = {{}}
        return Result(table[example["word"]], "")  # KeyError
    return Result(float("a" in completion), "The answer contains an a.")


task = Task(
    name="fragile",
    examples=[{{"id": f"ex-{{i}}", "word": w}}
              for i, w in enumerate(["apple", "river", "stone", "cloud", "grass", "flame", "ocean", "tiger"])],
    prompt=lambda ex: [{{"role": "user", "content": "Spell " + ex["word"]}}],
    verifiers=[has_e, fragile],
    reference=lambda ex: ex["word"],
)
'''
_LINES = FRAGILE_TASK.splitlines()
FRAGILE_DEF_LINE = _LINES.index("def fragile(example, completion):")  # 1-based: the @verifier line above it
FRAGILE_RAISE_LINE = next(i + 1 for i, t in enumerate(_LINES) if "# KeyError" in t)


def write_fragile(tmp_path: Path) -> tuple[Path, Path, Path]:
    out, seen = tmp_path / "run", tmp_path / "seen.txt"
    task_file = tmp_path / "fragile_task.py"
    task_file.write_text(FRAGILE_TASK.format(out=str(out), seen=str(seen)))
    lines = task_file.read_text().splitlines()
    assert lines[FRAGILE_DEF_LINE - 1] == '@verifier(kind="reference")'
    assert lines[FRAGILE_DEF_LINE].startswith("def fragile(")
    assert "table[example" in lines[FRAGILE_RAISE_LINE - 1]
    return task_file, out, seen


# `train` flags for a 3-step run of the tiny embedded policy that saves no policy.
TRAIN_FLAGS = ["--policy_preset", "tiny", "--max_steps", "3", "--per_device_train_batch_size", "8",
               "--save_policy", "false"]


def error_line(capsys) -> str:
    """The one ``error:`` line a command wrote to stderr (asserts there is exactly one)."""
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("error: ")]
    assert len(errors) == 1, err
    return errors[0]
