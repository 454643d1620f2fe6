"""Generate the IFEval agreement corpus: (constraint, response) pairs on both sides of every threshold and edge.

    python tools/agreement/ifeval/make_corpus.py OUT.jsonl

Deterministic (seeded). Each line: {"n", "id", "kwargs", "response", "deviation"}; ``deviation`` names the
documented deviation a pair exercises (docs/instruction_following.md), or null. The reference verdicts are added by
``reference_verdicts.py`` (run in a separate environment with lm-eval); the result is committed as
tests/data/ifeval_agreement.jsonl.
"""

from __future__ import annotations

import json
import random
import sys

R = random.Random(20261130)
REL = ("less than", "at least")

WORDS = (
    "river stone garden light morning window bridge market winter coffee letter music forest silver harbor "
    "planet candle engine pocket ladder meadow signal thunder valley basket mirror orange pencil rocket shadow"
).split()

EDGE = [
    "",
    " ",
    "\n",
    "\n\n",
    "\t \n ",
    "***",
    "* * *",
    "---",
    "- - -",
    "******",
    "*",
    "**",
    "* ",
    "-",
    "- ",
    "```json\n{}\n```",
    "```\n[1, 2]\n```",
    '```JSON\n{"a": 1}\n```  ',
    '{"a": 1}',
    "[1,2",
    "null",
    "NaN",
    "- a\n- b",
    "* a\n* b",
    "*a*",
    "**a**",
    "* a*",
    "Hello, world.",
    "HELLO WORLD",
    "hello world",
    "Hello World!",
    "P.S. hi",
    "p.s. hi",
    "P. S. hi",
    "P.P.S hi",
    "<<t>>",
    "<<>>",
    "<< >>",
    "<<<x>>>",
    "[x]",
    "[]",
    "[\n]",
    "Section 1",
    "SECTION 1\nSECTION 2",
    "section 1",
    "Section1 Section2 Section3",
    "a-b-c",
    "well-known fact",
    "don't stop",
    "snake_case words",
    "İstanbul ışık",
    "Straße groß",
    "naïve café",
    "…",
    "😀 🎉",
    "3.14 is pi.",
    "Dr. Smith went home. He was tired.",
    "U.S.A. is big. It is.",
    "Wait... what?! Really.",
    "e.g. this. i.e. that.",
    '"quoted"',
    '" "',
    '"',
    "'single'",
    "My answer is yes.",
    "my answer is yes.",
    "My answer is yes",
    "Any other questions?",
    'Any other questions?"',
    "line one\nline two\n",
    "   trailing   ",
    "\u00a0nbsp\u00a0",
    "A\u2028B",
    "x\r\ny\r\n",
    "\x0b\x0c",
    "1234 5678",
    "!!!",
    "???",
    "...",
    "a, b, c",
    "a，b",
    "ALL CAPS, YES.",
    "all lower, yes.",
    "Mixed CASE words HERE.",
    "USA",
    "I",
    "I am OK.",
    "COVID-19 and U.S. news",
    "DON'T GO",
]


def w(n: int, vocab=WORDS) -> str:
    return " ".join(R.choice(vocab) for _ in range(n))


def sent(k: int = 0) -> str:
    s = w(R.randint(3, 9))
    return s[0].upper() + s[1:] + R.choice([".", ".", ".", "!", "?"])


def sents(n: int, sep: str = " ") -> str:
    return sep.join(sent() for _ in range(n))


def decorate(text: str) -> str:
    """Random edge decoration: trailing whitespace, markdown, fences, dividers, case."""
    r = R.random()
    if r < 0.1:
        return text + R.choice([" ", "\n", "\n\n", "\t", "  \n "])
    if r < 0.15:
        return R.choice(["\n", " ", "\n\n"]) + text
    if r < 0.2:
        return "```\n" + text + "\n```"
    if r < 0.25:
        return "# Heading\n\n" + text
    if r < 0.3:
        return text.upper()
    if r < 0.35:
        return text.lower()
    if r < 0.4:
        return text + "\n\n---\n"
    return text


