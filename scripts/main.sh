#!/usr/bin/env bash
# The main job: build everything, then a demo replay of several algorithms on one loss script.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/coaplab replay --compare default,cocoa,linux-rto,fasor examples/loss-burst.json
