"""The replay's cost side by side with the rest of a step (results in docs/performance.md).

One run measures, on the same model and the same random batch:

* ``naive``  - the straightforward replay: every context from token 0, 8 contexts per forward pass in arrival order
  padded to the longest of the batch, fp32 JS in 4,096-token chunks (no prefix sharing, no token budget);
* ``new``    - the default replay: prefix-shared (transformers' ``DynamicCache``), length-sorted, token-budgeted,
  JS chunk size from the memory budget;
* ``logp``   - the old-logp forward TRL runs on the rollouts (prompt + completion, no grad, per-token log-probs);
* ``update`` - the update's forward + backward on the same rollouts (per-token log-probs x advantages);

as times, as ratios ``replay / (logp + update)``, with peak extra memory of each replay, and ``max |q_new -
q_naive|``; for the two replays also CPU (process) time, robust to other work on a shared machine, split into
decoder passes and head + JS, and the load average before and after. The last output line is one JSON object
(``naive_s``, ``new_s``, ``logp_s``, ``update_s``, ``peak_extra_mib``, ``max_abs_q_diff``, ``naive_cpu_s``,
``new_cpu_s``, ...). On CUDA the CPU times are the host's only.

Shapes: with no arguments, on CUDA the anchor (Qwen2.5-0.5B-shaped, bf16, 8 prompts x 8 rollouts, prompt 256,
blocks 64, response 256, K = 3, 20 % of pairs replayed); on CPU the same proportions scaled down (hidden 256,
6 layers, vocabulary 8192, prompt 128, blocks 32, response 128, fp32), a few minutes on 2 cores. Lengths are random
around those values (prompts +-25 %, blocks 50-150 %, responses 25-100 % of the maximum), so padding matters.
Peak memory: on CUDA ``max_memory_allocated`` over the phase; on CPU each replay runs again in a fresh subprocess
and its peak RSS growth is reported.

    OMP_NUM_THREADS=1 python benchmarks/bench_replay.py
    python benchmarks/bench_replay.py --shape gpu --device cuda
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

SHAPES = {
    "gpu": dict(hidden=896, layers=24, heads=14, kv_heads=2, intermediate=4864, vocab=151936, prompts=8, rollouts=8,
                prompt_len=256, block_len=64, response_len=256, K=3, dtype="bfloat16"),
    "cpu": dict(hidden=256, layers=6, heads=4, kv_heads=2, intermediate=1024, vocab=8192, prompts=8, rollouts=8,
                prompt_len=128, block_len=32, response_len=128, K=3, dtype="float32"),
}


def _args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="auto", help="auto (cuda if available), cuda or cpu")
    p.add_argument("--shape", default="auto", choices=["auto", "gpu", "cpu"])
    for name in SHAPES["cpu"]:
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None,
                       type=str if name == "dtype" else int)
    p.add_argument("--replay-frac", type=float, default=0.2, help="fraction of response-reward pairs replayed")
    p.add_argument("--max-tokens", type=int, default=None, help="replay_max_tokens (default: the SDK's)")
    p.add_argument("--micro-batch", type=int, default=8, help="sequences per logp / update forward")
    p.add_argument("--repeats", type=int, default=3,
                   help="timed repetitions of each replay, alternating naive / new (the minimum is reported); "
                   "the logp and update phases run twice")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory subprocesses (CPU)")
    p.add_argument("--phase", choices=["naive", "new"], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    import torch

    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.shape == "auto":
        args.shape = "gpu" if args.device == "cuda" else "cpu"
    for name, value in SHAPES[args.shape].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def _setup(args):
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    from mrtpo_sdk import Result, Task, verifier

    torch.manual_seed(args.seed)
    dtype = getattr(torch, args.dtype)
    config = Qwen2Config(
        vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
        num_attention_heads=args.heads, num_key_value_heads=args.kv_heads, intermediate_size=args.intermediate,
        max_position_embeddings=4096, tie_word_embeddings=True, attn_implementation="sdpa",
    )
    model = AutoModelForCausalLM.from_config(config).to(device=args.device, dtype=dtype).eval()

    def make(name):
        @verifier(name=name)
        def v(example, completion):
            return Result(1.0, "")
        return v

    task = Task(name="bench", examples=[{"id": 0}], prompt=lambda ex: ex["prompt"],
                verifiers=[make(f"r{k}") for k in range(args.K)], block_separator=" ")
    g = torch.Generator().manual_seed(args.seed)

    def rand_ids(n):
        return " ".join(str(t) for t in torch.randint(1, args.vocab, (n,), generator=g).tolist())

    def rand_len(lo, hi):
        return int(torch.randint(max(1, lo), max(2, hi + 1), (1,), generator=g))

    examples, blocks, completions = [], [], []
    for i in range(args.prompts):
        p_len = rand_len(args.prompt_len * 3 // 4, args.prompt_len * 5 // 4)
        example = {"id": i, "prompt": rand_ids(p_len)}
        for _ in range(args.rollouts):
            examples.append(example)
            blocks.append([rand_ids(rand_len(args.block_len // 2, args.block_len * 3 // 2)) for _ in range(args.K)])
            completions.append(torch.randint(1, args.vocab, (rand_len(args.response_len // 4, args.response_len),),
                                             generator=g))
    B, T = len(completions), max(c.numel() for c in completions)
    ids = torch.zeros((B, T), dtype=torch.long)
    mask = torch.zeros((B, T), dtype=torch.long)
    for i, c in enumerate(completions):
        ids[i, : c.numel()] = c
        mask[i, : c.numel()] = 1
    replayed = torch.rand((B, args.K), generator=g) < args.replay_frac
    replayed[0, 0] = True
    return model, task, examples, blocks, ids.to(args.device), mask.to(args.device), replayed.to(args.device)


def _encode(prompts):
    return [[int(t) for t in p.split()] for p in prompts]


class _DecoderClock:
    """Wall and CPU seconds spent in the replay's decoder passes (``completion_hidden_states``); the rest of a
    replay is the head + JS."""

    def __init__(self):
        import mrtpo_sdk.replay.relevance as replay

        self.wall = self.cpu = 0.0
        inner = replay.completion_hidden_states

        def timed(*a, **k):
            w, c = time.perf_counter(), time.process_time()
            try:
                return inner(*a, **k)
            finally:
                self.wall += time.perf_counter() - w
                self.cpu += time.process_time() - c

        replay.completion_hidden_states = timed


def _replay(args, setup, variant):
    from mrtpo_sdk.replay import DEFAULT_REPLAY_MAX_TOKENS, replay_relevance

    model, task, examples, blocks, ids, mask, replayed = setup
    if variant == "naive":
        kw = dict(prefix_sharing=False, batch_size=8, chunk_size=4096)
    else:
        kw = dict(max_tokens=args.max_tokens or DEFAULT_REPLAY_MAX_TOKENS)
    return replay_relevance(model, task, examples, ids, mask, blocks, replayed, encode_prompts=_encode,
                            pad_token_id=0, temperature=args.temperature, **kw)


def _rollouts(args, setup):
    import torch

    model, task, examples, blocks, ids, mask, replayed = setup
    prompts = _encode([task.rollout_prompt(ex) for ex in examples])
    P = max(len(p) for p in prompts)
    B, T = ids.shape
    seq = torch.zeros((B, P + T), dtype=torch.long, device=ids.device)
    att = torch.zeros_like(seq)
    for i, p in enumerate(prompts):  # left-padded prompts, right-padded completions (as TRL)
        seq[i, P - len(p) : P] = torch.tensor(p, device=ids.device)
        att[i, P - len(p) : P] = 1
    seq[:, P:] = ids
    att[:, P:] = mask
    return seq, att, P


def _token_logps(model, seq, att, P):
    import torch

    logits = model(input_ids=seq, attention_mask=att).logits[:, P - 1 : -1].float()
    return torch.log_softmax(logits, dim=-1).gather(-1, seq[:, P:, None]).squeeze(-1)


def _logp(args, setup, rollouts):
    import torch

    model = setup[0]
    seq, att, P = rollouts
    with torch.no_grad():
        return [_token_logps(model, seq[s : s + args.micro_batch], att[s : s + args.micro_batch], P)
                for s in range(0, seq.size(0), args.micro_batch)]


def _update(args, setup, rollouts):
    model = setup[0]
    seq, att, P = rollouts
    model.train()
    try:
        for s in range(0, seq.size(0), args.micro_batch):
            lp = _token_logps(model, seq[s : s + args.micro_batch], att[s : s + args.micro_batch], P)
            loss = -(lp * att[s : s + args.micro_batch, P:]).sum() / att[:, P:].sum()
            loss.backward()
    finally:
        model.zero_grad(set_to_none=True)
        model.eval()


def _sync(args):
    import torch

    if args.device == "cuda":
        torch.cuda.synchronize()


def _time(args, fn, repeats):
    best, out = float("inf"), None
    for _ in range(repeats):
        _sync(args)
        start = time.perf_counter()
        out = fn()
        _sync(args)
        best = min(best, time.perf_counter() - start)
    return best, out


def _time_replay(args, setup, variant, clock, best):
    """One timed replay: wall and CPU (process) seconds, whole and decoder part; keeps each minimum in ``best``."""
    _sync(args)
    clock.wall = clock.cpu = 0.0
    wall, cpu = time.perf_counter(), time.process_time()
    out = _replay(args, setup, variant)
    _sync(args)
    got = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
           "decoder_wall": clock.wall, "decoder_cpu": clock.cpu}
    for name, value in got.items():
        best[name] = min(best.get(name, float("inf")), value)
    return out


def _cuda_peak(args, fn):
    import torch

    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - base) / 2**20


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _child(args) -> None:
    """Peak RSS growth of one replay in a fresh process (CPU): RSS sampled every millisecond by a thread, over its
    value just before the replay (after the model, the inputs and a small warm-up replay exist)."""
    import threading

    setup = _setup(args)
    _replay(args, _tiny(setup), args.phase)  # warm up kernels and the allocator on a small batch
    base = _rss_mib()
    peak, done = [base], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _rss_mib())
            time.sleep(0.001)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _replay(args, setup, args.phase)
    done.set()
    thread.join()
    print(json.dumps({"peak_mib": max(peak[0], _rss_mib()) - base}))


def _tiny(setup):
    model, task, examples, blocks, ids, mask, replayed = setup
    return model, task, examples[:2], blocks[:2], ids[:2, :8], mask[:2, :8], replayed[:2]


def main(argv=None) -> None:
    args = _args(argv)
    if args.phase:
        _child(args)
        return
    import torch

    setup = _setup(args)
    model, task, examples, blocks, ids, mask, replayed = setup
    n_params = sum(p.numel() for p in model.parameters())
    rollouts = _rollouts(args, setup)
    # warm-up (kernels, allocator, the one-time cache check)
    _replay(args, _tiny(setup), "naive")
    _replay(args, _tiny(setup), "new")
    # naive and new alternate, so that a load spike from other processes hits both; the minimum is kept. CPU time
    # (this process's, single-threaded with OMP_NUM_THREADS=1) is reported beside wall time: on a machine shared
    # with other work it moves much less than wall time does.
    load_before = os.getloadavg()
    clock = _DecoderClock()
    best_naive: dict[str, float] = {}
    best_new: dict[str, float] = {}
    for _ in range(args.repeats):
        q_naive = _time_replay(args, setup, "naive", clock, best_naive)
        q_new = _time_replay(args, setup, "new", clock, best_new)
    naive_s, new_s = best_naive["wall"], best_new["wall"]
    logp_s, _ = _time(args, lambda: _logp(args, setup, rollouts), 2)
    update_s, _ = _time(args, lambda: _update(args, setup, rollouts), 2)
    diff = float((q_new.q.double() - q_naive.q.double()).abs().max())
    peak = {}
    if args.device == "cuda":
        peak["naive"] = _cuda_peak(args, lambda: _replay(args, setup, "naive"))
        peak["new"] = _cuda_peak(args, lambda: _replay(args, setup, "new"))
    elif not args.no_memory:
        common = [sys.executable, os.path.abspath(__file__), "--device", args.device, "--shape", args.shape]
        for name in SHAPES["cpu"]:
            common += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
        common += ["--replay-frac", str(args.replay_frac), "--seed", str(args.seed),
                   "--temperature", str(args.temperature)]
        if args.max_tokens:
            common += ["--max-tokens", str(args.max_tokens)]
        for variant in ("naive", "new"):
            out = subprocess.run([*common, "--phase", variant], check=True, capture_output=True, text=True).stdout
            peak[variant] = json.loads(out.strip().splitlines()[-1])["peak_mib"]
    rest = logp_s + update_s
    machine = (torch.cuda.get_device_name() if args.device == "cuda" else platform.processor() or platform.machine())
    print(f"machine: {machine}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, threads={torch.get_num_threads()}")
    print(f"shape {args.shape}: Qwen2-style {n_params / 1e6:.1f}M params ({args.dtype}), hidden {args.hidden}, "
          f"{args.layers} layers, V {args.vocab}; {args.prompts} prompts x {args.rollouts} rollouts, prompt "
          f"~{args.prompt_len}, blocks ~{args.block_len}, response <= {args.response_len}, K = {args.K}")
    print(f"replayed pairs {q_new.num_replayed} / {replayed.numel()}, contexts {q_new.num_forward_contexts}; "
          f"decoder tokens naive {q_naive.num_forward_tokens}, new {q_new.num_forward_tokens} "
          f"(prefix shared: {q_new.prefix_shared}{'' if q_new.fallback is None else ', ' + q_new.fallback})")
    print(f"{'':24s}{'time s':>10s}{'/ (logp+update)':>17s}{'peak extra MiB':>16s}")
    for name, t, pk in (("naive replay", naive_s, peak.get("naive")), ("new replay", new_s, peak.get("new")),
                        ("old-logp forward", logp_s, None), ("update fwd+bwd", update_s, None)):
        ratio = f"{t / rest:17.3f}" if "replay" in name else f"{'':17s}"
        print(f"{name:24s}{t:10.3f}{ratio}{'' if pk is None else f'{pk:16.1f}'}")
    print(f"new / naive = {new_s / naive_s:.3f}; max |q_new - q_naive| = {diff:.2e}")
    cpu_ratio = best_new["cpu"] / best_naive["cpu"]
    print(f"CPU time (process): naive {best_naive['cpu']:.3f} s, new {best_new['cpu']:.3f} s, new / naive = "
          f"{cpu_ratio:.3f}")
    for name, best in (("naive", best_naive), ("new", best_new)):
        print(f"  {name:5s} decoder passes {best['decoder_wall']:.3f} s wall / {best['decoder_cpu']:.3f} s CPU; "
              f"head + JS and the rest {best['wall'] - best['decoder_wall']:.3f} s wall / "
              f"{best['cpu'] - best['decoder_cpu']:.3f} s CPU")
    load_after = os.getloadavg()
    print(f"load average (1, 5, 15 min): before {' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in load_after)}")
    print(json.dumps({
        "naive_s": round(naive_s, 4), "new_s": round(new_s, 4), "logp_s": round(logp_s, 4),
        "update_s": round(update_s, 4), "new_over_naive": round(new_s / naive_s, 4),
        "naive_ratio": round(naive_s / rest, 4), "new_ratio": round(new_s / rest, 4),
        "peak_extra_mib": peak.get("new"),
        "naive_peak_extra_mib": peak.get("naive"), "max_abs_q_diff": diff,
        "naive_tokens": q_naive.num_forward_tokens, "new_tokens": q_new.num_forward_tokens,
        "device": args.device, "shape": args.shape, "dtype": args.dtype,
        "naive_cpu_s": round(best_naive["cpu"], 4), "new_cpu_s": round(best_new["cpu"], 4),
        "new_over_naive_cpu": round(cpu_ratio, 4),
        "naive_decoder_cpu_s": round(best_naive["decoder_cpu"], 4),
        "new_decoder_cpu_s": round(best_new["decoder_cpu"], 4),
        "loadavg_before": [round(x, 2) for x in load_before], "loadavg_after": [round(x, 2) for x in load_after],
    }))


if __name__ == "__main__":
    main()
