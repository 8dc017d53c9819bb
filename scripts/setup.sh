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
step "pip install -e '.[test,cluster]': builds the Rust engine with maturin in release mode (≈ 3 min cold, seconds when built)"
.venv/bin/python -m pip install -q -e '.[test,cluster]'
# The network emulator and coaplab's real-socket endpoints (`coaplab emulate`, docs/emulation.md).
step "cargo build --release -p coaplab-emulator (cargo prints a line per crate it compiles)"
cargo build --release -p coaplab-emulator
# Californium's driver for `coaplab emulate --client/--server californium` (a JVM program built
# with Maven from Maven Central into target/californium/; java/californium/pom.xml pins the
# version). The JDK and Maven come from Debian's packages, installed when missing and root;
# otherwise the driver is skipped and the Californium kinds say what is missing. Rebuilt only
# when its sources are newer than the jar (~25 s cold, with the downloads; nothing when cached).
if ! command -v mvn >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing default-jdk-headless maven (Debian packages) =="
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq default-jdk-headless maven >/dev/null
  fi
fi
jar=target/californium/californium-driver-1.jar
if command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
  if [ ! -f "$jar" ] || [ -n "$(find java/californium -newer "$jar" -type f | head -1)" ]; then
    step "mvn package: Californium's driver (≈ 25 s cold)"
    rm -rf target/californium
    # Maven's console library writes colour resets even with -B and style.color=never; strip
    # them so a log of this script holds text only (pipefail keeps mvn's exit status).
    mvn -q -B -Dstyle.color=never -f java/californium/pom.xml package 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
  fi
else
  echo "setup: no JDK/Maven: Californium's emulation endpoints are not built (apt-get install default-jdk-headless maven)" >&2
fi
step "done"
