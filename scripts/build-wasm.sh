#!/usr/bin/env bash
# Builds host-wasm into host-wasm/pkg/ (wasm-bindgen --target web; the same files serve the
# Node tests, the browser tests and `paimon-kernel serve`).
#   scripts/build-wasm.sh          dev profile (fast; reuses the wasm32 deps of check-wasm-core)
#   scripts/build-wasm.sh --small  `wasm` profile (opt-level s). No wasm-opt: Debian's binaryen
#                                  108 -Oz output fails at run time (WebAssembly.Table.grow).
# Needs wasm-bindgen on PATH at the exact version of the wasm-bindgen crate
# (scripts/install-deps.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
profile=dev; dir=debug
if [ "${1:-}" = "--small" ]; then profile=wasm; dir=wasm; fi

want=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')
if [ "$have" != "$want" ]; then
  echo "wasm-bindgen $want is needed on PATH (found '${have:-none}'); run scripts/install-deps.sh" >&2
  exit 1
fi
cargo build -p paimon-wasm --target wasm32-unknown-unknown --profile "$profile"
raw="$TARGET_DIR/wasm32-unknown-unknown/$dir/paimon_wasm.wasm"
node scripts/check-wasm-imports.mjs "$raw"
rm -rf host-wasm/pkg
wasm-bindgen --target web --out-dir host-wasm/pkg "$raw"
node scripts/check-wasm-imports.mjs host-wasm/pkg/paimon_wasm_bg.wasm
size=$(wc -c < host-wasm/pkg/paimon_wasm_bg.wasm)
gz=$(gzip -9 -c host-wasm/pkg/paimon_wasm_bg.wasm | wc -c)
echo "host-wasm/pkg/paimon_wasm_bg.wasm ($profile): $size bytes, $gz gzipped"
