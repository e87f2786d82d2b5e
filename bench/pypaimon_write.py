#!/usr/bin/env python3
"""Write / update with pypaimon 2.1.0 into an existing table (created by `paimon-kernel create`).

usage: python pypaimon_write.py <warehouse> <db.table> write|update <input.arrow>
  write : BatchWriteBuilder.new_write().write_arrow_batch(b) for every batch of the input (an
          Arrow IPC file), prepare_commit, commit (one snapshot)
  update: BatchTableUpdate.update_by_arrow_with_row_id(input) (`_ROW_ID` + the columns to set),
          commit (data-evolution tables)
Prints which writer class pypaimon picked (its native writer needs pypaimon_rust, which this
venv does not have: the pure-Python writer runs) and the times of its phases.
"""
import sys, time
t0 = time.perf_counter()
import pyarrow.ipc as ipc
from pypaimon import CatalogFactory

wh, ident, mode, path = sys.argv[1:5]
catalog = CatalogFactory.create({"warehouse": wh})
table = catalog.get_table(ident)
wb = table.new_batch_write_builder()
rows = 0
t1 = time.perf_counter()
reader = ipc.open_file(path)
if mode == "write":
    w = wb.new_write()
    kind = type(w).__name__
    for i in range(reader.num_record_batches):
        b = reader.get_batch(i)
        rows += b.num_rows
        w.write_arrow_batch(b)
    msgs = w.prepare_commit()
elif mode == "update":
    u = wb.new_update()
    kind = type(u).__name__
    t = reader.read_all()
    rows = t.num_rows
    msgs = u.update_by_arrow_with_row_id(t)
else:
    sys.exit("unknown mode " + mode)
t2 = time.perf_counter()
c = wb.new_commit()
c.commit(msgs)
c.close()
if mode == "write":
    w.close()
t3 = time.perf_counter()
print("writer=pypaimon-2.1.0 class=%s mode=%s rows=%d messages=%d write_s=%.3f commit_s=%.3f total_s=%.3f"
      % (kind, mode, rows, len(msgs), t2 - t1, t3 - t2, t3 - t0))
