#!/usr/bin/env bash
# The main job: build everything, simulate the example scenario (10 clients on the default
# testbed with medium wireless errors, default vs CoCoA vs FASOR, 3 replications each; stored
# in ./coaplab.duckdb), write its HTML report, then replay four algorithms side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== coaplab run examples/quick.toml =="
.venv/bin/coaplab run examples/quick.toml
echo "== coaplab report --out out/report =="
.venv/bin/coaplab report --out out/report
echo "== coaplab replay --compare default,cocoa,linux-rto,fasor examples/loss-burst.json =="
.venv/bin/coaplab replay --compare default,cocoa,linux-rto,fasor examples/loss-burst.json
