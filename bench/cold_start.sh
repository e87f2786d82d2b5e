#!/bin/sh
# Cold start of short commands (issue #37 part 4): wall seconds and peak RSS of whole
# processes, run in turn (ours, pypaimon, ours, ...), RUNS times each, on a 16-row table
# shipped in the repo. Not CI.
#
# usage: BIN=<release paimon-kernel> PY=<python with pypaimon 2.1.0> RUNS=7 sh bench/cold_start.sh
set -e
cd "$(dirname "$0")/.."
BIN=${BIN:-/work/target-bench/release/paimon-kernel}
PY=${PY:-$HOME/.cache/paimon-kernel/venv/bin/python}
RUNS=${RUNS:-7}
WH=conformance/tables
T=$WH/corpus.db/append_parquet
PYINFO="from pypaimon import CatalogFactory as C; t=C.create({'warehouse': '$WH'}).get_table('corpus.append_parquet'); print(t.table_schema.fields)"
PYSCAN="from pypaimon import CatalogFactory as C; t=C.create({'warehouse': '$WH'}).get_table('corpus.append_parquet'); rb=t.new_read_builder(); print(rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows)"
i=0
while [ $i -lt "$RUNS" ]; do
  /usr/bin/time -f "ours_info %e %M" "$BIN" info "$T" >/dev/null
  /usr/bin/time -f "pypaimon_info %e %M" "$PY" -c "$PYINFO" >/dev/null
  /usr/bin/time -f "ours_scan %e %M" "$BIN" scan "$T" --format arrow --output /dev/null >/dev/null
  /usr/bin/time -f "pypaimon_scan %e %M" "$PY" -c "$PYSCAN" >/dev/null
  i=$((i + 1))
done 2>&1 | awk '{n[$1]++; w[$1]=w[$1] " " $2; r[$1]=r[$1] " " $3} END {for (k in n) print k, "wall_s:" w[k], "| rss_kib:" r[k]}'
