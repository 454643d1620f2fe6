"""Benchmark the embedded default policy build (tokenizer, model, SFT warm start) and generation.

    python benchmarks/bench_policy.py [--n 200] [--seed 0] [--vocab-size 1024] [--keep-cache]

Builds the default policy for N synthetic text-to-SQL examples of realistic prompt length in a
temporary cache dir and prints: tokenizer / model / SFT time, SFT loss first/last, completion
NLL before/after, and the time of one ``model.generate`` of 8 samples x 96 new tokens (for sizing
the RL loop), plus a sample greedy generation.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SYSTEM = "You translate questions into SQLite queries."
INSTRUCTION = "Write your reasoning briefly, then give exactly one SQLite query in a ```sql code block."

DATABASES = {
    "college": [
        "CREATE TABLE student (id INTEGER PRIMARY KEY, name TEXT, major TEXT, gpa REAL, year INTEGER, email TEXT, hometown TEXT, advisor_id INTEGER, FOREIGN KEY(advisor_id) REFERENCES professor(id));",
        "CREATE TABLE course (id INTEGER PRIMARY KEY, title TEXT, department TEXT, credits INTEGER, level INTEGER, max_enrollment INTEGER);",
        "CREATE TABLE enrollment (student_id INTEGER, course_id INTEGER, grade TEXT, semester TEXT, FOREIGN KEY(student_id) REFERENCES student(id), FOREIGN KEY(course_id) REFERENCES course(id));",
        "CREATE TABLE professor (id INTEGER PRIMARY KEY, name TEXT, department TEXT, salary REAL, hired_year INTEGER, office TEXT);",
        "CREATE TABLE department (name TEXT PRIMARY KEY, building TEXT, budget REAL, chair_id INTEGER, FOREIGN KEY(chair_id) REFERENCES professor(id));",
    ],
    "store": [
        "CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, city TEXT, country TEXT, signup_date TEXT, loyalty_points INTEGER);",
        "CREATE TABLE product (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL, stock INTEGER, supplier_id INTEGER, FOREIGN KEY(supplier_id) REFERENCES supplier(id));",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, order_date TEXT, status TEXT, shipping_cost REAL, FOREIGN KEY(customer_id) REFERENCES customer(id));",
        "CREATE TABLE order_item (order_id INTEGER, product_id INTEGER, quantity INTEGER, unit_price REAL, FOREIGN KEY(order_id) REFERENCES orders(id), FOREIGN KEY(product_id) REFERENCES product(id));",
        "CREATE TABLE supplier (id INTEGER PRIMARY KEY, name TEXT, country TEXT, rating INTEGER);",
    ],
    "flights": [
        "CREATE TABLE airport (code TEXT PRIMARY KEY, name TEXT, city TEXT, country TEXT, elevation INTEGER, runways INTEGER);",
        "CREATE TABLE airline (id INTEGER PRIMARY KEY, name TEXT, country TEXT, founded INTEGER, fleet_size INTEGER);",
        "CREATE TABLE flight (id INTEGER PRIMARY KEY, airline_id INTEGER, origin TEXT, destination TEXT, distance INTEGER, duration_min INTEGER, departure_time TEXT, FOREIGN KEY(airline_id) REFERENCES airline(id), FOREIGN KEY(origin) REFERENCES airport(code), FOREIGN KEY(destination) REFERENCES airport(code));",
        "CREATE TABLE passenger (id INTEGER PRIMARY KEY, name TEXT, nationality TEXT, birth_year INTEGER);",
        "CREATE TABLE booking (passenger_id INTEGER, flight_id INTEGER, seat TEXT, fare REAL, FOREIGN KEY(passenger_id) REFERENCES passenger(id), FOREIGN KEY(flight_id) REFERENCES flight(id));",
    ],
    "hospital": [
        "CREATE TABLE patient (id INTEGER PRIMARY KEY, name TEXT, birth_year INTEGER, sex TEXT, city TEXT, insurance TEXT);",
        "CREATE TABLE doctor (id INTEGER PRIMARY KEY, name TEXT, specialty TEXT, years_experience INTEGER, ward_id INTEGER, FOREIGN KEY(ward_id) REFERENCES ward(id));",
        "CREATE TABLE visit (id INTEGER PRIMARY KEY, patient_id INTEGER, doctor_id INTEGER, visit_date TEXT, diagnosis TEXT, cost REAL, FOREIGN KEY(patient_id) REFERENCES patient(id), FOREIGN KEY(doctor_id) REFERENCES doctor(id));",
        "CREATE TABLE prescription (visit_id INTEGER, drug TEXT, dosage_mg INTEGER, days INTEGER, FOREIGN KEY(visit_id) REFERENCES visit(id));",
        "CREATE TABLE ward (id INTEGER PRIMARY KEY, name TEXT, floor INTEGER, beds INTEGER);",
    ],
}

# Per-database fillers for the generic templates, plus one join (child -> parent) per database.
FILLERS = {
    "college": {
        "table": "student",
        "text_col": "major",
        "vals": ["physics", "history", "biology", "art"],
        "num_col": "gpa",
        "nums": ["3.0", "3.5", "2.5"],
        "name_col": "name",
        "child": "student",
        "parent": "professor",
        "fk": "advisor_id",
        "pk": "id",
        "ptext": "department",
        "pvals": ["Physics", "Chemistry", "Mathematics"],
        "cname": "name",
        "pname": "name",
    },
    "store": {
        "table": "product",
        "text_col": "category",
        "vals": ["books", "toys", "garden", "music"],
        "num_col": "price",
        "nums": ["10", "25", "100"],
        "name_col": "name",
        "child": "product",
        "parent": "supplier",
        "fk": "supplier_id",
        "pk": "id",
        "ptext": "country",
        "pvals": ["Germany", "China", "Mexico"],
        "cname": "name",
        "pname": "name",
    },
    "flights": {
        "table": "airport",
        "text_col": "country",
        "vals": ["France", "Japan", "Brazil", "Canada"],
        "num_col": "elevation",
        "nums": ["100", "500", "1000"],
        "name_col": "name",
        "child": "flight",
        "parent": "airline",
        "fk": "airline_id",
        "pk": "id",
        "ptext": "country",
        "pvals": ["Spain", "India", "Kenya"],
        "cname": "id",
        "pname": "name",
    },
    "hospital": {
        "table": "doctor",
        "text_col": "specialty",
        "vals": ["cardiology", "neurology", "pediatrics", "oncology"],
        "num_col": "years_experience",
        "nums": ["5", "10", "20"],
        "name_col": "name",
        "child": "doctor",
        "parent": "ward",
        "fk": "ward_id",
        "pk": "id",
        "ptext": "name",
        "pvals": ["East", "North", "Maternity"],
        "cname": "name",
        "pname": "name",
    },
}

TEMPLATES = [
    ("How many {table}s have {text_col} {val}?", "SELECT count(*) FROM {table} WHERE {text_col} = '{val}'"),
    (
        "List the {name_col} of every {table} whose {text_col} is {val}.",
        "SELECT {name_col} FROM {table} WHERE {text_col} = '{val}'",
    ),
    (
        "What is the average {num_col} of {table}s with {text_col} {val}?",
        "SELECT avg({num_col}) FROM {table} WHERE {text_col} = '{val}'",
    ),
    (
        "Which {table}s have a {num_col} greater than {num}? Give their {name_col}.",
        "SELECT {name_col} FROM {table} WHERE {num_col} > {num}",
    ),
    ("What is the highest {num_col} among all {table}s?", "SELECT max({num_col}) FROM {table}"),
    (
        "How many {table}s are there for each {text_col}? Sort by the count, largest first.",
        "SELECT {text_col}, count(*) AS n FROM {table} GROUP BY {text_col} ORDER BY n DESC",
    ),
    (
        "Show the {name_col} of the {table} with the lowest {num_col}.",
        "SELECT {name_col} FROM {table} ORDER BY {num_col} ASC LIMIT 1",
    ),
    ("List all distinct values of {text_col} in the {table} table.", "SELECT DISTINCT {text_col} FROM {table}"),
    (
        "For each {text_col} with more than 2 {table}s, what is the average {num_col}?",
        "SELECT {text_col}, avg({num_col}) FROM {table} GROUP BY {text_col} HAVING count(*) > 2",
    ),
    (
        "List the {cname} of each {child} together with the {pname} of its {parent}, for {parent}s whose {ptext} is {pval}.",
        "SELECT T1.{cname}, T2.{pname} FROM {child} AS T1 JOIN {parent} AS T2 ON T1.{fk} = T2.{pk} WHERE T2.{ptext} = '{pval}'",
    ),
    (
        "How many {child}s belong to a {parent} with {ptext} {pval}?",
        "SELECT count(*) FROM {child} AS T1 JOIN {parent} AS T2 ON T1.{fk} = T2.{pk} WHERE T2.{ptext} = '{pval}'",
    ),
]


def synthetic_sql_examples(n: int, seed: int = 0) -> list[tuple[list[dict], str]]:
    rng = random.Random(seed)
    out = []
    dbs = sorted(DATABASES)
    for i in range(n):
        db = dbs[i % len(dbs)]
        f = FILLERS[db]
        q_t, sql_t = TEMPLATES[rng.randrange(len(TEMPLATES))]
        fill = {k: v for k, v in f.items() if not isinstance(v, list)}
        fill.update(val=rng.choice(f["vals"]), num=rng.choice(f["nums"]), pval=rng.choice(f["pvals"]))
        schema = "\n".join(DATABASES[db])
        user = f"Database schema:\n{schema}\n\nQuestion: {q_t.format(**fill)}\n\n{INSTRUCTION}"
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
        out.append((messages, f"```sql\n{sql_t.format(**fill)}\n```"))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--vocab-size", type=int, default=None)
    p.add_argument("--sft-epochs", type=float, default=None)
    p.add_argument("--sft-max-steps", type=int, default=None)
    p.add_argument("--keep-cache", action="store_true", help="build into the real user cache dir")
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    from mrtpo_sdk.policy import DefaultPolicyConfig, build_model, build_tokenizer, completion_nll, default_policy

    pairs = synthetic_sql_examples(args.n, args.seed)
    texts = [m["content"] for msgs, _ in pairs for m in msgs] + [c for _, c in pairs]
    cfg = DefaultPolicyConfig(seed=args.seed)
    overrides = {"vocab_size": args.vocab_size, "sft_epochs": args.sft_epochs, "sft_max_steps": args.sft_max_steps}
    cfg = dataclasses.replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
    print(f"config: {cfg}")
    print(f"torch threads: {torch.get_num_threads()}")

    # Sequence lengths + baseline NLL of the randomly initialised model (same seed => same init).
    tok = build_tokenizer(texts + [c for _, c in pairs], cfg.vocab_size)
    prompt_lens = [
        len(tok.apply_chat_template(m, add_generation_prompt=True, tokenize=True)["input_ids"]) for m, _ in pairs
    ]
    comp_lens = [len(tok.encode(c, add_special_tokens=False)) + 1 for _, c in pairs]
    print(
        f"examples: {len(pairs)}; prompt tokens mean {sum(prompt_lens) / len(pairs):.0f} (max {max(prompt_lens)}); "
        f"completion tokens mean {sum(comp_lens) / len(pairs):.0f} (max {max(comp_lens)}); "
        f"chars/token {sum(len(m[1]['content']) for m, _ in pairs) / sum(prompt_lens):.2f}"
    )
    eval_pairs = pairs[:32]

    with tempfile.TemporaryDirectory(prefix="mrtpo-bench-") as tmp:
        cache = None if args.keep_cache else Path(tmp)
        t0 = time.perf_counter()
        model, tokenizer, path = default_policy("bench-sql", texts, pairs, cfg, cache_dir=cache, rebuild=True)
        total = time.perf_counter() - t0
        import json

        manifest = json.loads((path / "mrtpo_policy.json").read_text())
        tm = manifest["timings"]
        nll_before = completion_nll(build_model(tokenizer, cfg), tokenizer, eval_pairs)
        nll_after = completion_nll(model, tokenizer, eval_pairs)
        print(
            f"tokenizer build: {tm['tokenizer_s']:.2f}s  model build: {tm['model_s']:.2f}s  "
            f"SFT: {tm.get('sft_s', 0.0):.1f}s ({manifest['sft_steps']} steps)  total incl. save: {total:.1f}s"
        )
        print(f"params: {manifest['num_parameters'] / 1e6:.2f}M  vocab: {manifest['vocab_size']}")
        print(f"SFT loss first/last: {manifest['sft_loss_first']:.3f} / {manifest['sft_loss_last']:.3f}")
        print(f"completion NLL (first 32 train pairs) before/after: {nll_before:.3f} / {nll_after:.3f}")

        t0 = time.perf_counter()
        default_policy("bench-sql", texts, pairs, cfg, cache_dir=cache, log=lambda s: None)
        print(f"cache reload: {time.perf_counter() - t0:.2f}s")

        # Generation timing: 8 samples x 96 new tokens (min_new_tokens forces the full length).
        messages = pairs[0][0]
        enc = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_tensors="pt", return_dict=True
        )
        ids = enc["input_ids"].repeat(8, 1)
        attn = enc["attention_mask"].repeat(8, 1)
        with torch.no_grad():
            model.generate(input_ids=ids[:1], attention_mask=attn[:1], max_new_tokens=4, do_sample=False)  # warm-up
            torch.manual_seed(0)
            t0 = time.perf_counter()
            gen = model.generate(
                input_ids=ids,
                attention_mask=attn,
                max_new_tokens=96,
                min_new_tokens=96,
                do_sample=True,
                temperature=1.0,
            )
            gen_s = time.perf_counter() - t0
            new = gen.shape[1] - ids.shape[1]
            print(f"generate {gen.shape[0]} x {new} new tokens (prompt {ids.shape[1]} tokens): {gen_s:.2f}s")

            for k in (0, 1, 2):
                msgs, ref = pairs[k]
                enc = tokenizer.apply_chat_template(
                    msgs, add_generation_prompt=True, tokenize=True, return_tensors="pt", return_dict=True
                )
                out = model.generate(**enc, max_new_tokens=96, do_sample=False)
                text = tokenizer.decode(out[0, enc["input_ids"].shape[1] :], skip_special_tokens=False)
                print(f"--- greedy sample {k}: question: {msgs[1]['content'].split('Question: ')[1].splitlines()[0]}")
                print(f"reference: {ref!r}")
                print(f"generated: {text!r}")
            torch.manual_seed(1)
            out = model.generate(**enc, max_new_tokens=96, do_sample=True, temperature=1.0, num_return_sequences=2)
            for row in out:
                print(
                    f"sampled (T=1): {tokenizer.decode(row[enc['input_ids'].shape[1] :], skip_special_tokens=False)!r}"
                )

            # Shape / exact-match rates, greedy and sampled (T=1, 4 samples), on train and held-out prompts.
            train_set = {(m[1]["content"], c) for m, c in pairs}
            held_out = [
                p for p in synthetic_sql_examples(400, args.seed + 1000) if (p[0][1]["content"], p[1]) not in train_set
            ][:16]
            for name, subset in (("train", pairs[:16]), ("held-out", held_out)):
                stats = {"greedy": [0, 0, 0], "sampled": [0, 0, 0]}
                for msgs, ref in subset:
                    enc = tokenizer.apply_chat_template(
                        msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True
                    )
                    for mode, kw in (
                        ("greedy", {"do_sample": False}),
                        ("sampled", {"do_sample": True, "temperature": 1.0, "num_return_sequences": 4}),
                    ):
                        out = model.generate(**enc, max_new_tokens=96, **kw)
                        for row in out:
                            text = tokenizer.decode(row[enc["input_ids"].shape[1] :], skip_special_tokens=True)
                            st = stats[mode]
                            st[0] += 1
                            st[1] += text.lstrip().startswith("```sql\n") and text.rstrip().endswith("```")
                            st[2] += text.strip() == ref.strip()
                print(
                    f"{name} ({len(subset)} prompts): "
                    + "; ".join(
                        f"{mode}: fenced-sql {st[1] / st[0]:.0%}, exact {st[2] / st[0]:.0%}"
                        for mode, st in stats.items()
                    )
                )


if __name__ == "__main__":
    main()
