"""Long-form writing where each reward concerns a few tokens: a ~100-word report with 1-3 IFEval constraints.

A setting in which the paper's effect should show: a long response (about 130-170 tokens of
report) of which each reward concerns only a handful of tokens — a ``<<title>>`` on the first line
(``detectable_format:title``), one given keyword somewhere in the text (``keywords:existence``), and an exact
closing phrase (``startend:end_checker``). The report's other ~90% of tokens are free text that no verifier reads.
Under GDPO every token of a completion gets the same advantage for every reward; MRTPO's replay (``P_\\k`` = the
prompt without constraint k's sentence) should move each reward's credit onto the tokens its constraint concerns.

Each prompt is ``Write a report of about 100 words about <topic>.`` followed by 1-3 constraint sentences (each type
present with probability 0.65, at least one; in random order), as one user message. Verifiers ``constraint_1..3``
score the example's j-th constraint with the bundled instruction-following checkers (``training`` semantics; IFEval
strict otherwise; ``None`` when the example has fewer than j constraints), gated on the response being a report: a
completion of fewer than 50 words, or of fewer than 20 different words, once copies of the prompt are cut out, earns
0 on every constraint (``<<t>> budget. See you next time.``, the prompt pasted back, ``"a " * 50`` do not do the
task). Beyond that gate, like IFEval's, a constraint verifier judges its constraint, not the report's quality.

Data: generated in code (deterministic, seed 2026; no files): 1,200 ``train`` and 100 ``validation`` prompts (none
of them a training prompt); the references are reports written from a small sentence grammar. The embedded policy's
warm start (``warm_start_examples``) reads each training report and two drafts of it in which each constraint is
broken with probability 0.75 in the few tokens it concerns (no title, another keyword, another closing phrase): a
stand-in for a pretrained model that follows each instruction about half the time, so that RL has something to
learn. Every algorithm starts from that same policy. Headline metrics: IFEval's prompt- and instruction-level strict
accuracy. Completions need room: the task sets ``max_completion_length=192`` (the embedded default of 64 tokens
would cut every report before its closing phrase). See ``docs/results.md`` ("Long-form") for what it measured.
"""

import dataclasses
import random
import re

from mrtpo_sdk import MRTPOError, Result, Task, Verifier
from mrtpo_sdk.evaluation import ifeval_accuracy
from mrtpo_sdk.instructions import compose_example, constraint_verifiers, echoes_of, prompt_without, remove_echoes

SEED = 2026
SIZES = {"train": 1200, "validation": 100}
MIN_WORDS = 50
MIN_DISTINCT_WORDS = 20
DRAFTS = 2  # non-compliant drafts per training report in the warm start
VIOLATION_RATE = 0.75  # each constraint broken in a draft with this probability: ~50% compliance overall

TOPICS = [
    "the harbor", "the city library", "the river trail", "the night market", "the old bridge", "the school garden",
    "the mountain village", "the train station", "the science fair", "the town museum", "the summer festival",
    "the bakery on the corner", "the football club", "the wind farm", "the public pool", "the art class",
    "the bus network", "the village well", "the recycling plant", "the city zoo", "the chess tournament",
    "the new hospital", "the forest path", "the fishing fleet", "the music school", "the farmers' cooperative",
    "the solar roof project", "the coastal road", "the street choir", "the community kitchen",
]
KEYWORDS = [
    "budget", "weather", "volunteers", "schedule", "harvest", "safety", "lanterns", "tickets",
]
END_PHRASES = [
    "Is there anything else I can help with?", "Thank you for reading.", "That is all for now.",
    "More news will follow soon.", "See you next time.", "This concludes the report.",
]
TITLE_WORDS = ["Notes on", "A Look at", "News from", "Report on", "A Day at", "Thoughts on", "Life at", "Inside"]
SUBJECTS = [
    "The staff", "Most people", "A local group", "The council", "Many families", "Our team", "The workers",
    "Some residents", "The organizers", "A few students", "The managers", "Everyone",
]
VERBS = [
    "talked about", "worked on", "looked at", "cared about", "planned", "discussed", "improved", "checked",
    "wrote about", "asked about", "helped with", "thought about",
]
OBJECTS = [
    "the plans for next year", "the daily routine", "the small problems", "the costs", "the opening hours",
    "the new ideas", "the long list of tasks", "the changes", "the main goals", "the results so far",
    "the quiet mornings", "the busy evenings",
]
TAILS = [
    "this week", "with great care", "after the meeting", "before the winter", "in the early morning",
    "for the whole town", "without much fuss", "as always", "once again", "with some help", "at the last minute",
    "in a friendly way",
]
ABOUT = [
    "People say that {topic} is busier than ever.", "{Topic} has changed a lot in the last few years.",
    "Nobody expected {topic} to grow so quickly.", "Life around {topic} follows a simple rhythm.",
    "Visitors often ask how {topic} began.", "The story of {topic} is a long one.",
]
KEYWORD_SENTENCES = [
    "The {kw} came up again and again.", "A short talk about the {kw} drew a crowd.",
    "Nobody forgot the {kw} this time.", "The {kw} were a surprise to many.", "Everyone had an opinion on the {kw}.",
    "In the end the {kw} mattered most.",
]


def _sentence(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}."


def _render(title: str | None, sentences: list[str], keyword_at: int | None, keyword: str | None,
            keyword_sentence: str, end_phrase: str | None) -> str:
    body = list(sentences)
    if keyword_at is not None:
        body.insert(keyword_at, keyword_sentence.format(kw=keyword))
    text = " ".join(body) + (f" {end_phrase}" if end_phrase else "")
    return f"<<{title}>>\n\n{text}" if title else text


