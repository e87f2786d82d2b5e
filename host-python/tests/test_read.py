"""Reads: every shared-corpus table through Table.scan, Ray and Daft equals the CLI's read and
pypaimon's (the rows of its .expected.json); splits round-trip; empty reads keep the schema;
corrupt bytes raise."""

from __future__ import annotations

import json
import os
import pickle
import random
import subprocess

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc
import pytest
from conftest import CORPUS, JAVA_CHECK, corpus_tables
from make_corpus import canon_table, sort_rows

import paimon_kernel as pk

TABLES = corpus_tables()


def canon(t: pa.Table, sort_key=None):
    rows = canon_table(t)
    return sort_rows(rows, sort_key or [])


def _nullable(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _nullable(f.type), True) for f in t])
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _nullable(t.value_type), True))
    if pa.types.is_large_list(t):
        return pa.large_list(pa.field(t.value_field.name, _nullable(t.value_type), True))
    if pa.types.is_map(t):
        return pa.map_(t.key_type, _nullable(t.item_type))
    return t


def like(got: pa.Table, ours: pa.Table) -> pa.Table:
    """``got`` (an engine's output: other string/binary/time encodings, nullability) in the
    types of ``ours``."""
    target = pa.schema([pa.field(f.name, _nullable(f.type), True) for f in ours.schema])
    return got.select(ours.column_names).cast(target)


def cli_read(cli, path) -> pa.Table:
    out = subprocess.run([str(cli), "scan", str(path), "--format", "arrow"], check=True, capture_output=True).stdout
    return pa.ipc.open_stream(out).read_all()


def expected(name):
    return json.loads((CORPUS.parent / f"{name}.expected.json").read_text())


def test_the_corpus_is_there():
    assert len(TABLES) >= 40, TABLES


@pytest.mark.parametrize("name", TABLES)
def test_scan_equals_cli_and_pypaimon(cli, name):
    path = CORPUS / name
    ours = pk.open_table(str(path)).scan().to_arrow()
    theirs = cli_read(cli, path)
    assert ours.schema == theirs.schema
    exp = expected(name)
    key = exp.get("sort_key") or []
    # Same order as the CLI (canonical values: NaN compares equal to NaN).
    assert canon_table(ours) == canon_table(theirs), name
    assert canon(ours, key) == sort_rows(exp["rows"], key), f"{name}: rows differ from pypaimon's"


def test_read_paimon_on_ray_equals_scan(ray_cluster):
    from paimon_kernel.ray import read_paimon

    for name in TABLES:
        path = str(CORPUS / name)
        ours = pk.open_table(path).scan().to_arrow()
        ds = read_paimon(path)
        parts = ray_cluster.get(ds.to_arrow_refs())
        got = pa.concat_tables(parts) if parts else pa.Table.from_batches([], schema=ours.schema)
        key = expected(name).get("sort_key") or []
        assert canon(like(got, ours), key) == canon(ours, key), name


def test_read_paimon_on_daft_equals_scan():
    from paimon_kernel.daft import read_paimon

    for name in TABLES:
        path = str(CORPUS / name)
        ours = pk.open_table(path).scan().to_arrow()
        got = read_paimon(path).to_arrow()
        key = expected(name).get("sort_key") or []
        assert canon(like(got, ours), key) == canon(ours, key), name


def test_projection_filter_limit_and_time_travel():
    t = pk.open_table(str(CORPUS / "pk_dedup"))
    all_rows = t.scan().to_arrow()
    text = t.scan(columns=["k", "name"], filter="k > 200").to_arrow()
    expr = t.scan(columns=["k", "name"], filter=pc.field("k") > 200).to_arrow()
    want = all_rows.filter(pc.field("k") > 200).select(["k", "name"])
    assert sorted(text.column("k").to_pylist()) == sorted(want.column("k").to_pylist())
    assert expr.sort_by("k").equals(text.sort_by("k"))
    assert t.scan(limit=5).to_arrow().num_rows == 5
    assert t.scan(filter=pc.field("k") > 200, limit=3).to_reader().read_all().num_rows == 3
    first = t.snapshots()[0]["id"]
    old = t.scan(snapshot_id=first).to_arrow()
    assert old.num_rows != all_rows.num_rows or first == t.latest_snapshot_id()
    assert t.scan().to_pandas().shape[0] == all_rows.num_rows
    reader = t.scan().to_reader()
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.read_all().num_rows == all_rows.num_rows


def test_empty_reads_keep_the_schema(ray_cluster):
    path = str(CORPUS / "pk_dedup")
    t = pk.open_table(path)
    empty = t.scan(filter="k < -1000000").to_arrow()
    assert empty.num_rows == 0 and empty.schema == t.schema
    assert t.scan(filter="k < -1000000").to_reader().schema == t.schema
    from paimon_kernel.ray import read_paimon

    ds = read_paimon(path, filter="k < -1000000", columns=["k", "name"])
    assert ds.count() == 0
    assert ds.schema().names == ["k", "name"]


