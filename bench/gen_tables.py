#!/usr/bin/env python3
"""Generate the peer-benchmark Paimon tables with pypaimon (pure-Python writer).

usage: python gen_tables.py <warehouse> [table ...]   (default: every table below)

Adapted for bench/ from the shared peer-bench script: append_2m and pk_dedup_1m are written
exactly as the peers were timed; pk_partial_1m, pk_agg_1m and plan_1k were added.

Creates database `bench` with:
  append_2m : append-only table, 2,000,000 rows x 8 columns, parquet (table defaults),
              written in 4 commits of 500,000 rows (bucket=-1, unaware).
  pk_dedup_1m : primary-key table (id), merge-engine=deduplicate, bucket=4, parquet,
              5 commits of 300,000 rows each; commit k writes keys
              [k*200000, k*200000+300000) mod 1,000,000, so consecutive commits
              overlap by 100,000 keys and commit 4 wraps onto keys 0..99,999.
              1,500,000 rows written, 1,000,000 distinct keys survive.
              No compaction is run, so every bucket holds 5 level-0 runs and the
              read must merge on read.
  append_8m, pk_dedup_4m : 4x append_2m (16 commits) and pk_dedup_1m (16 buckets, 4,000,000
              keys, 5 commits of 1,200,000 rows): the same files, 4x as many. Only when named.
  pk_partial_1m : as pk_dedup_1m (same keys and values), merge-engine=partial-update; commit k
              writes only some value columns (the others are null), see PARTIAL_COLS.
  pk_agg_1m : as pk_dedup_1m, merge-engine=aggregation, amount=sum, qty=max,
              other columns last_non_null_value (the default).
  plan_1k   : append table, bucket=20 (bucket-key id), 50 commits of 2,000 rows:
              50 snapshots, 1,000 data files (planning / metadata cost).
  blob_100m : data-evolution table (row-tracking + data-evolution, BLOB column `data`), one
              commit of BLOB_ROWS rows (see blob_spec): 100 blobs of 1 MiB, two of 16 MiB, an
              empty and a NULL blob, all in ONE .blob file of 138 MB (blob.target-file-size
              256 MiB) next to one small parquet file (id, label). Blob bytes: blob_bytes(i).
Deterministic (seeded).
"""
import sys, time
import numpy as np
import pyarrow as pa
from pypaimon import CatalogFactory, Schema

WH = sys.argv[1] if len(sys.argv) > 1 else "bench-data/wh"
N_APPEND = 2_000_000
N_PK = 1_000_000

SCHEMA = pa.schema([
    ("id", pa.int64()),
    ("name", pa.string()),
    ("city", pa.string()),
    ("amount", pa.float64()),
    ("qty", pa.int32()),
    ("ts", pa.timestamp("us")),
    ("flag", pa.bool_()),
    ("note", pa.string()),
])
PK_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)] + list(SCHEMA)[1:])

CITIES = np.array(["city_%03d" % i for i in range(100)], dtype=object)
WORDS = np.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
                  "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"], dtype=object)


def make_batch(ids: np.ndarray, seed: int, schema: pa.Schema) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = len(ids)
    name = np.char.add("user_", rng.integers(0, 10**9, n).astype(str)).astype(object)
    city = CITIES[rng.integers(0, len(CITIES), n)]
    w = WORDS[rng.integers(0, len(WORDS), (n, 4))]
    note = (w[:, 0] + " " + w[:, 1] + " " + w[:, 2] + " " + w[:, 3] + " #"
            + rng.integers(0, 10**6, n).astype(str).astype(object))
    amount = rng.random(n) * 1000.0
    qty = rng.integers(0, 1000, n).astype(np.int32)
    ts = (np.int64(1_700_000_000_000_000) + rng.integers(0, 10**12, n)).astype("datetime64[us]")
    flag = rng.random(n) < 0.5
    return pa.Table.from_arrays([
        pa.array(ids, pa.int64()), pa.array(name, pa.string()), pa.array(city, pa.string()),
        pa.array(amount), pa.array(qty), pa.array(ts, pa.timestamp("us")), pa.array(flag),
        pa.array(note, pa.string())], schema=schema)


