"""Prompt composition, P_\\k, and the IFEval / RLVR-IF JSONL loader (span location, reports, errors)."""

from __future__ import annotations

import difflib
import json

import pytest

from mrtpo_sdk import MRTPOError
from mrtpo_sdk.instructions import (
    InstructionDataError,
    UnknownConstraintError,
    compose_example,
    describe,
    example_from_json,
    example_to_json,
    load_examples_jsonl,
    load_ifeval_jsonl,
)

THREE = [
    ("punctuation:no_comma", {}),
    ("length_constraints:number_words", {"num_words": 50, "relation": "less than"}),
    ("keywords:existence", {"keywords": ["stone", "light"]}),
]


def test_each_p_without_k_differs_from_p_all_by_exactly_one_constraint_sentence() -> None:
    ex = compose_example("x", "Write a poem about the old lighthouse.", THREE)
    p_all = ex.prompt
    for k, (cid, kw) in enumerate(THREE):
        sentence = describe(cid, kw)
        assert ex.sentence(k) == sentence
        p_k = ex.prompt_without(k)
        # the only difference: the k-th sentence and one separating space
        removed = [d[2:] for d in difflib.ndiff(p_all.split(" "), p_k.split(" ")) if d.startswith("- ")]
        added = [d for d in difflib.ndiff(p_all.split(" "), p_k.split(" ")) if d.startswith("+ ")]
        assert " ".join(removed) == sentence and added == []
        assert p_k.replace(" ", "") == p_all.replace(sentence, "", 1).replace(" ", "")
        for j, (other, okw) in enumerate(THREE):
            assert (describe(other, okw) in p_k) == (j != k)
    assert p_all == (
        "Write a poem about the old lighthouse. In your entire response, refrain from the use of any commas. "
        "Answer with less than 50 words. Include the keywords stone and light in the response."
    )
    assert ex.prompt_without(0).startswith("Write a poem about the old lighthouse. Answer with")
    assert ex.prompt_without(2).endswith("less than 50 words.")


def test_json_round_trip_keeps_spans() -> None:
    ex = compose_example("x", "Describe the harbor.", THREE, topic="harbor")
    back = example_from_json(json.loads(json.dumps(example_to_json(ex))))
    assert back == ex


def _write(tmp_path, rows):
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_ifeval_format_locates_free_text_constraints_and_reports_the_rest(tmp_path) -> None:
    rows = [
        {
            "key": 11,
            "prompt": "Write a story about a cat who learns to swim. Your answer must contain a title, wrapped in "
            "double angular brackets, i.e. <<title>>. Do not use any commas in your reply.",
            "instruction_id_list": ["detectable_format:title", "punctuation:no_comma"],
            "kwargs": [{}, {"num_words": None}],
        },
        {  # two constraints in one sentence: neither can be left out alone
            "key": 12,
            "prompt": "Describe the moon in exactly 3 bullet points and no commas.",
            "instruction_id_list": ["detectable_format:number_bullet_lists", "punctuation:no_comma"],
            "kwargs": [{"num_bullets": 3}, {}],
        },
        {  # RLVR-IF style: chat messages, kwargs as a JSON string; a numbered list of constraints
            "id": "r1",
            "messages": [
                {
                    "role": "user",
                    "content": "how do trains work\n\nFollow these rules:\n1. There should be "
                    "2 paragraphs. Paragraphs are separated with the markdown divider: ***\n2. Answer with "
                    "less than 204 words.",
                }
            ],
            "instruction_id_list": ["length_constraints:number_paragraphs", "length_constraints:number_words"],
            "kwargs": json.dumps([{"num_paragraphs": 2}, {"num_words": 204, "relation": "less than"}]),
        },
        {
            "key": 13,
            "prompt": "Tell me about green tea.",
            "instruction_id_list": ["detectable_content:postscript"],
            "kwargs": [{"postscript_marker": "P.S."}],
        },
        {  # ground_truth form
            "id": "g1",
            "prompt": "List three fruits. Your response should contain at least 3 sentences.",
            "ground_truth": json.dumps(
                {
                    "instruction_id": ["length_constraints:number_sentences"],
                    "kwargs": [{"num_sentences": 3, "relation": "at least"}],
                }
            ),
        },
    ]
    examples, report = load_ifeval_jsonl(_write(tmp_path, rows))
    by_id = {e.id: e for e in examples}
    assert list(by_id) == ["11", "12", "r1", "13", "g1"]
    cat = by_id["11"]
    assert cat.sentence(0) == "Your answer must contain a title, wrapped in double angular brackets, i.e. <<title>>."
    assert cat.sentence(1) == "Do not use any commas in your reply."
    assert cat.prompt_without(1) == (
        "Write a story about a cat who learns to swim. Your answer must contain a title, wrapped in double angular "
        "brackets, i.e. <<title>>."
    )
    r1 = by_id["r1"]
    assert r1.sentence(1) == "2. Answer with less than 204 words."
    assert r1.prompt_without(1).endswith("Paragraphs are separated with the markdown divider: ***")
    assert r1.prompt_without(0).endswith("Follow these rules:\n2. Answer with less than 204 words.")
    assert by_id["g1"].sentence(0) == "Your response should contain at least 3 sentences."
    # reported: the shared sentence (both constraints of 12) and the missing postscript sentence of 13
    assert sorted(i for i, _ in report.unlocated) == ["12", "12", "13"]
    assert by_id["12"].constraints[0].span is None and by_id["12"].prompt_without(0) == by_id["12"].prompt
    assert "3 example(s)" not in report.summary() and "2 example(s)" in report.summary()


