"""The hostile SQL battery: queries that must each end within 2 s and 512 MB, stopped by a limit that the error
names (nested CTE expansion, huge printf/instr/replace, zeroblobs, unbounded recursion, cross joins, deep
expressions, results just under the result cap...), written against the bundled ``university`` database.

``tests/sql/test_hostile.py`` runs a sample of them in CI; ``python benchmarks/hostile_sql.py`` runs the whole
battery, one fresh process per query, and prints time and peak memory. The battery lives in the tests package so
that both import it (no test loads a benchmark).
"""

from __future__ import annotations


def cte_chain(levels, refs=2, op="UNION ALL"):
    parts = ["c0 AS (SELECT 1 AS x)"]
    for i in range(1, levels + 1):
        body = f" {op} ".join([f"SELECT x FROM c{i-1}"] * refs)
        parts.append(f"c{i} AS ({body})")
    return "WITH " + ", ".join(parts) + f" SELECT count(*) FROM c{levels}"

def cte_join_chain(levels):
    parts = ["c0 AS (SELECT 1 AS x)"]
    for i in range(1, levels + 1):
        parts.append(f"c{i} AS (SELECT a.x FROM c{i-1} a, c{i-1} b)")
    return "WITH " + ", ".join(parts) + f" SELECT count(*) FROM c{levels}"

def cte_sub_chain(levels):
    parts = ["c0 AS (SELECT 1 AS x)"]
    for i in range(1, levels + 1):
        parts.append(f"c{i} AS (SELECT x FROM c{i-1} WHERE x IN (SELECT x FROM c{i-1}))")
    return "WITH " + ", ".join(parts) + f" SELECT count(*) FROM c{levels}"