def test_splits_pickle_and_bytes_round_trip():
    t = pk.open_table(str(CORPUS / "pk_dedup_partitioned"))
    splits = t.scan().plan()
    assert len(splits) > 1
    total = 0
    for s in splits:
        p = pickle.loads(pickle.dumps(s))
        b = pk.Split.from_bytes(s.to_bytes())
        assert p.to_bytes() == s.to_bytes() == b.to_bytes()
        assert (p.bucket, p.partition, p.files, p.row_count) == (s.bucket, s.partition, s.files, s.row_count)
        a = t.read_split(s).read_all()
        assert t.read_split(p).read_all().equals(a)
        total += a.num_rows
        assert len(pickle.dumps(s)) < 64 * 1024
    assert total == t.scan().to_arrow().num_rows
    assert splits[0].partition  # a partitioned table's split names its partition values


def _mutations(data: bytes, n: int, seed: int):
    rnd = random.Random(seed)
    yield b""
    yield data[: len(data) // 2]
    yield data + b"x"
    for _ in range(n):
        b = bytearray(data)
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        yield bytes(b)


def test_corrupt_split_and_task_bytes_raise_never_crash():
    t = pk.open_table(str(CORPUS / "pk_dedup"))
    data = t.scan().plan()[0].to_bytes()
    raised = 0
    for m in _mutations(data, 300, 7):
        try:
            s = pk.Split.from_bytes(m)
            t.read_split(s).read_all()
        except (pk.PaimonError, pa.ArrowException, OSError):
            raised += 1
    assert raised > 100
    for bad in (b"", b"PKSPLIT1", b"PKSPLIT1{}", b"PKSPLIT1" + b"\xff" * 10):
        with pytest.raises(pk.CorruptFile):
            pk.Split.from_bytes(bad)
    for bad in (b"", b"PKTASK1[]", b"junk"):
        with pytest.raises(pk.CorruptFile):
            pk.CompactTask.from_bytes(bad)


def _json_rows(rows):
    return sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in rows)


def _java_check(tool: str):
    path = JAVA_CHECK / tool
    if not path.exists():
        if os.environ.get("CI"):
            raise AssertionError(f"the Java checker is not installed at {JAVA_CHECK} (scripts/install-deps.sh)")
        pytest.skip(f"the Java checker is not installed at {JAVA_CHECK}")
    return path


@pytest.mark.parametrize("name", ["pk_dedup_partitioned", "pk_dv_mor", "append_partitioned", "de_update", "de_dv_delete"])
def test_java_reads_our_data_split_bytes_and_we_read_javas(tmp_path, name):
    """Java Paimon 2.0 deserializes the DataSplit bytes of our plan and reads each split with
    the rows we read; Java's own plan, serialized by Java, is read by us with the same rows."""
    read_split, write_split = _java_check("read-split"), _java_check("write-split")
    t = pk.open_table(str(CORPUS / name))
    splits = t.scan().plan()
    assert splits
    for i, s in enumerate(splits):
        f = tmp_path / f"split-{i}.bin"
        f.write_bytes(t.split_to_java_bytes(s))
        out = subprocess.run([str(read_split), str(CORPUS / name), str(f)], check=True, capture_output=True, text=True).stdout
        theirs = [json.loads(line) for line in out.splitlines() if line.strip()]
        mine = json.loads(json.dumps(t.read_split(s).read_all().to_pylist(), default=str))
        assert _json_rows(theirs) == _json_rows(mine), (name, i)
    java_plan = tmp_path / "java-plan.bin"
    subprocess.run([str(write_split), str(CORPUS / name), str(java_plan)], check=True, capture_output=True, text=True)
    data, rows = java_plan.read_bytes(), []
    pos = 0
    while pos < len(data):
        n = int.from_bytes(data[pos : pos + 4], "big")
        split = t.split_from_java_bytes(data[pos + 4 : pos + 4 + n])
        rows.extend(t.read_split(split).read_all().to_pylist())
        pos += 4 + n
    whole = t.scan().to_arrow().to_pylist()
    assert _json_rows(json.loads(json.dumps(rows, default=str))) == _json_rows(json.loads(json.dumps(whole, default=str)))


def test_java_data_split_bytes_round_trip_and_read():
    for name in ("pk_dedup_partitioned", "pk_dv", "append_partitioned"):
        t = pk.open_table(str(CORPUS / name))
        for s in t.scan().plan():
            java = t.split_to_java_bytes(s)
            # Java DataSplit magic and version 8.
            assert java[:12] == bytes.fromhex("dec3d2302c19ec66") + (8).to_bytes(4, "big")
            back = t.split_from_java_bytes(java)
            assert t.split_to_java_bytes(back) == java
            assert (back.bucket, back.partition, back.files) == (s.bucket, s.partition, s.files)
            assert canon_table(t.read_split(back).read_all()) == canon_table(t.read_split(s).read_all()), name
    t = pk.open_table(str(CORPUS / "pk_dedup"))
    java = t.split_to_java_bytes(t.scan().plan()[0])
    for n in (0, 8, 20, len(java) - 1):
        with pytest.raises(pk.CorruptFile):
            t.split_from_java_bytes(java[:n])
