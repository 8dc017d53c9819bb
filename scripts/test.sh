#!/usr/bin/env bash
# Builds everything and runs every check and test: formatting, clippy (warnings denied), the
# no_std build of the algorithm crate, the Rust test suites, ruff and mypy on the Python code, and the
# Python test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

# System tools some tests drive (tshark decodes our pcap output; Chromium renders the HTML
# report). Installed from Debian's packages when missing and we are root; otherwise those
# tests say what is missing (and fail in CI).
missing=""
command -v tshark >/dev/null 2>&1 || missing="$missing tshark"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
# libcoap's coap-client: a third-party endpoint of the emulation tests (tests/test_emulate.py).
command -v coap-client-notls >/dev/null 2>&1 || command -v coap-client >/dev/null 2>&1 || missing="$missing libcoap3-bin"
if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "== installing$missing (Debian packages) =="
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq $missing >/dev/null
fi

echo "== build (Rust engine + Python package) =="
bash scripts/setup.sh
echo "== wheel (maturin, abi3) into dist/ =="
# The wheel carries the emulator and endpoint binaries (built by setup.sh), so that a user who
# installs it can `coaplab emulate` without a Rust toolchain (pyproject.toml's include).
mkdir -p python/coaplab/bin && cp target/release/coaplab-emulator target/release/coaplab-endpoint python/coaplab/bin/
rm -rf dist && .venv/bin/maturin build --release -q -o dist 2>&1 | tail -1
echo "== cargo fmt --check =="
cargo fmt --all --check
echo "== cargo clippy -D warnings =="
cargo clippy -q --workspace --all-targets -- -D warnings
echo "== no_std build of the algorithm crate =="
cargo build -q -p coaplab-cc --no-default-features
echo "== cargo test =="
# A test target with nothing in it prints an empty "running 0 tests" block that hides the real
# ones: every target either has tests or says `doctest = false` / `test = false`.
cargo test -q --workspace --exclude coaplab-py 2>&1 | tee target/cargo-test.log
if grep -q "^running 0 tests" target/cargo-test.log; then
  echo "error: a Rust test target ran no test; give it doctest = false / test = false in its Cargo.toml" >&2
  exit 1
fi
echo "== ruff (default rules) and mypy (pyproject.toml [tool.mypy]) =="
.venv/bin/ruff check .
.venv/bin/mypy
echo "== pytest =="
.venv/bin/python -m pytest -q