BIG = "printf('%.*c', 999999, 'a')"
HOSTILE = {
 "cte_union_21": cte_chain(21),
 "cte_union_25": cte_chain(25),
 "cte_union_40": cte_chain(40),
 "cte_union3_14": cte_chain(14, refs=3),
 "cte_union_materialized_25": cte_chain(25).replace(" AS (", " AS MATERIALIZED ("),
 "cte_union_not_materialized_22": cte_chain(22).replace(" AS (", " AS NOT MATERIALIZED (").replace("x AS NOT MATERIALIZED (", "x AS ("),
 "cte_join_22": cte_join_chain(22),
 "cte_subquery_22": cte_sub_chain(22),
 "cte_union_distinct_22": cte_chain(22, op="UNION"),
 "printf_huge_width": "SELECT printf('%.*c', 2147483647, 'x')",
 "printf_huge_width_len": "SELECT length(printf('%.*c', 2147483647, 'x'))",
 "printf_width_star": "SELECT printf('%*d', 2147483647, 1)",
 "printf_three": "SELECT printf('%.*c', 2147483647, 'x'), printf('%.*c', 2147483647, 'y'), printf('%.*c', 2147483647, 'z')",
 "printf_float_precision": "SELECT printf('%.*f', 2147483647, 1.5)",
 "printf_exp_precision": "SELECT printf('%.*e', 2147483647, 1.5)",
 "printf_g_width": "SELECT printf('%2147483647g', 1.5)",
 "printf_q_huge": f"SELECT printf('%q', {BIG})",
 "instr_huge": f"SELECT instr({BIG}, printf('%.*c', 499999, 'a') || 'b')",
 "instr_three": f"SELECT instr({BIG}, printf('%.*c', 499999, 'a') || 'b'), instr({BIG}, printf('%.*c', 499998, 'a') || 'b'), instr({BIG}, printf('%.*c', 499997, 'a') || 'b')",
 "instr_many_40": "SELECT " + ", ".join(f"instr({BIG}, printf('%.*c', {499999-i}, 'a') || 'b')" for i in range(40)),
 "instr_blob": "SELECT instr(zeroblob(999999), zeroblob(499999) || x'01')",
 "replace_huge": f"SELECT length(replace({BIG}, printf('%.*c', 499999, 'a') || 'b', 'c'))",
 "replace_blowup": f"SELECT length(replace({BIG}, 'a', 'aaaaaaaaaa'))",
 "replace_many_10": "SELECT " + ", ".join(f"length(replace({BIG}, printf('%.*c', {499999-i}, 'a') || 'b', 'c'))" for i in range(10)),
 "like_backtrack": f"SELECT {BIG} LIKE '%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%b'",
 "glob_backtrack": f"SELECT {BIG} GLOB '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'",
 "like_long_pattern": f"SELECT {BIG} LIKE {BIG} || 'b'",
 "zeroblob_1000_cols": "SELECT " + ", ".join("zeroblob(499999)" for _ in range(1000)),
 "zeroblob_big": "SELECT zeroblob(999999)",
 "zeroblob_rows": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 10000) SELECT zeroblob(999999) FROM r",
 "randomblob_cols": "SELECT " + ", ".join("randomblob(999999)" for _ in range(500)),
 "printf_cols": "SELECT " + ", ".join(f"printf('%.*c', 999999, 'q')" for _ in range(500)),
 "hex_huge": "SELECT hex(zeroblob(999999))",
 "group_concat_huge": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT group_concat(printf('%.*c', 1000, 'x')) FROM r",
 "recursive_unbounded": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r",
 "recursive_rows": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT n FROM r",
 "recursive_strings": "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r",
 "recursive_blob_grow": "WITH RECURSIVE r(b) AS (SELECT zeroblob(1) UNION ALL SELECT zeroblob(length(b)*2) FROM r) SELECT count(*) FROM r",
 "recursive_order_by": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT n FROM r ORDER BY n DESC LIMIT 1",
 "recursive_distinct": "WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n+1 FROM r) SELECT count(DISTINCT n) FROM r",
 "recursive_fanout": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n FROM r, (SELECT 1 UNION ALL SELECT 2)) SELECT count(*) FROM r",
 "cross_join_5": "SELECT count(*) FROM student a, student b, student c, student d, student e",
 "cross_join_8_sorted": "SELECT a.name FROM student a, student b, student c, student d, student e, student f, student g, student h ORDER BY random() LIMIT 1",
 "cross_join_group": "SELECT a.name, count(*) FROM student a, student b, student c, student d GROUP BY a.name, b.name, c.name, d.name",
 "cross_join_distinct_blob": "SELECT DISTINCT a.name || b.name || c.name || zeroblob(100000) FROM student a, student b, student c",
 "join_64_tables": "SELECT count(*) FROM " + ", ".join(f"student s{i}" for i in range(64)),
 "join_64_where": "SELECT count(*) FROM " + ", ".join(f"student s{i}" for i in range(64)) + " WHERE " + " AND ".join(f"s{i}.student_id = s{i+1}.dept_id" for i in range(63)),
 "expr_deep_parens": "SELECT " + "(" * 5000 + "1" + ")" * 5000,
 "expr_deep_plus": "SELECT " + "+".join(["1"] * 20000),
 "expr_deep_case": "SELECT " + "CASE WHEN 1 THEN " * 2000 + "1" + " END" * 2000,
 "compound_many": " UNION ALL ".join(["SELECT 1"] * 5000),
 "in_list_huge": "SELECT count(*) FROM student WHERE student_id IN (" + ",".join(str(i) for i in range(20000)) + ")",
 "subquery_nest_deep": "SELECT " + "(SELECT " * 500 + "1" + ")" * 500,
 "from_nest_deep": "SELECT * FROM " + "(SELECT * FROM " * 200 + "student" + ")" * 200,
 "window_huge": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT sum(n) OVER (ORDER BY n ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM r",
 "json_deep": "SELECT json('" + "[" * 100000 + "]" * 100000 + "')",
 "json_each_huge": f"SELECT count(*) FROM json_each('[' || replace({BIG}, 'a', '1,') || '1]')",
 "order_by_many_cols": "SELECT name FROM student ORDER BY " + ", ".join(f"random() + {i}" for i in range(900)),
 "many_functions": "SELECT " + ", ".join(f"length(printf('%.*c', 99999, 'a') || {i})" for i in range(900)),
 "char_huge": "SELECT length(char(" + ",".join(["65"] * 100) + "))",
 "substr_zeroblob": "SELECT substr(zeroblob(999999), 1, 999999)",
 "quote_zeroblob": "SELECT quote(zeroblob(499999))",
 "upper_huge": f"SELECT length(upper({BIG}))",
 "sort_blobs": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 3000) SELECT n FROM r ORDER BY randomblob(500000)",
 "distinct_blobs": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 3000) SELECT count(DISTINCT randomblob(500000)) FROM r",
 "group_blob_keys": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 3000) SELECT count(*) FROM r GROUP BY printf('%.*c', 500000, n % 10) || n",
 "nested_views_like": "SELECT * FROM (" + " UNION ALL ".join(["SELECT * FROM student"] * 400) + ")",
 "long_query_text": "SELECT '" + "x" * 99000 + "'",
 "many_columns_star": "SELECT * FROM " + ", ".join(f"student s{i}" for i in range(60)) + " LIMIT 1",
 "soundex_huge": f"SELECT soundex({BIG})",
 "trim_huge": f"SELECT length(trim({BIG}, {BIG}))",
 "ltrim_charset": f"SELECT length(ltrim({BIG} || 'b', {BIG}))",
 "unicode_huge": f"SELECT unicode({BIG})",
 # results just under the 32 MB result cap: they run, and come back through the worker's pipe (the first one of a
 # process took 3-6 s while the caller appended 64 KB pipe reads to a growing bytes object)
 "result_31mb_cols": "SELECT " + ", ".join("printf('%.*c', 999999, 'q')" for _ in range(31)),
 "result_31mb_blobs": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 31) SELECT zeroblob(999999) FROM r",
 "result_30mb_rows": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 9999) SELECT printf('%.*c', 3000, 'q') FROM r",
}
