#!/usr/bin/env python3
"""Extract one blob by _ROW_ID with pypaimon 2.1.0 (bench case 4).

usage: python pypaimon_blob.py <warehouse> <db.table> <row_id> <column> <out_file>
Plans the scan restricted to the row range [row_id, row_id] (TableScan.with_row_ranges),
projects the blob column, reads it with to_arrow and writes the one value's bytes to
<out_file>. Prints the value's length and the time split (plan, read) on stdout.
"""
import sys, time
t0 = time.perf_counter()
from pypaimon import CatalogFactory
from pypaimon.utils.range import Range

wh, ident, row_id, column, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
table = CatalogFactory.create({"warehouse": wh}).get_table(ident)
rb = table.new_read_builder().with_projection([column])
splits = rb.new_scan().with_row_ranges([Range(row_id, row_id)]).plan().splits()
t_plan = time.perf_counter() - t0
tbl = rb.new_read().to_arrow(splits)
if tbl.num_rows != 1:
    sys.exit("expected 1 row for _ROW_ID %d, got %d" % (row_id, tbl.num_rows))
value = tbl.column(column)[0].as_py()
with open(out, "wb") as f:
    f.write(value)
print("reader=pypaimon-2.1.0 row_id=%d len=%d splits=%d plan_s=%.3f total_s=%.3f"
      % (row_id, len(value), len(splits), t_plan, time.perf_counter() - t0))
