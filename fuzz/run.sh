#!/usr/bin/env bash
# Runs every fuzz target for a bounded time, seeded from the corpus tables, and prints one
# summary line per target (seconds, executions, new crashes/timeouts/OOMs).
# Usage: fuzz/run.sh SECONDS [TARGET...]     (not part of CI; CPU heavy, one target at a time)
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and nightly (or RUSTC_BOOTSTRAP=1 on stable).
# Honours CARGO_TARGET_DIR (default fuzz/target). Full libFuzzer output: fuzz/logs/<target>.log.
# Crashes land in fuzz/artifacts/<target>/; turn each into a regression test with the
# minimized input (`cargo fuzz tmin <target> <crash>`), see fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:?usage: fuzz/run.sh SECONDS [TARGET...]}"; shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(blob_file avro_manifest metadata_json binary_row deletion_vector parquet_footer data_split commit_message)
tables=../conformance/tables/corpus.db
seed() { # seed TARGET FIND-ARGS...
  local t=$1; shift
  mkdir -p "corpus/$t"
  find "$tables" -type f "$@" -exec cp -n {} "corpus/$t/" \; 2>/dev/null || true
}
seed blob_file -name '*.blob'
seed avro_manifest -path '*/manifest/*'
seed metadata_json \( -path '*/snapshot/*' -o -path '*/schema/*' -o -path '*/tag/*' \)
seed deletion_vector -path '*/index/*'
seed parquet_footer -name '*.parquet'
mkdir -p corpus/binary_row logs
toolchain=+nightly
rustup toolchain list | grep -q '^nightly' || { toolchain=; export RUSTC_BOOTSTRAP=1; }
summary=()
for t in "${targets[@]}"; do
  echo "==> $t ($secs s)"
  mkdir -p "artifacts/$t"
  before=$(find "artifacts/$t" -type f | wc -l)
  rc=0
  cargo $toolchain fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 \
    -max_len=262144 -timeout=10 -print_final_stats=1 >"logs/$t.log" 2>&1 || rc=$?
  grep -E '^(#[0-9]+ +DONE|Done|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)' \
    "logs/$t.log" || true
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "logs/$t.log" | grep -oE '[0-9]+$' | tail -1)
  found=$(( $(find "artifacts/$t" -type f | wc -l) - before ))
  summary+=("$(printf '%-16s %6ss %12s execs %3s crashes  (exit %s)' "$t" "$secs" "${execs:-?}" "$found" "$rc")")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