def write_commits(table, chunks):
    for ids, seed in chunks:
        wb = table.new_batch_write_builder()
        w = wb.new_write()
        c = wb.new_commit()
        w.write_arrow(make_batch(ids, seed, table_schema_of(table)))
        c.commit(w.prepare_commit())
        w.close()
        c.close()


_schemas = {}
def table_schema_of(table):
    return _schemas[id(table)]


# partial-update: value columns written by commit k (others null)
PARTIAL_COLS = [
    ["name", "city", "amount"],
    ["qty", "ts", "flag", "note"],
    ["name", "qty", "note"],
    ["city", "amount", "ts"],
    ["flag", "name"],
]


def pk_chunks():
    chunks = []
    for k in range(5):
        ids = (np.arange(k * 200_000, k * 200_000 + 300_000, dtype=np.int64) % N_PK)
        np.random.default_rng(k).shuffle(ids)
        chunks.append((ids, 200 + k))
    return chunks


def partial_batch(k, ids, seed):
    b = make_batch(ids, seed, PK_SCHEMA)
    cols = []
    for f in PK_SCHEMA:
        c = b.column(f.name)
        if f.name != "id" and f.name not in PARTIAL_COLS[k]:
            c = pa.nulls(len(ids), f.type)
        cols.append(c)
    return pa.Table.from_arrays(cols, schema=PK_SCHEMA)


# blob_100m: row i (= _ROW_ID, = id) holds blob_bytes(i); sizes from blob_spec().
BLOB_SCHEMA = pa.schema([("id", pa.int32()), ("label", pa.string()), ("data", pa.large_binary())])
BLOB_OPTS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
MIB = 1 << 20


def blob_spec():
    """(id, size or None for NULL) of every row of blob_100m, in _ROW_ID order."""
    sizes = [MIB] * 50 + [16 * MIB, 0, None] + [MIB] * 50 + [16 * MIB]
    return list(enumerate(sizes))


def blob_bytes(i, size):
    """Deterministic bytes of row i (numpy PCG64 seeded with 7000 + i)."""
    return None if size is None else np.random.default_rng(7000 + i).bytes(size)


def gen_blob(catalog):
    t0 = time.time()
    catalog.create_table("bench.blob_100m", Schema.from_pyarrow_schema(
        BLOB_SCHEMA, options=dict(BLOB_OPTS)), True)
    t = catalog.get_table("bench.blob_100m")
    spec = blob_spec()
    data = pa.Table.from_pydict({
        "id": pa.array([i for i, _ in spec], pa.int32()),
        "label": pa.array(["null" if s is None else "size-%d" % s for _, s in spec]),
        "data": pa.array([blob_bytes(i, s) for i, s in spec], pa.large_binary()),
    }, schema=BLOB_SCHEMA)
    wb = t.new_batch_write_builder()
    w = wb.new_write()
    c = wb.new_commit()
    w.write_arrow(data)
    c.commit(w.prepare_commit())
    w.close()
    c.close()
    print("blob_100m written in %.1fs" % (time.time() - t0), flush=True)


