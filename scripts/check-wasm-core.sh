#!/usr/bin/env bash
# The core must build for wasm32-unknown-unknown without IO/runtime crates.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -p paimon-kernel --target wasm32-unknown-unknown
forbidden='^(tokio|object_store|reqwest|mio|getrandom) '
tree=$(cargo tree -p paimon-kernel -e normal,no-proc-macro --target wasm32-unknown-unknown --prefix none)
if bad=$(printf '%s\n' "$tree" | grep -E "$forbidden" | sort -u) && [ -n "$bad" ]; then
  echo "paimon-kernel pulls host-only crates on wasm32:" >&2
  printf '%s\n' "$bad" >&2
  exit 1
fi
echo "paimon-kernel: wasm32 build ok, no tokio/object_store/reqwest/mio/getrandom"
