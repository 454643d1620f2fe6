"""Fuzz run of the instruction-following checkers: >= 10,000 generated completions, every constraint type, both
semantics (strict), through :func:`mrtpo_sdk.instructions.check` with the example's echoes for ``training``.

OMP_NUM_THREADS=1 python benchmarks/ifeval_fuzz.py [N=10000] [SEED=0]

Completions: random soups of hostile pieces (NUL bytes, lone surrogates, fences, tags, brackets, ". " runs, digit
runs, CRLF), deep nesting, huge strings (1% of them 20-100 kB), and mutated reference completions of the bundled
splits. Prints time per completion (all 37 types x 2 semantics), the slowest single check, the worst case per
checker, and any raise or non-bool verdict (there must be none).
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "instructions"))
from if_kwargs_examples import EXAMPLE_KWARGS  # noqa: E402

from mrtpo_sdk.instructions import (  # noqa: E402
    check,
    compose_example,
    constraint_ids,
    echoes_of,
    load_examples_jsonl,
    reference_for,
)

PIECES = ["\x00", "\ud800", "\udfff", "```", "```json\n", "<<", ">>", "[", "]", "{", "}", '{"a":', "*", "***",
          "******", "- ", "\n", "\n\n", "\r\n", ". ", "P.S.", "Section 1", "SECTION 2", "1.", "9" * 60, ",", "\uff0c",
          "!", '"', "\u201c", "My answer is yes.", "<tag>", "</tag>", "(", ")", "İ", "ß", "😀", "\u2028", "\ufeff",
          " ", "river", "RIVER", "then", "Any other questions?", "don't", "well-known", "*x*", "[name]"]  # fmt: skip


def completions(n: int, seed: int, refs: list[str]):
    r = random.Random(seed)
    for i in range(n):
        kind = r.random()
        if kind < 0.01:  # huge
            size = r.choice([20_000, 50_000, 100_000])
            unit = "".join(r.choice(PIECES) for _ in range(r.randint(1, 6)))
            yield "huge", (unit * (size // len(unit) + 1))[:size]
        elif kind < 0.03:  # deep nesting
            d = r.randint(100, 5000)
            o, c = r.choice([("[", "]"), ('{"a":', "}"), ("(", ")"), ("<<", ">>"), ("```\n", "\n```")])
            yield "nesting", o * d + "x" + c * d
        elif kind < 0.45:  # mutated reference
            text = r.choice(refs)
            for _ in range(r.randint(0, 6)):
                j = r.randint(0, len(text))
                op = r.random()
                if op < 0.4:
                    text = text[:j] + r.choice(PIECES) + text[j:]
                elif op < 0.8:
                    text = text[:j] + text[j + r.randint(1, 30) :]
                else:
                    text = text[:j] * r.randint(1, 8) + text[j:]
            yield "mutated-reference", text[:100_000]
        else:  # soup
            yield "soup", "".join(
                r.choice(PIECES) if r.random() < 0.7 else chr(r.randint(0, 0x2FFF)) for _ in range(r.randint(0, 400))
            )


def main(n: int = 10_000, seed: int = 0) -> None:
    data = Path(__file__).parents[1] / "tasks" / "data" / "instruction_following"
    refs = [reference_for(ex) for split in ("train", "unseen") for ex in load_examples_jsonl(data / f"{split}.jsonl")]
    ids = constraint_ids()
    examples = {c: compose_example("fz", "Write a note about the river.", [(c, EXAMPLE_KWARGS[c])]) for c in ids}
    echoes = {c: echoes_of(ex) for c, ex in examples.items()}
    per_completion, kinds, errors = [], Counter(), []
    worst: dict[tuple[str, str], tuple[float, int, str]] = {}
    slowest = (0.0, "", "", 0, "")
    followed = Counter()
    start_all = time.perf_counter()
    for kind, text in completions(n, seed, refs):
        kinds[kind] += 1
        t0 = time.perf_counter()
        for cid in ids:
            for semantics in ("training", "official"):
                s = time.perf_counter()
                try:
                    v = check(cid, EXAMPLE_KWARGS[cid], text, semantics=semantics,
                              echoes=echoes[cid] if semantics == "training" else ())  # fmt: skip
                    if v not in (True, False):
                        errors.append((cid, semantics, f"non-bool {v!r}", len(text)))
                    followed[(cid, semantics)] += bool(v)
                except Exception as exc:  # noqa: BLE001 - the point is to count them
                    errors.append((cid, semantics, f"{type(exc).__name__}: {str(exc)[:80]}", len(text)))
                d = time.perf_counter() - s
                if d > worst.get((cid, semantics), (0.0,))[0]:
                    worst[(cid, semantics)] = (d, len(text), kind)
                if d > slowest[0]:
                    slowest = (d, cid, semantics, len(text), kind)
        per_completion.append(time.perf_counter() - t0)
    total = time.perf_counter() - start_all
    per_completion.sort()
    mean = sum(per_completion) / len(per_completion)
    print(f"completions: {len(per_completion)} ({dict(kinds)}); {len(ids)} types x 2 semantics each; {total:.1f} s")
    print(f"time per completion (all {2 * len(ids)} checks): mean {mean * 1e3:.2f} ms, "
          f"median {per_completion[len(per_completion) // 2] * 1e3:.2f} ms, "
          f"p99 {per_completion[int(len(per_completion) * 0.99)] * 1e3:.1f} ms, "
          f"max {per_completion[-1]:.2f} s")  # fmt: skip
    print(f"slowest single check: {slowest[0]:.3f} s ({slowest[1]}, {slowest[2]}, {slowest[3]} chars, {slowest[4]})")
    print(f"raises or non-bool verdicts: {len(errors)}")
    for e in errors[:20]:
        print("  ", e)
    print(f"{'worst case per checker':48} {'training':>22} {'official':>22}")
    for cid in ids:
        cells = []
        for semantics in ("training", "official"):
            d, length, kind = worst[(cid, semantics)]
            cells.append(f"{d * 1e3:8.1f} ms @{length:>6}")
        print(f"{cid:48} {cells[0]:>22} {cells[1]:>22}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
