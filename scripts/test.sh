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
echo "== wheel (maturin, abi3) and sdist into dist/ =="
# Through the build backend (build_backend/coaplab_build.py), as pip builds for a user: the wheel
# carries the emulator's binaries, the examples, the C header and Californium's driver sources,
# so that an installed coaplab emulates without a Rust toolchain. tests/test_install.py installs
# both (and this source tree) into clean virtual environments.
rm -rf dist
# Without build isolation (maturin from .venv, on the PATH for maturin's own hooks): the same
# interpreter as the editable install, so Cargo reuses its build.
PATH="$PWD/.venv/bin:$PATH" .venv/bin/python -m pip wheel -q --no-deps --no-build-isolation -w dist .
# The sdist through the backend's hook too (it keeps the whole Cargo workspace; pip builds no sdist).
PATH="$PWD/.venv/bin:$PATH" .venv/bin/python -c 'import sys; sys.path.insert(0, "build_backend")
import coaplab_build; print("dist/" + coaplab_build.build_sdist("dist"))' 2>&1 | tail -1
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
