#!/usr/bin/env bash
# Builds everything into ./.venv: the Rust engine (as the Python extension coaplab._core, via
# maturin in release mode) and the Python package with its test dependencies.
# Needs only Python >= 3.11, a Rust toolchain and access to PyPI / crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."
# No colour codes in logs: when stdout is not a terminal, cargo, pip, maturin and Maven print
# plain text (no `^[[0m` in CI logs or `… | tee log`).
if [ ! -t 1 ]; then
  export CARGO_TERM_COLOR=never NO_COLOR=1 PIP_NO_COLOR=1 MAVEN_OPTS="${MAVEN_OPTS:-} -Dstyle.color=never"
fi
# One line per step, with the time it took, so that a cold build (several minutes) is not silent.
SECONDS=0
step() { echo "== setup: $* (${SECONDS} s so far) =="; }
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  step "creating .venv"
  "$PY" -m venv .venv
fi
step "pip install --upgrade pip"
.venv/bin/python -m pip install -q --upgrade pip
step "pip install -e '.[test,cluster]': builds the Rust engine with maturin in release mode and the emulator's two binaries (build_backend/coaplab_build.py; ≈ 3 min cold, seconds when built)"
.venv/bin/python -m pip install -q -e '.[test,cluster]'
# Californium's driver for `coaplab emulate --client/--server californium`: `coaplab setup
# californium` (a JVM program built with Maven from Maven Central; java/californium/pom.xml pins
# the version) into target/californium/ here (COAPLAB_CACHE_DIR; a user's install builds it into
# ~/.cache/coaplab). The JDK and Maven come from Debian's packages, installed when missing and
# root; otherwise the driver is skipped and the Californium kinds say what is missing. Nothing is
# done while the jar is newer than its sources (~25 s cold, with the downloads).
if ! command -v mvn >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing default-jdk-headless maven (Debian packages) =="
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq default-jdk-headless maven >/dev/null
  fi
fi
if command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
  step "coaplab setup californium: Californium's driver into target/californium (≈ 25 s cold)"
  COAPLAB_CACHE_DIR="$PWD/target" .venv/bin/coaplab setup californium
else
  echo "setup: no JDK/Maven: Californium's emulation endpoints are not built (apt-get install default-jdk-headless maven)" >&2
fi
step "done"
