"""Reading-policy attempt "mut30": the SQL warm start plus one drill per example whose reference query has 30 % of
its words replaced (from the references' vocabulary) in both the block and the target: copying the block is the only
way to predict the mutated words.

    python benchmarks/reading_attempts/mutated_drills.py sql 1.0 STEPS 0.3 mut30

See docs/results/credit_precision.md.
"""
import sys, random, re
from pathlib import Path
from mrtpo_sdk.loader import load_task
from mrtpo_sdk.policy.for_task import policy_corpus, _policy_config
from mrtpo_sdk.policy.default import default_policy
taskname, frac, steps, rate, tag = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
task = load_task(taskname)
exs = task.load_examples("train")
config = _policy_config(task, 42, "small")
config.sft_max_steps = steps
texts, pairs = policy_corpus(task, exs, block_contexts=True)
rng = random.Random(0)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
vocab = sorted({w for e in exs for w in WORD.findall(task.reference_completion(e))})
def mutate(ref):
    return WORD.sub(lambda m: rng.choice(vocab) if rng.random() < rate else m.group(), ref)
drills = []
for ex in exs:
    if rng.random() >= frac: continue
    ref = task.reference_completion(ex)
    blocks = ["" if r is None else r.block for r in task.score(ex, ref)]
    if not any(ref in b for b in blocks): continue
    mref = mutate(ref)
    drills.append((task.with_blocks(task.rollout_prompt(ex), [b.replace(ref, mref) for b in blocks]), mref))
print("pairs", len(pairs), "drills", len(drills), "vocab", len(vocab)); print(drills[0])
m, t, path = default_policy(taskname + "-" + tag, texts, pairs + drills, config=config, cache_dir=Path("runs/reading_attempts"))
print("PATH", path)
