"""An S3-compatible server on loopback (moto): concurrent Ray writers committing to s3://
(no lost or doubled commit), a read of what they wrote, expire and orphan clean there."""

from __future__ import annotations

import pyarrow as pa

import paimon_kernel as pk

WRITERS = 8
ROWS = 25


def _commit_rows(uri, options, k):
    import paimon_kernel as pk
    import pyarrow as pa

    t = pk.open_table(uri, options)
    ids = list(range(k * ROWS, (k + 1) * ROWS))
    out = t.write_arrow(pa.table({"id": pa.array(ids, pa.int64()), "w": pa.array([k] * ROWS, pa.int32())}))
    return out["snapshot_ids"], out["attempts"]


def test_concurrent_ray_writers_on_s3(ray_cluster, s3_server):
    ray = ray_cluster
    uri = "s3://paimon-test/wh/db.db/concurrent"
    t = pk.create_table(uri, {"fields": [{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "w", "type": "INT"}], "options": {}}, s3_server)
    import sys

    # Workers cannot import this test module: ship the function by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    remote = ray.remote(_commit_rows)
    results = ray.get([remote.remote(uri, s3_server, k) for k in range(WRITERS)])
    snapshot_ids = sorted(i for ids, _ in results for i in ids)
    # Every commit got its own snapshot, none lost, none doubled.
    assert snapshot_ids == list(range(1, WRITERS + 1)), results
    got = t.scan().to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(WRITERS * ROWS))
    from paimon_kernel.ray import read_paimon, write_paimon

    assert read_paimon(uri, options=s3_server).count() == WRITERS * ROWS
    # A Ray Datasink write to S3, and its read back.
    more = pa.table({"id": pa.array(range(1000, 1100), pa.int64()), "w": pa.array([99] * 100, pa.int32())})
    write_paimon(ray.data.from_arrow(more), uri, options=s3_server)
    assert t.scan(filter="w = 99").to_arrow().num_rows == 100
    # Expire all but the latest two snapshots, then clean orphans: a failed writer's file.
    w = t.new_write()
    w.write(pa.table({"id": pa.array([5000], pa.int64()), "w": pa.array([0], pa.int32())}))
    orphan = w.prepare_commit()  # never committed
    out = t.expire_snapshots(retain_max=2, retain_min=1)
    assert len(out["expired_snapshots"]) == WRITERS + 1 - 2
    assert [s["id"] for s in t.snapshots()] == [WRITERS, WRITERS + 1]
    removed = {r["path"].rsplit("/", 1)[-1] for r in t.remove_orphan_files(older_than=0)["removed"]}
    assert set(orphan[0].new_files) <= removed
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == sorted(list(range(WRITERS * ROWS)) + list(range(1000, 1100)))
