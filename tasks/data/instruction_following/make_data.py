"""Generate the bundled instruction-following data: train, validation and unseen-constraint splits.

    python tasks/data/instruction_following/make_data.py

Each example = a base instruction about a topic + 1-4 constraint sentences rendered from sampled kwargs. Constraint
sets follow IFEval's conflict table (no two constraints that contradict each other) and are kept only when
:func:`mrtpo_sdk.instructions.reference.build_reference` finds a completion that follows all of them, so every
example has a reference earning full reward. Train and validation use IFEval's 25 types; the ``unseen`` split uses
the 12 held-out types (1-3 of them, plus at most one IFEval type). Deterministic (seeded).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from mrtpo_sdk.instructions import constraint_ids, normalize_kwargs
from mrtpo_sdk.instructions.data import compose_example, example_to_json
from mrtpo_sdk.instructions.reference import ReferenceError, build_reference

OUT = Path(__file__).parent
SPLITS = {"train": (400, 1, False), "validation": (60, 2, False), "unseen": (150, 3, True)}

BASES = [
    "Write a short essay about the {t}.",
    "Write a blog post about the {t}.",
    "Describe the {t} to a child.",
    "Explain why the {t} matters to a small town.",
    "Write a letter to a friend about the {t}.",
    "Write a poem about the {t}.",
    "Give advice to a visitor who wants to see the {t}.",
    "Write a product description inspired by the {t}.",
    "Write a story that takes place near the {t}.",
    "Summarize what a newcomer should know about the {t}.",
    "Write a speech for the opening of the {t}.",
    "Write a diary entry about a day spent at the {t}.",
    "Write a travel guide entry for the {t}.",
    "Write a news report about changes to the {t}.",
    "Write a dialogue between two neighbors about the {t}.",
    "Write a review of the {t}.",
    "Write a short lesson plan about the {t}.",
    "Write an advertisement for a tour of the {t}.",
    "Write a reflection on what the {t} teaches us.",
    "Write a thank-you note to the people who care for the {t}.",
]
TOPICS = [
    "old lighthouse",
    "city park",
    "village market",
    "mountain trail",
    "river bridge",
    "public library",
    "community garden",
    "train station",
    "harbor",
    "old mill",
    "forest path",
    "town square",
    "art museum",
    "night sky",
    "school orchestra",
    "bakery on the corner",
    "farm",
    "desert road",
    "winter festival",
    "botanical garden",
    "fishing boat",
    "small theater",
    "hill village",
    "local zoo",
    "science fair",
    "old castle",
    "summer camp",
    "music shop",
    "bicycle club",
    "quiet lake",
    "chess tournament",
    "street market",
    "animal shelter",
    "city bus",
    "family kitchen",
    "coastal town",
    "flower show",
    "pottery class",
    "robot club",
    "bird sanctuary",
]
KEYWORDS = [
    "journey",
    "balance",
    "harmony",
    "courage",
    "window",
    "lantern",
    "compass",
    "whisper",
    "meadow",
    "echo",
    "anchor",
    "ribbon",
    "puzzle",
    "treasure",
    "horizon",
    "signal",
    "garden",
    "season",
]
ABSENT = ["banana", "galaxy", "violin", "jazz", "zebra", "quartz", "oxygen", "pixel", "wizard", "yacht"]
COMMON = ["people", "history", "simple", "story", "quiet", "family", "music", "future", "ideas", "friends"]
FIRST_WORDS = ["meanwhile", "today", "however", "first", "finally", "perhaps", "indeed", "sometimes", "still"]
END_PHRASES = [
    "Any other questions?",
    "Is there anything else I can help with?",
    "Thank you for reading.",
    "That is all for now.",
]
LANGS = ["fr", "de", "es", "it", "pt"]
REL = ("less than", "at least")

# IFEval's conflict table, as data: which types may not share an example
EXCLUSIVE_EXCEPT = {
    "detectable_format:constrained_response": set(),
    "detectable_format:json_format": {"keywords:forbidden_words", "keywords:existence"},
    "combination:two_responses": {
        "keywords:forbidden_words",
        "keywords:existence",
        "language:response_language",
        "detectable_format:title",
        "punctuation:no_comma",
    },
    "combination:repeat_prompt": {"keywords:existence", "detectable_format:title", "punctuation:no_comma"},
}
PAIR_CONFLICTS = [
    ("language:response_language", x)
    for x in (
        "detectable_format:multiple_sections",
        "keywords:existence",
        "keywords:frequency",
        "keywords:forbidden_words",
        "startend:end_checker",
        "change_case:english_capital",
        "change_case:english_lowercase",
        "change_case:capital_word_frequency",
        "detectable_format:title",
        "keywords:letter_frequency",
    )
] + [
    ("length_constraints:number_paragraphs", "length_constraints:nth_paragraph_first_word"),
    ("length_constraints:number_paragraphs", "length_constraints:number_sentences"),
    ("detectable_format:multiple_sections", "detectable_format:number_highlighted_sections"),
    ("change_case:capital_word_frequency", "change_case:english_lowercase"),
    ("change_case:capital_word_frequency", "change_case:english_capital"),
    ("change_case:english_lowercase", "change_case:english_capital"),
    ("startend:quotation", "detectable_format:title"),
]


def compatible(ids: list[str]) -> bool:
    s = set(ids)
    if len(s) != len(ids):
        return False
    for a, allowed in EXCLUSIVE_EXCEPT.items():
        if a in s and (s - {a}) - allowed:
            return False
    return not any(a in s and b in s for a, b in PAIR_CONFLICTS)


def sample_kwargs(cid: str, r: random.Random, base: str) -> dict:
    rel = r.choice(REL)
    match cid:
        case "keywords:existence":
            return {"keywords": r.sample(KEYWORDS, r.randint(1, 2))}
        case "keywords:frequency":
            if rel == "less than":
                return {"keyword": r.choice(ABSENT), "frequency": r.randint(1, 3), "relation": rel}
            return {"keyword": r.choice(KEYWORDS), "frequency": r.randint(2, 4), "relation": rel}
        case "keywords:forbidden_words":
            return {"forbidden_words": r.sample(COMMON, r.randint(1, 3))}
        case "keywords:letter_frequency":
            if rel == "less than":
                return {"letter": r.choice("jqxz"), "let_frequency": r.randint(1, 3), "let_relation": rel}
            return {
                "letter": r.choice("abcdefghijklmnopqrstuvwxyz"),
                "let_frequency": r.randint(3, 12),
                "let_relation": rel,
            }
        case "language:response_language":
            return {"language": r.choice(LANGS)}
        case "length_constraints:number_sentences":
            n = r.randint(2, 12) if rel == "at least" else r.randint(4, 16)
            return {"num_sentences": n, "relation": rel}
        case "length_constraints:number_paragraphs":
            return {"num_paragraphs": r.randint(2, 5)}
        case "length_constraints:number_words":
            n = r.randint(20, 150) if rel == "at least" else r.randint(40, 200)
            return {"num_words": n, "relation": rel}
        case "length_constraints:nth_paragraph_first_word":
            n = r.randint(2, 4)
            return {"num_paragraphs": n, "nth_paragraph": r.randint(1, n), "first_word": r.choice(FIRST_WORDS)}
        case "detectable_content:number_placeholders":
            return {"num_placeholders": r.randint(1, 4)}
        case "detectable_content:postscript":
            return {"postscript_marker": r.choice(["P.S.", "P.P.S"])}
        case "detectable_format:number_bullet_lists":
            return {"num_bullets": r.randint(2, 5)}
        case "detectable_format:number_highlighted_sections":
            return {"num_highlights": r.randint(1, 4)}
        case "detectable_format:multiple_sections":
            return {"section_spliter": r.choice(["Section", "SECTION", "PART"]), "num_sections": r.randint(2, 4)}
        case "combination:repeat_prompt":
            return {"prompt_to_repeat": base}
        case "startend:end_checker":
            return {"end_phrase": r.choice(END_PHRASES)}
        case "change_case:capital_word_frequency":
            n = r.randint(2, 8) if rel == "at least" else r.randint(2, 6)
            return {"capital_frequency": n, "capital_relation": rel}
        case "count:word_count_range":
            lo = r.randint(30, 80)
            return {"min_words": lo, "max_words": lo + r.randint(30, 120)}
        case "count:unique_words":
            return {"num_unique": r.randint(20, 60)}
        case "count:numbers":
            return {"num_numbers": r.randint(1, 4)}
        case "format:line_count":
            return {"num_lines": r.randint(3, 8)}
        case "format:numbered_list":
            return {"num_items": r.randint(2, 5)}
        case "format:parentheses":
            return {"num_parentheses": r.randint(1, 3)}
        case "words:first_word":
            return {"first_word": r.choice(FIRST_WORDS)}
        case "words:last_word":
            return {"last_word": r.choice(KEYWORDS)}
        case "words:max_word_length":
            return {"max_length": r.randint(10, 13)}
        case "words:palindrome":
            return {"min_length": r.randint(4, 7)}
        case "punctuation:exclamation_count":
            return {"num_exclamations": r.randint(1, 4)}
        case _:
            return {}


def make_split(name: str, count: int, seed: int, unseen: bool) -> list[dict]:
    r = random.Random(seed)
    seen_ids = constraint_ids(unseen=False)
    unseen_ids = constraint_ids(unseen=True)
    rows: list[dict] = []
    rejected = 0
    while len(rows) < count:
        topic = r.choice(TOPICS)
        base = r.choice(BASES).format(t=topic)
        base = base[0].upper() + base[1:]
        if unseen:
            ids = r.sample(unseen_ids, r.choice([1, 1, 2, 2, 3]))
            if r.random() < 0.3:
                ids.append(r.choice(seen_ids))
        elif r.random() < 0.1:  # the exclusive types (JSON, two responses, ...) rarely survive random sets
            first = r.choice(sorted(EXCLUSIVE_EXCEPT))
            allowed = sorted(EXCLUSIVE_EXCEPT[first])
            ids = [first] + r.sample(allowed, r.randint(0, min(2, len(allowed))))
        else:
            ids = r.sample(seen_ids, r.choice([1, 2, 2, 3, 3, 4]))
        if not compatible(ids):
            continue
        cons = [(cid, normalize_kwargs(cid, sample_kwargs(cid, r, base))) for cid in ids]
        ex = compose_example(f"{name}-{len(rows):04d}", base, cons, topic=topic, split=name)
        try:
            import zlib

            build_reference(cons, topic, variant=zlib.crc32(ex.id.encode()) % 97)
        except ReferenceError:
            rejected += 1
            continue
        rows.append(example_to_json(ex))
    print(f"{name}: {len(rows)} examples ({rejected} constraint sets rejected: no reference satisfies them)")
    return rows


def main() -> None:
    for name, (count, seed, unseen) in SPLITS.items():
        rows = make_split(name, count, seed, unseen)
        with open(OUT / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
