#!/usr/bin/env bash
# Installs what the tests need, idempotently. Fails loudly when something cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v clang >/dev/null 2>&1 || need_apt+=(clang)        # zstd-sys and friends for wasm32
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)  # browser tests of host-wasm
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)        # wasm API tests (node --test)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)    # pypaimon, the live oracle
python3 -m venv --help >/dev/null 2>&1 || need_apt+=(python3-venv)
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)  # java-check (Java Paimon)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen-cli at exactly the version of the wasm-bindgen crate (Cargo.toml pins it),
# installed into a cache dir; scripts/test-all.sh puts its bin/ on PATH.
wb_version=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
if [ -z "$wb_version" ]; then
  echo "Cargo.toml does not pin wasm-bindgen with '=X.Y.Z'" >&2
  exit 1
fi
wb_root="${PAIMON_TOOLS:-$HOME/.cache/paimon-kernel/tools}/wasm-bindgen-$wb_version"
if [ "$("$wb_root/bin/wasm-bindgen" --version 2>/dev/null | awk '{print $2}')" != "$wb_version" ]; then
  echo "installing wasm-bindgen-cli $wb_version into $wb_root"
  cargo install wasm-bindgen-cli --version "$wb_version" --locked --root "$wb_root"
fi
"$wb_root/bin/wasm-bindgen" --version

# Node packages of the host-wasm tests (playwright-core drives Debian's chromium).
(cd host-wasm && npm ci --no-audit --no-fund)

# pypaimon (the official Python implementation of Paimon) at exactly the version the corpus was
# written with, in its own venv: scripts/test-all.sh writes fresh tables with it and checks that
# paimon-kernel reads them as pypaimon does. PAIMON_VENV overrides the location.
pypaimon_version=2.1.0
venv="${PAIMON_VENV:-$HOME/.cache/paimon-kernel/venv}"
installed=$("$venv/bin/python" -c 'from importlib.metadata import version; print(version("pypaimon"))' 2>/dev/null || true)
if [ "$installed" != "$pypaimon_version" ]; then
  echo "installing pypaimon $pypaimon_version into $venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "pypaimon==$pypaimon_version"
fi
"$venv/bin/python" -c 'import pypaimon, pyarrow; from importlib.metadata import version; print("pypaimon", version("pypaimon"), "pyarrow", pyarrow.__version__)'

# pypaimon-rust (a Rust-backed Paimon with a Python API) at exactly 0.4.0, in its own venv: the
# oracle of the managed-BLOB primary-key tables (conformance/managed-blob/gen_tables.py writes
# them, read_back.py reads tables back with it). PAIMON_RUST_VENV overrides the location.
# pypaimon-rust does not declare its pyarrow dependency, so pyarrow is pinned here too.
pypaimon_rust_version=0.4.0
pypaimon_rust_pyarrow=26.0.1
rust_venv="${PAIMON_RUST_VENV:-$HOME/.cache/paimon-kernel/venv-rust}"
installed=$("$rust_venv/bin/python" -c 'from importlib.metadata import version; print(version("pypaimon-rust"), version("pyarrow"))' 2>/dev/null || true)
if [ "$installed" != "$pypaimon_rust_version $pypaimon_rust_pyarrow" ]; then
  echo "installing pypaimon-rust $pypaimon_rust_version into $rust_venv"
  [ -x "$rust_venv/bin/python" ] || python3 -m venv "$rust_venv"
  "$rust_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "pypaimon-rust==$pypaimon_rust_version" "pyarrow==$pypaimon_rust_pyarrow"
fi
"$rust_venv/bin/python" -c 'import pypaimon_rust.datafusion, pyarrow; from importlib.metadata import version; print("pypaimon-rust", version("pypaimon-rust"), "pyarrow", pyarrow.__version__)'

# java-check: Java Paimon 1.4.2 reading, writing, compacting and planning
# (conformance/java-check, a Maven project on paimon-bundle 1.4.2 from Maven Central), the Java
# oracle of the integration tests (host-native/tests/it/oracle.rs finds it here). Rebuilt only
# when its sources change (a hash of them is kept next to the scripts).
# PAIMON_JAVA_CHECK_DIR overrides the location.
java_check="${PAIMON_JAVA_CHECK_DIR:-$HOME/.cache/paimon-kernel/java-check}"
java_src_hash=$(cd conformance/java-check && find install.sh pom.xml src -type f | LC_ALL=C sort \
  | xargs sha256sum | sha256sum | cut -d' ' -f1)
if [ "$(cat "$java_check/source.sha256" 2>/dev/null)" != "$java_src_hash" ] || [ ! -x "$java_check/read" ]; then
  echo "building java-check (Java Paimon 1.4.2) into $java_check"
  conformance/java-check/install.sh "$java_check"
  echo "$java_src_hash" > "$java_check/source.sha256"
fi
"$java_check/read" conformance/java-tables/p142_orc_pk > /dev/null \
  || { echo "java-check in $java_check cannot read conformance/java-tables/p142_orc_pk" >&2; exit 1; }
echo "java-check $java_check (Java Paimon 1.4.2)"
