"""Writes, commits and compaction from Python, Ray and Daft: read back by pypaimon and Java;
failures publish nothing; bad input is refused naming the column."""

from __future__ import annotations

import os
import pickle
import random
import shutil
import subprocess
import time
import json
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import JAVA_CHECK
from make_corpus import canon_table, sort_rows

import paimon_kernel as pk

JAVA_READ = JAVA_CHECK / "read"


def rows(t: pa.Table, key):
    return sort_rows(canon_table(t), key)


def pypaimon_read(path: Path) -> pa.Table:
    """pypaimon 2.1.0's read of the table at ``path`` (a filesystem catalog at its
    grandparent: <warehouse>/<db>.db/<table>)."""
    from pypaimon import CatalogFactory

    catalog = CatalogFactory.create({"warehouse": str(path.parent.parent)})
    t = catalog.get_table(f"{path.parent.name[:-3]}.{path.name}")
    rb = t.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def java_read(path: Path, ours: pa.Table, key):
    """Java Paimon's rows (JSON lines of the Java checker) against ours, by canonical JSON."""
    out = subprocess.run([str(JAVA_READ), str(path)], check=True, capture_output=True, text=True).stdout
    theirs = [json.loads(line) for line in out.splitlines() if line.strip()]
    mine = json.loads(json.dumps(ours.to_pylist(), default=str))
    keyf = lambda r: tuple(str(r.get(k)) for k in key)  # noqa: E731
    return sorted(theirs, key=keyf), sorted(mine, key=keyf)


def new_table(root: Path, name: str, schema: dict) -> pk.Table:
    return pk.create_table(str(root / "w.db" / name), schema)


SCHEMA_FIELDS = [
    {"id": 0, "name": "id", "type": "BIGINT NOT NULL"},
    {"id": 1, "name": "v", "type": "STRING"},
    {"id": 2, "name": "n", "type": "INT"},
    {"id": 3, "name": "b", "type": "BYTES"},
]


def data(lo: int, hi: int, large=False) -> pa.Table:
    ids = list(range(lo, hi))
    st = pa.large_string() if large else pa.string()
    bt = pa.large_binary() if large else pa.binary()
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array([f"v{i}" for i in ids], st),
            "n": pa.array([i % 7 for i in ids], pa.int32()),
            "b": pa.array([str(i).encode() for i in ids], bt),
        }
    )


