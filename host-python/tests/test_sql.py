"""SQL (issue 40): paimon_kernel.sql and datafusion-python over Paimon tables. Answers are
checked against the corpus's expected rows (pypaimon's read) computed in plain Python, and
against the kernel's own scan for every corpus table; INSERT INTO commits once; bad SQL,
unknown names and type mismatches raise InvalidInput."""

from __future__ import annotations

import json
import math
import shutil
from collections import defaultdict

import pyarrow as pa
import pytest
from conftest import CORPUS, corpus_tables
from make_corpus import canon_table, sort_rows

import paimon_kernel as pk

EXPECTED = CORPUS.parent


def expected_rows(name):
    return json.loads((EXPECTED / f"{name}.expected.json").read_text())["rows"]


def table(name):
    return pk.open_table(str(CORPUS / name))


def test_group_by_with_a_filter_equals_the_corpus_rows():
    got = pk.sql(
        "SELECT region, count(*) AS n, sum(amount) AS total FROM t "
        "WHERE yr >= 2023 GROUP BY region ORDER BY region NULLS LAST",
        tables={"t": table("append_partitioned")},
    ).to_pylist()
    groups = defaultdict(lambda: [0, 0.0])
    for r in expected_rows("append_partitioned"):
        if r["yr"] is not None and r["yr"] >= 2023:
            g = groups[r["region"]]
            g[0] += 1
            g[1] += r["amount"] or 0.0
    want = sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))
    assert len(got) == len(want) > 1
    for row, (region, (n, total)) in zip(got, want):
        assert row["region"] == region
        assert row["n"] == n
        assert math.isclose(row["total"], total, rel_tol=1e-9, abs_tol=1e-9)


def test_a_join_of_two_primary_key_tables_equals_the_corpus_rows():
    got = pk.sql(
        "SELECT d.k, d.name, a.s_sum, a.la FROM d JOIN a ON d.k = a.k ORDER BY d.k",
        tables={"d": table("pk_dedup"), "a": str(CORPUS / "pk_aggregation")},
    ).to_pylist()
    agg = {r["k"]: r for r in expected_rows("pk_aggregation")}
    want = [
        {"k": r["k"], "name": r["name"], "s_sum": agg[r["k"]]["s_sum"], "la": agg[r["k"]]["la"]}
        for r in sorted(expected_rows("pk_dedup"), key=lambda r: r["k"])
        if r["k"] in agg
    ]
    assert want and got == want


def test_order_by_limit_equals_the_corpus_rows():
    got = pk.sql(
        "SELECT k, val FROM d WHERE val IS NOT NULL ORDER BY val DESC, k LIMIT 3",
        tables={"d": table("pk_dedup")},
    ).to_pylist()
    rows = [r for r in expected_rows("pk_dedup") if r["val"] is not None]
    want = [{"k": r["k"], "val": r["val"]} for r in sorted(rows, key=lambda r: (-r["val"], r["k"]))[:3]]
    assert got == want


@pytest.mark.parametrize("name", corpus_tables())
def test_select_star_of_every_corpus_table_equals_the_scan(name):
    t = table(name)
    sort_key = json.loads((EXPECTED / f"{name}.expected.json").read_text())["sort_key"]
    got = pk.sql("SELECT * FROM t", tables={"t": t})
    want = t.scan().to_arrow()
    assert got.column_names == want.column_names
    assert sort_rows(canon_table(got), sort_key) == sort_rows(canon_table(want), sort_key)
    (n,) = pk.sql("SELECT count(*) AS n FROM t", tables={"t": t}).column("n").to_pylist()
    assert n == want.num_rows


def test_system_tables_answer_as_the_table_does():
    t = table("append_tags_rollback")
    got = pk.sql(
        'SELECT snapshot_id, commit_kind FROM "t$snapshots" ORDER BY snapshot_id', tables={"t": t}
    ).to_pylist()
    assert [r["snapshot_id"] for r in got] == sorted(s["id"] for s in t.snapshots())
    tags = pk.sql('SELECT tag_name, snapshot_id FROM "t$tags" ORDER BY tag_name', tables={"t": t}).to_pylist()
    assert [(r["tag_name"], r["snapshot_id"]) for r in tags] == sorted((g["name"], g["snapshot_id"]) for g in t.tags())
    files = pk.sql('SELECT count(*) AS n FROM "t$files"', tables={"t": t}).column("n").to_pylist()
    assert files == [len(t.files())]


def test_a_warehouse_resolves_database_dot_table():
    got = pk.sql(
        "SELECT count(*) AS n, count(DISTINCT k) AS keys FROM corpus.pk_dedup", warehouse=str(EXPECTED)
    ).to_pylist()
    n = len(expected_rows("pk_dedup"))
    assert got == [{"n": n, "keys": n}]
    wh = pk.Warehouse(str(EXPECTED))
    assert "pk_dedup" in wh.databases()["corpus"]


def test_an_empty_result_keeps_its_schema():
    got = pk.sql("SELECT k, name, val FROM d WHERE k < -1000", tables={"d": table("pk_dedup")})
    assert got.num_rows == 0
    assert got.schema.names == ["k", "name", "val"]
    assert got.schema.field("k").type == pa.int64()
    assert got.schema.field("val").type == pa.float64()


def test_insert_into_commits_once_and_reads_back(tmp_path):
    dst = tmp_path / "append_partitioned"
    shutil.copytree(CORPUS / "append_partitioned", dst)
    t = pk.open_table(str(dst))
    before = t.latest_snapshot_id()
    got = pk.sql(
        "INSERT INTO t VALUES ('zz', 2030, 9001, 'new', 1.5), ('zz', 2031, 9002, NULL, NULL)",
        tables={"t": t},
    )
    assert got.column(0).to_pylist() == [2]
    t = pk.open_table(str(dst))
    assert t.latest_snapshot_id() == before + 1
    rows = t.scan(filter="region = 'zz'").to_arrow().sort_by("id").to_pylist()
    assert rows == [
        {"region": "zz", "yr": 2030, "id": 9001, "payload": "new", "amount": 1.5},
        {"region": "zz", "yr": 2031, "id": 9002, "payload": None, "amount": None},
    ]
    assert t.scan().to_arrow().num_rows == len(expected_rows("append_partitioned")) + 2


@pytest.mark.parametrize(
    "query",
    [
        "SELEC k FROM d",  # bad SQL
        "SELECT nope FROM d",  # unknown column
        "SELECT k FROM missing_table",  # unknown table
        "SELECT k FROM d WHERE k = 'not a number'",  # type mismatch
    ],
)
def test_bad_queries_raise_invalid_input(query):
    with pytest.raises(pk.InvalidInput):
        pk.sql(query, tables={"d": table("pk_dedup")})


def test_datafusion_python_registers_a_table_and_a_warehouse():
    datafusion = pytest.importorskip("datafusion")
    ctx = datafusion.SessionContext()
    ctx.register_table("d", table("pk_dedup"))
    got = ctx.sql("SELECT k, name FROM d WHERE k <= 5 ORDER BY k").to_arrow_table().to_pylist()
    want = [{"k": r["k"], "name": r["name"]} for r in sorted(expected_rows("pk_dedup"), key=lambda r: r["k"]) if r["k"] <= 5]
    assert want and got == want

    ctx.register_catalog_provider("paimon", pk.Warehouse(str(EXPECTED)))
    (n,) = ctx.sql("SELECT count(*) AS n FROM paimon.corpus.pk_aggregation").to_arrow_table().column("n").to_pylist()
    assert n == len(expected_rows("pk_aggregation"))
