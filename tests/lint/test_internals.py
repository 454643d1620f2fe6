"""Unit tests of the linter's parts: text heuristics, block templates from the syntax tree, probes, sampling,
rule selection."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from mrtpo_sdk.lint import text as T
from mrtpo_sdk.lint.config import Layer, resolve_codes
from mrtpo_sdk.lint.runner import author_probes, make_probes, sample_indexes
from mrtpo_sdk.lint.static import BlockSite, block_sites, blocks_used, source_file
from mrtpo_sdk.errors import MRTPOError


# ------------------------------------------------------------------------------------------------ text
@pytest.mark.parametrize(
    "sentence, bad",
    [
        ("Write the query in a ```sql fence.", True),
        ("Do not add any explanation.", True),
        ("Make sure the call has all arguments.", True),
        ("Your answer lacks the closing tag.", True),
        ("Please check the column names.", True),
        ("The answer is one SQLite query in a ```sql fence.", False),
        ("no such column: studnet.name", False),
        ("The response ends with the phrase 'Is there anything else?'.", False),
        ("\x00 use the index", False),  # starts with a computed part: not judged by its first word
        ("Correct.", False),  # a verdict, not an order
        ("Incorrect.", False),
        ("Valid.", False),
        ("Correct answer.", False),  # "correct" as an adjective
        ("Correct the join condition.", True),
        ("Correct it.", True),
        ("Correct your query.", True),
        ("Fix the join.", True),
        ("Use SQLite.", True),
    ],
)
def test_imperative(sentence, bad):
    assert (T.imperative_problem(sentence) is not None) == bad


def test_mrt003_reads_one_word_verdicts_as_statements(tmp_path):
    from mrtpo_sdk.lint import lint_paths

    path = tmp_path / "verdicts.py"
    path.write_text(
        textwrap.dedent(
            """
            from mrtpo_sdk import Result, Task, verifier

            EXAMPLES = [{"id": "a", "q": "1+1", "answer": "2"}, {"id": "b", "q": "2+2", "answer": "4"}]

            @verifier(kind="feedback")
            def exact(example, completion):
                ok = completion.strip() == example["answer"]
                return Result(float(ok), "Correct." if ok else "Incorrect.")

            @verifier(kind="feedback")
            def shape(example, completion):
                ok = completion.strip().isdigit()
                return Result(float(ok), "Valid." if ok else "Correct the number.")

            task = Task(name="verdicts", examples=EXAMPLES, prompt=lambda ex: [{"role": "user", "content": ex["q"]}],
                        verifiers=[exact, shape], reference=lambda ex: ex["answer"])
            """
        )
    )
    report = lint_paths([path], isolated=True)
    assert not report.errors, [f.message for f in report.errors]
    mrt003 = [f for f in report.findings if f.code == "MRT003"]
    assert [f.line for f in mrt003] == [14]  # "Correct the number." only
    assert "starts with the imperative 'Correct'" in mrt003[0].message


@pytest.mark.parametrize(
    "text, word",
    [
        ("This answer earns reward 0.", "reward"),
        ("The verifier found 2 errors.", "verifier"),
        ("It is penalized for length.", "penalized"),
        ("The query returns 3 rows.", None),
    ],
)
def test_meta_words(text, word):
    assert T.meta_word(text) == word


@pytest.mark.parametrize(
    "text, label",
    [
        ("Feedback: the call fails", "Feedback:"),
        ("## Reference", "## Reference"),
        ("Reference query:\n```sql", "Reference query:"),
        ("**Hint:** use a join", "**Hint:"),
        ("The table has no column year.", None),
    ],
)
def test_label_or_heading(text, label):
    assert T.label_or_heading(text) == label


@pytest.mark.parametrize(
    "sentence, vague",
    [
        ("The query must execute.", True),
        ("Follow the required format.", True),
        ("The answer is wrong.", True),
        ("The answer is in the correct format.", True),
        ("The query has an error.", True),
        ("The query has \x00.", False),
        ("The answer is one query in a ```sql fence.", False),
        ('near "FORM": syntax error', False),
    ],
)
def test_vague_requirement(sentence, vague):
    assert (T.vague_requirement(sentence) is not None) == vague


def test_markup_helpers():
    ref = "Reasoning.\n```sql\nSELECT 1\n```"
    assert T.fence_tags(ref) == {"sql"}
    assert T.fence_tags("```python\nx\n```\n```sql\ny\n```") == {"python", "sql"}
    assert T.xml_tags("<think>a</think><tool_call>{}</tool_call>") == {"think", "tool_call"}
    assert T.strip_markup(ref) == "Reasoning.\nSELECT 1"
    assert T.strip_markup('<tool_call>{"a": 1}</tool_call>') == '{"a": 1}'
    assert T.names_concrete_markup("one query in a ```sql fence")
    assert T.names_concrete_markup("inside <tool_call> tags")
    assert not T.names_concrete_markup("The answer is in the expected format.")
    assert T.list_items("- a\n- b\n```\n- c\n```") == 2


# ------------------------------------------------------------------------------------------------ templates
def _sites(tmp_path: Path, code: str) -> list[BlockSite]:
    path = tmp_path / "t.py"
    path.write_text(textwrap.dedent(code))
    src = source_file(path)
    fn = next(n for n in src.tree.body if isinstance(n, ast.FunctionDef) and n.name == "v")
    return block_sites(src, fn)


def test_templates_resolve_constants_fstrings_and_helpers(tmp_path):
    sites = _sites(
        tmp_path,
        """
        RULE = "The answer is one query."
        def ref(example):
            return f"```sql\\n{example.query}\\n```"
        def v(example, completion):
            err = check(completion)
            if err:
                return Result(0.0, f"{RULE} This response has {err}.")
            if completion == "x":
                return Result(0.5, ref(example))
            return Result(1.0, block=RULE + " OK")
    """,
    )
    rendered = [[BlockSite.render(a) for a in s.alternatives] for s in sites]
    assert rendered == [
        ["The answer is one query. This response has \x00."],
        ["```sql\n\x00\n```"],
        ["The answer is one query. OK"],
    ]
    assert [s.literal_only() for s in sites] == [False, False, True]


def test_templates_of_tuples_bool_and_if_expressions(tmp_path):
    sites = _sites(
        tmp_path,
        """
        def v(example, completion):
            errors = run(completion)
            if errors is None:
                return 0.0, ""
            return (float(not errors), errors and "Failed: " + errors if errors else "all good")
    """,
    )
    rendered = [sorted(BlockSite.render(a) for a in s.alternatives) for s in sites]
    assert rendered == [[""], sorted(["\x00", "Failed: \x00", "all good"])]
    assert not sites[0].literal_only()  # the empty block is not "built from literals"


def test_blocks_used_finds_other_verifiers_blocks(tmp_path):
    path = tmp_path / "t.py"
    path.write_text("def v(e, c):\n    f = fmt(e, c)\n    return Result(1, f.block + other(e, c).block)\n")
    src = source_file(path)
    fn = src.functions["v"]
    assert sorted(name for name, _ in blocks_used(fn, {"fmt", "other"})) == ["fmt", "other"]
    assert blocks_used(fn, {"unrelated"}) == []


def test_noqa_comments_are_parsed_with_tokenize(tmp_path):
    path = tmp_path / "n.py"
    path.write_text('x = "# noqa: MRT001"\ny = 1  # noqa: MRT002, mrt003\nz = 2  # noqa\n# mrtpo-sdk: noqa: MRT005\n')
    src = source_file(path)
    assert src.noqa == {2: {"MRT002", "MRT003"}, 3: set()}
    assert src.file_noqa == {"MRT005"}
    assert src.suppressed("MRT002", {2}) and not src.suppressed("MRT001", {1, 2})
    assert src.suppressed("MRT009", {3}) and src.suppressed("MRT005", {99})


# ------------------------------------------------------------------------------------------------ probes
def test_sample_indexes_are_deterministic_and_spread():
    assert sample_indexes(5, 20) == [0, 1, 2, 3, 4]
    idx = sample_indexes(186, 20)
    assert idx == sample_indexes(186, 20) and len(idx) == 20
    assert idx[0] == 0 and idx[-1] >= 160 and idx == sorted(set(idx))


def test_make_probes():
    refs = ["```sql\nSELECT 1\n```", "```sql\nSELECT 2\n```", "```sql\nSELECT 1\n```"]
    probes = make_probes(refs, [["extra"], [], []])
    assert [(p.label, p.text) for p in probes[0]] == [
        ("reference", refs[0]),
        ("empty", ""),
        ("no-markup", "SELECT 1"),
        ("truncated", refs[0][:9]),
        ("other-reference", refs[1]),
        ("declared-1", "extra"),
    ]
    # example 2's next reference (example 0's) is the same text, so the one after it (example 1's) is used
    assert [p for p in probes[2] if p.label == "other-reference"][0].text == refs[1]
    no_ref = make_probes([None], [[]])
    assert [p.label for p in no_ref[0]] == ["empty"]


def test_author_probes_are_validated():
    class M:
        PROBES = ["a"]

        @staticmethod
        def lint_probes(example):
            return [f"b{example}"]

    assert author_probes(M, 1, "f.py") == ["b1", "a"]

    class Bad:
        PROBES = "not a list"

    with pytest.raises(MRTPOError, match="PROBES must be a list"):
        author_probes(Bad, 1, "f.py")


# ------------------------------------------------------------------------------------------------ selection
def test_rule_selection_layers_follow_ruff():
    assert resolve_codes([]) >= {"MRT001", "MRT012"}
    assert resolve_codes([Layer(select=["MRT00"])]) == {f"MRT00{i}" for i in range(1, 10)}
    assert resolve_codes([Layer(select=["ALL"], ignore=["MRT0"], extend_select=["MRT004"])]) == {"MRT004"}
    # a later layer with select starts fresh; without select it refines the previous one
    config = Layer(ignore=["MRT003"])
    assert "MRT003" not in resolve_codes([config, Layer(ignore=["MRT004"])])
    assert resolve_codes([config, Layer(select=["MRT003"])]) == {"MRT003"}


def test_blocks_used_follows_loops_and_comprehensions(tmp_path):
    path = tmp_path / "t.py"
    path.write_text(
        "def v(e, c):\n"
        "    results = [check(e, c) for check in (num, unit)]\n"
        "    first = results[0].block\n"
        "    for other in CHECKS:\n"
        "        out = other.score(e, c)\n"
        "        first += out.block\n"
        "    return Result(1, ' '.join(r.block for r in results))\n"
    )
    fn = source_file(path).functions["v"]
    used = blocks_used(fn, {"num", "unit", "fmt"}, {"CHECKS": {"fmt"}})
    by_line = sorted({(node.lineno, name) for name, node in used})
    assert by_line == [(3, "num"), (3, "unit"), (6, "fmt"), (7, "num"), (7, "unit")]
    assert blocks_used(fn, {"unrelated"}) == []


def test_shared_information_between_blocks():
    from mrtpo_sdk.lint.rules.mrt001_merged_blocks import _shared_sentence as shared

    number = "The answer's number is 180, not 8."
    # another verifier's finding in other words, next to this block's own sentence
    assert shared("The unit 'km' is not apples. The number 180 is not 8.", number) == "The number 180 is not 8."
    # one sentence holding both, and the other block's sentence in another case
    assert shared("The unit 'km' is not apples, and the number 180 is not 8.", "The number 180 is not 8.")
    # a block that is only the other block's information: that block is the one whose information it is
    assert shared("The number 180 is not 8.", "The unit 'km' is not apples. The number 180 is not 8.") is None
    assert shared("The unit 'km' is not apples.", number) is None
    # structured data in the policy's format and shared identifiers are not prose information
    call = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    assert shared("<think>\nThe request needs 1 call to get_time.\n</think>\n" + call,
                  "<think>\nThe function to call is get_time.\n</think>\n" + call) is None
    assert shared("The request needs 2 calls to criminal_record.get_status, criminal_record.get_offense_nature.",
                  "The functions to call are criminal_record.get_status and criminal_record.get_offense_nature.") is None
    # word boundaries: 18 is not 180
    assert shared("The unit 'km' is not apples. The number 18 is not 8.", "The number 180 is not 8.") is None