TABLE_KINDS = {
    "append": {"fields": SCHEMA_FIELDS, "options": {}},
    "append_fixed": {"fields": SCHEMA_FIELDS, "options": {"bucket": "3", "bucket-key": "id"}},
    "pk_dedup": {"fields": SCHEMA_FIELDS, "primaryKeys": ["id"], "options": {"bucket": "4"}},
    "pk_partial": {"fields": SCHEMA_FIELDS, "primaryKeys": ["id"], "options": {"bucket": "2", "merge-engine": "partial-update"}},
    "pk_agg": {"fields": SCHEMA_FIELDS, "primaryKeys": ["id"], "options": {"bucket": "2", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum"}},
    "pk_first_row": {"fields": SCHEMA_FIELDS, "primaryKeys": ["id"], "options": {"bucket": "2", "merge-engine": "first-row"}},
    "pk_dynamic": {"fields": SCHEMA_FIELDS, "primaryKeys": ["id"], "options": {"bucket": "-1"}},
    "data_evolution": {"fields": SCHEMA_FIELDS, "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}},
}


@pytest.mark.parametrize("kind", sorted(TABLE_KINDS))
def test_write_paimon_on_ray_is_read_back_by_pypaimon_and_java(ray_cluster, tmp_path, kind):
    import ray

    from paimon_kernel.ray import write_paimon

    t = new_table(tmp_path, kind, TABLE_KINDS[kind])
    src = ray.data.from_arrow([data(0, 300), data(300, 600, large=True)])
    out = write_paimon(src, t.uri)
    assert out["snapshot_ids"], out
    # A second write overlapping the keys: merge engines decide.
    write_paimon(ray.data.from_arrow(data(500, 700)), t.uri)
    ours = t.scan().to_arrow()
    expect_rows = 700 if kind != "append" and kind != "append_fixed" and kind != "data_evolution" else 800
    assert ours.num_rows == expect_rows
    if kind == "pk_agg":
        got = {r["id"]: r["n"] for r in ours.select(["id", "n"]).to_pylist()}
        assert got[550] == 2 * (550 % 7) and got[100] == 100 % 7
    assert rows(pypaimon_read(Path(t.uri.removeprefix("file://"))), ["id"]) == rows(ours, ["id"]), kind
    theirs, mine = java_read(Path(t.uri.removeprefix("file://")), ours, ["id", "v"])
    assert [(r["id"], r["v"], r["n"]) for r in theirs] == [(r["id"], r["v"], r["n"]) for r in mine], kind


def test_a_failing_task_publishes_nothing_and_orphans_are_found(ray_cluster, tmp_path):
    import ray

    from paimon_kernel.ray import PaimonDatasink, write_paimon

    t = new_table(tmp_path, "append", TABLE_KINDS["append"])
    t.write_arrow(data(0, 10))
    before = t.latest_snapshot_id()

    def boom(batch):
        if 105 in batch["id"].to_pylist():
            raise ValueError("boom in one block")
        return batch

    src = ray.data.from_arrow([data(100, 110), data(200, 210)]).map_batches(boom, batch_format="pyarrow")
    with pytest.raises(Exception, match="boom"):
        write_paimon(src, t.uri, ray_remote_args={"max_retries": 0})
    assert t.latest_snapshot_id() == before
    assert t.scan().to_arrow().num_rows == 10
    # The sink's protocol directly: a completed task's files, then a failure: nothing visible,
    # and remove_orphan_files finds the completed task's files.
    sink = PaimonDatasink(t)
    done = sink.write([data(300, 320)], None)
    assert done and all(not m.is_empty() for m in done)
    with pytest.raises(pk.InvalidInput, match="id"):
        sink.write([data(400, 410).set_column(0, "id", pa.array([None] * 10, pa.int64()))], None)
    sink.on_write_failed(RuntimeError("a task failed"))
    assert t.latest_snapshot_id() == before and t.scan().to_arrow().num_rows == 10
    removed = t.remove_orphan_files(older_than=0)["removed"]
    written = {f for m in done for f in m.new_files}
    assert written <= {Path(r["path"]).name for r in removed}, (written, removed)
    assert t.scan().to_arrow().num_rows == 10


def test_a_retried_write_task_does_not_double_rows(ray_cluster, tmp_path):
    import ray

    from paimon_kernel.ray import write_paimon

    t = new_table(tmp_path, "append", TABLE_KINDS["append"])
    marker = tmp_path / "failed-once"

    def flaky(batch, marker=str(marker)):
        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)  # the worker dies mid-task: Ray retries the task
        return batch

    src = ray.data.from_arrow(data(0, 50)).map_batches(flaky, batch_format="pyarrow")
    write_paimon(src, t.uri, ray_remote_args={"max_retries": 3})
    assert marker.exists()
    got = t.scan().to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(50))


def test_overwrite_of_one_partition(ray_cluster, tmp_path):
    import ray

    from paimon_kernel.ray import write_paimon

    schema = {"fields": SCHEMA_FIELDS + [{"id": 4, "name": "dt", "type": "STRING NOT NULL"}], "partitionKeys": ["dt"], "options": {}}
    t = new_table(tmp_path, "parts", schema)
    a = data(0, 10).append_column("dt", pa.array(["a"] * 10))
    b = data(10, 20).append_column("dt", pa.array(["b"] * 10))
    t.write_arrow(pa.concat_tables([a, b]))
    new_a = data(100, 103).append_column("dt", pa.array(["a"] * 3))
    write_paimon(ray.data.from_arrow(new_a), t.uri, mode="overwrite", static_partition={"dt": "a"})
    got = t.scan().to_arrow()
    by = {}
    for r in got.to_pylist():
        by.setdefault(r["dt"], []).append(r["id"])
    assert sorted(by["a"]) == [100, 101, 102] and sorted(by["b"]) == list(range(10, 20))
    assert rows(pypaimon_read(Path(t.uri.removeprefix("file://"))), ["id"]) == rows(got, ["id"])


def test_bad_input_is_refused_naming_the_column_before_anything_is_written(tmp_path):
    t = new_table(tmp_path, "pk", TABLE_KINDS["pk_dedup"])
    root = Path(t.uri.removeprefix("file://"))
    cases = {
        "missing column": (data(0, 5).drop_columns(["v"]), "v"),
        "wrong type": (data(0, 5).set_column(2, "n", pa.array(["x"] * 5)), "n"),
        "NULL key": (data(0, 5).set_column(0, "id", pa.array([1, None, 3, 4, 5], pa.int64())), "id"),
    }
    for what, (bad, column) in cases.items():
        with pytest.raises(pk.InvalidInput, match=column):
            t.write_arrow(bad)
        assert t.latest_snapshot_id() is None, what
        assert not [p for p in root.rglob("*") if p.is_file() and "bucket-" in str(p)], what
    # string/large_string and binary/large_binary are both accepted.
    t.write_arrow(data(0, 5, large=True))
    t.write_arrow(data(5, 10))
    assert t.scan().to_arrow().num_rows == 10


def test_commit_messages_round_trip_and_commit_once(tmp_path):
    t = new_table(tmp_path, "pk", TABLE_KINDS["pk_dedup"])
    w = t.new_write(commit_user="u1")
    w.write(data(0, 100))
    messages = w.prepare_commit()
    assert len(messages) == 4
    again = [pickle.loads(pickle.dumps(m)) for m in messages]
    java = [pk.CommitMessage.from_bytes(m.to_bytes()) for m in messages]
    assert [m.to_bytes() for m in again] == [m.to_bytes() for m in messages] == [m.to_bytes() for m in java]
    assert [m.to_bytes(11) for m in java] == [m.to_bytes(11) for m in messages]
    first = t.commit(java, commit_identifier=7, commit_user="u1")
    second = t.commit(again, commit_identifier=7, commit_user="u1")
    assert first["snapshot_ids"] and second["already_committed"]
    assert t.scan().to_arrow().num_rows == 100 and len(t.snapshots()) == 1
    data_bytes = messages[0].to_bytes()
    raised = 0
    rnd = random.Random(3)
    for i in range(300):
        b = bytearray(data_bytes[: rnd.randrange(len(data_bytes))] if i % 3 == 0 else data_bytes)
        for _ in range(rnd.randint(1, 3)):
            if b:
                b[rnd.randrange(len(b))] = rnd.randrange(256)
        try:
            pk.CommitMessage.from_bytes(bytes(b))
        except pk.PaimonError:
            raised += 1
    assert raised > 100


def test_ray_compaction_equals_cli_compact(ray_cluster, tmp_path, cli):
    import ray

    from paimon_kernel.ray import compact, write_paimon

    for kind in ("pk_dedup", "append"):
        schema = dict(TABLE_KINDS[kind])
        schema["options"] = dict(schema["options"], **{"compaction.min.file-num": "2"})
        t = new_table(tmp_path, kind, schema)
        for i in range(3):
            write_paimon(ray.data.from_arrow(data(i * 40, i * 40 + 60)), t.uri)
        src = Path(t.uri.removeprefix("file://"))
        copy = src.parent / (src.name + "_cli")
        shutil.copytree(src, copy)
        out = compact(t.uri, full=True)
        assert out["tasks"] >= 1 and out["commit"]["snapshot_ids"]
        subprocess.run([str(cli), "compact", str(copy), "--full"], check=True, capture_output=True)
        c = pk.open_table(str(copy))
        assert rows(t.scan().to_arrow(), ["id"]) == rows(c.scan().to_arrow(), ["id"]), kind
        per_bucket = lambda tb: sorted((f["bucket"], f["level"], f["record_count"]) for f in tb.files())  # noqa: E731
        assert per_bucket(t) == per_bucket(c), kind
        assert compact(t.uri, full=False)["tasks"] == 0 or kind == "append"


def test_ray_compaction_with_a_concurrent_writer(ray_cluster, tmp_path, monkeypatch):
    """A writer that commits while the Ray compaction tasks run: both commits land and no row
    is lost; a concurrent compaction of the same files makes ours raise CommitConflict,
    publish nothing and delete its outputs."""
    from paimon_kernel.ray import compact

    schema = dict(TABLE_KINDS["pk_dedup"])
    t = new_table(tmp_path, "pk", schema)
    for i in range(3):
        t.write_arrow(data(i * 40, i * 40 + 60))
    original = pk.Table.commit
    calls = []

    def commit_after_a_concurrent_write(self, messages, commit_identifier=None, commit_user=None):
        if not calls:
            calls.append("writer")
            other = pk.open_table(t.uri)
            other.write_arrow(data(1000, 1010))
        return original(self, messages, commit_identifier=commit_identifier, commit_user=commit_user)

    monkeypatch.setattr(pk.Table, "commit", commit_after_a_concurrent_write)
    out = compact(t.uri, full=True)
    monkeypatch.setattr(pk.Table, "commit", original)
    assert calls == ["writer"] and out["commit"]["snapshot_ids"]
    kinds = [s["commitKind"] for s in t.snapshots()]
    assert kinds[-2:] == ["APPEND", "COMPACT"], kinds
    got = t.scan().to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(140)) + list(range(1000, 1010))
    assert rows(pypaimon_read(Path(t.uri.removeprefix("file://"))), ["id"]) == rows(got, ["id"])

    # A concurrent full compaction removes our inputs: ours conflicts and leaves nothing.
    t.write_arrow(data(2000, 2010))
    before = t.latest_snapshot_id()
    data_dir = Path(t.uri.removeprefix("file://"))
    disk = lambda: {p.name for p in data_dir.glob("bucket-*/*") if p.is_file()}  # noqa: E731
    disk_before = disk()

    def commit_after_a_concurrent_compaction(self, messages, commit_identifier=None, commit_user=None):
        if len(calls) == 1:
            calls.append("compaction")
            pk.open_table(t.uri).compact(full=True)
        return original(self, messages, commit_identifier=commit_identifier, commit_user=commit_user)

    monkeypatch.setattr(pk.Table, "commit", commit_after_a_concurrent_compaction)
    with pytest.raises(pk.CommitConflict):
        compact(t.uri, full=True)
    monkeypatch.setattr(pk.Table, "commit", original)
    assert t.latest_snapshot_id() == before + 1  # the other compaction only
    live = {Path(f["file_path"]).name for f in t.files()}
    # Only the other compaction's outputs are new on disk: ours were deleted.
    assert disk() - disk_before == live - disk_before, "our compaction's outputs were deleted"
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == list(range(140)) + list(range(1000, 1010)) + list(range(2000, 2010))


