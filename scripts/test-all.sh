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
(cd host-wasm && node --test tests/node/) 2>&1 | tee "$CARGO_TARGET_DIR/node-test-output.txt"

step "wasm: every conformance case replays byte-identically under Node (node --test)"
(cd conformance && node --test node/) 2>&1 | tee -a "$CARGO_TARGET_DIR/node-test-output.txt"

step "test: cargo test --workspace"
cargo test --workspace 2>&1 | tee "$CARGO_TARGET_DIR/test-output.txt"

step "browser: the inspector in headless chromium against paimon-kernel serve"
cargo build -p paimon-native --bin paimon-kernel
(cd host-wasm && node --test --test-concurrency=1 tests/browser/) 2>&1 | tee -a "$CARGO_TARGET_DIR/node-test-output.txt"
# Plain closing line for CI: the sums of every libtest 'test result:' line and of the Node
# test runner's closing counts.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     /^# pass / { p += $3 } /^# fail / { f += $3 } /^# skipped / { s += $3 }
     END { printf "%d passed, %d failed, %d skipped\n", p, f, s }' \
  "$CARGO_TARGET_DIR/test-output.txt" "$CARGO_TARGET_DIR/node-test-output.txt"
