#!/usr/bin/env bash
# The main job: build everything, simulate the example scenarios (10 clients on the default
# testbed with medium wireless errors, default vs CoCoA vs FASOR, 3 replications each; and the
# firmware transfer over CoAP over TCP for four buffer sizes; stored in ./coaplab.duckdb),
# write their HTML report, then replay four algorithms side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== build (scripts/setup.sh: the Rust engine, the Python package, the emulator) =="
bash scripts/setup.sh
echo "== coaplab run examples/quick.toml =="
.venv/bin/coaplab run examples/quick.toml
echo "== coaplab run examples/tcp-firmware.toml =="
.venv/bin/coaplab run examples/tcp-firmware.toml
echo "== coaplab report --out out/report =="
.venv/bin/coaplab report --out out/report
echo "== coaplab replay --compare default,cocoa,linux-rto,fasor examples/loss-burst.json =="
.venv/bin/coaplab replay --compare default,cocoa,linux-rto,fasor examples/loss-burst.json
