"""Build perturbed tool-call responses from BFCL possible answers (step 1 of the agreement check).

For every question of the committed subset (``tasks/data/bfcl``), start from the reference calls (first acceptable
value of every parameter) and derive responses by systematic perturbation: alternative acceptable values, wrong
function, missing / extra / renamed parameter, wrong type, int/float/bool/str variants, reordered parallel calls,
omitted optional parameters, string case/spacing variants, wrong values, dropped or duplicated calls, and (for
irrelevance) no call vs a call. Each response is written in the task's output format (think block + call blocks).

    python tools/agreement/bfcl/build_responses.py [--out /tmp/bfcl_agreement/responses.jsonl]

Nothing here decides correctness: the verdicts come from the official checker (``official_verdicts.py``) and from
ours (``compare.py`` / ``tests/toolcall/test_bfcl_agreement.py``).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
from pathlib import Path

from mrtpo_sdk.toolcall import CATEGORIES, ToolCall, load_bfcl, reference_calls, render_calls

ROOT = Path(__file__).resolve().parents[3]
PER_EXAMPLE = 14
CALL_LEVEL = {"reference", "reorder_reverse", "reorder_rotate", "reorder_permutation", "drop_call", "no_call"}
THINK = "I pick the function and fill its arguments from the request."


def _variants(example) -> list[tuple[str, list[ToolCall]]]:
    rng = random.Random(example.id)
    docs = {f["name"]: f for f in example.functions}
    ref = reference_calls(example.functions, example.possible_answer)
    out: list[tuple[str, list[ToolCall]]] = []

    def add(kind: str, calls: list[ToolCall]) -> None:
        out.append((kind, calls))

    if not example.possible_answer:  # irrelevance: the right answer is no call
        add("no_call", [])
        if example.functions:
            f = example.functions[0]
            props = (f.get("parameters") or {}).get("properties") or {}
            args = {p: _dummy(spec) for p, spec in props.items() if p in ((f.get("parameters") or {}).get("required") or [])}
            add("call_anyway", [ToolCall(f["name"], args)])
            add("call_anyway_no_args", [ToolCall(f["name"], {})])
        return out

    add("reference", ref)
    names = [c.name for c in ref]
    if 1 < len(ref) <= 6 and len(set(names)) < len(names):
        # calls to the same function, in other orders: 6 distinct random orderings
        perms = set()
        for _ in range(40):
            order = tuple(rng.sample(range(len(ref)), len(ref)))
            if order != tuple(range(len(ref))):
                perms.add(order)
            if len(perms) == 6:
                break
        for order in sorted(perms):
            add("reorder_permutation", [ref[j] for j in order])
    if len(ref) > 1:
        add("reorder_reverse", list(reversed(ref)))
        k = rng.randrange(1, len(ref))
        add("reorder_rotate", ref[k:] + ref[:k])
        add("drop_call", ref[:-1])
    add("duplicate_call", ref + [ref[0]])
    add("no_call", [])
    shuffled = [ToolCall(c.name, dict(rng.sample(list(c.arguments.items()), len(c.arguments)))) for c in ref]
    add("argument_order", shuffled)

    for i, (expected, call) in enumerate(zip(example.possible_answer, ref)):
        name, answer = next(iter(expected.items()))
        doc = docs.get(name) or {}
        params = doc.get("parameters") or {}
        props, required = params.get("properties") or {}, params.get("required") or []

        def with_call(new: ToolCall, i=i) -> list[ToolCall]:
            calls = list(ref)
            calls[i] = new
            return calls

        def with_args(args: dict, i=i, name=name) -> list[ToolCall]:
            return with_call(ToolCall(name, args))

        others = [f["name"] for f in example.functions if f["name"] != name]
        add("wrong_function_other" if others else "wrong_function_renamed",
            with_call(ToolCall(others[0] if others else name + "_v2", call.arguments)))
        add("wrong_function_case", with_call(ToolCall(name.upper() if name != name.upper() else name.lower(), call.arguments)))
        add("extra_parameter", with_args({**call.arguments, "verbose": True}))
        for n_param, (p, acceptable) in enumerate(answer.items()):
            spec = props.get(p) or {}
            t = spec.get("type")
            # optional parameters: omit / include when the reference omits them
            if p in call.arguments:
                rest = {k: v for k, v in call.arguments.items() if k != p}
                add("omit_optional" if "" in acceptable else ("missing_required" if p in required else "missing_parameter"), with_args(rest))
                if n_param == 0 or rng.random() < 0.25:  # renaming: mostly the first parameter, so the sample
                    add("renamed_parameter", with_args({**rest, p + "_value": call.arguments[p]}))  # keeps room
                    add("renamed_parameter_case", with_args({**rest, p.upper() if p != p.upper() else p.lower(): call.arguments[p]}))
            else:
                non_empty = [a for a in acceptable if a != ""]
                if non_empty and p in props:
                    add("include_optional", with_args({**call.arguments, p: reference_calls([doc], [{name: {p: non_empty}}])[0].arguments[p]}))
            if p not in call.arguments:
                continue
            v = call.arguments[p]
            rest = dict(call.arguments)
            # alternative acceptable values
            alts = [a for a in acceptable[1:] if a != "" and a != acceptable[0]]
            if alts and t not in ("dict",) and not (t == "array" and (spec.get("items") or {}).get("type") == "dict"):
                add("alternative_value", with_args({**rest, p: alts[0]}))
            for kind, nv in _value_variants(v, t, spec, rng):
                add(kind, with_args({**rest, p: nv}))
    # keep the set bounded per example (deterministic choice): the call-level variants, then a sample
    if len(out) > PER_EXAMPLE:
        head = [o for o in out if o[0] in CALL_LEVEL]
        rest = [o for o in out if o[0] not in CALL_LEVEL]
        out = head + rng.sample(rest, max(0, PER_EXAMPLE - len(head)))
    return out


def _value_variants(v, t, spec, rng) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    if isinstance(v, bool):
        out += [("bool_as_string", str(v).lower()), ("bool_as_int", int(v)), ("bool_flipped", not v)]
    elif isinstance(v, int):
        out += [("int_as_float", float(v)), ("int_as_string", str(v)), ("int_off_by_one", v + 1)]
    elif isinstance(v, float):
        out += [("float_as_string", repr(v)), ("float_changed", v + 0.5)]
        if v == int(v):
            out.append(("float_as_int", int(v)))
        else:
            out.append(("float_rounded_int", round(v)))
    elif isinstance(v, str):
        if v:
            out += [("string_upper", v.upper()), ("string_lower", v.lower())]
            out.append(("string_spacing", "  ".join(v.split(" ")) if " " in v else v + " "))
            out.append(("string_punctuation", v.replace(" ", "-") if " " in v else v + "."))
            out.append(("string_wrong", "zz" + v[::-1]))
        else:
            out.append(("string_wrong", "zz"))
        if v.strip().lstrip("-").isdigit():
            out.append(("string_as_int", int(v)))
        out.append(("string_in_list", [v]))
    elif isinstance(v, list):
        if len(v) > 1:
            out.append(("list_reordered", list(reversed(v))))
        if v:
            out.append(("list_dropped_item", v[:-1]))
            if isinstance(v[0], str):
                out.append(("list_item_case", [v[0].upper()] + v[1:]))
            if isinstance(v[0], int) and not isinstance(v[0], bool):
                out.append(("list_int_as_float", [float(x) if isinstance(x, int) else x for x in v]))
            if isinstance(v[0], float):
                out.append(("list_float_as_int", [int(x) if isinstance(x, float) else x for x in v]))
            if isinstance(v[0], dict) and v[0]:
                d = copy.deepcopy(v)
                k = next(iter(d[0]))
                d[0][k] = _bump(d[0][k])
                out.append(("list_dict_value_changed", d))
        out.append(("list_as_string", json.dumps(v)))
    elif isinstance(v, dict):
        if v:
            k = rng.choice(list(v))
            d = dict(v)
            d[k] = _bump(d[k])
            out.append(("dict_value_changed", d))
            d = dict(v)
            del d[k]
            out.append(("dict_key_dropped", d))
            out.append(("dict_key_case", {(kk.upper() if kk == k else kk): vv for kk, vv in v.items()}))
        out.append(("dict_extra_key", {**v, "zz_extra": 1}))
    return out


def _bump(x):
    if isinstance(x, bool):
        return not x
    if isinstance(x, (int, float)):
        return x + 1
    if isinstance(x, str):
        return x + "zz"
    return "zz"


def _dummy(spec: dict):
    return {"string": "x", "integer": 1, "float": 1.0, "boolean": True, "array": [], "dict": {}}.get(spec.get("type"), "x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "tasks" / "data" / "bfcl")
    ap.add_argument("--out", type=Path, default=Path("/tmp/bfcl_agreement/responses.jsonl"))
    args = ap.parse_args(argv)
    n = 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for ex in load_bfcl(args.data, CATEGORIES, split="all"):
            seen = set()
            for kind, calls in _variants(ex):
                response = render_calls(calls, think=THINK)
                if response in seen:
                    continue
                seen.add(response)
                fh.write(json.dumps({"id": ex.id, "category": ex.category, "kind": kind, "response": response}, ensure_ascii=False) + "\n")
                n += 1
    print(f"{n} responses -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
