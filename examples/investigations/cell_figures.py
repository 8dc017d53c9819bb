"""The cell figures of docs/networks.md "Cell figures": the coupling-loss sweep
(``cell-coupling-loss``: latency and energy per exchange against coupling loss, one line per
algorithm) and one device's radio state timeline (``examples/cell-timeline.toml``, traced), as
SVGs. Usage: python examples/investigations/cell_figures.py OUT_DIR (≈ 10 s; runs both
scenarios into a temporary database and draws with ``coaplab plot``: the commands it prints)."""

import subprocess
import sys
import tempfile
from pathlib import Path

out = Path(sys.argv[1]).resolve()
work = Path(tempfile.mkdtemp(prefix="coaplab-cell-figures-"))
db = work / "cells.duckdb"
root = Path(__file__).resolve().parents[2]
commands = [
    ["coaplab", "reproduce", "cell-coupling-loss", "--db", str(db), "--no-progress"],
    ["coaplab", "plot", "--db", str(db), "--kind", "coupling-loss", "--where", "name = 'cell-coupling-loss'",
     "--out", str(out / "cell-coupling-loss.svg")],
    ["coaplab", "run", str(root / "examples" / "cell-timeline.toml"), "--db", str(db), "--trace", str(work / "traces"),
     "--no-progress"],
    ["coaplab", "plot", "--db", str(db), "--kind", "state-timeline", "--where", "name = 'cell-timeline'",
     "--out", str(out / "cell-state-timeline.svg")],
    ["coaplab", "plot", "--db", str(db), "--kind", "state-timeline", "--where", "name = 'cell-timeline'",
     "--window", "37:37.6", "--out", str(out / "cell-state-timeline-exchange.svg")],
]
for c in commands:
    print("$", " ".join(c[:1] + [a if "/" not in a else Path(a).name for a in c[1:]]), flush=True)
    subprocess.run(c, check=True, stdout=subprocess.DEVNULL)
