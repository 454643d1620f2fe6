"""Each finding of the adversarial search, as a named test: ``training`` fixes it, ``official`` gives the official
verdict.

Rows of the official-vs-training table in docs/sql.md, in the same order.
"""

from __future__ import annotations

import pytest

from .conftest import fence


def rewards(task, example, completion):
    return {v.name: v.fn(example, completion).reward for v in task.task.verifiers}


def both(task, make_example, gold, completion):
    training = rewards(task, make_example(gold), completion)
    official = rewards(task, make_example(gold, "official"), completion)
    return training, official


# ---- holes: reward 1 without doing the task ----------------------------------------------------------------------


def test_format_rule_pasted_back_is_not_the_format(sql_task, make_example):
    rule = sql_task.FORMAT_RULE  # "... opens with a line ```sql and closes with a line ```."
    training, official = both(sql_task, make_example, "SELECT name FROM student", rule)
    assert official["sql_format"] == 1.0  # officially: the rule's own text holds a ```sql ... ``` fence
    assert training["sql_format"] == 0.0
    block = sql_task.sql_format.fn(make_example("SELECT 1"), rule).block
    assert "opening line holds more than the tag" in block


def test_prose_in_a_fence_is_not_the_format(sql_task, make_example):
    training, official = both(sql_task, make_example, "SELECT name FROM student", "```sql\nI do not know.\n```")
    assert (official["sql_format"], training["sql_format"]) == (1.0, 0.0)
    inline = "```sql SELECT name FROM student```"
    training, official = both(sql_task, make_example, "SELECT name FROM student", inline)
    assert (official["sql_format"], training["sql_format"]) == (1.0, 0.0)


def test_constant_query_does_not_execute(sql_task, make_example):
    training, official = both(sql_task, make_example, "SELECT name FROM student WHERE year = 2", fence("SELECT 1"))
    assert official["executes"] == 1.0
    assert training["executes"] == 0.0
    assert sql_task.executes.fn(make_example("SELECT name FROM student"), fence("SELECT 1")).block == (
        "The query runs but reads no table of the database, so it cannot answer the question."
    )


def test_query_about_other_tables_does_not_execute(sql_task, make_example):
    gold = "SELECT name FROM student WHERE year = 2"
    training, official = both(sql_task, make_example, gold, fence("SELECT count(*) FROM club"))
    assert (official["executes"], training["executes"]) == (1.0, 0.0)
    # a query on the question's table runs and is on topic: executes pays, result_match does not
    training = rewards(sql_task, make_example(gold), fence("SELECT count(*) FROM student"))
    assert training == {"sql_format": 1.0, "executes": 1.0, "result_match": 0.0}


def test_memorised_constant_answer_does_not_match(sql_task, make_example):
    gold = "SELECT count(*) FROM student WHERE city = 'rome'"  # 3
    training, official = both(sql_task, make_example, gold, fence("SELECT 3"))
    assert official["result_match"] == 1.0
    assert training["result_match"] == 0.0


def test_answer_typed_in_as_filter_constants_does_not_match(sql_task, make_example):
    """`WHERE name IN (<the answer's names>)` reads the reference's table and returns the expected rows, so official
    result_match pays; under training the result's own values typed in as the filter are refused."""
    gold = "SELECT name FROM student WHERE gpa > 3.2"  # ann, bob, cy
    for typed in ("SELECT name FROM student WHERE name IN ('ann', 'bob', 'cy')",
                  "SELECT name FROM student WHERE name = 'ann' OR name = 'bob' OR name = 'cy';",
                  "SELECT name FROM student WHERE upper(name) IN ('ANN', 'BOB', 'CY') ORDER BY 1",
                  "SELECT s.name FROM student s JOIN club c ON c.id = 1 WHERE s.name IN ('ann', 'bob', 'cy')"):
        training, official = both(sql_task, make_example, gold, fence(typed))
        assert official["result_match"] == 1.0, typed
        assert training["result_match"] == 0.0, typed
        assert training["executes"] == 1.0  # it is a query of the question's table
    # one row: the name typed in for a question that computes it
    training, official = both(sql_task, make_example, "SELECT name FROM student ORDER BY gpa LIMIT 1",
                              fence("SELECT name FROM student WHERE name = 'flo'"))
    assert (official["result_match"], training["result_match"]) == (1.0, 0.0)
    # the reference's own filter values plus the typed-in names: refused too
    training, _ = both(sql_task, make_example, "SELECT name FROM student WHERE city = 'rome'",
                       fence("SELECT name FROM student WHERE city = 'rome' AND name IN ('bob', 'di', 'flo')"))
    assert training["result_match"] == 0.0


