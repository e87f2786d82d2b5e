#!/usr/bin/env python3
"""Correctness check of a full-table read of a bench table (run in the pypaimon venv).

usage: python verify.py <table> <result.arrow>
       python verify.py blob_one <blob file> <row id>
  <result.arrow>: Arrow IPC stream, e.g. `paimon-kernel scan T --format arrow --output F`.
Recomputes the expected rows from gen_tables.py's deterministic generator:
  blob_100m     : every row's id, label and blob bytes (sha256 printed per size class)
  blob_one      : the extracted file equals blob_bytes(row id)
  append_2m     : ids 0..1,999,999, every value equal to the generator's
  pk_dedup_1m   : last writer wins per key (verify_pk.py of the shared peer bench)
  pk_partial_1m : per key and column, the last non-null value over the commits
  pk_agg_1m     : amount = sum, qty = max, other columns last non-null
Exits 1 on any difference and prints the first differing column.
"""
import hashlib, os, sys
import numpy as np, pyarrow as pa, pyarrow.ipc as ipc
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_tables as g

table, path = sys.argv[1], sys.argv[2]
if table == "blob_one":
    row = int(sys.argv[3])
    exp = g.blob_bytes(row, dict(g.blob_spec())[row])
    got = open(path, "rb").read()
    ok = got == exp
    print("blob_one file=%s row_id=%d len=%d expected_len=%d sha256=%s equals_expected=%s" % (
        os.path.basename(path), row, len(got), len(exp), hashlib.sha256(got).hexdigest()[:16], ok))
    sys.exit(0 if ok else 1)
with open(path, "rb") as f:
    got = ipc.open_stream(f).read_all()

if table == "blob_100m":
    spec = g.blob_spec()
    got = got.sort_by("id")
    ids = got.column("id").to_pylist()
    labels = got.column("label").to_pylist()
    data = got.column("data")
    ok = ids == [i for i, _ in spec]
    h_got, h_exp = hashlib.sha256(), hashlib.sha256()
    for k, (i, size) in enumerate(spec):
        if not ok:
            break
        exp = g.blob_bytes(i, size)
        v = data[k].as_py()
        ok = v == exp and labels[k] == ("null" if size is None else "size-%d" % size)
        if not ok:
            print("row id %d differs (len %s, expected %s)" % (
                i, None if v is None else len(v), size))
        h_got.update(b"-" if v is None else v)
        h_exp.update(b"-" if exp is None else exp)
    print("table=blob_100m rows=%d expected_rows=%d blob_bytes=%d sha256(all blobs)=%s expected=%s"
          % (got.num_rows, len(spec), sum(s or 0 for _, s in spec),
             h_got.hexdigest()[:16], h_exp.hexdigest()[:16]))
    print("equals_expected=%s" % ok)
    sys.exit(0 if ok else 1)
elif table == "append_2m":
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
