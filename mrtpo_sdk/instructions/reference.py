"""Reference completions that satisfy every constraint of an example, built by code.

The embedded default policy is warm-started on references, and ``lint``/``check`` score them, so each reference must
earn full reward from every constraint verifier. :func:`build_reference` lays out a plain answer about the example's
topic (title, paragraphs of filler sentences, bullets, sections, postscript, ...), adds what each constraint asks
for, applies the whole-text transforms (case, quotation marks, two responses), and then checks the result with the
checkers themselves, trying larger or smaller bodies until every constraint holds.

Not every combination can be satisfied (``english_capital`` with ``english_lowercase``, a keyword that is also
forbidden); :func:`build_reference` raises :class:`ReferenceError` for those, and the data generator only keeps
examples whose reference passes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import MRTPOError
from ._check import check

__all__ = ["build_reference", "reference_for", "ReferenceError", "FILLER", "FOREIGN_FILLER"]


class ReferenceError(MRTPOError):
    """No reference completion satisfying all constraints was found."""


FILLER = [
    "The {t} has a long and quiet history.",
    "Many people enjoy learning about the {t}.",
    "Each {t} tells a small story of its own.",
    "We often think about the {t} on calm evenings.",
    "Good habits make the {t} easier to understand.",
    "Children ask simple questions about the {t}.",
    "Old books describe the {t} in careful detail.",
    "A patient mind sees more in the {t}.",
    "The {t} changes slowly with every season.",
    "Some friends prefer to talk about the {t} over tea.",
    "Small steps help us care for the {t}.",
    "The {t} rewards those who look closely.",
    "Local guides know the {t} very well.",
    "Simple words can explain the {t} clearly.",
    "Our town has a special bond with the {t}.",
    "Visitors remember the {t} for years.",
    "The {t} depends on steady work and care.",
    "Nobody can know everything about the {t}.",
    "Stories about the {t} travel from home to home.",
    "Quiet mornings are perfect for thinking about the {t}.",
    "The {t} brings people together in surprising ways.",
    "Writers return to the {t} again and again.",
    "Honest effort makes the {t} better for everyone.",
    "Teachers use the {t} as a helpful example.",
    "The {t} looks different from far away.",
    "Curious minds find new ideas in the {t}.",
    "Families share memories of the {t}.",
    "The {t} is worth a second look.",
    "Careful planning keeps the {t} in good shape.",
    "Young and old alike value the {t}.",
    "A short walk reveals much about the {t}.",
    "The {t} holds lessons for patient learners.",
    "Every culture has its own view of the {t}.",
    "Museums often display items linked to the {t}.",
    "The future of the {t} depends on us.",
    "Friendly neighbors gather to discuss the {t}.",
    "Bright colors remind many of the {t}.",
    "The {t} inspires music and poems.",
    "Sound advice helps anyone enjoy the {t}.",
    "Hope grows when we protect the {t}.",
]

FOREIGN_FILLER = {
    "fr": [
        "Le soleil brille sur la petite ville ce matin.",
        "Nous aimons marcher dans le parc avec nos amis.",
        "La maison est grande et très calme le soir.",
        "Les enfants jouent dans le jardin après l'école.",
        "Mon frère lit un livre intéressant chaque semaine.",
        "Il fait beau et nous allons au marché.",
        "La rivière coule doucement près du vieux pont.",
        "Nous préparons un bon repas pour la famille.",
        "Les oiseaux chantent dans les arbres du jardin.",
        "Elle écrit une longue lettre à sa grand-mère.",
    ],
    "de": [
        "Die Sonne scheint heute über der kleinen Stadt.",
        "Wir gehen gern mit unseren Freunden im Park spazieren.",
        "Das Haus ist groß und am Abend sehr ruhig.",
        "Die Kinder spielen nach der Schule im Garten.",
        "Mein Bruder liest jede Woche ein spannendes Buch.",
        "Es ist schön und wir gehen auf den Markt.",
        "Der Fluss fließt langsam unter der alten Brücke.",
        "Wir kochen ein gutes Essen für die Familie.",
        "Die Vögel singen in den Bäumen des Gartens.",
        "Sie schreibt ihrer Großmutter einen langen Brief.",
    ],
    "es": [
        "El sol brilla sobre la pequeña ciudad esta mañana.",
        "Nos gusta caminar por el parque con nuestros amigos.",
        "La casa es grande y muy tranquila por la noche.",
        "Los niños juegan en el jardín después de la escuela.",
        "Mi hermano lee un libro interesante cada semana.",
        "Hace buen tiempo y vamos al mercado.",
        "El río corre despacio junto al viejo puente.",
        "Preparamos una buena comida para la familia.",
        "Los pájaros cantan en los árboles del jardín.",
        "Ella escribe una carta larga a su abuela.",
    ],
    "it": [
        "Il sole splende sulla piccola città questa mattina.",
        "Ci piace camminare nel parco con i nostri amici.",
        "La casa è grande e molto tranquilla la sera.",
        "I bambini giocano in giardino dopo la scuola.",
        "Mio fratello legge un libro interessante ogni settimana.",
        "Fa bel tempo e andiamo al mercato.",
        "Il fiume scorre piano vicino al vecchio ponte.",
        "Prepariamo un buon pranzo per la famiglia.",
        "Gli uccelli cantano sugli alberi del giardino.",
        "Lei scrive una lunga lettera alla nonna.",
    ],
    "pt": [
        "O sol brilha sobre a pequena cidade esta manhã.",
        "Gostamos de caminhar no parque com os nossos amigos.",
        "A casa é grande e muito tranquila à noite.",
        "As crianças brincam no jardim depois da escola.",
        "O meu irmão lê um livro interessante todas as semanas.",
        "Está bom tempo e vamos ao mercado.",
        "O rio corre devagar perto da velha ponte.",
        "Preparamos uma boa refeição para a família.",
        "Os pássaros cantam nas árvores do jardim.",
        "Ela escreve uma carta longa para a avó.",
    ],
}

_PLACEHOLDERS = ["name", "place", "date", "time", "address", "amount", "city", "phone", "email", "company"]
_CAPS = ["NOTE", "KEY", "FACT", "TIP", "MAIN", "TRUE", "GOOD", "BEST", "REAL", "CORE", "BIG", "NEW"]
_PALINDROMES = ["level", "radar", "civic", "refer", "kayak", "madam", "redder", "reviver", "rotator", "racecar"]
_EXCLAIM = ["What a view!", "How lovely!", "Truly wonderful!", "So much to see!", "What a day!", "How calm!"]
_SIZES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 18, 22, 27, 33, 40, 50)


def _pool(cons: Mapping[str, Mapping[str, Any]], topic: str) -> list[str]:
    """Filler sentences that already respect the 'negative' constraints (forbidden words, letters, lengths)."""
    lang = cons.get("language:response_language", {}).get("language", "en")
    if lang != "en":
        if lang not in FOREIGN_FILLER:
            raise ReferenceError(f"no filler text in language {lang!r}")
        sentences = list(FOREIGN_FILLER[lang])
    else:
        sentences = [s.format(t=topic) for s in FILLER]

    def ok(s: str) -> bool:
        for cid in (
            "keywords:forbidden_words",
            "keywords:letter_frequency",
            "keywords:frequency",
            "words:max_word_length",
            "change_case:capital_word_frequency",
        ):
            if cid not in cons:
                continue
            kw = cons[cid]
            if cid == "keywords:letter_frequency" and kw["let_relation"] == "at least":
                continue
            if cid == "keywords:frequency" and kw["relation"] == "at least":
                continue
            if cid == "change_case:capital_word_frequency" and kw["capital_relation"] == "at least":
                continue
            if not check(cid, kw, s):
                return False
        return True

    return [s for s in sentences if ok(s)]


def _render(cons: Mapping[str, Mapping[str, Any]], topic: str, n: int, variant: int) -> str:
    pool = _pool(cons, topic)
    if not pool:
        raise ReferenceError("every filler sentence breaks a constraint")
    cursor = [variant * 7]

    def take(k: int) -> list[str]:
        out = []
        for _ in range(k):
            out.append(pool[cursor[0] % len(pool)])
            cursor[0] += 1
        return out

    if "detectable_format:constrained_response" in cons:
        return "My answer is yes."

    extras: list[str] = []  # sentences that carry what a constraint asks for
    if "keywords:existence" in cons:
        extras.append("This answer mentions " + " and ".join(cons["keywords:existence"]["keywords"]) + ".")
    kf = cons.get("keywords:frequency")
    if kf and kf["relation"] == "at least":
        extras.append(" ".join([kf["keyword"].strip()] * kf["frequency"]).capitalize() + ".")
    lf = cons.get("keywords:letter_frequency")
    if lf and lf["let_relation"] == "at least":
        extras.append(" ".join([lf["letter"] * 3] * math.ceil(lf["let_frequency"] / 3)).capitalize() + ".")
    cf = cons.get("change_case:capital_word_frequency")
    if cf and cf["capital_relation"] == "at least":
        words = [_CAPS[i % len(_CAPS)] for i in range(cf["capital_frequency"])]
        extras.append("Remember these words " + " ".join(words) + ".")
    if "detectable_content:number_placeholders" in cons:
        k = cons["detectable_content:number_placeholders"]["num_placeholders"]
        extras.append("Fill in " + " and ".join(f"[{_PLACEHOLDERS[i % len(_PLACEHOLDERS)]}]" for i in range(k)) + ".")
    if "detectable_format:number_highlighted_sections" in cons:
        k = cons["detectable_format:number_highlighted_sections"]["num_highlights"]
        extras.append("Remember " + " and ".join(f"*point {_NUM[i]}*" for i in range(k)) + ".")
    if "count:numbers" in cons:
        k = cons["count:numbers"]["num_numbers"]
        extras.append("The numbers are " + " and ".join(str(11 * (i + 1)) for i in range(k)) + ".")
    if "format:parentheses" in cons:
        k = cons["format:parentheses"]["num_parentheses"]
        extras.append("Some notes " + " ".join(f"(remark {_NUM[i]})" for i in range(k)) + " matter.")
    if "words:palindrome" in cons:
        m = cons["words:palindrome"]["min_length"]
        pal = next((p for p in _PALINDROMES if len(p) >= m), None)
        if pal is None:
            raise ReferenceError(f"no palindrome of {m} letters")
        extras.append(f"We saw a {pal} there.")
    if "punctuation:exclamation_count" in cons:
        k = cons["punctuation:exclamation_count"]["num_exclamations"]
        extras.extend(_EXCLAIM[i % len(_EXCLAIM)] for i in range(k))

    # paragraphs
    paragraphs = 1
    psep = " "
    if "length_constraints:number_paragraphs" in cons:
        paragraphs, psep = cons["length_constraints:number_paragraphs"]["num_paragraphs"], "\n\n***\n\n"
    elif "length_constraints:nth_paragraph_first_word" in cons:
        paragraphs, psep = cons["length_constraints:nth_paragraph_first_word"]["num_paragraphs"], "\n\n"
    sections = cons.get("detectable_format:multiple_sections")
    if sections:
        paragraphs = max(paragraphs, sections["num_sections"])
        if psep == " ":
            psep = "\n\n"
    lines_mode = "format:line_count" in cons
    ssep = "\n" if lines_mode else " "
    bodies = [take(n) for _ in range(paragraphs)]
    bodies[0] = extras + bodies[0]
    nth = cons.get("length_constraints:nth_paragraph_first_word")
    if nth:
        bodies[nth["nth_paragraph"] - 1].insert(0, f"{nth['first_word'].capitalize()} comes first in this part.")
    texts = [ssep.join(b) for b in bodies]
    if sections:
        spl = sections["section_spliter"].strip()
        texts = [f"{spl} {i + 1}\n{t}" for i, t in enumerate(texts)]
    if "detectable_format:number_bullet_lists" in cons:
        k = cons["detectable_format:number_bullet_lists"]["num_bullets"]
        texts[0] += "\n" + "\n".join("* " + s for s in take(k))
    if "format:numbered_list" in cons:
        k = cons["format:numbered_list"]["num_items"]
        texts[0] += "\n" + "\n".join(f"{i + 1}. {s}" for i, s in enumerate(take(k)))
    body = psep.join(texts) if not lines_mode else "\n".join(texts)

    head: list[str] = []
    if "words:first_word" in cons:
        head.append(f"{cons['words:first_word']['first_word'].strip().capitalize()} is where this answer begins.")
    if "detectable_format:title" in cons:
        head.append(f"<<{topic.title()}>>")
    text = "\n".join(head + [body]) if head else body
    if "combination:repeat_prompt" in cons:
        text = cons["combination:repeat_prompt"]["prompt_to_repeat"].strip() + "\n\n" + text
    if "detectable_content:postscript" in cons:
        text += "\n" + cons["detectable_content:postscript"]["postscript_marker"].strip() + " " + take(1)[0]
    if "words:last_word" in cons:
        text += ("\n" if lines_mode else " ") + f"The final word is {cons['words:last_word']['last_word'].strip()}."
    if "startend:end_checker" in cons:
        text += ("\n" if lines_mode else " ") + cons["startend:end_checker"]["end_phrase"].strip()
    if "detectable_format:json_format" in cons:
        text = json.dumps({"answer": text}, ensure_ascii=False)
    if "combination:two_responses" in cons:
        other = " ".join(take(max(1, n)))
        text = text + "\n******\n" + (other if other.strip() != text.strip() else other + " " + take(1)[0])
    if "change_case:english_lowercase" in cons:
        text = text.lower()
    if "change_case:english_capital" in cons:
        text = text.upper()
    if "startend:quotation" in cons:
        text = f'"{text}"'
    return text


_NUM = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


def build_reference(
    constraints: Sequence[tuple[str, Mapping[str, Any]]], topic: str = "topic", *, variant: int = 0
) -> str:
    """A completion about ``topic`` that follows every ``(constraint id, kwargs)`` (checked with :func:`check`).

    Args:
        constraints: the example's constraints (normalized kwargs).
        topic: a noun phrase the filler sentences talk about.
        variant: picks a different rotation of filler sentences (deterministic).

    Raises:
        ReferenceError: no layout satisfies all constraints (conflicting constraints).
    """
    cons: dict[str, Mapping[str, Any]] = {}
    for cid, kw in constraints:
        if cid in cons:
            raise ReferenceError(f"constraint {cid!r} appears twice")
        cons[cid] = kw
    failing: list[str] = []
    for n in _SIZES:
        text = _render(cons, topic, n, variant)
        # both semantics: the reference earns the training reward and IFEval's verdict
        failing = [
            cid
            for cid, kw in cons.items()
            if not (check(cid, kw, text) and check(cid, kw, text, semantics="official"))
        ]
        if not failing:
            return text
    raise ReferenceError(f"no reference satisfies {failing} together with the other constraints")


def reference_for(example: Any) -> str:
    """:func:`build_reference` for an :class:`~mrtpo_sdk.instructions.IFExample` (topic from ``meta["topic"]``,
    variant from the id, so the result is deterministic).

    Raises:
        ReferenceError: the example's constraints cannot all be satisfied by the builder.
    """
    import zlib

    topic = str(example.meta.get("topic") or "topic")
    variant = zlib.crc32(str(example.id).encode("utf-8")) % 97
    try:
        return build_reference([(c.id, c.kwargs) for c in example.constraints], topic, variant=variant)
    except ReferenceError as exc:
        raise ReferenceError(f"example {example.id!r}: {exc}") from None
