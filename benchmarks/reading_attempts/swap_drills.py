"""Reading-policy attempt "swap1": the SQL warm start plus P_all drills whose blocks and target come from another
example of the same database, so that only the block tells the right query.

    python benchmarks/reading_attempts/swap_drills.py sql 1.0 STEPS swap1 same

Writes the policy under runs/reading_attempts/; measure it with
``benchmarks/credit_concentration.py --task sql --model DIR`` and ``reference_nll.py DIR``.
See docs/results/credit_precision.md.
"""
import sys, random, json
from pathlib import Path
from mrtpo_sdk.loader import load_task
from mrtpo_sdk.policy.for_task import policy_corpus, _policy_config
from mrtpo_sdk.policy.default import default_policy
taskname, frac, steps, tag = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
same_group = len(sys.argv) > 5 and sys.argv[5] == "same"
task = load_task(taskname)
exs = task.load_examples("train")
config = _policy_config(task, 42, "small")
config.sft_max_steps = steps
texts, pairs = policy_corpus(task, exs, block_contexts=True)
rng = random.Random(0)
refkinds = [v.kind == "reference" for v in task.verifiers]
drills = []
for ex in exs:
    if rng.random() >= frac: continue
    pool = [e for e in exs if e is not ex and (not same_group or getattr(e, "db_id", None) == getattr(ex, "db_id", None))]
    ex2 = rng.choice(pool)
    ref2 = task.reference_completion(ex2)
    blocks = ["" if r is None else r.block for r in task.score(ex2, ref2)]
    drills.append((task.with_blocks(task.rollout_prompt(ex), blocks), ref2))
print("pairs", len(pairs), "drills", len(drills))
allpairs = pairs + drills
rng.shuffle(allpairs)
m, t, path = default_policy(taskname + "-" + tag, texts, allpairs, config=config, cache_dir=Path("runs/reading_attempts"))
print("PATH", path)