def main():
    catalog = CatalogFactory.create({"warehouse": WH})
    catalog.create_database("bench", True)
    want = set(sys.argv[2:]) or {"append_2m", "pk_dedup_1m", "pk_partial_1m", "pk_agg_1m", "plan_1k",
                                 "blob_100m"}
    if "blob_100m" in want:
        gen_blob(catalog)
    if "append_2m" in want:
        gen_append(catalog)
    if "pk_dedup_1m" in want:
        gen_dedup(catalog)
    # 4x the read tables (the flat-memory check; not made unless named)
    if "append_8m" in want:
        gen_append(catalog, 4)
    if "pk_dedup_4m" in want:
        gen_dedup(catalog, 4)
    if "pk_partial_1m" in want:
        t0 = time.time()
        catalog.create_table("bench.pk_partial_1m", Schema.from_pyarrow_schema(
            PK_SCHEMA, primary_keys=["id"],
            options={"bucket": "4", "merge-engine": "partial-update"}), True)
        t = catalog.get_table("bench.pk_partial_1m")
        for k, (ids, seed) in enumerate(pk_chunks()):
            wb = t.new_batch_write_builder()
            w = wb.new_write()
            c = wb.new_commit()
            w.write_arrow(partial_batch(k, ids, seed))
            c.commit(w.prepare_commit())
            w.close()
            c.close()
        print("pk_partial_1m written in %.1fs" % (time.time() - t0), flush=True)
    if "pk_agg_1m" in want:
        t0 = time.time()
        catalog.create_table("bench.pk_agg_1m", Schema.from_pyarrow_schema(
            PK_SCHEMA, primary_keys=["id"],
            options={"bucket": "4", "merge-engine": "aggregation",
                     "fields.amount.aggregate-function": "sum",
                     "fields.qty.aggregate-function": "max"}), True)
        t = catalog.get_table("bench.pk_agg_1m")
        _schemas[id(t)] = PK_SCHEMA
        write_commits(t, pk_chunks())
        print("pk_agg_1m written in %.1fs" % (time.time() - t0), flush=True)
    if "plan_1k" in want:
        t0 = time.time()
        catalog.create_table("bench.plan_1k", Schema.from_pyarrow_schema(
            SCHEMA, options={"bucket": "20", "bucket-key": "id"}), True)
        t = catalog.get_table("bench.plan_1k")
        _schemas[id(t)] = SCHEMA
        write_commits(t, [(np.arange(i * 2000, (i + 1) * 2000, dtype=np.int64), 300 + i)
                          for i in range(50)])
        print("plan_1k written in %.1fs" % (time.time() - t0), flush=True)


def gen_append(catalog, scale=1):
    """append_2m (scale 1) or append_8m (scale 4): 4 * scale commits of 500,000 rows, so the
    4x table has 4x the files of the same size."""
    name = "append_%dm" % (2 * scale)
    t0 = time.time()
    catalog.create_table("bench." + name, Schema.from_pyarrow_schema(SCHEMA), True)
    t = catalog.get_table("bench." + name)
    _schemas[id(t)] = SCHEMA
    step = N_APPEND // 4
    write_commits(t, [(np.arange(i * step, (i + 1) * step, dtype=np.int64), 100 + i)
                      for i in range(4 * scale)])
    print("%s written in %.1fs" % (name, time.time() - t0), flush=True)


def gen_dedup(catalog, scale=1):
    """pk_dedup_1m (scale 1) or pk_dedup_4m (scale 4): 4 * scale buckets, 5 commits of
    300,000 * scale rows over 1,000,000 * scale keys, so every bucket of the 4x table holds
    five files of the same size as the 1x table's."""
    name = "pk_dedup_%dm" % scale
    n = N_PK * scale
    t0 = time.time()
    catalog.create_table("bench." + name, Schema.from_pyarrow_schema(
        PK_SCHEMA, primary_keys=["id"],
        options={"bucket": str(4 * scale), "merge-engine": "deduplicate"}), True)
    t = catalog.get_table("bench." + name)
    _schemas[id(t)] = PK_SCHEMA
    chunks = []
    for k in range(5):
        ids = (np.arange(k * 200_000 * scale, (k * 200_000 + 300_000) * scale, dtype=np.int64) % n)
        np.random.default_rng(k).shuffle(ids)
        chunks.append((ids, 200 + k))
    write_commits(t, chunks)
    print("%s written in %.1fs" % (name, time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