def pairs():
    out = []

    def add(id_, kwargs, response, deviation=None):
        out.append({"id": id_, "kwargs": kwargs, "response": response, "deviation": deviation})

    # ---------------------------------------------------------------- keywords:existence
    for _ in range(200):
        kws = R.sample(WORDS, R.randint(1, 3))
        present = [k for k in kws if R.random() < 0.7]
        parts = []
        for k in present:
            v = R.choice([k, k.upper(), k.capitalize(), k + "s", "un" + k, k + "-like", f"*{k}*", f"[{k}]"])
            parts.append(v)
        parts += [w(R.randint(0, 6))]
        R.shuffle(parts)
        add("keywords:existence", {"keywords": kws}, decorate(" ".join(parts)))
    for e in EDGE:
        add("keywords:existence", {"keywords": ["a"]}, e)
    for kw in ["c++", "a.b", "(x)", "[y]"]:
        for resp in [f"I like {kw} a lot", "I like axb a lot", "I like cc a lot", "x y"]:
            add("keywords:existence", {"keywords": [kw]}, resp, "regex_metacharacters_in_kwargs")

    # ---------------------------------------------------------------- keywords:frequency
    for _ in range(220):
        k = R.choice(WORDS)
        f = R.randint(1, 5)
        c = max(0, f + R.choice([-2, -1, -1, 0, 0, 1, 1, 2]))
        toks = [R.choice([k, k.upper(), k.title(), k + "s", k + k]) for _ in range(c)] + w(R.randint(0, 15)).split()
        R.shuffle(toks)
        add(
            "keywords:frequency",
            {"keyword": R.choice([k, " " + k, k + " "]), "frequency": f, "relation": R.choice(REL)},
            decorate(" ".join(toks)),
        )
    for e in EDGE:
        add("keywords:frequency", {"keyword": "a", "frequency": 2, "relation": R.choice(REL)}, e)

    # ---------------------------------------------------------------- keywords:forbidden_words
    for _ in range(200):
        ws = R.sample(WORDS, R.randint(1, 3))
        k = R.choice(ws)
        v = R.choice([k, k.upper(), k + "s", "un" + k, k + "-like", k + "'s", k + "_x", k + "1", f"({k})", "x" + k])
        resp = w(R.randint(0, 8)) + " " + (v if R.random() < 0.8 else "") + " " + w(R.randint(0, 5))
        add("keywords:forbidden_words", {"forbidden_words": ws}, decorate(resp))
    for e in EDGE:
        add("keywords:forbidden_words", {"forbidden_words": ["a", "yes"]}, e)
    for kw in ["c++", "a.b"]:
        for resp in [f"I like {kw} a lot", "I like axb a lot", "x y"]:
            add("keywords:forbidden_words", {"forbidden_words": [kw]}, resp, "regex_metacharacters_in_kwargs")

    # ---------------------------------------------------------------- keywords:letter_frequency
    for _ in range(220):
        letter = R.choice("abcdefghijklmnopqrstuvwxyz")
        f = R.randint(1, 12)
        c = max(0, f + R.choice([-2, -1, 0, 0, 1, 2]))
        body = "".join(ch for ch in w(R.randint(1, 12)) if ch.lower() != letter)
        chars = list(body) + [R.choice([letter, letter.upper()]) for _ in range(c)]
        R.shuffle(chars)
        add(
            "keywords:letter_frequency",
            {"letter": R.choice([letter, letter.upper()]), "let_frequency": f, "let_relation": R.choice(REL)},
            decorate("".join(chars)),
        )
    for e in EDGE:
        add("keywords:letter_frequency", {"letter": "s", "let_frequency": 2, "let_relation": R.choice(REL)}, e)

    # ---------------------------------------------------------------- language:response_language
    langs = {
        "en": "The weather is nice today and we are going to the park with our friends.",
        "fr": "Le temps est beau aujourd'hui et nous allons au parc avec nos amis.",
        "de": "Das Wetter ist heute schön und wir gehen mit unseren Freunden in den Park.",
        "es": "El tiempo es agradable hoy y vamos al parque con nuestros amigos.",
        "it": "Il tempo è bello oggi e andiamo al parco con i nostri amici.",
        "pt": "O tempo está bom hoje e vamos ao parque com os nossos amigos.",
        "ru": "Сегодня хорошая погода и мы идём в парк с друзьями.",
        "ja": "今日は天気が良いので、友達と公園に行きます。",
        "ko": "오늘은 날씨가 좋아서 친구들과 공원에 갑니다.",
        "hi": "आज मौसम अच्छा है और हम अपने दोस्तों के साथ पार्क जा रहे हैं।",
        "ar": "الطقس جميل اليوم ونحن ذاهبون إلى الحديقة مع أصدقائنا.",
        "fi": "Tänään on kaunis sää ja menemme puistoon ystäviemme kanssa.",
        "pl": "Dzisiaj jest ładna pogoda i idziemy do parku z przyjaciółmi.",
        "vi": "Hôm nay thời tiết đẹp và chúng tôi đi công viên với bạn bè.",
    }
    codes = list(langs)
    for _ in range(230):
        target = R.choice(codes)
        r = R.random()
        if r < 0.45:
            resp = langs[target]
        elif r < 0.75:
            resp = langs[R.choice(codes)]
        elif r < 0.9:
            a, b = R.sample(codes, 2)
            resp = langs[a] + " " + langs[b]
        else:
            resp = R.choice(["1234", "!!!", "ok", "Hi", "...", "🙂", "x = 3", "Bonjour", "Danke", "Ciao amigo"])
        add("language:response_language", {"language": target}, decorate(resp))
    for e in EDGE:
        add("language:response_language", {"language": R.choice(codes)}, e)

    # ---------------------------------------------------------------- length_constraints:number_sentences
    tricky = [
        "Dr. Smith arrived.",
        "It cost $3.50 today.",
        "See e.g. the map.",
        "He left at 5 p.m. today.",
        "Wait... really?",
        "The U.S. team won.",
        '"Stop!" he said.',
        "Mr. and Mrs. Jones came.",
        "Visit example.com now.",
        "No period here",
        "(Aside.)",
        "1. First item",
        "Ph.D. students wrote.",
    ]
    for _ in range(260):
        n = R.randint(1, 10)
        parts = [
            R.choice(tricky) if R.random() < 0.35 else sent() for _ in range(max(0, n + R.choice([-2, -1, 0, 0, 1, 2])))
        ]
        sep = R.choice([" ", "\n", "\n\n", "  ", "\n- "])
        add(
            "length_constraints:number_sentences",
            {"num_sentences": n, "relation": R.choice(REL)},
            decorate(sep.join(parts)),
        )
    for e in EDGE:
        add("length_constraints:number_sentences", {"num_sentences": 2, "relation": R.choice(REL)}, e)

    # ---------------------------------------------------------------- length_constraints:number_paragraphs
    divs = ["***", "\n***\n", "\n\n***\n\n", " *** ", "***\n", "\n***", "****", "* * *", "\n\n", "*** ***", "\t***\t"]
    for _ in range(240):
        n = R.randint(1, 5)
        k = max(1, n + R.choice([-1, 0, 0, 0, 1]))
        paras = [sents(R.randint(1, 3)) if R.random() > 0.07 else R.choice(["", " ", "\n"]) for _ in range(k)]
        d = R.choice(divs)
        text = d.join(paras)
        if R.random() < 0.15:
            text = R.choice(divs) + text
        if R.random() < 0.15:
            text = text + R.choice(divs)
        add("length_constraints:number_paragraphs", {"num_paragraphs": n}, text)
    for e in EDGE:
        add("length_constraints:number_paragraphs", {"num_paragraphs": R.randint(1, 2)}, e)

    # ---------------------------------------------------------------- length_constraints:number_words
    extras = [
        "well-known",
        "don't",
        "snake_case",
        "3.14",
        "co-op",
        "naïve",
        "İstanbul",
        "e-mail",
        "U.S.",
        "#tag",
        "a—b",
        "x/y",
        "😀",
        "...",
        "--",
        "ß",
    ]
    for _ in range(240):
        n = R.randint(1, 60)
        toks = w(max(0, n + R.choice([-2, -1, 0, 0, 1, 2]))).split()
        for _ in range(R.randint(0, 3)):
            toks.insert(R.randint(0, len(toks)), R.choice(extras))
        add(
            "length_constraints:number_words",
            {"num_words": n, "relation": R.choice(REL)},
            decorate(R.choice([" ", "  ", "\n", " \n "]).join(toks)),
        )
    for e in EDGE:
        add("length_constraints:number_words", {"num_words": R.randint(1, 3), "relation": R.choice(REL)}, e)

    # ---------------------------------------------------------------- length_constraints:nth_paragraph_first_word
    for _ in range(260):
        n = R.randint(1, 5)
        nth = R.randint(1, n)
        fw = R.choice(WORDS)
        k = max(1, n + R.choice([-1, 0, 0, 0, 1]))
        paras = [sents(R.randint(1, 2)) for _ in range(k)]
        if nth <= k:
            lead = R.choice(
                [
                    fw,
                    fw.capitalize(),
                    fw.upper(),
                    f'"{fw}"',
                    f"'{fw},",
                    f"{fw}.",
                    f"**{fw}**",
                    f"{fw}-like",
                    f"{fw}'s",
                    f"({fw})",
                    fw + "s",
                    R.choice(WORDS),
                ]
            )
            paras[nth - 1] = lead + " " + paras[nth - 1]
        sep = R.choice(["\n\n", "\n\n", "\n\n\n", "\n \n", "\n\n\n\n", "\n"])
        text = sep.join(paras)
        if R.random() < 0.1:
            text = "\n\n" + text
        if R.random() < 0.1:
            text = text + "\n\n"
        add(
            "length_constraints:nth_paragraph_first_word",
            {"num_paragraphs": n, "nth_paragraph": nth, "first_word": R.choice([fw, fw.capitalize()])},
            text,
        )
    for e in EDGE:
        add(
            "length_constraints:nth_paragraph_first_word",
            {"num_paragraphs": 1, "nth_paragraph": 1, "first_word": "hello"},
            e,
        )

    # ---------------------------------------------------------------- detectable_content:number_placeholders
    ph = ["[name]", "[]", "[ ]", "[a][b]", "[[x]]", "[x", "x]", "[multi\nline]", "[address]", "[ [y] ]", "[[[[", "]]"]
    for _ in range(220):
        n = R.randint(1, 5)
        toks = w(R.randint(2, 10)).split() + [R.choice(ph) for _ in range(max(0, n + R.choice([-1, 0, 0, 1, 2])))]
        R.shuffle(toks)
        add("detectable_content:number_placeholders", {"num_placeholders": n}, decorate(" ".join(toks)))
    for e in EDGE:
        add("detectable_content:number_placeholders", {"num_placeholders": 1}, e)

    # ---------------------------------------------------------------- detectable_content:postscript
    markers = ["P.S.", "P.P.S", "PS:", "Note:", "P.S", "p.s.", "Postscript:"]
    variants = [
        "P.S. see you",
        "p.s. see you",
        "P. S. see you",
        "P.S see you",
        "PS: see you",
        "P.P.S see",
        "P. P. S see",
        "p.p.s.",
        "P.P.S.",
        "Note: hi",
        "note: hi",
        "NOTE:",
        "P.  S. wide",
        "P.\nS. nl",
        "Postscript: yes",
        "PPS no",
        "See you.",
    ]
    for _ in range(230):
        m = R.choice(markers)
        v = R.choice(variants)
        text = sents(R.randint(1, 3)) + R.choice(["\n\n", "\n", " "]) + v
        dev = "regex_metacharacters_in_kwargs" if m in ("P.S", "p.s.") else None
        add("detectable_content:postscript", {"postscript_marker": m}, decorate(text), dev)
    for e in EDGE:
        add("detectable_content:postscript", {"postscript_marker": R.choice(["P.S.", "P.P.S"])}, e)

    # ---------------------------------------------------------------- detectable_format:number_bullet_lists
    items = [
        "* item",
        "*item",
        "** bold",
        "**bold**",
        "- dash",
        "-dash",
        "  * indented",
        "\t- tab",
        "+ plus",
        "1. one",
        "---",
        "* ",
        "*",
        "-",
        " *\n",
        "*\nnext",
        "• dot",
        "*** rule",
        "* * *",
    ]
    for _ in range(260):
        n = R.randint(1, 5)
        lines = [R.choice(items) for _ in range(max(0, n + R.choice([-1, 0, 0, 1])))]
        for _ in range(R.randint(0, 3)):
            lines.insert(R.randint(0, len(lines)), R.choice(["", " ", sent(), "  ", "\t"]))
        text = "\n".join(lines)
        if R.random() < 0.3:
            text = sent() + "\n\n" + text
        add("detectable_format:number_bullet_lists", {"num_bullets": n}, text)
    for e in EDGE:
        add("detectable_format:number_bullet_lists", {"num_bullets": R.randint(1, 2)}, e)

    # ---------------------------------------------------------------- detectable_format:constrained_response
    opts = [
        "My answer is yes.",
        "My answer is no.",
        "My answer is maybe.",
        "My answer is yes",
        "my answer is no.",
        "My answer is Yes.",
        "My  answer is no.",
        "My answer is maybe!",
        "Answer: yes.",
    ]
    for _ in range(200):
        text = R.choice(["", sent() + " "]) + R.choice(opts) + R.choice(["", " " + sent()])
        add("detectable_format:constrained_response", {}, decorate(text))
    for e in EDGE:
        add("detectable_format:constrained_response", {}, e)

    # ---------------------------------------------------------------- detectable_format:number_highlighted_sections
    hl = [
        "*one*",
        "**two**",
        "* *",
        "**",
        "***three***",
        "*a\nb*",
        "*x* *y*",
        "** **",
        "*open",
        "****",
        "*multi word*",
        "**bold** text",
        "* item",
        "*_x_*",
        "`*code*`",
    ]
    for _ in range(240):
        n = R.randint(1, 4)
        toks = w(R.randint(2, 8)).split() + [R.choice(hl) for _ in range(max(0, n + R.choice([-1, 0, 0, 1, 2])))]
        R.shuffle(toks)
        add(
            "detectable_format:number_highlighted_sections",
            {"num_highlights": n},
            decorate(R.choice([" ", "\n"]).join(toks)),
        )
    for e in EDGE:
        add("detectable_format:number_highlighted_sections", {"num_highlights": 1}, e)

    # ---------------------------------------------------------------- detectable_format:multiple_sections
    for _ in range(230):
        sp = R.choice(["Section", "SECTION", "Part", "Chapter", "PARAGRAPH"])
        n = R.randint(1, 5)
        k = max(0, n + R.choice([-1, 0, 0, 1]))
        heads = [
            R.choice(
                [
                    f"{sp} {i}",
                    f"{sp}{i}",
                    f"{sp.lower()} {i}",
                    f"{sp} {i}:",
                    f"{sp} X",
                    f"{sp}s {i}",
                    f"# {sp} {i}",
                    f"{sp}  {i}",
                    f"{sp}\n{i}",
                ]
            )
            for i in range(1, k + 1)
        ]
        text = "\n".join(h + "\n" + sents(R.randint(1, 2)) for h in heads)
        add(
            "detectable_format:multiple_sections",
            {"section_spliter": R.choice([sp, " " + sp]), "num_sections": n},
            decorate(text),
        )
    for e in EDGE:
        add("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 1}, e)

    # ---------------------------------------------------------------- detectable_format:json_format
    js = [
        '{"a": 1}',
        "[1, 2, 3]",
        '"str"',
        "42",
        "null",
        "true",
        "NaN",
        "Infinity",
        '{"a": 1,}',
        "{'a': 1}",
        '{"a": [1, {"b": null}]}',
        "",
        "{",
        '{"a": 1} trailing',
        "1e999",
        '"\\ud800"',
        '{"k": "v"}\n{"k": 2}',
    ]
    for _ in range(220):
        body = R.choice(js)
        wrap = R.choice(
            [
                "{}",
                "```json\n{}\n```",
                "```JSON\n{}\n```",
                "```Json\n{}\n```",
                "```\n{}\n```",
                "```python\n{}\n```",
                " {} ",
                "Here: {}",
                "```json {}```",
                "{}\n```",
                "```json\n{}",
            ]
        )
        add("detectable_format:json_format", {}, wrap.replace("{}", body, 1) if wrap != "{}" else body)
    for e in EDGE:
        add("detectable_format:json_format", {}, e)
    for depth in (1500, 5000):
        add("detectable_format:json_format", {}, "[" * depth + "]" * depth, "json_nesting_depth")

    # ---------------------------------------------------------------- detectable_format:title
    titles = [
        "<<Title>>",
        "<<>>",
        "<< >>",
        "<<<Deep>>>",
        "<<a\nb>>",
        "<<x>> <<y>>",
        "<<  spaced  >>",
        "<Single>",
        "<<open",
        "close>>",
        "<<>>>",
        "<<<>>",
        "<<t>>>",
        ">>x<<",
        "<<\t>>",
        "《Title》",
    ]
    for _ in range(200):
        text = R.choice(["", sent() + "\n"]) + R.choice(titles) + R.choice(["", "\n" + sents(2)])
        add("detectable_format:title", {}, decorate(text))
    for e in EDGE:
        add("detectable_format:title", {}, e)

    # ---------------------------------------------------------------- combination:two_responses
    for _ in range(220):
        a, b = sent(), R.choice([sent(), None])
        b = a if b is None else b
        sep = R.choice(["******", "\n******\n", "*****", "*******", "******\n******", " ****** ", "***"])
        text = a + sep + b
        if R.random() < 0.2:
            text = R.choice(["******", "\n"]) + text
        if R.random() < 0.2:
            text = text + R.choice(["******", "\n******\n", sep + sent()])
        add("combination:two_responses", {}, text)
    for e in EDGE:
        add("combination:two_responses", {}, e)

    # ---------------------------------------------------------------- combination:repeat_prompt
    for _ in range(200):
        p = sent() + " " + sent()
        v = R.choice([p, p.upper(), " " + p, p[:-1], "Sure! " + p, p + " Answer.", '"' + p, p.replace(" ", "  ", 1)])
        add(
            "combination:repeat_prompt",
            {"prompt_to_repeat": R.choice([p, p + " ", "\n" + p])},
            decorate(v + R.choice(["", "\n\n" + sent()])),
        )
    for e in EDGE:
        add("combination:repeat_prompt", {"prompt_to_repeat": "Write a poem."}, e)

    # ---------------------------------------------------------------- startend:end_checker
    ends = ["Any other questions?", "Is there anything else I can help with?", "Let me know.", "Peace!"]
    for _ in range(220):
        e = R.choice(ends)
        tail = R.choice(
            [
                e,
                e.lower(),
                e.upper(),
                e + " ",
                e + '"',
                '"' + e + '"',
                e + ".",
                e[:-1],
                e + "\n\n",
                e + " Thanks.",
                e + "''",
                e + '" ',
                e + "**",
            ]
        )
        add(
            "startend:end_checker",
            {"end_phrase": R.choice([e, " " + e, e + " "])},
            sents(R.randint(0, 3)) + R.choice([" ", "\n"]) + tail,
        )
    for e in EDGE:
        add("startend:end_checker", {"end_phrase": "yes."}, e)

    # ---------------------------------------------------------------- startend:quotation
    for _ in range(200):
        body = sent()
        text = R.choice(
            [
                f'"{body}"',
                f' "{body}" ',
                f'"{body}',
                f'{body}"',
                f"'{body}'",
                f"“{body}”",
                f'"{body}"\n',
                '""',
                '"',
                f'"{body}".',
                f'```"{body}"```',
            ]
        )
        add("startend:quotation", {}, text)
    for e in EDGE:
        add("startend:quotation", {}, e)

    # ---------------------------------------------------------------- change_case:capital_word_frequency
    caps = [
        "NASA",
        "OK",
        "I",
        "U.S.",
        "COVID-19",
        "DON'T",
        "A",
        "ABC123",
        "X.Y.Z.",
        "HELLO,",
        "WORLD!",
        "McD",
        "İSTANBUL",
        "ÉCOLE",
        "TV's",
        "(BIG)",
        "B2B",
        "AI-driven",
        "**BOLD**",
        "E.G.",
    ]
    for _ in range(260):
        n = R.randint(1, 8)
        toks = w(R.randint(2, 10)).split() + [R.choice(caps) for _ in range(max(0, n + R.choice([-2, -1, 0, 0, 1, 2])))]
        R.shuffle(toks)
        add(
            "change_case:capital_word_frequency",
            {"capital_frequency": n, "capital_relation": R.choice(REL)},
            decorate(" ".join(toks)),
        )
    for e in EDGE:
        add("change_case:capital_word_frequency", {"capital_frequency": 1, "capital_relation": R.choice(REL)}, e)

    # ---------------------------------------------------------------- change_case:english_capital / lowercase
    texts = (
        [sents(R.randint(1, 4)) for _ in range(30)]
        + list(langs.values())
        + ["123 456", "x", "ok ok", "Das ist gut und schön.", "c'est la vie mes amis"]
    )
    for cid, fn in (("change_case:english_capital", str.upper), ("change_case:english_lowercase", str.lower)):
        for _ in range(200):
            t = R.choice(texts)
            t = fn(t) if R.random() < 0.7 else t
            if R.random() < 0.15:
                t = t + R.choice([" X", " x", " 42", " İ", " ß"])
            add(cid, {}, decorate(t) if R.random() < 0.3 else t)
        for e in EDGE:
            add(cid, {}, e)

    # ---------------------------------------------------------------- punctuation:no_comma
    for _ in range(180):
        t = sents(R.randint(1, 3))
        if R.random() < 0.5:
            i = R.randint(0, len(t))
            t = t[:i] + R.choice([",", "，", "、", "‚", ",,"]) + t[i:]
        add("punctuation:no_comma", {}, decorate(t))
    for e in EDGE:
        add("punctuation:no_comma", {}, e)

    # ---------------------------------------------------------------- random markup soup for the scanners
    alphabet = [
        "*",
        "*",
        "-",
        "\n",
        "\n",
        " ",
        "\t",
        "[",
        "]",
        "<",
        "<",
        ">",
        ">",
        '"',
        ".",
        "a",
        "Section",
        "1",
        "P.S.",
        "******",
        "***",
        "\r",
        "\u00a0",
        "\x0b",
        "b c",
    ]
    soup_kwargs = {
        "detectable_format:number_bullet_lists": lambda: {"num_bullets": R.randint(1, 4)},
        "detectable_format:number_highlighted_sections": lambda: {"num_highlights": R.randint(1, 4)},
        "detectable_content:number_placeholders": lambda: {"num_placeholders": R.randint(1, 4)},
        "detectable_format:title": lambda: {},
        "length_constraints:number_paragraphs": lambda: {"num_paragraphs": R.randint(1, 4)},
        "combination:two_responses": lambda: {},
        "detectable_format:multiple_sections": lambda: {"section_spliter": "Section", "num_sections": R.randint(1, 3)},
        "length_constraints:nth_paragraph_first_word": lambda: {
            "num_paragraphs": 2,
            "nth_paragraph": R.randint(1, 2),
            "first_word": "a",
        },
        "startend:quotation": lambda: {},
        "detectable_content:postscript": lambda: {"postscript_marker": "P.S."},
        "change_case:capital_word_frequency": lambda: {
            "capital_frequency": R.randint(1, 3),
            "capital_relation": R.choice(REL),
        },
        "length_constraints:number_sentences": lambda: {"num_sentences": R.randint(1, 4), "relation": R.choice(REL)},
    }
    for id_, make_kw in soup_kwargs.items():
        for _ in range(90):
            add(id_, make_kw(), "".join(R.choice(alphabet) for _ in range(R.randint(1, 40))))

    return out


def main(path: str) -> None:
    rows = pairs()
    with open(path, "w", encoding="utf-8") as f:
        for n, row in enumerate(rows):
            f.write(json.dumps({"n": n, **row}, ensure_ascii=False) + "\n")
    print(f"{len(rows)} pairs -> {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ifeval_corpus.jsonl")