@pytest.mark.parametrize("kind", ["append", "pk_dedup"])
def test_write_paimon_commits_periodically(ray_cluster, tmp_path, kind):
    import ray

    from paimon_kernel.ray import write_paimon

    t = new_table(tmp_path, kind, TABLE_KINDS[kind])
    blocks = [data(i * 100, i * 100 + 100) for i in range(6)]
    out = write_paimon(ray.data.from_arrow(blocks), t.uri, commit_interval_seconds=0)
    assert out["commits"] >= 2 and len(out["snapshot_ids"]) == out["commits"], out
    assert [s["id"] for s in t.snapshots()] == out["snapshot_ids"]
    got = t.scan().to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(600))
    assert rows(pypaimon_read(Path(t.uri.removeprefix("file://"))), ["id"]) == rows(got, ["id"])
    theirs, mine = java_read(Path(t.uri.removeprefix("file://")), got, ["id", "v"])
    assert [(r["id"], r["v"]) for r in theirs] == [(r["id"], r["v"]) for r in mine]
    # A long interval: one commit at the end.
    out = write_paimon(ray.data.from_arrow(blocks[:2]), t.uri, commit_interval_seconds=3600)
    assert out["commits"] == 1


def test_periodic_commits_survive_a_later_failure(ray_cluster, tmp_path):
    import ray

    from paimon_kernel.ray import write_paimon

    t = new_table(tmp_path, "append", TABLE_KINDS["append"])

    def late_failure(batch):
        if 500 in batch["id"].to_pylist():
            time.sleep(3)
            raise ValueError("boom late")
        return batch

    blocks = [data(i * 100, i * 100 + 100) for i in range(6)]
    src = ray.data.from_arrow(blocks).map_batches(late_failure, batch_format="pyarrow", batch_size=None)
    with pytest.raises(Exception, match="boom late"):
        write_paimon(src, t.uri, commit_interval_seconds=0, ray_remote_args={"max_retries": 0})
    ids = sorted(t.scan().to_arrow().column("id").to_pylist())
    # What was committed stays, whole blocks only, never the failed one, never twice.
    assert ids and len(ids) == len(set(ids)) and len(ids) % 100 == 0
    assert not any(500 <= i < 600 for i in ids)
    assert {i // 100 for i in ids} <= {0, 1, 2, 3, 4}
    with pytest.raises(pk.InvalidInput, match="overwrite"):
        write_paimon(ray.data.from_arrow(blocks[:1]), t.uri, mode="overwrite", commit_interval_seconds=1)


def test_local_plan_and_run_compaction_tasks_with_pickled_tasks(tmp_path):
    t = new_table(tmp_path, "pk", TABLE_KINDS["pk_dedup"])
    for i in range(3):
        t.write_arrow(data(i * 10, i * 10 + 20))
    tasks = t.plan_compaction(full=True)
    assert tasks and all(task.files for task in tasks)
    messages = [m for task in tasks for m in t.run_compaction_task(pickle.loads(pickle.dumps(task)))]
    t.commit(messages)
    assert t.scan().to_arrow().num_rows == 40
    assert {f["level"] for f in t.files()} == {5}


def test_maintenance_tags_rollback_expire_delete(tmp_path):
    t = new_table(tmp_path, "pk", TABLE_KINDS["pk_dedup"])
    t.write_arrow(data(0, 10))
    t.create_tag("v1")
    t.write_arrow(data(10, 20))
    assert [x["name"] for x in t.tags()] == ["v1"]
    assert t.scan(tag="v1").to_arrow().num_rows == 10
    assert t.delete("id >= 15") == 5
    assert t.scan().to_arrow().num_rows == 15
    t.rollback_to("v1")
    assert t.scan().to_arrow().num_rows == 10
    for i in range(3):
        t.write_arrow(data(100 + i, 101 + i))
    out = t.expire_snapshots(retain_max=1, retain_min=1)
    assert out["expired_snapshots"]
    assert len(t.snapshots()) == 1 and t.scan().to_arrow().num_rows == 13
    t.delete_tag("v1")
    assert t.tags() == []


def test_daft_write_and_compact_are_read_back_by_pypaimon(tmp_path):
    import daft

    from paimon_kernel.daft import compact, read_paimon, write_paimon

    for kind in ("append", "pk_dedup"):
        t = new_table(tmp_path, kind, TABLE_KINDS[kind])
        df = daft.from_arrow(data(0, 200))
        summary = write_paimon(df, t.uri).to_pydict()
        assert summary["rows"] == [200]
        write_paimon(daft.from_arrow(data(150, 250)), t.uri)
        ours = t.scan().to_arrow()
        assert ours.num_rows == (300 if kind == "append" else 250)
        assert rows(pypaimon_read(Path(t.uri.removeprefix("file://"))), ["id"]) == rows(ours, ["id"])
        assert read_paimon(t.uri).count_rows() == ours.num_rows
        if kind == "pk_dedup":
            assert compact(t.uri, full=True)["tasks"] >= 1
            assert rows(t.scan().to_arrow(), ["id"]) == rows(ours, ["id"])


def test_split_target_size_gives_more_splits_with_the_same_rows(ray_cluster, tmp_path):
    """A table of several small files plans as one split; a smaller split target gives one
    split per file (files are never cut), the same rows; the Ray read of it uses several
    read tasks, and a commit between plan and re-plan does not change what it reads."""
    from paimon_kernel._plan import splits_for_workers
    from paimon_kernel.ray import read_paimon

    t = new_table(tmp_path, "many_files", TABLE_KINDS["append"])
    for i in range(5):
        t.write_arrow(data(i * 100, (i + 1) * 100))
    scan = t.scan()
    one = scan.plan()
    assert len(one) == 1 and len(one[0].files) == 5
    each = scan.plan(split_target_size=1)
    assert sorted(len(s.files) for s in each) == [1] * 5
    assert sum(s.row_count for s in each) == 500
    got = pa.concat_tables([t.read_split(s).read_all() for s in each])
    assert rows(got, ["id"]) == rows(scan.to_arrow(), ["id"])
    with pytest.raises(pk.InvalidInput, match="split_target_size"):
        scan.plan(split_target_size=0)

    # Re-planned at the first plan's snapshot, whatever was committed since.
    t.write_arrow(data(500, 600))
    finer = splits_for_workers(scan, one, 4)
    assert len(finer) > 1
    assert {s.snapshot_id for s in finer} == {one[0].snapshot_id}
    assert sum(s.row_count for s in finer) == 500

    ds = read_paimon(t.uri).materialize()
    assert ds.num_blocks() > 1
    got = pa.concat_tables(ray_cluster.get(ds.to_arrow_refs()))
    assert sorted(got.column("id").to_pylist()) == list(range(600))
