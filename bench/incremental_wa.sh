#!/usr/bin/env bash
# Write amplification of incremental selection (kernel.compaction.incremental-selection):
# the same writes into first-row (level 0 compacted by each write) and plain aggregation
# (`compact` after each write) tables, with the option off (Java's selection) and on; prints
# the bytes of every data file ever written in the bucket (nothing is expired) and checks
# that both tables read the same rows. Usage: BIN=path/to/paimon-kernel bench/incremental_wa.sh
set -euo pipefail
BIN=${BIN:-paimon-kernel}
PY=${PY:-$HOME/.cache/paimon-kernel/venv/bin/python}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
python3 - <<'PYEOF'
import random
random.seed(5)
with open('big.csv', 'w') as f:
    f.write('k,n,s\n')
    for k in range(200000):
        f.write(f'{k},{random.randint(0, 100)},v{random.randint(0, 1000)}\n')
for i in range(40):
    with open(f'small{i}.csv', 'w') as f:
        f.write('k,n,s\n')
        for k in random.sample(range(400000), 2000):
            f.write(f'{k},{random.randint(0, 100)},v{random.randint(0, 1000)}\n')
PYEOF
for eng in first-row aggregation; do
  for mode in false true; do
    extra=""
    [ "$eng" = aggregation ] && extra=', "fields.n.aggregate-function": "sum", "fields.s.aggregate-function": "max"'
    cat > s.json <<JSON
{"fields": [{"name": "k", "type": "BIGINT NOT NULL"}, {"name": "n", "type": "BIGINT"}, {"name": "s", "type": "STRING"}], "primaryKeys": ["k"], "options": {"bucket": "1", "merge-engine": "$eng", "num-sorted-run.compaction-trigger": "2", "num-levels": "6", "kernel.compaction.incremental-selection": "$mode"$extra}}
JSON
    t="t_${eng}_$mode"
    "$BIN" create "$t" --schema s.json >/dev/null
    "$BIN" write "$t" --input small0.csv >/dev/null
    "$BIN" write "$t" --input big.csv >/dev/null
    [ "$eng" = aggregation ] && "$BIN" compact "$t" >/dev/null
    for i in $(seq 1 39); do
      "$BIN" write "$t" --input "small$i.csv" >/dev/null
      [ "$eng" = aggregation ] && "$BIN" compact "$t" >/dev/null
    done
    echo "$eng incremental=$mode: data bytes written $(du -sb "$t/bucket-0" | cut -f1), rows $("$BIN" scan "$t" --format count)"
  done
  "$BIN" scan "t_${eng}_false" --format arrow --output a.arrow
  "$BIN" scan "t_${eng}_true" --format arrow --output b.arrow
  "$PY" -c "
import pyarrow as pa
a = pa.ipc.open_stream('a.arrow').read_all().sort_by('k')
b = pa.ipc.open_stream('b.arrow').read_all().sort_by('k')
assert a.equals(b), 'rows differ'
print('$eng: same rows', a.num_rows)"
done
