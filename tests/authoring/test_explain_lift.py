"""`explain` with verifiers that locate their deciding tokens: the mask, the share and the lift on each row (against a
hand computation from the row's own q), the outlined tokens of the page, the JSON and the summary; a deciding
function that raises leaves its row "not located" with the error's line, and the page still renders."""

import json
import re

import pytest
import torch

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.authoring.explain import explain, render_html, summary_lines, write_outputs
from mrtpo_sdk.credit_page import NO_DECIDING, NOTHING_LOCATED

from ..helpers import tiny_policy

COMPLETION = "I say apple now"


def _word(example, completion):
    i = completion.find(example["word"])
    return None if i < 0 else [(i, i + len(example["word"]))]


@verifier(kind="reference", deciding=_word)
def has_word(example, completion):
    return Result(float(example["word"] in completion), f"The answer is {example['word']}.")


def _broken(example, completion):
    raise KeyError("no such key")


@verifier(kind="format", deciding=_broken)
def shape(example, completion):
    return Result(1.0, "The answer is one short sentence.")


@verifier(kind="reference")
def plain(example, completion):
    return Result(1.0, "It says a word.")


@verifier(kind="reference", deciding=lambda example, completion: None)
def nowhere(example, completion):
    return Result(0.0, "Nothing here.")


@pytest.fixture(scope="module")
def exp():
    task = Task(name="t", examples=[{"id": "e0", "word": "apple"}],
                prompt=lambda ex: [{"role": "user", "content": f"Say {ex['word']}."}],
                verifiers=[has_word, shape, plain, nowhere], reference=lambda ex: COMPLETION)
    torch.manual_seed(0)
    model, tok = tiny_policy(task)
    return explain(task, task.load_examples()[0], COMPLETION, model.eval(), tok, policy="tiny")


def test_the_located_row_has_its_mask_share_and_lift(exp):
    row = {r.name: r for r in exp.rows}["has_word"]
    assert "".join(exp.tokens) == COMPLETION
    ends = [len("".join(exp.tokens[: t + 1])) for t in range(len(exp.tokens))]
    starts = [0] + ends[:-1]
    word = (COMPLETION.index("apple"), COMPLETION.index("apple") + 5)
    assert row.deciding == [max(s, word[0]) < min(e, word[1]) for s, e in zip(starts, ends)]
    assert any(row.deciding) and not all(row.deciding)
    on = sum(q for q, d in zip(row.q, row.deciding) if d)
    share = on / sum(row.q)
    assert row.deciding_share == pytest.approx(share, abs=1e-4)
    assert row.lift == pytest.approx(share / (sum(row.deciding) / len(row.deciding)), abs=1e-3)
    assert row.deciding_note == ""


def test_rows_not_located_say_why(exp):
    rows = {r.name: r for r in exp.rows}
    assert rows["plain"].deciding is None and rows["plain"].deciding_note == NO_DECIDING
    assert rows["nowhere"].deciding is None and rows["nowhere"].deciding_note == NOTHING_LOCATED
    broken = rows["shape"]
    assert (broken.deciding, broken.deciding_share, broken.lift) == (None, None, None)
    assert broken.deciding_note.startswith(
        "task 't', verifier 'shape', example 'e0': its deciding function raised KeyError: 'no such key' at "
    )
    assert broken.replayed and broken.share is not None  # the rest of the row is there


def test_the_page_outlines_the_deciding_tokens(exp):
    page = render_html(exp)
    rows = re.findall(r'<tr class="reward-row">.*?</tr>', page, flags=re.S)
    cells = re.findall(r'<span class="tok( dec)?"', rows[0])
    assert [bool(c) for c in cells] == exp.rows[0].deciding
    assert all('class="tok dec"' not in r for r in rows[1:])
    assert 'class="legend-dec">outlined</span> tokens decide the row' in page
    lift = exp.rows[0].lift
    assert f"of the distance on them: lift {lift:.2f}" in rows[0]
    assert "deciding tokens not located: task &#x27;t&#x27;, verifier &#x27;shape&#x27;" in rows[1]


def test_the_json_and_the_summary_carry_them(exp, tmp_path):
    data = json.loads(write_outputs(exp, tmp_path)["json"].read_text())
    r = data["rewards"]["has_word"]
    assert r["deciding"] == exp.rows[0].deciding
    assert (r["deciding_share"], r["lift"]) == (exp.rows[0].deciding_share, exp.rows[0].lift)
    assert data["rewards"]["plain"]["deciding"] is None and data["rewards"]["plain"]["lift"] is None
    assert data["rewards"]["shape"]["deciding_note"].startswith("task 't', verifier 'shape'")
    lines = {line.split()[0]: line for line in summary_lines(exp)[1:]}
    n = sum(exp.rows[0].deciding)
    assert lines["has_word"].endswith(
        f"; {n} of {len(exp.tokens)} tokens deciding, {100 * exp.rows[0].deciding_share:.1f}% of the distance on "
        f"them: lift {exp.rows[0].lift:.2f}"
    )
    assert lines["plain"].endswith("; deciding tokens not located: no deciding function")
    assert "; deciding tokens not located: task 't', verifier 'shape'" in lines["shape"]
