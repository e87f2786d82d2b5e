#!/usr/bin/env bash
# Re-records every case of conformance/cases.txt from the corpus tables (write cases: into a
# fresh empty directory, $EMPTY in the command, from conformance/write-specs/).
# Usage: conformance/record-all.sh [NAME-REGEX]    (from anywhere; builds the CLI first)
# Cases whose read fails are reported and skipped (their old recording is removed).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/paimon-kernel/target}"
# The workspace with its tests, as scripts/test-all.sh builds it (one feature set: no rebuilds).
cargo build -q --workspace --all-targets
BIN="$CARGO_TARGET_DIR/debug/paimon-kernel"
TABLES=conformance/tables/corpus.db
filter="${1:-.}"
if [ "$filter" = . ]; then rm -rf conformance/cases conformance/blobs; fi
mkdir -p conformance/cases conformance/blobs
ok=0; failed=0
while IFS=$'\t' read -r name command; do
  [ -z "$name" ] && continue
  [[ "$name" =~ $filter ]] || continue
  rm -rf "conformance/cases/$name"
  empty="$(mktemp -d)/${name#write.}"
  command="${command//\$EMPTY/$empty}"
  # shellcheck disable=SC2086
  eval "set -- ${command//\$TABLES/$TABLES}"
  if out=$("$BIN" record --out "conformance/cases/$name" --blobs conformance/blobs -- "$@" 2>&1); then
    ok=$((ok + 1))
  else
    failed=$((failed + 1))
    rm -rf "conformance/cases/$name"
    echo "skipped $name: $out"
  fi
  rm -rf "$(dirname "$empty")"
done < conformance/cases.txt
# Drop blobs no transcript refers to any more.
if [ "$filter" = . ]; then :; else
  used=$(cat conformance/cases/*/transcript.jsonl | grep -o '"sha256":"[0-9a-f]*"' | cut -d'"' -f4 | sort -u)
  for b in conformance/blobs/*; do
    grep -qx "$(basename "$b")" <<<"$used" || rm -f "$b"
  done
fi
echo "recorded $ok cases, skipped $failed; $(ls conformance/blobs | wc -l) blobs, $(du -sh conformance/cases conformance/blobs | awk '{print $1}' | paste -sd+)"
