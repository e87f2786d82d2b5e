#!/usr/bin/env bash
# SQL benchmark (issue 40): `paimon-kernel sql` against pypaimon-rust 0.4.0's DataFusion,
# DuckDB over pypaimon's to_arrow and DataFusion over the same rows as plain Parquet, on
# pk_dedup_1m and append_2m (see README.md, "SQL"). Not run by CI.
#
# Env (defaults):
#   RUNS=5                      counted runs per engine, query and table (after 1 warm-up)
#   ENGINES=kernel,pyrust,duckdb,dfparquet
#   TABLES=pk_dedup_1m,append_2m
#   SQL_VENV=/work/venv-sqlbench   venv with pypaimon==2.1.0, duckdb, datafusion 55 (made if
#                               missing)
#   PY_RUST=~/.cache/paimon-kernel/venv-rust/bin/python   pypaimon-rust 0.4.0
#   PY_KERNEL=$SQL_VENV/bin/python   a python with paimon_kernel installed from a release wheel
#                               (engine kernelpy: `maturin build --release` in host-python)
#   CARGO_TARGET_DIR=/work/target-bench   the release build
#   DATA=<here>/data            tables (bench.db under $DATA/wh), Parquet copies ($DATA/parquet)
#   SKIP_BUILD=1
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RUNS=${RUNS:-5}
ENGINES=${ENGINES:-kernel,pyrust,duckdb,dfparquet}
TABLES=${TABLES:-pk_dedup_1m,append_2m}
SQL_VENV=${SQL_VENV:-/work/venv-sqlbench}
PY_RUST=${PY_RUST:-$HOME/.cache/paimon-kernel/venv-rust/bin/python}
PY_KERNEL=${PY_KERNEL:-$SQL_VENV/bin/python}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/target-bench}
DATA=$(realpath -m "${DATA:-$HERE/data}")
WH=$DATA/wh

if ! "$SQL_VENV/bin/python" -c 'import pypaimon, duckdb, datafusion' 2>/dev/null; then
  python3 -m venv "$SQL_VENV"
  "$SQL_VENV/bin/pip" install pypaimon==2.1.0 duckdb 'datafusion>=55,<56' numpy
fi
for t in ${TABLES//,/ }; do
  if [ ! -d "$WH/bench.db/$t/snapshot" ]; then
    "$SQL_VENV/bin/python" "$HERE/gen_tables.py" "$WH" "$t"
  fi
done
if [ -z "${SKIP_BUILD:-}" ]; then
  (cd "$ROOT" && cargo build --release -p paimon-native --bin paimon-kernel)
fi
BIN=$(realpath -m "$CARGO_TARGET_DIR")/release/paimon-kernel
cd "$HERE"
exec "$SQL_VENV/bin/python" sql_bench.py --kernel "$BIN" --wh "$WH" --runs "$RUNS" \
  --tables "$TABLES" --engines "$ENGINES" --parquet "$DATA/parquet" --py-rust "$PY_RUST" \
  --py-kernel "$PY_KERNEL" \
  --py "$SQL_VENV/bin/python"
