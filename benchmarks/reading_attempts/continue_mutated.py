"""Reading-policy attempt "cont1": continue the warm start of a built SQL policy on its pairs plus mutated drills
(words drawn from the example's schema and reference), at a constant learning rate.

    python benchmarks/reading_attempts/continue_mutated.py BASE_DIR 600 1e-3 RATE DRILL_ROUNDS OUT_DIR

See docs/results/credit_precision.md.
"""
import sys, random, re, dataclasses
from pathlib import Path
from mrtpo_sdk.loader import load_task
from mrtpo_sdk.policy.for_task import policy_corpus, _policy_config
from mrtpo_sdk.policy.default import load_policy, warm_start
src, steps, lr, rate, ndrill, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
task = load_task("sql"); exs = task.load_examples("train")
model, tok = load_policy(src)
config = dataclasses.replace(_policy_config(task, 42, "small"), sft_max_steps=steps, sft_learning_rate=lr, sft_warmup_ratio=0.0)
texts, pairs = policy_corpus(task, exs, block_contexts=True)
rng = random.Random(0)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
def mutate(ref, ex):
    words = WORD.findall(ex.schema) + WORD.findall(ref)
    return WORD.sub(lambda m: rng.choice(words) if rng.random() < rate else m.group(), ref)
drills = []
for _ in range(int(ndrill)):
    for ex in exs:
        ref = task.reference_completion(ex)
        blocks = ["" if r is None else r.block for r in task.score(ex, ref)]
        mref = mutate(ref, ex)
        drills.append((task.with_blocks(task.rollout_prompt(ex), [b.replace(ref, mref) for b in blocks]), mref))
warm_start(model, tok, pairs + drills, config, log=print)
model.save_pretrained(out); tok.save_pretrained(out)
