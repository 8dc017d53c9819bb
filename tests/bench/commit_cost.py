"""Prints the cost of the sweep writer's group commit (docs/experiments.md, "Reading while a
sweep runs"): one connection held for the whole sweep (``ResultsDB``) against the file opened
and closed around each commit (``SweepWriter``, what ``coaplab run`` does), for batches of
1, 10 and 100 runs of 5 clients. A benchmark, not a test: it prints figures.

    .venv/bin/python tests/bench/commit_cost.py [BATCH ...]   # default: 1 10 100
"""

import sys
import tempfile
import time
from pathlib import Path

import coaplab
from coaplab.describe.scenario import MODEL_VERSION, config_id
from coaplab.execute import store, sweep

SCENARIO = {"name": "commit-cost", "seed": 4, "replications": 1000, "link": {"errors": "medium"},
            "workload": {"clients": 5, "exchanges": 5}, "sweep": {"coap.cc": ["default", "cocoa", "fasor"]}}


def main(batches: list[int]) -> None:
    res = coaplab.run(SCENARIO, jobs=2)
    configs = res.scenario.configurations()
    ids = [config_id(c) for c in configs]
    rows = [(cid, c, r["replication"], r, None, 0.001) for cid, c in zip(ids, configs) for r in res.runs[cid]]
    with tempfile.TemporaryDirectory() as tmp:
        for batch in batches:
            for mode in ("held", "per-commit"):
                path = Path(tmp) / f"{mode}-{batch}.duckdb"
                t0 = time.perf_counter()
                if mode == "held":
                    with store.ResultsDB(path) as db:
                        db.add_configs(zip(ids, configs), MODEL_VERSION)
                        db.finished()
                        for i in range(0, len(rows), batch):
                            db.store(rows[i:i + batch], "bench", MODEL_VERSION)
                else:
                    writer = sweep.SweepWriter(path)
                    writer.begin(zip(ids, configs), MODEL_VERSION)
                    for i in range(0, len(rows), batch):
                        writer.store(rows[i:i + batch], "bench", MODEL_VERSION)
                    writer.close()
                dt = time.perf_counter() - t0
                commits = -(-len(rows) // batch)
                print(f"{batch:4d} runs per commit, {mode:10s}: {dt:6.2f} s for {len(rows)} runs in {commits} commits, "
                      f"{dt / commits * 1e3:6.2f} ms per commit, {dt / len(rows) * 1e3:5.2f} ms per run", flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1, 10, 100])
