"""How much a SQL policy reads its blocks: the NLL (nats per token) of the reference query given the bare prompt
P_0 and given P_all, whose result_match block quotes that query, on 40 train and 40 dev examples.

    python benchmarks/reading_attempts/reference_nll.py POLICY_DIR

See docs/results/credit_precision.md.
"""
import sys, torch
from mrtpo_sdk.loader import load_task
from mrtpo_sdk.policy.default import load_policy, completion_nll
task = load_task("sql")
model, tok = load_policy(sys.argv[1])
for split in ["train", "dev"]:
    exs = task.load_examples(split)[:40]
    p0 = [(task.rollout_prompt(e), task.reference_completion(e)) for e in exs]
    pall = []
    for e in exs:
        ref = task.reference_completion(e)
        blocks = ["" if r is None else r.block for r in task.score(e, ref)]
        pall.append((task.with_blocks(task.rollout_prompt(e), blocks), ref))
    print(split, "NLL P0 %.3f  Pall %.3f" % (completion_nll(model, tok, p0), completion_nll(model, tok, pall)))
