"""Reading-policy attempt "two1": stage 1, synthetic copy drills (a word sequence after a filler, target the
sequence); stage 2, the SQL warm start plus mutated drills. BASE_POLICY names a built SQL policy (for its tokenizer).

    BASE_POLICY=~/.cache/mrtpo-sdk/policies/sql-seed42-... python benchmarks/reading_attempts/two_stage.py 1500 MAXFILL RATE OUT_DIR

See docs/results/credit_precision.md.
"""
import os, sys, random, re, dataclasses, time
from mrtpo_sdk.loader import load_task
from mrtpo_sdk.policy.for_task import policy_corpus, _policy_config
from mrtpo_sdk.policy.default import load_policy, warm_start, build_model, completion_nll
s1, maxfill, rate, out = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
task = load_task("sql"); exs = task.load_examples("train")
_, tok = load_policy(os.environ["BASE_POLICY"])
cfg = _policy_config(task, 42, "small")
rng = random.Random(0)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|[^\sA-Za-z0-9_]")
texts, pairs = policy_corpus(task, exs, block_contexts=True)
refwords = [w for e in exs for w in WORD.findall(task.reference_completion(e))]
def drill():
    s = " ".join(rng.choice(refwords) for _ in range(rng.randint(6, 24)))
    f = " ".join(rng.choice(refwords) for _ in range(rng.randint(0, maxfill)))
    return ([{"role": "user", "content": (f + "\n\n" + s).strip()}], s)
m = build_model(tok, cfg)
t = time.time()
if s1:
    warm_start(m, tok, [drill() for _ in range(s1 * 8)], dataclasses.replace(cfg, sft_max_steps=s1, sft_learning_rate=1e-3))
    print("stage1 %.0fs copy NLL %.3f" % (time.time() - t, completion_nll(m, tok, [drill() for _ in range(64)])), flush=True)
def mutate(ref, ex):
    words = WORD.findall(ex.schema) + WORD.findall(ref)
    return re.sub(r"[A-Za-z_][A-Za-z0-9_]*|\d+", lambda mm: rng.choice(words) if rng.random() < rate else mm.group(), ref)
drills = []
if rate > 0:
    for ex in exs:
        ref = task.reference_completion(ex)
        blocks = ["" if r is None else r.block for r in task.score(ex, ref)]
        mref = mutate(ref, ex)
        drills.append((task.with_blocks(task.rollout_prompt(ex), [b.replace(ref, mref) for b in blocks]), mref))
warm_start(m, tok, pairs + drills, cfg)
print("total %.0fs" % (time.time() - t))
m.save_pretrained(out); tok.save_pretrained(out)