def test_answer_filtering_on_the_questions_own_values_still_matches(sql_task, make_example):
    """The other direction: literals the reference itself filters on (the question's values), or a value the
    question gives named another way, are not the answer typed in."""
    cases = [
        ("SELECT name FROM student WHERE city = 'rome'", "SELECT name FROM student WHERE city IN ('rome')"),
        ("SELECT name, city FROM student WHERE city = 'rome'",
         "SELECT name, city FROM student WHERE city = 'Rome' COLLATE NOCASE"),
        ("SELECT name FROM student WHERE city = 'rome' OR city = 'lima'",
         "SELECT name FROM student WHERE city IN ('lima', 'rome')"),
        # the reference filters on an id, the answer on the name it stands for (echoed in the output)
        ("SELECT s.name, c.title FROM student s, club c WHERE c.id = 1",
         "SELECT s.name, c.title FROM student s JOIN club c WHERE c.title = 'chess'"),
        ("SELECT name FROM student WHERE year = 2", "SELECT name FROM student WHERE year = 2.0"),
    ]
    for gold, answer in cases:
        training, official = both(sql_task, make_example, gold, fence(answer))
        assert training["result_match"] == 1.0, (gold, answer, official)
    # a count that equals a filter constant by chance is no typed-in answer; it is another query, which returns the
    # reference's count on this database only, and the perturbed copies (test-suite accuracy) refuse it
    from mrtpo_sdk.sql.score import PERTURBED_MISMATCH, reference_result, run_cached, training_mismatch, typed_in_filter_values

    gold, answer = "SELECT count(*) FROM student WHERE gpa >= 3.5", "SELECT count(*) FROM student WHERE year IN (1, 2)"
    ex = make_example(gold)
    assert not typed_in_filter_values(answer, gold, reference_result(str(ex.db_path), gold).run.rows)
    training, official = both(sql_task, make_example, gold, fence(answer))
    assert (official["result_match"], training["result_match"]) == (1.0, 0.0)
    ref = reference_result(str(ex.db_path), gold)
    assert training_mismatch(run_cached(str(ex.db_path), answer), ref) == PERTURBED_MISMATCH
    # so is the answer added as a filter (true here, and one student: below the typed-in share's reach)
    gold, answer = "SELECT year FROM student WHERE name = 'cy'", "SELECT year FROM student WHERE name = 'cy' AND year = 2"
    training, official = both(sql_task, make_example, gold, fence(answer))
    assert (official["result_match"], training["result_match"]) == (1.0, 0.0)


def test_answer_typed_into_the_output_does_not_match(sql_task, make_example):
    """The answer's values written as literals that reach the output (a SELECT list expression,
    VALUES, a CTE or compound branch) beside a read of the question's table: `official` pays, `training` does
    not (`typed_in_output_values`, and VALUES rows counted as typed-in filter values)."""
    cases = [
        ("SELECT count(*) FROM student WHERE city = 'rome'",  # 3
         ["SELECT 3 + 0*count(*) FROM student", "SELECT max(3, id*0) FROM student LIMIT 1",
          "SELECT CASE WHEN id IS NOT NULL THEN 3 END FROM student LIMIT 1", "SELECT -(-3) + 0*count(*) FROM student",
          "SELECT '3' + 0*count(*) FROM student", "WITH x(n) AS (VALUES (3)) SELECT n FROM x, student LIMIT 1"]),
        ("SELECT name FROM student WHERE gpa > 3.2",  # ann, bob, cy
         ["SELECT name FROM student WHERE 0 UNION ALL VALUES ('ann'), ('bob'), ('cy')",
          "SELECT name FROM student WHERE name IN (SELECT column1 FROM (VALUES ('ann'), ('bob'), ('cy')))",
          "WITH x(n) AS (VALUES ('ann'), ('bob'), ('cy')) SELECT n FROM x, club WHERE club.id = 1 AND "
          "EXISTS (SELECT 1 FROM student)",
          "SELECT s.name FROM student s JOIN (VALUES ('ann'), ('bob'), ('cy')) v ON s.name = v.column1",
          "SELECT name FROM student WHERE 0 UNION ALL SELECT 'ann' UNION ALL SELECT 'bob' UNION ALL SELECT 'cy'",
          "SELECT upper(substr(name, 1, 0)) || v.column1 FROM (VALUES ('ann'), ('bob'), ('cy')) v, student "
          "WHERE student.id = 1"]),
    ]
    for gold, answers in cases:
        for typed in answers:
            training, official = both(sql_task, make_example, gold, fence(typed))
            assert official["result_match"] == 1.0, typed
            assert training["result_match"] == 0.0, typed
            assert training["executes"] == 1.0, typed


