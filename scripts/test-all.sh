#!/usr/bin/env bash
# Runs every test of the workspace. Installs what it needs first (idempotent, fails loudly).
# Usage: scripts/test-all.sh            (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/paimon-kernel/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

step() { printf '\n==> %s\n' "$*"; }

step "install: toolchain pieces and system packages"
scripts/install-deps.sh
WB_VERSION=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
export PATH="${PAIMON_TOOLS:-$HOME/.cache/paimon-kernel/tools}/wasm-bindgen-$WB_VERSION/bin:$PATH"

step "wasm32: the core builds for wasm32-unknown-unknown, clean of host-only crates"
scripts/check-wasm-core.sh

step "lint: rustfmt and clippy"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings

step "wasm: build host-wasm into host-wasm/pkg (dev profile), no imports from env"
scripts/build-wasm.sh

step "wasm: the JS API under Node over corpus tables (node --test)"
# The views test compares the page's compaction preview with this build's CLI. Every cargo
# command below builds the workspace with its tests (as `cargo test --workspace` does): one
# feature set for the shared dependencies, so no later step rebuilds them with another one.
cargo build --workspace --all-targets
# The conformance tests use this binary instead of running `cargo build` themselves (a cargo
# run inside a test sees other environment variables, and rebuilds ring and rustls for them).
export PAIMON_KERNEL_BIN="$CARGO_TARGET_DIR/debug/paimon-kernel"
(cd host-wasm && node --test tests/node/) 2>&1 | tee "$CARGO_TARGET_DIR/node-test-output.txt"

step "wasm: every conformance case replays byte-identically under Node (node --test)"
(cd conformance && node --test node/) 2>&1 | tee -a "$CARGO_TARGET_DIR/node-test-output.txt"

step "test: cargo test --workspace"
cargo test --workspace --no-fail-fast 2>&1 | tee "$CARGO_TARGET_DIR/test-output.txt"

step "oracle: pypaimon $(sed -n 's/^pypaimon_version=//p' scripts/install-deps.sh) writes fresh tables, paimon-kernel must read them as pypaimon does"
# Tables the checked-in corpus does not hold: make_corpus.py with a non-default seed, its
# builders with other shapes (more rows, buckets, partition values with '/', '=', '', ...),
# and conformance/oracle_tables.py (key/partition types, codecs, merge options, schema
# evolution in ORC/Avro, ...). Every read of each goes through the CLI (corpus_scan).
PY="${PAIMON_VENV:-$HOME/.cache/paimon-kernel/venv}/bin/python"
ORACLE="$CARGO_TARGET_DIR/oracle"
ORACLE_SEED="${PAIMON_ORACLE_SEED:-7}"
echo "oracle seed $ORACLE_SEED (PAIMON_ORACLE_SEED); warehouses under $ORACLE"
write_tables() { # NAME SCRIPT ARGS...: a warehouse, its log printed when the writer fails
  local name=$1 script=$2
  shift 2
  "$PY" "$script" "$ORACLE/$name" --seed "$ORACLE_SEED" --force "$@" >"$ORACLE-$name.log" 2>&1 \
    || { cat "$ORACLE-$name.log"; echo "pypaimon could not write the $name tables" >&2; exit 1; }
  tail -n 1 "$ORACLE-$name.log"
}
write_tables seed conformance/make_corpus.py
write_tables wide conformance/oracle_tables.py --profile wide
write_tables extra conformance/oracle_tables.py
for w in seed wide extra; do
  PAIMON_WAREHOUSE="$ORACLE/$w" cargo test --workspace --test corpus_scan \
    -- every_read_of_every_table_matches_through_the_cli --nocapture 2>&1 \
    | tee -a "$CARGO_TARGET_DIR/test-output.txt"
done

step "oracle: pypaimon $(sed -n 's/^pypaimon_version=//p' scripts/install-deps.sh) reads the tables paimon-kernel wrote (write_back test of cargo test)"
# conformance/tests/write_back.rs (run by cargo test above) wrote every corpus table again into
# $CARGO_TARGET_DIR/write-back, conformance/tests/update_de.rs its data-evolution update tables
# into $CARGO_TARGET_DIR/update-back; pypaimon must read each with the same rows.
for out in write-back update-back; do
  "$PY" conformance/pypaimon_read_back.py "$CARGO_TARGET_DIR/$out" 2>&1 | tee "$CARGO_TARGET_DIR/pypaimon-read-$out.txt"
  grep -q '^[0-9]* passed, 0 failed$' "$CARGO_TARGET_DIR/pypaimon-read-$out.txt" \
    || { echo "pypaimon could not read what paimon-kernel wrote ($out)" >&2; exit 1; }
