#!/usr/bin/env python3
"""Deterministic inputs of the write / compaction / commit benchmark (wbench.sh), written once.

usage: python gen_write_inputs.py <dir>

Every writer reads the same rows: Arrow IPC files (`.arrow`, IPC file format, batches of
BATCH rows) for the Rust writers and pypaimon, and Parquet files with the same rows
(`.parquet`, uncompressed, row groups of BATCH rows) for Java. The rows come from
gen_tables.make_batch (the read bench's generator), so the schema is the read bench's.

  w1_append_2m    : ids 0..1,999,999 in 4 chunks of 500,000 (seeds 100..103): exactly the rows of
                    the read bench's append_2m table.
  w2_pk_1m        : 1,000,000 rows, ids a permutation of 0..999,999 (numpy seed 11), seed 500;
                    PK_SCHEMA (id NOT NULL). Unique keys: the writers' sort + encode is timed, the
                    dedup of the buffer finds nothing to drop.
  w3_update       : `_ROW_ID` = 0, 10, 20, ... 1,999,990 (200,000 rows, 10 %) and `amount` (seed
                    900): update of one column of the W3 base table (= w1_append_2m written as a
                    data-evolution table).
  c1_run{k}       : k = 0..4, 200,000 rows each, ids (k*100,000 .. k*100,000+199,999) mod 500,000
                    shuffled (seed k), values seed 600+k; c1_partial_run{k}: the same with only the
                    columns gen_tables.PARTIAL_COLS[k] set (others null).
  c2_base         : 1,000,000 rows, ids 0..999,999, seed 800 (the C2 data-evolution table);
  c2_upd{u}       : u = 1..9, `_ROW_ID` 0..999,999 and column C2_COLS[u-1] from seed 800+u.
  c3_small        : = w1_append_2m, in batches of 2,000 rows (C3 writes it with a 1kb
                    target: two files of 1,000 rows per batch, the writer checking its size
                    every 1,000 rows).
  k1_rows         : 1,000 rows (ids 0..999, seed 1000): one write of the commit-latency case.
  w4_blob_100     : 100 rows `id BIGINT NOT NULL`, `name STRING`, `data` LargeBinary (the BLOB
                    column of the managed-blob PK case W4): ids 0..99 shuffled (numpy seed 17),
                    name `blob-<id>`, data = exactly 1 MiB of numpy default_rng(1800 + id).bytes;
                    Arrow IPC only (no Java writer), batches of 10 rows. w4_blobs.bin: the 100
                    blobs concatenated in row order (100 MiB; the copy floor's source).

`gen_write_inputs.py DIR w4` writes only the W4 inputs.
"""
import os, sys
import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_tables as g

BATCH = 8192
C2_COLS = ["name", "city", "amount", "qty", "ts", "flag", "note", "name", "city"]
N_C1_KEYS = 500_000


def w1():
    step = g.N_APPEND // 4
    return pa.concat_tables([g.make_batch(np.arange(i * step, (i + 1) * step, dtype=np.int64),
                                          100 + i, g.SCHEMA) for i in range(4)])


def w2():
    ids = np.arange(g.N_PK, dtype=np.int64)
    np.random.default_rng(11).shuffle(ids)
    return g.make_batch(ids, 500, g.PK_SCHEMA)


def w3():
    rid = np.arange(0, g.N_APPEND, 10, dtype=np.int64)
    amount = g.make_batch(rid, 900, g.SCHEMA).column("amount")
    return pa.table({"_ROW_ID": pa.array(rid, pa.int64()), "amount": amount})


def c1_ids(k):
    ids = np.arange(k * 100_000, k * 100_000 + 200_000, dtype=np.int64) % N_C1_KEYS
    np.random.default_rng(k).shuffle(ids)
    return ids


def c1_run(k, partial=False):
    b = g.make_batch(c1_ids(k), 600 + k, g.PK_SCHEMA)
    if not partial:
        return b
    cols = [b.column(f.name) if f.name == "id" or f.name in g.PARTIAL_COLS[k]
            else pa.nulls(b.num_rows, f.type) for f in g.PK_SCHEMA]
    return pa.Table.from_arrays(cols, schema=g.PK_SCHEMA)


def c2_base():
    return g.make_batch(np.arange(1_000_000, dtype=np.int64), 800, g.SCHEMA)


def c2_upd(u):
    rid = np.arange(1_000_000, dtype=np.int64)
    col = C2_COLS[u - 1]
    return pa.table({"_ROW_ID": pa.array(rid, pa.int64()),
                     col: g.make_batch(rid, 800 + u, g.SCHEMA).column(col)})


def k1_rows():
    return g.make_batch(np.arange(1000, dtype=np.int64), 1000, g.SCHEMA)


W4_ROWS = 100
W4_BLOB_BYTES = 1 << 20
W4_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                       pa.field("data", pa.large_binary())])


def w4():
    ids = np.arange(W4_ROWS, dtype=np.int64)
    np.random.default_rng(17).shuffle(ids)
    blobs = [np.random.default_rng(1800 + int(i)).bytes(W4_BLOB_BYTES) for i in ids]
    return pa.Table.from_arrays([pa.array(ids, pa.int64()), pa.array(["blob-%03d" % i for i in ids]),
                                 pa.array(blobs, pa.large_binary())], schema=W4_SCHEMA)


def save_w4(d):
    t = w4()
    save(d, "w4_blob_100", t, batch=10, parquet=False)
    with open(os.path.join(d, "w4_blobs.bin"), "wb") as f:
        for b in t.column("data").to_pylist():
            f.write(b)


def save(d, name, t, batch=BATCH, parquet=True):
    t = t.combine_chunks()
    with ipc.new_file(os.path.join(d, name + ".arrow"), t.schema) as w:
        for b in t.to_batches(max_chunksize=batch):
            w.write_batch(b)
    if parquet:
        pq.write_table(t, os.path.join(d, name + ".parquet"), compression="none",
                       row_group_size=batch)
    print("%s: %d rows" % (name, t.num_rows), flush=True)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    if sys.argv[2:] == ["w4"]:
        save_w4(d)
        return
    a = w1()
    save(d, "w1_append_2m", a)
    save(d, "c3_small", a, batch=2000, parquet=False)
    save(d, "w2_pk_1m", w2())
    save(d, "w3_update", w3())
    for k in range(5):
        save(d, "c1_run%d" % k, c1_run(k))
        save(d, "c1_partial_run%d" % k, c1_run(k, partial=True))
    save(d, "c2_base", c2_base())
    for u in range(1, 10):
        save(d, "c2_upd%d" % u, c2_upd(u))
    save(d, "k1_rows", k1_rows())
    save_w4(d)


if __name__ == "__main__":
    main()