def _example(rng: random.Random, split: str, i: int):
    topic = rng.choice(TOPICS)
    kinds = [k for k in ("title", "keywords", "end") if rng.random() < 0.65] or [rng.choice(["title", "keywords", "end"])]
    rng.shuffle(kinds)
    keyword = rng.choice(KEYWORDS) if "keywords" in kinds else None
    end_phrase = rng.choice(END_PHRASES) if "end" in kinds else None
    constraints = []
    for kind in kinds:
        if kind == "title":
            constraints.append(("detectable_format:title", {}))
        elif kind == "keywords":
            constraints.append(("keywords:existence", {"keywords": [keyword]}))
        else:
            constraints.append(("startend:end_checker", {"end_phrase": end_phrase}))
    name = topic[4:] if topic.startswith("the ") else topic
    title = f"{rng.choice(TITLE_WORDS)} {name.title()}" if "title" in kinds else None
    sentences = [rng.choice(ABOUT).format(topic=topic, Topic=topic[0].upper() + topic[1:])]
    sentences += [_sentence(rng) for _ in range(rng.randint(7, 9))]
    keyword_at = rng.randint(1, len(sentences)) if keyword else None
    keyword_sentence = rng.choice(KEYWORD_SENTENCES)
    reference = _render(title, sentences, keyword_at, keyword, keyword_sentence, end_phrase)
    # The warm start's non-compliant drafts: the same report with each constraint broken with probability
    # VIOLATION_RATE, in the few tokens it concerns (no title; another keyword; another closing phrase).
    drafts = []
    for _ in range(DRAFTS):
        broken = {k for k in kinds if rng.random() < VIOLATION_RATE}
        drafts.append(_render(
            None if "title" in broken else title,
            sentences,
            keyword_at,
            rng.choice([k for k in KEYWORDS if k != keyword]) if "keywords" in broken else keyword,
            keyword_sentence,
            rng.choice([e for e in END_PHRASES if e != end_phrase]) if "end" in broken else end_phrase,
        ))
    return compose_example(
        f"{split}-{i:04d}",
        f"Write a report of about 100 words about {topic}.",
        constraints,
        reference=reference,
        drafts=drafts,
        topic=topic,
    )


def examples(split: str = "train", data: str | None = None):
    if data is not None:
        raise MRTPOError("tasks/long_form.py generates its data in code; it takes no --data")
    if split not in SIZES:
        raise MRTPOError(f"unknown split {split!r}; the splits: {', '.join(SIZES)}")
    rng = random.Random(f"{SEED}-{split}")
    if split == "train":
        return [_example(rng, split, i) for i in range(SIZES[split])]
    seen = {ex.prompt for ex in examples("train")}  # held out: no validation prompt is a training prompt
    out = []
    while len(out) < SIZES[split]:
        ex = _example(rng, split, len(out))
        if ex.prompt not in seen:
            seen.add(ex.prompt)
            out.append(ex)
    return out


def warm_start_examples(train):
    """The embedded policy's warm start also reads DRAFTS non-compliant drafts of each training report (see the
    module docstring): a stand-in for a pretrained model that follows each instruction about half the time."""
    return [
        dataclasses.replace(ex, id=f"{ex.id}-draft{d}", meta={**ex.meta, "reference": draft})
        for ex in train
        for d, draft in enumerate(ex.meta["drafts"])
    ]


def prompt(example):
    return [{"role": "user", "content": example.prompt}]


def prompt_without_constraint(example, verifier_name):
    """``P_\\k``: the prompt (one user message) without the constraint sentence of slot ``verifier_name``."""
    return [{"role": "user", "content": prompt_without(example, verifier_name)}]


def reference(example):
    return example.meta["reference"]


_NOT_WORD = re.compile(r"[^\w']+")


def _is_report(example, completion: str) -> bool:
    """At least MIN_WORDS words, MIN_DISTINCT_WORDS of them different, once copies of the prompt are cut out. A word
    is a whitespace-separated token with a letter in it (``w0-w1-...-w59`` or words joined by U+200B are one)."""
    tokens = remove_echoes(completion, echoes_of(example)).split()
    words = [_NOT_WORD.sub("", t).casefold() for t in tokens if any(c.isalpha() for c in t)]
    return len(words) >= MIN_WORDS and len(set(words)) >= MIN_DISTINCT_WORDS


def _gated(slot: Verifier) -> Verifier:
    """``slot`` scored only on a report (see :func:`_is_report`); anything else earns 0 with the same block."""

    def score(example, completion):
        result = slot.fn(example, completion)
        if result is None or _is_report(example, completion):
            return result
        return Result(0.0, result.block)

    score.__name__ = slot.name
    score.__doc__ = (
        f"Reward 1 if the completion is a report (>= {MIN_WORDS} words, {MIN_DISTINCT_WORDS} of them different, "
        f"copies of the prompt not counted) that follows the example's "
        f"{slot.name.replace('_', ' ')} (IFEval strict, training semantics), else 0; None without that constraint."
    )
    return Verifier(score, name=slot.name, kind="constraint", deciding=slot.deciding)


task = Task(
    name="long_form",
    description="Long-form writing: a ~100-word report, 1-3 constraints that each concern a few tokens",
    examples=examples,
    prompt=prompt,
    verifiers=[_gated(v) for v in constraint_verifiers(3)],
    reference=reference,
    block_placement="in-prompt",
    prompt_without=prompt_without_constraint,
    metrics=ifeval_accuracy(),
    eval_split="validation",
    warm_start_examples=warm_start_examples,
    max_completion_length=192,
)