done

step "oracle: pypaimon-rust 0.4.0 writes managed-BLOB primary-key tables paimon-kernel must read and compact; it reads the ones paimon-kernel wrote"
# Fresh tables of conformance/managed-blob/gen_tables.py (which checks pypaimon-rust's own read
# against its model first), read and fully compacted by the managed_blob test; then
# pypaimon-rust reads the tables that test wrote into $CARGO_TARGET_DIR/managed-blob-back.
PYR="${PAIMON_RUST_VENV:-$HOME/.cache/paimon-kernel/venv-rust}/bin/python"
rm -rf "$CARGO_TARGET_DIR/mb-fresh"
"$PYR" conformance/managed-blob/gen_tables.py "$CARGO_TARGET_DIR/mb-fresh" > "$CARGO_TARGET_DIR/mb-fresh.log" 2>&1 \
  || { cat "$CARGO_TARGET_DIR/mb-fresh.log"; echo "pypaimon-rust could not write the managed-BLOB tables" >&2; exit 1; }
PAIMON_MANAGED_BLOB_WAREHOUSE="$CARGO_TARGET_DIR/mb-fresh" cargo test --workspace --test managed_blob \
  -- pypaimon_rust_tables --nocapture 2>&1 | tee -a "$CARGO_TARGET_DIR/test-output.txt"
"$PYR" conformance/managed-blob/read_back.py "$CARGO_TARGET_DIR/managed-blob-back" --check 2>&1 \
  | tee "$CARGO_TARGET_DIR/pypaimon-rust-read-back.txt"
if grep -q '^FAIL' "$CARGO_TARGET_DIR/pypaimon-rust-read-back.txt" || ! grep -q '^ok ' "$CARGO_TARGET_DIR/pypaimon-rust-read-back.txt"; then
  echo "pypaimon-rust could not read what paimon-kernel wrote (managed-blob-back)" >&2; exit 1
fi

step "python: the paimon_kernel package (host-python) under pytest: reads, writes, Ray (2 CPUs), Daft, S3 (moto)"
# install-deps built the package into the venv with maturin (dev profile, this CARGO_TARGET_DIR);
# the tests compare with the CLI built above, pypaimon 2.1.0 and the Java checker.
cargo build --workspace --all-targets
PYV="${PAIMON_PY_VENV:-$HOME/.cache/paimon-kernel/venv-py}"
(cd host-python && PAIMON_KERNEL_CLI="$CARGO_TARGET_DIR/debug/paimon-kernel" RAY_DISABLE_USAGE_STATS=1 \
  "$PYV/bin/python" -m pytest -q -p no:cacheprovider tests/) 2>&1 | tee "$CARGO_TARGET_DIR/pytest-output.txt"

step "browser: the inspector in headless chromium against paimon-kernel serve"
cargo build --workspace --all-targets
(cd host-wasm && node --test --test-concurrency=1 tests/browser/) 2>&1 | tee -a "$CARGO_TARGET_DIR/node-test-output.txt"
# Plain closing line for CI: the sums of every libtest 'test result:' line, of the Node
# test runner's closing counts and of pytest's summary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     /^# pass / { p += $3 } /^# fail / { f += $3 } /^# skipped / { s += $3 }
     /^[0-9]+ (passed|failed|skipped)/ && / in [0-9.]+s/ { for (i = 1; i < NF; i++) { w = $(i+1); sub(/,$/, "", w); if (w == "passed") p += $i; if (w == "failed") f += $i; if (w == "skipped") s += $i } }
     END { printf "%d passed, %d failed, %d skipped\n", p, f, s }' \
  "$CARGO_TARGET_DIR/test-output.txt" "$CARGO_TARGET_DIR/node-test-output.txt" "$CARGO_TARGET_DIR/pytest-output.txt"
