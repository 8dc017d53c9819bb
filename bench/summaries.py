"""How long summarising a stored study takes, against the engine's time for the same runs.
Prints figures, asserts nothing (docs/performance.md, "Summaries").

    coaplab reproduce udp-continuous-matrix --db /tmp/matrix.duckdb --no-progress > /dev/null
    .venv/bin/python bench/summaries.py /tmp/matrix.duckdb                  # load + summarise, 5 repeats
    .venv/bin/python bench/summaries.py /tmp/matrix.duckdb --engine         # and the engine's CPU time
    .venv/bin/python bench/summaries.py /tmp/matrix.duckdb --out s.jsonl    # the summaries, to compare

Each repeat, in this process: *load* reads the database (`coaplab.execute.tidy.load`: DuckDB and the
JSON of every run), *summarise* builds every configuration's summary from the loaded runs
(`Study.summaries()`: `coaplab.analyse.stats.summarize`, the bootstrap of `coaplab.analyse.replstats`
included), both in CPU seconds of the process (every thread). `--engine` runs every stored
(configuration, replication) once more as a bare `_core.run_one` call on one thread, the work
`coaplab run --jobs 1` hands to the engine. `--out` writes the summaries as JSON Lines with
sorted keys, without `wall_s` (which records the runs' own wall time), for a byte-for-byte
comparison of two versions (run this script with `PYTHONPATH=<other checkout>/python`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", help="a coaplab results database")
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats (default 5; min and median printed)")
    ap.add_argument("--engine", action="store_true", help="also time the engine on the same runs")
    ap.add_argument("--out", help="write the summaries here (JSON Lines, sorted keys, no wall_s)")
    args = ap.parse_args(argv)
    cpu = time.process_time
    c0 = cpu()
    import coaplab
    from coaplab.execute.tidy import load

    c1 = cpu()
    print(f"coaplab {coaplab.__file__}", file=sys.stderr)
    loads, sums = [], []
    for _ in range(max(1, args.repeats)):
        t0 = cpu()
        study = load(args.db)
        t1 = cpu()
        summaries = study.summaries()
        t2 = cpu()
        loads.append(t1 - t0)
        sums.append(t2 - t1)
    runs = sum(len(r) for r in study.runs.values())

    def fmt(xs: list[float]) -> str:
        return f"{min(xs):.3f} / {statistics.median(xs):.3f}"

    print(f"configurations       {len(summaries)} ({runs} runs)")
    print(f"imports CPU s        {c1 - c0:.3f} (first repeat's first use not included)")
    print(f"load CPU s           {fmt(loads)}   (min / median of {len(loads)})")
    print(f"summarise CPU s      {fmt(sums)}")
    if args.engine:
        from coaplab import _core

        t0 = cpu()
        for cid, config in study.configs.items():
            text = json.dumps(config)
            for r in study.runs[cid]:
                _core.run_one(text, r["replication"], None)
        engine = cpu() - t0
        print(f"engine CPU s         {engine:.3f}   (every run once, one thread)")
        print(f"summarise / engine   {min(sums) / engine:.1%} (min) / {statistics.median(sums) / engine:.1%} (median)")
    if args.out:
        with open(args.out, "w") as f:
            f.writelines(json.dumps({k: v for k, v in s.items() if k != "wall_s"}, sort_keys=True) + "\n" for s in summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
