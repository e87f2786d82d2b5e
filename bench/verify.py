#!/usr/bin/env python3
"""Correctness check of a full-table read of a bench table (run in the pypaimon venv).

usage: python verify.py <table> <result.arrow>
  <result.arrow>: Arrow IPC stream, e.g. `paimon-kernel scan T --format arrow --output F`.
Recomputes the expected rows from gen_tables.py's deterministic generator:
  append_2m     : ids 0..1,999,999, every value equal to the generator's
  pk_dedup_1m   : last writer wins per key (verify_pk.py of the shared peer bench)
  pk_partial_1m : per key and column, the last non-null value over the commits
  pk_agg_1m     : amount = sum, qty = max, other columns last non-null
Exits 1 on any difference and prints the first differing column.
"""
import os, sys
import numpy as np, pyarrow as pa, pyarrow.ipc as ipc
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_tables as g

table, path = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    got = ipc.open_stream(f).read_all()

if table == "append_2m":
    step = g.N_APPEND // 4
    exp = pa.concat_tables([g.make_batch(np.arange(i * step, (i + 1) * step, dtype=np.int64),
                                         100 + i, g.SCHEMA) for i in range(4)])
    schema = g.SCHEMA
else:
    parts = []
    for k, (ids, seed) in enumerate(g.pk_chunks()):
        b = g.partial_batch(k, ids, seed) if table == "pk_partial_1m" else g.make_batch(ids, seed, g.PK_SCHEMA)
        parts.append(b.append_column("commit", pa.array(np.full(len(ids), k))))
    df = pa.concat_tables(parts).to_pandas().sort_values(["id", "commit"], kind="stable")
    if table == "pk_dedup_1m":
        e = df.drop_duplicates("id", keep="last")
    else:
        grp = df.groupby("id", sort=True)
        e = grp.last()  # last non-null per column
        if table == "pk_agg_1m":
            e["amount"] = grp["amount"].sum()
            e["qty"] = grp["qty"].max()
        e = e.reset_index()
    e = e.drop(columns="commit").reset_index(drop=True)
    schema = g.PK_SCHEMA
    exp = pa.Table.from_pandas(e, schema=schema, preserve_index=False)

got = got.sort_by("id")
exp = exp.sort_by("id")
ok = got.num_rows == exp.num_rows
print("table=%s rows=%d expected_rows=%d" % (table, got.num_rows, exp.num_rows))
for f in schema:
    if not ok:
        break
    a = got.column(f.name).combine_chunks()
    b = exp.column(f.name).combine_chunks().cast(a.type)
    if f.name == "amount" and table == "pk_agg_1m":
        same = (a.null_count == b.null_count and
                np.allclose(a.to_numpy(zero_copy_only=False), b.to_numpy(zero_copy_only=False),
                            rtol=1e-12, atol=1e-9, equal_nan=True))
    else:
        same = a.equals(b)
    if not same:
        print("column %s differs" % f.name)
        ok = False
print("equals_expected=%s" % ok)
sys.exit(0 if ok else 1)
