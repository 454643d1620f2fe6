"""Adversarial search on the constraint verifiers: completions that earn reward without doing what the constraint
asks (reward holes), and completions that do what it asks but earn nothing (refused correct answers).

Each finding is a named case below: ``official`` (IFEval's verdict, kept for comparable numbers) gives the wrong
verdict, ``training`` (the rewards' default) the right one. The hypothesis searches generate many more inputs of
each family, bounded to a few seconds each. docs/instruction_following.md has the table of every difference.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mrtpo_sdk.instructions import check, compose_example, constraint_ids, constraint_verifier, describe, echoes_of

from .if_kwargs_examples import EXAMPLE_KWARGS

BOUNDED = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ----------------------------------------------------------------------------------------------- findings
# (name, constraint id, kwargs, completion): official pays for it, training does not
HOLES = [
    ("bullets_rule_counts_as_bullet", "detectable_format:number_bullet_lists", {"num_bullets": 2}, "* a\n---"),
    ("bullets_italic_line_counts", "detectable_format:number_bullet_lists", {"num_bullets": 2}, "*a* b\n*c* d"),
    ("highlights_multiplication", "detectable_format:number_highlighted_sections", {"num_highlights": 2},
     "1 * 2 * 3 * 4 * 5"),
    ("highlights_bold_italic_twice", "detectable_format:number_highlighted_sections", {"num_highlights": 2},
     "A ***key*** idea."),
    ("nth_paragraph_leading_blank_shifts_index", "length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"}, "\n\nThen a.\n\nB."),
    ("json_bare_number", "detectable_format:json_format", {}, "1"),
    ("json_nan_is_not_json", "detectable_format:json_format", {}, "NaN"),
    ("json_empty_object", "detectable_format:json_format", {}, "{}"),
    ("keyword_inside_longer_word", "keywords:existence", {"keywords": ["cat"]}, "I concatenate strings."),
    ("keyword_frequency_inside_words", "keywords:frequency", {"keyword": "art", "frequency": 2, "relation": "at least"},
     "Start the party."),
    ("postscript_mentioned_mid_sentence", "detectable_content:postscript", {"postscript_marker": "P.S."},
     "I will add a P.S. later."),
    ("postscript_empty", "detectable_content:postscript", {"postscript_marker": "P.S."}, "Body.\nP.S."),
    ("two_responses_same_but_case", "combination:two_responses", {}, "Tea.\n******\ntea."),
    ("two_responses_same_but_punctuation", "combination:two_responses", {}, "Tea.\n******\nTea!"),
    ("forbidden_word_in_cyrillic_lookalikes", "keywords:forbidden_words", {"forbidden_words": ["coffee"]},
     "I like \u0441\u043effee."),
    ("forbidden_word_in_greek_lookalikes", "keywords:forbidden_words", {"forbidden_words": ["coffee"]},
     "I like c\u03bfffee."),
    ("repeat_then_near_copy_of_the_request", "combination:repeat_prompt",
     {"prompt_to_repeat": "Write a poem about tea."}, "Write a poem about tea. Write a poem about teas."),
    ("fullwidth_comma", "punctuation:no_comma", {}, "Tea\uff0c coffee and milk"),
    ("low_quote_comma_lookalike", "punctuation:no_comma", {}, "Tea\u201a coffee and milk"),
    ("title_without_text", "detectable_format:title", {}, "Tea is hot. <<***>>"),
    ("empty_placeholders", "detectable_content:number_placeholders", {"num_placeholders": 2}, "Hi [] and [ ]."),
    ("language_no_letters", "language:response_language", {"language": "fr"}, "12345"),
    ("end_phrase_alone", "startend:end_checker", {"end_phrase": "Any other questions?"}, "Any other questions?"),
    ("repeat_without_answer", "combination:repeat_prompt", {"prompt_to_repeat": "Write a poem about tea."},
     "Write a poem about tea."),
    ("quotation_then_unquoted_then_quotation", "startend:quotation", {}, '"Tea" is hot and "coffee"'),
    ("quotation_then_unquoted_text", "startend:quotation", {}, '"Tea is hot."\n\nExtra unquoted."'),
    ("quotation_empty", "startend:quotation", {}, '""'),
    ("quotation_markup_only", "startend:quotation", {}, '" *** "'),
    ("sections_mentioned_mid_sentence", "detectable_format:multiple_sections",
     {"section_spliter": "Section", "num_sections": 2}, "See Section 1 and Section 2."),
    ("sections_more_than_asked", "detectable_format:multiple_sections",
     {"section_spliter": "Section", "num_sections": 2}, "Section 1\na\nSection 2\nb\nSection 3\nc"),
    ("constrained_both_options", "detectable_format:constrained_response", {}, "My answer is yes. My answer is no."),
    ("forbidden_phrase_across_a_line_break", "keywords:forbidden_words", {"forbidden_words": ["ice cream"]},
     "I like ice\ncream."),
    ("word_range_contraction_counts_twice", "count:word_count_range", {"min_words": 3, "max_words": 5}, "don't stop"),
    ("words_punctuation_only", "length_constraints:number_words", {"num_words": 50, "relation": "less than"}, "..."),
]  # fmt: skip

# (name, constraint id, kwargs, completion): official refuses it, though the prompt sentence allows it
REFUSED = [
    ("nth_paragraph_blank_line_with_spaces", "length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"}, "A.\n \nThen b."),
    ("nth_paragraph_bold_first_word", "length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"}, "A.\n\n**Then** b."),
    ("nth_paragraph_colon_after_word", "length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"}, "A.\n\nThen: b."),
    ("nth_paragraph_two_blank_lines", "length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"}, "A.\n\n\n\n\nThen b."),
    ("nth_paragraph_crlf", "length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"}, "A.\r\n\r\nThen b."),
    ("divider_with_spaces", "length_constraints:number_paragraphs", {"num_paragraphs": 2}, "A.\n* * *\nB."),
    ("double_divider_empty_paragraph", "length_constraints:number_paragraphs", {"num_paragraphs": 2},
     "A.\n***\n***\nB."),
    ("bold_italic_is_no_divider", "length_constraints:number_paragraphs", {"num_paragraphs": 2},
     "A ***bold*** claim.\n***\nB."),
    ("contraction_is_one_word", "length_constraints:number_words", {"num_words": 4, "relation": "less than"},
     "I don't know."),
    ("hyphenated_is_one_word", "length_constraints:number_words", {"num_words": 4, "relation": "less than"},
     "A well-known fact."),
    ("uppercase_english_detected_lowercased", "change_case:english_capital", {}, "MY ANSWER IS YES."),
    ("plus_bullets", "detectable_format:number_bullet_lists", {"num_bullets": 2}, "+ a\n+ b"),
    ("unicode_bullets", "detectable_format:number_bullet_lists", {"num_bullets": 2}, "\u2022 a\n\u2022 b"),
    ("section_title_case", "detectable_format:multiple_sections", {"section_spliter": "SECTION", "num_sections": 2},
     "Section 1\na\nSection 2\nb"),
    ("end_phrase_in_bold", "startend:end_checker", {"end_phrase": "Any other questions?"},
     "Tea. **Any other questions?**"),
    ("end_phrase_line_break_inside", "startend:end_checker", {"end_phrase": "Any other questions?"},
     "Tea. Any other\nquestions?"),
    ("curly_quotation_marks", "startend:quotation", {}, "\u201cTea is hot.\u201d"),
    ("capital_contraction_is_one_word", "change_case:capital_word_frequency",
     {"capital_frequency": 2, "capital_relation": "less than"}, "DON'T stop."),
    ("option_lower_case", "detectable_format:constrained_response", {}, "my answer is yes."),
    ("option_without_period", "detectable_format:constrained_response", {}, "My answer is no"),
    ("keyword_frequency_whole_words", "keywords:frequency", {"keyword": "art", "frequency": 2, "relation": "less than"},
     "Start the party with art."),
    ("two_responses_spaced_separator", "combination:two_responses", {}, "Tea.\n* * * * * *\nCoffee."),
]  # fmt: skip


@pytest.mark.parametrize(("cid", "kw", "text"), [c[1:] for c in HOLES], ids=[c[0] for c in HOLES])
def test_hole_pays_officially_and_not_in_training(cid: str, kw: dict, text: str) -> None:
    assert check(cid, kw, text, semantics="official") is True
    assert check(cid, kw, text) is False  # training is the default


@pytest.mark.parametrize(("cid", "kw", "text"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_allowed_variant_refused_officially_and_accepted_in_training(cid: str, kw: dict, text: str) -> None:
    assert check(cid, kw, text, semantics="official") is False
    assert check(cid, kw, text) is True


def test_finding_names_are_in_the_docs() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "instruction_following.md").read_text(encoding="utf-8")
    missing = [name for name, *_ in HOLES + REFUSED if f"`{name}`" not in doc]
    assert missing == []


# ----------------------------------------------------------------------------------------------- searches
SEEN, ALL = constraint_ids(unseen=False), constraint_ids()
MARKUP = st.text(alphabet=" \n\t*-_#>[](){}<>\"'`.,;:!?~=+|/\\", max_size=40)


def _example(cid: str, base: str = "Write a short note about the river."):
    return compose_example("adv", base, [(cid, EXAMPLE_KWARGS[cid])], topic="river")


@BOUNDED
@given(junk=MARKUP, cid=st.sampled_from(ALL))
def test_search_markup_only_completions_earn_nothing(junk: str, cid: str) -> None:
    # no letter or digit: empty, whitespace, punctuation, markdown -- does not attempt the task
    assert check(cid, EXAMPLE_KWARGS[cid], junk) is False


def _mutate_echo(text: str, case: str, ws: str) -> str:
    text = {"same": text, "upper": text.upper(), "lower": text.lower()}[case]
    return ws.join(text.split(" "))


@BOUNDED
@given(
    cid=st.sampled_from(ALL),
    what=st.sampled_from(["prompt", "sentence", "both"]),
    case=st.sampled_from(["same", "upper", "lower"]),
    ws=st.sampled_from([" ", "  ", "\n", " \t"]),
    junk=MARKUP,
)
def test_search_prompt_or_block_pasted_back_earns_nothing(cid: str, what: str, case: str, ws: str, junk: str) -> None:
    ex = _example(cid)
    sentence = ex.sentence(0)
    pasted = {"prompt": ex.prompt, "sentence": sentence, "both": ex.prompt + "\n" + sentence}[what]
    completion = junk + _mutate_echo(pasted, case, ws) + junk
    verifier = constraint_verifier(1)
    assert verifier.score(ex, completion).reward == 0.0, completion


def test_pasted_prompt_paid_officially_for_these_constraint_types() -> None:
    # the hole the search above closes: the prompt itself, pasted back as the completion, earns reward 1 on these
    # types under official semantics (EXAMPLE_KWARGS; the base instruction "Write a short note about the river.")
    official = constraint_verifier(1, semantics="official")
    paid = sorted(cid for cid in ALL if official.score(_example(cid), _example(cid).prompt).reward == 1.0)
    assert paid == [
        "combination:two_responses", "count:unique_words", "detectable_content:postscript",
        "detectable_format:constrained_response", "detectable_format:multiple_sections",
        "detectable_format:number_bullet_lists", "detectable_format:title", "format:no_digits", "keywords:existence",
        "keywords:frequency", "length_constraints:number_paragraphs", "words:last_word", "words:palindrome",
    ]  # fmt: skip
    assert [c for c in ALL if constraint_verifier(1).score(_example(c), _example(c).prompt).reward != 0.0] == []


def test_echoes_are_the_prompt_base_and_sentences() -> None:
    ex = _example("detectable_format:title")
    assert echoes_of(ex) == (ex.prompt, "Write a short note about the river.", describe("detectable_format:title", {}))


BULLET = st.sampled_from(["* ", "- ", "+ ", "\u2022 ", "*\t", "  * ", "    - "])
ITEM = st.text(alphabet="abcdefghij XYZ.,", min_size=1, max_size=20).filter(lambda s: s.strip(" .,") != "")


@BOUNDED
@given(n=st.integers(1, 6), markers=st.lists(BULLET, min_size=6, max_size=6), items=st.lists(ITEM, min_size=6,
       max_size=6), intro=st.sampled_from(["", "Here are the points:\n", "**Points**\n\n"]))  # fmt: skip
def test_search_bullet_variants_count_exactly(n: int, markers: list[str], items: list[str], intro: str) -> None:
    text = intro + "\n".join(markers[i] + "w" + items[i] for i in range(n)) + "\n---\nDone."
    assert check("detectable_format:number_bullet_lists", {"num_bullets": n}, text)
    assert not check("detectable_format:number_bullet_lists", {"num_bullets": n + 1}, text)


DIVIDER = st.sampled_from(["***", "* * *", "****", " *** ", "*  *  *", "******"])
SEP = st.sampled_from(["\n", "\n\n", "\n \n"])


@BOUNDED
@given(n=st.integers(1, 5), dividers=st.lists(DIVIDER, min_size=5, max_size=5), sep=SEP,
       extra_empty=st.booleans())  # fmt: skip
def test_search_paragraph_divider_variants(n: int, dividers: list[str], sep: str, extra_empty: bool) -> None:
    parts = [f"Paragraph {i} has a ***bold*** word." for i in range(n)]
    text = parts[0]
    for i in range(1, n):
        text += sep + dividers[i] + sep + (dividers[i] + sep if extra_empty else "") + parts[i]
    assert check("length_constraints:number_paragraphs", {"num_paragraphs": n}, text), text
    assert not check("length_constraints:number_paragraphs", {"num_paragraphs": n + 1}, text)


@BOUNDED
@given(n=st.integers(2, 4), k=st.integers(1, 4), blank=st.sampled_from(["\n\n", "\n \n", "\n\n\n", "\r\n\r\n",
       "\n\t\n\n"]), lead=st.sampled_from(["", "\n\n", " \n\n"]), deco=st.sampled_from(["{}", "**{}**", "{}:",
       "\"{}\"", "_{}_", "# {}", "{},"]), case=st.sampled_from([str.lower, str.title, str.upper]))  # fmt: skip
def test_search_nth_paragraph_variants(n: int, k: int, blank: str, lead: str, deco: str, case) -> None:
    k = min(k, n)
    paragraphs = [f"Part {i} is here." for i in range(1, n + 1)]
    paragraphs[k - 1] = deco.format(case("then")) + " comes this part."
    text = lead + blank.join(paragraphs) + blank
    kw = {"num_paragraphs": n, "nth_paragraph": k, "first_word": "then"}
    assert check("length_constraints:nth_paragraph_first_word", kw, text), text
    assert not check("length_constraints:nth_paragraph_first_word", dict(kw, num_paragraphs=n + 1), text)
    if k < n:  # the right word in another paragraph is not enough
        assert not check("length_constraints:nth_paragraph_first_word", dict(kw, nth_paragraph=k + 1), text)


WORDS = st.sampled_from(["don't", "well-known", "3.5", "1,000", "U.S.", "e.g.", "it's", "plain", "x"])


@BOUNDED
@given(words=st.lists(WORDS, min_size=1, max_size=30), sep=st.sampled_from([" ", "\n", "  ", " -- "]))
def test_search_word_counts_count_words_as_written(words: list[str], sep: str) -> None:
    text = sep.join(words)
    n = len(words)
    assert check("length_constraints:number_words", {"num_words": n, "relation": "at least"}, text), text
    assert check("length_constraints:number_words", {"num_words": n + 1, "relation": "less than"}, text), text
    assert not check("length_constraints:number_words", {"num_words": n, "relation": "less than"}, text), text


@BOUNDED
@given(phrase_case=st.sampled_from([str, str.lower, str.upper]), after=st.sampled_from(["", "**", '"', "*", "\n",
       "\u201d", " _"]), before=st.sampled_from(["**", "", "\n\n"]))  # fmt: skip
def test_search_end_phrase_variants(phrase_case, after: str, before: str) -> None:
    phrase = "Is there anything else I can help with?"
    text = "Tea is a drink. " + before + phrase_case(phrase) + after
    assert check("startend:end_checker", {"end_phrase": phrase}, text), text
    assert not check("startend:end_checker", {"end_phrase": phrase}, text + " Bye.")


@BOUNDED
@given(spl=st.sampled_from(["Section", "SECTION", "Part", "PARAGRAPH"]), n=st.integers(1, 5),
       deco=st.sampled_from(["{} {}", "## {} {}", "**{} {}**", "{} {}:", "{}{}", "### {} {}."]),
       case=st.sampled_from([str, str.upper, str.title]))  # fmt: skip
def test_search_section_header_variants(spl: str, n: int, deco: str, case) -> None:
    text = "\n".join(deco.format(case(spl), i) + "\nSome content here." for i in range(1, n + 1))
    assert check("detectable_format:multiple_sections", {"section_spliter": spl, "num_sections": n}, text), text
    assert not check("detectable_format:multiple_sections", {"section_spliter": spl, "num_sections": n + 1}, text)


def _edit_one_character(text: str, where: int, how: str) -> str:
    letters = [i for i, ch in enumerate(text) if ch.isalpha()]
    i = letters[where % len(letters)]
    if how == "replace":
        return text[:i] + ("x" if text[i].lower() != "x" else "y") + text[i + 1 :]
    if how == "delete":
        return text[:i] + text[i + 1 :]
    return text[:i] + text[i] + text[i:]  # a doubled letter


@BOUNDED
@given(cid=st.sampled_from(ALL), what=st.sampled_from(["prompt", "sentence", "both"]), where=st.integers(0, 10_000),
       how=st.sampled_from(["replace", "delete", "double"]), junk=MARKUP)  # fmt: skip
@example(cid="length_constraints:number_words", what="sentence", where=0, how="double", junk="")  # "AAnswer with …"
def test_search_prompt_pasted_back_with_one_character_edited_earns_nothing(cid, what, where, how, junk) -> None:
    """A one-character edit of the pasted prompt ("…the rivers.") would make it no copy, earning what the prompt's
    own text earns (keywords, bullets, sections, …); under training near copies are echoes too: it earns nothing."""
    ex = _example(cid)
    sentence = ex.sentence(0)
    pasted = {"prompt": ex.prompt, "sentence": sentence, "both": ex.prompt + "\n" + sentence}[what]
    completion = junk + _edit_one_character(pasted, where, how) + junk
    assert constraint_verifier(1).score(ex, completion).reward == 0.0, completion


def test_prompt_pasted_back_with_one_character_edited_paid_officially() -> None:
    ex = _example("keywords:existence")  # the prompt itself names the keywords river and stone
    edited = ex.prompt.replace("short note", "shortnote").replace("river.", "rivers.", 1)
    assert constraint_verifier(1, semantics="official").score(ex, edited).reward == 1.0
    assert constraint_verifier(1).score(ex, edited).reward == 0.0


def test_answer_reusing_the_prompts_words_is_no_echo() -> None:
    # the other direction: an answer that starts like the request, or repeats its phrases, is an answer
    ex = _example("keywords:existence")
    for answer in ("Here is a short note about the river: a stone sits in it.",
                   "A short note about the river. The river carries a stone.",
                   "Write a short note about the river? Gladly: the river rolls a stone."):
        assert constraint_verifier(1).score(ex, answer).reward == 1.0, answer
    from mrtpo_sdk.instructions._training import remove_echoes

    base = "Write a short note about the river."
    assert remove_echoes("Here is a short note about the river.", [base]) == "Here is a short note about the river."
    assert remove_echoes("Wrote a short note about the rivr.", [base]).strip() == "."  # two edits in 28: cut
    assert "Writ" in remove_echoes("Writ a shrt note abot the river.", [base])  # three edits: more than 10%


def test_cyrillic_text_keeps_its_own_words() -> None:
    # look-alikes are folded in a Latin text or a mixed word, not in a text written in Cyrillic
    from mrtpo_sdk.instructions._training import fold_confusables

    assert fold_confusables("I like \u0441\u043e\u0440s.") == "I like cops."
    assert fold_confusables("\u042f \u043b\u044e\u0431\u043b\u044e \u0441\u043e\u0440.") == (
        "\u042f \u043b\u044e\u0431\u043b\u044e \u0441\u043e\u0440.")
    assert check("keywords:forbidden_words", {"forbidden_words": ["cop"]},
                 "\u042f \u043b\u044e\u0431\u043b\u044e \u0441\u043e\u0440.") is True
    assert check("combination:two_responses", {}, "Tea is hot.\n******\nTea is not!") is True


def test_stays_by_design_constraint_only_answers() -> None:
    # a constraint verifier checks its constraint, not the task: these do not attempt "write about the river" but
    # satisfy their constraint in both semantics (pair the constraints with a task reward; docs: "Stays by design")
    assert check("keywords:existence", {"keywords": ["river", "stone"]}, "river stone")
    assert check("length_constraints:number_words", {"num_words": 50, "relation": "less than"}, "Ok")
    assert check("combination:two_responses", {}, "a\n******\nb")
    assert check("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* x\n* y")


def test_general_rule_length_bound() -> None:
    filler = "The river is calm today. " * 2_400  # 60,000 characters
    kw = {"num_words": 100, "relation": "at least"}
    assert check("length_constraints:number_words", kw, filler, semantics="official") is True
    assert check("length_constraints:number_words", kw, filler) is False
    assert check("length_constraints:number_words", kw, filler[:49_000]) is True


def test_search_finding_underscore_is_no_letter() -> None:
    # found by test_search_prompt_or_block_pasted_back_earns_nothing: "_" + the prompt in capitals passed
    # english_capital in training (the underscore counted as the answer's letter, langdetect saw the prompt)
    ex = _example("change_case:english_capital")
    completion = "_" + ex.prompt.upper() + "_"
    assert constraint_verifier(1, semantics="official").score(ex, completion).reward == 1.0
    assert constraint_verifier(1).score(ex, completion).reward == 0.0
    nth = {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "then"}
    assert check("length_constraints:nth_paragraph_first_word", nth, "_then_ comes.\n\nPart 2.") is True


@pytest.mark.parametrize("response", ["A st\u00adory.", "A st\u200bory.", "\uff21 \uff53\uff54\uff4f\uff52\uff59."])
def test_training_forbidden_words_see_through_invisible_and_fullwidth_characters(response):
    from mrtpo_sdk.instructions._check import check

    assert check("keywords:forbidden_words", {"forbidden_words": ["story"]}, response) is False
    assert check("keywords:forbidden_words", {"forbidden_words": ["story"]}, "A tale.") is True
    assert check("keywords:letter_frequency", {"letter": "z", "let_frequency": 1, "let_relation": "less than"},
                 "\uff5aebra.") is False


@pytest.mark.parametrize("response", [
    "I like cof\u200efee a lot.", "I like cof\u2063fee.", "I like cof\u034ffee.", "I like cof\U000e0041fee.",
    "I like cof\u115ffee.", "I like cof\u3164fee.", "I like cof\ufe0ffee.", "I like c\u0585ffee.",
    "I like coffe\u0301e.", "I like coff\u00e9e.", "I like \uff43offee.",
])  # fmt: skip
def test_training_forbidden_words_see_through_format_characters_marks_and_armenian(response):
    # every Cf format character and default-ignorable is removed, accents stripped, Armenian look-alikes folded
    kw = {"forbidden_words": ["coffee"]}
    assert check("keywords:forbidden_words", kw, response, semantics="official") is True
    assert check("keywords:forbidden_words", kw, response) is False


@pytest.mark.parametrize("response", [
    "We met at a caf\u00e9 \U0001f468\u200d\U0001f469\u200d\U0001f467, a na\u00efve r\u00e9sum\u00e9 \u2764\ufe0f.",
    "I like tea \U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f.",
    "\u042f \u043b\u044e\u0431\u043b\u044e \u043a\u043e\u0444\u0435.", "\u0540\u0561\u0575\u0565\u0580\u0565\u0576 \u057f\u0565\u0584\u057d\u057f.",
    "I like cofe\u0301e.",  # reads "cofee": not the word
])  # fmt: skip
def test_training_forbidden_words_keep_emoji_accents_and_other_scripts(response):
    kw = {"forbidden_words": ["coffee"]}
    assert check("keywords:forbidden_words", kw, response) is True
    assert check("keywords:forbidden_words", {"forbidden_words": ["caf\u00e9"]}, "I like cafe\u0301 au lait.") is False


@pytest.mark.parametrize("response", [
    "B\u0430n\u0430n\u0430 \u0430nd \u0430pple.", "B\u0251n\u0251n\u0251 \u0251nd \u0251pple.",
    "B\u00e1n\u00e1n\u00e1 \u00e1nd \u00e1pple.", "B\u00e0n\u00e2n\u00e4 \u00e3nd \u00e5pple.",
])  # fmt: skip
def test_training_letter_frequency_less_than_counts_lookalikes_and_accents(response):
    kw = {"letter": "a", "let_frequency": 2, "let_relation": "less than"}
    assert check("keywords:letter_frequency", kw, response, semantics="official") is True
    assert check("keywords:letter_frequency", kw, response) is False
    assert check("keywords:letter_frequency", kw, "Plum tree.") is True  # no a at all: followed


def test_training_letter_frequency_at_least_counts_accents_not_lookalikes():
    kw = {"letter": "a", "let_frequency": 3, "let_relation": "at least"}
    assert check("keywords:letter_frequency", kw, "\u00c1 b\u00e1n\u00e1n.", semantics="official") is False
    assert check("keywords:letter_frequency", kw, "\u00c1 b\u00e1n\u00e1n.") is True  # an accented a is an a
    assert check("keywords:letter_frequency", kw, "B\u0430n\u0430n\u0430.") is False  # Cyrillic look-alikes
    assert check("keywords:letter_frequency", kw, "A banana.") is True
    # a Russian text's own letters are not capped as Latin ones
    ru = {"letter": "a", "let_frequency": 2, "let_relation": "less than"}
    assert check("keywords:letter_frequency", ru, "\u0411\u0430\u043d\u0430\u043d \u0438 \u0430\u0440\u0431\u0443\u0437.") is True


@pytest.mark.parametrize("response, followed", [
    ('"Tea" is hot and "coffee"', False), ('"Tea is hot."\n\nExtra unquoted."', False), ('"Tea." "Coffee."', False),
    ("\u201cTea\u201d and \u201ccoffee\u201d", False),
    ('"Tea is hot."', True), ('"He said "hi" to me."', True), ('"He said, "hi." Then left."', True),
    ('"A 5" pipe is wide."', True), ("\u201cHe said \u201chi\u201d.\u201d", True), ('"Say \\"hi\\" ok"', True),
])  # fmt: skip
def test_training_quotation_is_one_quotation_of_the_whole_response(response, followed):
    assert check("startend:quotation", {}, response) is followed


@pytest.mark.parametrize("response, followed", [("PART 1\nPART 2", False), ("PART 1\n\nPART 2\nb", False),
                                                ("PART 1\na\nPART 2\nb", True), ("PART 1: intro\nPART 2: more", True)])
def test_training_sections_need_content(response, followed):
    from mrtpo_sdk.instructions._check import check

    assert check("detectable_format:multiple_sections", {"section_spliter": "PART", "num_sections": 2},
                 response) is followed
