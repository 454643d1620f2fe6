"""Peak memory and time of chunked vs unchunked full-vocabulary JS distance (spec §4).

Each variant runs in a fresh subprocess; peak memory is the growth of the process's peak RSS over its baseline
after the inputs and the LM head exist (so it measures the JS computation itself, CPU). Not part of the tests.

    python benchmarks/bench_js.py                    # B=8 T=512 V=32000 H=256, chunk 256
    python benchmarks/bench_js.py --V 8000 --chunk-size 64
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _child(args: argparse.Namespace) -> None:
    import torch

    from mrtpo_sdk.algorithms import chunked_js_distance, js_distance_from_logits

    torch.manual_seed(0)
    b, t, v, h = args.B, args.T, args.V, args.H
    hp = torch.randn(b, t, h)
    hm = hp + 0.1 * torch.randn(b, t, h)
    mask = torch.ones(b, t, dtype=torch.bool)
    mask[: b // 2, t * 3 // 4:] = False  # some padding
    head = torch.nn.Linear(h, v, bias=False)
    with torch.no_grad():
        head(hp[0, :4])  # warm up kernels / allocator
    base = _peak_rss_mib()
    start = time.perf_counter()
    with torch.no_grad():
        if args.variant == "unchunked":
            q = js_distance_from_logits(head(hp), head(hm)) * mask
        else:
            q = chunked_js_distance(hp, hm, mask, head, chunk_size=args.chunk_size)
    elapsed = time.perf_counter() - start
    print(json.dumps({"time_s": elapsed, "peak_mib": _peak_rss_mib() - base, "checksum": float(q.double().sum())}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--B", type=int, default=8)
    p.add_argument("--T", type=int, default=512)
    p.add_argument("--V", type=int, default=32000)
    p.add_argument("--H", type=int, default=256)
    p.add_argument("--chunk-size", type=int, default=256)
    p.add_argument("--variant", choices=["chunked", "unchunked"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.variant:
        _child(args)
        return
    common = ["--B", str(args.B), "--T", str(args.T), "--V", str(args.V), "--H", str(args.H),
              "--chunk-size", str(args.chunk_size)]
    res = {}
    for variant in ("unchunked", "chunked"):
        out = subprocess.run([sys.executable, __file__, "--variant", variant, *common], check=True,
                             capture_output=True, text=True).stdout
        res[variant] = json.loads(out.strip().splitlines()[-1])
    u, c = res["unchunked"], res["chunked"]
    full_logits_mib = args.B * args.T * args.V * 4 / 2**20
    print(f"B={args.B} T={args.T} V={args.V} H={args.H} chunk_size={args.chunk_size} "
          f"(one float32 (B,T,V) logits tensor = {full_logits_mib:.0f} MiB)")
    print(f"{'':12s}{'unchunked':>12s}{'chunked':>12s}{'ratio u/c':>12s}")
    print(f"{'peak MiB':12s}{u['peak_mib']:12.1f}{c['peak_mib']:12.1f}{u['peak_mib'] / max(c['peak_mib'], 1e-9):12.1f}")
    print(f"{'time s':12s}{u['time_s']:12.2f}{c['time_s']:12.2f}{u['time_s'] / max(c['time_s'], 1e-9):12.2f}")
    print(f"checksum difference: {abs(u['checksum'] - c['checksum']):.3e}")


if __name__ == "__main__":
    main()