def test_literals_in_a_correct_answers_output_still_match(sql_task, make_example):
    """The other direction: a literal in the output that the reference holds too, a default or truth value (0, 1),
    a literal that does not reach the output (LIMIT, a condition, a derived table's unused column), or one that
    reaches it only through the data (``coalesce(count(*), 3)``) is no typed-in answer."""
    cases = [
        ("SELECT count(*) FROM student WHERE city = 'rome'",
         ["SELECT sum(1) FROM student WHERE city = 'rome'", "SELECT coalesce(count(*), 3) FROM student WHERE city = 'rome'",
          "SELECT count(*) FROM student WHERE city = 'rome' AND 3 = 3", "SELECT count(*) FROM student WHERE city = 'rome' LIMIT 3",
          "SELECT count(*) FROM (SELECT 3 AS k, * FROM student) WHERE city = 'rome'",
          "SELECT max(count(*), 1) FROM student WHERE city = 'rome'"]),
        ("SELECT count(*) FROM student WHERE gpa > 3.8 AND city = 'paris'",  # 1
         ["SELECT sum(CASE WHEN gpa > 3.8 AND city = 'paris' THEN 1 ELSE 0 END) FROM student",
          "SELECT count(*) FROM student WHERE gpa > 3.8 AND city = 'paris' AND 1 = 1 LIMIT 1"]),
        ("SELECT count(*) FROM student WHERE gpa > 4",  # 0
         ["SELECT coalesce(sum(1), 0) FROM student WHERE gpa > 4", "SELECT ifnull(max(id), 0) * 0 FROM student WHERE gpa > 4"]),
        ("SELECT name, city FROM student WHERE city = 'rome'", ["SELECT name, 'rome' FROM student WHERE city = 'rome'"]),
        ("SELECT name, CASE WHEN gpa >= 3.5 THEN 'high' ELSE 'low' END FROM student",
         ["SELECT name, iif(gpa >= 3.5, 'high', 'low') FROM student"]),
        ("SELECT count(*) FROM student WHERE city IN ('rome', 'lima')",
         ["SELECT count(*) FROM student WHERE city IN (VALUES ('rome'), ('lima'))"]),
    ]
    for gold, answers in cases:
        for answer in answers:
            training = rewards(sql_task, make_example(gold), fence(answer))
            assert training == {"sql_format": 1.0, "executes": 1.0, "result_match": 1.0}, (gold, answer)
    # a literal that reaches the output only when the data gives that answer is no typed-in value, but the query
    # returns the count only while it is 3: on a perturbed copy it does not (test-suite accuracy)
    from mrtpo_sdk.sql.score import reference_result, typed_in_output_values

    gold, answer = ("SELECT count(*) FROM student WHERE city = 'rome'",
                    "SELECT CASE WHEN count(*) = 3 THEN count(*) END FROM student WHERE city = 'rome'")
    ex = make_example(gold)
    assert not typed_in_output_values(answer, gold, reference_result(str(ex.db_path), gold).run.rows, str(ex.db_path))
    assert rewards(sql_task, ex, fence(answer))["result_match"] == 0.0


def test_identifiers_in_any_case_read_the_table(sql_task, make_example):
    """SQLite reports `count(*) FROM STUDENT` as a read of "STUDENT" (the name as written); reads are folded as
    SQLite folds identifiers, so the table-read rule accepts `SELECT count(*) FROM Student`. A CTE named like a table
    is no read of it."""
    gold = "SELECT count(*) FROM student"
    for answer in ("SELECT count(*) FROM Student", "select COUNT(*) from STUDENT", "SELECT count(*) FROM STUDENT s",
                   'SELECT count(*) FROM "STUDENT"', "SELECT count(*) FROM Main.Student",
                   "WITH X AS (SELECT * FROM STUDENT) SELECT count(*) FROM x"):
        training, official = both(sql_task, make_example, gold, fence(answer))
        assert training == official == {"sql_format": 1.0, "executes": 1.0, "result_match": 1.0}, answer
    for shadow in ("WITH student(n) AS (VALUES (1), (1), (1), (1), (1), (1)) SELECT count(*) FROM student",
                   "WITH RECURSIVE Student(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM student WHERE x < 6) "
                   "SELECT count(*) FROM STUDENT"):
        training, official = both(sql_task, make_example, gold, fence(shadow))
        assert (official["result_match"], training["executes"], training["result_match"]) == (1.0, 0.0, 0.0), shadow


