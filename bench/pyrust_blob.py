#!/usr/bin/env python3
"""Write / read a managed-BLOB primary-key table with pypaimon-rust 0.4.0 (the W4 peer of wbench.py).

usage: python pyrust_blob.py write <warehouse> <db.table> <input.arrow>
       python pyrust_blob.py read  <warehouse> <db.table> <out.json>
Run with the pypaimon-rust venv's python (~/.cache/paimon-kernel/venv-rust/bin/python; pyarrow,
no numpy). The table exists (created by `paimon-kernel create`); the catalog is opened with the
warehouse `file:<warehouse>`, as conformance/managed-blob/gen_tables.py does, so the packs it
writes are named by `file:` URIs.

  write: BatchWriteBuilder.new_write().write_arrow(b) for every batch of the input (an Arrow IPC
         file; pypaimon-rust externalises the BLOB values into its `.managed.blob` pack),
         prepare_commit, commit (one snapshot); prints the times of the phases.
  read : the merged read (descriptors resolved), written as JSON {id: [name, len, sha256]}.
"""
import hashlib, json, sys, time
t0 = time.perf_counter()
import pyarrow as pa
import pyarrow.ipc as ipc
from pypaimon_rust.datafusion import PaimonCatalog

mode, wh, ident, path = sys.argv[1:5]
table = PaimonCatalog({"warehouse": "file:" + wh}).get_table(ident)
t1 = time.perf_counter()
if mode == "write":
    wb = table.new_batch_write_builder()
    w = wb.new_write()
    reader = ipc.open_file(path)
    rows = 0
    for i in range(reader.num_record_batches):
        b = reader.get_batch(i)
        rows += b.num_rows
        w.write_arrow(b)
    msgs = w.prepare_commit()
    t2 = time.perf_counter()
    wb.new_commit().commit(msgs)
    t3 = time.perf_counter()
    print("writer=pypaimon-rust-0.4.0 rows=%d messages=%d open_s=%.3f write_s=%.3f commit_s=%.3f total_s=%.3f"
          % (rows, len(msgs), t1 - t0, t2 - t1, t3 - t2, t3 - t0))
elif mode == "read":
    rb = table.new_read_builder()
    out = {}
    for b in rb.new_read().read(rb.new_scan().plan().splits()):
        for r in pa.Table.from_batches([b]).to_pylist():
            d = r["data"]
            out[str(r["id"])] = [r["name"], None if d is None else len(d),
                                 None if d is None else hashlib.sha256(d).hexdigest()]
    with open(path, "w") as f:
        json.dump(out, f)
    print("read rows=%d" % len(out))
else:
    sys.exit("unknown mode " + mode)
