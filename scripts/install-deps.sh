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

# java-check: Java Paimon 2.0.0 reading, writing, compacting and planning (conformance/java-check,
# a Maven project on paimon-bundle 2.0.0 from the file repository ../shared/java/m2 beside the
# checkout, see ../shared/java/README.md; everything else from Maven Central), the Java oracle of
# the integration tests (host-native/tests/it/oracle.rs finds it here). Rebuilt only when its
# sources change (a hash of them is kept next to the scripts). The directory carries the version,
# so builds on different Paimon releases never overwrite each other. PAIMON_JAVA_CHECK_DIR
# overrides the location.
java_version=$(sed -n 's:.*<paimon.version>\(.*\)</paimon.version>.*:\1:p' conformance/java-check/pom.xml)
paimon_m2=../shared/java/m2/org/apache/paimon/paimon-bundle/$java_version
if [ ! -d "$paimon_m2" ]; then
  echo "java-check needs paimon-bundle $java_version from $(pwd)/$paimon_m2 (../shared beside the checkout)" >&2
  exit 1
fi
java_check="${PAIMON_JAVA_CHECK_DIR:-$HOME/.cache/paimon-kernel/java-check-$java_version}"
java_src_hash=$(cd conformance/java-check && find install.sh pom.xml src -type f | LC_ALL=C sort \
  | xargs sha256sum | sha256sum | cut -d' ' -f1)
if [ "$(cat "$java_check/source.sha256" 2>/dev/null)" != "$java_src_hash" ] || [ ! -x "$java_check/read" ]; then
  echo "building java-check (Java Paimon $java_version) into $java_check"
  conformance/java-check/install.sh "$java_check"
  echo "$java_src_hash" > "$java_check/source.sha256"
fi
"$java_check/read" conformance/java-tables/p142_orc_pk > /dev/null \
  || { echo "java-check in $java_check cannot read conformance/java-tables/p142_orc_pk" >&2; exit 1; }
echo "java-check $java_check (Java Paimon $(cat "$java_check/paimon.version"))"

# java-serializer-check: Java Paimon 2.0.0's CommitMessageSerializer (conformance/
# java-serializer-check, the same m2 repository), built into its own target/ in the checkout;
# host-native/tests/it/commit_messages.rs checks with it that Java writes our golden commit-
# message bytes. Rebuilt only when its sources change (their hash in target/source.sha256).
ser_check=conformance/java-serializer-check
ser_src_hash=$(cd "$ser_check" && find build.sh oracle pom.xml src -type f | LC_ALL=C sort \
  | xargs sha256sum | sha256sum | cut -d' ' -f1)
if [ "$(cat "$ser_check/target/source.sha256" 2>/dev/null)" != "$ser_src_hash" ] \
  || [ ! -f "$ser_check/target/paimon-serializer-check-1.0.jar" ]; then
  echo "building java-serializer-check (Java Paimon $java_version) in $ser_check/target"
  "$ser_check/build.sh"
  echo "$ser_src_hash" > "$ser_check/target/source.sha256"
fi
"$ser_check/oracle" check conformance/commit-messages/list.v12.bin > /dev/null \
  || { echo "java-serializer-check does not read conformance/commit-messages/list.v12.bin" >&2; exit 1; }
echo "java-serializer-check $ser_check/target (Java Paimon $java_version)"

# The Python package (host-python, import name paimon_kernel) and its test venv: pinned
# packages of host-python/requirements-test.txt (reinstalled only when that file changes),
# then the package built from this checkout with maturin (dev profile, in CARGO_TARGET_DIR:
# the workspace's compiled crates are reused; cargo rebuilds only what changed).
# PAIMON_PY_VENV overrides the location.
py_venv="${PAIMON_PY_VENV:-$HOME/.cache/paimon-kernel/venv-py}"
py_req_hash=$(sha256sum host-python/requirements-test.txt | cut -d' ' -f1)
if [ "$(cat "$py_venv/requirements.sha256" 2>/dev/null)" != "$py_req_hash" ]; then
  echo "installing the Python test packages into $py_venv"
  [ -x "$py_venv/bin/python" ] || python3 -m venv "$py_venv"
  "$py_venv/bin/python" -m pip install --quiet --disable-pip-version-check -r host-python/requirements-test.txt
  echo "$py_req_hash" > "$py_venv/requirements.sha256"
fi
py_log=$(mktemp)
(cd host-python && VIRTUAL_ENV="$py_venv" PATH="$py_venv/bin:$PATH" "$py_venv/bin/maturin" develop) >"$py_log" 2>&1 \
  || { cat "$py_log"; echo "maturin could not build host-python into $py_venv" >&2; exit 1; }
rm -f "$py_log"
"$py_venv/bin/python" -c 'import paimon_kernel, ray, daft, pypaimon; print("paimon_kernel", paimon_kernel.__version__, "ray", ray.__version__, "daft", daft.__version__)'