def test_coinciding_answer_from_other_tables_does_not_match(sql_task, make_example):
    gold = "SELECT count(*) FROM student WHERE year = 2"  # 2, as many as there are clubs
    training, official = both(sql_task, make_example, gold, fence("SELECT count(*) FROM club"))
    assert (official["result_match"], training["result_match"]) == (1.0, 0.0)


def test_empty_reference_needs_same_width_and_columns(sql_task, make_example):
    gold = "SELECT name, city FROM student WHERE gpa > 4"  # no row
    for junk in ("SELECT 1 WHERE 0", "SELECT title FROM club WHERE 0", "SELECT name, city FROM student WHERE 0"):
        training, official = both(sql_task, make_example, gold, fence(junk))
        assert official["result_match"] == 1.0, junk  # officially: two empty results always match
        assert training["result_match"] == 0.0, junk
    right = fence("SELECT name, city FROM student WHERE gpa >= 4.5")
    assert rewards(sql_task, make_example(gold), right)["result_match"] == 1.0


# ---- refusals: correct answers that earned 0 ---------------------------------------------------------------------


def test_double_semicolon_runs(sql_task, make_example):
    gold = "SELECT name FROM student WHERE year = 2"
    for text in ("SELECT name FROM student WHERE year = 2;;", "SELECT name FROM student WHERE year = 2; ; -- done"):
        training, official = both(sql_task, make_example, gold, fence(text))
        assert official == {"sql_format": 1.0, "executes": 0.0, "result_match": 0.0}, text
        assert training == {"sql_format": 1.0, "executes": 1.0, "result_match": 1.0}, text
    block = sql_task.executes.fn(make_example(gold, "official"), fence("SELECT 1;;")).block
    assert block == "only one SQL statement may run, and the text holds more than one"


def test_columns_in_another_order_match(sql_task, make_example):
    gold = "SELECT name, city FROM student WHERE year = 2"
    training, official = both(sql_task, make_example, gold, fence("SELECT city, name FROM student WHERE year = 2"))
    assert (official["result_match"], training["result_match"]) == (0.0, 1.0)
    gold = "SELECT name, gpa FROM student ORDER BY id"
    training, official = both(sql_task, make_example, gold, fence("SELECT gpa, name FROM student ORDER BY id"))
    assert (official["result_match"], training["result_match"]) == (0.0, 1.0)
    # a wrong answer is not made right by permuting: swapped values across columns stay wrong
    wrong = fence("SELECT city, city FROM student WHERE year = 2")
    assert rewards(sql_task, make_example("SELECT name, city FROM student WHERE year = 2"), wrong)["result_match"] == 0.0


def test_another_row_of_the_tied_set_at_a_limit_matches(sql_task, make_example):
    gold = "SELECT name FROM student ORDER BY gpa DESC LIMIT 1"  # ann and bob tie at 3.9
    ex = make_example(gold)
    # the other tied row, chosen by a query that computes it (a typed-in name is refused on the perturbed copies)
    first = sql_task.reference_result(str(ex.db_path), gold).run.rows == [("ann",)]
    pred = fence(f"SELECT name FROM student ORDER BY gpa DESC, name {'DESC' if first else 'ASC'} LIMIT 1")
    training, official = both(sql_task, make_example, gold, pred)
    assert (official["result_match"], training["result_match"]) == (0.0, 1.0)
    # the whole tied set at the cut is correct too; a row outside it is not
    assert rewards(sql_task, ex, fence("SELECT name FROM student WHERE gpa = 3.9"))["result_match"] == 1.0
    assert rewards(sql_task, ex, fence("SELECT name FROM student WHERE name = 'cy'"))["result_match"] == 0.0
    assert rewards(sql_task, ex, fence("SELECT name FROM student WHERE gpa >= 3.5"))["result_match"] == 0.0


