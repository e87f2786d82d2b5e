#!/usr/bin/env bash
# Write a 1 GiB blob given as a file reference (issue #16's memory goal: peak RSS below 64 MiB)
# with paimon-kernel (release CLI) and pypaimon 2.1.0, each into a new data-evolution table, and
# check that each table reads back the file's bytes. Timed with /usr/bin/time -v (wall, peak
# RSS); RUNS runs each (default 3).
#
#   bench/blob_ref.sh                       # builds the release CLI into $CARGO_TARGET_DIR
#   SKIP_BUILD=1 KERNEL=path/to/paimon-kernel bench/blob_ref.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DATA=${DATA:-/tmp/paimon-blob-ref}
SIZE_MIB=${SIZE_MIB:-1024}
RUNS=${RUNS:-3}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/target-bench}
KERNEL=${KERNEL:-$CARGO_TARGET_DIR/release/paimon-kernel}
PY=${PY:-$HOME/.cache/paimon-kernel/venv/bin/python}
if [ -z "${SKIP_BUILD:-}" ]; then
  cargo build --release -p paimon-native --bin paimon-kernel
fi
mkdir -p "$DATA"
SRC=$DATA/source.bin
if [ ! -f "$SRC" ] || [ "$(stat -c %s "$SRC")" != $((SIZE_MIB << 20)) ]; then
  head -c $((SIZE_MIB << 20)) /dev/urandom > "$SRC"
fi
WANT=$(sha256sum "$SRC" | cut -d' ' -f1)
"$PY" bench/blob_ref.py input "$SRC" "$DATA/input.parquet"
cat > "$DATA/schema.json" <<'JSON'
{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
 "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}}
JSON
check() { # table dir
  local got
  got=$("$KERNEL" blob "$1" --row-id 0 --column b | sha256sum | cut -d' ' -f1)
  [ "$got" = "$WANT" ] || { echo "wrong bytes in $1: $got, want $WANT" >&2; exit 1; }
}
for i in $(seq "$RUNS"); do
  rm -rf "$DATA/k"
  "$KERNEL" create "$DATA/k" --schema "$DATA/schema.json" > /dev/null
  /usr/bin/time -f "kernel run=$i wall_s=%e user_s=%U sys_s=%S peak_rss_kib=%M" \
    "$KERNEL" write "$DATA/k" --input "$DATA/input.parquet" > /dev/null
  check "$DATA/k"
  /usr/bin/time -f "pypaimon run=$i wall_s=%e user_s=%U sys_s=%S peak_rss_kib=%M" \
    "$PY" bench/blob_ref.py pypaimon "$SRC" "$DATA/py"
  check "$DATA/py/bench.db/blob_ref"
  /usr/bin/time -f "cp run=$i wall_s=%e user_s=%U sys_s=%S peak_rss_kib=%M" \
    cp "$SRC" "$DATA/copy.bin"
  rm -f "$DATA/copy.bin"
done