@pytest.mark.parametrize(
    "row,error,message",
    [
        ({"key": 1, "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}, InstructionDataError, "'prompt'"),
        (
            {"key": 1, "prompt": "p", "instruction_id_list": [], "kwargs": []},
            InstructionDataError,
            "instruction_id_list",
        ),
        (
            {"key": 1, "prompt": "p", "instruction_id_list": ["punctuation:no_comma"], "kwargs": []},
            InstructionDataError,
            "one object per instruction",
        ),
        (
            {"key": 1, "prompt": "p", "instruction_id_list": ["punctuation:no_commas"], "kwargs": [{}]},
            UnknownConstraintError,
            "instruction 1: unknown constraint id 'punctuation:no_commas'",
        ),
        (
            {"key": 1, "prompt": "p", "instruction_id_list": ["length_constraints:number_words"], "kwargs": [{}]},
            MRTPOError,
            "kwarg 'num_words' is missing",
        ),
        (
            {"key": 1, "prompt": "p", "ground_truth": json.dumps({"func_name": "validate_lowercase"})},
            InstructionDataError,
            "func_name",
        ),
    ],
)
def test_malformed_rows_name_file_line_and_field(tmp_path, row, error, message) -> None:
    path = _write(tmp_path, [row])
    with pytest.raises(error, match=message) as err:
        load_ifeval_jsonl(path)
    assert f"{path}:1" in str(err.value)


def test_loader_file_errors(tmp_path) -> None:
    with pytest.raises(InstructionDataError, match="no such file"):
        load_examples_jsonl(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": 1}\n{not json\n', encoding="utf-8")
    with pytest.raises(InstructionDataError, match=r"bad.jsonl:2: not valid JSON"):
        load_ifeval_jsonl(bad)
    row = {
        "key": 1,
        "prompt": "Be brief. Do not use any commas.",
        "instruction_id_list": ["punctuation:no_comma"],
        "kwargs": [{}],
    }
    with pytest.raises(InstructionDataError, match="appears twice"):
        load_ifeval_jsonl(_write(tmp_path, [row, row]))
    spans = dict(row, spans=[[0, 999]])
    with pytest.raises(InstructionDataError, match="spans"):
        load_examples_jsonl(_write(tmp_path, [spans]))