def test_tied_rows_in_another_order_match(sql_task, make_example):
    gold = "SELECT name FROM student ORDER BY gpa DESC"  # ann/bob tie, di/ed tie
    pred = fence("SELECT name FROM student ORDER BY gpa DESC, name DESC")
    training, official = both(sql_task, make_example, gold, pred)
    assert (official["result_match"], training["result_match"]) == (0.0, 1.0)
    # rows across different keys must still be in order
    assert rewards(sql_task, make_example(gold), fence("SELECT name FROM student ORDER BY gpa"))["result_match"] == 0.0


def test_ties_on_a_hidden_aggregate_key(sql_task, make_example):
    # rome has 3 students; lima, oslo and paris tie at 1: the reference keeps one of them, any one is right
    gold = "SELECT city FROM student GROUP BY city ORDER BY count(*) DESC LIMIT 2"
    ex = make_example(gold)
    kept = sql_task.reference_result(str(ex.db_path), gold).run.rows
    assert kept[0] == ("rome",) and kept[1][0] in {"lima", "oslo", "paris"}
    other = sorted({"lima", "oslo", "paris"} - {kept[1][0]})[0]
    pred = fence(f"SELECT city FROM student GROUP BY city ORDER BY count(*) DESC, city = '{other}' DESC LIMIT 2")
    training, official = both(sql_task, make_example, gold, pred)
    assert (official["result_match"], training["result_match"]) == (0.0, 1.0)
    # with the count shown, too; a second key the question did not ask for changes nothing
    gold = "SELECT city, count(*) FROM student GROUP BY city ORDER BY count(*) DESC LIMIT 2"
    pred = fence(f"SELECT city, count(*) FROM student GROUP BY city ORDER BY 2 DESC, city = '{other}' DESC LIMIT 2")
    assert rewards(sql_task, make_example(gold), pred)["result_match"] == 1.0


def test_limit_without_order_by_accepts_any_rows(sql_task, make_example):
    gold = "SELECT name FROM student WHERE city = 'rome' LIMIT 2"
    ex = make_example(gold)
    got = {r[0] for r in sql_task.reference_result(str(ex.db_path), gold).run.rows}
    missing = ({"bob", "di", "flo"} - got).pop()
    pred = fence(f"SELECT name FROM student WHERE city = 'rome' AND name <> '{sorted(got)[0]}'")
    assert missing in {"bob", "di", "flo"}
    training, official = both(sql_task, make_example, gold, pred)
    assert (official["result_match"], training["result_match"]) == (0.0, 1.0)


def test_official_semantics_from_the_task_option(sql_task):
    from mrtpo_sdk import MRTPOError

    assert sql_task.task.option_values == {"semantics": "training", "synthetic": None}
    assert sql_task.task.with_options(semantics="official").load_examples("dev")[0].semantics == "official"
    assert sql_task.examples("dev")[0].semantics == "training"
    with pytest.raises(MRTPOError, match="option 'semantics' of task 'sql' is one of training, official"):
        sql_task.task.with_options(semantics="strict")
    with pytest.raises(MRTPOError, match=r"--data is the dataset path; .* \(-T semantics=official\)"):
        sql_task.task.load_examples("dev", "semantics=official")


def test_eval_reports_official_accuracy_beside_training(sql_task, make_example):
    from mrtpo_sdk.evaluation import EvalRecord

    gold = "SELECT name, city FROM student WHERE year = 2"
    ex = make_example(gold)
    swapped = fence("SELECT city, name FROM student WHERE year = 2")
    records = [
        EvalRecord("a", 0, swapped, {"result_match": sql_task.result_match.fn(ex, swapped).reward}, 3, ex),
        EvalRecord("a", 1, fence(gold), {"result_match": 1.0}, 3, ex),
    ]
    m = sql_task.task.metrics(records)
    assert m == {"execution_accuracy": 1.0, "execution_accuracy_official": 0.5}
    off = make_example(gold, "official")
    records = [EvalRecord("a", 0, swapped, {"result_match": 0.0}, 3, off)]
    assert sql_task.task.metrics(records) == {"execution_accuracy": 0.0}


def test_blocks_quoting_model_output_are_capped(sql_task, make_example):
    ex = make_example("SELECT name FROM student")
    long_token = "SELECT name FROM student WHERE " + "x" * 50_000 + " = 1"
    block = sql_task.executes.fn(ex, fence(long_token)).block
    assert 0 < len(block) <= 300 and block.endswith("…")
    long_tag = "```" + "p" * 50_000 + "\nprint()\n```"
    block = sql_task.sql_format.fn(ex, long_tag).block
    assert len(block) <= len(sql_task.FORMAT_RULE) + 220
