"""Can the embedded architecture learn to copy? Trains a fresh model on "FILLER words + sequence -> sequence" pairs
and prints the held-out NLL of the sequence (nats per token; copying learned: well under 1).

    BASE_POLICY=~/.cache/mrtpo-sdk/policies/sql-seed42-... python benchmarks/reading_attempts/copy_test.py STEPS FILLER_WORDS LR LAYERS HIDDEN

See docs/results/credit_precision.md.
"""
import os, sys, random, re, dataclasses, time
from mrtpo_sdk.policy.default import load_policy, warm_start, build_model, DefaultPolicyConfig, completion_nll
_, tok = load_policy(os.environ["BASE_POLICY"])
steps=int(sys.argv[1]); L=int(sys.argv[2]); lr=float(sys.argv[3]); layers=int(sys.argv[4]); hidden=int(sys.argv[5])
rng=random.Random(0)
words=[w for w in tok.get_vocab() if w.startswith("Ġ") and w[1:].isalpha()][:800]
words=[tok.convert_tokens_to_string([w]) for w in words]
def seq(): return "".join(rng.choice(words) for _ in range(rng.randint(8,20))).strip()
filler=lambda: "".join(rng.choice(words) for _ in range(L))
def pair():
    s=seq(); return ([{"role":"user","content":filler()+"\n\n"+s}], s)
train=[pair() for _ in range(4000)]; test=[pair() for _ in range(64)]
cfg=DefaultPolicyConfig(sft_max_steps=steps, sft_learning_rate=lr, num_hidden_layers=layers, hidden_size=hidden, intermediate_size=2*hidden)
m=build_model(tok,cfg)
t=time.time(); warm_start(m,tok,train,cfg); print("time %.0f"%(time.time()-t), "test NLL %.3f"%completion_nll(m,tok,test))
