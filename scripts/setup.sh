#!/usr/bin/env bash
# Builds everything into ./.venv: the Rust engine (as the Python extension coaplab._core, via
# maturin in release mode) and the Python package with its test dependencies.
# Needs only Python >= 3.11, a Rust toolchain and access to PyPI / crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test,cluster]'
# The network emulator and coaplab's real-socket endpoints (`coaplab emulate`, docs/emulation.md).
cargo build --release -q -p coaplab-emulator
